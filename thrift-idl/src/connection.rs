//! A binary TCLIService connection: reads whole messages from a socket and writes them back,
//! raw (NOSASL) or in SASL data frames, never buffering more than the size limit.
//!
//! Both the server and the client use it: one owns a read buffer, asks the codec whether a
//! whole message has arrived, and only then hands the bytes on. A server's SASL frames may go
//! through a security layer (GSSAPI's QOP `auth-int` or `auth-conf`): each frame read is
//! unwrapped once whole, each message written is wrapped into frames.

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::codec::MessageScanner;
use crate::error::WireError;
use crate::sasl::SecurityLayer;

/// How messages are laid on the socket once any negotiation is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Raw TBinaryProtocol: a message ends where its last field ends.
    Raw,
    /// After SASL: `[length u32 BE][bytes]` frames; a message may span frames.
    SaslFrames,
}

/// Bytes asked of the socket per read, before any length says more is coming.
const READ_CHUNK: usize = 16 * 1024;

/// One binary connection, generic over the socket so tests and TLS can wrap it.
#[derive(Debug)]
pub struct Connection<S> {
    stream: S,
    framing: Framing,
    /// Largest message, frame or negotiation payload accepted, and the most bytes buffered.
    max: usize,
    /// Bytes read from the socket and not yet consumed (frames not yet unwrapped).
    incoming: BytesMut,
    /// With SASL framing: the payloads of frames received so far, where messages are found.
    payload: BytesMut,
    /// Progress through the message at the start of the buffered message bytes.
    scanner: MessageScanner,
    /// With SASL framing: each frame holds exactly one message, so frames are taken whole
    /// instead of walking every value to find where a message ends (see
    /// [`Self::trust_frame_boundaries`]).
    frames_are_messages: bool,
    /// With SASL framing after GSSAPI's `auth-int` or `auth-conf`: every frame is a wrapped
    /// token.
    layer: Option<SecurityLayer>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Connection<S> {
    pub fn new(stream: S, framing: Framing, max: usize) -> Self {
        Self::with_buffered(stream, framing, max, BytesMut::new())
    }

    /// A connection whose first bytes were already read (to detect the transport).
    pub fn with_buffered(stream: S, framing: Framing, max: usize, read: BytesMut) -> Self {
        Self {
            stream,
            framing,
            max,
            incoming: read,
            payload: BytesMut::new(),
            scanner: MessageScanner::new(),
            frames_are_messages: false,
            layer: None,
        }
    }

    /// Takes each SASL data frame as one whole message. Only for a peer known to write a
    /// message per frame: Thrift's `TSaslTransport` (HiveServer2, the Spark Thrift Server)
    /// frames each flush, and servers flush once per message, as Kumiho's own do. A client
    /// uses it for replies, which can be megabytes of row data; a server never does, since
    /// what an untrusted client sends must be parsed to be bounded.
    pub fn trust_frame_boundaries(&mut self) {
        self.frames_are_messages = true;
    }

    /// Switches framing (after a SASL negotiation).
    pub fn set_framing(&mut self, framing: Framing) {
        self.framing = framing;
    }

    /// Wraps and unwraps every SASL data frame from now on (after a GSSAPI negotiation that
    /// chose QOP `auth-int` or `auth-conf`).
    pub fn set_security_layer(&mut self, layer: SecurityLayer) {
        debug_assert_eq!(self.framing, Framing::SaslFrames);
        self.layer = Some(layer);
    }

    pub fn max_message_size(&self) -> usize {
        self.max
    }

    /// The next whole message, or `None` if the peer closed the connection between messages.
    pub async fn read_message(&mut self) -> Result<Option<Bytes>, WireError> {
        if self.framing == Framing::SaslFrames && self.frames_are_messages {
            return self.read_frame_as_message().await;
        }
        loop {
            if let Some(message) = self.buffered_message()? {
                return Ok(Some(message));
            }
            if self.incoming.len() + self.payload.len() >= self.max {
                return Err(WireError::TooLarge {
                    len: (self.incoming.len() + self.payload.len()) as u64,
                    max: self.max,
                });
            }
            if !self.read_more().await? {
                return if self.incoming.is_empty() && self.payload.is_empty() {
                    Ok(None)
                } else {
                    Err(WireError::Closed)
                };
            }
        }
    }

    /// The next whole message if it has arrived already, without reading the socket: a call
    /// the peer pipelined behind the one being answered.
    pub fn buffered_message(&mut self) -> Result<Option<Bytes>, WireError> {
        if self.framing == Framing::SaslFrames && self.frames_are_messages {
            return Ok(self.take_frame()?.map(BytesMut::freeze));
        }
        if self.framing == Framing::SaslFrames {
            self.unwrap_frames()?;
        }
        let messages = match self.framing {
            Framing::Raw => &mut self.incoming,
            Framing::SaslFrames => &mut self.payload,
        };
        match self.scanner.scan(messages, self.max)? {
            Some(len) => {
                self.scanner = MessageScanner::new();
                Ok(Some(messages.split_to(len).freeze()))
            }
            None => Ok(None),
        }
    }

    /// Whether bytes of a next message have arrived (whole or not).
    pub fn has_buffered_input(&self) -> bool {
        !self.incoming.is_empty() || !self.payload.is_empty()
    }

    /// Writes one message (a header and a body written separately, so a forwarded body is
    /// never copied), in one frame under SASL (wrapped, in as many frames as the client's
    /// buffer needs, under a security layer), and flushes.
    pub async fn write_message(&mut self, header: &[u8], body: &[u8]) -> Result<(), WireError> {
        if let Some(layer) = &mut self.layer {
            let mut out = BytesMut::new();
            layer.wrap_into(&[header, body], &mut out)?;
            return self.write_raw(&out).await;
        }
        let total = header.len() + body.len();
        let frame_len;
        let prefix: &[u8] = match self.framing {
            Framing::Raw => &[],
            Framing::SaslFrames => {
                frame_len = u32::try_from(total)
                    .map_err(|_| WireError::TooLarge {
                        len: total as u64,
                        max: u32::MAX as usize,
                    })?
                    .to_be_bytes();
                &frame_len
            }
        };
        // One vectored write where the socket supports it; the body is not copied.
        let mut out = Buf::chain(Buf::chain(prefix, header), body);
        self.stream.write_all_buf(&mut out).await?;
        self.stream.flush().await?;
        Ok(())
    }

    /// Appends `message` to `out` as [`Self::write_message`] would write it (in its own frame
    /// under SASL), for writing several messages at once with [`Self::write_raw`]. For a
    /// client's calls: a client never has a security layer.
    pub fn frame_into(&self, message: &[u8], out: &mut BytesMut) {
        debug_assert!(self.layer.is_none(), "frame_into under a security layer");
        self.plain_frame_into(&[message], out);
    }

    /// [`Self::write_message`] into `out`, for a message in parts (a reply's header and body):
    /// in its own frame under SASL, wrapped under a security layer.
    pub fn frame_parts_into(
        &mut self,
        parts: &[&[u8]],
        out: &mut BytesMut,
    ) -> Result<(), WireError> {
        if let Some(layer) = &mut self.layer {
            return layer.wrap_into(parts, out);
        }
        self.plain_frame_into(parts, out);
        Ok(())
    }

    fn plain_frame_into(&self, parts: &[&[u8]], out: &mut BytesMut) {
        if self.framing == Framing::SaslFrames {
            // Messages are bounded far below 4 GiB by whoever encoded them.
            let len: usize = parts.iter().map(|part| part.len()).sum();
            out.extend_from_slice(&(len as u32).to_be_bytes());
        }
        for part in parts {
            out.extend_from_slice(part);
        }
    }

    /// Reads exactly `n` bytes (a negotiation frame's pieces), `None` on a clean close before
    /// the first of them.
    pub async fn read_exact_buffered(&mut self, n: usize) -> Result<Option<Bytes>, WireError> {
        if n > self.max {
            return Err(WireError::TooLarge {
                len: n as u64,
                max: self.max,
            });
        }
        while self.incoming.len() < n {
            if !self.read_more().await? {
                return if self.incoming.is_empty() {
                    Ok(None)
                } else {
                    Err(WireError::Closed)
                };
            }
        }
        Ok(Some(self.incoming.split_to(n).freeze()))
    }

    /// Writes raw bytes (negotiation frames) and flushes.
    pub async fn write_raw(&mut self, bytes: &[u8]) -> Result<(), WireError> {
        self.stream.write_all(bytes).await?;
        self.stream.flush().await?;
        Ok(())
    }

    /// The next whole frame's payload, read as one message.
    async fn read_frame_as_message(&mut self) -> Result<Option<Bytes>, WireError> {
        loop {
            if let Some(frame) = self.take_frame()? {
                return Ok(Some(frame.freeze()));
            }
            if !self.read_more().await? {
                return if self.incoming.is_empty() {
                    Ok(None)
                } else {
                    Err(WireError::Closed)
                };
            }
        }
    }

    /// Moves every complete data frame from `incoming` to `payload`.
    fn unwrap_frames(&mut self) -> Result<(), WireError> {
        while let Some(frame) = self.take_frame()? {
            if self.payload.is_empty() {
                self.payload = frame;
            } else {
                self.payload.unsplit(frame);
            }
        }
        Ok(())
    }

    /// The payload of the complete data frame at the start of `incoming`, if it is all there
    /// (its token unwrapped under a security layer); a frame whose length (with what is
    /// already unwrapped) exceeds the limit is refused before anything is allocated for it.
    fn take_frame(&mut self) -> Result<Option<BytesMut>, WireError> {
        if self.incoming.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_be_bytes([
            self.incoming[0],
            self.incoming[1],
            self.incoming[2],
            self.incoming[3],
        ]) as usize;
        if len > self.max || self.payload.len() + len > self.max {
            return Err(WireError::TooLarge {
                len: (self.payload.len() + len) as u64,
                max: self.max,
            });
        }
        if self.incoming.len() < 4 + len {
            return Ok(None);
        }
        self.incoming.advance(4);
        let frame = self.incoming.split_to(len);
        let Some(layer) = &mut self.layer else {
            return Ok(Some(frame));
        };
        let message = layer.unwrap(&frame)?;
        // A GSS-API token is never shorter than what it carries; checked all the same.
        if self.payload.len() + message.len() > self.max {
            return Err(WireError::TooLarge {
                len: (self.payload.len() + message.len()) as u64,
                max: self.max,
            });
        }
        Ok(Some(BytesMut::from(&message[..])))
    }

    /// Waits for the peer to send more bytes (kept for the next read) or to hang up; false
    /// when it hung up. A server watches its client with it while a call is answered. Cancel
    /// safe: dropped before it returns, nothing is lost.
    pub async fn await_more_input(&mut self) -> Result<bool, WireError> {
        self.read_more().await
    }

    /// Bytes read and not yet consumed.
    pub fn buffered_len(&self) -> usize {
        self.incoming.len() + self.payload.len()
    }

    /// Reads what the socket has; false at end of stream.
    async fn read_more(&mut self) -> Result<bool, WireError> {
        self.incoming.reserve(READ_CHUNK);
        Ok(self.stream.read_buf(&mut self.incoming).await? > 0)
    }

    /// The socket, for shutting it down.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.stream
    }

    /// The socket and the bytes read from it but not yet consumed, exactly as they arrived
    /// (still in SASL frames): for relaying a connection byte for byte after its negotiation.
    /// Call it before any `read_message`, which unwraps frames.
    pub fn into_parts(self) -> (S, BytesMut) {
        debug_assert!(self.payload.is_empty(), "into_parts after read_message");
        debug_assert!(self.layer.is_none(), "into_parts under a security layer");
        (self.stream, self.incoming)
    }
}

#[cfg(test)]
mod tests;
