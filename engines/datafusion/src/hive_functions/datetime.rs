//! Hive's date and time functions, over DataFusion's `date_part`, `to_char`, `make_date` and
//! casts.
//!
//! Hive takes a date as a `DATE`, a `TIMESTAMP` or a string (`'2024-01-31'`,
//! `'2024-01-31 10:00:00'`); a string that is not a date gives NULL, as in Hive, not an
//! error. A timestamp is a wall-clock time of the session's zone ([`crate::time_zones`]).
//! `date_add`, `date_sub`, `add_months` and `last_day` return a `DATE` (Hive 2.1+ and Spark),
//! `date_format` and `from_unixtime` a string, `unix_timestamp` and `datediff` integers.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Date32Array, TimestampMillisecondArray};
use datafusion::arrow::compute::kernels::cast_utils::Parser;
use datafusion::arrow::datatypes::{DataType, Date32Type, Date64Type, Int32Type, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::functions::expr_fn::{
    date_part, make_date, now, to_char, to_timestamp_seconds, to_unixtime,
};
use datafusion::logical_expr::{
    cast, lit, try_cast, when, ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, TypeSignature, Volatility,
};

use super::{bad_arguments, is_integer, is_string, literal_string, HiveFunction};
use crate::time_zones::{session_to_utc, utc_to_session, utc_to_zone, zone_to_utc};

/// `window_time(w)`: takes the struct `window(ts, ...)` makes (`{start, end}`).
fn window_struct(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if window_end(types).is_ok() => Ok(vec![t.clone()]),
        _ => Err(bad_arguments(
            name,
            "a time window, the struct window(ts, length) makes",
            types,
        )),
    }
}

/// The type of a time window's `end`.
fn window_end(types: &[DataType]) -> Result<DataType> {
    match types {
        [DataType::Struct(fields)] => fields
            .iter()
            .find(|f| f.name() == "end" && matches!(f.data_type(), DataType::Timestamp(..)))
            .map(|f| f.data_type().clone())
            .ok_or_else(|| DataFusionError::Plan("window_time: no timestamp `end`".to_owned())),
        _ => Err(DataFusionError::Plan(
            "window_time takes a time window".to_owned(),
        )),
    }
}

/// `window_time(w)` (Spark's): the last moment of a time window, a microsecond before its end,
/// the time Spark gives the window's rows when it groups by it again.
fn window_time(args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    let end = datafusion::functions::core::expr_fn::get_field(args[0].clone(), "end");
    let microsecond = ScalarValue::IntervalMonthDayNano(Some(
        datafusion::arrow::datatypes::IntervalMonthDayNano::new(0, 0, 1_000),
    ));
    Ok(end - Expr::Literal(microsecond, None))
}

/// Hive's default pattern of `from_unixtime` and `unix_timestamp`.
const DEFAULT_PATTERN: &str = "yyyy-MM-dd HH:mm:ss";

