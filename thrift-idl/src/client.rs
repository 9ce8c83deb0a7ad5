//! An async TCLIService client over one binary connection: how the gateway talks to
//! engines, and how the benchmark and tests talk to servers.

use std::fmt;

use bytes::Bytes;
use thrift::protocol::TSerializable;
use tokio::net::TcpStream;

use crate::binary::message_type;
use crate::codec::{self, DEFAULT_MAX_MESSAGE_SIZE};
use crate::connection::{Connection, Framing};
use crate::error::WireError;
use crate::sasl;

/// How the client authenticates on the binary port.
#[derive(Clone)]
pub enum ClientAuth {
    /// SASL PLAIN, then framed messages.
    Plain { user: String, password: String },
    /// Raw TBinaryProtocol, no authentication.
    NoSasl,
}

/// Never prints the password.
impl fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientAuth::Plain { user, .. } => f
                .debug_struct("Plain")
                .field("user", user)
                .field("password", &"<redacted>")
                .finish(),
            ClientAuth::NoSasl => f.write_str("NoSasl"),
        }
    }
}

/// One connection to a TCLIService server; calls are sequential.
#[derive(Debug)]
pub struct Client {
    conn: Connection<TcpStream>,
    /// The seqid of the last call; replies must echo it.
    seqid: i32,
}

impl Client {
    /// Connects and authenticates, accepting replies up to [`DEFAULT_MAX_MESSAGE_SIZE`].
    pub async fn connect(addr: &str, auth: ClientAuth) -> Result<Client, WireError> {
        Self::connect_with_limit(addr, auth, DEFAULT_MAX_MESSAGE_SIZE).await
    }

    /// Connects and authenticates, accepting replies up to `max_message_size` bytes.
    pub async fn connect_with_limit(
        addr: &str,
        auth: ClientAuth,
        max_message_size: usize,
    ) -> Result<Client, WireError> {
        let stream = TcpStream::connect(addr).await?;
        // Calls are written whole; do not let Nagle hold their tails back.
        stream.set_nodelay(true)?;
        let mut conn = Connection::new(stream, Framing::Raw, max_message_size);
        if let ClientAuth::Plain { user, password } = &auth {
            sasl::start_plain(&mut conn, user, password).await?;
            // Servers write each reply in one frame: take it whole, unscanned (the hot
            // path of a large fetch through the gateway).
            conn.trust_frame_boundaries();
        }
        Ok(Client { conn, seqid: 0 })
    }

    /// Calls `method` and decodes its response.
    pub async fn call<Req: TSerializable, Resp: TSerializable>(
        &mut self,
        method: &str,
        req: &Req,
    ) -> Result<Resp, WireError> {
        let body = self.call_encoded(method, req).await?;
        codec::decode_result_body(&body)
    }

    /// Calls `method` and returns the reply's `_result` body undecoded (the forwarding path:
    /// hand it to [`crate::service::Reply::Encoded`]).
    pub async fn call_encoded<Req: TSerializable>(
        &mut self,
        method: &str,
        req: &Req,
    ) -> Result<Bytes, WireError> {
        self.seqid = self.seqid.wrapping_add(1);
        let call = codec::encode_call(method, self.seqid, req);
        self.conn.write_message(&call, &[]).await?;
        let reply = self.conn.read_message().await?.ok_or(WireError::Closed)?;
        let header = codec::read_header(&reply)?;
        let body = reply.slice(header.body_offset..);
        // An exception comes first, whatever it is addressed to: a server that could not
        // read the call cannot know its name or seqid (Thrift's Java client does the same).
        if header.message_type == message_type::EXCEPTION {
            return Err(codec::decode_exception_body(&body));
        }
        if header.name != method || header.seqid != self.seqid {
            return Err(WireError::UnexpectedReply(format!(
                "called {method} with seqid {}, got a reply to {} with seqid {}",
                self.seqid, header.name, header.seqid
            )));
        }
        match header.message_type {
            message_type::REPLY => Ok(body),
            other => Err(WireError::UnexpectedReply(format!(
                "a reply to {method} has message type {other}"
            ))),
        }
    }
}
