//! The engine's public port: admits only the gateway and relays its connections to the Spark
//! Thrift Server byte for byte.
//!
//! A client negotiates SASL PLAIN here and must present the cluster's internal secret as its
//! password (checked in constant time; a wrong one is answered with SASL BAD and a message).
//! The gate then opens a SASL PLAIN connection to the Thrift Server as the same user, with
//! the engine's own token as password (the Thrift Server admits nothing else, see
//! [`crate::lockdown`]), and copies bytes both ways (64 KiB at a time each way: result
//! batches are tens of KB): after SASL both sides speak `[length u32][bytes]` frames, so no
//! Thrift message is ever parsed. The gateway keeps one connection per session, so the
//! number of open connections is the engine's use, which the idle timeout watches.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use kumiho_thrift::auth::SharedSecret;
use kumiho_thrift::connection::{Connection, Framing};
use kumiho_thrift::error::WireError;
use kumiho_thrift::sasl;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixListener};

use crate::lockdown::GateToken;

/// Largest SASL negotiation payload accepted (credentials are a few hundred bytes).
const NEGOTIATION_LIMIT: usize = 64 * 1024;

/// The relay's buffer, each way.
const RELAY_BUFFER: usize = 64 * 1024;

/// Admits the gateway and relays it to one Spark Thrift Server.
pub struct Gate {
    /// The Thrift Server's address.
    upstream: String,
    /// The internal secret the gateway presents.
    secret: SharedSecret,
    /// The password the gate presents to the Thrift Server.
    token: GateToken,
    /// Connections accepted and not yet closed.
    open: AtomicUsize,
}

/// Why a relayed connection ended early.
#[derive(Debug, thiserror::Error)]
enum RelayError {
    /// The client failed SASL (a wrong password, a broken handshake); it has been told.
    #[error("client refused: {0}")]
    Refused(WireError),
    /// The Thrift Server could not be reached or refused the gate.
    #[error("Spark Thrift Server at {address}: {source}")]
    Upstream { address: String, source: WireError },
    /// Copying failed (a peer reset the connection).
    #[error("relay: {0}")]
    Copy(#[from] std::io::Error),
}

impl Gate {
    /// A gate to the Thrift Server at `upstream`, admitting clients that know `secret` and
    /// logging in there with `token`.
    pub fn new(upstream: String, secret: SharedSecret, token: GateToken) -> Arc<Gate> {
        Arc::new(Gate {
            upstream,
            secret,
            token,
            open: AtomicUsize::new(0),
        })
    }

    /// Connections open now (negotiating or relaying).
    pub fn open_connections(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// Accepts connections until the process ends, each relayed on its own task.
    pub async fn serve(self: Arc<Self>, listener: TcpListener) {
        loop {
            let (client, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    backoff(e).await;
                    continue;
                }
            };
            // Frames are written whole; do not let Nagle hold their tails back.
            if let Err(e) = client.set_nodelay(true) {
                tracing::debug!(%peer, "connection lost at once: {e}");
                continue;
            }
            Arc::clone(&self).relay_on_task(client, peer.to_string());
        }
    }

    /// [`Self::serve`] on the engine's local socket, where a gateway on this host connects
    /// (kumiho_thrift::stream): the gateway's hop then costs the JVM's cores less.
    pub async fn serve_local(self: Arc<Self>, listener: UnixListener) {
        loop {
            match listener.accept().await {
                Ok((client, _)) => Arc::clone(&self).relay_on_task(client, "local".to_owned()),
                Err(e) => backoff(e).await,
            }
        }
    }

    fn relay_on_task<S>(self: Arc<Self>, client: S, peer: String)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let counted = OpenConnection::new(self);
        tokio::spawn(async move {
            match counted.0.relay(client).await {
                Ok(user) => tracing::debug!(%peer, %user, "connection closed"),
                Err(RelayError::Refused(e)) => {
                    tracing::info!(%peer, "refused a connection: {e}")
                }
                Err(e) => tracing::warn!(%peer, "connection ended: {e}"),
            }
        });
    }

    /// Admits one client, connects it to the Thrift Server as its user, and copies bytes until
    /// either side closes. Returns the user.
    async fn relay<S>(&self, client: S) -> Result<String, RelayError>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let mut client = Connection::new(client, Framing::Raw, NEGOTIATION_LIMIT);
        // Reach the Thrift Server first, so that a client is never told COMPLETE by a gate
        // with nothing behind it: it gets SASL ERROR with the reason instead.
        let upstream = match TcpStream::connect(&self.upstream).await {
            Ok(upstream) => upstream,
            Err(e) => {
                let message = format!(
                    "the Spark Thrift Server behind this engine is not accepting connections ({e}); the engine is stopping or broken, reconnect to get a new one"
                );
                let _ = client
                    .write_raw(&sasl::encode_frame(sasl::status::ERROR, message.as_bytes()))
                    .await;
                return Err(self.upstream_error(WireError::Io(e)));
            }
        };
        upstream.set_nodelay(true)?;
        let user = sasl::accept_plain(&mut client, &self.secret)
            .await
            .map_err(RelayError::Refused)?;
        let mut upstream = Connection::new(upstream, Framing::Raw, NEGOTIATION_LIMIT);
        sasl::start_plain(&mut upstream, &user, self.token.expose())
            .await
            .map_err(|e| self.upstream_error(e))?;
        let (mut client, client_unread) = client.into_parts();
        let (mut upstream, upstream_unread) = upstream.into_parts();
        upstream.write_all(&client_unread).await?;
        client.write_all(&upstream_unread).await?;
        tokio::io::copy_bidirectional_with_sizes(
            &mut client,
            &mut upstream,
            RELAY_BUFFER,
            RELAY_BUFFER,
        )
        .await?;
        Ok(user)
    }

    fn upstream_error(&self, source: WireError) -> RelayError {
        RelayError::Upstream {
            address: self.upstream.clone(),
            source,
        }
    }
}

/// After a failed accept (out of file descriptors and the like): back off rather than spin.
async fn backoff(error: std::io::Error) {
    tracing::warn!("accept failed: {error}");
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
}

/// One counted connection; dropping it uncounts it, however the relay ended.
struct OpenConnection(Arc<Gate>);

impl OpenConnection {
    fn new(gate: Arc<Gate>) -> OpenConnection {
        gate.open.fetch_add(1, Ordering::SeqCst);
        OpenConnection(gate)
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests;