pub fn functions() -> Vec<ScalarUDF> {
    let int = |_: &[DataType]| Ok(DataType::Int32);
    let date = |_: &[DataType]| Ok(DataType::Date32);
    let string = |_: &[DataType]| Ok(DataType::Utf8);
    vec![
        HiveFunction::rewrite("window_time", window_struct, window_end, window_time).udf(),
        HiveFunction::rewrite("year", one_date, int, |a, t| date_field("year", a, t)).udf(),
        HiveFunction::rewrite("quarter", one_date, int, |a, t| date_field("quarter", a, t)).udf(),
        HiveFunction::rewrite("month", one_date, int, |a, t| date_field("month", a, t)).udf(),
        HiveFunction::rewrite("day", one_date, int, |a, t| date_field("day", a, t))
            .with_aliases(&["dayofmonth"])
            .udf(),
        HiveFunction::rewrite("hour", one_date, int, |a, t| field("hour", a, t)).udf(),
        HiveFunction::rewrite("minute", one_date, int, |a, t| field("minute", a, t)).udf(),
        // Whole seconds, as Hive: the fraction is dropped.
        HiveFunction::rewrite("second", one_date, int, |a, t| field("second", a, t)).udf(),
        // ISO weeks (Monday first; week 1 holds January 4th), as Hive's weekofyear.
        HiveFunction::rewrite("weekofyear", one_date, int, |a, t| date_field("week", a, t)).udf(),
        HiveFunction::rewrite("dayofyear", one_date, int, |a, t| date_field("doy", a, t)).udf(),
        // Hive: 1 = Sunday ... 7 = Saturday; DataFusion's dow counts from 0.
        HiveFunction::rewrite("dayofweek", one_date, int, |a, t| {
            Ok(date_field("dow", a, t)? + lit(1i32))
        })
        .udf(),
        HiveFunction::rewrite("datediff", two_dates, int, |a, t| {
            Ok(day_number(&a[0], &t[0]) - day_number(&a[1], &t[1]))
        })
        .udf(),
        HiveFunction::rewrite("date_add", date_and_int, date, |a, t| {
            Ok(cast(
                day_number(&a[0], &t[0]) + a[1].clone(),
                DataType::Date32,
            ))
        })
        .udf(),
        HiveFunction::rewrite("date_sub", date_and_int, date, |a, t| {
            Ok(cast(
                day_number(&a[0], &t[0]) - a[1].clone(),
                DataType::Date32,
            ))
        })
        .udf(),
        HiveFunction::rewrite("add_months", date_and_int, date, add_months).udf(),
        HiveFunction::rewrite("next_day", date_and_day_name, date, next_day).udf(),
        HiveFunction::rewrite("last_day", one_date, date, |a, t| {
            let date = as_date(&a[0], &t[0]);
            Ok(last_day(
                date_part(lit("year"), date.clone()),
                date_part(lit("month"), date),
            ))
        })
        .udf(),
        HiveFunction::rewrite("date_format", date_and_pattern, string, date_format).udf(),
        HiveFunction::rewrite("from_unixtime", seconds_and_pattern, string, |a, _| {
            let pattern = match a.get(1) {
                Some(p) => pattern("from_unixtime", p)?,
                None => java_pattern("from_unixtime", DEFAULT_PATTERN.to_owned())?,
            };
            let moment = to_timestamp_seconds(vec![a[0].clone()]);
            Ok(formatted(utc_to_session(moment), pattern))
        })
        .udf(),
        // One argument: the date of a date, timestamp or string, NULL for a string that is
        // none (Hive); with patterns (Spark's form): the string read with them.
        HiveFunction::rewrite("to_date", to_date_types, date, |a, t| {
            if a.len() == 1 {
                return Ok(as_date(&a[0], &t[0]));
            }
            let mut args = vec![a[0].clone()];
            for p in &a[1..] {
                args.push(lit(parsing_pattern("to_date", p)?));
            }
            Ok(cast(parse_with_patterns(args), DataType::Date32))
        })
        .udf(),
        HiveFunction::rewrite(
            "months_between",
            months_between_types,
            |_| Ok(DataType::Float64),
            months_between,
        )
        .udf(),
        HiveFunction::rewrite("trunc", trunc_types, trunc_returns, trunc).udf(),
        HiveFunction::rewrite(
            "date_trunc",
            date_trunc_types,
            date_trunc_returns,
            date_trunc,
        )
        .udf(),
        // A UTC time as the wall-clock time of a zone, and back, as Hive's: a time that a
        // daylight-saving change skips or repeats read as Java reads it. In a session with
        // another zone than UTC, as Spark's: the session's time read as its moment, whose UTC
        // wall-clock time is shifted, and the result read as a UTC time, in the session's.
        HiveFunction::rewrite(
            "from_utc_timestamp",
            date_and_zone,
            naive_timestamp,
            |a, t| {
                let zone = zone("from_utc_timestamp", &a[1])?;
                let utc = session_to_utc(as_moment(&a[0], &t[0]));
                Ok(utc_to_session(utc_to_zone(utc, &zone)))
            },
        )
        .udf(),
        HiveFunction::rewrite(
            "to_utc_timestamp",
            date_and_zone,
            naive_timestamp,
            |a, t| {
                let zone = zone("to_utc_timestamp", &a[1])?;
                let utc = session_to_utc(as_moment(&a[0], &t[0]));
                Ok(utc_to_session(zone_to_utc(utc, &zone)))
            },
        )
        .udf(),
        HiveFunction::rewrite(
            "convert_timezone",
            zones_and_time,
            naive_timestamp,
            convert_timezone,
        )
        .udf(),
        HiveFunction::rewrite("to_timestamp", to_timestamp_types, timestamp, to_timestamp).udf(),
        HiveFunction::computed("make_date", three_integers, date, make_valid_date).udf(),
        HiveFunction::rewrite(
            "unix_timestamp",
            unix_timestamp_types,
            |_| Ok(DataType::Int64),
            unix_timestamp,
        )
        .with_signature(Signature::one_of(
            vec![TypeSignature::Nullary, TypeSignature::UserDefined],
            // The query's start time, as Spark's unix_timestamp() and now().
            Volatility::Stable,
        ))
        .udf(),
    ]
}

/// A wall-clock time of the session's zone written with a strftime pattern; a pattern that
/// writes the zone (Java's `z`, `Z`, `X`) writes the session's.
fn formatted(wall_clock: Expr, pattern: String) -> Expr {
    if !pattern.contains(FIELD_MARK) {
        return formatted_piece(wall_clock, pattern);
    }
    // strftime has no quarter, nor a fraction of 1, 2, 4, 5, 7 or 8 digits: the pattern's
    // pieces around each such field, joined. Pieces alternate between strftime text and a
    // field's letters ([`java_pattern`]).
    let pieces = pattern
        .split(FIELD_MARK)
        .enumerate()
        .filter(|(_, piece)| !piece.is_empty())
        .map(|(i, piece)| match i % 2 {
            0 => formatted_piece(wall_clock.clone(), piece.to_owned()),
            _ if piece.starts_with('S') => fraction_text(wall_clock.clone(), piece.len()),
            _ => quarter_text(wall_clock.clone(), piece),
        })
        .collect();
    when(wall_clock.is_null(), lit(ScalarValue::Utf8(None)))
        .otherwise(datafusion::functions::string::expr_fn::concat(pieces))
        .expect("a CASE of one branch and an ELSE")
}

