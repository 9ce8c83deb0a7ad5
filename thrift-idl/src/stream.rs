//! A client's socket: TCP, or a local (Unix domain) socket to a server on the same host.
//!
//! Between a gateway and an engine on one host, every RPC crosses the socket twice; on a
//! local socket a message is handed to the peer's queue, where on loopback TCP it runs the
//! whole TCP stack (segments, acknowledgements) on both sides. Local sockets here live in
//! Linux's abstract namespace: they need no file, vanish with their process, and are
//! private to the network namespace, as the loopback address is. (Engines bind theirs with
//! `kumiho_engine_launcher::engine_main::bind_local_socket`.)

use std::io::{self, IoSlice};
use std::os::linux::net::SocketAddrExt;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpStream, UnixStream};

/// A connected socket to a TCLIService server.
#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    Local(UnixStream),
}

/// Connects to the local socket `name` in the abstract namespace (at once: a local connect
/// either finds a listener or is refused).
pub fn connect_local(name: &str) -> io::Result<UnixStream> {
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    let stream = std::os::unix::net::UnixStream::connect_addr(&addr)?;
    stream.set_nonblocking(true)?;
    UnixStream::from_std(stream)
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Local(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Local(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Local(s) => Pin::new(s).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Tcp(s) => s.is_write_vectored(),
            Stream::Local(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_flush(cx),
            Stream::Local(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Local(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}
