//! Hive's functions between numbers, bytes and their text forms: `conv`, `bin`, `unhex`,
//! `unbase64`, `sha1` (`sha`), `crc32`, `soundex`, and Hive's `hash`; Spark's `to_binary`,
//! `try_to_binary`, `is_valid_utf8`, `make_valid_utf8`, `validate_utf8` and
//! `try_validate_utf8`. Each is computed value by value
//! ([`HiveFunction::computed`]); none has a DataFusion equivalent with Hive's answers.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryBuilder, BooleanArray, Int64Builder, StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ScalarUDF;

use super::{bad_arguments, is_binary, is_integer, is_string, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::computed("conv", conv_types, |_| Ok(DataType::Utf8), conv).udf(),
        HiveFunction::computed("bin", one_integer, |_| Ok(DataType::Utf8), bin).udf(),
        HiveFunction::computed("unhex", one_string, |_| Ok(DataType::Binary), unhex).udf(),
        HiveFunction::computed("unbase64", one_string, |_| Ok(DataType::Binary), unbase64).udf(),
        HiveFunction::computed(
            "to_base32",
            string_or_binary,
            |_| Ok(DataType::Utf8),
            to_base32,
        )
        .udf(),
        HiveFunction::computed(
            "from_base32",
            one_string,
            |_| Ok(DataType::Binary),
            from_base32,
        )
        .udf(),
        HiveFunction::computed("hmac", hmac_types, |_| Ok(DataType::Binary), hmac).udf(),
        HiveFunction::computed(
            "to_binary",
            text_and_format,
            |_| Ok(DataType::Binary),
            |a| to_binary(a, true),
        )
        .udf(),
        HiveFunction::computed(
            "try_to_binary",
            text_and_format,
            |_| Ok(DataType::Binary),
            |a| to_binary(a, false),
        )
        .udf(),
        HiveFunction::computed(
            "is_valid_utf8",
            string_or_binary,
            |_| Ok(DataType::Boolean),
            is_valid_utf8,
        )
        .udf(),
        HiveFunction::computed(
            "make_valid_utf8",
            string_or_binary,
            |_| Ok(DataType::Utf8),
            |a| utf8_of(a, InvalidUtf8::Replace),
        )
        .udf(),
        HiveFunction::computed(
            "validate_utf8",
            string_or_binary,
            |_| Ok(DataType::Utf8),
            |a| utf8_of(a, InvalidUtf8::Fail),
        )
        .udf(),
        HiveFunction::computed(
            "try_validate_utf8",
            string_or_binary,
            |_| Ok(DataType::Utf8),
            |a| utf8_of(a, InvalidUtf8::Null),
        )
        .udf(),
        HiveFunction::computed("sha1", string_or_binary, |_| Ok(DataType::Utf8), sha1)
            .with_aliases(&["sha"])
            .udf(),
        HiveFunction::computed("crc32", string_or_binary, |_| Ok(DataType::Int64), crc32).udf(),
        HiveFunction::computed("soundex", one_string, |_| Ok(DataType::Utf8), soundex).udf(),
        HiveFunction::computed("hash", hash_types, |_| Ok(DataType::Int32), hash).udf(),
    ]
}

fn string_like(t: &DataType) -> bool {
    is_string(t) || t.is_null()
}

fn one_string(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if string_like(t) => Ok(vec![DataType::Utf8]),
        _ => Err(bad_arguments(name, "a string", types)),
    }
}

fn one_integer(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if is_integer(t) => Ok(vec![DataType::Int64]),
        // Read as Hive reads a string as a BIGINT ([`string_to_long`]).
        [t] if is_string(t) => Ok(vec![DataType::Utf8]),
        _ => Err(bad_arguments(name, "an integer", types)),
    }
}

fn string_or_binary(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if string_like(t) => Ok(vec![DataType::Utf8]),
        [t] if is_binary(t) => Ok(vec![DataType::Binary]),
        _ => Err(bad_arguments(name, "a string or a binary", types)),
    }
}