/// Stands around a field strftime has no letter for (a quarter, a fraction of a second of
/// other than 3, 6 or 9 digits) in the strftime text of [`java_pattern`]: a character no
/// pattern holds.
const FIELD_MARK: char = '\u{0}';

/// The fraction of a second in `digits` digits, cut (not rounded) as Java writes `S`, `SS`,
/// ... (`15:06:07.089` with `s.S` is `7.0`).
fn fraction_text(wall_clock: Expr, digits: usize) -> Expr {
    let nanoseconds = to_char(wall_clock, lit("%9f"));
    datafusion::functions::unicode::expr_fn::left(nanoseconds, lit(digits as i64))
}

/// The quarter of a wall-clock time as Java writes `Q` (`2`), `QQ` (`02`), `QQQ` (`Q2`) and
/// `QQQQ` (`2nd quarter`).
fn quarter_text(wall_clock: Expr, letters: &str) -> Expr {
    let quarter = cast(date_part(lit("quarter"), wall_clock), DataType::Int64);
    let text = cast(quarter.clone(), DataType::Utf8);
    match letters.len() {
        1 => text,
        2 => datafusion::functions::string::expr_fn::concat(vec![lit("0"), text]),
        3 => datafusion::functions::string::expr_fn::concat(vec![lit("Q"), text]),
        _ => when(quarter.clone().eq(lit(1i64)), lit("1st quarter"))
            .when(quarter.clone().eq(lit(2i64)), lit("2nd quarter"))
            .when(quarter.eq(lit(3i64)), lit("3rd quarter"))
            .otherwise(lit("4th quarter"))
            .expect("a CASE with an ELSE"),
    }
}

fn formatted_piece(wall_clock: Expr, pattern: String) -> Expr {
    if ["%Z", "%z", "%:z"]
        .iter()
        .any(|letter| pattern.contains(letter))
    {
        crate::time_zones::formatted_with_zone(wall_clock, pattern)
    } else {
        to_char(wall_clock, lit(pattern))
    }
}

/// `date_part` of a date, timestamp or date string, as Hive's `INT`.
/// A field of a day (`year`, `month`, `dow`, ...) of a date, a timestamp or a string read as
/// Spark reads a date (`'2024-03-05 junk'` is March 5th: what follows the day is passed
/// over), an `INT`.
fn date_field(part: &str, args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    Ok(cast(
        date_part(lit(part), as_date(&args[0], &types[0])),
        DataType::Int32,
    ))
}

pub(super) fn field(part: &str, args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    Ok(cast(
        date_part(lit(part), as_timestamp(&args[0], &types[0])),
        DataType::Int32,
    ))
}

/// A date, timestamp or string argument as a wall-clock time of the session's zone (a
/// moment, a timestamp with a zone, converted to it); a string that is not one is NULL.
pub(super) fn as_timestamp(expr: &Expr, data_type: &DataType) -> Expr {
    match data_type {
        DataType::Timestamp(_, Some(_)) => utc_to_session(expr.clone()),
        _ => as_moment(expr, data_type),
    }
}

/// [`as_timestamp`], but a moment (a timestamp with a zone) kept as it is, for what counts
/// from 1970 or shifts between zones.
fn as_moment(expr: &Expr, data_type: &DataType) -> Expr {
    let timestamp = DataType::Timestamp(TimeUnit::Nanosecond, None);
    match data_type {
        DataType::Timestamp(..) => expr.clone(),
        t if is_string(t) => crate::spark_casts::datetime_strings::spark_timestamp(expr.clone()),
        _ => cast(expr.clone(), timestamp),
    }
}

/// A date, timestamp or string argument as a date (the time of day dropped), a moment's in
/// the session's zone.
fn as_date(expr: &Expr, data_type: &DataType) -> Expr {
    match data_type {
        DataType::Date32 => expr.clone(),
        DataType::Timestamp(_, Some(_)) => cast(utc_to_session(expr.clone()), DataType::Date32),
        t if is_string(t) => crate::spark_casts::datetime_strings::spark_date(expr.clone()),
        _ => cast(expr.clone(), DataType::Date32),
    }
}

/// Days since 1970-01-01, for date arithmetic.
fn day_number(expr: &Expr, data_type: &DataType) -> Expr {
    cast(as_date(expr, data_type), DataType::Int32)
}

/// The last day of a month given as `INT` year and month.
fn last_day(year: Expr, month: Expr) -> Expr {
    let first = make_date(year, month, lit(1i32));
    // Month arithmetic on a date with a constant interval: DataFusion clamps to the month.
    let next_first = first + lit(ScalarValue::new_interval_ym(0, 1));
    cast(
        cast(next_first, DataType::Int32) - lit(1i32),
        DataType::Date32,
    )
}

