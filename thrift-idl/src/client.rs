//! An async TCLIService client over one binary connection: how the gateway talks to
//! engines, and how the benchmark and tests talk to servers.
//!
//! Calls may be pipelined: [`Client::queue`] several, and they are written in one go by the
//! next [`Client::flush`] or [`Client::reply`]; a HiveServer2 server answers them in order.
//! Their replies may be read in any order and at any later time: those read on the way to
//! another are kept until asked for (or [`Client::forget`]ten).

use std::collections::VecDeque;
use std::fmt;

use bytes::{Bytes, BytesMut};
use thrift::protocol::TSerializable;
use tokio::net::TcpStream;

use crate::binary::message_type;
use crate::codec::{self, DEFAULT_MAX_MESSAGE_SIZE};
use crate::connection::{Connection, Framing};
use crate::error::WireError;
use crate::sasl;
use crate::stream::Stream;

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
    conn: Connection<Stream>,
    /// The seqid of the last call; replies must echo it.
    seqid: i32,
    /// Calls queued and not yet written, each in its own frame.
    unsent: BytesMut,
    /// Calls whose replies have not been read, in the order they were queued.
    awaiting: VecDeque<Awaited>,
    /// Replies read on the way to another, kept until their caller asks (by seqid).
    kept: Vec<(i32, Result<Bytes, WireError>)>,
    /// Set while calls are written or a reply is read: still set after, the caller gave up
    /// the future half-way (its client hung up) and the connection is out of step.
    in_exchange: bool,
}

/// A call whose reply is still to be read.
#[derive(Debug)]
struct Awaited {
    method: &'static str,
    seqid: i32,
    /// Whether someone will ask for the reply (else it is dropped when read).
    wanted: bool,
}

