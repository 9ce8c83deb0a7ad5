//! Hive's arithmetic functions DataFusion lacks or takes otherwise: `pmod`, `mod`, `rand` with a
//! seed, `e`, `abs`, `negative`, `positive`, `shiftleft`, `shiftright`, `bround`,
//! `format_number`, `width_bucket`, `factorial`, and Spark's `try_divide`, `div`, `expm1`,
//! `log1p`, `rint`, `hypot`, `csc`, `sec`.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::Float64Array;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use datafusion::functions::expr_fn::nullif;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::type_coercion::binary::type_union_resolution;
use datafusion::logical_expr::{
    cast, lit, when, BinaryExpr, ColumnarValue, Documentation, Expr, Operator, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Builder, Int64Builder};
use datafusion::arrow::datatypes::{Decimal128Type, Float64Type, Int64Type};
use datafusion::error::DataFusionError;

use super::encoding::{integers_of, string_result};
use super::{bad_arguments, is_integer, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::rewrite("pmod", two_numbers, |t| Ok(t[0].clone()), pmod).udf(),
        HiveFunction::rewrite("mod", two_numbers, |t| Ok(t[0].clone()), remainder).udf(),
        HiveFunction::rewrite("sqrt", doubles_in, double, |a, _| {
            let x = a[0].clone();
            when(x.clone().lt(lit(0f64)), lit(f64::NAN))
                .otherwise(datafusion::functions::expr_fn::sqrt(x))
        })
        .udf(),
        HiveFunction::rewrite("ln", doubles_in, double, |a, _| {
            of_positive(&a[0], datafusion::functions::expr_fn::ln(a[0].clone()))
        })
        .udf(),
        HiveFunction::rewrite("log10", doubles_in, double, |a, _| {
            of_positive(&a[0], datafusion::functions::expr_fn::log10(a[0].clone()))
        })
        .udf(),
        HiveFunction::rewrite("log2", doubles_in, double, |a, _| {
            of_positive(&a[0], datafusion::functions::expr_fn::log2(a[0].clone()))
        })
        .udf(),
        HiveFunction::rewrite("log", doubles_in, double, logarithm).udf(),
        of_doubles("expm1", 1, |args| doubles(args, |x| x[0].exp_m1())),
        of_doubles("log1p", 1, |args| doubles(args, |x| x[0].ln_1p())),
        of_doubles("rint", 1, |args| doubles(args, |x| x[0].round_ties_even())),
        of_doubles("hypot", 2, |args| doubles(args, |x| x[0].hypot(x[1]))),
        // As Java computes them: `csc(0)` is Infinity.
        of_doubles("csc", 1, |args| doubles(args, |x| 1.0 / x[0].sin())),
        of_doubles("sec", 1, |args| doubles(args, |x| 1.0 / x[0].cos())),
        // Spark's `factorial(n)` is NULL outside 0..=20 (21! overflows a BIGINT), where
        // DataFusion's fails the query.
        HiveFunction::rewrite(
            "factorial",
            |name, types| match types {
                [n] if is_integer(n) => Ok(vec![DataType::Int64]),
                _ => Err(bad_arguments(name, "an integer", types)),
            },
            |_| Ok(DataType::Int64),
            |a, _| {
                let n = a[0].clone();
                when(
                    n.clone().between(lit(0i64), lit(20i64)),
                    datafusion::functions::math::factorial().call(vec![n]),
                )
                .end()
            },
        )
        .udf(),
        // Spark's `div(a, b)`, the function form of `a DIV b`.
        HiveFunction::rewrite(
            "div",
            two_numbers,
            |_| Ok(DataType::Int64),
            |a, t| {
                let [dividend, divisor] = <[Expr; 2]>::try_from(a).expect("two arguments");
                Ok(crate::hive_syntax::integer_divide(
                    dividend,
                    divisor,
                    is_integer(&t[0]),
                ))
            },
        )
        .udf(),
        HiveFunction::rewrite(
            "try_divide",
            |name, types| match types {
                [a, b] if (a.is_numeric() || a.is_null()) && (b.is_numeric() || b.is_null()) => {
                    Ok(vec![DataType::Float64; 2])
                }
                _ => Err(bad_arguments(name, "two numbers", types)),
            },
            |_| Ok(DataType::Float64),
            try_divide,
        )
        .udf(),
        ScalarUDF::new_from_impl(Rand::new(false)),
        ScalarUDF::new_from_impl(Rand::new(true)),
        ScalarUDF::new_from_impl(Uniform::default()),
        ScalarUDF::new_from_impl(RandStr::default()),
        HiveFunction::rewrite(
            "e",
            |name, types| match types {
                [] => Ok(vec![]),
                _ => Err(bad_arguments(name, "no argument", types)),
            },
            |_| Ok(DataType::Float64),
            |_, _| Ok(lit(std::f64::consts::E)),
        )
        .with_signature(Signature::nullary(Volatility::Immutable))
        .udf(),
        HiveFunction::rewrite(
            "negative",
            one_number,
            |t| Ok(t[0].clone()),
            // An integer's negation wraps, as Spark's does (`-x` of the smallest `INT` is
            // itself): `0 - x` wraps where DataFusion's negation of a constant fails.
            |a, t| match is_integer(&t[0]) {
                true => Ok(zero_of(&t[0]) - a[0].clone()),
                false => Ok(-a[0].clone()),
            },
        )
        .udf(),
        // Spark's `abs` of the smallest integer of its type is that integer (Java's
        // `Math.abs`), where DataFusion's fails the query on the overflow.
        HiveFunction::rewrite(
            "abs",
            one_number,
            |t| Ok(t[0].clone()),
            |a, t| {
                let x = a[0].clone();
                if is_integer(&t[0]) {
                    // `0 - x` wraps, as DataFusion's integer arithmetic does.
                    when(x.clone().lt(zero_of(&t[0])), zero_of(&t[0]) - x.clone()).otherwise(x)
                } else {
                    Ok(datafusion::functions::math::abs().call(vec![x]))
                }
            },
        )
        .udf(),
        HiveFunction::rewrite(
            "positive",
            one_number,
            |t| Ok(t[0].clone()),
            |a, _| Ok(a[0].clone()),
        )
        .udf(),
        // Spark 4's `zeroifnull(x)` and `nullifzero(x)`: `coalesce(x, 0)` and `nullif(x, 0)`
        // in `x`'s type.
        HiveFunction::rewrite(
            "zeroifnull",
            one_number,
            |t| Ok(t[0].clone()),
            |a, t| {
                let value = a[0].clone();
                Ok(datafusion::functions::expr_fn::coalesce(vec![
                    value,
                    zero_of(&t[0]),
                ]))
            },
        )
        .udf(),
        HiveFunction::rewrite(
            "nullifzero",
            one_number,
            |t| Ok(t[0].clone()),
            |a, t| Ok(nullif(a[0].clone(), zero_of(&t[0]))),
        )
        .udf(),
        HiveFunction::rewrite(
            "shiftleft",
            shift_types,
            |t| Ok(t[0].clone()),
            |a, _| shift(a, Operator::BitwiseShiftLeft),
        )
        .udf(),
        HiveFunction::rewrite(
            "shiftright",
            shift_types,
            |t| Ok(t[0].clone()),
            |a, _| shift(a, Operator::BitwiseShiftRight),
        )
        .udf(),
        HiveFunction::computed("bround", bround_types, |t| Ok(t[0].clone()), bround).udf(),
        HiveFunction::computed(
            "format_number",
            format_number_types,
            |_| Ok(DataType::Utf8),
            format_number,
        )
        .udf(),
        HiveFunction::computed(
            "width_bucket",
            width_bucket_types,
            |_| Ok(DataType::Int64),
            width_bucket,
        )
        .udf(),
    ]
}