/// `add_months(start, n)`, as Hive: the same day `n` months on, or the month's last day
/// when it has fewer days; and when `start` is its month's last day, the last day of the
/// month reached (`add_months('2024-02-29', 1)` is `2024-03-31`).
fn add_months(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let date = as_date(&args[0], &types[0]);
    let year = date_part(lit("year"), date.clone());
    let month = date_part(lit("month"), date.clone());
    let day = date_part(lit("day"), date.clone());
    // Months counted from year 0, moved by n, split back into year and month.
    let months = year.clone() * lit(12i32) + month.clone() - lit(1i32) + args[1].clone();
    let new_year = months.clone() / lit(12i32);
    let new_month = months % lit(12i32) + lit(1i32);
    let new_last = last_day(new_year.clone(), new_month.clone());
    let same_day = make_date(
        new_year,
        new_month,
        datafusion::functions::expr_fn::least(vec![
            day,
            cast(date_part(lit("day"), new_last.clone()), DataType::Int32),
        ]),
    );
    when(date.clone().eq(last_day(year, month)), new_last).otherwise(same_day)
}

/// `unix_timestamp()`: now; `unix_timestamp(date or timestamp)`; `unix_timestamp(string
/// [, pattern])`: the string read with the Java pattern (Hive's default
/// `yyyy-MM-dd HH:mm:ss`), in seconds since 1970-01-01 00:00:00 UTC.
fn unix_timestamp(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let wall_clock = match (args.first(), args.get(1)) {
        // DataFusion's own `now()`, without the session's zone: the moment, in UTC.
        (None, _) => return Ok(to_unixtime(vec![now()])),
        // A date or timestamp needs no pattern: Spark passes over one.
        (Some(value), None) => as_moment(value, &types[0]),
        (Some(value), Some(_)) if !is_string(&types[0]) => as_moment(value, &types[0]),
        (Some(value), Some(pattern)) => {
            let pattern = parsing_pattern("unix_timestamp", pattern)?;
            parse_with_patterns(vec![value.clone(), lit(pattern)])
        }
    };
    Ok(to_unixtime(vec![session_to_utc(wall_clock)]))
}

/// Spark's `to_timestamp(s[, pattern])`: the string read with the Java pattern, NULL when it
/// does not fit (DataFusion's reads strftime patterns and fails the query); without one, the
/// string as `CAST(s AS TIMESTAMP)` reads it. A number is seconds since 1970, as
/// `CAST(n AS TIMESTAMP)`.
fn to_timestamp(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let timestamp = DataType::Timestamp(TimeUnit::Nanosecond, None);
    let [value, patterns @ ..] = args.as_slice() else {
        return Err(bad_arguments("to_timestamp", TO_TIMESTAMP, types));
    };
    if patterns.is_empty() {
        return Ok(match &types[0] {
            t if is_string(t) => try_cast(value.clone(), timestamp),
            t if t.is_numeric() => super::epochs::of_seconds(value.clone(), t),
            _ => cast(value.clone(), timestamp),
        });
    }
    let mut parsed = vec![value.clone()];
    for pattern in patterns {
        parsed.push(lit(parsing_pattern("to_timestamp", pattern)?));
    }
    Ok(cast(parse_with_patterns(parsed), timestamp))
}

const TO_TIMESTAMP: &str = "a string [and its patterns], a date, a timestamp or a number";

fn to_timestamp_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if is_date_like(t) || t.is_numeric() => Ok(types.to_vec()),
        [s, patterns @ ..]
            if is_string(s) && patterns.iter().all(|p| is_string(p) || p.is_null()) =>
        {
            Ok(vec![DataType::Utf8; types.len()])
        }
        _ => Err(bad_arguments(name, TO_TIMESTAMP, types)),
    }
}

fn timestamp(_: &[DataType]) -> Result<DataType> {
    Ok(DataType::Timestamp(TimeUnit::Nanosecond, None))
}

fn three_integers(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [_, _, _] if types.iter().all(|t| t.is_numeric() || t.is_null()) => {
            Ok(vec![DataType::Int32; 3])
        }
        _ => Err(bad_arguments(name, "a year, a month and a day", types)),
    }
}

/// Spark's `make_date(year, month, day)`: NULL for a day no calendar has (`make_date(2024,
/// 2, 30)`), where DataFusion's fails the query.
fn make_valid_date(args: &[ArrayRef]) -> Result<ArrayRef> {
    let [years, months, days] = [0, 1, 2].map(|i| args[i].as_primitive::<Int32Type>());
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).expect("1970-01-01");
    let dates: Date32Array = (0..years.len())
        .map(|i| {
            if years.is_null(i) || months.is_null(i) || days.is_null(i) {
                return None;
            }
            let (month, day) = (
                u32::try_from(months.value(i)).ok()?,
                u32::try_from(days.value(i)).ok()?,
            );
            let date = chrono::NaiveDate::from_ymd_opt(years.value(i), month, day)?;
            i32::try_from((date - epoch).num_days()).ok()
        })
        .collect();
    Ok(Arc::new(dates))
}