/// A call queued with [`Client::queue`]; [`Client::reply`] reads its reply.
#[derive(Debug)]
#[must_use = "a queued call's reply is read with Client::reply"]
pub struct Queued {
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
        Self::over(Stream::Tcp(stream), auth, max_message_size).await
    }

    /// Authenticates on a connected socket, accepting replies up to `max_message_size` bytes.
    pub async fn over(
        stream: Stream,
        auth: ClientAuth,
        max_message_size: usize,
    ) -> Result<Client, WireError> {
        let mut conn = Connection::new(stream, Framing::Raw, max_message_size);
        if let ClientAuth::Plain { user, password } = &auth {
            sasl::start_plain(&mut conn, user, password).await?;
            // Servers write each reply in one frame: take it whole, unscanned (the hot
            // path of a large fetch through the gateway).
            conn.trust_frame_boundaries();
        }
        Ok(Client {
            conn,
            seqid: 0,
            unsent: BytesMut::new(),
            awaiting: VecDeque::new(),
            kept: Vec::new(),
            in_exchange: false,
        })
    }

    /// Calls `method` and decodes its response.
    pub async fn call<Req: TSerializable, Resp: TSerializable>(
        &mut self,
        method: &'static str,
        req: &Req,
    ) -> Result<Resp, WireError> {
        let body = self.call_encoded(method, req).await?;
        codec::decode_result_body(&body)
    }

    /// Calls `method` and returns the reply's `_result` body undecoded (the forwarding path:
    /// hand it to [`crate::service::Reply::Encoded`]).
    pub async fn call_encoded<Req: TSerializable>(
        &mut self,
        method: &'static str,
        req: &Req,
    ) -> Result<Bytes, WireError> {
        let queued = self.queue(method, req);
        self.reply(queued).await
    }

    /// Queues a call, written with the next [`Self::flush`] or [`Self::reply`] together with
    /// any other queued call (one write for all of them).
    pub fn queue<Req: TSerializable>(&mut self, method: &'static str, req: &Req) -> Queued {
        Queued {
            seqid: self.queue_call(method, req, true),
        }
    }

    /// Queues a call whose reply nobody waits for: it is read and dropped on the way to a
    /// later call's reply, failures included (a refusal of it concerns no one waiting).
    pub fn queue_unanswered<Req: TSerializable>(&mut self, method: &'static str, req: &Req) {
        self.queue_call(method, req, false);
    }

    fn queue_call<Req: TSerializable>(
        &mut self,
        method: &'static str,
        req: &Req,
        wanted: bool,
    ) -> i32 {
        self.seqid = self.seqid.wrapping_add(1);
        let call = codec::encode_call(method, self.seqid, req);
        self.conn.frame_into(&call, &mut self.unsent);
        self.awaiting.push_back(Awaited {
            method,
            seqid: self.seqid,
            wanted,
        });
        self.seqid
    }

    /// Gives up the reply to `queued`: dropped whenever it is read.
    pub fn forget(&mut self, queued: Queued) {
        self.kept.retain(|(seqid, _)| *seqid != queued.seqid);
        if let Some(awaited) = self.awaiting.iter_mut().find(|a| a.seqid == queued.seqid) {
            awaited.wanted = false;
        }
    }

    /// Whether a write or a read on this connection was cut off half-way (the future was
    /// dropped): its calls and replies are out of step, and every later call fails. Close it;
    /// a server that answers in order would answer nothing else before the call cut off.
    pub fn is_cut_off(&self) -> bool {
        self.in_exchange
    }

    /// Writes the queued calls.
    pub async fn flush(&mut self) -> Result<(), WireError> {
        self.check_in_step()?;
        self.in_exchange = true;
        let result = self.write_unsent().await;
        self.in_exchange = false;
        result
    }

    /// The reply to `queued` (writing the queued calls first). Replies come in the order the
    /// calls were queued: those of earlier calls still unread are read first, and kept for
    /// their callers (or dropped, for calls nobody waits for).
    pub async fn reply(&mut self, queued: Queued) -> Result<Bytes, WireError> {
        self.check_in_step()?;
        self.in_exchange = true;
        let result = self.read_reply_to(queued).await;
        self.in_exchange = false;
        result
    }

    /// Refuses a call on a connection out of step.
    fn check_in_step(&self) -> Result<(), WireError> {
        match self.in_exchange {
            true => Err(WireError::UnexpectedReply(
                "an earlier call on this connection was cut off half-way; open a new connection"
                    .to_owned(),
            )),
            false => Ok(()),
        }
    }

    async fn write_unsent(&mut self) -> Result<(), WireError> {
        if self.unsent.is_empty() {
            return Ok(());
        }
        let unsent = std::mem::take(&mut self.unsent);
        self.conn.write_raw(&unsent).await
    }

    async fn read_reply_to(&mut self, queued: Queued) -> Result<Bytes, WireError> {
        if let Some(at) = self
            .kept
            .iter()
            .position(|(seqid, _)| *seqid == queued.seqid)
        {
            return self.kept.swap_remove(at).1;
        }
        if !self.awaiting.iter().any(|a| a.seqid == queued.seqid) {
            // Forgotten and already read: there is nothing to wait for.
            return Err(WireError::UnexpectedReply(format!(
                "the reply to the call with seqid {} was given up",
                queued.seqid
            )));
        }
        self.write_unsent().await?;
        loop {
            let awaited = self.awaiting.pop_front().ok_or_else(|| {
                WireError::UnexpectedReply(format!(
                    "no call with seqid {} awaits a reply",
                    queued.seqid
                ))
            })?;
            let reply = self.read_reply(&awaited).await;
            if awaited.seqid == queued.seqid {
                return reply;
            }
            if awaited.wanted {
                match reply {
                    reply @ (Ok(_) | Err(WireError::Application { .. })) => {
                        self.kept.push((awaited.seqid, reply))
                    }
                    // The connection is broken or out of step: so are both calls.
                    Err(e) => {
                        self.kept.push((awaited.seqid, Err(WireError::Closed)));
                        return Err(e);
                    }
                }
                continue;
            }
            match reply {
                // Refused by the server, which goes on: nobody waits for that answer.
                Ok(_) | Err(WireError::Application { .. }) => continue,
                // The connection is broken or out of step: so is the call waited for.
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads the next reply, which must answer `awaited`.
    async fn read_reply(&mut self, awaited: &Awaited) -> Result<Bytes, WireError> {
        let reply = self.conn.read_message().await?.ok_or(WireError::Closed)?;
        let header = codec::read_header(&reply)?;
        let body = reply.slice(header.body_offset..);
        let (method, seqid) = (&awaited.method, awaited.seqid);
        // An exception comes first, whatever it is addressed to: a server that could not
        // read the call cannot know its name or seqid (Thrift's Java client does the same).
        if header.message_type == message_type::EXCEPTION {
            return Err(codec::decode_exception_body(&body));
        }
        if header.name != *method || header.seqid != seqid {
            return Err(WireError::UnexpectedReply(format!(
                "called {method} with seqid {seqid}, got a reply to {} with seqid {}",
                header.name, header.seqid
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
