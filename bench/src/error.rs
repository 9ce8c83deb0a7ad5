//! The benchmark's one error type: which step failed, and whether the server or the setup is to blame.

use kumiho_thrift::error::WireError;

/// A step of the benchmark that did not work.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// An RPC failed on the wire (connection refused or dropped, malformed reply).
    #[error("{rpc} to {target}: {source}")]
    Wire {
        rpc: &'static str,
        target: String,
        source: WireError,
    },
    /// The server answered an RPC with an error status.
    #[error("{rpc} to {target} was refused: {message}")]
    Refused {
        rpc: &'static str,
        target: String,
        message: String,
    },
    /// A process the benchmark starts, or a file it writes, could not be set up.
    #[error("setup: {0}")]
    Setup(String),
}

pub type Result<T, E = BenchError> = std::result::Result<T, E>;
