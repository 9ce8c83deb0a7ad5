//! SASL negotiation as Thrift's `TSaslTransport` does it: PLAIN server side and client
//! side, and GSSAPI (Kerberos) server side in [`gssapi`], with its security layers (QOP
//! `auth-int` and `auth-conf`) in [`security_layer`].
//!
//! Every negotiation frame is `[status u8][length u32 BE][payload]`. The client sends START
//! with the mechanism name, then the PLAIN response `authzid \0 authcid \0 password` with
//! status OK or COMPLETE (Hive JDBC and PyHive differ); the server answers COMPLETE with an
//! empty payload, or BAD/ERROR with a message, and closes. Data frames follow.

use std::fmt;

use tokio::io::{AsyncRead, AsyncWrite};

use crate::auth::Authenticator;
use crate::connection::{Connection, Framing};
use crate::error::WireError;
use crate::kerberos::{kerberos_required, KerberosAcceptor};

mod gssapi;
mod security_layer;

pub use gssapi::{accept_gssapi, layer, LayerChoice, Qop, GSSAPI, MAX_BUFFER};
pub use security_layer::SecurityLayer;

/// Negotiation frame statuses.
pub mod status {
    pub const START: u8 = 1;
    pub const OK: u8 = 2;
    pub const BAD: u8 = 3;
    pub const ERROR: u8 = 4;
    pub const COMPLETE: u8 = 5;
}

/// The only mechanism HiveServer2 clients use without Kerberos.
pub const PLAIN: &str = "PLAIN";

/// Credentials of a PLAIN response.
#[derive(Clone, PartialEq, Eq)]
pub struct PlainCredentials {
    /// The identity to act as; empty or equal to `user` (impersonation goes through
    /// `hive.server2.proxy.user` instead).
    pub authzid: String,
    /// The authentication identity: the user.
    pub user: String,
    pub password: String,
}

/// Never prints the password.
impl fmt::Debug for PlainCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlainCredentials")
            .field("authzid", &self.authzid)
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .finish()
    }
}

impl PlainCredentials {
    /// Parses `authzid \0 authcid \0 password`; the error is meant for the client.
    pub fn parse(payload: &[u8]) -> Result<Self, String> {
        let mut parts = payload.split(|&b| b == 0);
        let (Some(authzid), Some(user), Some(password), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(
                "malformed PLAIN response: expected authzid, user and password separated by NUL bytes"
                    .into(),
            );
        };
        let text = |bytes: &[u8], what: &str| {
            String::from_utf8(bytes.to_vec()).map_err(|_| format!("the PLAIN {what} is not UTF-8"))
        };
        let credentials = Self {
            authzid: text(authzid, "authorization id")?,
            user: text(user, "user")?,
            password: text(password, "password")?,
        };
        if credentials.user.is_empty() {
            return Err("the PLAIN response names no user".into());
        }
        if !credentials.authzid.is_empty() && credentials.authzid != credentials.user {
            return Err(format!(
                "user '{}' may not authenticate as '{}' through SASL; use hive.server2.proxy.user",
                credentials.user, credentials.authzid
            ));
        }
        Ok(credentials)
    }

    /// `\0 user \0 password`, as clients send it.
    pub fn encode(user: &str, password: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(user.len() + password.len() + 2);
        out.push(0);
        out.extend_from_slice(user.as_bytes());
        out.push(0);
        out.extend_from_slice(password.as_bytes());
        out
    }
}

/// Encodes one negotiation frame.
pub fn encode_frame(status: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + payload.len());
    out.push(status);
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// Reads one negotiation frame: status and payload (checked against the size limit before
/// it is read). `None` if the peer closed the connection before it.
pub async fn read_frame<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Connection<S>,
) -> Result<Option<(u8, Vec<u8>)>, WireError> {
    let Some(head) = conn.read_exact_buffered(5).await? else {
        return Ok(None);
    };
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    let payload = conn
        .read_exact_buffered(len)
        .await?
        .ok_or(WireError::Closed)?;
    Ok(Some((head[0], payload.to_vec())))
}

