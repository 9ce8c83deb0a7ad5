//! Spark's aggregate `percentile_approx(x, p[, accuracy])` (`approx_percentile`): one of
//! the group's values, of `x`'s type, found by Spark's Greenwald-Khanna summaries
//! (`QuantileSummaries`, relative error `1 / accuracy`, 10000 by default), where
//! DataFusion's `approx_percentile_cont` interpolates a t-digest into a `DOUBLE`. A group
//! of fewer than `accuracy / 2` values is answered exactly: the value at rank `ceil(p * n)`.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Array, ListArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, Field, FieldRef, Float64Type, Int64Type, Schema, TimeUnit,
};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, Documentation, Signature,
    Volatility,
};
use datafusion::physical_expr::PhysicalExpr;

use super::bad_arguments;

pub fn aggregates() -> Vec<AggregateUDF> {
    vec![AggregateUDF::new_from_impl(PercentileApprox {
        signature: Signature::user_defined(Volatility::Immutable),
        aliases: vec!["approx_percentile".to_owned()],
    })]
}

/// Spark's `ApproximatePercentile.DEFAULT_PERCENTILE_ACCURACY`.
const DEFAULT_ACCURACY: i64 = 10_000;
/// Spark's `QuantileSummaries.defaultHeadSize`: values buffered before they are sampled.
const HEAD_SIZE: usize = 50_000;
/// Spark's `QuantileSummaries.defaultCompressThreshold`.
const COMPRESS_THRESHOLD: usize = 10_000;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PercentileApprox {
    signature: Signature,
    aliases: Vec<String>,
}

/// Whether `percentile_approx` takes a value of this type (as Spark: numbers, dates and
/// timestamps).
fn takes(t: &DataType) -> bool {
    t.is_integer()
        || matches!(
            t,
            DataType::Float32
                | DataType::Float64
                | DataType::Decimal128(..)
                | DataType::Date32
                | DataType::Timestamp(..)
        )
}

impl AggregateUDFImpl for PercentileApprox {
    fn name(&self) -> &str {
        "percentile_approx"
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let takes_all = "(number, date or timestamp, percentage[, accuracy])";
        match types {
            [x, p] if takes(x) && (p.is_numeric() || p.is_null()) => {
                Ok(vec![x.clone(), DataType::Float64])
            }
            [x, p, a] if takes(x) && (p.is_numeric() || p.is_null()) && a.is_integer() => {
                Ok(vec![x.clone(), DataType::Float64, DataType::Int64])
            }
            _ => Err(bad_arguments(self.name(), takes_all, types)),
        }
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        Ok(types[0].clone())
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name())
    }

    /// The summary of the values so far, compressed: the samples' values, `g`s and `delta`s,
    /// and the count of values.
    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let list = |name: &str, t: DataType| {
            Arc::new(Field::new(
                format!("{}[{name}]", args.name),
                DataType::new_list(t, true),
                true,
            ))
        };
        Ok(vec![
            list("values", DataType::Float64),
            list("g", DataType::Int64),
            list("delta", DataType::Int64),
            Arc::new(Field::new(
                format!("{}[count]", args.name),
                DataType::Int64,
                true,
            )),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let percentage = match constant(&args.exprs[1])? {
            ScalarValue::Float64(Some(p)) if (0.0..=1.0).contains(&p) => p,
            other => {
                return Err(DataFusionError::Plan(format!(
                    "percentile_approx: the percentage must be a constant from 0 to 1, not {other}"
                )))
            }
        };
        let accuracy = match args.exprs.get(2).map(constant).transpose()? {
            None => DEFAULT_ACCURACY,
            Some(ScalarValue::Int64(Some(a))) if a > 0 && a <= i64::from(i32::MAX) => a,
            Some(other) => {
                return Err(DataFusionError::Plan(format!(
                    "percentile_approx: the accuracy must be a positive constant up to \
                     2147483647, not {other}"
                )))
            }
        };
        Ok(Box::new(Percentile {
            value_type: args.expr_fields[0].data_type().clone(),
            percentage,
            summaries: Summaries::new(1.0 / accuracy as f64),
        }))
    }
}

