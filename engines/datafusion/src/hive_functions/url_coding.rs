//! Spark's `url_encode(s)`, `url_decode(s)` and `try_url_decode(s)`: form encoding
//! (`application/x-www-form-urlencoded`) in UTF-8, as Java's `URLEncoder.encode` and
//! `URLDecoder.decode` write and read it, which Spark's functions call and Hive users call
//! through `reflect('java.net.URLDecoder', 'decode', s, 'UTF-8')` (`reflect` shares
//! [`url_encode`] and [`url_decode`]).

use datafusion::arrow::datatypes::DataType;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ScalarUDF;

use super::encoding::{string_result, strings_of};
use super::{bad_arguments, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    let function = |name, compute| {
        HiveFunction::computed(name, string_types, |_| Ok(DataType::Utf8), compute).udf()
    };
    vec![
        function("url_encode", |args| {
            Ok(string_result(
                strings_of(&args[0]).into_iter().map(|s| s.map(url_encode)),
            ))
        }),
        function("url_decode", |args| {
            let decoded = strings_of(&args[0])
                .into_iter()
                .map(|s| s.map(url_decode).transpose())
                .collect::<Result<Vec<_>, String>>()
                .map_err(|e| DataFusionError::Execution(format!("url_decode: {e}")))?;
            Ok(string_result(decoded.into_iter()))
        }),
        function("try_url_decode", |args| {
            Ok(string_result(
                strings_of(&args[0])
                    .into_iter()
                    .map(|s| s.and_then(|s| url_decode(s).ok())),
            ))
        }),
    ]
}

fn string_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if super::is_string(t) || t.is_null() => Ok(vec![DataType::Utf8]),
        _ => Err(bad_arguments(name, "a string", types)),
    }
}

/// Java's `URLEncoder.encode(s, "UTF-8")`: letters, digits and `.-*_` as they are, a space
/// as `+`, every other byte of the UTF-8 as `%XY`.
pub fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                out.push(char::from(byte))
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// Java's `URLDecoder.decode(s, "UTF-8")`: `+` is a space, `%XY` a byte, the bytes read as
/// UTF-8 (a byte that is no UTF-8 becomes U+FFFD, as Java's decoder replaces it). A `%`
/// without two hex digits is the caller's mistake, worded as Java words it.
pub fn url_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'+' => out.push(b' '),
            b'%' => {
                let Some(hex) = bytes.get(at + 1..at + 3) else {
                    return Err(format!(
                        "incomplete trailing escape (%) pattern in '{text}'"
                    ));
                };
                let digits = std::str::from_utf8(hex).ok();
                let byte = digits.and_then(|d| u8::from_str_radix(d, 16).ok());
                let Some(byte) = byte.filter(|_| hex.iter().all(u8::is_ascii_hexdigit)) else {
                    return Err(format!(
                        "illegal hex characters in escape (%) pattern at index {at} of '{text}'"
                    ));
                };
                out.push(byte);
                at += 2;
            }
            other => out.push(other),
        }
        at += 1;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}
