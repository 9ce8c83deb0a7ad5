//! Hive's `reflect(class, method, arg...)` (alias `java_method`), which calls a Java static
//! method and answers its value as a string (Java's `toString`). There is no JVM here: the
//! engine knows the static methods analysts call through it ([`call`]), written to answer
//! as Java does: `java.util.UUID`'s `randomUUID` and `fromString`, `java.net.URLEncoder
//! .encode` and `java.net.URLDecoder.decode`, `java.lang.Math` (and `StrictMath`),
//! `java.lang.String.valueOf`, and the parsers and writers of `Integer`, `Long`, `Double`
//! and `Boolean`. Another class or method fails the query, naming it.
//!
//! The method is looked up by its name and its arguments' SQL types, as Spark looks it up:
//! a `BOOLEAN`, an integer (`INT` as Java's `int`, `BIGINT` as `long`; a `BIGINT` that
//! fits is taken for an `int` parameter, since the engine's integer literals are `BIGINT`s),
//! a `DOUBLE` (a `FLOAT` or a `DECIMAL` read as one, as Hive's literals are), or a `STRING`.
//! A NULL argument gives NULL. The function is volatile (`randomUUID` draws a new value for
//! each row).

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Float64Type, Int32Type, Int64Type};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{ScalarUDF, Signature, Volatility};

use super::encoding::{string_result, strings_of};
use super::printf::java_double;
use super::url_coding::{url_decode, url_encode};
use super::{bad_arguments, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::computed("reflect", reflect_types, |_| Ok(DataType::Utf8), reflect)
            .with_aliases(&["java_method"])
            .with_signature(Signature::user_defined(Volatility::Volatile))
            .udf(),
    ]
}

const TAKES: &str = "(class, method[, argument, ...]), the arguments booleans, numbers or strings";

fn reflect_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let string = |t: &DataType| super::is_string(t) || t.is_null();
    let [class, method, arguments @ ..] = types else {
        return Err(bad_arguments(name, TAKES, types));
    };
    if !string(class) || !string(method) {
        return Err(bad_arguments(name, TAKES, types));
    }
    let arguments = arguments
        .iter()
        .map(|t| match t {
            DataType::Boolean => Some(DataType::Boolean),
            DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::UInt8
            | DataType::UInt16 => Some(DataType::Int32),
            DataType::Int64 | DataType::UInt32 => Some(DataType::Int64),
            DataType::Float16
            | DataType::Float32
            | DataType::Float64
            | DataType::Decimal32(..)
            | DataType::Decimal64(..)
            | DataType::Decimal128(..)
            | DataType::Decimal256(..) => Some(DataType::Float64),
            t if string(t) => Some(DataType::Utf8),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad_arguments(name, TAKES, types))?;
    Ok([DataType::Utf8, DataType::Utf8]
        .into_iter()
        .chain(arguments)
        .collect())
}

/// An argument's value, of the Java type its SQL type stands for.
#[derive(Clone, Copy, Debug)]
enum Arg<'a> {
    Boolean(bool),
    Int(i32),
    Long(i64),
    Double(f64),
    String(&'a str),
}

impl Arg<'_> {
    /// Java's `String.valueOf` of the value.
    fn text(self) -> String {
        match self {
            Arg::Boolean(b) => b.to_string(),
            Arg::Int(i) => i.to_string(),
            Arg::Long(i) => i.to_string(),
            Arg::Double(x) => java_double(x),
            Arg::String(s) => s.to_owned(),
        }
    }

    /// The value as Java's `double` parameter takes it (an integer widened).
    fn double(self) -> Option<f64> {
        match self {
            Arg::Int(i) => Some(f64::from(i)),
            Arg::Long(i) => Some(i as f64),
            Arg::Double(x) => Some(x),
            _ => None,
        }
    }

    /// The value as Java's `int` parameter takes it: an `INT`, or a `BIGINT` that fits.
    fn int(self) -> Option<i32> {
        match self {
            Arg::Int(i) => Some(i),
            Arg::Long(i) => i32::try_from(i).ok(),
            _ => None,
        }
    }

    fn long(self) -> Option<i64> {
        match self {
            Arg::Int(i) => Some(i64::from(i)),
            Arg::Long(i) => Some(i),
            _ => None,
        }
    }
}

