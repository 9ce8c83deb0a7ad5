//! TBinaryProtocol messages in memory: find where a message ends, read its header, and
//! encode or decode the `_args` and `_result` structs around a request or response.
//!
//! Nothing here touches a socket. Transports accumulate bytes and ask [`message_len`] (or a
//! [`MessageScanner`], which resumes where it stopped) whether a whole message has arrived;
//! the scan checks every declared length against the bytes present and the size limit
//! without allocating, so the generated decoder, which allocates whatever a length says,
//! only ever runs on a buffer that has been checked.

use bytes::{BufMut, Bytes, BytesMut};
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TFieldIdentifier, TInputProtocol, TSerializable,
    TType,
};

use crate::binary::{message_type, ttype, BinaryWriter, VERSION_1};
use crate::error::WireError;

/// Largest message accepted unless configured otherwise (as HiveServer2's
/// `hive.server2.thrift.max.message.size`).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 100 * 1024 * 1024;

/// `TApplicationException` types (Thrift's `TApplicationException.TYPE`).
pub mod exception_kind {
    pub const UNKNOWN: i32 = 0;
    pub const UNKNOWN_METHOD: i32 = 1;
    pub const INVALID_MESSAGE_TYPE: i32 = 2;
    pub const WRONG_METHOD_NAME: i32 = 3;
    pub const BAD_SEQUENCE_ID: i32 = 4;
    pub const MISSING_RESULT: i32 = 5;
    pub const INTERNAL_ERROR: i32 = 6;
    pub const PROTOCOL_ERROR: i32 = 7;
}

/// Deepest nesting of structs, lists and maps accepted; the same bound the `thrift` crate
/// uses when skipping unknown fields, and far beyond anything TCLIService nests.
const MAX_DEPTH: usize = 64;

/// The header of a message: everything before its struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageHeader {
    /// The RPC name (`OpenSession`, ...).
    pub name: String,
    /// [`crate::binary::message_type`]: CALL, REPLY, EXCEPTION or ONEWAY.
    pub message_type: u8,
    /// Chosen by the caller; a reply must carry the call's.
    pub seqid: i32,
    /// Where the struct (`_args`, `_result` or exception) starts in the message.
    pub body_offset: usize,
}

/// Length of the first complete message in `buf`: `Ok(None)` if more bytes are needed.
///
/// Errors if the bytes are malformed or if any declared length (string, list, map, the
/// whole message) exceeds `max`. Walks the message by type codes without allocating.
/// Handles strict (`0x8001` version word) and old non-strict headers.
pub fn message_len(buf: &[u8], max: usize) -> Result<Option<usize>, WireError> {
    MessageScanner::new().scan(buf, max)
}

/// Reads the header of a message (the body need not be complete).
pub fn read_header(message: &[u8]) -> Result<MessageHeader, WireError> {
    let mut cursor = Cursor {
        buf: message,
        pos: 0,
    };
    let word = cursor.i32()?;
    let (message_type, name) = if word < 0 {
        let word = word as u32;
        if word & 0xffff_0000 != VERSION_1 {
            return Err(bad_version(word));
        }
        let name = cursor.string()?;
        ((word & 0xff) as u8, name)
    } else {
        let name = cursor.bytes(word as usize)?;
        (cursor.u8()?, name)
    };
    check_message_type(message_type)?;
    let name = std::str::from_utf8(name)
        .map_err(|_| WireError::Malformed("the method name is not UTF-8".into()))?
        .to_owned();
    let seqid = cursor.i32()?;
    Ok(MessageHeader {
        name,
        message_type,
        seqid,
        body_offset: cursor.pos,
    })
}

/// The strict header of a message, alone: a transport writes it, then a body it already has
/// (a forwarded `_result`), without copying the body.
pub fn encode_header(name: &str, message_type: u8, seqid: i32) -> Bytes {
    let mut buf = BytesMut::with_capacity(12 + name.len());
    BinaryWriter::new(&mut buf).message_begin(name, message_type, seqid);
    buf.freeze()
}

/// The header of a REPLY to `name` carrying the caller's `seqid`.
pub fn encode_reply_header(name: &str, seqid: i32) -> Bytes {
    encode_header(name, message_type::REPLY, seqid)
}

