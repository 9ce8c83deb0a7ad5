//! Spark's `make_timestamp(year, month, day, hour, min, sec[, timezone])`: the timestamp of
//! those fields, `sec` with its fraction to the microsecond (a `DECIMAL(16, 6)`, as Spark
//! takes it), read in the time zone given (and converted to the session's) or else the
//! session's. A field out of its range (month 13, February 30th, hour 24) gives NULL, as
//! Spark without ANSI; `sec` 60 is the next minute's start, as Spark allows it.

use std::sync::Arc;

use chrono::{NaiveDate, NaiveDateTime, TimeDelta};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, TimestampNanosecondBuilder};
use datafusion::arrow::datatypes::{DataType, Decimal128Type, Int32Type, TimeUnit};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ScalarUDF;

use super::{bad_arguments, is_integer, is_string, HiveFunction};
use crate::time_zones::Zone;

/// Spark's type of the seconds: to the microsecond.
const SECONDS: DataType = DataType::Decimal128(16, 6);

pub fn functions() -> Vec<ScalarUDF> {
    vec![HiveFunction::computed_in_zone(
        "make_timestamp",
        |name, types| {
            let fields_ok = types.len() >= 6
                && types[..5].iter().all(is_integer)
                && (types[5].is_numeric() || types[5].is_null());
            match types.get(6) {
                _ if !fields_ok || types.len() > 7 => Err(bad_arguments(
                    name,
                    "(year, month, day, hour, min, sec[, timezone])",
                    types,
                )),
                Some(zone) if !(is_string(zone) || zone.is_null()) => Err(bad_arguments(
                    name,
                    "a time zone name as the seventh argument",
                    types,
                )),
                zone => {
                    let mut coerced = vec![DataType::Int32; 5];
                    coerced.push(SECONDS);
                    coerced.extend(zone.map(|_| DataType::Utf8));
                    Ok(coerced)
                }
            }
        },
        |_| Ok(DataType::Timestamp(TimeUnit::Nanosecond, None)),
        make_timestamp,
    )
    .udf()]
}

fn make_timestamp(args: &[ArrayRef], session: &Zone) -> Result<ArrayRef> {
    let fields: Vec<_> = args[..5]
        .iter()
        .map(|a| a.as_primitive::<Int32Type>())
        .collect();
    let seconds = args[5].as_primitive::<Decimal128Type>();
    let zones = args.get(6).map(|z| z.as_string::<i32>());
    let mut out = TimestampNanosecondBuilder::with_capacity(seconds.len());
    for row in 0..seconds.len() {
        let values: Option<Vec<i32>> = fields
            .iter()
            .map(|f| f.is_valid(row).then(|| f.value(row)))
            .collect();
        let zone = match zones {
            Some(z) if z.is_null(row) => {
                out.append_null();
                continue;
            }
            Some(z) => Some(zone_named(z.value(row))?),
            None => None,
        };
        let (Some(values), true) = (values, seconds.is_valid(row)) else {
            out.append_null();
            continue;
        };
        let local = local_time(&values, seconds.value(row));
        let wall_clock = local.and_then(|local| match &zone {
            Some(zone) => session.to_local(zone.to_utc(local)?),
            None => session.shown(local),
        });
        let nanos = wall_clock.and_then(|time| time.and_utc().timestamp_nanos_opt());
        out.append_option(nanos);
    }
    Ok(Arc::new(out.finish()))
}

/// The wall-clock time of the fields, `None` for one out of its range; `micros` the
/// seconds in microseconds.
fn local_time(fields: &[i32], micros: i128) -> Option<NaiveDateTime> {
    let [year, month, day, hour, minute] = fields.try_into().ok()?;
    let whole = u32::try_from(micros / 1_000_000).ok()?;
    let fraction = (micros % 1_000_000) as i64;
    let (second, next_minute) = match whole {
        0..=59 => (whole, false),
        60 if fraction == 0 => (0, true),
        _ => return None,
    };
    let time = NaiveDate::from_ymd_opt(year, u32::try_from(month).ok()?, u32::try_from(day).ok()?)?
        .and_hms_opt(
            u32::try_from(hour).ok()?,
            u32::try_from(minute).ok()?,
            second,
        )?
        + TimeDelta::microseconds(fraction);
    Some(if next_minute {
        time + TimeDelta::minutes(1)
    } else {
        time
    })
}

fn zone_named(name: &str) -> Result<Zone> {
    Zone::java(name.trim()).ok_or_else(|| {
        DataFusionError::Execution(format!(
            "make_timestamp: '{name}' is not a time zone (a region such as 'Asia/Seoul' or an \
             offset such as '+09:00')"
        ))
    })
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, error, open};

    // Every expected value is Spark's (its session time zone UTC, the engine's).
    #[tokio::test]
    async fn make_timestamp_of_fields_null_when_one_is_out_of_range() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT make_timestamp(2014, 12, 28, 6, 30, 45.887), \
             make_timestamp(2019, 6, 30, 23, 59, 60), make_timestamp(2019, 6, 30, 23, 59, 1), \
             make_timestamp(NULL, 7, 22, 15, 30, 0), make_timestamp(2019, 13, 1, 10, 11, 12), \
             make_timestamp(2019, 2, 30, 10, 11, 12), \
             make_timestamp(2014, 12, 28, 6, 30, 45.887, 'CET'), \
             make_timestamp(2019, 6, 30, 23, 59, 60.5), make_timestamp(2019, 6, 30, 24, 0, 0), \
             make_timestamp(2019, 6, 30, 23, 59, 59.9999999)",
            &[
                "2014-12-28T06:30:45.887",
                "2019-07-01T00:00:00",
                "2019-06-30T23:59:01",
                "NULL",
                "NULL",
                "NULL",
                "2014-12-28T05:30:45.887",
                "NULL",
                "NULL",
                "2019-07-01T00:00:00",
            ],
        )
        .await;
        let e = error(
            &engine,
            &s,
            "SELECT make_timestamp(2024, 1, 1, 0, 0, 0, 'x')",
        )
        .await
        .to_string();
        assert!(e.contains("make_timestamp: 'x' is not a time zone"), "{e}");
    }
}