/// Each value's bytes (a string's UTF-8), None for NULL.
pub(super) fn bytes_of(array: &ArrayRef) -> Result<Vec<Option<&[u8]>>> {
    Ok(match array.data_type() {
        DataType::Utf8 => array
            .as_string::<i32>()
            .iter()
            .map(|s| s.map(str::as_bytes))
            .collect(),
        DataType::Binary => array.as_binary::<i32>().iter().collect(),
        DataType::Null => vec![None; array.len()],
        other => {
            return Err(DataFusionError::Internal(format!(
                "bytes of a {other} array"
            )))
        }
    })
}

/// Each value of a string array, None for NULL.
pub(super) fn strings_of(array: &ArrayRef) -> Vec<Option<&str>> {
    match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().iter().collect(),
        _ => vec![None; array.len()],
    }
}

pub(super) fn integers_of(array: &ArrayRef) -> Vec<Option<i64>> {
    match array.data_type() {
        DataType::Int64 => array.as_primitive::<Int64Type>().iter().collect(),
        _ => vec![None; array.len()],
    }
}

pub(super) fn string_result(values: impl Iterator<Item = Option<String>>) -> ArrayRef {
    let mut out = StringBuilder::new();
    for value in values {
        out.append_option(value);
    }
    Arc::new(out.finish())
}

pub(super) fn binary_result(values: impl Iterator<Item = Option<Vec<u8>>>) -> ArrayRef {
    let mut out = BinaryBuilder::new();
    for value in values {
        out.append_option(value);
    }
    Arc::new(out.finish())
}

/// `sha1(x)`: the SHA-1 digest of a string's UTF-8 or a binary's bytes, 40 lower-case hex
/// digits.
fn sha1(args: &[ArrayRef]) -> Result<ArrayRef> {
    let values = bytes_of(&args[0])?;
    Ok(string_result(
        values
            .into_iter()
            .map(|v| v.map(|bytes| hex(&sha1_digest(bytes)))),
    ))
}

/// `crc32(x)`: the CRC-32 (as `java.util.zip.CRC32`) of the bytes, a `BIGINT`.
fn crc32(args: &[ArrayRef]) -> Result<ArrayRef> {
    let values = bytes_of(&args[0])?;
    let mut out = Int64Builder::with_capacity(values.len());
    for value in values {
        out.append_option(value.map(|bytes| i64::from(crc32_of(bytes))));
    }
    Ok(Arc::new(out.finish()))
}

/// `unhex(s)`: the bytes of pairs of hex digits (an odd count read with a leading 0);
/// NULL when `s` holds another character, as Hive.
fn unhex(args: &[ArrayRef]) -> Result<ArrayRef> {
    Ok(binary_result(
        strings_of(&args[0])
            .into_iter()
            .map(|s| s.and_then(unhex_text)),
    ))
}

pub fn unhex_text(text: &str) -> Option<Vec<u8>> {
    let digits: Vec<u8> = text
        .chars()
        .map(|c| c.to_digit(16).map(|d| d as u8))
        .collect::<Option<_>>()?;
    let mut bytes = Vec::with_capacity(digits.len().div_ceil(2));
    let (first, rest) = digits.split_at(digits.len() % 2);
    bytes.extend(first.iter().copied());
    bytes.extend(rest.chunks(2).map(|pair| pair[0] << 4 | pair[1]));
    Some(bytes)
}

/// `(text[, format])`: a string and the name of its encoding.
fn text_and_format(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if string_like(t) => Ok(vec![DataType::Utf8]),
        [t, f] if string_like(t) && string_like(f) => Ok(vec![DataType::Utf8, DataType::Utf8]),
        _ => Err(bad_arguments(
            name,
            "(text[, 'hex' | 'base64' | 'utf-8'])",
            types,
        )),
    }
}