/// Encodes a call: header (CALL, name, seqid) and the `_args` struct `{1: req}`.
pub fn encode_call<T: TSerializable>(name: &str, seqid: i32, req: &T) -> Bytes {
    let mut buf = BytesMut::new();
    BinaryWriter::new(&mut buf).message_begin(name, message_type::CALL, seqid);
    write_wrapped(&mut buf, 1, req);
    buf.freeze()
}

/// Encodes the `_result` struct `{0: resp}`, without a header: what
/// [`crate::service::Reply::Encoded`] carries.
pub fn encode_result_body<T: TSerializable>(resp: &T) -> Bytes {
    let mut buf = BytesMut::new();
    write_wrapped(&mut buf, 0, resp);
    buf.freeze()
}

/// Decodes the request (field 1) from a call's `_args` struct, the bytes after the header.
pub fn decode_args<T: TSerializable>(body: &[u8]) -> Result<T, WireError> {
    decode_wrapped(
        body,
        1,
        "the call carries no request (field 1 of its arguments)",
    )
}

/// Decodes the response (field 0) from a reply's `_result` struct, the bytes after the header.
pub fn decode_result_body<T: TSerializable>(body: &[u8]) -> Result<T, WireError> {
    decode_wrapped(body, 0, "the reply carries no result (field 0)")
}

/// A whole `TApplicationException` reply: header (EXCEPTION) and the exception struct
/// `{1: message, 2: type}`.
pub fn encode_exception(name: &str, seqid: i32, kind: i32, message: &str) -> Bytes {
    let mut buf = BytesMut::new();
    let mut w = BinaryWriter::new(&mut buf);
    w.message_begin(name, message_type::EXCEPTION, seqid);
    w.raw(&encode_exception_body(kind, message));
    buf.freeze()
}

/// The `TApplicationException` struct alone, to follow a header written separately.
pub fn encode_exception_body(kind: i32, message: &str) -> Bytes {
    let mut buf = BytesMut::new();
    let mut w = BinaryWriter::new(&mut buf);
    w.field_begin(ttype::STRING, 1);
    w.string(message.as_bytes());
    w.field_begin(ttype::I32, 2);
    w.i32(kind);
    w.field_stop();
    buf.freeze()
}

/// Decodes a `TApplicationException` struct (the body of an EXCEPTION message) into
/// [`WireError::Application`].
pub fn decode_exception_body(body: &[u8]) -> WireError {
    if let Err(e) = check_struct(body) {
        return e;
    }
    let mut input = body;
    let mut protocol = TBinaryInputProtocol::new(&mut input, true);
    match thrift::Error::read_application_error_from_in_protocol(&mut protocol) {
        Ok(e) => WireError::Application {
            kind: e.kind as i32,
            message: e.message,
        },
        Err(e) => malformed_thrift(e),
    }
}

/// Encodes `value` as field `id` of an otherwise empty struct (`_args` or `_result`).
fn write_wrapped<T: TSerializable>(buf: &mut BytesMut, id: i16, value: &T) {
    let mut w = BinaryWriter::new(buf);
    w.field_begin(ttype::STRUCT, id);
    let mut out = TBinaryOutputProtocol::new((&mut *buf).writer(), true);
    value
        .write_to_out_protocol(&mut out)
        .expect("encoding into memory cannot fail");
    BinaryWriter::new(buf).field_stop();
}

/// Decodes field `id` (a struct) of the struct in `body`, skipping any other field.
fn decode_wrapped<T: TSerializable>(body: &[u8], id: i16, missing: &str) -> Result<T, WireError> {
    check_struct(body)?;
    let mut input = body;
    let mut protocol = TBinaryInputProtocol::new(&mut input, true);
    let mut found = None;
    let read = (|| -> thrift::Result<()> {
        protocol.read_struct_begin()?;
        loop {
            let field: TFieldIdentifier = protocol.read_field_begin()?;
            match (field.field_type, field.id) {
                (TType::Stop, _) => break,
                (TType::Struct, Some(field_id)) if field_id == id => {
                    found = Some(T::read_from_in_protocol(&mut protocol)?);
                }
                (other, _) => protocol.skip(other)?,
            }
            protocol.read_field_end()?;
        }
        protocol.read_struct_end()
    })();
    read.map_err(malformed_thrift)?;
    found.ok_or_else(|| WireError::Malformed(missing.to_owned()))
}

