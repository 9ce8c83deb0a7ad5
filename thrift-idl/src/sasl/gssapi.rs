//! SASL GSSAPI (RFC 4752), server side, in Thrift's negotiation frames: Kerberos tokens
//! until the security context is established, then the security-layer exchange.
//!
//! ```text
//! client                                   server
//! START "GSSAPI"
//! OK   AP-REQ                       ──►    accept_sec_context
//!                                   ◄──    OK   AP-REP (mutual authentication)
//! OK   (empty)                      ──►
//!                                   ◄──    OK   wrap([layers][max buffer])
//! OK   wrap([layer][max buffer][authzid]) ──►
//!                                   ◄──    COMPLETE
//! ```
//!
//! Only the security layer "none" is offered (QOP `auth`, HiveServer2's default
//! `hive.server2.thrift.sasl.qop=auth`): data frames after the negotiation are plain, as
//! they are after PLAIN. A client that insists on integrity or confidentiality is refused.

use tokio::io::{AsyncRead, AsyncWrite};

use super::{encode_frame, read_frame, status, Refusal};
use crate::connection::Connection;
use crate::error::WireError;
use crate::kerberos::{not_accepted, AcceptContext, KerberosAcceptor, Step};

/// The mechanism name Kerberos clients send in START.
pub const GSSAPI: &str = "GSSAPI";

/// The largest wrapped message the server says it takes (Java's SASL default, which
/// HiveServer2 sends); with no security layer no message is ever wrapped after the exchange.
pub const MAX_BUFFER: u32 = 65536;

/// Security layers of RFC 4752, as bits of the first octet.
pub mod layer {
    /// No security layer: QOP `auth`.
    pub const NONE: u8 = 1;
    /// Integrity protection: QOP `auth-int`.
    pub const INTEGRITY: u8 = 2;
    /// Confidentiality: QOP `auth-conf`.
    pub const CONFIDENTIALITY: u8 = 4;
}

/// The server's offer before wrapping: the layers it supports and its largest buffer.
pub fn encode_offer(layers: u8, max_buffer: u32) -> [u8; 4] {
    let size = max_buffer.min(0xff_ffff).to_be_bytes();
    [layers, size[1], size[2], size[3]]
}

/// The client's answer to the offer, after unwrapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerChoice {
    /// The one layer chosen, a [`layer`] bit.
    pub layer: u8,
    /// The largest wrapped message the client takes.
    pub max_buffer: u32,
    /// The identity the client asks to act as; empty for its own principal.
    pub authzid: String,
}

impl LayerChoice {
    /// `[layer][max buffer, 3 octets][authzid, UTF-8]`; the error is meant for the client.
    pub fn decode(message: &[u8]) -> Result<Self, String> {
        let [layer, a, b, c, authzid @ ..] = message else {
            return Err(format!(
                "malformed GSSAPI security-layer answer: {} bytes, expected at least 4",
                message.len()
            ));
        };
        let authzid = String::from_utf8(authzid.to_vec())
            .map_err(|_| "the GSSAPI authorization id is not UTF-8".to_owned())?;
        Ok(Self {
            layer: *layer,
            max_buffer: u32::from_be_bytes([0, *a, *b, *c]),
            authzid,
        })
    }

    /// The answer as a client sends it, before wrapping.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = encode_offer(self.layer, self.max_buffer).to_vec();
        out.extend_from_slice(self.authzid.as_bytes());
        out
    }

    /// `Ok` when the client chose what the server offers (no security layer) and acts as
    /// itself; else what the client must change.
    pub fn check(&self, principal: &str) -> Result<(), String> {
        let qop = match self.layer {
            layer::NONE => None,
            layer::INTEGRITY => Some("auth-int"),
            layer::CONFIDENTIALITY => Some("auth-conf"),
            other => {
                return Err(format!(
                    "the client chose GSSAPI security layer {other:#04x}; choose exactly one \
                     of those offered (this server offers none, QOP auth)"
                ))
            }
        };
        if let Some(qop) = qop {
            return Err(format!(
                "the client requires QOP {qop}, but this server offers QOP auth only \
                 (HiveServer2's hive.server2.thrift.sasl.qop=auth): connect with QOP auth \
                 (JDBC: ;saslQop=auth or leave it out), or use TLS for protection on the wire"
            ));
        }
        if !self.authzid.is_empty() && self.authzid != principal {
            return Err(format!(
                "principal {principal} may not act as '{}' through SASL; use \
                 hive.server2.proxy.user",
                self.authzid
            ));
        }
        Ok(())
    }
}