/// The value of a constant argument (a literal, or a cast of one).
fn constant(expr: &Arc<dyn PhysicalExpr>) -> Result<ScalarValue> {
    let empty = RecordBatch::new_empty(Arc::new(Schema::empty()));
    match expr.evaluate(&empty) {
        Ok(ColumnarValue::Scalar(value)) => Ok(value),
        _ => Err(DataFusionError::Plan(
            "percentile_approx: the percentage and accuracy must be constants".to_owned(),
        )),
    }
}

#[derive(Debug)]
struct Percentile {
    value_type: DataType,
    percentage: f64,
    summaries: Summaries,
}

/// Values as the `DOUBLE`s Spark summarises: a date its days, a timestamp its microseconds.
fn doubles(values: &ArrayRef) -> Result<Float64Array> {
    let values = match values.data_type() {
        DataType::Date32 => cast(values, &DataType::Int32)?,
        DataType::Timestamp(unit, _) => {
            let ticks = cast(values, &DataType::Int64)?;
            let per_micro = match unit {
                TimeUnit::Nanosecond => 1_000,
                _ => 1,
            };
            let per_second = match unit {
                TimeUnit::Second => 1_000_000,
                TimeUnit::Millisecond => 1_000,
                _ => 1,
            };
            let micros: datafusion::arrow::array::Int64Array = ticks
                .as_primitive::<Int64Type>()
                .unary(|t| t.div_euclid(per_micro) * per_second);
            Arc::new(micros)
        }
        _ => Arc::clone(values),
    };
    Ok(cast(&values, &DataType::Float64)?
        .as_primitive::<Float64Type>()
        .clone())
}

