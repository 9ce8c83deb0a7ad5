//! Hash functions that must agree bit for bit with another engine's, so that a bucket or
//! sample computed by them there is the same here: Spark's `xxhash64(a, ...)`, the 64-bit
//! xxHash of the values, each hashed with the hash of those before it as its seed (42 for
//! the first), and Hive's `murmur_hash(a, ...)`, the 32-bit Murmur3 of each value's bytes
//! combined as `31 * h + next` (Hive's bucketing hash, `getBucketHashCode`).

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int32Builder, Int64Builder};
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
    vec![
        HiveFunction::computed(
            "murmur_hash",
            |name, types| match types.iter().find(|t| !murmur_hashed(t)) {
                Some(other) => Err(DataFusionError::Plan(format!(
                    "{name}: values of type {other} are not hashed by this engine (Hive hashes \
                     its own serialization of timestamps and decimals, and no map)"
                ))),
                None if types.is_empty() => Err(bad_arguments(name, "one value or more", types)),
                None => Ok(types.to_vec()),
            },
            |_| Ok(DataType::Int32),
            murmur_hash,
        )
        .udf(),
        HiveFunction::computed(
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
        .udf(),
    ]
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

/// Hive's `Murmur3.DEFAULT_SEED`.
const HIVE_SEED: u32 = 104_729;

/// Whether Hive's `hashCodeMurmur` hashes values of this type as the engine can.
fn murmur_hashed(t: &DataType) -> bool {
    match t {
        DataType::Null
        | DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Float32
        | DataType::Float64
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::Date32 => true,
        DataType::List(f) | DataType::LargeList(f) => murmur_hashed(f.data_type()),
        DataType::Struct(fields) => fields.iter().all(|f| murmur_hashed(f.data_type())),
        _ => false,
    }
}

fn murmur_hash(args: &[ArrayRef]) -> Result<ArrayRef> {
    let rows = args.first().map_or(0, |a| a.len());
    let mut out = Int32Builder::with_capacity(rows);
    for row in 0..rows {
        let hash = args.iter().fold(0i32, |h, arg| {
            h.wrapping_mul(31)
                .wrapping_add(murmur_value(arg.as_ref(), row))
        });
        out.append_value(hash);
    }
    Ok(Arc::new(out.finish()))
}

/// Hive's `hashCodeMurmur` of `array[row]`: a number's big-endian bytes (Java's
/// `ByteBuffer`), a string's UTF-8, hashed; 0 for NULL; a `TINYINT` and a boolean their
/// value; an array's elements and a struct's fields combined as `31 * h + next`.
fn murmur_value(array: &dyn Array, row: usize) -> i32 {
    if array.is_null(row) {
        return 0;
    }
    let hash = |bytes: &[u8]| hive_murmur3(bytes, HIVE_SEED);
    match array.data_type() {
        DataType::Boolean => i32::from(array.as_boolean().value(row)),
        DataType::Int8 => array.as_primitive::<Int8Type>().value(row).into(),
        DataType::Int16 => hash(&array.as_primitive::<Int16Type>().value(row).to_be_bytes()),
        DataType::Int32 => hash(&array.as_primitive::<Int32Type>().value(row).to_be_bytes()),
        DataType::Int64 => hash(&array.as_primitive::<Int64Type>().value(row).to_be_bytes()),
        DataType::Date32 => hash(&array.as_primitive::<Date32Type>().value(row).to_be_bytes()),
        // Hive puts `floatToIntBits(f)` into the buffer with `putFloat`: the int's value
        // converted to a float, whose bits are hashed (and the same for doubles).
        DataType::Float32 => {
            let bits = array.as_primitive::<Float32Type>().value(row).to_bits() as i32;
            hash(&(bits as f32).to_be_bytes())
        }
        DataType::Float64 => {
            let bits = array.as_primitive::<Float64Type>().value(row).to_bits() as i64;
            hash(&(bits as f64).to_be_bytes())
        }
        DataType::Utf8 => hash(array.as_string::<i32>().value(row).as_bytes()),
        DataType::LargeUtf8 => hash(array.as_string::<i64>().value(row).as_bytes()),
        DataType::Utf8View => hash(array.as_string_view().value(row).as_bytes()),
        DataType::Binary => hash(array.as_binary::<i32>().value(row)),
        DataType::LargeBinary => hash(array.as_binary::<i64>().value(row)),
        DataType::BinaryView => hash(array.as_binary_view().value(row)),
        DataType::List(_) => combined(array.as_list::<i32>().value(row).as_ref()),
        DataType::LargeList(_) => combined(array.as_list::<i64>().value(row).as_ref()),
        DataType::Struct(_) => array.as_struct().columns().iter().fold(0i32, |h, field| {
            h.wrapping_mul(31)
                .wrapping_add(murmur_value(field.as_ref(), row))
        }),
        _ => 0,
    }
}

/// An array's elements' hashes combined as `31 * h + next`.
fn combined(elements: &dyn Array) -> i32 {
    (0..elements.len()).fold(0i32, |h, i| {
        h.wrapping_mul(31).wrapping_add(murmur_value(elements, i))
    })
}

/// Murmur3's 32-bit hash as Hive's `Murmur3.hash32` computes it: the standard one, but for
/// the last one to three bytes, which Hive reads as signed Java bytes (a byte from 0x80 on
/// sets the bits above it), so that a text ending in a non-ASCII character hashes as in Hive.
fn hive_murmur3(data: &[u8], seed: u32) -> i32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let scramble = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mut hash = seed;
    let blocks = data.chunks_exact(4);
    let tail = blocks.remainder();
    for block in blocks {
        let k = u32::from_le_bytes(block.try_into().expect("four bytes"));
        hash = (hash ^ scramble(k))
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe654_6b64);
    }
    if !tail.is_empty() {
        let signed = |i: usize| i32::from(tail[i] as i8) as u32;
        let mut k = 0u32;
        for i in (0..tail.len()).rev() {
            k ^= signed(i) << (8 * i);
        }
        hash ^= scramble(k);
    }
    hash ^= data.len() as u32;
    hash ^= hash >> 16;
    hash = hash.wrapping_mul(0x85eb_ca6b);
    hash ^= hash >> 13;
    hash = hash.wrapping_mul(0xc2b2_ae35);
    hash ^= hash >> 16;
    hash as i32
}

