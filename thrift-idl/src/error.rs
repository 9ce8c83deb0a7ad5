//! The one error type of the wire layer: what went wrong on a connection, and whose fault it is.

use std::io;

/// A failure to exchange TCLIService messages with a peer.
///
/// Variants name the culprit: `TooLarge`, `Malformed` and `Sasl` are the peer's doing (or a
/// mismatch between its transport settings and ours); `Io` and `Closed` are the network's;
/// `Application` is the peer's server refusing a call with a Thrift exception.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The socket failed.
    #[error("connection failed: {0}")]
    Io(#[from] io::Error),

    /// A length read from the wire (a frame, a string, a list, or the whole message) is over
    /// the limit; nothing was allocated for it.
    #[error(
        "the peer sent a length of {len} bytes, over the limit of {max}: the peer is \
         misbehaving or speaks another protocol (raise max_message_size if the peer is right)"
    )]
    TooLarge { len: u64, max: usize },

    /// Bytes that are not a TBinaryProtocol message of TCLIService.
    #[error(
        "the peer sent a malformed message: {0} (check that both sides agree on the \
         transport: SASL, NOSASL or HTTP, and on TBinaryProtocol)"
    )]
    Malformed(String),

    /// SASL negotiation failed; the message is the peer's, or says what it did wrong.
    #[error("SASL authentication failed: {0}")]
    Sasl(String),

    /// The peer answered a call with a Thrift `TApplicationException`.
    #[error("the server refused the call with a Thrift exception (type {kind}): {message}")]
    Application { kind: i32, message: String },

    /// The peer's reply does not belong to the call just made.
    #[error("the server's reply does not match the call: {0}")]
    UnexpectedReply(String),

    /// The peer closed the connection where a message or frame was expected.
    #[error("the peer closed the connection")]
    Closed,
}

impl WireError {
    /// Whether the peer simply hung up (worth a debug line, not an error report).
    pub fn is_hang_up(&self) -> bool {
        match self {
            WireError::Closed => true,
            WireError::Io(e) => matches!(
                e.kind(),
                io::ErrorKind::ConnectionReset
                    | io::ErrorKind::ConnectionAborted
                    | io::ErrorKind::BrokenPipe
                    | io::ErrorKind::UnexpectedEof
            ),
            _ => false,
        }
    }
}
