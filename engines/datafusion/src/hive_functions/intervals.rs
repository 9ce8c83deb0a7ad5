//! Spark's interval constructors, whose fields may be columns (`d + make_interval(0, 0, 0,
//! n)`, where `INTERVAL n DAY` takes only a literal):
//!
//! - `make_dt_interval([days[, hours[, mins[, secs]]]])`: an exact span, `secs` to the
//!   microsecond; beyond what it holds the query fails, as in Spark;
//! - `make_ym_interval([years[, months]])`: months; beyond an `INT` of months the query fails;
//! - `make_interval([years[, months[, weeks[, days[, hours[, mins[, secs]]]]]]])`: months,
//!   days and a span together; NULL beyond what it holds, as Spark without ANSI.
//!
//! Each is DataFusion's interval of months, days and nanoseconds, which dates and timestamps
//! add and subtract (`ts + make_dt_interval(1, 2)`); a NULL field gives NULL. Shown as Hive
//! shows intervals: `1 02:03:04.500000000`, `1-2`.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, IntervalMonthDayNanoBuilder};
use datafusion::arrow::datatypes::{
    DataType, Decimal128Type, Int32Type, IntervalMonthDayNano, IntervalUnit,
};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ScalarUDF;

use super::{bad_arguments, is_integer, HiveFunction};

/// Spark's type of the seconds: to the microsecond.
const SECONDS: DataType = DataType::Decimal128(18, 6);
const MICROS_PER_SECOND: i128 = 1_000_000;

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::computed(
            "make_dt_interval",
            |name, types| fields(name, types, 4, "([days[, hours[, mins[, secs]]]])"),
            |_| Ok(interval()),
            |args| made(args, 4, day_time),
        )
        .udf(),
        HiveFunction::computed(
            "make_ym_interval",
            |name, types| fields(name, types, 0, "([years[, months]])"),
            |_| Ok(interval()),
            |args| made(args, 0, year_month),
        )
        .udf(),
        HiveFunction::computed(
            "make_interval",
            |name, types| {
                let takes = "([years[, months[, weeks[, days[, hours[, mins[, secs]]]]]]])";
                fields(name, types, 7, takes)
            },
            |_| Ok(interval()),
            |args| made(args, 7, calendar),
        )
        .udf(),
    ]
}

fn interval() -> DataType {
    DataType::Interval(IntervalUnit::MonthDayNano)
}

/// The arguments' types: integer fields as `INT`s, the seconds (the `seconds_at`th, counted
/// from 1; 0 for none) to the microsecond.
fn fields(name: &str, types: &[DataType], seconds_at: usize, takes: &str) -> Result<Vec<DataType>> {
    let most = if seconds_at == 0 { 2 } else { seconds_at };
    let taken = types.len() <= most
        && types.iter().enumerate().all(|(i, t)| {
            if i + 1 == seconds_at {
                t.is_numeric() || t.is_null()
            } else {
                is_integer(t)
            }
        });
    if !taken {
        return Err(bad_arguments(
            name,
            &format!("integer fields {takes}"),
            types,
        ));
    }
    Ok((0..types.len())
        .map(|i| {
            if i + 1 == seconds_at {
                SECONDS
            } else {
                DataType::Int32
            }
        })
        .collect())
}

/// The fields of one row, missing ones 0, the seconds in microseconds.
type Fields = [i128; 7];

/// Each row's interval from its fields (`None`: NULL), or the row's error.
fn made(
    args: &[ArrayRef],
    seconds_at: usize,
    interval_of: fn(&Fields) -> Result<Option<IntervalMonthDayNano>>,
) -> Result<ArrayRef> {
    let rows = args.first().map_or(1, |a| a.len());
    let mut out = IntervalMonthDayNanoBuilder::with_capacity(rows);
    'rows: for row in 0..rows {
        let mut fields: Fields = [0; 7];
        for (i, arg) in args.iter().enumerate() {
            if arg.is_null(row) {
                out.append_null();
                continue 'rows;
            }
            fields[i] = if i + 1 == seconds_at {
                arg.as_primitive::<Decimal128Type>().value(row)
            } else {
                i128::from(arg.as_primitive::<Int32Type>().value(row))
            };
        }
        out.append_option(interval_of(&fields)?);
    }
    Ok(Arc::new(out.finish()))
}