/// The row's arguments after the class and method; `None` when one is NULL.
fn row_arguments(arrays: &[ArrayRef], row: usize) -> Option<Vec<Arg<'_>>> {
    arrays
        .iter()
        .map(|array| {
            if array.is_null(row) {
                return None;
            }
            Some(match array.data_type() {
                DataType::Boolean => Arg::Boolean(array.as_boolean().value(row)),
                DataType::Int32 => Arg::Int(array.as_primitive::<Int32Type>().value(row)),
                DataType::Int64 => Arg::Long(array.as_primitive::<Int64Type>().value(row)),
                DataType::Float64 => Arg::Double(array.as_primitive::<Float64Type>().value(row)),
                _ => Arg::String(array.as_string::<i32>().value(row)),
            })
        })
        .collect()
}

/// `reflect(class, method, ...)`, row by row.
fn reflect(args: &[ArrayRef]) -> Result<ArrayRef> {
    let (classes, methods) = (strings_of(&args[0]), strings_of(&args[1]));
    let values = (0..args[0].len())
        .map(|row| {
            let (Some(class), Some(method)) = (classes[row], methods[row]) else {
                return Ok(None);
            };
            let Some(arguments) = row_arguments(&args[2..], row) else {
                return Ok(None);
            };
            call(class, method, &arguments).map(Some)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(string_result(values.into_iter()))
}

/// What a Java method threw, or that there is no such method here.
enum Failure {
    /// No method of that class, name and argument types is known to the engine.
    Unknown,
    /// The method threw, as Java's exception says.
    Threw(String),
}

/// Calls `class.method(arguments)` as Java would, its value as Java's `toString` writes it.
fn call(class: &str, method: &str, arguments: &[Arg]) -> Result<String> {
    let answer = match class {
        "java.lang.Math" | "java.lang.StrictMath" => math(method, arguments),
        "java.lang.String" => match (method, arguments) {
            ("valueOf", [value]) => Ok(value.text()),
            _ => Err(Failure::Unknown),
        },
        "java.lang.Integer" => integer(method, arguments, 32),
        "java.lang.Long" => integer(method, arguments, 64),
        "java.lang.Double" => double(method, arguments),
        "java.lang.Boolean" => match (method, arguments) {
            ("parseBoolean" | "valueOf", [Arg::String(s)]) => {
                Ok(s.eq_ignore_ascii_case("true").to_string())
            }
            ("toString", [Arg::Boolean(b)]) => Ok(b.to_string()),
            _ => Err(Failure::Unknown),
        },
        "java.lang.System" => match (method, arguments) {
            ("currentTimeMillis", []) => Ok(std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis())
                .to_string()),
            _ => Err(Failure::Unknown),
        },
        "java.util.UUID" => match (method, arguments) {
            ("randomUUID", []) => Ok(uuid::Uuid::new_v4().to_string()),
            ("fromString", [Arg::String(s)]) => uuid::Uuid::parse_str(s)
                .map(|u| u.to_string())
                .map_err(|_| {
                    Failure::Threw(format!(
                        "IllegalArgumentException: Invalid UUID string: {s}"
                    ))
                }),
            _ => Err(Failure::Unknown),
        },
        "java.net.URLEncoder" => match (method, arguments) {
            ("encode", [Arg::String(s)]) => Ok(url_encode(s)),
            ("encode", [Arg::String(s), Arg::String(charset)]) => {
                utf8(charset).map(|()| url_encode(s))
            }
            _ => Err(Failure::Unknown),
        },
        "java.net.URLDecoder" => match (method, arguments) {
            ("decode", [Arg::String(s)]) => decode(s),
            ("decode", [Arg::String(s), Arg::String(charset)]) => {
                utf8(charset).and_then(|()| decode(s))
            }
            _ => Err(Failure::Unknown),
        },
        _ => Err(Failure::Unknown),
    };
    answer.map_err(|failure| {
        let arguments = arguments
            .iter()
            .map(|a| match a {
                Arg::String(s) => format!("'{s}'"),
                other => other.text(),
            })
            .collect::<Vec<_>>()
            .join(", ");
        DataFusionError::Execution(match failure {
            Failure::Unknown => format!(
                "reflect: {class}.{method}({arguments}) is not available in this engine, which \
                 has no JVM; it answers the static methods of java.lang.Math, \
                 java.lang.String.valueOf, java.lang.Integer, Long, Double and Boolean's \
                 parsers and writers, java.util.UUID.randomUUID and fromString, \
                 java.net.URLEncoder.encode and java.net.URLDecoder.decode"
            ),
            Failure::Threw(exception) => {
                format!("reflect: {class}.{method}({arguments}) threw {exception}")
            }
        })
    })
}

fn decode(text: &str) -> Result<String, Failure> {
    url_decode(text).map_err(|why| Failure::Threw(format!("IllegalArgumentException: {why}")))
}

/// The encoders and decoders take UTF-8 alone (what every caller passes).
fn utf8(charset: &str) -> Result<(), Failure> {
    if matches!(charset.to_ascii_uppercase().as_str(), "UTF-8" | "UTF8") {
        Ok(())
    } else {
        Err(Failure::Threw(format!(
            "UnsupportedEncodingException: {charset} (the engine encodes URLs in UTF-8 only)"
        )))
    }
}

/// `java.lang.Math`'s static methods of numbers.
fn math(method: &str, arguments: &[Arg]) -> Result<String, Failure> {
    use Arg::{Double, Int, Long};
    let double = |f: fn(f64) -> f64| match arguments {
        [x] => x
            .double()
            .map(|x| java_double(f(x)))
            .ok_or(Failure::Unknown),
        _ => Err(Failure::Unknown),
    };
    let double2 = |f: fn(f64, f64) -> f64| match arguments {
        [x, y] => match (x.double(), y.double()) {
            (Some(x), Some(y)) => Ok(java_double(f(x, y))),
            _ => Err(Failure::Unknown),
        },
        _ => Err(Failure::Unknown),
    };
    let divided_by_zero = || Failure::Threw("ArithmeticException: / by zero".into());
    match (method, arguments) {
        ("abs", [Int(i)]) => Ok(i.wrapping_abs().to_string()),
        ("abs", [Long(i)]) => Ok(i.wrapping_abs().to_string()),
        ("abs", [Double(x)]) => Ok(java_double(x.abs())),
        ("max" | "min", [Int(a), Int(b)]) => {
            Ok(if method == "max" { a.max(b) } else { a.min(b) }.to_string())
        }
        ("max" | "min", [a, b]) if a.double().is_some() && b.double().is_some() => {
            match (a.long(), b.long()) {
                (Some(a), Some(b)) => {
                    Ok(if method == "max" { a.max(b) } else { a.min(b) }.to_string())
                }
                _ if method == "max" => double2(|a, b| java_extreme(a, b, true)),
                _ => double2(|a, b| java_extreme(a, b, false)),
            }
        }
        ("round", [Int(i)]) => Ok(i.to_string()),
        ("round", [x]) => x
            .double()
            .map(|x| java_round(x).to_string())
            .ok_or(Failure::Unknown),
        ("floorDiv" | "floorMod", [a, b]) => {
            let (Some(a), Some(b)) = (a.long(), b.long()) else {
                return Err(Failure::Unknown);
            };
            if b == 0 {
                return Err(divided_by_zero());
            }
            let quotient = a.wrapping_div(b) - i64::from((a % b != 0) && ((a < 0) != (b < 0)));
            Ok(if method == "floorDiv" {
                quotient.to_string()
            } else {
                (a.wrapping_sub(quotient.wrapping_mul(b))).to_string()
            })
        }
        ("random", []) => Ok(java_double(random_double())),
        ("floor", _) => double(f64::floor),
        ("ceil", _) => double(f64::ceil),
        ("rint", _) => double(f64::round_ties_even),
        ("sqrt", _) => double(f64::sqrt),
        ("cbrt", _) => double(f64::cbrt),
        ("exp", _) => double(f64::exp),
        ("expm1", _) => double(f64::exp_m1),
        ("log", _) => double(f64::ln),
        ("log10", _) => double(f64::log10),
        ("log1p", _) => double(f64::ln_1p),
        ("sin", _) => double(f64::sin),
        ("cos", _) => double(f64::cos),
        ("tan", _) => double(f64::tan),
        ("asin", _) => double(f64::asin),
        ("acos", _) => double(f64::acos),
        ("atan", _) => double(f64::atan),
        ("sinh", _) => double(f64::sinh),
        ("cosh", _) => double(f64::cosh),
        ("tanh", _) => double(f64::tanh),
        ("toDegrees", _) => double(f64::to_degrees),
        ("toRadians", _) => double(f64::to_radians),
        ("signum", _) => double(|x| {
            if x == 0.0 || x.is_nan() {
                x
            } else {
                x.signum()
            }
        }),
        ("pow", _) => double2(f64::powf),
        ("atan2", _) => double2(f64::atan2),
        ("hypot", _) => double2(f64::hypot),
        _ => Err(Failure::Unknown),
    }
}

/// A random double in [0, 1): 53 random bits of a version-4 UUID (its low bits, below the
/// variant's).
fn random_double() -> f64 {
    let bits = uuid::Uuid::new_v4().as_u128() as u64 & ((1 << 53) - 1);
    bits as f64 / (1u64 << 53) as f64
}

/// Java's `Math.max` (`max`) or `Math.min` of doubles: NaN if either is, and -0.0 below
/// 0.0, where Rust's `max` and `min` may return either zero.
fn java_extreme(a: f64, b: f64, max: bool) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == b {
        // 0.0 and -0.0: the positive one for max, the negative one for min.
        return if a.is_sign_negative() == max { b } else { a };
    }
    if max {
        a.max(b)
    } else {
        a.min(b)
    }
}