/// Spark's `to_binary(text[, format])` and `try_to_binary`: the bytes `text` writes as hex
/// digits (the default; an odd count read with a leading 0, as `unhex`), as Base64, or as
/// UTF-8. A text that is not what its format says fails `to_binary` (`fails`) and is NULL
/// for `try_to_binary`; a format that is none of the three fails both.
fn to_binary(args: &[ArrayRef], fails: bool) -> Result<ArrayRef> {
    let name = if fails { "to_binary" } else { "try_to_binary" };
    let texts = strings_of(&args[0]);
    let formats = match args.get(1) {
        Some(formats) => strings_of(formats),
        None => vec![Some("hex"); texts.len()],
    };
    let mut out = Vec::with_capacity(texts.len());
    for (text, format) in texts.into_iter().zip(formats) {
        let (Some(text), Some(format)) = (text, format) else {
            out.push(None);
            continue;
        };
        let bytes = match format.to_ascii_lowercase().as_str() {
            "hex" => unhex_text(text),
            "base64" => strict_base64(text),
            "utf-8" | "utf8" => Some(text.as_bytes().to_vec()),
            _ => {
                return Err(DataFusionError::Execution(format!(
                    "{name}: the format is 'hex', 'base64' or 'utf-8', not '{format}'"
                )))
            }
        };
        match bytes {
            Some(bytes) => out.push(Some(bytes)),
            None if fails => {
                return Err(DataFusionError::Execution(format!(
                    "{name}: '{text}' is not {format} text; try_to_binary gives NULL for it"
                )))
            }
            None => out.push(None),
        }
    }
    Ok(binary_result(out.into_iter()))
}

/// Base64 text's bytes as Spark's `to_binary` reads them (Java's MIME decoder): characters
/// outside the alphabet skipped, padding optional, the last bits kept whatever they are;
/// `None` when one character is left over, which holds too few bits for a byte.
fn strict_base64(text: &str) -> Option<Vec<u8>> {
    let sextets = text
        .bytes()
        .take_while(|b| *b != b'=')
        .filter(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')
        .count();
    (sextets % 4 != 1).then(|| base64_decode(text))
}

/// Spark's `is_valid_utf8(x)`: whether the bytes are UTF-8 (a string always is here).
fn is_valid_utf8(args: &[ArrayRef]) -> Result<ArrayRef> {
    let values = bytes_of(&args[0])?;
    let checked: BooleanArray = values
        .into_iter()
        .map(|bytes| bytes.map(|b| std::str::from_utf8(b).is_ok()))
        .collect();
    Ok(Arc::new(checked))
}

/// What Spark's UTF-8 functions make of bytes that are not UTF-8.
#[derive(Clone, Copy)]
enum InvalidUtf8 {
    /// `make_valid_utf8`: each invalid sequence becomes U+FFFD.
    Replace,
    /// `validate_utf8`: the query fails, naming the bytes.
    Fail,
    /// `try_validate_utf8`: NULL.
    Null,
}

/// Spark's `make_valid_utf8(x)`, `validate_utf8(x)` and `try_validate_utf8(x)`: the text of
/// `x`'s bytes, which for a string (always UTF-8 here) is the string itself.
fn utf8_of(args: &[ArrayRef], invalid: InvalidUtf8) -> Result<ArrayRef> {
    let mut texts = Vec::with_capacity(args[0].len());
    for bytes in bytes_of(&args[0])? {
        let text = match bytes.map(|b| (b, std::str::from_utf8(b))) {
            None => None,
            Some((_, Ok(text))) => Some(text.to_owned()),
            Some((bytes, Err(_))) => match invalid {
                InvalidUtf8::Replace => Some(String::from_utf8_lossy(bytes).into_owned()),
                InvalidUtf8::Null => None,
                InvalidUtf8::Fail => {
                    return Err(DataFusionError::Execution(format!(
                        "validate_utf8: X'{}' is not UTF-8 (make_valid_utf8 replaces what is \
                         not; try_validate_utf8 gives NULL)",
                        hex(bytes).to_uppercase()
                    )))
                }
            },
        };
        texts.push(text);
    }
    Ok(string_result(texts.into_iter()))
}

/// `unbase64(s)`: the bytes of base 64 text, read as Hive's (commons-codec) reads it:
/// padding optional, characters outside the alphabet (line breaks, spaces) skipped.
fn unbase64(args: &[ArrayRef]) -> Result<ArrayRef> {
    Ok(binary_result(
        strings_of(&args[0])
            .into_iter()
            .map(|s| s.map(base64_decode)),
    ))
}

pub fn base64_decode(text: &str) -> Vec<u8> {
    lenient_decode(text, 6, |c| {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        })
    })
}

