//! HiveServer2's TCLIService protocol for Kumiho: generated types, async transports, dispatch, client.
//!
//! The `thrift` crate and the code generated for it are synchronous, so they only ever
//! touch memory: tokio reads whole frames (SASL, HTTP bodies) or accumulates bytes until a
//! message is complete (NOSASL), generated structs decode from a byte slice and encode into
//! a buffer, and every socket stays async.
//!
//! - [`cli`]: the structs and enums generated from `TCLIService.thrift` (checked in).
//! - [`service`]: [`service::CliService`], one async method per RPC; engines and the gateway
//!   implement it and write only their logic.
//! - [`handle`]: session and operation handles as values that can be hashed and printed.
//! - [`assigned_id`]: operation handles the gateway assigns, for engines that accept them.
//! - [`status`]: building `TStatus` values.
//! - [`session_conf`]: normalising `OpenSession` configuration keys (`set:hiveconf:k` -> `k`).
//! - [`binary`]: a TBinaryProtocol writer on `BytesMut` for hand-encoded hot paths (row sets).
//! - [`codec`]: finding, reading and building whole messages in memory, with length checks.
//! - [`error`]: [`error::WireError`], what went wrong on a connection and whose fault.
//! - [`connection`]: a binary connection that reads and writes whole messages, raw or framed.
//! - [`sasl`]: SASL PLAIN negotiation, server and client side; SASL GSSAPI, server side, with
//!   its security layers (QOP `auth-int`, `auth-conf`) wrapping every frame after it.
//! - [`auth`]: [`auth::Authenticator`], checking PLAIN and HTTP Basic credentials.
//! - [`kerberos`]: [`kerberos::KerberosAcceptor`], accepting Kerberos clients (SASL GSSAPI,
//!   HTTP SPNEGO) through a GSS-API library the server supplies, and mapping their principals
//!   to users (Hadoop's auth_to_local rules).
//! - [`dispatch`]: from a call message to its reply through a [`service::CliService`].
//! - [`server`]: the binary port (SASL and NOSASL) and the HTTP port.
//! - [`client`]: an async client over one binary connection.
//! - [`stream`]: a client's socket, TCP or local (a server on the same host).
#![forbid(unsafe_code)]

#[allow(clippy::all, clippy::pedantic, dead_code, unused)]
#[rustfmt::skip]
mod generated {
    pub mod tcli_service;
}

/// The generated TCLIService types.
pub use generated::tcli_service as cli;

pub mod assigned_id;
pub mod auth;
pub mod binary;
pub mod client;
pub mod codec;
pub mod connection;
pub mod dispatch;
pub mod error;
pub mod handle;
pub mod kerberos;
pub mod rowset;
pub mod sasl;
pub mod server;
pub mod service;
pub mod session_conf;
pub mod status;
pub mod stream;
