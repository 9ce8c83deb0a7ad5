//! Spark's `xxhash64(a, ...)`: the 64-bit xxHash of the values, each hashed with the hash
//! of those before it as its seed (42 for the first), as Spark's `XxHash64` hashes them:
//! bit for bit, so that a bucket or sample computed by it in Spark is the same here.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Builder};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type,
    Int64Type, Int8Type, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ScalarUDF;
use twox_hash::XxHash64;

use super::{bad_arguments, HiveFunction};

/// Spark's seed of the first value's hash.
const SEED: u64 = 42;

pub fn functions() -> Vec<ScalarUDF> {
    vec![HiveFunction::computed(
        "xxhash64",
        |name, types| {
            if types.is_empty() || types.iter().any(holds_map) {
                // A map's entries have no order Spark promises, so Spark refuses to hash one.
                return Err(bad_arguments(name, "one value or more, none a map", types));
            }
            Ok(types.to_vec())
        },
        |_| Ok(DataType::Int64),
        xxhash64,
    )
    .udf()]
}

fn holds_map(t: &DataType) -> bool {
    match t {
        DataType::Map(..) => true,
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            holds_map(f.data_type())
        }
        DataType::Struct(fields) => fields.iter().any(|f| holds_map(f.data_type())),
        _ => false,
    }
}

fn xxhash64(args: &[ArrayRef]) -> Result<ArrayRef> {
    let rows = args.first().map_or(0, |a| a.len());
    let mut out = Int64Builder::with_capacity(rows);
    for row in 0..rows {
        let mut hash = SEED;
        for arg in args {
            hash = hash_value(arg.as_ref(), row, hash)?;
        }
        out.append_value(hash as i64);
    }
    Ok(Arc::new(out.finish()))
}

/// Spark's `hashInt`: the xxHash of the value's four bytes (little-endian).
fn hash_int(value: i32, seed: u64) -> u64 {
    XxHash64::oneshot(seed, &value.to_le_bytes())
}

/// Spark's `hashLong`: of the eight bytes.
fn hash_long(value: i64, seed: u64) -> u64 {
    XxHash64::oneshot(seed, &value.to_le_bytes())
}

/// The hash of `array[row]` seeded by `seed`; a NULL leaves the seed as it is.
fn hash_value(array: &dyn Array, row: usize, seed: u64) -> Result<u64> {
    if array.is_null(row) {
        return Ok(seed);
    }
    Ok(match array.data_type() {
        DataType::Null => seed,
        DataType::Boolean => hash_int(i32::from(array.as_boolean().value(row)), seed),
        DataType::Int8 => hash_int(array.as_primitive::<Int8Type>().value(row).into(), seed),
        DataType::Int16 => hash_int(array.as_primitive::<Int16Type>().value(row).into(), seed),
        DataType::Int32 => hash_int(array.as_primitive::<Int32Type>().value(row), seed),
        DataType::Int64 => hash_long(array.as_primitive::<Int64Type>().value(row), seed),
        DataType::Date32 => hash_int(array.as_primitive::<Date32Type>().value(row), seed),
        // -0.0 hashes as 0.0, and every NaN as Java's one NaN, as Spark.
        DataType::Float32 => {
            let value = array.as_primitive::<Float32Type>().value(row);
            let value = if value == 0.0 { 0.0 } else { value };
            let bits = if value.is_nan() {
                0x7fc0_0000
            } else {
                value.to_bits()
            };
            hash_int(bits as i32, seed)
        }
        DataType::Float64 => {
            let value = array.as_primitive::<Float64Type>().value(row);
            let value = if value == 0.0 { 0.0 } else { value };
            let bits = if value.is_nan() {
                0x7ff8_0000_0000_0000
            } else {
                value.to_bits()
            };
            hash_long(bits as i64, seed)
        }
        // Spark's timestamps are microseconds.
        DataType::Timestamp(unit, _) => {
            let micros = match unit {
                TimeUnit::Second => {
                    array.as_primitive::<TimestampSecondType>().value(row) * 1_000_000
                }
                TimeUnit::Millisecond => {
                    array.as_primitive::<TimestampMillisecondType>().value(row) * 1_000
                }
                TimeUnit::Microsecond => {
                    array.as_primitive::<TimestampMicrosecondType>().value(row)
                }
                TimeUnit::Nanosecond => array
                    .as_primitive::<TimestampNanosecondType>()
                    .value(row)
                    .div_euclid(1_000),
            };
            hash_long(micros, seed)
        }
        // A decimal of up to 18 digits as its unscaled long; a longer one as the bytes of
        // Java's BigInteger.toByteArray.
        DataType::Decimal128(precision, _) => {
            let unscaled = array.as_primitive::<Decimal128Type>().value(row);
            if *precision <= 18 {
                hash_long(unscaled as i64, seed)
            } else {
                XxHash64::oneshot(seed, &java_big_integer_bytes(unscaled))
            }
        }
        DataType::Utf8 => XxHash64::oneshot(seed, array.as_string::<i32>().value(row).as_bytes()),
        DataType::LargeUtf8 => {
            XxHash64::oneshot(seed, array.as_string::<i64>().value(row).as_bytes())
        }
        DataType::Utf8View => XxHash64::oneshot(seed, array.as_string_view().value(row).as_bytes()),
        DataType::Binary => XxHash64::oneshot(seed, array.as_binary::<i32>().value(row)),
        DataType::LargeBinary => XxHash64::oneshot(seed, array.as_binary::<i64>().value(row)),
        DataType::BinaryView => XxHash64::oneshot(seed, array.as_binary_view().value(row)),
        // An array's elements and a struct's fields in turn, as Spark.
        DataType::List(_) => {
            let elements = array.as_list::<i32>().value(row);
            (0..elements.len()).try_fold(seed, |h, i| hash_value(elements.as_ref(), i, h))?
        }
        DataType::LargeList(_) => {
            let elements = array.as_list::<i64>().value(row);
            (0..elements.len()).try_fold(seed, |h, i| hash_value(elements.as_ref(), i, h))?
        }
        DataType::Struct(_) => array
            .as_struct()
            .columns()
            .iter()
            .try_fold(seed, |h, field| hash_value(field.as_ref(), row, h))?,
        other => {
            return Err(DataFusionError::Execution(format!(
                "xxhash64: values of type {other} are not hashed by this engine"
            )))
        }
    })
}

