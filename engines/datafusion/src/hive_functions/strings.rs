//! Hive's string functions: `concat`, `concat_ws` (of strings and arrays), `substr`,
//! `locate`, `sha2`, `space`, `hex`, `base64`, `elt`, `parse_url`, `parse_url_tuple` (a struct
//! per row; `hive_syntax` makes it a generator); Spark's `initcap`, `luhn_check`,
//! `length` (of a binary value too) and `levenshtein` (with a threshold). The regex
//! functions are
//! [`super::java_regex`]'s.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use datafusion::functions::expr_fn::{concat, strpos, substr};
use datafusion::functions_nested::expr_fn::{array_element, make_array};
use datafusion::logical_expr::{
    cast, lit, when, ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

use super::encoding::{integers_of, string_result, strings_of};
use super::{bad_arguments, is_binary, is_integer, is_string, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::computed("initcap", one_string, |_| Ok(DataType::Utf8), initcap).udf(),
        HiveFunction::computed("length", text_or_bytes, |_| Ok(DataType::Int32), length)
            .with_aliases(&["char_length", "character_length"])
            .udf(),
        HiveFunction::computed(
            "luhn_check",
            one_string,
            |_| Ok(DataType::Boolean),
            luhn_check,
        )
        .udf(),
        // Spark's `levenshtein(a, b, threshold)` is -1 for a distance beyond the threshold.
        HiveFunction::rewrite(
            "levenshtein",
            |name, types| match types {
                [a, b] if string_like(a) && string_like(b) => Ok(vec![DataType::Utf8; 2]),
                [a, b, t] if string_like(a) && string_like(b) && is_integer(t) => {
                    Ok(vec![DataType::Utf8, DataType::Utf8, DataType::Int32])
                }
                _ => Err(bad_arguments(name, "(string, string[, threshold])", types)),
            },
            |_| Ok(DataType::Int32),
            |a, _| {
                let distance = datafusion::functions::string::levenshtein()
                    .call(vec![a[0].clone(), a[1].clone()]);
                match a.get(2) {
                    None => Ok(distance),
                    Some(threshold) => when(distance.clone().gt(threshold.clone()), lit(-1i32))
                        .when(threshold.clone().is_null(), lit(ScalarValue::Int32(None)))
                        .otherwise(distance),
                }
            },
        )
        .udf(),
        HiveFunction::rewrite(
            "replace",
            |name, types| match types {
                [_, _] | [_, _, _] if types.iter().all(|t| string_like(t) || t.is_null()) => {
                    Ok(vec![DataType::Utf8; types.len()])
                }
                _ => Err(bad_arguments(
                    name,
                    "(string, search[, replacement])",
                    types,
                )),
            },
            |_| Ok(DataType::Utf8),
            remove_or_replace,
        )
        .udf(),
        HiveFunction::computed("chr", one_number, |_| Ok(DataType::Utf8), character)
            .with_aliases(&["char"])
            .udf(),
        HiveFunction::rewrite("locate", locate_types, |_| Ok(DataType::Int32), locate).udf(),
        HiveFunction::rewrite("concat", concat_types, concat_returns, hive_concat).udf(),
        HiveFunction::computed(
            "concat_ws",
            concat_ws_types,
            |_| Ok(DataType::Utf8),
            concat_ws,
        )
        .udf(),
        substr_udf(),
        HiveFunction::rewrite("sha2", sha2_types, |_| Ok(DataType::Utf8), sha2).udf(),
        HiveFunction::rewrite(
            "space",
            one_integer,
            |_| Ok(DataType::Utf8),
            |a, _| {
                Ok(datafusion::functions::expr_fn::repeat(
                    lit(" "),
                    a[0].clone(),
                ))
            },
        )
        .udf(),
        HiveFunction::rewrite("hex", hex_types, |_| Ok(DataType::Utf8), hex).udf(),
        HiveFunction::rewrite("base64", base64_types, |_| Ok(DataType::Utf8), base64).udf(),
        HiveFunction::rewrite("elt", elt_types, |_| Ok(DataType::Utf8), elt).udf(),
        ScalarUDF::new_from_impl(ParseUrl::new()),
        HiveFunction::computed(
            "parse_url_tuple",
            |name, types| super::string_tuple_types(name, types, "(url, part, ...)"),
            super::string_tuple_type,
            parse_url_tuple,
        )
        .udf(),
    ]
}