/// Java's `Math.round(double)`: the closest `long`, halves up (`-2.5` is -2), NaN 0, beyond
/// the range its bound.
fn java_round(x: f64) -> i64 {
    let floor = x.floor();
    (if x - floor >= 0.5 { floor + 1.0 } else { floor }) as i64
}

/// `java.lang.Integer` (`bits` 32) and `java.lang.Long` (64): parsing and writing integers.
fn integer(method: &str, arguments: &[Arg], bits: u32) -> Result<String, Failure> {
    // The argument as the class's primitive: an int for Integer, a long for Long.
    let value = |a: &Arg| -> Option<i64> {
        if bits == 32 {
            a.int().map(i64::from)
        } else {
            a.long()
        }
    };
    // The value's bits as unsigned, for the hex, octal and binary writers.
    let unsigned = |i: i64| -> u64 {
        if bits == 32 {
            u64::from(i as i32 as u32)
        } else {
            i as u64
        }
    };
    match (method, arguments) {
        ("parseInt" | "valueOf", [Arg::String(s)]) if bits == 32 => parse_integer(s, 10, bits),
        ("parseInt" | "valueOf", [Arg::String(s), radix]) if bits == 32 => {
            parse_integer(s, radix.int().ok_or(Failure::Unknown)?, bits)
        }
        ("parseLong" | "valueOf", [Arg::String(s)]) if bits == 64 => parse_integer(s, 10, bits),
        ("parseLong" | "valueOf", [Arg::String(s), radix]) if bits == 64 => {
            parse_integer(s, radix.int().ok_or(Failure::Unknown)?, bits)
        }
        ("toHexString", [a]) => value(a)
            .map(|i| format!("{:x}", unsigned(i)))
            .ok_or(Failure::Unknown),
        ("toOctalString", [a]) => value(a)
            .map(|i| format!("{:o}", unsigned(i)))
            .ok_or(Failure::Unknown),
        ("toBinaryString", [a]) => value(a)
            .map(|i| format!("{:b}", unsigned(i)))
            .ok_or(Failure::Unknown),
        ("bitCount", [a]) => value(a)
            .map(|i| unsigned(i).count_ones().to_string())
            .ok_or(Failure::Unknown),
        ("toString", [a]) => value(a).map(|i| i.to_string()).ok_or(Failure::Unknown),
        ("toString", [a, radix]) => {
            let (Some(i), Some(radix)) = (value(a), radix.int()) else {
                return Err(Failure::Unknown);
            };
            // Java writes in base 10 a radix outside 2..36.
            let radix = if (2..=36).contains(&radix) {
                radix as u32
            } else {
                10
            };
            Ok(signed_digits(i, radix))
        }
        _ => Err(Failure::Unknown),
    }
}

