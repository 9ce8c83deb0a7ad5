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
//! The security layers offered follow the server's [`Qop`] (HiveServer2's
//! `hive.server2.thrift.sasl.qop`): with `auth`, the default, only "no security layer", and
//! data frames after the negotiation are plain, as after PLAIN; with `auth-int` integrity and
//! confidentiality, with `auth-conf` confidentiality alone, and every data frame after the
//! negotiation is then a wrapped token ([`SecurityLayer`]). A client choosing a layer not
//! offered is refused with the QOP to ask for.

use std::fmt;

use tokio::io::{AsyncRead, AsyncWrite};

use super::security_layer::SecurityLayer;
use super::{encode_frame, read_frame, status, Refusal};
use crate::connection::Connection;
use crate::error::WireError;
use crate::kerberos::{not_accepted, AcceptContext, KerberosAcceptor, Step};

/// The mechanism name Kerberos clients send in START.
pub const GSSAPI: &str = "GSSAPI";

/// The largest wrapped message the server says it takes when it offers no security layer
/// (Java's SASL default, which HiveServer2 sends); no message is then ever wrapped after the
/// exchange. With a security layer the server offers its message size limit instead.
pub const MAX_BUFFER: u32 = 65536;

/// The largest size the security-layer messages can state: three octets.
const MAX_STATED_BUFFER: u32 = 0xff_ffff;

/// The protection the server requires of the data after a GSSAPI negotiation (SASL's quality
/// of protection, HiveServer2's `hive.server2.thrift.sasl.qop`), weakest first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Qop {
    /// Authentication only: data frames are plain (HiveServer2's default).
    #[default]
    Auth,
    /// Integrity: every data frame is signed, so that no one can alter or replay it.
    AuthInt,
    /// Confidentiality: every data frame is encrypted and signed.
    AuthConf,
}

impl Qop {
    /// The name in SASL and in settings: `auth`, `auth-int`, `auth-conf`.
    pub fn name(self) -> &'static str {
        match self {
            Qop::Auth => "auth",
            Qop::AuthInt => "auth-int",
            Qop::AuthConf => "auth-conf",
        }
    }

    /// The [`layer`] bit of this QOP.
    pub fn layer(self) -> u8 {
        match self {
            Qop::Auth => layer::NONE,
            Qop::AuthInt => layer::INTEGRITY,
            Qop::AuthConf => layer::CONFIDENTIALITY,
        }
    }

    /// The QOP of one [`layer`] bit.
    pub fn of_layer(bit: u8) -> Option<Self> {
        [Qop::Auth, Qop::AuthInt, Qop::AuthConf]
            .into_iter()
            .find(|qop| qop.layer() == bit)
    }

    /// The layers a server requiring this QOP offers: `auth` only "none", as HiveServer2
    /// (offering more would turn pure-sasl's clients, PyHive's and impyla's, which pick the
    /// strongest layer offered, to encryption without anyone asking); `auth-int` integrity
    /// and the stronger confidentiality, for clients that ask for it; `auth-conf` only
    /// confidentiality.
    pub fn offered_layers(self) -> u8 {
        match self {
            Qop::Auth => layer::NONE,
            Qop::AuthInt => layer::INTEGRITY | layer::CONFIDENTIALITY,
            Qop::AuthConf => layer::CONFIDENTIALITY,
        }
    }

    /// The QOPs offered, for messages: `auth-int or auth-conf`.
    fn offered_names(self) -> String {
        [Qop::Auth, Qop::AuthInt, Qop::AuthConf]
            .into_iter()
            .filter(|qop| self.offered_layers() & qop.layer() != 0)
            .map(Qop::name)
            .collect::<Vec<_>>()
            .join(" or ")
    }
}