/// Checks that `body` holds one complete, well-formed struct, so that decoding it never
/// allocates on a length the bytes do not back.
fn check_struct(body: &[u8]) -> Result<(), WireError> {
    let mut scanner = MessageScanner::for_struct();
    match scanner.scan(body, body.len())? {
        Some(_) => Ok(()),
        None => Err(WireError::Malformed(
            "the message ends in the middle of a value".into(),
        )),
    }
}

fn malformed_thrift(e: thrift::Error) -> WireError {
    WireError::Malformed(e.to_string())
}

fn bad_version(word: u32) -> WireError {
    WireError::Malformed(format!(
        "bad protocol version word {word:#010x} (expected TBinaryProtocol, 0x8001....)"
    ))
}

fn check_message_type(t: u8) -> Result<(), WireError> {
    match t {
        message_type::CALL
        | message_type::REPLY
        | message_type::EXCEPTION
        | message_type::ONEWAY => Ok(()),
        other => Err(WireError::Malformed(format!(
            "unknown message type {other}"
        ))),
    }
}

/// Bounds-checked reads for the header.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.buf.len())
            .ok_or_else(|| WireError::Malformed("the message header is cut short".into()))?;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.bytes(1)?[0])
    }

    fn i32(&mut self) -> Result<i32, WireError> {
        let b = self.bytes(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn string(&mut self) -> Result<&'a [u8], WireError> {
        let len = self.i32()?;
        let len = usize::try_from(len)
            .map_err(|_| WireError::Malformed(format!("negative string length {len}")))?;
        self.bytes(len)
    }
}

/// A place in the nesting of the message being scanned.
#[derive(Clone, Copy, Debug)]
enum Frame {
    /// Inside a struct: next comes a field header or STOP.
    Struct,
    /// Inside a list or set: `remaining` elements of `element` type to go.
    Seq { element: u8, remaining: u32 },
    /// Inside a map: `remaining` keys and values to go, keys at even counts.
    Map { key: u8, value: u8, remaining: u64 },
}

/// Finds the end of a message by walking it, and can resume: when bytes run out it stops
/// before the incomplete item and picks up there on the next call, so a transport that
/// keeps one scanner per message walks each byte once however the message is split.
///
/// The buffer passed on each call must start at the same message and only grow.
#[derive(Debug)]
pub struct MessageScanner {
    /// Bytes of the message walked so far (every item before it is complete).
    pos: usize,
    /// Whether the header is behind us (only for a scanner of whole messages).
    header_done: bool,
    stack: [Frame; MAX_DEPTH],
    depth: usize,
}

impl Default for MessageScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl MessageScanner {
    /// A scanner for a message: header, then one struct.
    pub fn new() -> Self {
        Self {
            pos: 0,
            header_done: false,
            stack: [Frame::Struct; MAX_DEPTH],
            depth: 0,
        }
    }

    /// A scanner for a bare struct (a message body).
    fn for_struct() -> Self {
        Self {
            header_done: true,
            depth: 1,
            ..Self::new()
        }
    }

    /// Length of the message at the start of `buf`, `Ok(None)` if it is not all there yet.
    pub fn scan(&mut self, buf: &[u8], max: usize) -> Result<Option<usize>, WireError> {
        if !self.header_done {
            match self.header_len(buf, max)? {
                None => return Ok(None),
                Some(len) => {
                    self.pos = len;
                    self.header_done = true;
                    self.depth = 1;
                    self.stack[0] = Frame::Struct;
                }
            }
        }
        while self.depth > 0 {
            if !self.step(buf, max)? {
                return Ok(None);
            }
        }
        Ok(Some(self.pos))
    }