/// `hex(x)`: an integer's hex digits (a negative one's two's complement), or a string's or
/// binary's bytes in hex; upper case, as Hive writes them.
fn hex(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let value = args.into_iter().next().expect("one argument");
    let digits = if is_integer(&types[0]) {
        datafusion::functions::expr_fn::to_hex(value)
    } else {
        datafusion::functions::expr_fn::encode(value, lit("hex"))
    };
    Ok(datafusion::functions::expr_fn::upper(digits))
}

fn hex_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if is_integer(t) => Ok(vec![DataType::Int64]),
        // A string's bytes: DataFusion's encode, inlined after coercion, takes binaries.
        [t] if string_like(t) => Ok(vec![DataType::Binary]),
        [t @ (DataType::Binary | DataType::LargeBinary | DataType::BinaryView)] => {
            Ok(vec![t.clone()])
        }
        _ => Err(bad_arguments(
            name,
            "an integer, a string or a binary",
            types,
        )),
    }
}

/// `base64(binary)`: the bytes in base 64 with `=` padding, as Hive's (DataFusion's
/// `encode` leaves the padding out); a string's UTF-8 bytes, as Spark takes it.
fn base64(args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    use datafusion::functions::expr_fn::{character_length, encode, rpad};
    let value = args.into_iter().next().expect("one argument");
    let digits = encode(value, lit("base64"));
    let length = cast(character_length(digits.clone()), DataType::Int64);
    let padded_length = (length + lit(3i64)) / lit(4i64) * lit(4i64);
    Ok(rpad(vec![digits, padded_length, lit("=")]))
}

fn base64_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        // A string's bytes: DataFusion's encode, inlined after coercion, takes binaries.
        [t] if string_like(t) => Ok(vec![DataType::Binary]),
        [t @ (DataType::Binary | DataType::LargeBinary | DataType::BinaryView)] => {
            Ok(vec![t.clone()])
        }
        _ => Err(bad_arguments(name, "a binary or a string", types)),
    }
}

/// `elt(n, s1, s2, ...)`: the `n`th string (from 1); NULL for an `n` out of range.
fn elt(args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    let mut args = args.into_iter();
    let n = args.next().expect("an index");
    let strings = make_array(args.collect());
    when(n.clone().gt_eq(lit(1i64)), array_element(strings, n))
        .otherwise(lit(ScalarValue::Utf8(None)))
}

fn elt_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [n, strings @ ..] if is_integer(n) && !strings.is_empty() => {
            let mut coerced = vec![DataType::Int64];
            coerced.extend(strings.iter().map(|_| DataType::Utf8));
            Ok(coerced)
        }
        _ => Err(bad_arguments(name, "an index and strings", types)),
    }
}

/// Hive's `substr` (alias `substring`); also what `SUBSTR(s, p)` and `SUBSTRING(s FROM p)`
/// mean, which DataFusion plans apart from other calls ([`crate::hive_syntax`]).
pub fn substr_udf() -> ScalarUDF {
    HiveFunction::rewrite("substr", substr_types, substr_returns, hive_substr)
        .with_aliases(&["substring"])
        .udf()
}

/// A binary value's substring is its bytes, a binary value.
fn substr_returns(types: &[DataType]) -> Result<DataType> {
    Ok(match types[0] {
        DataType::Binary => DataType::Binary,
        _ => DataType::Utf8,
    })
}

/// `concat(a, b, ...)`: NULL when any argument is NULL, as in Hive and Spark (DataFusion's
/// skips NULLs; `concat_ws` still does, as Hive's). Numbers and dates are concatenated as
/// strings; arrays (Spark's `concat` of arrays) as arrays.
fn hive_concat(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let any_null = args
        .iter()
        .map(|a| a.clone().is_null())
        .reduce(Expr::or)
        .expect("one argument or more");
    let joined = if is_list(&types[0]) {
        datafusion::functions_nested::expr_fn::array_concat(args)
    } else {
        concat(args)
    };
    let null = ScalarValue::try_from(concat_returns(types)?)?;
    when(any_null, lit(null)).otherwise(joined)
}

