//! `CAST(x AS DECIMAL(p, s))` of a `DOUBLE` (or a `FLOAT`, widened to one) through the
//! double's shortest decimal text, rounded half up, as Hive and Spark cast it (Java's
//! `new BigDecimal(Double.toString(x))`). DataFusion scales the binary value instead, so
//! `CAST(1.005D AS DECIMAL(10,2))` was 1.00 where Spark gives 1.01, and
//! `CAST(1.2345678901234567E19D AS DECIMAL(38,3))` printed binary digits
//! (`12345678901234567741.440`) where Spark gives `12345678901234567000.000`. A value
//! that does not fit `p` digits, NaN and the infinities are NULL, as with every `CAST` here.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, Decimal128Array};
use datafusion::arrow::compute::cast as cast_array;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::{ScalarFunction, TryCast};
use datafusion::logical_expr::{
    cast, ColumnarValue, Expr, ExprSchemable, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use crate::hive_functions::math::{round_digits, shortest_digits, Rounding};

/// Rewrites each `CAST` of a floating-point value to a decimal into [`DoubleToDecimal`].
pub const SPARK_DECIMAL_CASTS: crate::hive_syntax::ExpressionRewrite =
    crate::hive_syntax::ExpressionRewrite::new("spark_decimal_casts", decimal_of_double);

fn decimal_of_double(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    // A SQL `CAST` is a `TRY_CAST` by now (NULL for what does not convert, as in Hive).
    let Expr::TryCast(TryCast { expr: value, field }) = &expr else {
        return Ok(Transformed::no(expr));
    };
    let &DataType::Decimal128(precision, scale) = field.data_type() else {
        return Ok(Transformed::no(expr));
    };
    if !matches!(
        value.get_type(schema),
        Ok(DataType::Float64 | DataType::Float32)
    ) {
        return Ok(Transformed::no(expr));
    }
    let double = cast(value.as_ref().clone(), DataType::Float64);
    let function = ScalarUDF::new_from_impl(DoubleToDecimal {
        precision,
        scale,
        signature: Signature::exact(vec![DataType::Float64], Volatility::Immutable),
    });
    Ok(Transformed::yes(Expr::ScalarFunction(
        ScalarFunction::new_udf(Arc::new(function), vec![double]),
    )))
}

/// A `DOUBLE` as a `DECIMAL(precision, scale)` by its shortest decimal text.
#[derive(Debug, PartialEq, Eq, Hash)]
struct DoubleToDecimal {
    precision: u8,
    scale: i8,
    signature: Signature,
}

impl ScalarUDFImpl for DoubleToDecimal {
    fn name(&self) -> &str {
        "double_to_decimal"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Decimal128(self.precision, self.scale))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let doubles = cast_array(&arrays[0], &DataType::Float64)?;
        let decimals: Decimal128Array = doubles
            .as_primitive::<Float64Type>()
            .iter()
            .map(|x| x.and_then(|x| unscaled(x, self.precision, self.scale)))
            .collect();
        let decimals = decimals.with_precision_and_scale(self.precision, self.scale)?;
        Ok(ColumnarValue::Array(Arc::new(decimals) as ArrayRef))
    }
}

/// `x` times `10^scale`, its shortest decimal digits rounded half up to `scale` places;
/// `None` for NaN, an infinity or more than `precision` digits.
pub(crate) fn unscaled(x: f64, precision: u8, scale: i8) -> Option<i128> {
    if !x.is_finite() {
        return None;
    }
    if x == 0.0 {
        return Some(0);
    }
    let (negative, digits, point) = shortest_digits(x);
    let places = point + i64::from(scale);
    let (kept, carried) = round_digits(&digits, places, Rounding::HalfUp);
    // The kept digits end `trailing` places before the last one the scale keeps.
    let trailing = places + i64::from(carried) - kept.len() as i64;
    let length = kept.len() as i64 + trailing;
    if length > i64::from(precision) {
        return None;
    }
    let mut value: i128 = 0;
    for digit in kept {
        value = value * 10 + i128::from(digit);
    }
    for _ in 0..trailing {
        value *= 10;
    }
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_double_is_cast_by_its_shortest_decimal_text_as_spark_casts_it() {
        // Answers from Spark 4.3 (CAST(CAST(v AS DOUBLE) AS DECIMAL(p, s))).
        assert_eq!(unscaled(1.005, 10, 2), Some(101));
        assert_eq!(unscaled(2.675, 10, 2), Some(268));
        assert_eq!(unscaled(-2.675, 10, 2), Some(-268));
        assert_eq!(unscaled(0.1, 20, 18), Some(100_000_000_000_000_000));
        assert_eq!(
            unscaled(12345678901234567890.123, 38, 3),
            Some(12_345_678_901_234_567_000_000)
        );
        assert_eq!(unscaled(0.125, 5, 2), Some(13));
        assert_eq!(unscaled(-0.004, 5, 2), Some(0));
        assert_eq!(unscaled(5e-324, 5, 2), Some(0));
        assert_eq!(unscaled(0.5, 1, 0), Some(1));
        assert_eq!(unscaled(-0.5, 1, 0), Some(-1));
        assert_eq!(unscaled(123.0, 3, 0), Some(123));
        assert_eq!(unscaled(1e-7, 10, 8), Some(10));
        assert_eq!(unscaled(1e20, 38, 2), Some(10i128.pow(22)));
        // Widened from a FLOAT: the double's digits (123.4560012817).
        assert_eq!(
            unscaled(f64::from(123.456f32), 20, 10),
            Some(1_234_560_012_817)
        );
        // Too many digits once rounded, or none to be had: NULL.
        assert_eq!(unscaled(99.995, 4, 2), None);
        assert_eq!(unscaled(999.5, 3, 0), None);
        assert_eq!(unscaled(1e10, 5, 2), None);
        assert_eq!(unscaled(f64::MAX, 38, 0), None);
        assert_eq!(unscaled(f64::NAN, 5, 2), None);
        assert_eq!(unscaled(f64::INFINITY, 5, 2), None);
    }
}