/// `to_base32(x)`: RFC 4648's base 32 of a string's UTF-8 or a binary's bytes, padded with
/// `=` (`Spark SQL` is `KNYGC4TLEBJVCTA=`).
fn to_base32(args: &[ArrayRef]) -> Result<ArrayRef> {
    let values = bytes_of(&args[0])?;
    Ok(string_result(values.into_iter().map(|v| {
        v.map(|bytes| data_encoding::BASE32.encode(bytes))
    })))
}

/// `from_base32(s)`: the bytes, read as Spark reads them: letters in either case, characters
/// outside the alphabet passed over, `=` the end.
fn from_base32(args: &[ArrayRef]) -> Result<ArrayRef> {
    let decoded = strings_of(&args[0]).into_iter().map(|s| {
        s.map(|text| {
            lenient_decode(text, 5, |c| match c {
                b'A'..=b'Z' => Some(c - b'A'),
                b'a'..=b'z' => Some(c - b'a'),
                b'2'..=b'7' => Some(c - b'2' + 26),
                _ => None,
            })
        })
    });
    Ok(binary_result(decoded))
}

/// The bytes of a text whose characters carry `width` bits each (`value_of`'s), read as
/// Java's lenient decoders read them: a character outside the alphabet is passed over and
/// `=` ends the text; bits short of a byte at the end are dropped.
fn lenient_decode(text: &str, width: u32, value_of: impl Fn(u8) -> Option<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * width as usize / 8);
    let (mut bits, mut count) = (0u32, 0u32);
    for c in text.bytes() {
        if c == b'=' {
            break;
        }
        let Some(value) = value_of(c) else { continue };
        bits = bits << width | u32::from(value);
        count += width;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    out
}

/// `hmac(key, message[, algorithm])`: strings (as UTF-8) or binaries, the algorithm a string.
fn hmac_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let bytes = |t: &DataType| {
        if is_binary(t) {
            Some(DataType::Binary)
        } else if string_like(t) {
            Some(DataType::Utf8)
        } else {
            None
        }
    };
    let takes = "(key, message[, algorithm]): strings or binaries, and SHA-256 (the default), SHA-224, SHA-384, SHA-512 or MD5";
    match types {
        [key, message] | [key, message, _] => {
            let mut coerced = vec![
                bytes(key).ok_or_else(|| bad_arguments(name, takes, types))?,
                bytes(message).ok_or_else(|| bad_arguments(name, takes, types))?,
            ];
            if let Some(algorithm) = types.get(2) {
                if !string_like(algorithm) {
                    return Err(bad_arguments(name, takes, types));
                }
                coerced.push(DataType::Utf8);
            }
            Ok(coerced)
        }
        _ => Err(bad_arguments(name, takes, types)),
    }
}

