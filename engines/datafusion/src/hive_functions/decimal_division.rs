//! Spark's `a / b` of decimals: the quotient's type by Spark's rule, its value rounded half up
//! to that scale, NULL for a zero divisor or a quotient the type cannot hold.
//!
//! Where either operand is a `DECIMAL` and the other a `DECIMAL` or an integer,
//! [`DecimalDivision::of`] (called by `hive_syntax`'s `HiveDivision`) plans the division as
//! Spark's non-ANSI `Divide` with `spark.sql.decimalOperations.allowPrecisionLoss` (the
//! default): `DECIMAL(p1, s1) / DECIMAL(p2, s2)` is
//! `DECIMAL(p1 - s1 + s2 + max(6, s1 + p2 + 1), max(6, s1 + p2 + 1))`, brought back to 38
//! digits as Spark's `DecimalType.adjustPrecisionScale` does ([`quotient_type`]). An integer
//! column divides as the decimal Spark widens it to (`INT` as `DECIMAL(10,0)`, `BIGINT` as
//! `DECIMAL(20,0)`), an integer literal as a decimal of its digits (`3` as `DECIMAL(1,0)`,
//! Spark's `DecimalType.fromLiteral`): the engine types literals as `BIGINT`s, so the planner
//! tells them apart. With a `FLOAT` or `DOUBLE` operand both divide as `DOUBLE`s, as in Spark.
//!
//! The quotient is computed in integers: the dividend's unscaled value times a power of ten
//! over the divisor's, rounded half up (away from zero), in `i128` where that holds the
//! scaled dividend and in arrow's `i256` otherwise ([`divide_half_up`], which `avg` of
//! decimals shares). Spark's `Decimal./` first rounds to 38 decimals and then to the
//! quotient's scale; the one rounding here differs from that only for a quotient whose digits
//! past the scale are a 4 and some thirty 9s.

use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Decimal128Array};
use datafusion::arrow::datatypes::{i256, DataType, Decimal128Type, DECIMAL128_MAX_PRECISION};
use datafusion::common::{internal_err, ScalarValue};
use datafusion::error::Result;
use datafusion::functions::expr_fn::nullif;
use datafusion::logical_expr::{
    cast, lit, ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

/// The scale Spark keeps at least in a quotient cut to 38 digits
/// (`DecimalType.MINIMUM_ADJUSTED_SCALE`).
const MINIMUM_ADJUSTED_SCALE: i8 = 6;

/// A division with a decimal operand, as Spark plans it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecimalDivision {
    /// Decimals (or integers) of these types, into Spark's quotient ([`quotient_type`]).
    Decimals {
        dividend: (u8, i8),
        divisor: (u8, i8),
    },
    /// A decimal and a `FLOAT` or `DOUBLE`, both as `DOUBLE`s (DataFusion would divide a
    /// `FLOAT` as a `FLOAT`).
    Doubles,
}

impl DecimalDivision {
    /// The digits of an integer literal, the precision of the decimal Spark reads it as
    /// beside a decimal (`DecimalType.fromLiteral`: `-7` is a `DECIMAL(1,0)`); `None` for
    /// anything else.
    pub fn literal_digits(operand: &Expr) -> Option<u8> {
        let Expr::Literal(value, _) = operand else {
            return None;
        };
        let literal = match value {
            ScalarValue::Int8(Some(v)) => i128::from(*v),
            ScalarValue::Int16(Some(v)) => i128::from(*v),
            ScalarValue::Int32(Some(v)) => i128::from(*v),
            ScalarValue::Int64(Some(v)) => i128::from(*v),
            ScalarValue::UInt8(Some(v)) => i128::from(*v),
            ScalarValue::UInt16(Some(v)) => i128::from(*v),
            ScalarValue::UInt32(Some(v)) => i128::from(*v),
            ScalarValue::UInt64(Some(v)) => i128::from(*v),
            _ => return None,
        };
        Some(literal.unsigned_abs().checked_ilog10().unwrap_or(0) as u8 + 1)
    }

    /// The division of `dividend` (of type `dividend_type`) by `divisor` when one of them is
    /// a `DECIMAL` and the other a `DECIMAL`, an integer, a `FLOAT`, a `DOUBLE` or NULL. `None` for
    /// any other division, and for a decimal wider than Spark's 38 digits.
    pub fn of(
        dividend: &Expr,
        dividend_type: &DataType,
        divisor: &Expr,
        divisor_type: &DataType,
    ) -> Option<Self> {
        let decimal = |t: &DataType| matches!(decimal_parts(t), Some((_, _, true)));
        if !(decimal(dividend_type) || decimal(divisor_type)) {
            return None;
        }
        // Spark divides a NULL by a decimal as DOUBLEs, and a decimal by a NULL as decimals
        // of the dividend's type.
        if dividend_type.is_floating() || divisor_type.is_floating() || dividend_type.is_null() {
            return Some(Self::Doubles);
        }
        let dividend = operand_type(dividend, dividend_type)?;
        let divisor = if divisor_type.is_null() {
            dividend
        } else {
            operand_type(divisor, divisor_type)?
        };
        Some(Self::Decimals { dividend, divisor })
    }