/// `parse_with_patterns(string, pattern, ...)`: the string read with the first strftime
/// pattern it fits, as a timestamp (milliseconds, no zone); NULL when it fits none, as
/// Hive's `unix_timestamp` and `to_date` answer for a string their pattern cannot read,
/// where DataFusion's `to_timestamp` and `to_date` fail the query.
fn parse_with_patterns(args: Vec<Expr>) -> Expr {
    ScalarUDF::new_from_impl(ParseWithPatterns {
        signature: Signature::user_defined(Volatility::Immutable),
    })
    .call(args)
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct ParseWithPatterns {
    signature: Signature,
}

impl ScalarUDFImpl for ParseWithPatterns {
    fn name(&self) -> &str {
        "parse_with_patterns"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        Ok(vec![DataType::Utf8; types.len()])
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Timestamp(TimeUnit::Millisecond, None))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let strings = arrays[0].as_string::<i32>();
        let patterns: Vec<_> = arrays[1..].iter().map(|a| a.as_string::<i32>()).collect();
        let parsed: TimestampMillisecondArray = (0..strings.len())
            .map(|i| {
                if strings.is_null(i) {
                    return None;
                }
                patterns
                    .iter()
                    .filter(|p| !p.is_null(i))
                    .find_map(|p| parse_millis(strings.value(i), p.value(i)))
            })
            .collect();
        super::columnar(Arc::new(parsed), &args.args)
    }
}

/// A string read with a strftime pattern as milliseconds since 1970-01-01 00:00:00; a
/// pattern without a time of day reads a date, at midnight.
fn parse_millis(text: &str, pattern: &str) -> Option<i64> {
    Date64Type::parse_formatted(text, pattern).or_else(|| {
        Date32Type::parse_formatted(text, pattern).map(|days| i64::from(days) * 86_400_000)
    })
}

/// `months_between(later, earlier[, round])`, as Hive: whole months when both days are the
/// same day of the month or both their months' last days; otherwise the days and times
/// apart count in months of 31 days; rounded to 8 decimals unless `round` is false.
fn months_between(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let parts = |i: usize| {
        let ts = as_timestamp(&args[i], &types[i]);
        let part = |p: &str| cast(date_part(lit(p), ts.clone()), DataType::Int64);
        let seconds = part("hour") * lit(3600i64) + part("minute") * lit(60i64) + part("second");
        let date = as_date(&args[i], &types[i]);
        let is_last = date.clone().eq(last_day(
            date_part(lit("year"), date.clone()),
            date_part(lit("month"), date),
        ));
        (part("year"), part("month"), part("day"), seconds, is_last)
    };
    let (y1, m1, d1, s1, last1) = parts(0);
    let (y2, m2, d2, s2, last2) = parts(1);
    let months = cast((y1 - y2) * lit(12i64) + (m1 - m2), DataType::Float64);
    let apart = cast(
        (d1.clone() - d2.clone()) * lit(86400i64) + (s1 - s2),
        DataType::Float64,
    );
    let fractional = months.clone() + apart / lit(31.0 * 86400.0);
    let round = match args.get(2) {
        None => true,
        Some(Expr::Literal(ScalarValue::Boolean(Some(round)), _)) => *round,
        Some(_) => {
            return Err(DataFusionError::Plan(
                "months_between: the third argument must be a constant true or false".into(),
            ))
        }
    };
    let fractional = if round {
        datafusion::functions::expr_fn::round(vec![fractional, lit(8i32)])
    } else {
        fractional
    };
    when(d1.eq(d2).or(last1.and(last2)), months).otherwise(fractional)
}

/// `trunc(date, 'YEAR'|'YYYY'|'YY'|'QUARTER'|'Q'|'MONTH'|'MM'|'MON'|'WEEK')`: the first day
/// of the year, quarter, month or (Monday) week, a `DATE`; NULL for another unit, as Hive.
/// `trunc(number[, digits])` stays DataFusion's.
fn trunc(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    if !is_date_like(&types[0]) || types[0].is_null() {
        return Ok(datafusion::functions::math::trunc().call(args));
    }
    let unit = match literal_string(&args[1]) {
        Some(Some(unit)) => unit.to_ascii_uppercase(),
        Some(None) => return Ok(lit(ScalarValue::Date32(None))),
        None => {
            return Err(DataFusionError::Plan(
                "trunc: the unit must be a constant such as 'MM' or 'YEAR'".into(),
            ))
        }
    };
    let part = match truncation_unit(&unit).or((unit == "Q").then_some("quarter")) {
        Some(part @ ("year" | "quarter" | "month" | "week")) => part,
        _ => return Ok(lit(ScalarValue::Date32(None))),
    };
    Ok(cast(
        datafusion::functions::expr_fn::date_trunc(lit(part), as_timestamp(&args[0], &types[0])),
        DataType::Date32,
    ))
}

/// DataFusion's `date_trunc` unit of one of Spark's units of truncation, in any case.
fn truncation_unit(unit: &str) -> Option<&'static str> {
    Some(match unit.to_ascii_uppercase().as_str() {
        "YEAR" | "YYYY" | "YY" => "year",
        "QUARTER" => "quarter",
        "MONTH" | "MM" | "MON" => "month",
        "WEEK" => "week",
        "DAY" | "DD" => "day",
        "HOUR" => "hour",
        "MINUTE" => "minute",
        "SECOND" => "second",
        "MILLISECOND" => "millisecond",
        "MICROSECOND" => "microsecond",
        _ => return None,
    })
}