/// `hmac(key, message[, algorithm])`: Spark's HMAC of the message under the key, as Java's
/// `Mac` of `Hmac` and the algorithm's name without its `-` (`SHA-256`, the default, or
/// `sha256`); an empty key or an unknown algorithm fails the query, as in Spark.
fn hmac(args: &[ArrayRef]) -> Result<ArrayRef> {
    use hmac::{Hmac, KeyInit, Mac};
    fn digest<M: Mac + KeyInit>(key: &[u8], message: &[u8]) -> Vec<u8> {
        let mut mac =
            <M as KeyInit>::new_from_slice(key).expect("an HMAC takes a key of any length");
        mac.update(message);
        mac.finalize().into_bytes().to_vec()
    }
    let keys = bytes_of(&args[0])?;
    let messages = bytes_of(&args[1])?;
    let algorithms = match args.get(2) {
        Some(a) => strings_of(a),
        None => vec![Some("SHA-256"); keys.len()],
    };
    let mut out = Vec::with_capacity(keys.len());
    for ((key, message), algorithm) in keys.into_iter().zip(messages).zip(algorithms) {
        let (Some(key), Some(message), Some(algorithm)) = (key, message, algorithm) else {
            out.push(None);
            continue;
        };
        if key.is_empty() {
            return Err(DataFusionError::Execution(
                "hmac: the key is empty; give a key of at least one byte".to_owned(),
            ));
        }
        let mac = match algorithm.replace('-', "").to_ascii_uppercase().as_str() {
            "SHA256" => digest::<Hmac<sha2::Sha256>>(key, message),
            "SHA224" => digest::<Hmac<sha2::Sha224>>(key, message),
            "SHA384" => digest::<Hmac<sha2::Sha384>>(key, message),
            "SHA512" => digest::<Hmac<sha2::Sha512>>(key, message),
            "MD5" => digest::<Hmac<md5::Md5>>(key, message),
            _ => {
                return Err(DataFusionError::Execution(format!(
                    "hmac: '{algorithm}' is not an HMAC algorithm the engine has; use SHA-256, \
                     SHA-224, SHA-384, SHA-512 or MD5"
                )))
            }
        };
        out.push(Some(mac));
    }
    Ok(binary_result(out.into_iter()))
}

/// `bin(n)`: the binary digits of a `BIGINT`, a negative one's two's complement
/// (`bin(-1)` is 64 ones).
fn bin(args: &[ArrayRef]) -> Result<ArrayRef> {
    let numbers = match args[0].data_type() {
        DataType::Utf8 => strings_of(&args[0])
            .into_iter()
            .map(|s| s.and_then(string_to_long))
            .collect(),
        _ => integers_of(&args[0]),
    };
    Ok(string_result(
        numbers
            .into_iter()
            .map(|n| n.map(|n| format!("{:b}", n as u64))),
    ))
}

/// A string as Hive converts it to a `BIGINT` for a function (its `LazyLong`): surrounding
/// spaces trimmed, an optional sign, digits, and a fraction dropped (`'1.5'` is 1); None
/// for anything else or a number beyond 64 bits.
pub fn string_to_long(text: &str) -> Option<i64> {
    let text = text.trim();
    let (integer, fraction) = text.split_once('.').unwrap_or((text, ""));
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = integer.strip_prefix(['+', '-']).unwrap_or(integer);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    integer.strip_prefix('+').unwrap_or(integer).parse().ok()
}

fn conv_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [n, from, to]
            if (is_integer(n) || string_like(n)) && is_integer(from) && is_integer(to) =>
        {
            Ok(vec![DataType::Utf8, DataType::Int64, DataType::Int64])
        }
        _ => Err(bad_arguments(
            name,
            "(number or string, from base, to base)",
            types,
        )),
    }
}

/// `conv(num, from_base, to_base)`.
fn conv(args: &[ArrayRef]) -> Result<ArrayRef> {
    let numbers = strings_of(&args[0]);
    let from = integers_of(&args[1]);
    let to = integers_of(&args[2]);
    Ok(string_result(
        numbers
            .into_iter()
            .zip(from)
            .zip(to)
            .map(|((n, from), to)| convert_base(n?, from?, to?)),
    ))
}