    /// The division's expression: both operands cast to their decimal types and divided by
    /// [`SparkDecimalDivide`], or both cast to `DOUBLE`s and divided, NULL for a zero
    /// divisor.
    pub fn plan(self, dividend: Expr, divisor: Expr) -> Expr {
        match self {
            Self::Decimals {
                dividend: dividend_type,
                divisor: divisor_type,
            } => {
                let as_decimal = |e: Expr, (p, s): (u8, i8)| cast(e, DataType::Decimal128(p, s));
                DIVIDE.call(vec![
                    as_decimal(dividend, dividend_type),
                    as_decimal(divisor, divisor_type),
                ])
            }
            Self::Doubles => {
                let divisor = nullif(cast(divisor, DataType::Float64), lit(0f64));
                cast(dividend, DataType::Float64) / divisor
            }
        }
    }
}

/// A type's decimal precision and scale, and whether it is a decimal (rather than an
/// integer Spark widens to one); `None` for other types and decimals beyond 38 digits.
fn decimal_parts(t: &DataType) -> Option<(u8, i8, bool)> {
    match t {
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s) => {
            Some((*p, *s, true))
        }
        DataType::Decimal256(p, s) if *p <= DECIMAL128_MAX_PRECISION => Some((*p, *s, true)),
        // Spark's `DecimalType.forType` of its integer types; unsigned ones take the digits
        // of the signed type of their width.
        DataType::Int8 | DataType::UInt8 => Some((3, 0, false)),
        DataType::Int16 | DataType::UInt16 => Some((5, 0, false)),
        DataType::Int32 | DataType::UInt32 => Some((10, 0, false)),
        DataType::Int64 | DataType::UInt64 => Some((20, 0, false)),
        _ => None,
    }
}

/// The decimal type an operand divides as: an integer literal's digits
/// ([`DecimalDivision::literal_digits`]), else its type's.
fn operand_type(operand: &Expr, t: &DataType) -> Option<(u8, i8)> {
    match DecimalDivision::literal_digits(operand) {
        Some(digits) => Some((digits, 0)),
        None => decimal_parts(t).map(|(p, s, _)| (p, s)),
    }
}

/// Spark's type of `a % b` when one is a `DECIMAL` and the other a `DECIMAL` or an integer
/// (`Remainder`'s: `DECIMAL(min(p1 - s1, p2 - s2) + max(s1, s2), max(s1, s2))`, an integer
/// literal the decimal of its digits), which the remainder always fits: `d % 3` of a
/// `DECIMAL(10,2)` is a `DECIMAL(3,2)`. `None` for any other operands.
pub fn remainder_type(
    dividend: &Expr,
    dividend_type: &DataType,
    divisor: &Expr,
    divisor_type: &DataType,
) -> Option<(u8, i8)> {
    let decimal = |t: &DataType| matches!(decimal_parts(t), Some((_, _, true)));
    if !(decimal(dividend_type) || decimal(divisor_type)) {
        return None;
    }
    let (p1, s1) = operand_type(dividend, dividend_type)?;
    let (p2, s2) = operand_type(divisor, divisor_type)?;
    let scale = s1.max(s2);
    let whole = (i16::from(p1) - i16::from(s1)).min(i16::from(p2) - i16::from(s2));
    let precision = (whole + i16::from(scale)).clamp(1, i16::from(DECIMAL128_MAX_PRECISION));
    Some((precision as u8, scale))
}

/// Spark's type of `DECIMAL(p1, s1) / DECIMAL(p2, s2)` (`Divide.resultDecimalType` with
/// precision loss allowed).
pub fn quotient_type((p1, s1): (u8, i8), (p2, s2): (u8, i8)) -> (u8, i8) {
    let (p1, s1, p2, s2) = (i32::from(p1), i32::from(s1), i32::from(p2), i32::from(s2));
    let scale = i32::from(MINIMUM_ADJUSTED_SCALE).max(s1 + p2 + 1);
    adjust_precision_scale(p1 - s1 + s2 + scale, scale)
}

/// Spark's `DecimalType.adjustPrecisionScale`: a type of more than 38 digits keeps its
/// integer digits and as many decimals as still fit, but at least
/// `min(scale, 6)` decimals.
fn adjust_precision_scale(precision: i32, scale: i32) -> (u8, i8) {
    let max = i32::from(DECIMAL128_MAX_PRECISION);
    let (precision, scale) = if precision <= max {
        (precision, scale)
    } else if scale < 0 {
        (max, scale)
    } else {
        let int_digits = precision - scale;
        let min_scale = scale.min(i32::from(MINIMUM_ADJUSTED_SCALE));
        (max, (max - int_digits).max(min_scale))
    };
    // Both lie within 38 here: the precision by the cut, the scale below it.
    (precision as u8, scale as i8)
}

