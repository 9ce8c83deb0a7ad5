//! Connections to engines: over the engine's local socket when it runs on this host, else
//! over TCP.
//!
//! Every forwarded RPC crosses the gateway's engine connection twice. An engine registered
//! on a loopback address is on this host, and Kumiho's engines (kumiho-engine, and the gate
//! of kumiho-spark-engine) then also listen on a local socket
//! ([`EngineRegistration::local_socket`]), where a message costs both processes less
//! CPU than on loopback TCP. The socket must be held by this gateway's own user (engines run
//! as the gateway's user): the internal secret is never sent to a socket another local user
//! could have bound first. An engine with no local socket (an older engine) refuses the
//! connection at once, and TCP is used.

use kumiho_engine_launcher::registry::EngineRegistration;
use kumiho_thrift::client::{Client, ClientAuth};
use kumiho_thrift::codec::DEFAULT_MAX_MESSAGE_SIZE;
use kumiho_thrift::error::WireError;
use kumiho_thrift::stream::{self, Stream};

/// Connects and authenticates to a registered engine.
pub async fn connect(
    registration: &EngineRegistration,
    auth: ClientAuth,
) -> Result<Client, WireError> {
    if let Some(name) = registration.local_socket() {
        match stream::connect_local(&name) {
            Ok(local) if held_by_this_user(&local) => {
                return Client::over(Stream::Local(local), auth, DEFAULT_MAX_MESSAGE_SIZE).await;
            }
            Ok(_) => tracing::warn!(
                socket = %name,
                engine = %registration.address(),
                "the engine's local socket is held by another user; connecting over TCP"
            ),
            // Not listening there: an engine of another kind.
            Err(_) => {}
        }
    }
    Client::connect(&registration.address(), auth).await
}

/// Whether the process at the other end of a local socket runs as this process's user.
fn held_by_this_user(local: &tokio::net::UnixStream) -> bool {
    local
        .peer_cred()
        .is_ok_and(|peer| peer.uid() == nix::unistd::geteuid().as_raw())
}
