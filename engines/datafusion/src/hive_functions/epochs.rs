//! Spark's conversions between timestamps (the session's wall-clock times) and counts since
//! 1970-01-01 00:00:00 UTC:
//! `timestamp_seconds`, `timestamp_millis`, `timestamp_micros` (a timestamp of a count),
//! `unix_seconds`, `unix_millis`, `unix_micros` (the count of a timestamp, rounded down, as
//! Spark's `floorDiv`), `unix_date` (the days of a date), and Hive's `to_epoch_milli`
//! (`unix_millis`).

use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::logical_expr::{cast, lit, try_cast, Expr, ScalarUDF};

use super::{bad_arguments, is_integer, HiveFunction};
use crate::time_zones::{session_to_utc, utc_to_session};

/// The engine's timestamps: nanoseconds, no zone (the session's wall-clock times).
const TIMESTAMP: DataType = DataType::Timestamp(TimeUnit::Nanosecond, None);

pub fn functions() -> Vec<ScalarUDF> {
    let timestamp = |_: &[DataType]| Ok(TIMESTAMP);
    let bigint = |_: &[DataType]| Ok(DataType::Int64);
    vec![
        HiveFunction::rewrite(
            "date_from_unix_date",
            a_number,
            |_| Ok(DataType::Date32),
            |a, _| Ok(cast(cast(a[0].clone(), DataType::Int32), DataType::Date32)),
        )
        .udf(),
        HiveFunction::rewrite("timestamp_seconds", a_number, timestamp, |a, t| {
            Ok(of_seconds(a[0].clone(), &t[0]))
        })
        .udf(),
        HiveFunction::rewrite("timestamp_millis", an_integer, timestamp, |a, _| {
            Ok(of_count(a[0].clone(), TimeUnit::Millisecond))
        })
        .udf(),
        HiveFunction::rewrite("timestamp_micros", an_integer, timestamp, |a, _| {
            Ok(of_count(a[0].clone(), TimeUnit::Microsecond))
        })
        .udf(),
        HiveFunction::rewrite("unix_seconds", a_timestamp, bigint, |a, _| {
            Ok(count_of(a[0].clone(), 1_000_000_000))
        })
        .udf(),
        HiveFunction::rewrite("unix_millis", a_timestamp, bigint, |a, _| {
            Ok(count_of(a[0].clone(), 1_000_000))
        })
        .with_aliases(&["to_epoch_milli"])
        .udf(),
        HiveFunction::rewrite("unix_micros", a_timestamp, bigint, |a, _| {
            Ok(count_of(a[0].clone(), 1_000))
        })
        .udf(),
        HiveFunction::rewrite(
            "unix_date",
            |name, types| match types {
                [DataType::Date32 | DataType::Null] => Ok(vec![DataType::Date32]),
                _ => Err(bad_arguments(name, "a date", types)),
            },
            |_| Ok(DataType::Int32),
            |a, _| Ok(cast(a[0].clone(), DataType::Int32)),
        )
        .udf(),
    ]
}

fn a_number(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if is_integer(t) => Ok(vec![DataType::Int64]),
        [t] if t.is_numeric() => Ok(types.to_vec()),
        _ => Err(bad_arguments(name, "a number", types)),
    }
}

fn an_integer(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if is_integer(t) => Ok(vec![DataType::Int64]),
        _ => Err(bad_arguments(name, "an integer", types)),
    }
}

/// A timestamp (Spark's `unix_*` refuse a string, as here), in nanoseconds.
fn a_timestamp(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [DataType::Timestamp(_, zone)] => Ok(vec![DataType::Timestamp(
            TimeUnit::Nanosecond,
            zone.clone(),
        )]),
        [DataType::Null] => Ok(vec![TIMESTAMP]),
        _ => Err(bad_arguments(name, "a timestamp", types)),
    }
}

