//! Serving [`CliService`] to clients: the binary port (SASL PLAIN and NOSASL on one port, or
//! SASL GSSAPI with Kerberos, PLAIN too if asked) and the HTTP port (Basic, or SPNEGO with
//! Kerberos, Basic too if asked), with the options they share, each in plaintext or under TLS
//! ([`ServerTls`]: TLS first, then SASL or NOSASL inside on the binary port; HTTPS on the HTTP
//! port).
//!
//! Both servers stop accepting when their shutdown token is cancelled, let calls in flight
//! finish and connections close, and return once every connection has ended.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use std::future::Future;
use std::net::SocketAddr;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpSocket, TcpStream, UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;

use crate::auth::{AnyPassword, Authenticator};
use crate::codec::DEFAULT_MAX_MESSAGE_SIZE;
use crate::kerberos::KerberosAcceptor;
use crate::sasl::Qop;

mod binary;
mod client_address;
mod cookie;
mod http;
mod tls;

pub use binary::{serve_binary, serve_local};
pub use client_address::client_address;
pub use http::{
    basic_credentials, method_not_allowed, negotiate_token, serve_http, serve_http1,
    serve_http1_tls, text as text_response, HttpCredentials, HttpUser,
};
pub use tls::{read_certificates, ServerTls, RELOAD_CHECK as TLS_RELOAD_CHECK};

/// What a server accepts, shared by its connections.
#[derive(Clone)]
pub struct ServerOptions {
    /// Checks SASL PLAIN and HTTP Basic credentials.
    pub authenticator: Arc<dyn Authenticator>,
    /// Kerberos instead of passwords: SASL GSSAPI on the binary port and SPNEGO
    /// (`Authorization: Negotiate`) on the HTTP port, and PLAIN, Basic and NOSASL clients
    /// refused whatever `allow_sasl` and `allow_nosasl` say (but see
    /// `passwords_with_kerberos`); `None`: passwords.
    pub kerberos: Option<Arc<dyn KerberosAcceptor>>,
    /// With `kerberos`, passwords besides tickets (Kyuubi's `KERBEROS,LDAP`): SASL PLAIN
    /// and HTTP Basic clients are taken too, their passwords checked by `authenticator`,
    /// each client choosing its mechanism; NOSASL clients stay refused.
    pub passwords_with_kerberos: bool,
    /// With `kerberos`, the protection SASL GSSAPI clients of the binary port must choose for
    /// their data (HiveServer2's `hive.server2.thrift.sasl.qop`): `auth` (none, the default),
    /// `auth-int` (signed frames) or `auth-conf` (encrypted frames).
    pub sasl_qop: Qop,
    /// The HTTP port's acceptor when it takes more than `kerberos` does (HiveServer2's
    /// SPNEGO principal, `HTTP/host@REALM`, besides the service principal); `None`: the
    /// HTTP port uses `kerberos`.
    pub http_kerberos: Option<Arc<dyn KerberosAcceptor>>,
    /// The binary port accepts SASL PLAIN clients.
    pub allow_sasl: bool,
    /// The binary port accepts raw TBinaryProtocol clients (no SASL, so no credentials).
    pub allow_nosasl: bool,
    /// Largest message, frame or HTTP body accepted, and the most bytes one connection
    /// buffers.
    pub max_message_size: usize,
    /// The HTTP endpoint, e.g. `cliservice` (a leading slash is optional).
    pub http_path: String,
    /// Secret the HTTP auth cookie's signing key is derived from, shared by every server
    /// behind one name so that each accepts the others' cookies; `None`: a random key, good
    /// for this process only. Never printed.
    pub cookie_secret: Option<String>,
    /// Told when each HTTP connection opens and closes (the gateway's connection metrics;
    /// the binary port's connections reach the service through
    /// [`CliService::connection_closed`](crate::service::CliService::connection_closed)).
    pub http_connections: Option<Arc<dyn ConnectionObserver>>,
    /// TLS on the binary (TCP) and HTTP ports; `None`: plaintext. A local socket
    /// ([`serve_local`]) is never under TLS.
    pub tls: Option<Arc<ServerTls>>,
    /// The header a proxy in front of the HTTP port writes each client's address into
    /// (`X-Real-IP`); `None`: the TCP peer is the client ([`client_address`]).
    pub client_ip_header: Option<hyper::header::HeaderName>,
}

