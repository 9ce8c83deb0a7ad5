//! The SASL security layer of GSSAPI's QOP `auth-int` and `auth-conf` (RFC 4752, RFC 4422
//! §3.7): after the negotiation every data frame is `[length u32 BE][token]`, the token the
//! GSS-API wrap of a piece of the byte stream, signed (`auth-int`) or encrypted and signed
//! (`auth-conf`).
//!
//! Reading, a frame's length is checked against the connection's limit before anything is
//! allocated for it ([`crate::connection::Connection`]), then its token unwrapped; the limit is
//! the connection's message limit, not the buffer size the server stated, since Thrift's
//! `TSaslTransport` (Hive JDBC) and pure-sasl wrap each flush whole, whatever that size.
//! Writing, a message is cut into pieces whose tokens fit the buffer the client stated, each
//! piece in a frame of its own: Thrift's clients read a message across frames.

use std::fmt;

use bytes::{BufMut, BytesMut};

use super::Qop;
use crate::error::WireError;
use crate::kerberos::AcceptContext;

/// A negotiated security layer: the client's context, what protection it chose, and how
/// large a piece of a message one token may carry.
pub struct SecurityLayer {
    context: Box<dyn AcceptContext>,
    /// `auth-int` or `auth-conf`.
    qop: Qop,
    /// The most bytes of a message wrapped into one token: what keeps each token within the
    /// client's stated buffer.
    max_piece: usize,
}

impl SecurityLayer {
    /// A layer for `qop` (`auth-int` or `auth-conf`) over the client's established context,
    /// cutting messages into pieces of at most `max_piece` bytes.
    pub fn new(context: Box<dyn AcceptContext>, qop: Qop, max_piece: usize) -> Self {
        debug_assert!(qop != Qop::Auth, "QOP auth has no security layer");
        Self {
            context,
            qop,
            max_piece: max_piece.max(1),
        }
    }

    pub fn qop(&self) -> Qop {
        self.qop
    }

    fn confidential(&self) -> bool {
        self.qop == Qop::AuthConf
    }

    /// Appends one message, given in parts, to `out` as wrapped frames.
    pub fn wrap_into(&mut self, parts: &[&[u8]], out: &mut BytesMut) -> Result<(), WireError> {
        let message: Vec<u8>;
        let whole = match parts {
            [one] => *one,
            _ => {
                message = parts.concat();
                &message
            }
        };
        for piece in whole.chunks(self.max_piece) {
            let token = self
                .context
                .wrap(piece, self.confidential())
                .map_err(|gss| {
                    // The context is ours and established: a failure is the library's.
                    WireError::Io(std::io::Error::other(format!(
                        "cannot wrap a message for SASL QOP {}: {gss}",
                        self.qop
                    )))
                })?;
            let len = u32::try_from(token.len()).map_err(|_| WireError::TooLarge {
                len: token.len() as u64,
                max: u32::MAX as usize,
            })?;
            out.reserve(4 + token.len());
            out.put_u32(len);
            out.extend_from_slice(&token);
        }
        Ok(())
    }

    /// The bytes of one frame's token, checked: a token that does not unwrap (altered,
    /// replayed, out of order, from another context), or one that is only signed where the
    /// client chose encryption, is refused.
    pub fn unwrap(&mut self, token: &[u8]) -> Result<Vec<u8>, WireError> {
        let unwrapped = self.context.unwrap(token).map_err(|gss| {
            WireError::Malformed(format!(
                "a data frame under SASL QOP {} does not unwrap: {gss}",
                self.qop
            ))
        })?;
        if self.confidential() && !unwrapped.confidential {
            return Err(WireError::Malformed(
                "a data frame under SASL QOP auth-conf is not encrypted: the client chose \
                 confidentiality and must encrypt every frame"
                    .into(),
            ));
        }
        Ok(unwrapped.message)
    }
}

/// Never prints the context.
impl fmt::Debug for SecurityLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecurityLayer")
            .field("qop", &self.qop)
            .field("max_piece", &self.max_piece)
            .finish_non_exhaustive()
    }
}
