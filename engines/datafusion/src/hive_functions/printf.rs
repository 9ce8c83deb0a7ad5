//! Hive's `printf(format, ...)` (Spark's `format_string`): Java's `String.format`, for the
//! conversions SQL values meet: `%s`, `%d`, `%f`, `%e`, `%E`, `%x`, `%X`, `%o`, `%c`, `%b`,
//! `%%`, `%n`, with an argument index (`%2$s`), the flags `-`, `0`, `+`, space and `,`, a
//! width and a precision. A conversion Java would refuse for the value (`%d` of a
//! `DOUBLE`), or one not listed (`%g`, `%t`), fails the query, naming it.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, StringBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ScalarUDF;

use super::math::{digits_text, push_digits, round_digits, shortest_digits, Rounding};
use super::HiveFunction;
use super::{bad_arguments, is_integer, is_string};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::computed("printf", printf_types, |_| Ok(DataType::Utf8), printf)
            .with_aliases(&["format_string"])
            .udf(),
    ]
}

fn printf_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let Some((format, values)) = types.split_first() else {
        return Err(bad_arguments(name, "(format, value, ...)", types));
    };
    if !(is_string(format) || format.is_null()) {
        return Err(bad_arguments(name, "(format, value, ...)", types));
    }
    let mut coerced = vec![DataType::Utf8];
    for t in values {
        coerced.push(match t {
            DataType::Null | DataType::Boolean => t.clone(),
            t if is_integer(t) => DataType::Int64,
            t if t.is_numeric() => DataType::Float64,
            // Dates, times and strings as their text, as Java's %s writes them.
            _ => DataType::Utf8,
        });
    }
    Ok(coerced)
}

fn printf(args: &[ArrayRef]) -> Result<ArrayRef> {
    let rows = args.first().map_or(0, |a| a.len());
    let mut out = StringBuilder::with_capacity(rows, rows * 16);
    for row in 0..rows {
        let values = args
            .iter()
            .map(|a| ScalarValue::try_from_array(a, row))
            .collect::<Result<Vec<_>>>()?;
        match &values[0] {
            ScalarValue::Utf8(Some(format)) => out.append_value(java_format(format, &values[1..])?),
            _ => out.append_null(),
        }
    }
    Ok(Arc::new(out.finish()))
}

/// One `%` specifier.
#[derive(Default)]
struct Spec {
    index: Option<usize>,
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    group: bool,
    width: usize,
    precision: Option<usize>,
}

/// `String.format(format, values)` for the conversions this module takes.
pub fn java_format(format: &str, values: &[ScalarValue]) -> Result<String> {
    let mut out = String::with_capacity(format.len() + 16);
    let mut chars = format.chars().peekable();
    let mut next = 0usize;
    let bad = |what: String| DataFusionError::Execution(format!("printf: {what}"));
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        let mut number = String::new();
        while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
            number.push(d);
            chars.next();
        }
        if chars.peek() == Some(&'$') && !number.is_empty() {
            chars.next();
            spec.index = number.parse::<usize>().ok().filter(|&i| i > 0);
            number.clear();
        }
        if number.is_empty() {
            while let Some(&flag) = chars.peek() {
                match flag {
                    '-' => spec.left = true,
                    '0' => spec.zero = true,
                    '+' => spec.plus = true,
                    ' ' => spec.space = true,
                    ',' => spec.group = true,
                    _ => break,
                }
                chars.next();
            }
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                number.push(d);
                chars.next();
            }
        } else if number.starts_with('0') {
            spec.zero = true;
        }
        spec.width = number.parse().unwrap_or(0);
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut digits = String::new();
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(d);
                chars.next();
            }
            spec.precision = Some(digits.parse().unwrap_or(0));
        }
        let conversion = chars
            .next()
            .ok_or_else(|| bad(format!("'{format}' ends inside a conversion")))?;
        let mut value = || -> Result<&ScalarValue> {
            let at = match spec.index {
                Some(i) => i - 1,
                None => {
                    next += 1;
                    next - 1
                }
            };
            values.get(at).ok_or_else(|| {
                bad(format!(
                    "'{format}' has no value for its argument {}",
                    at + 1
                ))
            })
        };
        let text = match conversion {
            '%' => "%".to_owned(),
            'n' => "\n".to_owned(),
            's' | 'S' => {
                let mut text = java_string(value()?);
                if let Some(precision) = spec.precision {
                    text = text.chars().take(precision).collect();
                }
                if conversion == 'S' {
                    text = text.to_uppercase();
                }
                text
            }
            'b' | 'B' => {
                let text = match value()? {
                    ScalarValue::Boolean(Some(b)) => b.to_string(),
                    v if v.is_null() => "false".to_owned(),
                    _ => "true".to_owned(),
                };
                if conversion == 'B' {
                    text.to_uppercase()
                } else {
                    text
                }
            }
            'c' => match value()? {
                ScalarValue::Int64(Some(code)) => u32::try_from(*code)
                    .ok()
                    .and_then(char::from_u32)
                    .map(String::from)
                    .ok_or_else(|| bad(format!("{code} is no character")))?,
                v if v.is_null() => "null".to_owned(),
                other => return Err(bad(format!("%c does not take {}", other.data_type()))),
            },
            'd' | 'x' | 'X' | 'o' => match value()? {
                ScalarValue::Int64(Some(n)) => integer(*n, conversion, &spec),
                v if v.is_null() => "null".to_owned(),
                other => {
                    return Err(bad(format!(
                        "%{conversion} takes an integer, not {}",
                        other.data_type()
                    )))
                }
            },
            'f' | 'e' | 'E' => match value()? {
                ScalarValue::Float64(Some(x)) => {
                    let precision = spec.precision.unwrap_or(6);
                    match conversion {
                        'f' => fixed(*x, precision, &spec),
                        'e' => scientific(*x, precision, &spec),
                        _ => scientific(*x, precision, &spec).to_uppercase(),
                    }
                }
                v if v.is_null() => "null".to_owned(),
                other => {
                    return Err(bad(format!(
                        "%{conversion} takes a floating-point number, not {}",
                        other.data_type()
                    )))
                }
            },
            other => return Err(bad(format!("the conversion %{other} is not supported"))),
        };
        out.push_str(&pad(text, &spec, conversion));
    }
    Ok(out)
}