    /// Length of the header, all fields present.
    fn header_len(&self, buf: &[u8], max: usize) -> Result<Option<usize>, WireError> {
        let Some(word) = read_i32(buf, 0) else {
            return Ok(None);
        };
        let (name_at, name_len, after_name) = if word < 0 {
            let word = word as u32;
            if word & 0xffff_0000 != VERSION_1 {
                return Err(bad_version(word));
            }
            check_message_type((word & 0xff) as u8)?;
            let Some(len) = read_i32(buf, 4) else {
                return Ok(None);
            };
            // Strict: name, then seqid.
            (8, len, 4)
        } else {
            // Old non-strict: name, then type byte, then seqid.
            (4, word, 5)
        };
        let name_len = check_len(name_len, "method name")?;
        let end = name_at as u64 + name_len + after_name;
        if !need(buf, end, max)? {
            return Ok(None);
        }
        if word >= 0 {
            check_message_type(buf[name_at + name_len as usize])?;
        }
        Ok(Some(end as usize))
    }

    /// Consumes one item (a field header with its value's start, a list element, ...).
    /// Returns false, consuming nothing, if the item is not complete in `buf`.
    fn step(&mut self, buf: &[u8], max: usize) -> Result<bool, WireError> {
        let pos = self.pos;
        let (value_type, value_at) = match self.stack[self.depth - 1] {
            Frame::Struct => {
                if !need(buf, pos as u64 + 1, max)? {
                    return Ok(false);
                }
                if buf[pos] == ttype::STOP {
                    self.pos = pos + 1;
                    self.depth -= 1;
                    return Ok(true);
                }
                // Field type and a 16-bit id.
                if !need(buf, pos as u64 + 3, max)? {
                    return Ok(false);
                }
                (buf[pos], pos + 3)
            }
            Frame::Seq { remaining: 0, .. } | Frame::Map { remaining: 0, .. } => {
                self.depth -= 1;
                return Ok(true);
            }
            Frame::Seq { element, .. } => (element, pos),
            Frame::Map {
                key,
                value,
                remaining,
            } => (if remaining % 2 == 0 { key } else { value }, pos),
        };
        let Some((end, nested)) = self.value(buf, max, value_type, value_at)? else {
            return Ok(false);
        };
        // The item is complete: commit it.
        self.pos = end;
        match &mut self.stack[self.depth - 1] {
            Frame::Struct => {}
            Frame::Seq { remaining, .. } => *remaining -= 1,
            Frame::Map { remaining, .. } => *remaining -= 1,
        }
        if let Some(frame) = nested {
            if self.depth == MAX_DEPTH {
                return Err(WireError::Malformed(format!(
                    "values nested deeper than {MAX_DEPTH} levels"
                )));
            }
            self.stack[self.depth] = frame;
            self.depth += 1;
        }
        Ok(true)
    }

    /// A value of type `t` at `at`: where it ends (or where its contents begin, for a
    /// container, with the frame to push). `None` if it is not all in `buf`.
    fn value(
        &self,
        buf: &[u8],
        max: usize,
        t: u8,
        at: usize,
    ) -> Result<Option<(usize, Option<Frame>)>, WireError> {
        let at64 = at as u64;
        let fixed = |size: u64| -> Result<Option<(usize, Option<Frame>)>, WireError> {
            Ok(need(buf, at64 + size, max)?.then_some(((at64 + size) as usize, None)))
        };
        match t {
            ttype::BOOL | ttype::BYTE => fixed(1),
            ttype::I16 => fixed(2),
            ttype::I32 => fixed(4),
            ttype::I64 | ttype::DOUBLE => fixed(8),
            ttype::STRING => {
                if !need(buf, at64 + 4, max)? {
                    return Ok(None);
                }
                let len = read_i32(buf, at).expect("checked above");
                let len = check_len(len, "string")?;
                fixed(4 + len)
            }
            ttype::STRUCT => Ok(Some((at, Some(Frame::Struct)))),
            ttype::LIST | ttype::SET => {
                if !need(buf, at64 + 5, max)? {
                    return Ok(None);
                }
                let element = check_type(buf[at])?;
                let count = read_i32(buf, at + 1).expect("checked above");
                let count = check_len(count, "list")?;
                need(buf, at64 + 5 + count * min_size(element), max)?;
                let frame = Frame::Seq {
                    element,
                    remaining: count as u32,
                };
                Ok(Some((at + 5, Some(frame))))
            }
            ttype::MAP => {
                if !need(buf, at64 + 6, max)? {
                    return Ok(None);
                }
                let key = check_type(buf[at])?;
                let value = check_type(buf[at + 1])?;
                let count = read_i32(buf, at + 2).expect("checked above");
                let count = check_len(count, "map")?;
                need(
                    buf,
                    at64 + 6 + count * (min_size(key) + min_size(value)),
                    max,
                )?;
                let frame = Frame::Map {
                    key,
                    value,
                    remaining: count * 2,
                };
                Ok(Some((at + 6, Some(frame))))
            }
            other => Err(unknown_type(other)),
        }
    }
}