fn width_bucket_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let numeric = |t: &DataType| t.is_numeric() || t.is_null();
    match types {
        [v, min, max, n] if numeric(v) && numeric(min) && numeric(max) && is_integer(n) => {
            Ok(vec![
                DataType::Float64,
                DataType::Float64,
                DataType::Float64,
                DataType::Int64,
            ])
        }
        _ => Err(bad_arguments(
            name,
            "(value, min, max, number of buckets)",
            types,
        )),
    }
}

/// `width_bucket(v, min, max, n)`: which of `n` equal buckets from `min` to `max` holds
/// `v`, from 1; 0 below the range and `n + 1` from its end on (`min > max` numbers the
/// buckets downwards), as Hive's and Spark's. Where Hive fails the query (`n` not
/// positive, `min = max`) the answer is NULL, as Spark's, and so it is for a NaN or an
/// infinite bound.
fn width_bucket(args: &[ArrayRef]) -> Result<ArrayRef> {
    let doubles = |a: &ArrayRef| a.as_primitive::<Float64Type>().iter().collect::<Vec<_>>();
    let (values, mins, maxes) = (doubles(&args[0]), doubles(&args[1]), doubles(&args[2]));
    let counts = integers_of(&args[3]);
    let mut out = Int64Builder::with_capacity(values.len());
    for (((v, min), max), n) in values.into_iter().zip(mins).zip(maxes).zip(counts) {
        out.append_option(match (v, min, max, n) {
            (Some(v), Some(min), Some(max), Some(n)) => bucket(v, min, max, n),
            _ => None,
        });
    }
    Ok(Arc::new(out.finish()))
}

/// Spark's `WidthBucket.computeBucketNumber`, with its arithmetic in its order.
fn bucket(v: f64, min: f64, max: f64, n: i64) -> Option<i64> {
    if n <= 0 || n == i64::MAX || v.is_nan() || min == max || !min.is_finite() || !max.is_finite() {
        return None;
    }
    let (lower, upper) = (min.min(max), min.max(max));
    Some(if min < max {
        if v < lower {
            0
        } else if v >= upper {
            n + 1
        } else {
            (n as f64 * (v - lower) / (upper - lower)) as i64 + 1
        }
    } else if v > upper {
        0
    } else if v <= lower {
        n + 1
    } else {
        (n as f64 * (upper - v) / (upper - lower)) as i64 + 1
    })
}

