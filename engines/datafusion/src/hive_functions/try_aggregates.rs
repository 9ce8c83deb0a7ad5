//! Spark's `try_sum(x)` and `try_avg(x)`: `sum` and `avg` that give NULL where the sum
//! overflows its type, where `sum` would wrap around (DataFusion's, and Spark's without ANSI
//! mode) or fail.
//!
//! - `try_sum` of integers is a `BIGINT`, NULL when the total is beyond one; of a
//!   `DECIMAL(p, s)` a `DECIMAL(p + 10, s)` (38 digits at most), NULL beyond its digits; of a
//!   `FLOAT` or `DOUBLE` a `DOUBLE`.
//! - `try_avg` of numbers is a `DOUBLE` (Spark sums them as `DOUBLE`s, which do not
//!   overflow); of a `DECIMAL(p, s)` a `DECIMAL(p + 4, s + 4)`, rounded half up, NULL when
//!   the sum is beyond `DECIMAL(p + 10, s)`.
//!
//! Both are NULL for a group without values. Integers are summed exactly (in 128 bits), so a
//! total back within a `BIGINT` after passing beyond it is the total, where Spark, adding in
//! 64 bits, gives NULL.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, Decimal128Type, Field, FieldRef, Float64Type, Int64Type,
};
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Signature, Volatility,
};

use super::bad_arguments;
use super::decimal_division::divide_half_up_i128;

pub fn aggregates() -> Vec<AggregateUDF> {
    vec![
        AggregateUDF::new_from_impl(TryTotal::new("try_sum", false)),
        AggregateUDF::new_from_impl(TryTotal::new("try_avg", true)),
    ]
}

/// What a `try_sum` or `try_avg` adds up.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// Integers, as a `BIGINT` (`try_avg`: as `DOUBLE`s).
    Integer,
    /// `FLOAT`s and `DOUBLE`s.
    Double,
    /// `DECIMAL(precision, scale)`s.
    Decimal { precision: u8, scale: i8 },
}

impl Kind {
    fn of(name: &str, t: &DataType) -> Result<Self> {
        match t {
            t if t.is_integer() => Ok(Kind::Integer),
            t if t.is_floating() || t.is_null() => Ok(Kind::Double),
            DataType::Decimal128(precision, scale) => Ok(Kind::Decimal {
                precision: *precision,
                scale: *scale,
            }),
            _ => Err(bad_arguments(name, "a number", std::slice::from_ref(t))),
        }
    }

    /// The type the sum is kept in between a partial aggregation and the final one: a
    /// `DOUBLE` where Spark sums `DOUBLE`s (`try_avg` of integers too), else a decimal of
    /// the exact sum.
    fn sum_type(self, average: bool) -> DataType {
        match self {
            Kind::Double => DataType::Float64,
            Kind::Integer if average => DataType::Float64,
            Kind::Integer => DataType::Decimal128(38, 0),
            Kind::Decimal { scale, .. } => DataType::Decimal128(38, scale),
        }
    }