#[cfg(test)]
mod tests {
    use super::hive_murmur3;
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, error, open};

    // Murmur3's body and finish as Spark's hash() computes them with its seed 42, of texts
    // whose bytes are whole blocks of four (Spark reads a text's last bytes otherwise) and
    // of an INT's four bytes.
    #[test]
    fn murmur3_is_sparks_and_hives() {
        assert_eq!(hive_murmur3(b"abcd", 42), -396302900);
        assert_eq!(hive_murmur3(b"abcdefgh", 42), -804741815);
        assert_eq!(hive_murmur3(&1i32.to_le_bytes(), 42), -559580957);
    }

    // murmur_hash('hive') is Hive's answer (as Presto's test of Hive's built-in functions
    // records it); NULL hashes as 0 and values combine as 31 * h + next, as Hive's
    // getBucketHashCode.
    #[tokio::test]
    async fn murmur_hash_hashes_as_hive() {
        let engine = engine().await;
        let s = open(&engine);
        let hive = -1992589179i32;
        let twice = hive.wrapping_mul(31).wrapping_add(hive).to_string();
        // 31 * 0 (the NULL's hash) + the text's.
        let after_null = hive.to_string();
        check(
            &engine,
            &s,
            "SELECT murmur_hash('hive'), murmur_hash(NULL), murmur_hash('hive', 'hive'), \
             murmur_hash(CAST(NULL AS STRING), 'hive'), murmur_hash(array('hive'))",
            &["-1992589179", "0", &twice, &after_null, "-1992589179"],
        )
        .await;
        let e = error(
            &engine,
            &s,
            "SELECT murmur_hash(TIMESTAMP '2024-01-01 00:00:00')",
        )
        .await
        .to_string();
        assert!(e.contains("murmur_hash: values of type Timestamp"), "{e}");
    }

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