/// A number as `bround` and `format_number` take it: an integer as a `BIGINT`, a decimal
/// (128 bits) as it is, any other as a `DOUBLE`.
fn number_type(t: &DataType) -> Option<DataType> {
    match t {
        t if is_integer(t) && !t.is_null() => Some(DataType::Int64),
        DataType::Decimal128(..) => Some(t.clone()),
        t if t.is_numeric() || t.is_null() => Some(DataType::Float64),
        _ => None,
    }
}

fn bround_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let number = types.first().and_then(|t| match number_type(t) {
        // A decimal is rounded as a DOUBLE: the scale of the answer would depend on d.
        Some(DataType::Decimal128(..)) => Some(DataType::Float64),
        other => other,
    });
    match (number, types) {
        (Some(number), [_]) => Ok(vec![number]),
        (Some(number), [_, d]) if is_integer(d) => Ok(vec![number, DataType::Int64]),
        _ => Err(bad_arguments(name, "(number[, decimal places])", types)),
    }
}

/// `bround(x[, d])`: `x` rounded to `d` decimal places (0 by default; negative rounds to
/// tens, hundreds, ...) half to even, as Hive's: a `DOUBLE` through its shortest decimal
/// form (Java's `BigDecimal.valueOf`), so `bround(2.675, 2)` is 2.68.
fn bround(args: &[ArrayRef]) -> Result<ArrayRef> {
    let places: Vec<Option<i64>> = match args.get(1) {
        Some(d) => integers_of(d),
        None => vec![Some(0); args[0].len()],
    };
    Ok(match args[0].data_type() {
        DataType::Int64 => {
            let values = args[0].as_primitive::<Int64Type>();
            let mut out = Int64Builder::with_capacity(values.len());
            for (x, d) in values.iter().zip(places) {
                out.append_option(x.zip(d).map(|(x, d)| bround_integer(x, d)));
            }
            std::sync::Arc::new(out.finish()) as ArrayRef
        }
        DataType::Float64 => {
            let values = args[0].as_primitive::<Float64Type>();
            let mut out = Float64Builder::with_capacity(values.len());
            for (x, d) in values.iter().zip(places) {
                out.append_option(x.zip(d).map(|(x, d)| bround_double(x, d)));
            }
            std::sync::Arc::new(out.finish())
        }
        other => {
            return Err(DataFusionError::Internal(format!(
                "bround of a {other} array"
            )))
        }
    })
}

/// An integer rounded half to even to `-places` tens (unchanged for `places` >= 0).
pub fn bround_integer(x: i64, places: i64) -> i64 {
    if places >= 0 {
        return x;
    }
    if places < -18 {
        return 0;
    }
    let unit = 10i128.pow(places.unsigned_abs() as u32);
    let x = i128::from(x);
    let (mut quotient, remainder) = (x / unit, x % unit);
    let twice = remainder.abs() * 2;
    if twice > unit || (twice == unit && quotient % 2 != 0) {
        quotient += x.signum();
    }
    i64::try_from(quotient * unit).unwrap_or(if x < 0 { i64::MIN } else { i64::MAX })
}

/// A `DOUBLE`'s shortest decimal digits and where the point goes: `x` is
/// `0.DIGITS * 10^point`, the sign apart.
pub(crate) fn shortest_digits(x: f64) -> (bool, Vec<u8>, i64) {
    let text = format!("{:e}", x.abs());
    let (mantissa, exponent) = text.split_once('e').expect("{:e} writes an exponent");
    let digits = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    let exponent: i64 = exponent.parse().expect("an integer exponent");
    (x.is_sign_negative(), digits, exponent + 1)
}

/// How a digit string drops its tail.
#[derive(Clone, Copy)]
pub(crate) enum Rounding {
    /// A dropped 5 or more rounds up (Java's `Formatter`, `printf`).
    HalfUp,
    /// A dropped exact half rounds to the even neighbour (`bround`, `format_number`).
    HalfEven,
}

/// The integer and fraction text of `0.DIGITS * 10^point` with `places` decimals: `0` for
/// no integer digit, zeros where the digits run out.
pub(super) fn digits_text(digits: &[u8], point: i64, places: usize) -> (String, String) {
    let digit_at = |i: i64| {
        let digit = usize::try_from(i).ok().and_then(|i| digits.get(i)).copied();
        char::from(b'0' + digit.unwrap_or(0))
    };
    let integer = if point > 0 {
        (0..point).map(digit_at).collect()
    } else {
        "0".to_owned()
    };
    let fraction = (point..point + places as i64).map(digit_at).collect();
    (integer, fraction)
}

/// Decimal digits rounded to their first `keep`: the digits kept, and whether rounding up
/// carried into a new leading digit.
pub(crate) fn round_digits(digits: &[u8], keep: i64, rounding: Rounding) -> (Vec<u8>, bool) {
    if keep >= digits.len() as i64 {
        return (digits.to_vec(), false);
    }
    if keep < 0 {
        return (Vec::new(), false);
    }
    let keep = keep as usize;
    let mut kept = digits[..keep].to_vec();
    let rest = &digits[keep..];
    let up = match rounding {
        Rounding::HalfUp => rest[0] >= 5,
        Rounding::HalfEven => {
            let last_odd = kept.last().is_some_and(|d| d % 2 == 1);
            rest[0] > 5 || (rest[0] == 5 && (rest[1..].iter().any(|&d| d > 0) || last_odd))
        }
    };
    if !up {
        return (kept, false);
    }
    for digit in kept.iter_mut().rev() {
        if *digit < 9 {
            *digit += 1;
            return (kept, false);
        }
        *digit = 0;
    }
    kept.insert(0, 1);
    (kept, true)
}