/// `concat_ws(sep, a, ...)`, as Hive's and Spark's: the strings and the arrays' elements
/// joined by `sep`, so that `concat_ws(',', collect_list(x))` lists the values (DataFusion's
/// printed an array as `[a, b]`). NULL arguments and NULL elements are skipped; a NULL
/// separator gives NULL.
fn concat_ws(args: &[ArrayRef]) -> Result<ArrayRef> {
    let separators = strings_of(&args[0]);
    // Each argument's strings per row: one for a string, the elements for an array.
    let parts: Vec<Vec<Vec<&str>>> = args[1..]
        .iter()
        .map(|arg| match arg.data_type() {
            DataType::List(_) => {
                let lists = arg.as_list::<i32>();
                let elements = strings_of(lists.values());
                (0..lists.len())
                    .map(|row| {
                        if lists.is_null(row) {
                            return Vec::new();
                        }
                        let (start, end) =
                            (lists.value_offsets()[row], lists.value_offsets()[row + 1]);
                        elements[start as usize..end as usize]
                            .iter()
                            .flatten()
                            .copied()
                            .collect()
                    })
                    .collect()
            }
            _ => strings_of(arg)
                .into_iter()
                .map(|s| s.into_iter().collect())
                .collect(),
        })
        .collect();
    let joined = separators.iter().enumerate().map(|(row, separator)| {
        let separator = (*separator)?;
        let strings: Vec<&str> = parts.iter().flat_map(|arg| arg[row].clone()).collect();
        Some(strings.join(separator))
    });
    Ok(super::encoding::string_result(joined))
}

/// `concat_ws`'s separator and values as strings, its arrays as arrays of strings (Spark
/// takes only strings and arrays of strings; numbers are converted, as Hive converts them).
fn concat_ws_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let takes = "(separator, string or array of strings, ...)";
    if types.is_empty() {
        return Err(bad_arguments(name, takes, types));
    }
    types
        .iter()
        .enumerate()
        .map(|(i, t)| match t {
            DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) if i > 0 => {
                Ok(DataType::new_list(DataType::Utf8, true))
            }
            DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(..)
            | DataType::Map(..)
            | DataType::Struct(_) => Err(bad_arguments(name, takes, types)),
            _ => Ok(DataType::Utf8),
        })
        .collect()
}

fn is_list(t: &DataType) -> bool {
    matches!(t, DataType::List(_) | DataType::LargeList(_))
}

fn concat_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    if types.is_empty() {
        return Err(bad_arguments(name, "one value or more", types));
    }
    if types.iter().all(|t| is_list(t) || t.is_null()) && types.iter().any(is_list) {
        let common = datafusion::logical_expr::type_coercion::binary::type_union_resolution(types)
            .ok_or_else(|| bad_arguments(name, "arrays of one element type", types))?;
        return Ok(vec![common; types.len()]);
    }
    if types
        .iter()
        .any(|t| is_list(t) || matches!(t, DataType::Map(..) | DataType::Struct(_)))
    {
        return Err(bad_arguments(name, "strings (or arrays only)", types));
    }
    Ok(vec![DataType::Utf8; types.len()])
}

fn concat_returns(types: &[DataType]) -> Result<DataType> {
    Ok(if is_list(&types[0]) {
        types[0].clone()
    } else {
        DataType::Utf8
    })
}

/// `substr(s, pos[, len])`, as Hive: `pos` counts from 1, or from the end when negative
/// (`substr('hello', -3)` is `'llo'`), and 0 is 1; `''` when `pos` is beyond either end or
/// `len` is not positive.
fn hive_substr(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    if types[0] == DataType::Binary {
        let bytes = HiveFunction::computed("substr", substr_types, substr_returns, byte_substr);
        return Ok(bytes.udf().call(args));
    }
    let mut args = args.into_iter();
    let text = args.next().expect("a string");
    let pos = args.next().expect("a position");
    let len = args.next();
    let chars = cast(
        datafusion::functions::expr_fn::character_length(text.clone()),
        DataType::Int64,
    );
    let start = when(pos.clone().gt(lit(0i64)), pos.clone())
        .when(
            pos.clone().lt(lit(0i64)),
            chars.clone() + pos.clone() + lit(1i64),
        )
        // A NULL position is a NULL answer, as in Hive and Spark.
        .when(pos.clone().eq(lit(0i64)), lit(1i64))
        .end()?;
    let taken = match &len {
        Some(len) => datafusion::functions::expr_fn::substring(text, start, len.clone()),
        None => substr(text, start),
    };
    let mut empty = when(datafusion::functions::expr_fn::abs(pos).gt(chars), lit(""));
    if let Some(len) = len {
        empty = empty.when(len.lt_eq(lit(0i64)), lit(""));
    }
    empty.otherwise(taken)
}