/// Follows a server's connections as they open and close.
pub trait ConnectionObserver: Send + Sync {
    fn opened(&self);
    fn closed(&self);
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            authenticator: Arc::new(AnyPassword),
            kerberos: None,
            passwords_with_kerberos: false,
            sasl_qop: Qop::Auth,
            http_kerberos: None,
            allow_sasl: true,
            allow_nosasl: true,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            http_path: "cliservice".into(),
            cookie_secret: None,
            http_connections: None,
            tls: None,
            client_ip_header: None,
        }
    }
}

impl std::fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerOptions")
            .field(
                "kerberos",
                &self.kerberos.as_ref().map(|kerberos| kerberos.principal()),
            )
            .field("passwords_with_kerberos", &self.passwords_with_kerberos)
            .field("sasl_qop", &self.sasl_qop)
            .field("allow_sasl", &self.allow_sasl)
            .field("allow_nosasl", &self.allow_nosasl)
            .field("max_message_size", &self.max_message_size)
            .field("http_path", &self.http_path)
            .field("cookie_secret", &self.cookie_secret.as_ref().map(|_| "***"))
            .field("tls", &self.tls.as_ref().map(|tls| tls.cert_file()))
            .field("client_ip_header", &self.client_ip_header)
            .finish_non_exhaustive()
    }
}

/// Connections the kernel queues on a listener until `accept` takes them (capped by
/// `net.core.somaxconn`). The standard library's and tokio's 128 overflows when hundreds of
/// clients connect at once, and every connection dropped from a full queue waits a whole
/// second for its SYN to be sent again: a storm of 1,000 clients had a p99 over one second.
pub const LISTEN_BACKLOG: u32 = 4096;

/// Binds a listener on `host:port` (the first of its addresses that binds, as
/// `TcpListener::bind` does) with a [`LISTEN_BACKLOG`]-deep accept queue.
pub async fn bind(host: &str, port: u16) -> std::io::Result<TcpListener> {
    let mut last_error = None;
    for addr in tokio::net::lookup_host((host, port)).await? {
        let socket = if addr.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        socket.set_reuseaddr(true)?;
        match socket.bind(addr) {
            Ok(()) => return socket.listen(LISTEN_BACKLOG),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{host} resolves to no address"),
        )
    }))
}

/// A fresh connection id, unique in this process (CallContext::connection_id).
fn next_connection_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A listener of the binary port: TCP, or a local socket ([`crate::stream`]).
trait Listener {
    type Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// The next connection and its peer (local sockets have no address: 127.0.0.1:0).
    fn accept_one(
        &self,
    ) -> impl Future<Output = std::io::Result<(Self::Stream, SocketAddr)>> + Send;
}

impl Listener for TcpListener {
    type Stream = TcpStream;
    async fn accept_one(&self) -> std::io::Result<(TcpStream, SocketAddr)> {
        let (stream, peer) = self.accept().await?;
        // Replies are written whole; do not let Nagle hold their tails back.
        let _ = stream.set_nodelay(true);
        Ok((stream, peer))
    }
}

impl Listener for UnixListener {
    type Stream = UnixStream;
    async fn accept_one(&self) -> std::io::Result<(UnixStream, SocketAddr)> {
        let (stream, _) = self.accept().await?;
        Ok((stream, SocketAddr::from(([127, 0, 0, 1], 0))))
    }
}

/// Accepts the next connection, or `None` once `shutdown` is cancelled. Accept errors
/// (out of file descriptors, say) are logged and retried after a pause that doubles up to a
/// second, since retrying at once would spin.
async fn accept<L: Listener>(
    listener: &L,
    shutdown: &CancellationToken,
) -> Option<(L::Stream, SocketAddr)> {
    let mut backoff = Duration::from_millis(10);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return None,
            accepted = listener.accept_one() => match accepted {
                Ok(accepted) => return Some(accepted),
                Err(e) => {
                    tracing::warn!(error = %e, "accepting a connection failed; retrying");
                    tokio::select! {
                        _ = shutdown.cancelled() => return None,
                        _ = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
            },
        }
    }
}