/// A `DOUBLE` rounded half to even to `places` decimal places of its shortest decimal form.
pub fn bround_double(x: f64, places: i64) -> f64 {
    round_double(x, places, Rounding::HalfEven)
}

/// A `DOUBLE` rounded to `places` decimal places of its shortest decimal form (Java's
/// `BigDecimal.valueOf`), as Hive's and Spark's `round` and `bround`; a zero is 0.0.
pub(super) fn round_double(x: f64, places: i64, rounding: Rounding) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if x == 0.0 {
        return 0.0;
    }
    let (negative, digits, point) = shortest_digits(x);
    let (kept, carried) = round_digits(&digits, point.saturating_add(places), rounding);
    if kept.iter().all(|&d| d == 0) {
        return 0.0;
    }
    let point = if carried { point + 1 } else { point };
    let digits: String = kept.iter().map(|d| char::from(b'0' + d)).collect();
    let text = format!("{}0.{digits}e{point}", if negative { "-" } else { "" });
    text.parse().expect("a decimal number parses")
}

fn format_number_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [x, d] if is_integer(d) => match number_type(x) {
            Some(number) => Ok(vec![number, DataType::Int64]),
            None => Err(bad_arguments(name, "(number, decimal places)", types)),
        },
        [x, d] if super::is_string(d) => match number_type(x) {
            Some(number) => Ok(vec![number, DataType::Utf8]),
            None => Err(bad_arguments(name, "(number, pattern)", types)),
        },
        _ => Err(bad_arguments(name, "(number, decimal places)", types)),
    }
}

/// `format_number(x, d)`: `x` with `d` decimal places, rounded half to even, and its
/// integer digits grouped by commas (`1,234,567.89`), as Hive's `DecimalFormat`; NULL for a
/// negative `d`. With a pattern, `format_number(x, '#,###.00')`, [`super::decimal_format`].
fn format_number(args: &[ArrayRef]) -> Result<ArrayRef> {
    if args[1].data_type() == &DataType::Utf8 {
        return super::decimal_format::format_number(args);
    }
    let places = integers_of(&args[1]);
    let values: Vec<Option<String>> = match args[0].data_type() {
        DataType::Int64 => args[0]
            .as_primitive::<Int64Type>()
            .iter()
            .zip(places)
            .map(|(x, d)| {
                let (x, d) = (x?, usize::try_from(d?).ok()?);
                Some(grouped(
                    x < 0,
                    &x.unsigned_abs().to_string(),
                    &"0".repeat(d),
                ))
            })
            .collect(),
        DataType::Float64 => args[0]
            .as_primitive::<Float64Type>()
            .iter()
            .zip(places)
            .map(|(x, d)| Some(format_double(x?, usize::try_from(d?).ok()?)))
            .collect(),
        DataType::Decimal128(_, scale) => {
            let scale = *scale;
            args[0]
                .as_primitive::<Decimal128Type>()
                .iter()
                .zip(places)
                .map(|(x, d)| Some(format_decimal(x?, scale, usize::try_from(d?).ok()?)))
                .collect()
        }
        other => {
            return Err(DataFusionError::Internal(format!(
                "format_number of a {other} array"
            )))
        }
    };
    Ok(string_result(values.into_iter()))
}

/// A number's text from its sign, integer digits and fraction digits, the integer digits
/// grouped by three.
fn grouped(negative: bool, integer: &str, fraction: &str) -> String {
    let mut out = String::with_capacity(integer.len() * 4 / 3 + fraction.len() + 2);
    if negative {
        out.push('-');
    }
    push_digits(&mut out, integer, fraction, true);
    out
}

/// Appends `integer`, with a `,` between groups of three digits when `group`, then `.` and
/// `fraction` when there is one (format_number's and printf's `,` flag alike).
pub fn push_digits(out: &mut String, integer: &str, fraction: &str, group: bool) {
    for (i, c) in integer.chars().enumerate() {
        if group && i > 0 && (integer.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if !fraction.is_empty() {
        out.push('.');
        out.push_str(fraction);
    }
}

/// A `DOUBLE` with `places` decimals: its exact binary value rounded half to even, as
/// Java's `DecimalFormat` rounds it.
pub fn format_double(x: f64, places: usize) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "∞" } else { "-∞" }.to_owned();
    }
    let text = format!("{:.*}", places, x.abs());
    let (integer, fraction) = text.split_once('.').unwrap_or((text.as_str(), ""));
    // Java keeps the sign of a negative number rounded to zero (`-0.00`).
    grouped(x.is_sign_negative(), integer, fraction)
}

/// A decimal (`value` at `scale`) with `places` decimals, rounded half to even.
pub fn format_decimal(value: i128, scale: i8, places: usize) -> String {
    let digits: Vec<u8> = value
        .unsigned_abs()
        .to_string()
        .bytes()
        .map(|b| b - b'0')
        .collect();
    // `value` is 0.DIGITS * 10^point.
    let point = digits.len() as i64 - i64::from(scale);
    let (kept, carried) = round_digits(&digits, point + places as i64, Rounding::HalfEven);
    let point = if carried { point + 1 } else { point };
    let (integer, fraction) = digits_text(&kept, point, places);
    grouped(value < 0, &integer, &fraction)
}