/// `substr` of a binary value: its bytes as `substr` takes a string's characters.
fn byte_substr(args: &[ArrayRef]) -> Result<ArrayRef> {
    let values = super::encoding::bytes_of(&args[0])?;
    let positions = integers_of(&args[1]);
    let lengths = args.get(2).map(integers_of);
    let taken = values.into_iter().enumerate().map(|(row, bytes)| {
        let (bytes, pos) = (bytes?, positions[row]?);
        let length = match &lengths {
            Some(lengths) => Some(lengths[row]?),
            None => None,
        };
        let size = bytes.len() as i64;
        // As the string form: 0 is 1, a negative position counts from the end, and one
        // beyond either end, or a length of 0 or less, takes nothing.
        if pos.unsigned_abs() > size as u64 || length.is_some_and(|l| l <= 0) {
            return Some(Vec::new());
        }
        let start = match pos {
            1.. => pos - 1,
            0 => 0,
            _ => size + pos,
        };
        let end = length.map_or(size, |l| start.saturating_add(l).min(size));
        Some(bytes[start as usize..end as usize].to_vec())
    });
    Ok(super::encoding::binary_result(taken))
}

fn substr_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [b, p] if is_binary(b) && is_integer(p) => Ok(vec![DataType::Binary, DataType::Int64]),
        [b, p, l] if is_binary(b) && is_integer(p) && is_integer(l) => {
            Ok(vec![DataType::Binary, DataType::Int64, DataType::Int64])
        }
        [s, p] if string_like(s) && is_integer(p) => Ok(vec![DataType::Utf8, DataType::Int64]),
        [s, p, l] if string_like(s) && is_integer(p) && is_integer(l) => {
            Ok(vec![DataType::Utf8, DataType::Int64, DataType::Int64])
        }
        _ => Err(bad_arguments(name, "(string, position[, length])", types)),
    }
}

/// Spark's `chr(n)` (and `char(n)`): the character of code `n % 256`, as Java's `char`; `''`
/// for a negative `n`.
fn character(args: &[ArrayRef]) -> Result<ArrayRef> {
    Ok(string_result(integers_of(&args[0]).into_iter().map(|n| {
        n.map(|n| match n {
            ..0 => String::new(),
            n => char::from((n & 0xff) as u8).to_string(),
        })
    })))
}

/// Spark's `replace(s, search[, replacement])`: every `search` in `s` replaced, or removed
/// without a replacement (DataFusion's takes three arguments).
fn remove_or_replace(args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    let mut args = args;
    if args.len() == 2 {
        args.push(lit(""));
    }
    let [text, search, replacement] = <[Expr; 3]>::try_from(args).expect("three arguments");
    Ok(datafusion::functions::expr_fn::replace(
        text,
        search,
        replacement,
    ))
}

/// Spark's `luhn_check(s)`: whether `s` is digits alone whose Luhn checksum is 0 (a card
/// number's check), false for any other text.
fn luhn_check(args: &[ArrayRef]) -> Result<ArrayRef> {
    let checked: datafusion::arrow::array::BooleanArray = strings_of(&args[0])
        .into_iter()
        .map(|text| {
            text.map(|text| {
                let digits: Option<Vec<u32>> = text.chars().map(|c| c.to_digit(10)).collect();
                let Some(digits) = digits.filter(|d| !d.is_empty()) else {
                    return false;
                };
                let sum: u32 = digits
                    .iter()
                    .rev()
                    .enumerate()
                    .map(|(i, &d)| match (i % 2, d * 2) {
                        (0, _) => d,
                        (_, doubled) if doubled > 9 => doubled - 9,
                        (_, doubled) => doubled,
                    })
                    .sum();
                sum.is_multiple_of(10)
            })
        })
        .collect();
    Ok(std::sync::Arc::new(checked))
}

/// Spark's `initcap(s)`: the first letter of each word upper case and the rest lower case,
/// a word starting after a space (DataFusion's starts one after any character that is not a
/// letter or digit: `O'Neil` where Spark writes `O'neil`).
fn initcap(args: &[ArrayRef]) -> Result<ArrayRef> {
    Ok(string_result(strings_of(&args[0]).into_iter().map(
        |text| {
            text.map(|text| {
                let mut after_space = true;
                text.chars()
                    .flat_map(|c| {
                        let cased: Vec<char> = if after_space {
                            c.to_uppercase().collect()
                        } else {
                            c.to_lowercase().collect()
                        };
                        after_space = c == ' ';
                        cased
                    })
                    .collect()
            })
        },
    )))
}

