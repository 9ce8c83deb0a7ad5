//! Spark's `timestampadd(unit, n, ts)` and `timestampdiff(unit, start, end)` (with their
//! 3-argument other names `dateadd` and `datediff`/`date_diff`, which `hive_syntax` turns
//! into these, the unit written as a word: `timestampdiff(HOUR, a, b)`):
//!
//! - `timestampadd` adds `n` units to a timestamp (a date is its midnight); months, quarters
//!   and years keep the day where the month has it and take the month's last day where it
//!   has not (`2024-01-31` plus a month is `2024-02-29`), as Java's `plusMonths`;
//! - `timestampdiff` counts the whole units from `start` to `end`, as Java's
//!   `ChronoUnit.between` of the two local date-times that Spark calls: negative when `end`
//!   is before `start`, a month counted only once its day and time are reached
//!   (`2024-01-31 → 2024-02-29` is 0 months).
//!
//! Units: `YEAR`, `QUARTER`, `MONTH`, `WEEK`, `DAY` (and `DAYOFYEAR` for `timestampadd`),
//! `HOUR`, `MINUTE`, `SECOND`, `MILLISECOND`, `MICROSECOND`; any other is refused, naming it.

use std::sync::Arc;

use chrono::{DateTime, Datelike, Months, NaiveDateTime, TimeDelta};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Int64Builder, TimestampNanosecondBuilder,
};
use datafusion::arrow::datatypes::{DataType, Int64Type, TimeUnit, TimestampNanosecondType};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ScalarUDF;

use super::encoding::strings_of;
use super::{bad_arguments, is_integer, is_string, HiveFunction};

/// The units, as Spark's parser takes them.
pub const UNITS: &[&str] = &[
    "YEAR",
    "QUARTER",
    "MONTH",
    "WEEK",
    "DAY",
    "DAYOFYEAR",
    "HOUR",
    "MINUTE",
    "SECOND",
    "MILLISECOND",
    "MICROSECOND",
];

const TIMESTAMP: DataType = DataType::Timestamp(TimeUnit::Nanosecond, None);

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::computed(
            "timestampadd",
            |name, types| match types {
                [u, n, t] if unit_like(u) && (is_integer(n) || n.is_null()) && moment(t) => {
                    Ok(vec![DataType::Utf8, DataType::Int64, TIMESTAMP])
                }
                _ => Err(bad_arguments(name, "(unit, count, timestamp)", types)),
            },
            |_| Ok(TIMESTAMP),
            timestamp_add,
        )
        .udf(),
        HiveFunction::computed(
            "timestampdiff",
            |name, types| match types {
                [u, a, b] if unit_like(u) && moment(a) && moment(b) => {
                    Ok(vec![DataType::Utf8, TIMESTAMP, TIMESTAMP])
                }
                _ => Err(bad_arguments(name, "(unit, start, end)", types)),
            },
            |_| Ok(DataType::Int64),
            timestamp_diff,
        )
        .udf(),
    ]
}

fn unit_like(t: &DataType) -> bool {
    is_string(t) || t.is_null()
}

fn moment(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Timestamp(..) | DataType::Date32 | DataType::Date64
    ) || is_string(t)
        || t.is_null()
}

fn bad_unit(function: &str, unit: &str) -> DataFusionError {
    DataFusionError::Execution(format!(
        "{function}: '{unit}' is not a unit; the units are {}",
        UNITS.join(", ")
    ))
}

fn local(nanos: i64) -> NaiveDateTime {
    DateTime::from_timestamp_nanos(nanos).naive_utc()
}

fn nanos_of(time: NaiveDateTime) -> Option<i64> {
    time.and_utc().timestamp_nanos_opt()
}

