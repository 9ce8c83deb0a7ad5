//! Spark's `try_add`, `try_subtract`, `try_multiply` and `try_mod`: arithmetic that gives
//! NULL where the operator would fail, an integer overflowing its type (DataFusion's `+`
//! wraps it around) or a remainder by zero.
//!
//! Integers keep their type (the wider of the two) and are checked value by value; a
//! `FLOAT`, `DOUBLE` or `DECIMAL` makes a `DOUBLE` (as `try_divide`); `try_add` and
//! `try_subtract` also move a date by days and a date or timestamp by an interval.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray};
use datafusion::arrow::compute::kernels::numeric;
use datafusion::arrow::datatypes::{
    ArrowNativeTypeOp, ArrowPrimitiveType, DataType, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, IntervalUnit,
};
use datafusion::error::Result;
use datafusion::logical_expr::ScalarUDF;

use super::{bad_arguments, is_integer, HiveFunction};

/// The operation a `try_` function does.
#[derive(Clone, Copy)]
enum Operation {
    Add,
    Subtract,
    Multiply,
    Remainder,
}

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::computed("try_add", operands, result_type, |a| {
            apply(Operation::Add, a)
        })
        .udf(),
        HiveFunction::computed("try_subtract", operands, result_type, |a| {
            apply(Operation::Subtract, a)
        })
        .udf(),
        HiveFunction::computed("try_multiply", numbers, result_type, |a| {
            apply(Operation::Multiply, a)
        })
        .udf(),
        HiveFunction::computed("try_mod", numbers, result_type, |a| {
            apply(Operation::Remainder, a)
        })
        .udf(),
    ]
}

/// Two numbers: integers as the wider integer, others as `DOUBLE`s.
fn numbers(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [a, b] if is_integer(a) && is_integer(b) => Ok(vec![wider_integer(a, b); 2]),
        [a, b] if is_number(a) && is_number(b) => Ok(vec![DataType::Float64; 2]),
        _ => Err(bad_arguments(name, "two numbers", types)),
    }
}

/// Two numbers, or a date and days, or a date or timestamp and an interval.
fn operands(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let interval = DataType::Interval(IntervalUnit::MonthDayNano);
    match types {
        [DataType::Date32, n] if is_integer(n) => Ok(vec![DataType::Date32, DataType::Int32]),
        [t @ (DataType::Date32 | DataType::Timestamp(..)), DataType::Interval(_)] => {
            Ok(vec![t.clone(), interval])
        }
        _ => numbers(name, types).map_err(|_| {
            bad_arguments(
                name,
                "two numbers, a date and days, or a date or timestamp and an interval",
                types,
            )
        }),
    }
}

fn result_type(types: &[DataType]) -> Result<DataType> {
    Ok(types[0].clone())
}

fn is_number(t: &DataType) -> bool {
    t.is_numeric() || t.is_null()
}

/// The wider of two integer types, signed (a NULL takes the other's).
fn wider_integer(a: &DataType, b: &DataType) -> DataType {
    let width = |t: &DataType| match t {
        DataType::Int8 => 1,
        DataType::Int16 | DataType::UInt8 => 2,
        DataType::Int32 | DataType::UInt16 => 3,
        DataType::Null => 0,
        _ => 4,
    };
    match width(a).max(width(b)) {
        0 | 3 => DataType::Int32,
        1 => DataType::Int8,
        2 => DataType::Int16,
        _ => DataType::Int64,
    }
}

fn apply(operation: Operation, args: &[ArrayRef]) -> Result<ArrayRef> {
    let (a, b) = (&args[0], &args[1]);
    match (a.data_type(), b.data_type()) {
        (DataType::Int8, _) => checked::<Int8Type>(operation, a, b),
        (DataType::Int16, _) => checked::<Int16Type>(operation, a, b),
        (DataType::Int32, _) => checked::<Int32Type>(operation, a, b),
        (DataType::Int64, _) => checked::<Int64Type>(operation, a, b),
        (DataType::Float64, _) => Ok(Arc::new(pairwise::<Float64Type>(a, b, |x, y| {
            match operation {
                Operation::Add => Some(x + y),
                Operation::Subtract => Some(x - y),
                Operation::Multiply => Some(x * y),
                // Java's % of doubles, as Rust's; NULL by zero, as Spark without ANSI.
                Operation::Remainder => (y != 0.0).then_some(x % y),
            }
        }))),
        (DataType::Date32, DataType::Int32) => {
            let days = checked::<Int32Type>(
                operation,
                &datafusion::arrow::compute::cast(a, &DataType::Int32)?,
                b,
            )?;
            Ok(datafusion::arrow::compute::cast(&days, &DataType::Date32)?)
        }
        // A date or timestamp and an interval: arrow's calendar arithmetic, the month's
        // last day when it is shorter, as Spark.
        (DataType::Date32 | DataType::Timestamp(..), _) => match operation {
            Operation::Subtract => Ok(numeric::sub(a, b)?),
            _ => Ok(numeric::add(a, b)?),
        },
        _ => unreachable!("try_ arithmetic coerces its arguments"),
    }
}