/// Whether `buf` reaches `end`; an error if a message that long would exceed `max`.
fn need(buf: &[u8], end: u64, max: usize) -> Result<bool, WireError> {
    if end > max as u64 {
        return Err(WireError::TooLarge { len: end, max });
    }
    Ok(end <= buf.len() as u64)
}

fn read_i32(buf: &[u8], at: usize) -> Option<i32> {
    let b = buf.get(at..at.checked_add(4)?)?;
    Some(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn check_len(len: i32, what: &str) -> Result<u64, WireError> {
    u64::try_from(len).map_err(|_| WireError::Malformed(format!("negative {what} length {len}")))
}

fn check_type(t: u8) -> Result<u8, WireError> {
    match t {
        ttype::BOOL
        | ttype::BYTE
        | ttype::I16
        | ttype::I32
        | ttype::I64
        | ttype::DOUBLE
        | ttype::STRING
        | ttype::STRUCT
        | ttype::LIST
        | ttype::SET
        | ttype::MAP => Ok(t),
        other => Err(unknown_type(other)),
    }
}

fn unknown_type(t: u8) -> WireError {
    WireError::Malformed(format!("unknown Thrift type code {t}"))
}

/// The fewest bytes a value of type `t` takes: a count of elements claims at least this
/// much per element, which bounds it before any element arrives.
fn min_size(t: u8) -> u64 {
    match t {
        ttype::BOOL | ttype::BYTE | ttype::STRUCT => 1,
        ttype::I16 => 2,
        ttype::I32 | ttype::STRING => 4,
        ttype::I64 | ttype::DOUBLE => 8,
        ttype::LIST | ttype::SET => 5,
        ttype::MAP => 6,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use rand::{RngCore, SeedableRng};

    use super::*;
    use crate::cli::{TExecuteStatementReq, TGetInfoResp, TGetInfoValue, TSessionHandle};
    use crate::handle::HandleId;
    use crate::status;

    const MAX: usize = DEFAULT_MAX_MESSAGE_SIZE;

    fn request() -> TExecuteStatementReq {
        TExecuteStatementReq {
            session_handle: TSessionHandle {
                session_id: HandleId::new().to_thrift(),
            },
            statement: "SELECT 1".into(),
            conf_overlay: Some([("k".to_owned(), "v".to_owned())].into()),
            run_async: Some(true),
            query_timeout: Some(30),
        }
    }

    /// A message: strict header, then `fields` as the body struct's contents, then STOP.
    fn message(fields: impl FnOnce(&mut BinaryWriter)) -> Vec<u8> {
        let mut buf = BytesMut::new();
        let mut w = BinaryWriter::new(&mut buf);
        w.message_begin("ExecuteStatement", message_type::CALL, 1);
        fields(&mut w);
        w.field_stop();
        buf.to_vec()
    }

    #[test]
    fn a_call_round_trips() {
        let req = request();
        let bytes = encode_call("ExecuteStatement", 42, &req);
        assert_eq!(message_len(&bytes, MAX).unwrap(), Some(bytes.len()));
        let header = read_header(&bytes).unwrap();
        assert_eq!(header.name, "ExecuteStatement");
        assert_eq!(header.message_type, message_type::CALL);
        assert_eq!(header.seqid, 42);
        let decoded: TExecuteStatementReq = decode_args(&bytes[header.body_offset..]).unwrap();
        assert_eq!(decoded, req);
    }

    #[test]
    fn a_result_body_round_trips() {
        let resp = TGetInfoResp {
            status: status::ok(),
            info_value: TGetInfoValue::StringValue("Kumiho".into()),
        };
        let body = encode_result_body(&resp);
        let decoded: TGetInfoResp = decode_result_body(&body).unwrap();
        assert_eq!(decoded, resp);
    }

    #[test]
    fn every_prefix_is_incomplete_and_trailing_bytes_are_not_counted() {
        let bytes = encode_call("ExecuteStatement", 1, &request());
        for cut in 0..bytes.len() {
            assert_eq!(
                message_len(&bytes[..cut], MAX).unwrap(),
                None,
                "cut at {cut}"
            );
        }
        let mut two = bytes.to_vec();
        two.extend_from_slice(&bytes);
        assert_eq!(message_len(&two, MAX).unwrap(), Some(bytes.len()));
    }

    #[test]
    fn a_scanner_resumes_byte_by_byte() {
        let bytes = encode_call("ExecuteStatement", 1, &request());
        let mut scanner = MessageScanner::new();
        for end in 0..bytes.len() {
            assert_eq!(scanner.scan(&bytes[..end], MAX).unwrap(), None);
        }
        assert_eq!(scanner.scan(&bytes, MAX).unwrap(), Some(bytes.len()));
    }

    #[test]
    fn reads_old_non_strict_headers() {
        let strict = encode_call("GetInfo", 9, &request());
        let body = &strict[read_header(&strict).unwrap().body_offset..];
        let mut old = Vec::new();
        old.extend_from_slice(&7i32.to_be_bytes());
        old.extend_from_slice(b"GetInfo");
        old.push(message_type::CALL);
        old.extend_from_slice(&9i32.to_be_bytes());
        old.extend_from_slice(body);
        assert_eq!(message_len(&old, MAX).unwrap(), Some(old.len()));
        let header = read_header(&old).unwrap();
        assert_eq!((header.name.as_str(), header.seqid), ("GetInfo", 9));
        assert_eq!(header.message_type, message_type::CALL);
        let _: TExecuteStatementReq = decode_args(&old[header.body_offset..]).unwrap();
    }

    #[test]
    fn refuses_other_protocol_versions() {
        // TCompactProtocol starts with 0x82; a strict header of version 2 with 0x8002.
        for start in [[0x82u8, 0x21, 0, 0], [0x80, 0x02, 0, 1]] {
            let err = message_len(&start, MAX).unwrap_err();
            assert!(matches!(err, WireError::Malformed(_)), "{err}");
        }
    }

    #[test]
    fn a_string_claiming_2_gib_is_refused_before_it_arrives() {
        let bytes = message(|w| {
            w.field_begin(ttype::STRING, 1);
            w.i32(i32::MAX);
        });
        let err = message_len(&bytes, MAX).unwrap_err();
        assert!(
            matches!(err, WireError::TooLarge { len, max } if len > i32::MAX as u64 && max == MAX),
            "{err}"
        );
        assert!(decode_args::<TExecuteStatementReq>(&bytes[28..]).is_err());
    }

    #[test]
    fn a_method_name_claiming_2_gib_is_refused() {
        let mut bytes = vec![0x80, 0x01, 0x00, 0x01];
        bytes.extend_from_slice(&i32::MAX.to_be_bytes());
        assert!(matches!(
            message_len(&bytes, MAX),
            Err(WireError::TooLarge { .. })
        ));
    }

    #[test]
    fn negative_lengths_are_malformed() {
        let bytes = message(|w| {
            w.field_begin(ttype::STRING, 1);
            w.i32(-1);
        });
        assert!(matches!(
            message_len(&bytes, MAX),
            Err(WireError::Malformed(_))
        ));
    }

    #[test]
    fn a_list_count_beyond_the_limit_is_refused_before_its_elements_arrive() {
        let bytes = message(|w| {
            w.field_begin(ttype::LIST, 1);
            w.list_begin(ttype::I64, 20_000_000);
        });
        assert!(matches!(
            message_len(&bytes, MAX),
            Err(WireError::TooLarge { .. })
        ));
        // Within the limit, it is merely incomplete.
        assert_eq!(message_len(&bytes, usize::MAX).unwrap(), None);
    }

    #[test]
    fn walks_nested_lists_maps_and_structs() {
        let bytes = message(|w| {
            w.field_begin(ttype::LIST, 1);
            w.list_begin(ttype::LIST, 2);
            w.list_begin(ttype::I32, 2);
            w.i32(1);
            w.i32(2);
            w.list_begin(ttype::STRING, 1);
            w.string(b"three");
            w.field_begin(ttype::MAP, 2);
            w.map_begin(ttype::STRING, ttype::STRUCT, 1);
            w.string(b"k");
            w.field_begin(ttype::BOOL, 1);
            w.bool(true);
            w.field_stop();
            w.field_begin(ttype::SET, 3);
            w.list_begin(ttype::DOUBLE, 0);
        });
        assert_eq!(message_len(&bytes, MAX).unwrap(), Some(bytes.len()));
        assert_eq!(message_len(&bytes[..bytes.len() - 1], MAX).unwrap(), None);
    }

    #[test]
    fn nesting_deeper_than_the_limit_is_malformed() {
        let bytes = message(|w| {
            for _ in 0..MAX_DEPTH + 1 {
                w.field_begin(ttype::STRUCT, 1);
            }
        });
        assert!(matches!(
            message_len(&bytes, MAX),
            Err(WireError::Malformed(_))
        ));
    }

    #[test]
    fn unknown_type_codes_are_malformed() {
        let bytes = message(|w| w.field_begin(9, 1));
        assert!(matches!(
            message_len(&bytes, MAX),
            Err(WireError::Malformed(_))
        ));
    }

    #[test]
    fn a_message_over_the_limit_is_refused() {
        let bytes = encode_call("ExecuteStatement", 1, &request());
        assert!(matches!(
            message_len(&bytes, bytes.len() - 1),
            Err(WireError::TooLarge { .. })
        ));
        assert!(message_len(&bytes, bytes.len()).unwrap().is_some());
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let valid = encode_call("ExecuteStatement", 1, &request());
        for round in 0..2000 {
            let mut bytes = if round % 2 == 0 {
                let mut b = vec![0u8; (rng.next_u32() % 200) as usize];
                rng.fill_bytes(&mut b);
                b
            } else {
                // A valid message with a few bytes flipped reaches deeper into the walk.
                let mut b = valid.to_vec();
                for _ in 0..3 {
                    let i = rng.next_u32() as usize % b.len();
                    b[i] = rng.next_u32() as u8;
                }
                b
            };
            if round % 3 == 0 {
                bytes.insert(0, 0x80);
            }
            if let Ok(Some(len)) = message_len(&bytes, 1 << 20) {
                if let Ok(header) = read_header(&bytes[..len]) {
                    let _ = decode_args::<TExecuteStatementReq>(&bytes[header.body_offset..len]);
                }
            }
            let _ = decode_result_body::<TGetInfoResp>(&bytes);
        }
    }

    #[test]
    fn exceptions_carry_kind_and_message() {
        let bytes = encode_exception("GetLog", 5, exception_kind::UNKNOWN_METHOD, "no GetLog");
        assert_eq!(message_len(&bytes, MAX).unwrap(), Some(bytes.len()));
        let header = read_header(&bytes).unwrap();
        assert_eq!(header.message_type, message_type::EXCEPTION);
        assert_eq!(header.seqid, 5);
        match decode_exception_body(&bytes[header.body_offset..]) {
            WireError::Application { kind, message } => {
                assert_eq!(kind, exception_kind::UNKNOWN_METHOD);
                assert_eq!(message, "no GetLog");
            }
            other => panic!("expected an application error, got {other}"),
        }
    }

    #[test]
    fn a_reply_header_and_a_forwarded_body_make_a_reply() {
        let body = encode_result_body(&TGetInfoResp {
            status: status::ok(),
            info_value: TGetInfoValue::IntegerBitmask(3),
        });
        let mut reply = encode_reply_header("GetInfo", 77).to_vec();
        reply.extend_from_slice(&body);
        assert_eq!(message_len(&reply, MAX).unwrap(), Some(reply.len()));
        let header = read_header(&reply).unwrap();
        assert_eq!(
            (header.message_type, header.seqid),
            (message_type::REPLY, 77)
        );
    }
}