/// An integer's digits in a radix, lower case, a minus sign before a negative one (Java's
/// `Long.toString(i, radix)`).
fn signed_digits(i: i64, radix: u32) -> String {
    let mut magnitude = i.unsigned_abs();
    let mut digits = Vec::new();
    loop {
        let digit = (magnitude % u64::from(radix)) as u32;
        digits.push(char::from_digit(digit, radix).expect("a digit of the radix"));
        magnitude /= u64::from(radix);
        if magnitude == 0 {
            break;
        }
    }
    if i < 0 {
        digits.push('-');
    }
    digits.into_iter().rev().collect()
}

/// Java's `Integer.parseInt(s, radix)` and `Long.parseLong`: an optional sign and digits,
/// nothing else (no spaces); a text that is not one throws `NumberFormatException`.
fn parse_integer(text: &str, radix: i32, bits: u32) -> Result<String, Failure> {
    let threw = || {
        Failure::Threw(format!(
            "NumberFormatException: For input string: \"{text}\""
        ))
    };
    let radix = u32::try_from(radix)
        .ok()
        .filter(|r| (2..=36).contains(r))
        .ok_or_else(threw)?;
    let value = i64::from_str_radix(text, radix).map_err(|_| threw())?;
    if bits == 32 && i32::try_from(value).is_err() {
        return Err(threw());
    }
    Ok(value.to_string())
}