/// Integer arithmetic value by value, NULL where the result overflows the type or a
/// remainder is by zero (Java's `MIN % -1`, 0, is no overflow).
fn checked<T: ArrowPrimitiveType>(
    operation: Operation,
    a: &ArrayRef,
    b: &ArrayRef,
) -> Result<ArrayRef> {
    Ok(Arc::new(pairwise::<T>(a, b, |x, y| match operation {
        Operation::Add => x.add_checked(y).ok(),
        Operation::Subtract => x.sub_checked(y).ok(),
        Operation::Multiply => x.mul_checked(y).ok(),
        Operation::Remainder => (!y.is_zero()).then(|| x.mod_wrapping(y)),
    })))
}

/// `op` of each pair of values, NULL where either is or `op` gives none.
fn pairwise<T: ArrowPrimitiveType>(
    a: &ArrayRef,
    b: &ArrayRef,
    op: impl Fn(T::Native, T::Native) -> Option<T::Native>,
) -> PrimitiveArray<T> {
    let (a, b) = (a.as_primitive::<T>(), b.as_primitive::<T>());
    a.iter()
        .zip(b.iter())
        .map(|(x, y)| op(x?, y?))
        .collect::<PrimitiveArray<T>>()
        .with_data_type(a.data_type().clone())
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, open};

    // Every expected value is Spark's. A literal integer is a BIGINT here (Spark's an INT),
    // so INT overflows are written with casts.
    #[tokio::test]
    async fn try_arithmetic_is_null_where_integers_overflow() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT try_add(1, 2), try_add(CAST(2147483647 AS INT), CAST(1 AS INT)), \
             try_add(9223372036854775807, 1), try_add(NULL, 1), \
             try_subtract(-9223372036854775807, 2), try_subtract(5, 2), \
             try_multiply(3037000500, 3037000500), \
             try_multiply(CAST(65536 AS INT), CAST(65536 AS INT)), try_multiply(2, 3), \
             try_add(CAST(127 AS TINYINT), CAST(1 AS TINYINT)), \
             try_multiply(CAST(-9223372036854775808 AS BIGINT), -1)",
            &[
                "3", "NULL", "NULL", "NULL", "NULL", "3", "NULL", "NULL", "6", "NULL", "NULL",
            ],
        )
        .await;
        check(
            &engine,
            &s,
            "SELECT try_mod(7, 3), try_mod(-7, 3), try_mod(7, 0), \
             try_mod(CAST(-9223372036854775808 AS BIGINT), -1), try_mod(7.5, 0.0), \
             try_add(1, 2.5), try_multiply(1.5, 2), try_add(1.5, 1), \
             arrow_typeof(try_add(CAST(1 AS TINYINT), CAST(1 AS TINYINT))), \
             arrow_typeof(try_add(CAST(1 AS INT), CAST(1 AS BIGINT)))",
            &[
                "1", "-1", "NULL", "0", "NULL", "3.5", "3.0", "2.5", "Int8", "Int64",
            ],
        )
        .await;
        check(
            &engine,
            &s,
            "SELECT try_add(DATE '2024-01-01', 1), try_subtract(DATE '2024-03-01', 1), \
             try_add(TIMESTAMP '2024-01-01 00:00:00', INTERVAL 1 DAY), \
             try_add(DATE '2024-01-01', INTERVAL 1 MONTH)",
            &[
                "2024-01-02",
                "2024-02-29",
                "2024-01-02T00:00:00",
                "2024-02-01",
            ],
        )
        .await;
    }
}