    /// The type the values are read as.
    fn input(self) -> DataType {
        match self {
            Kind::Integer => DataType::Int64,
            Kind::Double => DataType::Float64,
            Kind::Decimal { precision, scale } => DataType::Decimal128(precision, scale),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct TryTotal {
    name: &'static str,
    average: bool,
    signature: Signature,
}

impl TryTotal {
    fn new(name: &'static str, average: bool) -> Self {
        Self {
            name,
            average,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

/// The digits Spark gives a sum of decimals of `precision` (`DecimalType.bounded(p + 10, s)`).
fn sum_precision(precision: u8) -> u8 {
    (precision + 10).min(38)
}

impl AggregateUDFImpl for TryTotal {
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
        match types {
            [t] => Ok(vec![Kind::of(self.name, t)?.input()]),
            _ => Err(bad_arguments(self.name, "one number", types)),
        }
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        Ok(match (Kind::of(self.name, &types[0])?, self.average) {
            (Kind::Integer, false) => DataType::Int64,
            (Kind::Integer | Kind::Double, _) => DataType::Float64,
            (Kind::Decimal { precision, scale }, false) => {
                DataType::Decimal128(sum_precision(precision), scale)
            }
            (Kind::Decimal { precision, scale }, true) => {
                DataType::Decimal128((precision + 4).min(38), (scale + 4).min(38))
            }
        })
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let kind = Kind::of(self.name, args.input_fields[0].data_type())?;
        let sum = kind.sum_type(self.average);
        Ok(vec![
            Arc::new(Field::new(format!("{}[sum]", args.name), sum, true)),
            Arc::new(Field::new(
                format!("{}[count]", args.name),
                DataType::Int64,
                true,
            )),
            Arc::new(Field::new(
                format!("{}[overflowed]", args.name),
                DataType::Boolean,
                true,
            )),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let kind = Kind::of(self.name, &args.exprs[0].data_type(args.schema)?)?;
        Ok(Box::new(Total {
            kind,
            average: self.average,
            exact: 0,
            double: 0.0,
            count: 0,
            overflowed: false,
        }))
    }
}

#[derive(Debug)]
struct Total {
    kind: Kind,
    average: bool,
    /// The sum of integers or of decimals' unscaled values.
    exact: i128,
    double: f64,
    count: i64,
    overflowed: bool,
}

impl Total {
    fn add_exact(&mut self, value: i128) {
        match self.exact.checked_add(value) {
            Some(sum) => self.exact = sum,
            None => self.overflowed = true,
        }
    }

    /// Whether the exact sum still fits the type Spark sums in.
    fn fits(&self) -> bool {
        match self.kind {
            Kind::Integer if !self.average => i64::try_from(self.exact).is_ok(),
            Kind::Decimal { precision, .. } => {
                self.exact.unsigned_abs() < 10u128.pow(u32::from(sum_precision(precision)))
            }
            _ => true,
        }
    }
}

impl Accumulator for Total {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let values = cast(&values[0], &self.kind.input())?;
        match self.kind {
            Kind::Integer if self.average => {
                for v in values.as_primitive::<Int64Type>().iter().flatten() {
                    self.double += v as f64;
                    self.count += 1;
                }
            }
            Kind::Integer => {
                for v in values.as_primitive::<Int64Type>().iter().flatten() {
                    self.add_exact(i128::from(v));
                    self.count += 1;
                }
            }
            Kind::Double => {
                for v in values.as_primitive::<Float64Type>().iter().flatten() {
                    self.double += v;
                    self.count += 1;
                }
            }
            Kind::Decimal { .. } => {
                for v in values.as_primitive::<Decimal128Type>().iter().flatten() {
                    self.add_exact(v);
                    self.count += 1;
                }
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let counts = states[1].as_primitive::<Int64Type>();
        let overflowed = states[2].as_boolean();
        for row in 0..counts.len() {
            if counts.is_null(row) {
                continue;
            }
            self.count += counts.value(row);
            self.overflowed |= overflowed.is_valid(row) && overflowed.value(row);
            if states[0].is_null(row) {
                continue;
            }
            match states[0].data_type() {
                DataType::Float64 => {
                    self.double += states[0].as_primitive::<Float64Type>().value(row)
                }
                _ => self.add_exact(states[0].as_primitive::<Decimal128Type>().value(row)),
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let sum = match self.kind.sum_type(self.average) {
            DataType::Decimal128(precision, scale) => {
                ScalarValue::Decimal128(Some(self.exact), precision, scale)
            }
            _ => ScalarValue::Float64(Some(self.double)),
        };
        Ok(vec![
            sum,
            ScalarValue::Int64(Some(self.count)),
            ScalarValue::Boolean(Some(self.overflowed)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let none = self.count == 0 || self.overflowed || !self.fits();
        Ok(match (self.kind, self.average) {
            (Kind::Integer, false) => ScalarValue::Int64((!none).then_some(self.exact as i64)),
            (Kind::Double, false) => ScalarValue::Float64((!none).then_some(self.double)),
            (Kind::Integer | Kind::Double, true) => {
                ScalarValue::Float64((!none).then(|| self.double / self.count as f64))
            }
            (Kind::Decimal { precision, scale }, false) => ScalarValue::Decimal128(
                (!none).then_some(self.exact),
                sum_precision(precision),
                scale,
            ),
            (Kind::Decimal { precision, scale }, true) => {
                let (p, s) = ((precision + 4).min(38), (scale + 4).min(38));
                let mean = (!none)
                    .then(|| {
                        let shift = i32::from(s - scale);
                        divide_half_up_i128(self.exact, i128::from(self.count), shift, p)
                    })
                    .flatten();
                ScalarValue::Decimal128(mean, p, s)
            }
        })
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}

#[cfg(test)]
mod tests;