/// 0 in the type `t`.
fn zero_of(t: &DataType) -> Expr {
    cast(lit(0i64), t.clone())
}

fn one_number(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if t.is_numeric() => Ok(vec![t.clone()]),
        // `-x` of an interval is `negative(x)` (`crate::spark_casts::signed_strings`).
        [t @ (DataType::Interval(_) | DataType::Duration(_))] => Ok(vec![t.clone()]),
        [t] if t.is_null() => Ok(vec![DataType::Int32]),
        _ => Err(bad_arguments(name, "a number", types)),
    }
}

/// `shiftleft(a, b)`, `shiftright(a, b)`: `a` an `INT` or a `BIGINT` (smaller integers are
/// `INT`s, as in Hive), shifted by `b` bits.
fn shift_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [a, b] if is_integer(a) && is_integer(b) => {
            let t = if matches!(a, DataType::Int64 | DataType::UInt32 | DataType::UInt64) {
                DataType::Int64
            } else {
                DataType::Int32
            };
            Ok(vec![t.clone(), t])
        }
        _ => Err(bad_arguments(
            name,
            "an integer and a number of bits",
            types,
        )),
    }
}

fn shift(args: Vec<Expr>, op: Operator) -> Result<Expr> {
    let [a, b] = <[Expr; 2]>::try_from(args).expect("two arguments");
    Ok(Expr::BinaryExpr(BinaryExpr::new(
        Box::new(a),
        op,
        Box::new(b),
    )))
}

/// One or two numbers, as `DOUBLE`s.
fn doubles_in(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [_] | [_, _] if types.iter().all(|t| t.is_numeric() || t.is_null()) => {
            Ok(vec![DataType::Float64; types.len()])
        }
        _ => Err(bad_arguments(name, "a number", types)),
    }
}

fn double(_: &[DataType]) -> Result<DataType> {
    Ok(DataType::Float64)
}

/// `value` where `x` is positive; NULL where it is 0 or less, as Hive's and Spark's
/// logarithms answer (DataFusion's give NaN and -Infinity).
fn of_positive(x: &Expr, value: Expr) -> Result<Expr> {
    when(x.clone().gt(lit(0f64)), value).otherwise(lit(ScalarValue::Float64(None)))
}

/// `log(x)`, the natural logarithm as in Hive and Spark (DataFusion's is base 10), and
/// `log(base, x)`; NULL for a base or an `x` of 0 or less.
fn logarithm(args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    use datafusion::functions::expr_fn::ln;
    match <[Expr; 2]>::try_from(args) {
        Ok([base, x]) => of_positive(&base, of_positive(&x, ln(x.clone()) / ln(base.clone()))?),
        Err(args) => of_positive(&args[0], ln(args[0].clone())),
    }
}

/// Spark's `mod(a, b)`: `a % b`, the sign of `a`'s (`mod(-7, 3)` is -1); NULL when `b` is 0.
fn remainder(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let [a, b] = <[Expr; 2]>::try_from(args).expect("two arguments");
    Ok(a % nullif(b, lit(ScalarValue::new_zero(&types[1])?)))
}

/// `pmod(a, b)`: `a` modulo `b`, never negative for a positive `b` (`pmod(-7, 3)` is 2
/// where `-7 % 3` is -1); NULL when `b` is 0, as in Hive, not a division error.
fn pmod(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let [a, b] = <[Expr; 2]>::try_from(args).expect("two arguments");
    let divisor = nullif(b, lit(ScalarValue::new_zero(&types[1])?));
    Ok(((a % divisor.clone()) + divisor.clone()) % divisor)
}

/// Spark's functions of `DOUBLE`s that DataFusion lacks (`expm1`, `log1p`, `rint`, `hypot`):
/// `arity` numbers, each read as a `DOUBLE`.
fn of_doubles(name: &'static str, arity: usize, compute: super::ComputeFn) -> ScalarUDF {
    let coerce = match arity {
        1 => |name: &str, types: &[DataType]| match types {
            [t] if t.is_numeric() || t.is_null() => Ok(vec![DataType::Float64]),
            _ => Err(bad_arguments(name, "a number", types)),
        },
        _ => |name: &str, types: &[DataType]| match types {
            [a, b] if (a.is_numeric() || a.is_null()) && (b.is_numeric() || b.is_null()) => {
                Ok(vec![DataType::Float64; 2])
            }
            _ => Err(bad_arguments(name, "two numbers", types)),
        },
    };
    HiveFunction::computed(name, coerce, |_| Ok(DataType::Float64), compute).udf()
}

