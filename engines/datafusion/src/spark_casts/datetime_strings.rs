//! `CAST(s AS TIMESTAMP)` and `CAST(s AS DATE)` of a string read it as Spark reads it
//! (`SparkDateTimeUtils.stringToTimestamp` and `stringToDate`), where DataFusion's cast
//! takes other forms: NULL for what Spark does not read.
//!
//! - A timestamp is `[+-]yyyy[-[m]m[-[d]d]]` (a year of 4 to 6 digits) followed by
//!   `T` or a space and `[h]h[:[m]m[:[s]s[.fraction]]]`, then a zone: `Z`, an offset
//!   (`+01:00`, `+0100`, `+1`, `-08:00:30`), `UTC+8`, `GMT+01:00`, a region
//!   (`America/Los_Angeles`, `CET`) or one of Java's short IDs (`PST`), after a space or not.
//!   `'2024-01-05 10:11'`, `'2024-01-05 10'`, `'2024-1-5 1:2:3'`, `'2024'` and `'2024-01'`
//!   are read; a fraction past 6 digits is cut; a time alone (`'10:11:12'`, `'T10:11:12'`) is
//!   today's. `'2024-01-05 10:11Z'` (a zone after minutes), two spaces, `'20240105'` are NULL.
//! - A date is `[+-]yyyy[-[m]m[-[d]d]]` (a year of 4 to 7 digits); after the day, a `T` or
//!   a space and anything at all (`'2024-01-05 10:00:00'`, `'2024-01-05 garbage'`);
//!   `'20240105'`, `'2024-01-05x'`, `'24-01-05'` are NULL.
//!
//! Spaces and control characters around the text are passed over. A timestamp without a zone
//! is the session's wall-clock time, one with a zone is converted to the session's zone
//! ([`crate::time_zones`]). A timestamp beyond the years
//! 1677 to 2262 (DataFusion's nanoseconds) is NULL, and so is a date beyond chrono's years
//! (±262143), where Spark reads them.

use std::sync::Arc;

use crate::time_zones::Zone;
use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Date32Builder, TimestampNanosecondBuilder,
};
use datafusion::arrow::compute::cast as cast_array;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    cast, ColumnarValue, Expr, ExprSchemable, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

/// Replaces a cast of a string to a `TIMESTAMP` (without a zone) or a `DATE` by
/// [`SparkDatetime`]. An analyzer rule, run after type coercion, so that the casts it adds
/// (`d = '2024-1-5'`) read as Spark's do.
pub const SPARK_DATETIME_CASTS: crate::hive_syntax::ExpressionRewrite =
    crate::hive_syntax::ExpressionRewrite::new("spark_datetime_casts", spark_datetime_cast);

fn spark_datetime_cast(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Some((value, target)) = super::cast_parts(&expr) else {
        return Ok(Transformed::no(expr));
    };
    let kind = match target {
        DataType::Timestamp(_, None) => Kind::Timestamp,
        DataType::Date32 => Kind::Date,
        _ => return Ok(Transformed::no(expr)),
    };
    let Ok(source) = value.get_type(schema) else {
        return Ok(Transformed::no(expr));
    };
    if !matches!(
        source,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    ) {
        return Ok(Transformed::no(expr));
    }
    let read = read_as(kind, value.as_ref().clone());
    Ok(Transformed::yes(if kind.data_type() == *target {
        read
    } else {
        cast(read, target.clone())
    }))
}

/// `text` read as a timestamp as Spark's cast reads it (a time alone is today's, a zone
/// converted to the session's), NULL for what it does not read: for the functions that
/// take a timestamp's string, which run after the analyzer rule that rewrites the casts.
pub(crate) fn spark_timestamp(text: Expr) -> Expr {
    read_as(Kind::Timestamp, text)
}

/// `text` read as a date as Spark's cast reads it; NULL for what it does not read.
pub(crate) fn spark_date(text: Expr) -> Expr {
    read_as(Kind::Date, text)
}