/// The function dividing two `Decimal128`s into Spark's quotient; no registry lists it, the
/// planner calls it for `/`.
static DIVIDE: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| Arc::new(ScalarUDF::new_from_impl(SparkDecimalDivide::new())));

/// `a / b` of two `Decimal128`s as Spark divides decimals ([`quotient_type`], rounded half
/// up, NULL for a zero divisor or an overflow).
#[derive(Debug, PartialEq, Eq, Hash)]
struct SparkDecimalDivide {
    signature: Signature,
}

impl SparkDecimalDivide {
    fn new() -> Self {
        Self {
            signature: Signature::any(2, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for SparkDecimalDivide {
    fn name(&self) -> &str {
        "decimal_divide"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        match types {
            [DataType::Decimal128(p1, s1), DataType::Decimal128(p2, s2)] => {
                let (p, s) = quotient_type((*p1, *s1), (*p2, *s2));
                Ok(DataType::Decimal128(p, s))
            }
            _ => internal_err!("decimal_divide divides two Decimal128s, not {types:?}"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let DataType::Decimal128(precision, scale) = *args.return_field.data_type() else {
            return internal_err!("decimal_divide returns a Decimal128");
        };
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let (dividends, divisors) = (
            arrays[0].as_primitive::<Decimal128Type>(),
            arrays[1].as_primitive::<Decimal128Type>(),
        );
        let (DataType::Decimal128(_, s1), DataType::Decimal128(_, s2)) =
            (dividends.data_type(), divisors.data_type())
        else {
            return internal_err!("decimal_divide divides two Decimal128s");
        };
        // The quotient of the unscaled values is 10^(s1 - s2) too small to be read at
        // `scale`: the dividend is scaled up by the difference (never negative for Spark's
        // types, whose scale is at least s1 - s2).
        let shift = i32::from(scale) - i32::from(*s1) + i32::from(*s2);
        let quotients: Decimal128Array = dividends
            .iter()
            .zip(divisors.iter())
            .map(|(a, b)| divide_half_up_i128(a?, b?, shift, precision))
            .collect();
        let result: ArrayRef = Arc::new(quotients.with_precision_and_scale(precision, scale)?);
        super::columnar(result, &args.args)
    }
}

/// [`divide_half_up`] of `i128`s, in `i128`s where the scaled dividend fits one.
pub fn divide_half_up_i128(
    dividend: i128,
    divisor: i128,
    shift: i32,
    precision: u8,
) -> Option<i128> {
    if divisor == 0 {
        return None;
    }
    let scaled = u32::try_from(shift)
        .ok()
        .and_then(|shift| 10i128.checked_pow(shift))
        .and_then(|power| dividend.checked_mul(power));
    if let Some(scaled) = scaled {
        let quotient = round_half_up(scaled, divisor);
        let bound = 10u128.checked_pow(u32::from(precision))?;
        return (quotient.unsigned_abs() < bound).then_some(quotient);
    }
    divide_half_up(
        i256::from_i128(dividend),
        i256::from_i128(divisor),
        shift,
        precision,
    )
    // Within `precision` (at most 38) digits, it fits an i128.
    .map(i256::as_i128)
}

/// The unscaled quotient `dividend × 10^shift ÷ divisor` rounded half up (a half away from
/// zero, Java's `HALF_UP`); `None` (Spark's NULL) for a zero divisor or a quotient of more
/// than `precision` digits. A negative `shift` scales the divisor instead.
pub fn divide_half_up(dividend: i256, divisor: i256, shift: i32, precision: u8) -> Option<i256> {
    if divisor == i256::ZERO {
        return None;
    }
    let power = i256::from_i128(10).checked_pow(shift.unsigned_abs())?;
    // A scaled operand beyond i256 makes the quotient far beyond 38 digits: an overflow.
    let (dividend, divisor) = if shift >= 0 {
        (dividend.checked_mul(power)?, divisor)
    } else {
        (dividend, divisor.checked_mul(power)?)
    };
    let quotient = round_half_up(dividend, divisor);
    let bound = i256::from_i128(10).checked_pow(u32::from(precision))?;
    (quotient.checked_abs()? < bound).then_some(quotient)
}

/// `dividend ÷ divisor` (not zero) rounded half up: the truncated quotient, one further from
/// zero when the remainder is at least half the divisor.
fn round_half_up<T>(dividend: T, divisor: T) -> T
where
    T: Copy
        + PartialOrd
        + std::ops::Div<Output = T>
        + std::ops::Rem<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Add<Output = T>
        + std::ops::Neg<Output = T>
        + From<i8>,
{
    let (zero, one) = (T::from(0), T::from(1));
    let abs = |v: T| if v < zero { -v } else { v };
    let quotient = dividend / divisor;
    let remainder = abs(dividend % divisor);
    // `2 × remainder ≥ |divisor|`, written so that it cannot overflow.
    if remainder >= abs(divisor) - remainder {
        if (dividend < zero) != (divisor < zero) {
            quotient - one
        } else {
            quotient + one
        }
    } else {
        quotient
    }
}

#[cfg(test)]
mod tests;