impl fmt::Display for Qop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Qop {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        [Qop::Auth, Qop::AuthInt, Qop::AuthConf]
            .into_iter()
            .find(|qop| qop.name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| {
                format!(
                    "SASL QOP `{text}` is unknown; use auth (authentication only), auth-int \
                     (integrity) or auth-conf (confidentiality)"
                )
            })
    }
}

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

    /// `Ok` when the client chose one layer the server requiring `qop` offers, and acts as
    /// itself; else what the client must change.
    pub fn check(&self, principal: &str, qop: Qop) -> Result<(), String> {
        let offered = qop.offered_layers();
        match Qop::of_layer(self.layer) {
            Some(_) if offered & self.layer != 0 => {}
            Some(chosen) if chosen < qop => {
                return Err(format!(
                    "the client chose QOP {chosen}, but this server requires QOP {qop} \
                     (hive.server2.thrift.sasl.qop={qop}): connect with QOP {qop} (JDBC: \
                     ;saslQop={qop}; pure-sasl: qops=['{qop}'])"
                ))
            }
            Some(chosen) if qop == Qop::Auth => {
                return Err(format!(
                    "the client requires QOP {chosen}, but this server offers QOP auth only \
                     (HiveServer2's hive.server2.thrift.sasl.qop=auth): connect with QOP auth \
                     (JDBC: ;saslQop=auth or leave it out), or use TLS for protection on the \
                     wire"
                ))
            }
            Some(chosen) => {
                return Err(format!(
                    "the client chose QOP {chosen}, but this server offers QOP {} only",
                    qop.offered_names()
                ))
            }
            None => {
                return Err(format!(
                    "the client chose GSSAPI security layer {:#04x}; choose exactly one of \
                     those offered (this server offers QOP {})",
                    self.layer,
                    qop.offered_names()
                ))
            }
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

/// What a GSSAPI negotiation established.
pub(super) struct Negotiated {
    /// The client's principal, e.g. `alice@EXAMPLE.COM`.
    pub principal: String,
    /// The session user the acceptor maps the principal to.
    pub user: String,
    /// The security layer data frames go through from now on; `None` for QOP `auth`.
    pub layer: Option<SecurityLayer>,
}

/// Server side: negotiates GSSAPI with the security layers a server requiring `qop` offers,
/// and returns the client's principal (e.g. `alice@EXAMPLE.COM`), having answered COMPLETE;
/// on failure it has answered BAD or ERROR with the reason. A PLAIN client is told that this
/// server takes Kerberos only.
pub async fn accept_gssapi<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Connection<S>,
    acceptor: &dyn KerberosAcceptor,
    qop: Qop,
) -> Result<String, WireError> {
    super::accept(conn, Some(acceptor), qop, None)
        .await
        .map(super::Identity::into_name)
}

/// GSSAPI after the client's START: the context's tokens, then the security layers.
pub(super) async fn negotiate<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Connection<S>,
    acceptor: &dyn KerberosAcceptor,
    qop: Qop,
) -> Result<Negotiated, Refusal> {
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
    security_layers(conn, acceptor, context, qop).await
}

/// The exchange after the context is established: offer, answer, checks, and the session
/// user of the principal.
async fn security_layers<S: AsyncRead + AsyncWrite + Unpin>(
    conn: &mut Connection<S>,
    acceptor: &dyn KerberosAcceptor,
    mut context: Box<dyn AcceptContext>,
    qop: Qop,
) -> Result<Negotiated, Refusal> {
    let principal = context.client_principal().map_err(|gss| {
        Refusal::Error(format!(
            "cannot tell the client's Kerberos principal: {gss}"
        ))
    })?;
    let offered = qop.offered_layers();
    let max_buffer = if offered == layer::NONE {
        MAX_BUFFER
    } else {
        // Frames are taken up to the connection's limit, checked before they are read.
        u32::try_from(conn.max_message_size())
            .unwrap_or(u32::MAX)
            .min(MAX_STATED_BUFFER)
    };
    let offer = context
        .wrap(&encode_offer(offered, max_buffer), false)
        .map_err(|gss| Refusal::Error(format!("cannot wrap the GSSAPI security layers: {gss}")))?;
    send(conn, &offer).await?;
    let answer = match read_token(conn, "the GSSAPI security-layer answer").await {
        // Hive JDBC finds no layer it accepts in the offer and says so in a BAD frame.
        Err(Refusal::Peer(message)) => {
            return Err(Refusal::Peer(format!(
                "{message} (this server offers QOP {}: hive.server2.thrift.sasl.qop={qop}; the \
                 client must ask for it, JDBC: ;saslQop={qop})",
                qop.offered_names()
            )))
        }
        answer => answer?,
    };
    let answer = context.unwrap(&answer).map_err(|gss| {
        Refusal::Error(format!(
            "the GSSAPI security-layer answer does not unwrap: {gss}"
        ))
    })?;
    let choice = LayerChoice::decode(&answer.message).map_err(Refusal::Error)?;
    choice.check(&principal, qop).map_err(Refusal::Bad)?;
    let user = acceptor.session_user(&principal).map_err(Refusal::Bad)?;
    let layer = match Qop::of_layer(choice.layer) {
        Some(Qop::Auth) | None => None,
        Some(chosen) => {
            let confidential = chosen == Qop::AuthConf;
            // The largest piece of a message whose token fits the client's buffer.
            let max_piece = context
                .wrap_size_limit(confidential, choice.max_buffer)
                .map_err(|gss| {
                    Refusal::Error(format!(
                        "cannot size wrapped messages for the client's buffer of {} bytes: \
                         {gss}",
                        choice.max_buffer
                    ))
                })?;
            if max_piece == 0 {
                return Err(Refusal::Error(format!(
                    "the client chose QOP {chosen} but takes wrapped messages of at most {} \
                     bytes, too few for any data: raise the client's SASL max buffer \
                     (javax.security.sasl.maxbuffer)",
                    choice.max_buffer
                )));
            }
            Some(SecurityLayer::new(context, chosen, max_piece as usize))
        }
    };
    Ok(Negotiated {
        principal,
        user,
        layer,
    })
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
    match status {
        status::OK | status::COMPLETE => Ok(token),
        // The client gave up, saying why (Thrift's TSaslTransport sends its SaslException).
        status::BAD | status::ERROR => Err(Refusal::Peer(format!(
            "the client ended the negotiation instead of sending {what}: {}",
            String::from_utf8_lossy(&token)
        ))),
        other => Err(Refusal::Error(format!(
            "expected {what} with status OK or COMPLETE, got status {other}"
        ))),
    }
}

#[cfg(test)]
mod tests;