fn one_string(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if string_like(t) || t.is_null() => Ok(vec![DataType::Utf8]),
        _ => Err(bad_arguments(name, "a string", types)),
    }
}

/// A number, read as a `BIGINT` (a fraction dropped, as Spark's cast to a long).
fn one_number(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [n] if n.is_numeric() || n.is_null() => Ok(vec![DataType::Int64]),
        _ => Err(bad_arguments(name, "a number", types)),
    }
}

/// `locate(substring, text[, start])`: the 1-based position of the first `substring` in
/// `text` at or after `start`, 0 when there is none (or `start` is below 1).
fn locate(args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    let mut args = args.into_iter();
    let needle = args.next().expect("substring");
    let text = args.next().expect("text");
    let Some(start) = args.next() else {
        return Ok(cast(strpos(text, needle), DataType::Int32));
    };
    let found = cast(
        strpos(substr(text, cast(start.clone(), DataType::Int64)), needle),
        DataType::Int32,
    );
    when(start.clone().lt(lit(1i32)), lit(0i32))
        .when(found.clone().eq(lit(0i32)), lit(0i32))
        .otherwise(found + start - lit(1i32))
}

/// `sha2(s, bits)`: the SHA-2 digest of `s` in hex, as Hive; `bits` 224, 256 (or 0), 384
/// or 512, a constant; NULL for other lengths.
fn sha2(args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    let [text, bits] = <[Expr; 2]>::try_from(args).expect("two arguments");
    use datafusion::functions::expr_fn::{encode, sha224, sha256, sha384, sha512};
    let digest = match &bits {
        Expr::Literal(value, _) => match value.cast_to(&DataType::Int64)? {
            ScalarValue::Int64(Some(224)) => sha224(text),
            ScalarValue::Int64(Some(0 | 256)) => sha256(text),
            ScalarValue::Int64(Some(384)) => sha384(text),
            ScalarValue::Int64(Some(512)) => sha512(text),
            _ => return Ok(lit(ScalarValue::Utf8(None))),
        },
        _ => {
            return Err(datafusion::error::DataFusionError::Plan(
                "sha2: the bit length must be a constant: 224, 256, 384 or 512".into(),
            ))
        }
    };
    Ok(encode(digest, lit("hex")))
}

fn sha2_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [s, b] if (string_like(s) || matches!(s, DataType::Binary)) && is_integer(b) => {
            Ok(vec![s.clone(), DataType::Int64])
        }
        _ => Err(bad_arguments(name, "(string or binary, bit length)", types)),
    }
}

fn one_integer(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [n] if is_integer(n) => Ok(vec![DataType::Int64]),
        _ => Err(bad_arguments(name, "a number", types)),
    }
}

fn string_like(t: &DataType) -> bool {
    is_string(t) || t.is_null()
}

fn locate_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [a, b] if string_like(a) && string_like(b) => Ok(vec![DataType::Utf8; 2]),
        [a, b, c] if string_like(a) && string_like(b) && is_integer(c) => {
            Ok(vec![DataType::Utf8, DataType::Utf8, DataType::Int32])
        }
        _ => Err(bad_arguments(
            name,
            "(substring, text[, start position])",
            types,
        )),
    }
}

/// `parse_url_tuple(url, p1, p2, ...)`: the parts of a URL as [`url_part`] reads them, `QUERY:k`
/// the query's parameter `k`, as Hive's `GenericUDTFParseUrlTuple`; NULL for a NULL URL or
/// part, an unknown part or a text that is no URL.
fn parse_url_tuple(args: &[ArrayRef]) -> Result<ArrayRef> {
    super::string_tuple(args, |url, parts| {
        parts
            .iter()
            .map(|part| {
                let (url, part) = (url?, (*part)?);
                match part.strip_prefix("QUERY:") {
                    Some(key) => url_part(url, "QUERY", Some(key)),
                    None => url_part(url, part, None),
                }
            })
            .collect()
    })
}