/// `n` units after `time`; `None` beyond what a timestamp holds.
fn add(unit: &str, n: i64, time: NaiveDateTime) -> Option<NaiveDateTime> {
    let months = |count: i64| {
        let months = Months::new(u32::try_from(count.unsigned_abs()).ok()?);
        if count < 0 {
            time.checked_sub_months(months)
        } else {
            time.checked_add_months(months)
        }
    };
    let per_unit = match unit {
        "YEAR" => return months(n.checked_mul(12)?),
        "QUARTER" => return months(n.checked_mul(3)?),
        "MONTH" => return months(n),
        "WEEK" => 7 * MICROS_PER_DAY,
        "DAY" | "DAYOFYEAR" => MICROS_PER_DAY,
        clock => clock_micros(clock)?,
    };
    time.checked_add_signed(TimeDelta::microseconds(n.checked_mul(per_unit)?))
}

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// The microseconds of a unit of the clock, `HOUR` to `MICROSECOND`; `None` for the units
/// of the calendar.
fn clock_micros(unit: &str) -> Option<i64> {
    match unit {
        "HOUR" => Some(3_600_000_000),
        "MINUTE" => Some(60_000_000),
        "SECOND" => Some(1_000_000),
        "MILLISECOND" => Some(1_000),
        "MICROSECOND" => Some(1),
        _ => None,
    }
}

/// The whole units from `start` to `end`, as Java's `ChronoUnit.between` of local
/// date-times counts them.
fn between(unit: &str, start: NaiveDateTime, end: NaiveDateTime) -> i64 {
    if let Some(per_unit) = clock_micros(unit) {
        let micros = (end - start).num_microseconds().unwrap_or(i64::MAX);
        return micros / per_unit;
    }
    // A date-based unit: the end's date moved a day towards the start when its time of day
    // has not reached the start's (LocalDateTime.until).
    let mut end_date = end.date();
    if end_date > start.date() && end.time() < start.time() {
        end_date = end_date.pred_opt().unwrap_or(end_date);
    } else if end_date < start.date() && end.time() > start.time() {
        end_date = end_date.succ_opt().unwrap_or(end_date);
    }
    let start_date = start.date();
    let days = (end_date - start_date).num_days();
    // LocalDate.monthsUntil: whole months, a month counted once its day is reached.
    let packed = |d: chrono::NaiveDate| {
        (i64::from(d.year()) * 12 + i64::from(d.month0())) * 32 + i64::from(d.day())
    };
    let months = (packed(end_date) - packed(start_date)) / 32;
    match unit {
        "YEAR" => months / 12,
        "QUARTER" => months / 3,
        "MONTH" => months,
        "WEEK" => days / 7,
        _ => days,
    }
}

/// The unit a row names, in capitals, when it is one of [`UNITS`].
fn unit_of(function: &str, unit: &str) -> Result<String> {
    let upper = unit.trim().to_ascii_uppercase();
    let allowed =
        UNITS.contains(&upper.as_str()) && !(function == "timestampdiff" && upper == "DAYOFYEAR");
    if allowed {
        Ok(upper)
    } else {
        Err(bad_unit(function, unit))
    }
}

fn timestamp_add(args: &[ArrayRef]) -> Result<ArrayRef> {
    let units = strings_of(&args[0]);
    let counts = args[1].as_primitive::<Int64Type>();
    let times = args[2].as_primitive::<TimestampNanosecondType>();
    let mut out = TimestampNanosecondBuilder::with_capacity(times.len());
    for (row, unit) in units.into_iter().enumerate() {
        let (Some(unit), false, false) = (unit, counts.is_null(row), times.is_null(row)) else {
            out.append_null();
            continue;
        };
        let unit = unit_of("timestampadd", unit)?;
        let added = add(&unit, counts.value(row), local(times.value(row)));
        out.append_option(added.and_then(nanos_of));
    }
    Ok(Arc::new(out.finish()))
}

fn timestamp_diff(args: &[ArrayRef]) -> Result<ArrayRef> {
    let units = strings_of(&args[0]);
    let starts = args[1].as_primitive::<TimestampNanosecondType>();
    let ends = args[2].as_primitive::<TimestampNanosecondType>();
    let mut out = Int64Builder::with_capacity(starts.len());
    for (row, unit) in units.into_iter().enumerate() {
        let (Some(unit), false, false) = (unit, starts.is_null(row), ends.is_null(row)) else {
            out.append_null();
            continue;
        };
        let unit = unit_of("timestampdiff", unit)?;
        out.append_value(between(
            &unit,
            local(starts.value(row)),
            local(ends.value(row)),
        ));
    }
    Ok(Arc::new(out.finish()))
}

#[cfg(test)]
mod tests;
