//! Spark's `round(x[, d])`, `ceil(x[, d])` and `floor(x[, d])` (`ceiling`), in place of
//! DataFusion's: a `DOUBLE` rounded half up through its shortest decimal form (Java's
//! `BigDecimal.valueOf`, so `round(1.005, 2)` is 1.01), a `FLOAT` as the `DOUBLE` it
//! widens to, an integer kept an integer, a decimal given Spark's type; `ceil` and `floor`
//! of one argument a `BIGINT` (a decimal's `DECIMAL(p - s + 1, 0)`), of two a decimal.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Decimal128Array, Float32Array, Float64Array, Int64Array,
};
use datafusion::arrow::compute::{cast, unary};
use datafusion::arrow::datatypes::{
    DataType, Decimal128Type, Field, FieldRef, Float32Type, Float64Type, Int64Type,
};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use super::encoding::integers_of;
use super::math::{round_digits, round_double, shortest_digits, Rounding};
use super::{bad_arguments, is_integer, is_string};

pub fn functions() -> Vec<ScalarUDF> {
    [
        ("round", Mode::HalfUp),
        ("ceil", Mode::Ceiling),
        ("floor", Mode::Floor),
    ]
    .into_iter()
    .map(|(name, mode)| {
        ScalarUDF::new_from_impl(DecimalPlaces {
            name,
            mode,
            signature: Signature::user_defined(Volatility::Immutable),
        })
    })
    .collect()
}

/// Which way a number goes to its decimal places.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// To the nearest, a half away from zero (`round`).
    HalfUp,
    /// Up (`ceil`).
    Ceiling,
    /// Down (`floor`).
    Floor,
}

/// `round`, `ceil` or `floor`.
struct DecimalPlaces {
    name: &'static str,
    mode: Mode,
    signature: Signature,
}

crate::functions::identified_by_name!(DecimalPlaces);

/// The most digits of a decimal.
const MAX_PRECISION: u8 = 38;

/// The decimal a number is read as by Spark's `ceil(x, d)` and `floor(x, d)`.
fn as_decimal(t: &DataType) -> Option<(u8, i8)> {
    Some(match t {
        DataType::Int8 | DataType::UInt8 => (3, 0),
        DataType::Int16 | DataType::UInt16 => (5, 0),
        DataType::Int32 | DataType::UInt32 => (10, 0),
        DataType::Int64 | DataType::UInt64 => (20, 0),
        DataType::Float32 => (14, 7),
        DataType::Float64 => (30, 15),
        DataType::Decimal128(p, s) => (*p, *s),
        _ => return None,
    })
}

/// Spark's type of a `DECIMAL(p, s)` taken to `d` decimal places: room for a carry into a
/// new integer digit, the scale no more than `s` and no less than 0.
fn rounded_decimal(p: u8, s: i8, d: i64) -> DataType {
    let integer = i64::from(p) - i64::from(s) + 1;
    let (precision, scale) = if d < 0 {
        (integer.max(1 - d), 0)
    } else {
        let scale = d.min(i64::from(s)).max(0);
        (integer + scale, scale)
    };
    DataType::Decimal128(
        precision.clamp(1, i64::from(MAX_PRECISION)) as u8,
        scale as i8,
    )
}

impl DecimalPlaces {
    /// The result's type, given the places `d` when the call has them (a literal).
    fn result_type(&self, types: &[DataType], d: Option<i64>) -> Result<DataType> {
        let x = &types[0];
        if types.len() == 1 && self.mode != Mode::HalfUp {
            return Ok(match x {
                DataType::Decimal128(_, 0) => x.clone(),
                DataType::Decimal128(p, s) => rounded_decimal(*p, *s, 0),
                _ => DataType::Int64,
            });
        }
        let needs_places = || {
            DataFusionError::Plan(format!(
                "{} of a {x} takes its decimal places as an integer literal: they make its type",
                self.name
            ))
        };
        match x {
            DataType::Decimal128(p, s) => Ok(rounded_decimal(*p, *s, d.ok_or_else(needs_places)?)),
            _ if self.mode != Mode::HalfUp => {
                let (p, s) = as_decimal(x).ok_or_else(needs_places)?;
                Ok(rounded_decimal(p, s, d.ok_or_else(needs_places)?))
            }
            _ => Ok(x.clone()),
        }
    }
}