/// `make_dt_interval`: days, hours, minutes and seconds as one span.
fn day_time(fields: &Fields) -> Result<Option<IntervalMonthDayNano>> {
    let [days, hours, minutes, micros, ..] = *fields;
    let micros = ((days * 24 + hours) * 60 + minutes) * 60 * MICROS_PER_SECOND + micros;
    let nanos = i64::try_from(micros * 1_000).map_err(|_| {
        DataFusionError::Execution(format!(
            "make_dt_interval: {micros} microseconds is beyond an interval the engine holds \
             (about 292 years either way)"
        ))
    })?;
    Ok(Some(IntervalMonthDayNano::new(0, 0, nanos)))
}

/// `make_ym_interval`: years and months as months.
fn year_month(fields: &Fields) -> Result<Option<IntervalMonthDayNano>> {
    let months = fields[0] * 12 + fields[1];
    let months = i32::try_from(months).map_err(|_| {
        DataFusionError::Execution(format!(
            "make_ym_interval: {months} months is beyond an interval of months (an INT)"
        ))
    })?;
    Ok(Some(IntervalMonthDayNano::new(months, 0, 0)))
}

/// `make_interval`: months, days and a span; NULL where one does not fit.
fn calendar(fields: &Fields) -> Result<Option<IntervalMonthDayNano>> {
    let [years, months, weeks, days, hours, minutes, micros] = *fields;
    let months = i32::try_from(years * 12 + months).ok();
    let days = i32::try_from(weeks * 7 + days).ok();
    let micros = (hours * 60 + minutes) * 60 * MICROS_PER_SECOND + micros;
    let nanos = i64::try_from(micros * 1_000).ok();
    Ok(match (months, days, nanos) {
        (Some(months), Some(days), Some(nanos)) => {
            Some(IntervalMonthDayNano::new(months, days, nanos))
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, error, open};

    // Every expected value is Spark 4.3's (session time zone UTC).
    #[tokio::test]
    async fn intervals_of_fields_move_dates_and_timestamps() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT TIMESTAMP '2024-01-01 00:00:00' + make_dt_interval(1, 2), \
             TIMESTAMP '2024-01-01 00:00:00' - make_dt_interval(0, 0, 0, 1.5), \
             DATE '2024-01-31' + make_ym_interval(0, 1), \
             DATE '2024-01-31' + make_interval(0, 1), \
             TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 1, 1, 1, 1, 1.5), \
             make_dt_interval(NULL, 1) IS NULL, make_ym_interval(1, NULL) IS NULL, \
             make_interval(1, NULL) IS NULL",
            &[
                "2024-01-02T02:00:00",
                "2023-12-31T23:59:58.500",
                "2024-02-29",
                "2024-02-29",
                "2024-01-09T01:01:01.500",
                "true",
                "true",
                "true",
            ],
        )
        .await;
        // A field from a column, which INTERVAL n DAY cannot take.
        check(
            &engine,
            &s,
            "SELECT max(d + make_interval(0, 0, 0, n)) FROM VALUES (DATE '2024-01-01', 5), \
             (DATE '2024-02-28', 2) AS t(d, n)",
            &["2024-03-01"],
        )
        .await;
        let beyond = error(&engine, &s, "SELECT make_ym_interval(178956970, 8)")
            .await
            .to_string();
        assert!(beyond.contains("beyond an interval of months"), "{beyond}");
        check(
            &engine,
            &s,
            "SELECT make_interval(178956970, 8) IS NULL, try_make_interval(178956970, 8) IS NULL, \
             TIMESTAMP '2024-01-01 00:00:00' + try_make_interval(0, 0, 0, 1)",
            &["true", "true", "2024-01-02T00:00:00"],
        )
        .await;
    }
}
