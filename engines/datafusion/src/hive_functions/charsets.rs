//! Hive's `encode(string, charset)` and `decode(binary, charset)`: text to bytes and back in
//! one of Java's standard charsets (`UTF-8`, `US-ASCII`, `ISO-8859-1`, `UTF-16`,
//! `UTF-16BE`, `UTF-16LE`), as Hive's `GenericUDFEncode`/`GenericUDFDecode`. They replace
//! DataFusion's functions of those names, whose `'hex'`, `'base64'` and `'escape'` they
//! keep: a call naming one of those is DataFusion's, as before.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryBuilder, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature,
};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        ScalarUDF::new_from_impl(CharsetCoding::new(
            Direction::Encode,
            datafusion::functions::encoding::encode(),
        )),
        ScalarUDF::new_from_impl(CharsetCoding::new(
            Direction::Decode,
            datafusion::functions::encoding::decode(),
        )),
    ]
}

/// A charset Hive's `encode` and `decode` take (Java's standard ones).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Charset {
    Utf8,
    Ascii,
    Latin1,
    /// Java's `UTF-16`: big-endian, written after a byte-order mark; read after one (either
    /// order) or, without one, big-endian.
    Utf16,
    Utf16Be,
    Utf16Le,
}

impl Charset {
    /// The charset of a name as Java reads it: any case, canonical name or usual alias.
    fn named(name: &str) -> Option<Self> {
        Some(match name.trim().to_ascii_uppercase().as_str() {
            "UTF-8" | "UTF8" => Self::Utf8,
            "US-ASCII" | "ASCII" | "US_ASCII" => Self::Ascii,
            "ISO-8859-1" | "ISO8859-1" | "ISO8859_1" | "ISO_8859_1" | "ISO_8859-1" | "LATIN1"
            | "L1" | "8859_1" => Self::Latin1,
            "UTF-16" | "UTF_16" | "UTF16" => Self::Utf16,
            "UTF-16BE" | "UTF_16BE" | "UTF16BE" => Self::Utf16Be,
            "UTF-16LE" | "UTF_16LE" | "UTF16LE" => Self::Utf16Le,
            _ => return None,
        })
    }

    /// Java's canonical name of the charset.
    fn name(self) -> &'static str {
        match self {
            Self::Utf8 => "UTF-8",
            Self::Ascii => "US-ASCII",
            Self::Latin1 => "ISO-8859-1",
            Self::Utf16 => "UTF-16",
            Self::Utf16Be => "UTF-16BE",
            Self::Utf16Le => "UTF-16LE",
        }
    }

    /// The bytes of a text; an error for a character the charset has no byte for, as
    /// Hive's encoder reports it.
    fn encode(self, text: &str) -> Result<Vec<u8>> {
        let narrow = |limit: u32| {
            text.chars()
                .map(|c| {
                    u8::try_from(u32::from(c))
                        .ok()
                        .filter(|_| u32::from(c) <= limit)
                })
                .collect::<Option<Vec<u8>>>()
                .ok_or_else(|| coding_error("encode", self, "has a character that has no bytes in"))
        };
        let units = || text.encode_utf16();
        Ok(match self {
            Self::Utf8 => text.as_bytes().to_vec(),
            Self::Ascii => narrow(0x7f)?,
            Self::Latin1 => narrow(0xff)?,
            Self::Utf16 if text.is_empty() => Vec::new(),
            Self::Utf16 => [0xfe, 0xff]
                .into_iter()
                .chain(units().flat_map(u16::to_be_bytes))
                .collect(),
            Self::Utf16Be => units().flat_map(u16::to_be_bytes).collect(),
            Self::Utf16Le => units().flat_map(u16::to_le_bytes).collect(),
        })
    }

    /// The text of bytes; an error for bytes that are no text in the charset, as Hive's
    /// decoder reports them.
    fn decode(self, bytes: &[u8]) -> Result<String> {
        let malformed = || coding_error("decode", self, "holds bytes that are not text in");
        let utf16 = |bytes: &[u8], unit: fn([u8; 2]) -> u16| {
            if !bytes.len().is_multiple_of(2) {
                return Err(malformed());
            }
            let units = bytes.chunks_exact(2).map(|pair| unit([pair[0], pair[1]]));
            char::decode_utf16(units)
                .collect::<std::result::Result<String, _>>()
                .map_err(|_| malformed())
        };
        match self {
            Self::Utf8 => String::from_utf8(bytes.to_vec()).map_err(|_| malformed()),
            Self::Ascii if bytes.is_ascii() => Ok(bytes.iter().map(|&b| char::from(b)).collect()),
            Self::Ascii => Err(malformed()),
            Self::Latin1 => Ok(bytes.iter().map(|&b| char::from(b)).collect()),
            Self::Utf16 => match bytes {
                [0xff, 0xfe, rest @ ..] => utf16(rest, u16::from_le_bytes),
                [0xfe, 0xff, rest @ ..] => utf16(rest, u16::from_be_bytes),
                _ => utf16(bytes, u16::from_be_bytes),
            },
            Self::Utf16Be => utf16(bytes, u16::from_be_bytes),
            Self::Utf16Le => utf16(bytes, u16::from_le_bytes),
        }
    }
}