impl Accumulator for Percentile {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        for x in doubles(&values[0])?.iter().flatten() {
            self.summaries.insert(x);
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let lists: Vec<&ListArray> = states[..3].iter().map(|s| s.as_list::<i32>()).collect();
        let counts = states[3].as_primitive::<Int64Type>();
        for row in 0..counts.len() {
            if counts.is_null(row) {
                continue;
            }
            let values = lists[0].value(row);
            let gs = lists[1].value(row);
            let deltas = lists[2].value(row);
            let (values, gs, deltas) = (
                values.as_primitive::<Float64Type>(),
                gs.as_primitive::<Int64Type>(),
                deltas.as_primitive::<Int64Type>(),
            );
            let sampled = (0..values.len())
                .map(|k| Stats {
                    value: values.value(k),
                    g: gs.value(k),
                    delta: deltas.value(k),
                })
                .collect();
            self.summaries.merge(sampled, counts.value(row));
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        self.summaries.compress();
        let list = |values: Vec<ScalarValue>, t: &DataType| {
            ScalarValue::List(ScalarValue::new_list_nullable(&values, t))
        };
        let sampled = &self.summaries.sampled;
        Ok(vec![
            list(
                sampled.iter().map(|s| ScalarValue::from(s.value)).collect(),
                &DataType::Float64,
            ),
            list(
                sampled.iter().map(|s| ScalarValue::from(s.g)).collect(),
                &DataType::Int64,
            ),
            list(
                sampled.iter().map(|s| ScalarValue::from(s.delta)).collect(),
                &DataType::Int64,
            ),
            ScalarValue::from(self.summaries.count),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        self.summaries.compress();
        let Some(x) = self.summaries.query(self.percentage) else {
            return ScalarValue::try_from(&self.value_type);
        };
        // Spark's conversion of the `DOUBLE` back: integers truncated, a decimal rounded to
        // its scale.
        Ok(match &self.value_type {
            DataType::Date32 => ScalarValue::Date32(Some(x as i32)),
            DataType::Timestamp(unit, zone) => {
                let micros = x as i64;
                let ticks = match unit {
                    TimeUnit::Second => micros.div_euclid(1_000_000),
                    TimeUnit::Millisecond => micros.div_euclid(1_000),
                    TimeUnit::Microsecond => micros,
                    TimeUnit::Nanosecond => micros.saturating_mul(1_000),
                };
                let (ticks, zone) = (Some(ticks), zone.clone());
                match unit {
                    TimeUnit::Second => ScalarValue::TimestampSecond(ticks, zone),
                    TimeUnit::Millisecond => ScalarValue::TimestampMillisecond(ticks, zone),
                    TimeUnit::Microsecond => ScalarValue::TimestampMicrosecond(ticks, zone),
                    TimeUnit::Nanosecond => ScalarValue::TimestampNanosecond(ticks, zone),
                }
            }
            t if t.is_integer() => ScalarValue::Int64(Some(x as i64)).cast_to(t)?,
            t => ScalarValue::Float64(Some(x)).cast_to(t)?,
        })
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self.summaries.head.capacity() * 8
            + self.summaries.sampled.capacity() * std::mem::size_of::<Stats>()
    }
}

/// One sample of a summary: a value, the ranks it stands for (`g`) and its rank's
/// uncertainty (`delta`).
#[derive(Debug, Clone, Copy)]
struct Stats {
    value: f64,
    g: i64,
    delta: i64,
}

/// Spark's `QuantileSummaries`, step for step.
#[derive(Debug)]
struct Summaries {
    relative_error: f64,
    sampled: Vec<Stats>,
    head: Vec<f64>,
    count: i64,
    compressed: bool,
}

impl Summaries {
    fn new(relative_error: f64) -> Self {
        Self {
            relative_error,
            sampled: Vec::new(),
            head: Vec::new(),
            count: 0,
            compressed: false,
        }
    }

    fn insert(&mut self, x: f64) {
        self.head.push(x);
        self.compressed = false;
        if self.head.len() >= HEAD_SIZE {
            self.insert_head();
            if self.sampled.len() >= COMPRESS_THRESHOLD {
                self.compress();
            }
        }
    }

    /// `withHeadBufferInserted`: the buffered values sorted into the samples.
    fn insert_head(&mut self) {
        if self.head.is_empty() {
            return;
        }
        let mut sorted = std::mem::take(&mut self.head);
        sorted.sort_by(f64::total_cmp);
        let mut current_count = self.count;
        let mut samples = Vec::with_capacity(self.sampled.len() + sorted.len());
        let mut sample = 0;
        for (op, &value) in sorted.iter().enumerate() {
            while sample < self.sampled.len() && self.sampled[sample].value <= value {
                samples.push(self.sampled[sample]);
                sample += 1;
            }
            current_count += 1;
            let delta =
                if samples.is_empty() || (sample == self.sampled.len() && op == sorted.len() - 1) {
                    0
                } else {
                    (2.0 * self.relative_error * current_count as f64).floor() as i64
                };
            samples.push(Stats { value, g: 1, delta });
        }
        samples.extend_from_slice(&self.sampled[sample..]);
        self.sampled = samples;
        self.count = current_count;
    }

    fn compress(&mut self) {
        if self.compressed {
            return;
        }
        self.insert_head();
        let threshold = 2.0 * self.relative_error * self.count as f64;
        self.sampled = compress_samples(&self.sampled, threshold);
        self.compressed = true;
    }

    /// Another summary's compressed samples, of `count` values, merged in.
    fn merge(&mut self, other: Vec<Stats>, count: i64) {
        self.compress();
        if count == 0 {
            return;
        }
        if self.count == 0 {
            self.sampled = other;
            self.count = count;
            return;
        }
        let mut merged = std::mem::take(&mut self.sampled);
        merged.extend(other);
        merged.sort_by(|a, b| a.value.total_cmp(&b.value));
        self.count += count;
        let threshold = 2.0 * self.relative_error * self.count as f64;
        self.sampled = compress_samples(&merged, threshold);
    }

    /// The value at `percentage`; `None` without values.
    fn query(&self, percentage: f64) -> Option<f64> {
        let first = self.sampled.first()?;
        if percentage <= self.relative_error {
            return Some(first.value);
        }
        let last = self.sampled.last()?;
        if percentage >= 1.0 - self.relative_error {
            return Some(last.value);
        }
        let target_error = self
            .sampled
            .iter()
            .map(|s| s.delta + s.g)
            .max()
            .unwrap_or(i64::MIN)
            / 2;
        let rank = (percentage * self.count as f64).ceil() as i64;
        let mut min_rank = first.g;
        for (i, sample) in self.sampled.iter().enumerate() {
            if i == self.sampled.len() - 1 {
                break;
            }
            let max_rank = min_rank + sample.delta;
            if max_rank - target_error <= rank && rank <= min_rank + target_error {
                return Some(sample.value);
            }
            min_rank += self.sampled[i + 1].g;
        }
        Some(last.value)
    }
}

/// `compressImmut`: neighbouring samples merged while their ranks stay within `threshold`.
fn compress_samples(samples: &[Stats], threshold: f64) -> Vec<Stats> {
    let Some(&last) = samples.last() else {
        return Vec::new();
    };
    let mut kept = Vec::with_capacity(samples.len());
    let mut head = last;
    for i in (1..samples.len().saturating_sub(1)).rev() {
        let sample = samples[i];
        if ((sample.g + head.g + head.delta) as f64) < threshold {
            head.g += sample.g;
        } else {
            kept.push(head);
            head = sample;
        }
    }
    kept.push(head);
    let first = samples[0];
    if first.value <= head.value && samples.len() > 1 {
        kept.push(first);
    }
    kept.reverse();
    kept
}

#[cfg(test)]
mod tests {
    use crate::test_util::{engine, open, value_rows};

    // Every expected value is Spark 4's.
    #[tokio::test]
    async fn percentile_approx_is_one_of_the_values_of_their_type() {
        let engine = engine().await;
        let session = open(&engine);
        let of = |expr: &str| {
            format!(
                "SELECT percentile_approx({expr}, 0.5), typeof(percentile_approx({expr}, 0.5)) \
                 FROM VALUES (1), (2), (3), (10) AS t(x)"
            )
        };
        let cases = [
            (of("CAST(x AS INT)"), ["2", "int"]),
            (of("x"), ["2", "int"]),
            (of("CAST(x AS BIGINT)"), ["2", "bigint"]),
            (of("CAST(x AS SMALLINT)"), ["2", "smallint"]),
            (of("CAST(x AS DOUBLE)"), ["2.0", "double"]),
            (of("CAST(x AS FLOAT)"), ["2.0", "float"]),
            (of("CAST(x AS DECIMAL(10,2))"), ["2.00", "decimal(10,2)"]),
            (of("date_add(DATE'2024-01-01', x)"), ["2024-01-03", "date"]),
        ];
        for (sql, expected) in cases {
            assert_eq!(
                value_rows(&engine, &session, &sql).await,
                [expected],
                "{sql}"
            );
        }
        let cases: [(&str, &[&str]); 6] = [
            (
                "SELECT percentile_approx(x, array(0.25, 0.5)), percentile_approx(x, 0.5, 100), \
                 approx_percentile(x, 0.5) FROM VALUES (1), (2), (3), (10) AS t(x)",
                &["[1, 2]", "2", "2"],
            ),
            (
                "SELECT percentile_approx(x, 0.5) FROM VALUES (1), (2) AS t(x)",
                &["1"],
            ),
            (
                "SELECT percentile_approx(x * 1.5D, 0.5) FROM VALUES (1), (2), (3) AS t(x)",
                &["3.0"],
            ),
            (
                "SELECT percentile_approx(x, 0.25), percentile_approx(x, 0.75), \
                 percentile_approx(x, 0.1), percentile_approx(x, 0.9) \
                 FROM VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10) AS t(x)",
                &["3", "8", "1", "9"],
            ),
            (
                "SELECT percentile_approx(x, 0.5), percentile_approx(x, 0), \
                 percentile_approx(x, 1) FROM VALUES (5), (NULL), (1), (3) AS t(x)",
                &["3", "1", "5"],
            ),
            (
                "SELECT percentile_approx(x, 0.5) FROM VALUES (CAST(NULL AS INT)) AS t(x)",
                &["NULL"],
            ),
        ];
        for (sql, expected) in cases {
            assert_eq!(
                value_rows(&engine, &session, sql).await,
                [expected],
                "{sql}"
            );
        }
        // Beyond `accuracy / 2` values the summaries are approximate, as Spark's.
        let rows = value_rows(
            &engine,
            &session,
            "SELECT percentile_approx(value, 0.5), percentile_approx(value, 0.01) \
             FROM range(6000)",
        )
        .await;
        assert_eq!(rows, [["2998", "58"]]);
    }
}