/// `f` of each row's `DOUBLE` arguments; NULL when one is NULL.
fn doubles(args: &[ArrayRef], f: fn(&[f64]) -> f64) -> Result<ArrayRef> {
    let columns: Vec<&Float64Array> = args
        .iter()
        .map(|a| a.as_primitive::<Float64Type>())
        .collect();
    let mut out = Float64Builder::new();
    let mut row_values = Vec::with_capacity(columns.len());
    for row in 0..args[0].len() {
        row_values.clear();
        row_values.extend(
            columns
                .iter()
                .map(|c| (!c.is_null(row)).then(|| c.value(row))),
        );
        if row_values.iter().all(Option::is_some) {
            let values: Vec<f64> = row_values.iter().flatten().copied().collect();
            out.append_value(f(&values));
        } else {
            out.append_null();
        }
    }
    Ok(Arc::new(out.finish()))
}

/// `try_divide(a, b)` (Spark's): `a / b` as a `DOUBLE`, NULL when `b` is 0, as the engine's
/// `/` divides.
fn try_divide(args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    let [a, b] = <[Expr; 2]>::try_from(args).expect("two arguments");
    Ok(a / nullif(b, lit(0.0)))
}

fn two_numbers(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let numeric = |t: &DataType| t.is_numeric() || t.is_null();
    match types {
        [a, b] if numeric(a) && numeric(b) => {
            let common = type_union_resolution(types)
                .filter(|t| t.is_numeric())
                .unwrap_or(DataType::Int64);
            Ok(vec![common.clone(), common])
        }
        _ => Err(bad_arguments(name, "two numbers", types)),
    }
}

/// `rand([seed])`, a `DOUBLE` in [0, 1). Without a seed, DataFusion's `random()`. With one,
/// Hive's: the numbers of a `java.util.Random(seed)`, one per row in the order rows are
/// computed, so a query gives the same numbers on every run (`rand(42)` is
/// 0.7275636800328681 on the first row, as in Hive) as long as its rows are computed in
/// one order (one partition, as one Hive mapper). A seed read from a column is its first
/// row's, as in Hive; NULL is 0.
///
/// `randn([seed])` (Spark's) is the same with the standard normal distribution: the numbers
/// of `java.util.Random(seed).nextGaussian()` (Spark's own generator is another), an unseeded
/// call seeded at random.
///
/// The registered function has no generator: the optimizer gives each seeded call, in each
/// run of a query, a function with its own ([`ScalarUDFImpl::simplify`]). A call that
/// reaches execution un-simplified (the optimizer turned off) starts the sequence again on
/// each batch.
#[derive(Debug)]
pub struct Rand {
    signature: Signature,
    /// `randn`'s normal numbers, not `rand`'s uniform ones.
    gaussian: bool,
    /// The generator of one call in one run.
    generator: Draws,
}

impl Rand {
    fn new(gaussian: bool) -> Self {
        Self {
            signature: Signature::one_of(
                vec![
                    TypeSignature::Nullary,
                    TypeSignature::Uniform(1, vec![DataType::Int64]),
                ],
                Volatility::Volatile,
            ),
            gaussian,
            generator: Draws::default(),
        }
    }

    /// A seed for an unseeded `randn`, drawn at random.
    fn random_seed() -> i64 {
        uuid::Uuid::new_v4().as_u128() as i64
    }
}

/// The generator of one seeded call (of `rand`, `randn`, `randstr`) in one run of a query,
/// made when its first batch is computed, so that the numbers go on from batch to batch; none
/// in the registered function, which the optimizer replaces by a call with its own
/// ([`Draws::of_one_call`]). One call's function is equal to itself alone.
#[derive(Debug, Default, Clone)]
struct Draws(Option<Arc<Mutex<Option<JavaRandom>>>>);

impl Draws {
    fn of_one_call() -> Self {
        Self(Some(Arc::new(Mutex::new(None))))
    }

    fn belongs_to_one_call(&self) -> bool {
        self.0.is_some()
    }

    /// `draw` with this call's generator (a fresh one of `seed` for a registered function,
    /// which starts the sequence again on each batch).
    fn with<T>(&self, seed: i64, draw: impl FnOnce(&mut JavaRandom) -> T) -> T {
        match &self.0 {
            // Never held across an await: a batch's numbers are drawn at once.
            Some(generator) => {
                let mut generator = generator.lock().unwrap_or_else(|e| e.into_inner());
                draw(generator.get_or_insert_with(|| JavaRandom::new(seed)))
            }
            None => draw(&mut JavaRandom::new(seed)),
        }
    }
}

impl PartialEq for Draws {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for Draws {}

impl Hash for Draws {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.as_ref().map(Arc::as_ptr).hash(state);
    }
}

impl PartialEq for Rand {
    fn eq(&self, other: &Self) -> bool {
        self.gaussian == other.gaussian && self.generator == other.generator
    }
}

impl Eq for Rand {}

impl Hash for Rand {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.gaussian.hash(state);
        self.generator.hash(state);
    }
}