/// `java.lang.Double`: parsing and writing doubles.
fn double(method: &str, arguments: &[Arg]) -> Result<String, Failure> {
    match (method, arguments) {
        ("parseDouble" | "valueOf", [Arg::String(s)]) => parse_double(s).map(java_double),
        ("toString", [x]) => x.double().map(java_double).ok_or(Failure::Unknown),
        ("isNaN", [x]) => x
            .double()
            .map(|x| x.is_nan().to_string())
            .ok_or(Failure::Unknown),
        _ => Err(Failure::Unknown),
    }
}

/// Java's `Double.parseDouble`: spaces around, an optional `d` or `f` suffix, `NaN` and
/// `Infinity` as Java spells them.
fn parse_double(text: &str) -> Result<f64, Failure> {
    let threw = || {
        Failure::Threw(format!(
            "NumberFormatException: For input string: \"{text}\""
        ))
    };
    let trimmed = text.trim_matches(|c: char| c <= ' ');
    let unsigned = trimmed.trim_start_matches(['+', '-']);
    let negative = trimmed.starts_with('-');
    match unsigned {
        "NaN" => return Ok(f64::NAN),
        "Infinity" => {
            return Ok(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            })
        }
        _ => {}
    }
    let number = trimmed
        .strip_suffix(['d', 'D', 'f', 'F'])
        .unwrap_or(trimmed);
    // Rust also reads "inf" and "nan", which Java does not.
    if !number
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | 'e' | 'E'))
    {
        return Err(threw());
    }
    number.parse().map_err(|_| threw())
}

#[cfg(test)]
mod tests {
    use super::java_extreme;

    #[test]
    fn javas_max_and_min_put_negative_zero_below_zero_and_let_nan_win() {
        for (a, b) in [(0.0, -0.0), (-0.0, 0.0)] {
            assert!(java_extreme(a, b, true).is_sign_positive());
            assert!(java_extreme(a, b, false).is_sign_negative());
        }
        assert!(java_extreme(f64::NAN, 1.0, true).is_nan());
        assert!(java_extreme(1.0, f64::NAN, false).is_nan());
        assert_eq!(java_extreme(2.0, 3.0, true), 3.0);
        assert_eq!(java_extreme(2.0, 3.0, false), 2.0);
    }
}