/// Spark's `date_trunc(unit, t)`: the timestamp `t` (a date or string read as one) cut to the
/// start of its `unit`, Spark's names of units (`'YYYY'`, `'MM'`, `'DD'`, `'HOUR'`, ...)
/// included; NULL for a unit Spark does not know.
fn date_trunc(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let returns = date_trunc_returns(types)?;
    let unit = match literal_string(&args[0]) {
        Some(Some(unit)) => unit,
        Some(None) => return Ok(lit(ScalarValue::try_from(&returns)?)),
        None => {
            return Err(DataFusionError::Plan(
                "date_trunc: the unit must be a constant such as 'MM' or 'HOUR'".into(),
            ))
        }
    };
    let Some(part) = truncation_unit(unit) else {
        return Ok(lit(ScalarValue::try_from(&returns)?));
    };
    Ok(datafusion::functions::expr_fn::date_trunc(
        lit(part),
        as_timestamp(&args[1], &types[1]),
    ))
}

fn date_trunc_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [u, d] if (is_string(u) || u.is_null()) && is_date_like(d) => {
            Ok(vec![DataType::Utf8, d.clone()])
        }
        _ => Err(bad_arguments(name, "(unit, timestamp)", types)),
    }
}

fn date_trunc_returns(types: &[DataType]) -> Result<DataType> {
    Ok(match types.get(1) {
        Some(t @ DataType::Timestamp(..)) => t.clone(),
        _ => DataType::Timestamp(TimeUnit::Nanosecond, None),
    })
}

fn trunc_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [d, u] if is_date_like(d) && !d.is_null() && (is_string(u) || u.is_null()) => {
            Ok(vec![d.clone(), DataType::Utf8])
        }
        _ => {
            let fields: Vec<_> = types
                .iter()
                .map(|t| {
                    std::sync::Arc::new(datafusion::arrow::datatypes::Field::new(
                        "a",
                        t.clone(),
                        true,
                    ))
                })
                .collect();
            let builtin = datafusion::functions::math::trunc();
            datafusion::logical_expr::type_coercion::functions::fields_with_udf(
                &fields,
                builtin.as_ref(),
            )
            .map(|fields| fields.iter().map(|f| f.data_type().clone()).collect())
            .map_err(|_| bad_arguments(name, "(date, unit) or (number[, digits])", types))
        }
    }
}

fn trunc_returns(types: &[DataType]) -> Result<DataType> {
    if types.len() == 2 && is_date_like(&types[0]) && !types[0].is_null() && is_string(&types[1]) {
        Ok(DataType::Date32)
    } else {
        datafusion::functions::math::trunc().return_type(types)
    }
}

fn to_date_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if is_date_like(t) => Ok(types.to_vec()),
        [t, patterns @ ..]
            if is_string(t) && patterns.iter().all(|p| is_string(p) || p.is_null()) =>
        {
            Ok(vec![DataType::Utf8; types.len()])
        }
        _ => Err(bad_arguments(
            name,
            "a date, timestamp or string[, patterns]",
            types,
        )),
    }
}

fn months_between_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [a, b] if is_date_like(a) && is_date_like(b) => Ok(types.to_vec()),
        [a, b, DataType::Boolean] if is_date_like(a) && is_date_like(b) => Ok(types.to_vec()),
        _ => Err(bad_arguments(
            name,
            "(later date, earlier date[, round])",
            types,
        )),
    }
}

fn zoned(zone: Option<&str>) -> DataType {
    DataType::Timestamp(TimeUnit::Nanosecond, zone.map(Into::into))
}

fn naive_timestamp(_: &[DataType]) -> Result<DataType> {
    Ok(zoned(None))
}

/// A time zone argument, which must be a constant ('Asia/Seoul', 'UTC', '+09:00'); Java's
/// three-letter names (`'PST'`, `'EST'`), which Hive and Spark take, as the zones Java's
/// `ZoneId.SHORT_IDS` reads them as.
fn zone(name: &str, expr: &Expr) -> Result<String> {
    match literal_string(expr) {
        Some(Some(zone)) if crate::time_zones::Zone::java(zone.trim()).is_some() => {
            Ok(zone.trim().to_owned())
        }
        Some(Some(zone)) => Err(DataFusionError::Plan(format!(
            "{name}: '{zone}' is not a time zone (a region such as 'Asia/Seoul', an offset \
             such as '+09:00', or a short ID such as 'PST')"
        ))),
        _ => Err(DataFusionError::Plan(format!(
            "{name}: the time zone must be a constant such as 'Asia/Seoul' or '+09:00'"
        ))),
    }
}

/// `convert_timezone([source_zone, ]target_zone, ts)`: Spark's (3.4 and later).
fn zones_and_time(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let zone_like = |z: &DataType| is_string(z) || z.is_null();
    match types {
        [target, t] if zone_like(target) && is_date_like(t) => Ok(vec![DataType::Utf8, t.clone()]),
        [source, target, t] if zone_like(source) && zone_like(target) && is_date_like(t) => {
            Ok(vec![DataType::Utf8, DataType::Utf8, t.clone()])
        }
        _ => Err(bad_arguments(
            name,
            "([source time zone, ]target time zone, timestamp)",
            types,
        )),
    }
}