impl ScalarUDFImpl for DecimalPlaces {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name)
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let number = match types.first() {
            Some(t) if is_integer(t) && !t.is_null() => t.clone(),
            Some(t @ (DataType::Float32 | DataType::Float64 | DataType::Decimal128(..))) => {
                t.clone()
            }
            Some(DataType::Decimal256(p, s)) => DataType::Decimal128((*p).min(MAX_PRECISION), *s),
            Some(t) if t.is_numeric() || is_string(t) || t.is_null() => DataType::Float64,
            _ => {
                return Err(bad_arguments(
                    self.name,
                    "(number[, decimal places])",
                    types,
                ))
            }
        };
        match types {
            [_] => Ok(vec![number]),
            // The places keep their type, so that a literal stays one for the result type.
            [_, d] if is_integer(d) => Ok(vec![number, d.clone()]),
            _ => Err(bad_arguments(
                self.name,
                "(number[, decimal places])",
                types,
            )),
        }
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        self.result_type(types, Some(0))
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let d = match args.scalar_arguments.get(1) {
            None => Some(0),
            Some(Some(d)) => places_of(d),
            Some(None) => None,
        };
        Ok(Arc::new(Field::new(
            self.name,
            self.result_type(&types, d)?,
            true,
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let target = args.return_field.data_type().clone();
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let x = &arrays[0];
        let places: Vec<Option<i64>> = match arrays.get(1) {
            Some(d) => integers_of(&cast(d, &DataType::Int64)?),
            None => vec![Some(0); x.len()],
        };
        let result = match (&target, x.data_type()) {
            // ceil(x) and floor(x) of a number not a decimal.
            (DataType::Int64, DataType::Float32 | DataType::Float64) => {
                let doubles = cast(x, &DataType::Float64)?;
                let whole: Int64Array = unary(doubles.as_primitive::<Float64Type>(), |v| {
                    // Java's (long) cast: saturating, NaN 0, as Rust's `as`.
                    (if self.mode == Mode::Ceiling {
                        v.ceil()
                    } else {
                        v.floor()
                    }) as i64
                });
                Arc::new(whole) as ArrayRef
            }
            (DataType::Int64, t) if t.is_integer() && self.mode != Mode::HalfUp => {
                cast(x, &DataType::Int64)?
            }
            (DataType::Decimal128(p, s), _) => {
                let d = places.iter().flatten().next().copied().unwrap_or(0);
                let decimals = to_decimal(x)?;
                let DataType::Decimal128(_, from) = decimals.data_type() else {
                    unreachable!("to_decimal gives a decimal");
                };
                let from = *from;
                let values: Decimal128Array = decimals
                    .iter()
                    .map(|v| v.and_then(|v| rescale(v, from, d, *s, *p, self.mode)))
                    .collect();
                Arc::new(values.with_precision_and_scale(*p, *s)?)
            }
            (DataType::Float64, _) => {
                let values: Float64Array = x
                    .as_primitive::<Float64Type>()
                    .iter()
                    .zip(&places)
                    .map(|(v, d)| Some(round_double(v?, (*d)?, Rounding::HalfUp)))
                    .collect();
                Arc::new(values)
            }
            // Spark widens a FLOAT to the DOUBLE it is, rounds that, and narrows the result.
            (DataType::Float32, _) => {
                let values: Float32Array = x
                    .as_primitive::<Float32Type>()
                    .iter()
                    .zip(&places)
                    .map(|(v, d)| Some(round_double(f64::from(v?), (*d)?, Rounding::HalfUp) as f32))
                    .collect();
                Arc::new(values)
            }
            (t, _) if t.is_integer() => {
                let wide = cast(x, &DataType::Int64)?;
                let values: Int64Array = wide
                    .as_primitive::<Int64Type>()
                    .iter()
                    .zip(&places)
                    .map(|(v, d)| Some(round_integer(v?, (*d)?)))
                    .collect();
                wrap_to(&values, t)?
            }
            (t, from) => {
                return Err(DataFusionError::Internal(format!(
                    "{} of a {from} into a {t}",
                    self.name
                )))
            }
        };
        super::columnar(result, &args.args)
    }
}

/// The places of a literal `d`.
fn places_of(d: &ScalarValue) -> Option<i64> {
    match d.cast_to(&DataType::Int64).ok()? {
        ScalarValue::Int64(d) => d,
        _ => None,
    }
}

/// An integer rounded half up to `-places` tens (unchanged for `places` >= 0), wrapping
/// round 64 bits as Spark's `longValue()`.
fn round_integer(x: i64, places: i64) -> i64 {
    if places >= 0 {
        return x;
    }
    if places < -38 {
        return 0;
    }
    let unit = 10i128.pow(places.unsigned_abs() as u32);
    let x = i128::from(x);
    let (mut quotient, remainder) = (x / unit, x % unit);
    if remainder.abs() * 2 >= unit {
        quotient += x.signum();
    }
    quotient.wrapping_mul(unit) as i64
}

/// Rounded integers narrowed to a narrower integer type keeping their low bits, as Java's
/// `intValue()`, `shortValue()` and `byteValue()` (an Arrow cast would give NULL).
fn wrap_to(values: &Int64Array, t: &DataType) -> Result<ArrayRef> {
    use datafusion::arrow::array::{Int16Array, Int32Array, Int8Array};
    Ok(match t {
        DataType::Int8 => Arc::new(
            values
                .iter()
                .map(|v| v.map(|v| v as i8))
                .collect::<Int8Array>(),
        ),
        DataType::Int16 => Arc::new(
            values
                .iter()
                .map(|v| v.map(|v| v as i16))
                .collect::<Int16Array>(),
        ),
        DataType::Int32 => Arc::new(
            values
                .iter()
                .map(|v| v.map(|v| v as i32))
                .collect::<Int32Array>(),
        ),
        DataType::Int64 => Arc::new(values.clone()),
        other => cast(values, other)?,
    })
}

/// A number as Spark's decimal of it (`DECIMAL(30, 15)` for a `DOUBLE`, the digits of its
/// shortest form rounded half up, `DECIMAL(14, 7)` for a `FLOAT`; NULL for one too large,
/// NaN or infinite).
fn to_decimal(x: &ArrayRef) -> Result<Decimal128Array> {
    let (p, s) = as_decimal(x.data_type()).unwrap_or((30, 15));
    if let DataType::Decimal128(..) = x.data_type() {
        return Ok(x.as_primitive::<Decimal128Type>().clone());
    }
    if x.data_type().is_integer() {
        return Ok(cast(x, &DataType::Decimal128(p, s))?
            .as_primitive::<Decimal128Type>()
            .clone());
    }
    let doubles = cast(x, &DataType::Float64)?;
    let limit = 10i128.pow(u32::from(p));
    let values: Decimal128Array = doubles
        .as_primitive::<Float64Type>()
        .iter()
        .map(|v| {
            // A FLOAT as the DOUBLE it widens to, as Spark's cast reads it.
            let unscaled = double_unscaled(v?, i64::from(s))?;
            (unscaled.abs() < limit).then_some(unscaled)
        })
        .collect();
    Ok(values.with_precision_and_scale(p, s)?)
}

/// A `DOUBLE` as an integer of units of `10^-scale`: its shortest digits rounded half up
/// there; `None` for NaN, an infinity or more than 38 digits.
fn double_unscaled(x: f64, scale: i64) -> Option<i128> {
    if !x.is_finite() {
        return None;
    }
    if x == 0.0 {
        return Some(0);
    }
    let (negative, digits, point) = shortest_digits(x);
    let keep = point + scale;
    let (kept, carried) = round_digits(&digits, keep, Rounding::HalfUp);
    let length = if carried { keep + 1 } else { keep };
    if length > 38 {
        return None;
    }
    let mut unscaled: i128 = 0;
    for i in 0..length.max(0) {
        let digit = kept.get(i as usize).copied().unwrap_or(0);
        unscaled = unscaled * 10 + i128::from(digit);
    }
    Some(if negative { -unscaled } else { unscaled })
}

/// An unscaled decimal of scale `from` taken to `d` places by `mode`, as an unscaled
/// decimal of scale `to` and at most `precision` digits; `None` when it has more.
fn rescale(v: i128, from: i8, d: i64, to: i8, precision: u8, mode: Mode) -> Option<i128> {
    let drop = i64::from(from) - d;
    let rounded = if drop <= 0 {
        v
    } else if drop > 38 {
        // Every digit dropped: 0, or one unit of 10^-d away from it.
        match mode {
            Mode::Ceiling if v > 0 => return None,
            Mode::Floor if v < 0 => return None,
            _ => 0,
        }
    } else {
        let unit = 10i128.pow(drop as u32);
        let (mut quotient, remainder) = (v / unit, v % unit);
        let step = match mode {
            Mode::HalfUp => remainder.abs() * 2 >= unit,
            Mode::Ceiling => remainder > 0,
            Mode::Floor => remainder < 0,
        };
        if step {
            quotient += match mode {
                Mode::HalfUp => v.signum(),
                Mode::Ceiling => 1,
                Mode::Floor => -1,
            };
        }
        // Back to the result's scale: d places, or 0 with -d zeros for a negative d.
        let shift = i64::from(to) - d;
        if shift >= 0 {
            quotient.checked_mul(10i128.checked_pow(shift as u32)?)?
        } else {
            quotient
        }
    };
    let rounded = if drop <= 0 {
        // Nothing dropped: to the result's scale.
        let shift = i64::from(to) - i64::from(from);
        rounded.checked_mul(10i128.checked_pow(u32::try_from(shift).ok()?)?)?
    } else {
        rounded
    };
    (rounded.unsigned_abs() < 10u128.pow(u32::from(precision))).then_some(rounded)
}

#[cfg(test)]
mod tests;
