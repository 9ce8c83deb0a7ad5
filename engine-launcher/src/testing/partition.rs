//! A TCP proxy whose link a test can cut and heal, as a network partition would.
//!
//! A client connected through it loses its server when the link is cut while every other
//! client keeps it: the way to make ZooKeeper expire one session and only that one.

use std::net::SocketAddr;

use tokio::io::copy_bidirectional;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A proxy on 127.0.0.1 to one upstream address.
#[derive(Debug)]
pub struct PartitionProxy {
    address: SocketAddr,
    cut: watch::Sender<bool>,
    accepting: JoinHandle<()>,
}

impl PartitionProxy {
    /// Listens on a free port and forwards every connection to `upstream` (`host:port`).
    pub async fn start(upstream: String) -> PartitionProxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the proxy");
        let address = listener.local_addr().expect("the proxy's address");
        let (cut, _) = watch::channel(false);
        let accepting = tokio::spawn(accept(listener, upstream, cut.clone()));
        PartitionProxy {
            address,
            cut,
            accepting,
        }
    }

    /// `127.0.0.1:PORT`, to connect to instead of the upstream.
    pub fn address(&self) -> String {
        self.address.to_string()
    }

    /// Ends every connection and refuses new ones until [`heal`](Self::heal).
    pub fn cut(&self) {
        self.cut.send_replace(true);
    }

    /// Forwards new connections again.
    pub fn heal(&self) {
        self.cut.send_replace(false);
    }
}

impl Drop for PartitionProxy {
    fn drop(&mut self) {
        self.cut();
        self.accepting.abort();
    }
}

async fn accept(listener: TcpListener, upstream: String, cut: watch::Sender<bool>) {
    while let Ok((mut inbound, _)) = listener.accept().await {
        if *cut.borrow() {
            continue; // dropped: the client sees its connection closed at once
        }
        let mut cut_now = cut.subscribe();
        let upstream = upstream.clone();
        tokio::spawn(async move {
            let Ok(mut outbound) = TcpStream::connect(&upstream).await else {
                return;
            };
            tokio::select! {
                _ = copy_bidirectional(&mut inbound, &mut outbound) => {}
                _ = cut_now.wait_for(|cut| *cut) => {}
            }
        });
    }
}
