//! Spark's `sequence(start, stop[, step])`: the array of integers, dates or timestamps from
//! `start` to `stop` (both included) by `step`, where DataFusion's `generate_series` steps
//! dates by adding its interval again and again (Jan 31 + 1 month + 1 month is Mar 29, where
//! Spark's is `start + 2 months`, Mar 31) and has no step of -1 by default.

use std::sync::Arc;

use chrono::{DateTime, Days, Months, NaiveDate, NaiveDateTime, TimeDelta};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Date32Array, Int32Array, Int64Array, ListArray, PrimitiveArray,
    TimestampNanosecondArray,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::datatypes::{
    ArrowPrimitiveType, DataType, Date32Type, Field, Int64Type, IntervalMonthDayNano,
    IntervalMonthDayNanoType, IntervalUnit, TimeUnit, TimestampNanosecondType,
};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ScalarUDF;

use super::{bad_arguments, is_integer, HiveFunction};

/// Spark's bound on an array's elements (`ByteArrayMethods.MAX_ROUNDED_ARRAY_LENGTH`).
const MAX_ELEMENTS: i64 = i32::MAX as i64 - 15;

const TIMESTAMP: DataType = DataType::Timestamp(TimeUnit::Nanosecond, None);
const INTERVAL: DataType = DataType::Interval(IntervalUnit::MonthDayNano);

pub fn functions() -> Vec<ScalarUDF> {
    vec![HiveFunction::computed(
        "sequence",
        sequence_types,
        |t| Ok(DataType::new_list(t[0].clone(), true)),
        sequence,
    )
    .udf()]
}

/// Integers (an `INT` sequence of `INT`s, else `BIGINT`), or dates or timestamps with an
/// interval step (a date and a timestamp make timestamps, as in Spark).
fn sequence_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let takes = "(start, stop[, step]) of integers, or of dates or timestamps with an \
                 interval step";
    if !(2..=3).contains(&types.len()) {
        return Err(bad_arguments(name, takes, types));
    }
    if types.iter().all(is_integer) {
        let wide = types
            .iter()
            .any(|t| !matches!(t, DataType::Int8 | DataType::Int16 | DataType::Int32));
        let integer = if wide {
            DataType::Int64
        } else {
            DataType::Int32
        };
        return Ok(vec![integer; types.len()]);
    }
    let temporal = |t: &DataType| matches!(t, DataType::Date32 | DataType::Timestamp(..));
    let step_ok = types
        .get(2)
        .is_none_or(|t| matches!(t, DataType::Interval(_) | DataType::Null));
    if !(temporal(&types[0]) && temporal(&types[1]) && step_ok) {
        return Err(bad_arguments(name, takes, types));
    }
    let both_dates = types[0] == DataType::Date32 && types[1] == DataType::Date32;
    let bound = if both_dates {
        DataType::Date32
    } else {
        TIMESTAMP
    };
    let mut coerced = vec![bound.clone(), bound];
    if types.len() == 3 {
        coerced.push(INTERVAL);
    }
    Ok(coerced)
}