impl ScalarUDFImpl for Rand {
    fn name(&self) -> &str {
        if self.gaussian {
            "randn"
        } else {
            "rand"
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name())
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn simplify(&self, args: Vec<Expr>, _: &SimplifyContext) -> Result<ExprSimplifyResult> {
        if self.generator.belongs_to_one_call() {
            return Ok(ExprSimplifyResult::Original(args));
        }
        if args.is_empty() && !self.gaussian {
            return Ok(ExprSimplifyResult::Simplified(
                datafusion::functions::math::random().call(args),
            ));
        }
        let args = if args.is_empty() {
            vec![datafusion::logical_expr::lit(Self::random_seed())]
        } else {
            args
        };
        let seeded = Rand {
            signature: self.signature.clone(),
            gaussian: self.gaussian,
            generator: Draws::of_one_call(),
        };
        Ok(ExprSimplifyResult::Simplified(
            ScalarUDF::new_from_impl(seeded).call(args),
        ))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let seed = match args.args.first() {
            Some(seed) => seed.clone(),
            None if self.gaussian => {
                ColumnarValue::from(ScalarValue::Int64(Some(Self::random_seed())))
            }
            None => return datafusion::functions::math::random().invoke_with_args(args),
        };
        let rows = args.number_rows;
        if rows == 0 {
            return Ok(ColumnarValue::Array(Arc::new(Float64Array::from(
                Vec::<f64>::new(),
            ))));
        }
        let seed = match &seed {
            ColumnarValue::Scalar(value) => value.clone(),
            ColumnarValue::Array(values) => ScalarValue::try_from_array(values, 0)?,
        };
        let seed = match seed {
            ScalarValue::Int64(Some(seed)) => seed,
            _ => 0,
        };
        let gaussian = self.gaussian;
        let fill = |generator: &mut JavaRandom| {
            (0..rows)
                .map(|_| {
                    if gaussian {
                        generator.next_gaussian()
                    } else {
                        generator.next_double()
                    }
                })
                .collect::<Float64Array>()
        };
        let values = self.generator.with(seed, fill);
        Ok(ColumnarValue::Array(Arc::new(values)))
    }
}

/// `uniform(min, max[, seed])` (Spark's): a random number from `min` to `max` on each row,
/// an integer when both bounds are (cut toward zero, as Spark's cast cuts it), else a
/// `DOUBLE`; with a seed, [`Rand`]'s numbers of that seed, so a query draws the same ones
/// on every run. Spark draws from another generator: the numbers are not Spark's. Planned
/// as `min + rand(seed) * (max - min)`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Uniform {
    signature: Signature,
}

impl Default for Uniform {
    fn default() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Volatile),
        }
    }
}

impl ScalarUDFImpl for Uniform {
    fn name(&self) -> &str {
        "uniform"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name())
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let bounds = types.len() >= 2 && types[..2].iter().all(|t| t.is_numeric() || t.is_null());
        match types.get(2) {
            _ if !bounds || types.len() > 3 => Err(bad_arguments(
                self.name(),
                "(min, max[, seed]): two numbers and an integer seed",
                types,
            )),
            Some(seed) if !is_integer(seed) => Err(bad_arguments(
                self.name(),
                "an integer seed as the third argument",
                types,
            )),
            seed => {
                let bound = self.return_type(&types[..2])?;
                let mut coerced = vec![bound.clone(), bound];
                coerced.extend(seed.map(|_| DataType::Int64));
                Ok(coerced)
            }
        }
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        Ok(match &types[..2.min(types.len())] {
            [DataType::Int32 | DataType::Int16 | DataType::Int8, DataType::Int32 | DataType::Int16 | DataType::Int8] => {
                DataType::Int32
            }
            [a, b] if is_integer(a) && is_integer(b) => DataType::Int64,
            _ => DataType::Float64,
        })
    }

    fn simplify(&self, mut args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        let returns = info.get_data_type(&args[0])?;
        let seed = args.split_off(2);
        let [min, max]: [Expr; 2] = args.try_into().expect("two bounds, by coerce_types");
        let double = |e: Expr| cast(e, DataType::Float64);
        let drawn = ScalarUDF::new_from_impl(Rand::new(false)).call(seed);
        let number = double(min.clone()) + drawn * (double(max) - double(min));
        Ok(ExprSimplifyResult::Simplified(cast(number, returns)))
    }

    /// Where the optimizer did not plan it as `rand`'s arithmetic (inside `typeof`), each
    /// batch draws from the seed anew.
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let arrays = (args.args.iter())
            .map(|arg| arg.to_array(rows))
            .collect::<Result<Vec<_>>>()?;
        let bound = |i: usize| datafusion::arrow::compute::cast(&arrays[i], &DataType::Float64);
        let (min, max) = (bound(0)?, bound(1)?);
        let (min, max) = (
            min.as_primitive::<Float64Type>(),
            max.as_primitive::<Float64Type>(),
        );
        let mut generator = JavaRandom::new(seed_of(arrays.get(2)));
        let drawn: Float64Array = (0..rows)
            .map(|row| {
                let fraction = generator.next_double();
                (min.is_valid(row) && max.is_valid(row))
                    .then(|| min.value(row) + fraction * (max.value(row) - min.value(row)))
            })
            .collect();
        let returns = args.return_field.data_type();
        Ok(ColumnarValue::Array(datafusion::arrow::compute::cast(
            &drawn, returns,
        )?))
    }
}

/// The seed of `uniform`'s and `randstr`'s draws: the argument's first value (NULL is 0, as
/// for `rand`), or a random one without it.
fn seed_of(seed: Option<&ArrayRef>) -> i64 {
    match seed {
        Some(seed) if seed.is_valid(0) => seed.as_primitive::<Int64Type>().value(0),
        Some(_) => 0,
        None => Rand::random_seed(),
    }
}