/// The timestamp `seconds` (a number of type `t`) after 1970-01-01 00:00:00 UTC: Spark's
/// `timestamp_seconds` and `CAST(seconds AS TIMESTAMP)`. A fraction of a second is kept to
/// the microsecond, as Spark keeps it: a decimal's digits exactly, a double's as Spark
/// truncates them.
pub(crate) fn of_seconds(seconds: Expr, t: &DataType) -> Expr {
    let micros = match t {
        t if is_integer(t) => return of_count(seconds, TimeUnit::Second),
        DataType::Decimal128(..) => {
            cast(seconds, DataType::Decimal128(31, 6))
                * lit(ScalarValue::Decimal128(Some(1_000_000), 7, 0))
        }
        _ => cast(seconds, DataType::Float64) * lit(1_000_000f64),
    };
    of_count(cast(micros, DataType::Int64), TimeUnit::Microsecond)
}

/// The timestamp `count` units after 1970-01-01 00:00:00 UTC, as the session's wall-clock
/// time; NULL beyond the nanosecond timestamps' years (1677 to 2262), where the cast to them
/// failed the query.
fn of_count(count: Expr, unit: TimeUnit) -> Expr {
    utc_to_session(try_cast(
        cast(count, DataType::Timestamp(unit, None)),
        TIMESTAMP,
    ))
}

/// A timestamp's count of `per` nanoseconds since 1970-01-01 00:00:00 UTC (a timestamp
/// without a zone being the session's wall-clock time), rounded down (before 1970 too:
/// 23:59:59.5 on 1969-12-31 is second -1).
pub(crate) fn count_of(timestamp: Expr, per: i64) -> Expr {
    let nanos = cast(cast(session_to_utc(timestamp), TIMESTAMP), DataType::Int64);
    let per = lit(per);
    let below = ((nanos.clone() % per.clone()) + per.clone()) % per.clone();
    (nanos - below) / per
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, error, open};

    // Every expected value is Spark's.
    #[tokio::test]
    async fn timestamps_of_counts_and_counts_of_timestamps() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT timestamp_seconds(1230219000), timestamp_seconds(CAST(1230219000.123 AS \
             DECIMAL(13, 3))), timestamp_seconds(1.5), timestamp_millis(1230219000123), \
             timestamp_micros(1230219000123123), timestamp_seconds(-1), \
             timestamp_seconds(NULL)",
            &[
                "2008-12-25T15:30:00",
                "2008-12-25T15:30:00.123",
                "1970-01-01T00:00:01.500",
                "2008-12-25T15:30:00.123",
                "2008-12-25T15:30:00.123123",
                "1969-12-31T23:59:59",
                "NULL",
            ],
        )
        .await;
        check(
            &engine,
            &s,
            "SELECT unix_seconds(TIMESTAMP '2008-12-25 15:30:00.123'), \
             unix_millis(TIMESTAMP '2008-12-25 15:30:00.123'), \
             unix_micros(TIMESTAMP '2008-12-25 15:30:00.123456'), \
             unix_date(DATE '2008-12-25'), unix_seconds(TIMESTAMP '1969-12-31 23:59:59.5'), \
             unix_millis(TIMESTAMP '1969-12-31 23:59:59.9995'), \
             unix_micros(TIMESTAMP '1969-12-31 23:59:59.999999'), unix_date(DATE '1969-12-31'), \
             unix_seconds(NULL), to_epoch_milli(TIMESTAMP '2008-12-25 15:30:00.123')",
            &[
                "1230219000",
                "1230219000123",
                "1230219000123456",
                "14238",
                "-1",
                "-1",
                "-1",
                "-1",
                "NULL",
                "1230219000123",
            ],
        )
        .await;
        // Spark refuses a string where a timestamp or date is due, and so does the engine.
        for (sql, expected) in [
            (
                "SELECT unix_seconds('2008-12-25 15:30:00')",
                "unix_seconds takes a timestamp",
            ),
            ("SELECT unix_date('2008-12-25')", "unix_date takes a date"),
        ] {
            let e = error(&engine, &s, sql).await.to_string();
            assert!(e.contains(expected), "{sql}: {e}");
        }
    }
}