/// Server side: negotiates PLAIN and returns the authenticated user, having answered
/// COMPLETE; on failure it has answered BAD or ERROR with the reason.
pub async fn accept_plain<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Connection<S>,
    authenticator: &dyn Authenticator,
) -> Result<String, WireError> {
    accept(conn, None, Qop::Auth, Some(authenticator))
        .await
        .map(Identity::into_name)
}

/// Who a SASL negotiation authenticated, by the mechanism the client chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Identity {
    /// GSSAPI: the client's Kerberos principal and the session user it maps to.
    Principal {
        /// E.g. `etl/batch@EXAMPLE.COM`.
        principal: String,
        /// E.g. `etl` ([`KerberosAcceptor::session_user`]).
        user: String,
        /// The protection of the data frames that follow.
        qop: Qop,
    },
    /// PLAIN: the user whose password was accepted.
    User(String),
}

impl Identity {
    /// The principal or the user, as authenticated.
    pub fn into_name(self) -> String {
        match self {
            Identity::Principal { principal, .. } => principal,
            Identity::User(name) => name,
        }
    }
}

/// Server side: reads the client's START and negotiates the mechanism it chose among those
/// offered, GSSAPI with `kerberos` (its data protected as `qop` requires) and PLAIN with
/// `passwords` (Kyuubi's `kyuubi.authentication=KERBEROS,LDAP` offers both); answers
/// COMPLETE, or BAD or ERROR with the reason, a client choosing a mechanism not offered being
/// told which are. After GSSAPI with QOP `auth-int` or `auth-conf` the connection wraps and
/// unwraps every data frame.
pub async fn accept<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Connection<S>,
    kerberos: Option<&dyn KerberosAcceptor>,
    qop: Qop,
    passwords: Option<&dyn Authenticator>,
) -> Result<Identity, WireError> {
    let result = match read_start(conn).await {
        Ok(mechanism) => match (mechanism.as_slice(), kerberos, passwords) {
            (m, Some(acceptor), _) if m == GSSAPI.as_bytes() => {
                gssapi::negotiate(conn, acceptor, qop).await.map(|done| {
                    let identity = Identity::Principal {
                        principal: done.principal,
                        user: done.user,
                        qop: done.layer.as_ref().map_or(Qop::Auth, SecurityLayer::qop),
                    };
                    (identity, done.layer)
                })
            }
            (m, _, Some(authenticator)) if m == PLAIN.as_bytes() => negotiate(conn, authenticator)
                .await
                .map(|user| (Identity::User(user), None)),
            (m, Some(acceptor), None) if m == PLAIN.as_bytes() => {
                Err(Refusal::Bad(kerberos_required(acceptor.principal())))
            }
            (other, _, _) => Err(Refusal::Bad(unsupported_mechanism(
                other,
                kerberos.is_some(),
                passwords.is_some(),
            ))),
        },
        Err(refusal) => Err(refusal),
    };
    finish(conn, result).await
}

/// What a client choosing a mechanism the server does not offer is told.
fn unsupported_mechanism(mechanism: &[u8], kerberos: bool, passwords: bool) -> String {
    let offered = match (kerberos, passwords) {
        (true, true) => "GSSAPI (a Kerberos ticket) and PLAIN (a user and password)",
        (true, false) => "GSSAPI (Kerberos) only",
        _ => "PLAIN only (its authentication is not KERBEROS): connect with a user and password",
    };
    format!(
        "unsupported SASL mechanism '{}': this server offers {offered}",
        String::from_utf8_lossy(mechanism)
    )
}

/// Ends a server-side negotiation: COMPLETE and data frames from now on (through the
/// security layer, if one was negotiated), or BAD or ERROR with the reason (nothing when the
/// connection itself failed or the client gave up).
async fn finish<S: AsyncRead + AsyncWrite + Unpin, T>(
    conn: &mut Connection<S>,
    result: Result<(T, Option<SecurityLayer>), Refusal>,
) -> Result<T, WireError> {
    match &result {
        Ok(_) => conn.write_raw(&encode_frame(status::COMPLETE, &[])).await?,
        Err(Refusal::Bad(message)) => {
            conn.write_raw(&encode_frame(status::BAD, message.as_bytes()))
                .await?
        }
        Err(Refusal::Error(message)) => {
            conn.write_raw(&encode_frame(status::ERROR, message.as_bytes()))
                .await?
        }
        Err(Refusal::Wire(_) | Refusal::Peer(_)) => {}
    }
    match result {
        Ok((identity, layer)) => {
            conn.set_framing(Framing::SaslFrames);
            if let Some(layer) = layer {
                conn.set_security_layer(layer);
            }
            Ok(identity)
        }
        Err(Refusal::Bad(message) | Refusal::Error(message) | Refusal::Peer(message)) => {
            Err(WireError::Sasl(message))
        }
        Err(Refusal::Wire(e)) => Err(e),
    }
}