/// Hive's `conv` (its `NumberConverter`): the digits of `number` in base `from` (2 to 36,
/// read up to the first character that is no such digit; a leading `-` negates), through a
/// 64-bit integer, written in base `|to|`, upper case. A positive `to` writes the integer
/// unsigned (`conv('-1', 10, 16)` is `FFFFFFFFFFFFFFFF`), a negative one signed (`-A`); a
/// number beyond 64 bits is all ones. NULL for a base out of range or an empty number.
pub fn convert_base(number: &str, from: i64, to: i64) -> Option<String> {
    let radix_ok = |r: i64| (2..=36).contains(&r);
    if !radix_ok(from) || !radix_ok(to.abs()) || number.is_empty() {
        return None;
    }
    let from = from as u32;
    let (mut negative, digits) = match number.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, number),
    };
    // Unsigned 64-bit arithmetic; an overflow gives all ones (-1), as Hive's encode.
    let mut value: u64 = 0;
    for c in digits.chars() {
        let Some(digit) = c.to_digit(from) else { break };
        match value
            .checked_mul(u64::from(from))
            .and_then(|v| v.checked_add(u64::from(digit)))
        {
            Some(next) => value = next,
            None => {
                value = u64::MAX;
                break;
            }
        }
    }
    let mut signed = value as i64;
    if negative && to > 0 {
        signed = if signed < 0 {
            -1
        } else {
            signed.wrapping_neg()
        };
    }
    if to < 0 && signed < 0 {
        signed = signed.wrapping_neg();
        negative = true;
    }
    let radix = to.unsigned_abs() as u32;
    let mut unsigned = signed as u64;
    let mut text = Vec::new();
    loop {
        let digit = (unsigned % u64::from(radix)) as u32;
        text.push(
            std::char::from_digit(digit, radix)
                .expect("a digit below the radix")
                .to_ascii_uppercase(),
        );
        unsigned /= u64::from(radix);
        if unsigned == 0 {
            break;
        }
    }
    if negative && to < 0 {
        text.push('-');
    }
    Some(text.into_iter().rev().collect())
}

/// `soundex(s)`: American Soundex as Hive's (commons-codec's) `Soundex`: letters only, the
/// first kept, then the codes of the others, a code repeated across H and W written once,
/// padded with 0 to four characters; `''` without a letter.
fn soundex(args: &[ArrayRef]) -> Result<ArrayRef> {
    Ok(string_result(
        strings_of(&args[0]).into_iter().map(|s| s.map(soundex_of)),
    ))
}

pub fn soundex_of(text: &str) -> String {
    // A to Z; '0' for vowels and Y, which separate equal codes, and H and W, which do not.
    const CODES: &[u8; 26] = b"01230120022455012623010202";
    let letters: Vec<u8> = text
        .bytes()
        .filter(u8::is_ascii_alphabetic)
        .map(|b| b.to_ascii_uppercase())
        .collect();
    let Some(&first) = letters.first() else {
        return String::new();
    };
    let mut out = vec![first];
    let mut last = CODES[usize::from(first - b'A')];
    for &letter in &letters[1..] {
        if out.len() == 4 {
            break;
        }
        if letter == b'H' || letter == b'W' {
            continue;
        }
        let code = CODES[usize::from(letter - b'A')];
        if code != b'0' && code != last {
            out.push(code);
        }
        last = code;
    }
    out.resize(4, b'0');
    String::from_utf8(out).expect("ASCII")
}

fn hash_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    if types.is_empty() {
        return Err(bad_arguments(name, "one value or more", types));
    }
    types
        .iter()
        .map(|t| match t {
            DataType::Null
            | DataType::Boolean
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Float32
            | DataType::Float64
            | DataType::Utf8
            | DataType::Binary => Ok(t.clone()),
            DataType::UInt8 | DataType::UInt16 => Ok(DataType::Int32),
            DataType::UInt32 | DataType::UInt64 => Ok(DataType::Int64),
            t if is_string(t) => Ok(DataType::Utf8),
            t if is_binary(t) => Ok(DataType::Binary),
            _ => Err(bad_arguments(
                name,
                "booleans, numbers (but decimals), strings or binaries",
                types,
            )),
        })
        .collect()
}

