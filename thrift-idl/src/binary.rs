//! A TBinaryProtocol writer on `BytesMut`, for hot paths that encode without building
//! generated structs first (a row set straight from Arrow arrays, a reply's header).
//!
//! Field and type codes follow the Thrift binary protocol: big-endian integers, strings and
//! binaries as a 4-byte length then the bytes, lists as an element type byte and a count.

use bytes::{BufMut, BytesMut};

/// Thrift type codes on the wire.
pub mod ttype {
    pub const STOP: u8 = 0;
    pub const BOOL: u8 = 2;
    pub const BYTE: u8 = 3;
    pub const DOUBLE: u8 = 4;
    pub const I16: u8 = 6;
    pub const I32: u8 = 8;
    pub const I64: u8 = 10;
    pub const STRING: u8 = 11;
    pub const STRUCT: u8 = 12;
    pub const MAP: u8 = 13;
    pub const SET: u8 = 14;
    pub const LIST: u8 = 15;
}

/// Thrift message types on the wire.
pub mod message_type {
    pub const CALL: u8 = 1;
    pub const REPLY: u8 = 2;
    pub const EXCEPTION: u8 = 3;
    pub const ONEWAY: u8 = 4;
}

/// The strict-protocol version word's upper half.
pub const VERSION_1: u32 = 0x8001_0000;

/// Appends TBinaryProtocol values to a buffer. Structs have no begin/end markers in the
/// binary protocol: a struct is its fields followed by [`BinaryWriter::field_stop`].
pub struct BinaryWriter<'a> {
    buf: &'a mut BytesMut,
}

impl<'a> BinaryWriter<'a> {
    pub fn new(buf: &'a mut BytesMut) -> Self {
        Self { buf }
    }

    /// The strict message header: version and type, name, sequence id.
    pub fn message_begin(&mut self, name: &str, message_type: u8, seqid: i32) {
        self.buf.put_u32(VERSION_1 | u32::from(message_type));
        self.string(name.as_bytes());
        self.buf.put_i32(seqid);
    }

    pub fn field_begin(&mut self, field_type: u8, id: i16) {
        self.buf.put_u8(field_type);
        self.buf.put_i16(id);
    }

    pub fn field_stop(&mut self) {
        self.buf.put_u8(ttype::STOP);
    }

    pub fn list_begin(&mut self, element_type: u8, len: usize) {
        self.buf.put_u8(element_type);
        self.buf.put_i32(len_i32(len));
    }

    pub fn map_begin(&mut self, key_type: u8, value_type: u8, len: usize) {
        self.buf.put_u8(key_type);
        self.buf.put_u8(value_type);
        self.buf.put_i32(len_i32(len));
    }

    pub fn bool(&mut self, v: bool) {
        self.buf.put_u8(u8::from(v));
    }

    pub fn byte(&mut self, v: i8) {
        self.buf.put_i8(v);
    }

    pub fn i16(&mut self, v: i16) {
        self.buf.put_i16(v);
    }

    pub fn i32(&mut self, v: i32) {
        self.buf.put_i32(v);
    }

    pub fn i64(&mut self, v: i64) {
        self.buf.put_i64(v);
    }

    pub fn double(&mut self, v: f64) {
        self.buf.put_f64(v);
    }

    /// A string or binary: length, then bytes.
    pub fn string(&mut self, v: &[u8]) {
        self.buf.put_i32(len_i32(v.len()));
        self.buf.put_slice(v);
    }

    /// Raw bytes already in TBinaryProtocol form (an encoded struct, say).
    pub fn raw(&mut self, v: &[u8]) {
        self.buf.put_slice(v);
    }

    /// The buffer, for callers that reserve capacity or patch a length in place.
    pub fn buffer(&mut self) -> &mut BytesMut {
        self.buf
    }
}

/// Thrift lengths are i32; nothing this server writes comes near that, and a value that did
/// would be a bug worth stopping on rather than a silently truncated length.
fn len_i32(len: usize) -> i32 {
    i32::try_from(len).expect("thrift length exceeds i32::MAX")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_strict_message_header() {
        let mut buf = BytesMut::new();
        BinaryWriter::new(&mut buf).message_begin("GetInfo", message_type::REPLY, 7);
        assert_eq!(&buf[..4], &[0x80, 0x01, 0x00, 0x02]);
        assert_eq!(&buf[4..8], &7i32.to_be_bytes());
        assert_eq!(&buf[8..15], b"GetInfo");
        assert_eq!(&buf[15..], &7i32.to_be_bytes());
    }
}