/// Why a negotiation failed, and so which frame (if any) tells the client.
enum Refusal {
    /// The credentials were refused.
    Bad(String),
    /// The client broke the protocol.
    Error(String),
    /// The client gave up with a BAD or ERROR frame of its own (its reason); it hears
    /// nothing more.
    Peer(String),
    /// The connection failed; nothing can be sent.
    Wire(WireError),
}

/// Reads the client's START frame: the mechanism it asks for.
async fn read_start<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Connection<S>,
) -> Result<Vec<u8>, Refusal> {
    let (status, mechanism) = read_frame(conn)
        .await
        .map_err(Refusal::Wire)?
        .ok_or(Refusal::Wire(WireError::Closed))?;
    if status != status::START {
        return Err(Refusal::Error(format!(
            "expected a SASL START frame, got status {status}"
        )));
    }
    Ok(mechanism)
}

/// PLAIN after the client's START: its response, checked by `authenticator`.
async fn negotiate<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Connection<S>,
    authenticator: &dyn Authenticator,
) -> Result<String, Refusal> {
    let (status, response) = read_frame(conn)
        .await
        .map_err(Refusal::Wire)?
        .ok_or(Refusal::Wire(WireError::Closed))?;
    if status != status::OK && status != status::COMPLETE {
        return Err(Refusal::Error(format!(
            "expected the PLAIN response with status OK or COMPLETE, got status {status}"
        )));
    }
    let credentials = PlainCredentials::parse(&response).map_err(Refusal::Error)?;
    authenticator
        .authenticate(&credentials.user, &credentials.password)
        .map_err(Refusal::Bad)?;
    Ok(credentials.user)
}

/// Client side: negotiates PLAIN; on success the connection speaks SASL data frames.
pub async fn start_plain<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Connection<S>,
    user: &str,
    password: &str,
) -> Result<(), WireError> {
    let mut hello = encode_frame(status::START, PLAIN.as_bytes());
    hello.extend_from_slice(&encode_frame(
        status::COMPLETE,
        &PlainCredentials::encode(user, password),
    ));
    conn.write_raw(&hello).await?;
    let (status, payload) = read_frame(conn).await?.ok_or(WireError::Closed)?;
    match status {
        status::COMPLETE => {
            conn.set_framing(Framing::SaslFrames);
            Ok(())
        }
        status::BAD | status::ERROR => Err(WireError::Sasl(
            String::from_utf8_lossy(&payload).into_owned(),
        )),
        other => Err(WireError::Sasl(format!(
            "the server answered the PLAIN response with unexpected status {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_responses() {
        let c = PlainCredentials::parse(b"\0alice\0pw").unwrap();
        assert_eq!(
            (c.authzid.as_str(), c.user.as_str(), c.password.as_str()),
            ("", "alice", "pw")
        );
        assert!(PlainCredentials::parse(b"alice\0alice\0pw").is_ok());
        assert!(PlainCredentials::parse(b"bob\0alice\0pw").is_err());
        assert!(PlainCredentials::parse(b"\0alice").is_err());
        assert!(PlainCredentials::parse(b"\0\0pw").is_err());
        assert!(PlainCredentials::parse(b"\0a\0b\0c").is_err());
        assert_eq!(PlainCredentials::encode("alice", "pw"), b"\0alice\0pw");
    }

    #[test]
    fn debug_hides_the_password() {
        let c = PlainCredentials::parse(b"\0alice\0hunter2").unwrap();
        assert!(!format!("{c:?}").contains("hunter2"));
    }
}