/// `randstr(length[, seed])` (Spark's): a random string of `length` letters and digits on
/// each row; with a seed the same strings on every run, as [`Rand`] draws them (Spark's
/// generator is another: the strings are not Spark's). A NULL length gives `''`, a negative
/// one fails the query, as in Spark.
#[derive(Debug, PartialEq, Eq, Hash)]
struct RandStr {
    signature: Signature,
    generator: Draws,
}

impl Default for RandStr {
    fn default() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Volatile),
            generator: Draws::default(),
        }
    }
}

/// The characters of `randstr`.
const ALPHANUMERIC: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

impl ScalarUDFImpl for RandStr {
    fn name(&self) -> &str {
        "randstr"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name())
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        match types {
            [length] | [length, _] if types.iter().all(is_integer) && is_integer(length) => {
                Ok(vec![DataType::Int64; types.len()])
            }
            _ => Err(bad_arguments(
                self.name(),
                "(length[, seed]): integers",
                types,
            )),
        }
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    /// Each call its own generator, seeded at random without a seed.
    fn simplify(&self, mut args: Vec<Expr>, _: &SimplifyContext) -> Result<ExprSimplifyResult> {
        if self.generator.belongs_to_one_call() {
            return Ok(ExprSimplifyResult::Original(args));
        }
        if args.len() == 1 {
            args.push(lit(Rand::random_seed()));
        }
        let seeded = RandStr {
            signature: self.signature.clone(),
            generator: Draws::of_one_call(),
        };
        Ok(ExprSimplifyResult::Simplified(
            ScalarUDF::new_from_impl(seeded).call(args),
        ))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let arrays = (args.args.iter())
            .map(|arg| arg.to_array(rows))
            .collect::<Result<Vec<_>>>()?;
        let lengths = arrays[0].as_primitive::<Int64Type>();
        let strings = self.generator.with(seed_of(arrays.get(1)), |generator| {
            (0..rows)
                .map(|row| {
                    let length = if lengths.is_valid(row) {
                        lengths.value(row)
                    } else {
                        0
                    };
                    let length = usize::try_from(length).map_err(|_| {
                        DataFusionError::Execution(format!(
                            "randstr: the length must be 0 or more; it is {length}"
                        ))
                    })?;
                    Ok(Some(
                        (0..length)
                            .map(|_| char::from(ALPHANUMERIC[generator.next_int(62) as usize]))
                            .collect::<String>(),
                    ))
                })
                .collect::<Result<Vec<_>>>()
        })?;
        Ok(ColumnarValue::Array(string_result(strings.into_iter())))
    }
}

/// `java.util.Random`'s linear congruential generator, which Hive's `rand(seed)` draws from.
#[derive(Debug)]
pub struct JavaRandom {
    state: u64,
    /// The second of the pair of normal numbers `nextGaussian` draws at once.
    next_gaussian: Option<f64>,
}

impl JavaRandom {
    const MULTIPLIER: u64 = 0x5_DEEC_E66D;
    const ADDEND: u64 = 0xB;
    const MASK: u64 = (1 << 48) - 1;

    pub fn new(seed: i64) -> Self {
        Self {
            state: (seed as u64 ^ Self::MULTIPLIER) & Self::MASK,
            next_gaussian: None,
        }
    }

    /// The next `bits` random bits (`Random.next`).
    fn next(&mut self, bits: u32) -> u64 {
        self.state = self
            .state
            .wrapping_mul(Self::MULTIPLIER)
            .wrapping_add(Self::ADDEND)
            & Self::MASK;
        self.state >> (48 - bits)
    }

    /// `Random.nextInt(bound)`: a number from 0 to `bound` (exclusive), each as likely.
    pub fn next_int(&mut self, bound: u32) -> u32 {
        let bound = u64::from(bound);
        if bound.is_power_of_two() {
            return ((bound * self.next(31)) >> 31) as u32;
        }
        loop {
            let drawn = self.next(31);
            let value = drawn % bound;
            // Java's `u - r + m < 0`: a draw from the last, partial run of `bound` is drawn again.
            if drawn - value + (bound - 1) < (1 << 31) {
                return value as u32;
            }
        }
    }

    /// `Random.nextDouble`: 53 random bits as a fraction.
    pub fn next_double(&mut self) -> f64 {
        let bits = (self.next(26) << 27) + self.next(27);
        bits as f64 / (1u64 << 53) as f64
    }

    /// `Random.nextGaussian`: Marsaglia's polar method, two normal numbers from each pair of
    /// doubles that falls inside the unit circle, the second kept for the next call.
    pub fn next_gaussian(&mut self) -> f64 {
        if let Some(kept) = self.next_gaussian.take() {
            return kept;
        }
        loop {
            let v1 = 2.0 * self.next_double() - 1.0;
            let v2 = 2.0 * self.next_double() - 1.0;
            let s = v1 * v1 + v2 * v2;
            if s < 1.0 && s != 0.0 {
                // Java takes StrictMath's log, fdlibm's, whose last digit Rust's may not share.
                let multiplier = (-2.0 * libm::log(s) / s).sqrt();
                self.next_gaussian = Some(v2 * multiplier);
                return v1 * multiplier;
            }
        }
    }
}