/// `hash(a, ...)`: Hive's (`GenericUDFHash`), an `INT`: `31 * h + hashCode(value)` over
/// the values, each hashed as Hive's `ObjectInspectorUtils.hashCode`: an integer up to
/// `INT` as itself, a `BIGINT` and a `DOUBLE`'s bits as Java's `Long.hashCode`, a `FLOAT`'s
/// bits, a boolean as 1 or 0, a string as Java's `String.hashCode` of its UTF-8 bytes
/// (signed), a binary as Hadoop's `BytesWritable`; NULL as 0.
fn hash(args: &[ArrayRef]) -> Result<ArrayRef> {
    use datafusion::arrow::array::Int32Builder;
    use datafusion::arrow::datatypes::{Float32Type, Float64Type, Int16Type, Int32Type, Int8Type};
    let rows = args.first().map_or(0, |a| a.len());
    let mut hashes = vec![0i32; rows];
    let long = |v: i64| ((v as u64 >> 32) as i64 ^ v) as i32;
    let bytes = |initial: i32, b: &[u8]| {
        b.iter().fold(initial, |h, &b| {
            h.wrapping_mul(31).wrapping_add(i32::from(b as i8))
        })
    };
    for array in args {
        let value_hashes: Vec<i32> = match array.data_type() {
            DataType::Null => vec![0; rows],
            DataType::Boolean => array
                .as_boolean()
                .iter()
                .map(|v| v.map_or(0, i32::from))
                .collect(),
            DataType::Int8 => array
                .as_primitive::<Int8Type>()
                .iter()
                .map(|v| v.map_or(0, i32::from))
                .collect(),
            DataType::Int16 => array
                .as_primitive::<Int16Type>()
                .iter()
                .map(|v| v.map_or(0, i32::from))
                .collect(),
            DataType::Int32 => array
                .as_primitive::<Int32Type>()
                .iter()
                .map(|v| v.unwrap_or(0))
                .collect(),
            DataType::Int64 => array
                .as_primitive::<Int64Type>()
                .iter()
                .map(|v| v.map_or(0, long))
                .collect(),
            DataType::Float32 => array
                .as_primitive::<Float32Type>()
                .iter()
                .map(|v| v.map_or(0, |f| java_float_bits(f) as i32))
                .collect(),
            DataType::Float64 => array
                .as_primitive::<Float64Type>()
                .iter()
                .map(|v| v.map_or(0, |f| long(java_double_bits(f))))
                .collect(),
            DataType::Utf8 | DataType::Binary => bytes_of(array)?
                .into_iter()
                .map(|v| match (v, array.data_type()) {
                    (None, _) => 0,
                    (Some(b), DataType::Utf8) => bytes(0, b),
                    (Some(b), _) => bytes(1, b),
                })
                .collect(),
            other => {
                return Err(DataFusionError::Internal(format!(
                    "hash of a {other} array"
                )))
            }
        };
        for (hash, value) in hashes.iter_mut().zip(value_hashes) {
            *hash = hash.wrapping_mul(31).wrapping_add(value);
        }
    }
    let mut out = Int32Builder::with_capacity(rows);
    out.append_slice(&hashes);
    Ok(Arc::new(out.finish()))
}

/// Java's `Double.doubleToLongBits`: every NaN as the canonical one.
fn java_double_bits(value: f64) -> i64 {
    if value.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        value.to_bits() as i64
    }
}

/// Java's `Float.floatToIntBits`.
fn java_float_bits(value: f32) -> u32 {
    if value.is_nan() {
        0x7fc0_0000
    } else {
        value.to_bits()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-1 (FIPS 180-4).
pub fn sha1_digest(message: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    let mut padded = message.to_vec();
    padded.push(0x80);
    while padded.len() % 64 != 56 {
        padded.push(0);
    }
    padded.extend_from_slice(&((message.len() as u64).wrapping_mul(8)).to_be_bytes());
    for block in padded.chunks(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, &word) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(word);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (state, value) in h.iter_mut().zip([a, b, c, d, e]) {
            *state = state.wrapping_add(value);
        }
    }
    let mut digest = [0u8; 20];
    for (chunk, word) in digest.chunks_mut(4).zip(h) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    digest
}

/// CRC-32 (IEEE 802.3, reflected, as zlib and `java.util.zip.CRC32`).
pub fn crc32_of(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}