/// The wall-clock time `ts` reads in the source zone (the session's when none is given)
/// at that moment in the target zone, as Spark's `convert_timezone`; NULL for a NULL zone.
fn convert_timezone(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let (zones, time) = args.split_at(args.len() - 1);
    if zones.iter().any(|z| literal_string(z) == Some(None)) {
        return Ok(lit(ScalarValue::TimestampNanosecond(None, None)));
    }
    let time_type = &types[types.len() - 1];
    let wall_clock = match time_type {
        DataType::Timestamp(_, Some(_)) => utc_to_session(time[0].clone()),
        _ => as_moment(&time[0], time_type),
    };
    let (moment, target) = match zones {
        [target] => (
            session_to_utc(wall_clock),
            zone("convert_timezone", target)?,
        ),
        [source, target] => (
            zone_to_utc(wall_clock, &zone("convert_timezone", source)?),
            zone("convert_timezone", target)?,
        ),
        _ => unreachable!("one or two zones"),
    };
    Ok(utc_to_zone(moment, &target))
}

fn date_and_zone(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [a, z] if is_date_like(a) && (is_string(z) || z.is_null()) => {
            Ok(vec![a.clone(), DataType::Utf8])
        }
        _ => Err(bad_arguments(name, "(timestamp, time zone)", types)),
    }
}

fn is_date_like(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Date32 | DataType::Date64 | DataType::Timestamp(..) | DataType::Null
    ) || is_string(t)
}

const DATE: &str = "a date, a timestamp or a date string";

pub(super) fn one_date(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if is_date_like(t) => Ok(types.to_vec()),
        _ => Err(bad_arguments(name, DATE, types)),
    }
}

fn two_dates(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [a, b] if is_date_like(a) && is_date_like(b) => Ok(types.to_vec()),
        _ => Err(bad_arguments(name, "(end date, start date)", types)),
    }
}

fn date_and_int(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [a, b] if is_date_like(a) && is_integer(b) => Ok(vec![a.clone(), DataType::Int32]),
        _ => Err(bad_arguments(
            name,
            "(date, number of days or months)",
            types,
        )),
    }
}

fn date_and_day_name(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [a, b] if is_date_like(a) && (is_string(b) || b.is_null()) => {
            Ok(vec![a.clone(), DataType::Utf8])
        }
        _ => Err(bad_arguments(name, "(date, day of the week)", types)),
    }
}

/// `next_day(start, 'TU')`: the first date after `start` that falls on the day named (its
/// first two or three letters or its whole English name, in any case, as Hive and Spark
/// take it); NULL for another name.
fn next_day(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    const DAYS: [&str; 7] = [
        "MONDAY",
        "TUESDAY",
        "WEDNESDAY",
        "THURSDAY",
        "FRIDAY",
        "SATURDAY",
        "SUNDAY",
    ];
    let name = datafusion::functions::expr_fn::upper(args[1].clone());
    // The day's number, Monday 0 ... Sunday 6.
    let mut target: Option<datafusion::logical_expr::conditional_expressions::CaseBuilder> = None;
    for (number, &day) in DAYS.iter().enumerate() {
        for spelling in [&day[..2], &day[..3], day] {
            let condition = name.clone().eq(lit(spelling));
            let number = lit(number as i32);
            target = Some(match target {
                None => when(condition, number),
                Some(mut case) => case.when(condition, number),
            });
        }
    }
    let target = target.expect("seven days").end()?;
    let day = day_number(&args[0], &types[0]);
    // 1970-01-01 was a Thursday (3).
    let weekday = ((day.clone() + lit(3i32)) % lit(7i32) + lit(7i32)) % lit(7i32);
    let ahead = (target - weekday + lit(6i32)) % lit(7i32) + lit(1i32);
    Ok(cast(day + ahead, DataType::Date32))
}

fn date_and_pattern(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [a, b] if is_date_like(a) && (is_string(b) || b.is_null()) => {
            Ok(vec![a.clone(), DataType::Utf8])
        }
        _ => Err(bad_arguments(
            name,
            "(date or timestamp, pattern string)",
            types,
        )),
    }
}

fn seconds_and_pattern(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let takes = "(seconds since 1970-01-01 [, pattern string])";
    match types {
        // A fraction of a second is dropped, as Spark casts the seconds to a `BIGINT`.
        [s] if is_integer(s) || s.is_numeric() => Ok(vec![DataType::Int64]),
        [s, p] if (is_integer(s) || s.is_numeric()) && (is_string(p) || p.is_null()) => {
            Ok(vec![DataType::Int64, DataType::Utf8])
        }
        _ => Err(bad_arguments(name, takes, types)),
    }
}

fn unix_timestamp_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let takes = "no arguments, a date or timestamp, or a string [and its pattern]";
    match types {
        [] => Ok(vec![]),
        [t] if is_date_like(t) => Ok(types.to_vec()),
        [s, p] if is_string(s) && (is_string(p) || p.is_null()) => {
            Ok(vec![DataType::Utf8, DataType::Utf8])
        }
        [t, p] if is_date_like(t) && (is_string(p) || p.is_null()) => {
            Ok(vec![t.clone(), DataType::Utf8])
        }
        _ => Err(bad_arguments(name, takes, types)),
    }
}

