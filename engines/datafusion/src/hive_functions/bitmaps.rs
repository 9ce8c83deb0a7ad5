//! Spark's bitmap functions, which count distinct integers exactly in fixed-size pieces: a
//! value falls in bucket `bitmap_bucket_number(x)` at bit `bitmap_bit_position(x)`;
//! `bitmap_construct_agg` sets a group's bits in a bitmap of 4096 bytes (32768 bits, bit 0
//! the lowest of the first byte), `bitmap_or_agg` and `bitmap_and_agg` combine bitmaps, and
//! `bitmap_count` counts the bits set. The bitmaps are Spark's bytes, so one written by
//! Spark reads here and the other way round.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, Int64Array};
use datafusion::arrow::datatypes::{DataType, FieldRef, Int64Type};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    lit, when, Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, ScalarUDF, Signature,
    Volatility,
};

use super::encoding::bytes_of;
use super::{bad_arguments, is_binary, is_integer, HiveFunction};

/// A bitmap's bytes, as Spark's `BitmapExpressionUtils.NUM_BYTES`.
const BITMAP_BYTES: usize = 4096;
/// The values one bitmap holds.
const BITMAP_BITS: i64 = 8 * BITMAP_BYTES as i64;

pub fn functions() -> Vec<ScalarUDF> {
    let integer = |name: &str, types: &[DataType]| match types {
        [t] if is_integer(t) => Ok(vec![DataType::Int64]),
        _ => Err(bad_arguments(name, "an integer", types)),
    };
    vec![
        // Buckets 1, 2, ... hold 1 to 32768, 32769 to 65536, ...; 0, -1, ... the rest.
        HiveFunction::rewrite("bitmap_bucket_number", integer, bigint, |a, _| {
            let x = a[0].clone();
            when(
                x.clone().gt(lit(0i64)),
                lit(1i64) + (x.clone() - lit(1i64)) / lit(BITMAP_BITS),
            )
            .otherwise(x / lit(BITMAP_BITS))
        })
        .udf(),
        HiveFunction::rewrite("bitmap_bit_position", integer, bigint, |a, _| {
            let x = a[0].clone();
            // `0 - x` wraps for the smallest BIGINT, as Java's negation does.
            when(
                x.clone().gt(lit(0i64)),
                (x.clone() - lit(1i64)) % lit(BITMAP_BITS),
            )
            .otherwise((lit(0i64) - x) % lit(BITMAP_BITS))
        })
        .udf(),
        HiveFunction::computed(
            "bitmap_count",
            |name, types| match types {
                [t] if is_bitmap(t) => Ok(vec![DataType::Binary]),
                _ => Err(bad_arguments(name, "a bitmap (BINARY)", types)),
            },
            bigint,
            bitmap_count,
        )
        .udf(),
    ]
}

pub fn aggregates() -> Vec<AggregateUDF> {
    [Combine::Construct, Combine::Or, Combine::And]
        .into_iter()
        .map(|combine| {
            AggregateUDF::new_from_impl(BitmapAggregate {
                combine,
                signature: Signature::user_defined(Volatility::Immutable),
            })
        })
        .collect()
}

fn bigint(_: &[DataType]) -> Result<DataType> {
    Ok(DataType::Int64)
}

/// A bitmap's type: binary, or NULL.
fn is_bitmap(t: &DataType) -> bool {
    is_binary(t) || t.is_null()
}

/// `bitmap_count(bitmap)`: the bits set, a `BIGINT`.
fn bitmap_count(args: &[ArrayRef]) -> Result<ArrayRef> {
    let counts: Int64Array = bytes_of(&args[0])?
        .into_iter()
        .map(|bytes| bytes.map(|b| b.iter().map(|byte| i64::from(byte.count_ones())).sum()))
        .collect();
    Ok(Arc::new(counts))
}

/// What a bitmap aggregate makes of its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Combine {
    /// `bitmap_construct_agg(position)`: the bits at the rows' positions set.
    Construct,
    /// `bitmap_or_agg(bitmap)`: the bits set in any row's bitmap.
    Or,
    /// `bitmap_and_agg(bitmap)`: the bits set in every row's bitmap (a byte a shorter
    /// bitmap lacks holds none).
    And,
}

impl Combine {
    fn name(self) -> &'static str {
        match self {
            Combine::Construct => "bitmap_construct_agg",
            Combine::Or => "bitmap_or_agg",
            Combine::And => "bitmap_and_agg",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct BitmapAggregate {
    combine: Combine,
    signature: Signature,
}

impl AggregateUDFImpl for BitmapAggregate {
    fn name(&self) -> &str {
        self.combine.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        match (self.combine, types) {
            (Combine::Construct, [t]) if is_integer(t) => Ok(vec![DataType::Int64]),
            (Combine::Or | Combine::And, [t]) if is_bitmap(t) => Ok(vec![DataType::Binary]),
            (Combine::Construct, _) => Err(bad_arguments(self.name(), "a bit position", types)),
            _ => Err(bad_arguments(self.name(), "a bitmap (BINARY)", types)),
        }
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Binary)
    }

    fn is_nullable(&self) -> bool {
        false
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![super::state_field(
            &args,
            "bitmap",
            DataType::Binary,
            false,
        )])
    }