/// Server side: negotiates GSSAPI and returns the client's principal (e.g.
/// `alice@EXAMPLE.COM`), having answered COMPLETE; on failure it has answered BAD or ERROR
/// with the reason. A PLAIN client is told that this server takes Kerberos only.
pub async fn accept_gssapi<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Connection<S>,
    acceptor: &dyn KerberosAcceptor,
) -> Result<String, WireError> {
    super::accept(conn, Some(acceptor), None)
        .await
        .map(super::Identity::into_name)
}

/// GSSAPI after the client's START: the context's tokens, then the security layers.
pub(super) async fn negotiate<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Connection<S>,
    acceptor: &dyn KerberosAcceptor,
) -> Result<String, Refusal> {
    let mut context = acceptor.start();
    let mut token = read_token(conn, "the first Kerberos token").await?;
    loop {
        match context.step(&token) {
            Ok(Step::Continue(reply)) => {
                send(conn, &reply).await?;
                token = read_token(conn, "the next Kerberos token").await?;
            }
            Ok(Step::Established(reply)) => {
                if let Some(reply) = reply {
                    send(conn, &reply).await?;
                    // RFC 4752: the client answers the last context token with no data.
                    read_token(conn, "the answer to the last Kerberos token").await?;
                }
                break;
            }
            Err(gss) => return Err(Refusal::Bad(not_accepted(&gss, acceptor.principal()))),
        }
    }
    security_layers(conn, context.as_mut()).await
}

/// The exchange after the context is established: offer, answer, checks.
async fn security_layers<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Connection<S>,
    context: &mut dyn AcceptContext,
) -> Result<String, Refusal> {
    let principal = context.client_principal().map_err(|gss| {
        Refusal::Error(format!(
            "cannot tell the client's Kerberos principal: {gss}"
        ))
    })?;
    let offer = context
        .wrap(&encode_offer(layer::NONE, MAX_BUFFER))
        .map_err(|gss| Refusal::Error(format!("cannot wrap the GSSAPI security layers: {gss}")))?;
    send(conn, &offer).await?;
    let answer = read_token(conn, "the GSSAPI security-layer answer").await?;
    let answer = context.unwrap(&answer).map_err(|gss| {
        Refusal::Error(format!(
            "the GSSAPI security-layer answer does not unwrap: {gss}"
        ))
    })?;
    let choice = LayerChoice::decode(&answer).map_err(Refusal::Error)?;
    choice.check(&principal).map_err(Refusal::Bad)?;
    Ok(principal)
}

/// Sends one token in an OK frame.
async fn send<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Connection<S>,
    token: &[u8],
) -> Result<(), Refusal> {
    conn.write_raw(&encode_frame(status::OK, token))
        .await
        .map_err(Refusal::Wire)
}

/// Reads the client's next token, in an OK or COMPLETE frame.
async fn read_token<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Connection<S>,
    what: &str,
) -> Result<Vec<u8>, Refusal> {
    let (status, token) = read_frame(conn)
        .await
        .map_err(Refusal::Wire)?
        .ok_or(Refusal::Wire(WireError::Closed))?;
    if status != status::OK && status != status::COMPLETE {
        return Err(Refusal::Error(format!(
            "expected {what} with status OK or COMPLETE, got status {status}"
        )));
    }
    Ok(token)
}

#[cfg(test)]
mod tests;