/// A pattern argument, which must be a constant (as Hive's date_format requires), as the
/// strftime pattern DataFusion's functions take. A pattern with `%` is taken to be strftime
/// already, so that SQL written for DataFusion keeps its meaning (Java patterns have no
/// `%` letters, and hardly ever a literal `%`).
/// `date_format(moment, pattern)`: a date or a timestamp written in a Java pattern (also
/// `to_char` of one, as in Spark).
pub(super) fn date_format(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let pattern = pattern("date_format", &args[1])?;
    Ok(formatted(as_timestamp(&args[0], &types[0]), pattern))
}

fn pattern(name: &str, expr: &Expr) -> Result<String> {
    let pattern = constant_pattern(name, expr)?;
    if pattern.contains('%') {
        Ok(pattern)
    } else {
        java_pattern(name, pattern)
    }
}

/// A pattern that reads text: one a quarter (`Q`) cannot be, as it names no day.
fn parsing_pattern(name: &str, expr: &Expr) -> Result<String> {
    let pattern = pattern(name, expr)?;
    if let Some(field) = pattern.split(FIELD_MARK).nth(1) {
        return Err(DataFusionError::Plan(if field.starts_with('S') {
            format!(
                "{name}: a fraction of a second is read in 3, 6 or 9 digits (SSS, SSSSSS, \
                 SSSSSSSSS); date_format writes other counts"
            )
        } else {
            format!(
                "{name}: a quarter (Q) names no day, so a pattern holding one cannot read a \
                 date; date_format writes it"
            )
        }));
    }
    Ok(pattern)
}

fn constant_pattern(name: &str, expr: &Expr) -> Result<String> {
    match literal_string(expr) {
        Some(Some(pattern)) => Ok(pattern.to_owned()),
        Some(None) => Err(DataFusionError::Plan(format!(
            "{name}: the pattern is NULL; give a Java date pattern such as '{DEFAULT_PATTERN}'"
        ))),
        None => Err(DataFusionError::Plan(format!(
            "{name}: the pattern must be a constant string such as '{DEFAULT_PATTERN}'"
        ))),
    }
}

/// A Java date pattern (`SimpleDateFormat`'s and `DateTimeFormatter`'s letters, which Hive
/// and Spark take: `yyyy-MM-dd HH:mm:ss.SSS`, `EEE, d MMM yyyy`, `'T'` for literal text) as
/// the strftime pattern of DataFusion's `to_char`. A letter without a strftime equivalent is
/// refused, naming it, rather than printed as text.
pub fn java_pattern(name: &str, pattern: String) -> Result<String> {
    let unsupported = |letter: char| {
        DataFusionError::Plan(format!(
            "{name}: pattern letter '{letter}' in '{pattern}' is not supported; the engine \
             takes y Y M L Q q d D E u a H h m s S z Z X, and text in single quotes"
        ))
    };
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            // Quoted text; '' is a quote.
            if chars.get(i + 1) == Some(&'\'') {
                out.push('\'');
                i += 2;
                continue;
            }
            i += 1;
            while i < chars.len() {
                if chars[i] == '\'' {
                    if chars.get(i + 1) == Some(&'\'') {
                        out.push('\'');
                        i += 2;
                        continue;
                    }
                    break;
                }
                push_literal(&mut out, chars[i]);
                i += 1;
            }
            i += 1;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            push_literal(&mut out, c);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|&&d| d == c).count();
        i += run;
        let short = run == 1;
        out.push_str(match c {
            'y' if run == 2 => "%y",
            'y' => "%Y",
            'Y' => "%G",
            'M' | 'L' => match run {
                1 => "%-m",
                2 => "%m",
                3 => "%b",
                _ => "%B",
            },
            'd' if short => "%-d",
            'd' => "%d",
            'D' if run < 3 => "%-j",
            'D' => "%j",
            'E' if run < 4 => "%a",
            'E' => "%A",
            'u' => "%u",
            'a' => "%p",
            'H' if short => "%-H",
            'H' => "%H",
            'h' if short => "%-I",
            'h' => "%I",
            'm' if short => "%-M",
            'm' => "%M",
            's' if short => "%-S",
            's' => "%S",
            'S' if run == 3 => "%3f",
            'S' if run == 6 => "%6f",
            'S' if run == 9 => "%9f",
            // Other counts, written by [`formatted`]: the letters between marks.
            'S' | 'Q' | 'q' if run <= 9 && (c == 'S' || run <= 4) => {
                out.push(FIELD_MARK);
                out.extend(std::iter::repeat_n(c.to_ascii_uppercase(), run));
                out.push(FIELD_MARK);
                continue;
            }
            'z' => "%Z",
            'Z' => "%z",
            'X' if run >= 3 => "%:z",
            'X' => "%z",
            _ => return Err(unsupported(c)),
        });
    }
    Ok(out)
}

fn push_literal(out: &mut String, c: char) {
    if c == '%' {
        out.push_str("%%");
    } else {
        out.push(c);
    }
}