/// `parse_url(url, part[, key])`: a part of a URL, as Hive reads it with `java.net.URL`:
/// `HOST`, `PATH`, `QUERY` (with a key, that parameter's value), `REF`, `PROTOCOL`, `FILE`
/// (path and query), `AUTHORITY`, `USERINFO`. NULL for a part the URL lacks, an unknown
/// part or a text that is no URL. The URL is taken as written (not normalised).
#[derive(Debug, PartialEq, Eq, Hash)]
struct ParseUrl {
    signature: Signature,
}

impl ParseUrl {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for ParseUrl {
    fn name(&self) -> &str {
        "parse_url"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        if (2..=3).contains(&types.len()) && types.iter().all(string_like) {
            Ok(vec![DataType::Utf8; types.len()])
        } else {
            Err(bad_arguments(self.name(), "(url, part[, key])", types))
        }
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        super::usage::documentation("parse_url")
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let strings: Vec<_> = arrays.iter().map(|a| a.as_string::<i32>()).collect();
        let mut out = StringBuilder::with_capacity(rows, rows * 16);
        for i in 0..rows {
            if strings.iter().any(|s| s.is_null(i)) {
                out.append_null();
                continue;
            }
            let key = strings.get(2).map(|s| s.value(i));
            match url_part(strings[0].value(i), strings[1].value(i), key) {
                Some(part) => out.append_value(part),
                None => out.append_null(),
            }
        }
        super::columnar(std::sync::Arc::new(out.finish()), &args.args)
    }
}

/// A part of `scheme:[//[userinfo@]host[:port]][path][?query][#ref]`, as `java.net.URL`
/// gives it.
pub fn url_part(url: &str, part: &str, key: Option<&str>) -> Option<String> {
    let (scheme, rest) = url.split_once(':')?;
    let valid_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !valid_scheme {
        return None;
    }
    let (rest, fragment) = match rest.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (rest, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (rest, None),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(after) => match after.find('/') {
            Some(slash) => (Some(&after[..slash]), &after[slash..]),
            None => (Some(after), ""),
        },
        None => (None, rest),
    };
    let (userinfo, host_port) = match authority.map(|a| a.rsplit_once('@')) {
        Some(Some((userinfo, host_port))) => (Some(userinfo), Some(host_port)),
        Some(None) => (None, authority),
        None => (None, None),
    };
    // The host without its port; an IPv6 address keeps its brackets, as Java's.
    let host = host_port.map(|h| match h.rfind(':') {
        Some(colon) if !h[colon..].contains(']') => &h[..colon],
        _ => h,
    });
    let text = match part {
        "HOST" => host,
        "PATH" => Some(path),
        "QUERY" => match key {
            // Hive's `(&|^)key=([^&]*)`: the first parameter of that name.
            Some(key) => {
                return query?.split('&').find_map(|pair| {
                    pair.strip_prefix(key)
                        .and_then(|after| after.strip_prefix('='))
                        .map(str::to_owned)
                })
            }
            None => query,
        },
        "REF" => fragment,
        "PROTOCOL" => Some(scheme),
        "FILE" => {
            return Some(match query {
                Some(query) => format!("{path}?{query}"),
                None => path.to_owned(),
            })
        }
        "AUTHORITY" => authority,
        "USERINFO" => userinfo,
        _ => None,
    };
    text.map(str::to_owned)
}

/// `length(x)`: a string's characters, or a binary value's bytes, as Spark counts them.
/// DataFusion's `length` reads its argument as text, so a binary value that is not UTF-8
/// failed the query.
fn text_or_bytes(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if is_string(t) || t.is_null() => Ok(vec![DataType::Utf8]),
        [DataType::Binary | DataType::LargeBinary | DataType::BinaryView] => {
            Ok(vec![DataType::Binary])
        }
        _ => Err(bad_arguments(name, "a string or a binary value", types)),
    }
}

fn length(args: &[ArrayRef]) -> Result<ArrayRef> {
    use datafusion::arrow::array::Int32Array;
    let counts: Int32Array = match args[0].data_type() {
        DataType::Binary => args[0]
            .as_binary::<i32>()
            .iter()
            .map(|bytes| bytes.map(|b| b.len() as i32))
            .collect(),
        _ => strings_of(&args[0])
            .into_iter()
            .map(|text| {
                text.map(|t| match t.is_ascii() {
                    true => t.len() as i32,
                    false => t.chars().count() as i32,
                })
            })
            .collect(),
    };
    Ok(std::sync::Arc::new(counts))
}