    fn accumulator(&self, _: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(Bitmap::new(self.combine)))
    }

    fn default_value(&self, _: &DataType) -> Result<ScalarValue> {
        Ok(ScalarValue::Binary(Some(Bitmap::new(self.combine).bytes)))
    }
}

/// A group's bitmap so far: no bit set, or every bit for `bitmap_and_agg`, as Spark starts.
#[derive(Debug)]
struct Bitmap {
    combine: Combine,
    bytes: Vec<u8>,
}

impl Bitmap {
    fn new(combine: Combine) -> Self {
        let start = if combine == Combine::And { 0xff } else { 0 };
        Self {
            combine,
            bytes: vec![start; BITMAP_BYTES],
        }
    }

    fn or(&mut self, other: &[u8]) {
        for (byte, other) in self.bytes.iter_mut().zip(other) {
            *byte |= other;
        }
    }

    fn and(&mut self, other: &[u8]) {
        for (i, byte) in self.bytes.iter_mut().enumerate() {
            *byte &= other.get(i).copied().unwrap_or(0);
        }
    }

    fn set(&mut self, position: i64) -> Result<()> {
        if !(0..BITMAP_BITS).contains(&position) {
            return Err(DataFusionError::Execution(format!(
                "bitmap_construct_agg: the bit position {position} is outside the bitmap's \
                 {BITMAP_BITS} bits (0 to {}); pass bitmap_bit_position(x), and group by \
                 bitmap_bucket_number(x)",
                BITMAP_BITS - 1
            )));
        }
        self.bytes[(position / 8) as usize] |= 1 << (position % 8);
        Ok(())
    }
}

impl Accumulator for Bitmap {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        match self.combine {
            Combine::Construct => {
                for position in values[0].as_primitive::<Int64Type>().iter().flatten() {
                    self.set(position)?;
                }
            }
            Combine::Or => values[0]
                .as_binary::<i32>()
                .iter()
                .flatten()
                .for_each(|b| self.or(b)),
            Combine::And => values[0]
                .as_binary::<i32>()
                .iter()
                .flatten()
                .for_each(|b| self.and(b)),
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        for partial in states[0].as_binary::<i32>().iter().flatten() {
            match self.combine {
                Combine::Construct | Combine::Or => self.or(partial),
                Combine::And => self.and(partial),
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![self.evaluate()?])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Binary(Some(self.bytes.clone())))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.bytes.capacity()
    }
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, error, open};

    // Every expected value is Spark 4.3's.
    #[tokio::test]
    async fn bitmap_buckets_and_positions_are_sparks() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT bitmap_bucket_number(0), bitmap_bucket_number(-1), \
             bitmap_bucket_number(32768), bitmap_bucket_number(32769), bitmap_bit_position(0), \
             bitmap_bit_position(-1), bitmap_bit_position(32768), bitmap_bit_position(-32769), \
             typeof(bitmap_bit_position(1Y)), bitmap_count(X'0F01'), \
             bitmap_count(CAST(NULL AS BINARY))",
            &[
                "0", "0", "1", "2", "0", "1", "32767", "1", "bigint", "5", "NULL",
            ],
        )
        .await;
    }

    #[tokio::test]
    async fn bitmap_aggregates_set_combine_and_count_bits() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT hex(substr(bitmap_construct_agg(x), 1, 3)), \
             length(bitmap_construct_agg(x)), \
             bitmap_count(bitmap_construct_agg(bitmap_bit_position(x))) \
             FROM VALUES (0), (9), (NULL), (9) AS t(x)",
            &["010200", "4096", "2"],
        )
        .await;
        check(
            &engine,
            &s,
            "SELECT hex(substr(bitmap_or_agg(b), 1, 2)), length(bitmap_or_agg(b)), \
             hex(substr(bitmap_and_agg(b), 1, 2)), length(bitmap_and_agg(b)) \
             FROM VALUES (X'03'), (X'0102') AS t(b)",
            &["0302", "4096", "0100", "4096"],
        )
        .await;
        // An empty group's bitmap holds no bit (every bit for the AND).
        check(
            &engine,
            &s,
            "SELECT bitmap_count(bitmap_construct_agg(x)), bitmap_count(bitmap_and_agg(b)) \
             FROM VALUES (1, X'01') AS t(x, b) WHERE x > 1",
            &["0", "32768"],
        )
        .await;
        // Distinct values counted exactly, bucket by bucket.
        check(
            &engine,
            &s,
            "SELECT sum(n) FROM (SELECT bitmap_count(bitmap_construct_agg(bitmap_bit_position(x))) \
             AS n FROM (SELECT explode(sequence(-40000, 40000)) AS x UNION ALL SELECT 7) \
             GROUP BY bitmap_bucket_number(x))",
            &["80001"],
        )
        .await;
        let out_of_range = error(
            &engine,
            &s,
            "SELECT bitmap_construct_agg(x) FROM VALUES (32768L) AS t(x)",
        )
        .await;
        assert!(
            out_of_range
                .to_string()
                .contains("bit position 32768 is outside"),
            "{out_of_range}"
        );
    }
}
