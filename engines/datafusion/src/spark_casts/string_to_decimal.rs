//! `CAST(s AS DECIMAL(p, s))` of a string written with an exponent reads it as Spark does
//! (Java's `BigDecimal`): `'1e3'` is 1000, `'-4e1'` -40, `'1.5E-2'` 0.015, where DataFusion's
//! cast reads only plain digits and gave NULL, so that `sum(CAST(amount AS DECIMAL(10,2)))`
//! of a text column silently left such rows out.
//!
//! The cast stays DataFusion's (its rounding and range checks); its string is first written
//! out in plain digits by [`PlainDecimalText`]. Text without an exponent passes unchanged.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::compute::cast as cast_array;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::{Cast, ScalarFunction, TryCast};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ExprSchemable, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

use super::string_operands::is_string;

/// Puts [`PlainDecimalText`] between a string and its cast to a `DECIMAL`. An analyzer rule,
/// run after type coercion, which adds casts of its own.
pub const SPARK_STRING_DECIMAL_CASTS: crate::hive_syntax::ExpressionRewrite =
    crate::hive_syntax::ExpressionRewrite::new("spark_string_decimal_casts", plain_before_cast);

fn plain_before_cast(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Some((value, target)) = super::cast_parts(&expr) else {
        return Ok(Transformed::no(expr));
    };
    if !matches!(target, DataType::Decimal128(..) | DataType::Decimal256(..)) {
        return Ok(Transformed::no(expr));
    }
    if let Expr::ScalarFunction(call) = value {
        if call.func.name() == PLAIN_DECIMAL_TEXT {
            return Ok(Transformed::no(expr));
        }
    }
    match value.get_type(schema) {
        Ok(source) if is_string(&source) => {}
        _ => return Ok(Transformed::no(expr)),
    }
    let plain = |value: Box<Expr>| {
        Box::new(Expr::ScalarFunction(ScalarFunction::new_udf(
            Arc::new(ScalarUDF::new_from_impl(PlainDecimalText::new())),
            vec![*value],
        )))
    };
    Ok(Transformed::yes(match expr {
        Expr::Cast(Cast { expr, field }) => Expr::Cast(Cast {
            expr: plain(expr),
            field,
        }),
        Expr::TryCast(TryCast { expr, field }) => Expr::TryCast(TryCast {
            expr: plain(expr),
            field,
        }),
        other => other,
    }))
}

const PLAIN_DECIMAL_TEXT: &str = "spark_plain_decimal_text";

/// A number's text with its exponent written out in digits (`'1.5e2'` is `'150'`); any other
/// text as it is, for the cast to read or refuse.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PlainDecimalText {
    signature: Signature,
}

impl PlainDecimalText {
    pub fn new() -> Self {
        Self {
            signature: Signature::string(1, Volatility::Immutable),
        }
    }
}

impl Default for PlainDecimalText {
    fn default() -> Self {
        Self::new()
    }
}

impl ScalarUDFImpl for PlainDecimalText {
    fn name(&self) -> &str {
        PLAIN_DECIMAL_TEXT
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let strings = cast_array(&args.args[0].to_array(args.number_rows)?, &DataType::Utf8)?;
        let mut out = StringBuilder::with_capacity(strings.len(), 0);
        for text in strings.as_string::<i32>().iter() {
            match text {
                Some(text) => match plain_digits(text) {
                    Some(plain) => out.append_value(plain),
                    None => out.append_value(text),
                },
                None => out.append_null(),
            }
        }
        let result: ArrayRef = Arc::new(out.finish());
        crate::hive_functions::columnar(result, &args.args)
    }
}

/// The digits of `[sign] digits [. digits] (e|E) [sign] digits` without the exponent; `None`
/// for text without an exponent or not of that form. An exponent that puts the number beyond
/// any `DECIMAL` (more than 100 places either way) gives `'1e100'` or `'0'`, which the cast
/// refuses or reads as 0, without writing out the digits of a text's exponent.
pub(crate) fn plain_digits(text: &str) -> Option<String> {
    let text = text.trim_matches(|c: char| c <= ' ');
    let (mantissa, exponent) = text.split_once(['e', 'E'])?;
    let exponent: i64 = exponent.parse().ok()?;
    let (sign, unsigned) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa.strip_prefix('+').unwrap_or(mantissa)),
    };
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + fraction.len() == 0 || !digits_only(whole) || !digits_only(fraction) {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    // Where the point goes in `digits`, counted from their start.
    let point = whole.len() as i64 + exponent;
    const FAR: i64 = 100;
    if point > digits.len() as i64 + FAR {
        return Some(format!("{sign}1e100"));
    }
    if point < -FAR {
        return Some("0".to_owned());
    }
    Some(if point <= 0 {
        format!(
            "{sign}0.{}{digits}",
            "0".repeat(point.unsigned_abs() as usize)
        )
    } else if point as usize >= digits.len() {
        format!(
            "{sign}{digits}{}",
            "0".repeat(point as usize - digits.len())
        )
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{sign}{int}.{frac}")
    })
}

#[cfg(test)]
mod tests {
    use super::plain_digits;

    #[test]
    fn exponents_are_written_out() {
        for (text, plain) in [
            ("1e3", Some("1000")),
            ("-4e1", Some("-40")),
            ("1.5E-2", Some("0.015")),
            (" 2.50e+1 ", Some("25.0")),
            ("+7e0", Some("7")),
            (".5e1", Some("5")),
            ("12.345e1", Some("123.45")),
            ("1e-300", Some("0")),
            ("1e400", Some("1e100")),
            ("12.5", None),
            ("abc", None),
            ("1e", None),
            ("e5", None),
            ("1.2.3e4", None),
        ] {
            assert_eq!(plain_digits(text).as_deref(), plain, "{text}");
        }
    }
}