/// A value as Java's `%s` writes it.
fn java_string(value: &ScalarValue) -> String {
    match value {
        v if v.is_null() => "null".to_owned(),
        ScalarValue::Utf8(Some(s)) => s.clone(),
        ScalarValue::Float64(Some(x)) => java_double(*x),
        other => other.to_string(),
    }
}

/// Java's `Double.toString`: the shortest digits, plain from 10^-3 to 10^7 (with at least
/// one decimal), else `d.dddE±n`.
pub fn java_double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    let magnitude = x.abs();
    if (1e-3..1e7).contains(&magnitude) {
        let text = format!("{x}");
        return if text.contains('.') {
            text
        } else {
            format!("{text}.0")
        };
    }
    let text = format!("{x:e}");
    let (mantissa, exponent) = text.split_once('e').expect("{:e} writes an exponent");
    let mantissa = if mantissa.contains('.') {
        mantissa.to_owned()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exponent}")
}

/// `%d`, `%x`, `%X`, `%o` of a `long`: hex and octal of a negative one are its two's
/// complement, as Java's.
fn integer(n: i64, conversion: char, spec: &Spec) -> String {
    match conversion {
        'x' => format!("{:x}", n as u64),
        'X' => format!("{:X}", n as u64),
        'o' => format!("{:o}", n as u64),
        _ => signed(n < 0, &n.unsigned_abs().to_string(), "", spec),
    }
}

/// `%f`: the shortest decimal digits of `x` rounded half up to `precision` decimals, as
/// Java's `Formatter`.
fn fixed(x: f64, precision: usize, spec: &Spec) -> String {
    if !x.is_finite() {
        return java_double(x);
    }
    // x is 0.DIGITS * 10^point.
    let (_, digits, point) = shortest_digits(x);
    let (digits, carried) = round_digits(&digits, point + precision as i64, Rounding::HalfUp);
    let point = if carried { point + 1 } else { point };
    let (integer, fraction) = digits_text(&digits, point, precision);
    signed(x.is_sign_negative(), &integer, &fraction, spec)
}

/// `%e`: one digit, `precision` decimals of the shortest decimal digits of `x` rounded half
/// up, and the exponent with its sign and at least two digits (`1.234568e+04`), as Java's
/// `Formatter`.
fn scientific(x: f64, precision: usize, spec: &Spec) -> String {
    if !x.is_finite() {
        return java_double(x);
    }
    let (digits, exponent) = if x == 0.0 {
        (vec![0], 0)
    } else {
        // x is 0.DIGITS * 10^point, so d.DDD * 10^(point - 1).
        let (_, digits, point) = shortest_digits(x);
        let (digits, carried) = round_digits(&digits, precision as i64 + 1, Rounding::HalfUp);
        (digits, point - 1 + i64::from(carried))
    };
    let (integer, fraction) = digits_text(&digits, 1, precision);
    let sign = if exponent < 0 { '-' } else { '+' };
    let mantissa = signed(x.is_sign_negative(), &integer, &fraction, spec);
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

/// A number's text with its sign (`+` or space as the flags ask) and grouping.
fn signed(negative: bool, integer: &str, fraction: &str, spec: &Spec) -> String {
    let mut out = String::new();
    if negative {
        out.push('-');
    } else if spec.plus {
        out.push('+');
    } else if spec.space {
        out.push(' ');
    }
    push_digits(&mut out, integer, fraction, spec.group);
    out
}

/// The text widened to the spec's width: spaces on the left (right with `-`), or zeros
/// after the sign with `0` for a number.
fn pad(text: String, spec: &Spec, conversion: char) -> String {
    let length = text.chars().count();
    if length >= spec.width {
        return text;
    }
    let fill = spec.width - length;
    if spec.left {
        return text + &" ".repeat(fill);
    }
    if spec.zero && matches!(conversion, 'd' | 'x' | 'X' | 'o' | 'f' | 'e' | 'E') {
        let sign = text.starts_with(['-', '+', ' ']) as usize;
        return format!("{}{}{}", &text[..sign], "0".repeat(fill), &text[sign..]);
    }
    " ".repeat(fill) + &text
}
