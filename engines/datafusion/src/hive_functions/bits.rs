//! Functions of an integer's bits that DataFusion lacks: Hive's `shiftrightunsigned(a, b)`
//! (Java's `>>>`), and Spark's `bit_count(x)` and `bit_get(x, pos)` (`getbit`).

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Int32Array, Int32Builder, Int64Builder, Int8Builder,
};
use datafusion::arrow::datatypes::{DataType, Int32Type, Int64Type};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ScalarUDF;

use super::{bad_arguments, is_integer, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::computed(
            "shiftrightunsigned",
            sized_integer_and_int,
            |t| Ok(t[0].clone()),
            shift_right_unsigned,
        )
        .udf(),
        HiveFunction::computed(
            "bit_count",
            bit_count_types,
            |_| Ok(DataType::Int32),
            bit_count,
        )
        .udf(),
        HiveFunction::computed(
            "bit_get",
            sized_integer_and_int,
            |_| Ok(DataType::Int8),
            bit_get,
        )
        .with_aliases(&["getbit"])
        .udf(),
    ]
}

/// An integer of Java's `int` (smaller integers too, as Hive takes them) or `long`, and an
/// `INT` (a shift or a bit position).
fn sized_integer_and_int(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [a, b] if is_integer(a) && is_integer(b) => {
            let wide = matches!(a, DataType::Int64 | DataType::UInt32 | DataType::UInt64);
            let a = if wide {
                DataType::Int64
            } else {
                DataType::Int32
            };
            Ok(vec![a, DataType::Int32])
        }
        _ => Err(bad_arguments(name, "(an integer, a number of bits)", types)),
    }
}

/// The values of an `INT` or `BIGINT` array as `i64`s, with the type's width in bits.
fn values_of(array: &ArrayRef) -> (Vec<Option<i64>>, u32) {
    match array.data_type() {
        DataType::Int64 => (array.as_primitive::<Int64Type>().iter().collect(), 64),
        _ => (
            array
                .as_primitive::<Int32Type>()
                .iter()
                .map(|v| v.map(i64::from))
                .collect(),
            32,
        ),
    }
}

fn ints_of(array: &ArrayRef) -> &Int32Array {
    array.as_primitive::<Int32Type>()
}

/// `shiftrightunsigned(a, b)`: Java's `a >>> b`, zeros shifted in from the left; the shift
/// taken modulo the width (32 or 64), as Java takes it.
fn shift_right_unsigned(args: &[ArrayRef]) -> Result<ArrayRef> {
    let (values, bits) = values_of(&args[0]);
    let shifts = ints_of(&args[1]);
    let shifted = values
        .into_iter()
        .zip(shifts.iter())
        .map(|pair| match pair {
            (Some(a), Some(b)) => Some(if bits == 32 {
                i64::from(((a as i32 as u32) >> (b & 31)) as i32)
            } else {
                ((a as u64) >> (b & 63)) as i64
            }),
            _ => None,
        });
    Ok(if bits == 32 {
        let mut out = Int32Builder::new();
        shifted.for_each(|v| out.append_option(v.map(|v| v as i32)));
        Arc::new(out.finish())
    } else {
        let mut out = Int64Builder::new();
        shifted.for_each(|v| out.append_option(v));
        Arc::new(out.finish())
    })
}

fn bit_count_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [DataType::Boolean] => Ok(vec![DataType::Boolean]),
        [t] if is_integer(t) => Ok(vec![DataType::Int64]),
        _ => Err(bad_arguments(name, "an integer or a boolean", types)),
    }
}

/// `bit_count(x)`: the bits set in the integer as a `long` (Spark's `Long.bitCount`, so a
/// negative `INT` counts its sign's 32 extra bits: `bit_count(-1)` is 64); 1 or 0 for a
/// boolean.
fn bit_count(args: &[ArrayRef]) -> Result<ArrayRef> {
    let mut out = Int32Builder::new();
    match args[0].data_type() {
        DataType::Boolean => args[0]
            .as_boolean()
            .iter()
            .for_each(|b| out.append_option(b.map(i32::from))),
        _ => args[0]
            .as_primitive::<Int64Type>()
            .iter()
            .for_each(|i| out.append_option(i.map(|i| i.count_ones() as i32))),
    }
    Ok(Arc::new(out.finish()))
}

/// `bit_get(x, pos)`: the bit at `pos` (0 the lowest) of an `INT` or a `BIGINT`, 0 or 1; a
/// position outside the type's bits is the caller's mistake, as in Spark.
fn bit_get(args: &[ArrayRef]) -> Result<ArrayRef> {
    let (values, bits) = values_of(&args[0]);
    let positions = ints_of(&args[1]);
    let mut out = Int8Builder::new();
    for (value, position) in values.into_iter().zip(positions.iter()) {
        let (Some(value), Some(position)) = (value, position) else {
            out.append_null();
            continue;
        };
        let position = u32::try_from(position)
            .ok()
            .filter(|&p| p < bits)
            .ok_or_else(|| {
                DataFusionError::Execution(format!(
                    "bit_get: the bit position {position} is outside 0..{} of its {bits}-bit \
                 integer",
                    bits - 1
                ))
            })?;
        out.append_value(((value >> position) & 1) as i8);
    }
    Ok(Arc::new(out.finish()))
}