/// Java's `BigInteger.toByteArray`: the fewest big-endian two's-complement bytes.
fn java_big_integer_bytes(value: i128) -> Vec<u8> {
    let bytes = value.to_be_bytes();
    let sign = if value < 0 { 0xff } else { 0x00 };
    let mut start = 0;
    // A leading byte may go while the next keeps the sign in its top bit.
    while start < bytes.len() - 1
        && bytes[start] == sign
        && (bytes[start + 1] & 0x80) == (sign & 0x80)
    {
        start += 1;
    }
    bytes[start..].to_vec()
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, error, open};

    // Every expected value is Spark's, of values cast to the types Spark's were.
    #[tokio::test]
    async fn xxhash64_hashes_as_spark() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT xxhash64('Spark', array(CAST(123 AS INT)), CAST(2 AS INT)), \
             xxhash64('hello'), xxhash64(CAST(1 AS INT)), xxhash64(CAST(1 AS BIGINT)), xxhash64(NULL), \
             xxhash64(CAST(NULL AS INT), CAST(1 AS INT)), xxhash64(''), xxhash64(CAST(1.5 AS DOUBLE)), \
             xxhash64(CAST(1.5 AS FLOAT)), xxhash64(true), xxhash64(DATE '2024-01-01'), \
             xxhash64(TIMESTAMP '2024-01-01 00:00:00'), xxhash64(CAST(1.25 AS DECIMAL(10, 2))), \
             xxhash64(X'0102'), xxhash64(CAST(-0.0 AS DOUBLE)), xxhash64(CAST(1 AS TINYINT)), \
             xxhash64(named_struct('a', CAST(1 AS INT), 'b', 'x')), \
             xxhash64('a much longer string of more than thirty-two bytes in it'), \
             xxhash64(array(CAST(1 AS INT), NULL, CAST(3 AS INT))), xxhash64(CAST(1 AS BIGINT), 'a', CAST(2.5 AS DOUBLE))",
            &[
                "5602566077635097486",
                "-4367754540140381902",
                "-6698625589789238999",
                "-7001672635703045582",
                "42",
                "-6698625589789238999",
                "-7444071767201028348",
                "7738255526519901366",
                "6163473420726370430",
                "-6698625589789238999",
                "3242891694566951137",
                "3859582417520161651",
                "2287599437899865974",
                "-449066226287847073",
                "-5252525462095825812",
                "-6698625589789238999",
                "8510603489595372987",
                "-3839594685158448985",
                "-3383274367486667931",
                "-5487148875980390079",
            ],
        )
        .await;
        let e = error(&engine, &s, "SELECT xxhash64(map('a', 1))")
            .await
            .to_string();
        assert!(
            e.contains("xxhash64 takes one value or more, none a map"),
            "{e}"
        );
    }
}