fn sequence(args: &[ArrayRef]) -> Result<ArrayRef> {
    let rows = args[0].len();
    let mut lengths = Vec::with_capacity(rows);
    let mut valid = Vec::with_capacity(rows);
    let values: ArrayRef = match args[0].data_type() {
        DataType::Int32 | DataType::Int64 => {
            let as_i64 = |a: &ArrayRef| -> Result<Int64Array> {
                Ok(datafusion::arrow::compute::cast(a, &DataType::Int64)?
                    .as_primitive::<Int64Type>()
                    .clone())
            };
            let (starts, stops) = (as_i64(&args[0])?, as_i64(&args[1])?);
            let steps = args.get(2).map(as_i64).transpose()?;
            let mut out = Vec::new();
            for i in 0..rows {
                let step = step_of(steps.as_ref(), i);
                let (true, true, Some(step)) = (starts.is_valid(i), stops.is_valid(i), step) else {
                    push_row(&mut lengths, &mut valid, None);
                    continue;
                };
                let row = integers(starts.value(i), stops.value(i), step)?;
                push_row(&mut lengths, &mut valid, Some(row.len()));
                out.extend(row);
            }
            if args[0].data_type() == &DataType::Int32 {
                Arc::new(out.into_iter().map(|v| v as i32).collect::<Int32Array>())
            } else {
                Arc::new(Int64Array::from(out))
            }
        }
        bound => {
            let dates = bound == &DataType::Date32;
            let times = |a: &ArrayRef| -> Vec<Option<NaiveDateTime>> {
                if dates {
                    a.as_primitive::<Date32Type>()
                        .iter()
                        .map(|d| d.map(date_time_of_day))
                        .collect()
                } else {
                    a.as_primitive::<TimestampNanosecondType>()
                        .iter()
                        .map(|t| t.map(|t| DateTime::from_timestamp_nanos(t).naive_utc()))
                        .collect()
                }
            };
            let (starts, stops) = (times(&args[0]), times(&args[1]));
            let steps = args
                .get(2)
                .map(|s| s.as_primitive::<IntervalMonthDayNanoType>());
            let mut out = Vec::new();
            for i in 0..rows {
                let step = step_of(steps, i);
                let (Some(start), Some(stop), Some(step)) = (starts[i], stops[i], step) else {
                    push_row(&mut lengths, &mut valid, None);
                    continue;
                };
                // A day towards stop, as Spark's default for dates and timestamps.
                let step = step.unwrap_or(IntervalMonthDayNano::new(
                    0,
                    if start <= stop { 1 } else { -1 },
                    0,
                ));
                if dates && step.nanoseconds != 0 {
                    return Err(DataFusionError::Execution(
                        "sequence: the step between dates must be whole days, weeks, months \
                         or years"
                            .into(),
                    ));
                }
                let row = temporals(start, stop, step)?;
                push_row(&mut lengths, &mut valid, Some(row.len()));
                out.extend(row);
            }
            if dates {
                let epoch = date_time_of_day(0);
                let days: Vec<i32> = out
                    .into_iter()
                    .map(|t| (t - epoch).num_days() as i32)
                    .collect();
                Arc::new(Date32Array::from(days))
            } else {
                let nanos = out
                    .into_iter()
                    .map(|t| {
                        t.and_utc().timestamp_nanos_opt().ok_or_else(|| {
                            DataFusionError::Execution(format!(
                                "sequence: {t} is beyond the timestamps of nanoseconds"
                            ))
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                Arc::new(TimestampNanosecondArray::from(nanos))
            }
        }
    };
    let nulls = NullBuffer::from(valid);
    Ok(Arc::new(ListArray::try_new(
        Arc::new(Field::new_list_field(values.data_type().clone(), true)),
        OffsetBuffer::from_lengths(lengths),
        values,
        (nulls.null_count() > 0).then_some(nulls),
    )?))
}

/// Row `i`'s step: `None` when it is NULL (the row's sequence is NULL), `Some(None)` when
/// the call gives none (the default step).
fn step_of<T: ArrowPrimitiveType>(
    steps: Option<&PrimitiveArray<T>>,
    i: usize,
) -> Option<Option<T::Native>> {
    match steps {
        Some(steps) if steps.is_null(i) => None,
        Some(steps) => Some(Some(steps.value(i))),
        None => Some(None),
    }
}

fn push_row(lengths: &mut Vec<usize>, valid: &mut Vec<bool>, length: Option<usize>) {
    lengths.push(length.unwrap_or(0));
    valid.push(length.is_some());
}

/// The date `days` after 1970-01-01, at midnight.
fn date_time_of_day(days: i32) -> NaiveDateTime {
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).expect("a date");
    let date = if days >= 0 {
        epoch.checked_add_days(Days::new(days as u64))
    } else {
        epoch.checked_sub_days(Days::new(days.unsigned_abs() as u64))
    };
    date.unwrap_or(epoch)
        .and_hms_opt(0, 0, 0)
        .expect("midnight")
}

fn illegal(
    start: impl std::fmt::Display,
    stop: impl std::fmt::Display,
    step: &str,
) -> DataFusionError {
    DataFusionError::Execution(format!(
        "sequence: a step of {step} does not lead from {start} to {stop} (it must be positive \
         from a smaller start, negative from a greater one)"
    ))
}

fn too_long(count: i64) -> DataFusionError {
    DataFusionError::Execution(format!(
        "sequence: {count} elements are more than an array holds ({MAX_ELEMENTS})"
    ))
}

/// `start` to `stop` by `step` (1 or -1 towards `stop` when none is given).
fn integers(start: i64, stop: i64, step: Option<i64>) -> Result<Vec<i64>> {
    let step = step.unwrap_or(if start <= stop { 1 } else { -1 });
    let wrong_way = (step > 0 && start > stop) || (step < 0 && start < stop);
    if wrong_way || (step == 0 && start != stop) {
        return Err(illegal(start, stop, &step.to_string()));
    }
    if start == stop {
        return Ok(vec![start]);
    }
    let count = (i128::from(stop) - i128::from(start)) / i128::from(step) + 1;
    if count > i128::from(MAX_ELEMENTS) {
        return Err(too_long(count as i64));
    }
    Ok((0..count as i64).map(|i| start + i * step).collect())
}

/// `start + i * step` for `i` from 0 while it has not passed `stop`: months added to the
/// date (the month's last day when it is shorter), then days, then the time, as Spark
/// computes each element from `start`.
fn temporals(
    start: NaiveDateTime,
    stop: NaiveDateTime,
    step: IntervalMonthDayNano,
) -> Result<Vec<NaiveDateTime>> {
    let describe = || {
        format!(
            "{} months {} days {} ns",
            step.months, step.days, step.nanoseconds
        )
    };
    let nth = |i: i64| -> Option<NaiveDateTime> {
        let months = i64::from(step.months) * i;
        let days = i64::from(step.days) * i;
        let shifted = if months >= 0 {
            start.checked_add_months(Months::new(u32::try_from(months).ok()?))
        } else {
            start.checked_sub_months(Months::new(u32::try_from(-months).ok()?))
        }?;
        let shifted = if days >= 0 {
            shifted.checked_add_days(Days::new(days as u64))
        } else {
            shifted.checked_sub_days(Days::new(days.unsigned_abs()))
        }?;
        shifted.checked_add_signed(TimeDelta::nanoseconds(step.nanoseconds.checked_mul(i)?))
    };
    let first_step = nth(1).ok_or_else(|| illegal(start, stop, &describe()))?;
    let forward = first_step > start;
    if start == stop {
        return Ok(vec![start]);
    }
    if first_step == start || forward != (start < stop) {
        return Err(illegal(start, stop, &describe()));
    }
    let mut out = vec![start];
    let mut i = 1;
    while let Some(next) = nth(i) {
        if (forward && next > stop) || (!forward && next < stop) {
            break;
        }
        out.push(next);
        i += 1;
        if i > MAX_ELEMENTS {
            return Err(too_long(i));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, error, open};

    // Every expected value is Spark's.
    #[tokio::test]
    async fn sequences_of_integers_step_towards_stop() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT sequence(1, 5), sequence(5, 1), sequence(1, 10, 3), sequence(10, 1, -4), \
             sequence(3, 3), sequence(1, 1, 0), sequence(5, 5, -1), sequence(1, NULL), \
             arrow_typeof(sequence(CAST(1 AS INT), CAST(3 AS INT)))",
            &[
                "[1, 2, 3, 4, 5]",
                "[5, 4, 3, 2, 1]",
                "[1, 4, 7, 10]",
                "[10, 6, 2]",
                "[3]",
                "[1]",
                "[5]",
                "NULL",
                "List(Int32)",
            ],
        )
        .await;
        for sql in ["SELECT sequence(1, 5, -1)", "SELECT sequence(1, 5, 0)"] {
            let e = error(&engine, &s, sql).await.to_string();
            assert!(e.contains("does not lead from 1 to 5"), "{sql}: {e}");
        }
    }

    #[tokio::test]
    async fn sequences_of_dates_and_timestamps_add_the_step_to_the_start() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT sequence(DATE '2024-01-31', DATE '2024-04-30', INTERVAL 1 MONTH), \
             sequence(DATE '2024-01-01', DATE '2024-01-03'), \
             sequence(DATE '2024-01-03', DATE '2024-01-01'), \
             sequence(DATE '2024-01-05', DATE '2024-01-01', INTERVAL -2 DAY), \
             sequence(DATE '2024-01-01', DATE '2024-01-10', INTERVAL 1 WEEK), \
             sequence(TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-01 01:00:00', \
                      INTERVAL 30 MINUTES), \
             sequence(TIMESTAMP '2024-01-31 10:00:00', TIMESTAMP '2024-04-01 00:00:00', \
                      INTERVAL 1 MONTH)",
            &[
                "[2024-01-31, 2024-02-29, 2024-03-31, 2024-04-30]",
                "[2024-01-01, 2024-01-02, 2024-01-03]",
                "[2024-01-03, 2024-01-02, 2024-01-01]",
                "[2024-01-05, 2024-01-03, 2024-01-01]",
                "[2024-01-01, 2024-01-08]",
                "[2024-01-01T00:00:00, 2024-01-01T00:30:00, 2024-01-01T01:00:00]",
                "[2024-01-31T10:00:00, 2024-02-29T10:00:00, 2024-03-31T10:00:00]",
            ],
        )
        .await;
        let e = error(
            &engine,
            &s,
            "SELECT sequence(DATE '2024-01-01', DATE '2024-01-03', INTERVAL -1 DAY)",
        )
        .await
        .to_string();
        assert!(
            e.contains("sequence: a step of 0 months -1 days 0 ns does not lead"),
            "{e}"
        );
    }
}