fn read_as(kind: Kind, text: Expr) -> Expr {
    Expr::ScalarFunction(ScalarFunction::new_udf(
        Arc::new(ScalarUDF::new_from_impl(SparkDatetime::new(kind))),
        vec![text],
    ))
}

/// What [`SparkDatetime`] reads a string as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Timestamp,
    Date,
}

impl Kind {
    fn data_type(self) -> DataType {
        match self {
            Kind::Timestamp => DataType::Timestamp(TimeUnit::Nanosecond, None),
            Kind::Date => DataType::Date32,
        }
    }
}

/// A string read as a timestamp or a date as Spark's cast reads it; NULL for what it does
/// not read.
#[derive(Debug, PartialEq, Eq, Hash)]
struct SparkDatetime {
    kind: Kind,
    signature: Signature,
}

impl SparkDatetime {
    fn new(kind: Kind) -> Self {
        Self {
            kind,
            signature: Signature::string(1, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for SparkDatetime {
    fn name(&self) -> &str {
        match self.kind {
            Kind::Timestamp => "spark_timestamp",
            Kind::Date => "spark_date",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(self.kind.data_type())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let strings = cast_array(&args.args[0].to_array(args.number_rows)?, &DataType::Utf8)?;
        let strings = strings.as_string::<i32>();
        let result: ArrayRef = match self.kind {
            Kind::Timestamp => {
                let session = Zone::of_session(&args.config_options);
                let mut out = TimestampNanosecondBuilder::with_capacity(strings.len());
                for text in strings.iter() {
                    out.append_option(text.and_then(|t| {
                        parse_timestamp(t.as_bytes(), &session)?
                            .and_utc()
                            .timestamp_nanos_opt()
                    }));
                }
                Arc::new(out.finish())
            }
            Kind::Date => {
                let mut out = Date32Builder::with_capacity(strings.len());
                for text in strings.iter() {
                    out.append_option(text.and_then(|t| parse_date(t.as_bytes())).map(|d| {
                        d.num_days_from_ce()
                            - NaiveDate::from_ymd_opt(1970, 1, 1)
                                .expect("a date")
                                .num_days_from_ce()
                    }));
                }
                Arc::new(out.finish())
            }
        };
        crate::hive_functions::columnar(result, &args.args)
    }
}

/// The text between the spaces and control characters around it, as Spark trims it.
fn trimmed(bytes: &[u8]) -> &[u8] {
    let blank = |b: &u8| *b <= b' ' || *b == 0x7f;
    let start = bytes.iter().position(|b| !blank(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !blank(b))
        .map_or(start, |e| e + 1);
    &bytes[start..end.max(start)]
}

/// Spark's `stringToDate`: `[+-]yyyy[-[m]m[-[d]d]]`, then after the day a `T` or a space and
/// anything.
pub(crate) fn parse_date(text: &[u8]) -> Option<NaiveDate> {
    let bytes = trimmed(text);
    if bytes.is_empty() {
        return None;
    }
    let valid = |segment: usize, digits: u32| {
        (segment == 0 && (4..=7).contains(&digits)) || (segment != 0 && (1..=2).contains(&digits))
    };
    let mut segments = [1i64, 1, 1];
    let (mut sign, mut j) = (1, 0);
    if matches!(bytes[0], b'-' | b'+') {
        sign = if bytes[0] == b'-' { -1 } else { 1 };
        j = 1;
    }
    let (mut i, mut value, mut digits) = (0, 0i64, 0u32);
    while j < bytes.len() && i < 3 && !matches!(bytes[j], b' ' | b'T') {
        let b = bytes[j];
        if i < 2 && b == b'-' {
            if !valid(i, digits) {
                return None;
            }
            segments[i] = value;
            (value, digits) = (0, 0);
            i += 1;
        } else if b.is_ascii_digit() {
            value = value * 10 + i64::from(b - b'0');
            digits += 1;
        } else {
            return None;
        }
        j += 1;
    }
    if !valid(i, digits) || (i < 2 && j < bytes.len()) {
        return None;
    }
    segments[i] = value;
    NaiveDate::from_ymd_opt(
        i32::try_from(sign * segments[0]).ok()?,
        u32::try_from(segments[1]).ok()?,
        u32::try_from(segments[2]).ok()?,
    )
}

/// Spark's `stringToTimestamp` (`parseTimestampString`), as the wall-clock time of the
/// session's zone, `session`: a time with a zone is converted to it, and a time alone is of
/// today in its zone.
pub(crate) fn parse_timestamp(text: &[u8], session: &Zone) -> Option<NaiveDateTime> {
    let bytes = trimmed(text);
    if bytes.is_empty() {
        return None;
    }
    // Year, month, day, hour, minute, second, microseconds, and two a zone might take.
    let valid = |segment: usize, digits: u32| {
        segment == 6
            || (segment == 0 && (4..=6).contains(&digits))
            || (segment == 7 && digits <= 2)
            || (segment != 0 && segment != 6 && segment != 7 && (1..=2).contains(&digits))
    };
    let mut segments = [1i64, 1, 1, 0, 0, 0, 0, 0, 0];
    let (mut i, mut value, mut digits) = (0usize, 0i64, 0u32);
    let mut zone: Option<&[u8]> = None;
    let mut fraction_digits = 0;
    let mut just_time = false;
    let mut year_sign = None;
    let mut j = 0;
    if matches!(bytes[0], b'-' | b'+') {
        year_sign = Some(if bytes[0] == b'-' { -1 } else { 1 });
        j = 1;
    }
    macro_rules! next_segment {
        () => {{
            if !valid(i, digits) {
                return None;
            }
            segments[i] = value;
            (value, digits) = (0, 0);
            i += 1;
        }};
    }
    while j < bytes.len() {
        let b = bytes[j];
        if !b.is_ascii_digit() {
            if j == 0 && b == b'T' {
                just_time = true;
                i += 3;
            } else if i < 2 {
                if b == b'-' {
                    next_segment!();
                } else if i == 0 && b == b':' && year_sign.is_none() {
                    just_time = true;
                    if !valid(3, digits) {
                        return None;
                    }
                    segments[3] = value;
                    (value, digits) = (0, 0);
                    i = 4;
                } else {
                    return None;
                }
            } else if i == 2 {
                if b == b' ' || b == b'T' {
                    next_segment!();
                } else {
                    return None;
                }
            } else if i == 3 || i == 4 {
                if b == b':' {
                    next_segment!();
                } else {
                    return None;
                }
            } else if i == 5 || i == 6 {
                if b == b'.' && i == 5 {
                    next_segment!();
                } else {
                    next_segment!();
                    zone = Some(&bytes[j..]);
                    j = bytes.len() - 1;
                }
                if i == 6 && b != b'.' {
                    i += 1;
                }
            } else if i < segments.len() && (b == b':' || b == b' ') {
                next_segment!();
            } else {
                return None;
            }
        } else {
            if i == 6 {
                fraction_digits += 1;
            }
            // A fraction past the microsecond is cut.
            if i != 6 || digits < 6 {
                value = value * 10 + i64::from(b - b'0');
            }
            digits += 1;
        }
        j += 1;
    }
    if !valid(i, digits) {
        return None;
    }
    segments[i] = value;
    while fraction_digits < 6 {
        segments[6] *= 10;
        fraction_digits += 1;
    }
    let zone = match zone {
        Some(name) => Some(Zone::java(std::str::from_utf8(name).ok()?.trim())?),
        None => None,
    };
    let part = |k: usize| u32::try_from(segments[k]).ok();
    let time = NaiveTime::from_hms_micro_opt(part(3)?, part(4)?, part(5)?, part(6)?)?;
    let date = if just_time {
        zone.as_ref().unwrap_or(session).today()
    } else {
        let year = segments[0] * year_sign.unwrap_or(1);
        NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, part(1)?, part(2)?)?
    };
    let local = date.and_time(time);
    match zone {
        None => session.shown(local),
        Some(zone) => session.to_local(zone.to_utc(local)?),
    }
}