fn coding_error(function: &str, charset: Charset, what: &str) -> DataFusionError {
    DataFusionError::Execution(format!(
        "{function}: the value {what} {} (as Hive, the query fails rather than replace \
         it)",
        charset.name()
    ))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Direction {
    /// `encode(string, charset)`: a `BINARY`.
    Encode,
    /// `decode(binary, charset)`: a `STRING`.
    Decode,
}

/// `encode` or `decode`: with a charset, Hive's; with DataFusion's `'hex'`, `'base64'` or
/// `'escape'` (or an encoding read from a column), DataFusion's, whose argument types
/// (a string's UTF-8 bytes as a binary) both take.
#[derive(Debug)]
struct CharsetCoding {
    direction: Direction,
    /// DataFusion's function of the same name.
    builtin: Arc<ScalarUDF>,
    signature: Signature,
}

impl CharsetCoding {
    fn new(direction: Direction, builtin: Arc<ScalarUDF>) -> Self {
        let signature = builtin.signature().clone();
        Self {
            direction,
            builtin,
            signature,
        }
    }

    /// The charset a call names, when its second argument is a constant naming one; an
    /// error for a constant naming neither a charset nor one of DataFusion's encodings.
    fn charset(&self, name: Option<&ScalarValue>) -> Result<Option<Charset>> {
        let Some(Some(name)) = name.map(|value| match value {
            ScalarValue::Utf8(s) | ScalarValue::LargeUtf8(s) | ScalarValue::Utf8View(s) => {
                s.as_deref()
            }
            _ => None,
        }) else {
            return Ok(None);
        };
        if let Some(charset) = Charset::named(name) {
            return Ok(Some(charset));
        }
        if matches!(
            name.to_ascii_lowercase().as_str(),
            "hex" | "base64" | "escape"
        ) {
            return Ok(None);
        }
        Err(DataFusionError::Plan(format!(
            "{}: unknown charset '{name}'; it takes UTF-8, US-ASCII, ISO-8859-1, UTF-16, \
             UTF-16BE, UTF-16LE (or 'hex', 'base64', 'escape')",
            self.name()
        )))
    }
}

impl PartialEq for CharsetCoding {
    fn eq(&self, other: &Self) -> bool {
        self.direction == other.direction
    }
}

impl Eq for CharsetCoding {}

impl std::hash::Hash for CharsetCoding {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.direction.hash(state);
    }
}

impl ScalarUDFImpl for CharsetCoding {
    fn name(&self) -> &str {
        self.builtin.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name())
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Err(DataFusionError::Internal(format!(
            "{}'s type is read from its arguments",
            self.name()
        )))
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        match self.charset(args.scalar_arguments.get(1).copied().flatten())? {
            None => self.builtin.return_field_from_args(args),
            Some(_) => {
                let data_type = match self.direction {
                    Direction::Encode => DataType::Binary,
                    Direction::Decode => DataType::Utf8,
                };
                Ok(Arc::new(Field::new(self.name(), data_type, true)))
            }
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let charset = match args.args.get(1) {
            Some(ColumnarValue::Scalar(name)) => self.charset(Some(name))?,
            _ => None,
        };
        let Some(charset) = charset else {
            return self.builtin.invoke_with_args(args);
        };
        let values = cast(&args.args[0].to_array(args.number_rows)?, &DataType::Binary)?;
        let values = values.as_binary::<i32>();
        let result: ArrayRef = match self.direction {
            Direction::Encode => {
                let mut out = BinaryBuilder::with_capacity(values.len(), values.value_data().len());
                for value in values.iter() {
                    match value {
                        // The binary of a string's UTF-8 (DataFusion's coercion).
                        Some(bytes) => {
                            out.append_value(charset.encode(&String::from_utf8_lossy(bytes))?)
                        }
                        None => out.append_null(),
                    }
                }
                Arc::new(out.finish())
            }
            Direction::Decode => {
                let mut out = StringBuilder::with_capacity(values.len(), values.value_data().len());
                for value in values.iter() {
                    out.append_option(value.map(|bytes| charset.decode(bytes)).transpose()?);
                }
                Arc::new(out.finish())
            }
        };
        super::columnar(result, &args.args[..1])
    }
}
