//! Values that HiveServer2 sends as strings, rendered the way Hive prints them.
//!
//! - DECIMAL in plain notation with the column's scale (`123.450`, never an exponent).
//! - DATE `YYYY-MM-DD`; TIMESTAMP `YYYY-MM-DD HH:MM:SS[.fffffffff]` with trailing zeros of
//!   the fraction trimmed (Hive's `Timestamp.toString`). A timestamp with a time zone is
//!   shown as the wall-clock time in its own zone (DataFusion gives `now()` and timestamp
//!   arithmetic the session's zone), without the zone; an unknown zone name falls back to
//!   UTC. Times of day (a STRING to Hive) as `HH:MM:SS[.f]`.
//! - INTERVAL_YEAR_MONTH `[-]Y-M`, INTERVAL_DAY_TIME `[-]D HH:MM:SS.nnnnnnnnn` (Hive's
//!   `HiveIntervalYearMonth` / `HiveIntervalDayTime.toString`), so that Hive JDBC parses them.
//!   Month-day-nano intervals (a STRING to Hive) in the same forms: `0-2` for two months,
//!   `1 00:00:00.000000000` for a day, `0-2 1 00:00:00.000000000` for both.
//! - ARRAY, MAP, STRUCT, UNIONTYPE as Hive's `SerDeUtils.getJSONString` writes them:
//!   `[1,2,null]`, `{"k":1}` (keys rendered like values, so `{1:"a"}` for integer keys),
//!   `{"a":1,"b":"x"}`, `{0:"x"}` (union tag and value). Inside them strings are quoted and
//!   escaped, dates and timestamps quoted, NULL is `null`, floats print as Java does
//!   (`1.0`, `1.0E10`), binaries as their bytes read as UTF-8.
//!
//! A renderer is built once per array (a column of one batch) and writes into a buffer
//! the caller reuses; rendering a value allocates nothing (but for decimals beyond 128
//! bits, which Arrow prints through a big integer). A value the calendar cannot
//! show (a timestamp beyond year 262143) is an error, which the caller sends as NULL.

use std::fmt::{self, Display, LowerExp, Write};

use datafusion::arrow::array::timezone::Tz;
use datafusion::arrow::array::{Array, ArrowPrimitiveType, AsArray, OffsetSizeTrait};
use datafusion::arrow::datatypes::{
    i256, ArrowTimestampType, DataType, Date32Type, Date64Type, Decimal128Type, Decimal256Type,
    Decimal32Type, Decimal64Type, DurationMicrosecondType, DurationMillisecondType,
    DurationNanosecondType, DurationSecondType, Float16Type, Float32Type, Float64Type, Int16Type,
    Int32Type, Int64Type, Int8Type, IntervalDayTimeType, IntervalMonthDayNanoType, IntervalUnit,
    IntervalYearMonthType, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use datafusion::arrow::temporal_conversions::{
    as_datetime, as_datetime_with_timezone, date32_to_datetime, date64_to_datetime,
};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

/// Writes the value at an index of one array (never a NULL at the top level; the caller
/// marks those) into a buffer.
pub(super) type Render<'a> = Box<dyn Fn(usize, &mut String) -> fmt::Result + 'a>;

const NANOS_PER_SECOND: i64 = 1_000_000_000;
const SECONDS_PER_DAY: i64 = 86_400;
const NANOS_PER_DAY: i128 = SECONDS_PER_DAY as i128 * NANOS_PER_SECOND as i128;

/// The text of a value as a top-level column shows it. The array must be free of
/// dictionaries (see `rowset::decoded`).
pub(super) fn plain<'a>(array: &'a dyn Array) -> Render<'a> {
    match array.data_type() {
        DataType::Null => Box::new(|_, _| Ok(())),
        DataType::Boolean => {
            let a = array.as_boolean();
            Box::new(move |i, out| {
                out.push_str(if a.value(i) { "true" } else { "false" });
                Ok(())
            })
        }
        DataType::Int8 => integer::<Int8Type>(array),
        DataType::Int16 => integer::<Int16Type>(array),
        DataType::Int32 => integer::<Int32Type>(array),
        DataType::Int64 => integer::<Int64Type>(array),
        DataType::UInt8 => integer::<UInt8Type>(array),
        DataType::UInt16 => integer::<UInt16Type>(array),
        DataType::UInt32 => integer::<UInt32Type>(array),
        DataType::UInt64 => integer::<UInt64Type>(array),
        DataType::Float16 => {
            let a = array.as_primitive::<Float16Type>();
            Box::new(move |i, out| write_java_float(out, a.value(i).to_f32()))
        }
        DataType::Float32 => {
            let a = array.as_primitive::<Float32Type>();
            Box::new(move |i, out| write_java_float(out, a.value(i)))
        }
        DataType::Float64 => {
            let a = array.as_primitive::<Float64Type>();
            Box::new(move |i, out| write_java_float(out, a.value(i)))
        }
        DataType::Decimal32(_, scale) => decimal::<Decimal32Type>(array, *scale),
        DataType::Decimal64(_, scale) => decimal::<Decimal64Type>(array, *scale),
        DataType::Decimal128(_, scale) => decimal::<Decimal128Type>(array, *scale),
        DataType::Decimal256(_, scale) => {
            let a = array.as_primitive::<Decimal256Type>();
            let scale = *scale;
            Box::new(move |i, out| write_decimal256(out, a.value(i), scale))
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let value = string_values(array);
            Box::new(move |i, out| {
                out.push_str(value(i));
                Ok(())
            })
        }
        // Binaries only reach text inside complex values, where Hive writes their bytes.
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => {
            let value = binary_values(array);
            Box::new(move |i, out| write_bytes(out, value(i)))
        }
        DataType::Date32 => {
            let a = array.as_primitive::<Date32Type>();
            Box::new(move |i, out| {
                let date = date32_to_datetime(a.value(i)).ok_or(fmt::Error)?.date();
                write!(out, "{date}")
            })
        }
        DataType::Date64 => {
            let a = array.as_primitive::<Date64Type>();
            Box::new(move |i, out| {
                let date = date64_to_datetime(a.value(i)).ok_or(fmt::Error)?.date();
                write!(out, "{date}")
            })
        }
        DataType::Timestamp(unit, tz) => {
            // Arrow validates zone names when a batch is built; an unknown one here can
            // only come from a foreign source, and UTC is the least surprising reading.
            let tz: Option<Tz> = tz.as_deref().and_then(|tz| tz.parse().ok());
            match unit {
                TimeUnit::Second => timestamp::<TimestampSecondType>(array, tz),
                TimeUnit::Millisecond => timestamp::<TimestampMillisecondType>(array, tz),
                TimeUnit::Microsecond => timestamp::<TimestampMicrosecondType>(array, tz),
                TimeUnit::Nanosecond => timestamp::<TimestampNanosecondType>(array, tz),
            }
        }
        DataType::Time32(TimeUnit::Second) => {
            time_of_day::<Time32SecondType>(array, |v| i64::from(v) * NANOS_PER_SECOND)
        }
        DataType::Time32(_) => {
            time_of_day::<Time32MillisecondType>(array, |v| i64::from(v) * 1_000_000)
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            time_of_day::<Time64MicrosecondType>(array, |v| v.saturating_mul(1_000))
        }
        DataType::Time64(_) => time_of_day::<Time64NanosecondType>(array, |v| v),
        DataType::Interval(IntervalUnit::YearMonth) => {
            let a = array.as_primitive::<IntervalYearMonthType>();
            Box::new(move |i, out| write_year_month(out, a.value(i)))
        }
        DataType::Interval(IntervalUnit::DayTime) => {
            let a = array.as_primitive::<IntervalDayTimeType>();
            Box::new(move |i, out| {
                let v = a.value(i);
                let nanos =
                    i128::from(v.days) * NANOS_PER_DAY + i128::from(v.milliseconds) * 1_000_000;
                write_day_time(out, nanos)
            })
        }
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            // DataFusion's interval literals (`INTERVAL '1' DAY`) have this type, which no
            // Hive type holds: its text is Hive's for the part it has, both when mixed.
            let a = array.as_primitive::<IntervalMonthDayNanoType>();
            Box::new(move |i, out| {
                let v = a.value(i);
                let nanos = i128::from(v.days) * NANOS_PER_DAY + i128::from(v.nanoseconds);
                if v.months != 0 || nanos == 0 {
                    write_year_month(out, v.months)?;
                    if nanos == 0 {
                        return Ok(());
                    }
                    out.push(' ');
                }
                write_day_time(out, nanos)
            })
        }
        DataType::Duration(unit) => {
            let (a, nanos_per_unit) = match unit {
                TimeUnit::Second => (duration::<DurationSecondType>(array), NANOS_PER_SECOND),
                TimeUnit::Millisecond => (duration::<DurationMillisecondType>(array), 1_000_000),
                TimeUnit::Microsecond => (duration::<DurationMicrosecondType>(array), 1_000),
                TimeUnit::Nanosecond => (duration::<DurationNanosecondType>(array), 1),
            };
            Box::new(move |i, out| {
                write_day_time(out, i128::from(a(i)) * i128::from(nanos_per_unit))
            })
        }
        DataType::List(_) => list::<i32>(array),
        DataType::LargeList(_) => list::<i64>(array),
        DataType::FixedSizeList(_, _) => {
            let a = array.as_fixed_size_list();
            let item = json(a.values().as_ref());
            let len = a.value_length() as usize;
            Box::new(move |i, out| {
                let start = a.value_offset(i) as usize;
                write_sequence(out, &item, start..start + len)
            })
        }
        DataType::Struct(fields) => {
            let a = array.as_struct();
            let members: Vec<(&str, Render<'a>)> = fields
                .iter()
                .zip(a.columns())
                .map(|(field, column)| (field.name().as_str(), json(column.as_ref())))
                .collect();
            Box::new(move |i, out| {
                out.push('{');
                for (n, (name, member)) in members.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    write_quoted(out, name)?;
                    out.push(':');
                    member(i, out)?;
                }
                out.push('}');
                Ok(())
            })
        }
        DataType::Map(_, _) => {
            let a = array.as_map();
            let key = json(a.keys().as_ref());
            let value = json(a.values().as_ref());
            let offsets = a.value_offsets();
            Box::new(move |i, out| {
                out.push('{');
                let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
                for entry in start..end {
                    if entry > start {
                        out.push(',');
                    }
                    key(entry, out)?;
                    out.push(':');
                    value(entry, out)?;
                }
                out.push('}');
                Ok(())
            })
        }
        DataType::Union(fields, _) => {
            let a = array.as_union();
            // Hive's tag is the member's position; Arrow's type ids may be any numbers.
            let members: Vec<(i8, usize, Render<'a>)> = fields
                .iter()
                .enumerate()
                .map(|(tag, (type_id, _))| (type_id, tag, json(a.child(type_id).as_ref())))
                .collect();
            Box::new(move |i, out| {
                let type_id = a.type_id(i);
                let (_, tag, member) = members
                    .iter()
                    .find(|(id, _, _)| *id == type_id)
                    .ok_or(fmt::Error)?;
                write!(out, "{{{tag}:")?;
                member(a.value_offset(i), out)?;
                out.push('}');
                Ok(())
            })
        }
        // Anything else (list views) in Arrow's own text.
        _ => arrow_text(array),
    }
}

/// The text of a value inside a complex value: JSON-like, NULL as `null`, strings, dates
/// and times quoted.
fn json<'a>(array: &'a dyn Array) -> Render<'a> {
    let quoted = match array.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let value = string_values(array);
            Some(
                Box::new(move |i: usize, out: &mut String| write_quoted(out, value(i)))
                    as Render<'a>,
            )
        }
        DataType::Date32
        | DataType::Date64
        | DataType::Timestamp(..)
        | DataType::Time32(_)
        | DataType::Time64(_)
        | DataType::Interval(_)
        | DataType::Duration(_) => {
            // Their text never holds a character that needs escaping.
            let value = plain(array);
            Some(Box::new(move |i: usize, out: &mut String| {
                out.push('"');
                value(i, out)?;
                out.push('"');
                Ok(())
            }) as Render<'a>)
        }
        _ => None,
    };
    let value = quoted.unwrap_or_else(|| plain(array));
    let nulls = array.logical_nulls();
    Box::new(move |i, out| {
        if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            out.push_str("null");
            return Ok(());
        }
        // A nested value the calendar cannot show becomes `null` alone, not its parent.
        let start = out.len();
        if value(i, out).is_err() {
            out.truncate(start);
            out.push_str("null");
        }
        Ok(())
    })
}

/// The values of a string array, whichever of Arrow's layouts it has.
fn string_values<'a>(array: &'a dyn Array) -> Box<dyn Fn(usize) -> &'a str + 'a> {
    match array.data_type() {
        DataType::LargeUtf8 => {
            let a = array.as_string::<i64>();
            Box::new(move |i| a.value(i))
        }
        DataType::Utf8View => {
            let a = array.as_string_view();
            Box::new(move |i| a.value(i))
        }
        _ => {
            let a = array.as_string::<i32>();
            Box::new(move |i| a.value(i))
        }
    }
}

/// The values of a binary array, whichever of Arrow's layouts it has.
fn binary_values<'a>(array: &'a dyn Array) -> Box<dyn Fn(usize) -> &'a [u8] + 'a> {
    match array.data_type() {
        DataType::LargeBinary => {
            let a = array.as_binary::<i64>();
            Box::new(move |i| a.value(i))
        }
        DataType::BinaryView => {
            let a = array.as_binary_view();
            Box::new(move |i| a.value(i))
        }
        DataType::FixedSizeBinary(_) => {
            let a = array.as_fixed_size_binary();
            Box::new(move |i| a.value(i))
        }
        _ => {
            let a = array.as_binary::<i32>();
            Box::new(move |i| a.value(i))
        }
    }
}

fn integer<'a, T>(array: &'a dyn Array) -> Render<'a>
where
    T: ArrowPrimitiveType,
    T::Native: Display,
{
    let a = array.as_primitive::<T>();
    Box::new(move |i, out| write!(out, "{}", a.value(i)))
}

fn decimal<'a, T>(array: &'a dyn Array, scale: i8) -> Render<'a>
where
    T: ArrowPrimitiveType,
    T::Native: Into<i128>,
{
    let a = array.as_primitive::<T>();
    Box::new(move |i, out| write_decimal(out, a.value(i).into(), scale))
}

fn timestamp<'a, T: ArrowTimestampType>(array: &'a dyn Array, tz: Option<Tz>) -> Render<'a> {
    let a = array.as_primitive::<T>();
    Box::new(move |i, out| {
        let v = a.value(i);
        let local = match tz {
            Some(tz) => as_datetime_with_timezone::<T>(v, tz).map(|t| t.naive_local()),
            None => as_datetime::<T>(v),
        }
        .ok_or(fmt::Error)?;
        write!(out, "{} ", local.date())?;
        let utc = local.and_utc();
        let nanos_of_day = utc.timestamp().rem_euclid(SECONDS_PER_DAY) * NANOS_PER_SECOND
            + i64::from(utc.timestamp_subsec_nanos());
        write_time_of_day(out, nanos_of_day)
    })
}

fn time_of_day<'a, T>(array: &'a dyn Array, to_nanos: fn(T::Native) -> i64) -> Render<'a>
where
    T: ArrowPrimitiveType,
{
    let a = array.as_primitive::<T>();
    Box::new(move |i, out| {
        let nanos = to_nanos(a.value(i));
        if !(0..SECONDS_PER_DAY * NANOS_PER_SECOND).contains(&nanos) {
            return Err(fmt::Error);
        }
        write_time_of_day(out, nanos)
    })
}

/// A duration array's values as a plain function, so that the four units share one
/// renderer.
fn duration<'a, T>(array: &'a dyn Array) -> Box<dyn Fn(usize) -> i64 + 'a>
where
    T: ArrowPrimitiveType<Native = i64>,
{
    let a = array.as_primitive::<T>();
    Box::new(move |i| a.value(i))
}

fn list<'a, O: OffsetSizeTrait>(array: &'a dyn Array) -> Render<'a> {
    let a = array.as_list::<O>();
    let item = json(a.values().as_ref());
    let offsets = a.value_offsets();
    Box::new(move |i, out| {
        write_sequence(out, &item, offsets[i].as_usize()..offsets[i + 1].as_usize())
    })
}

fn write_sequence(
    out: &mut String,
    item: &Render<'_>,
    range: std::ops::Range<usize>,
) -> fmt::Result {
    out.push('[');
    let start = range.start;
    for index in range {
        if index > start {
            out.push(',');
        }
        item(index, out)?;
    }
    out.push(']');
    Ok(())
}

/// Arrow's own text, for types Hive has no form of.
fn arrow_text<'a>(array: &'a dyn Array) -> Render<'a> {
    const OPTIONS: FormatOptions<'static> = FormatOptions::new().with_display_error(false);
    match ArrayFormatter::try_new(array, &OPTIONS) {
        Ok(formatter) => {
            Box::new(move |i, out| formatter.value(i).write(out).map_err(|_| fmt::Error))
        }
        Err(_) => Box::new(|_, _| Err(fmt::Error)),
    }
}

/// `HH:MM:SS`, then `.` and the fraction without trailing zeros if there is one.
fn write_time_of_day(out: &mut String, nanos_of_day: i64) -> fmt::Result {
    let seconds = nanos_of_day / NANOS_PER_SECOND;
    let fraction = nanos_of_day % NANOS_PER_SECOND;
    write!(
        out,
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )?;
    if fraction != 0 {
        let start = out.len();
        write!(out, ".{fraction:09}")?;
        let trimmed = out[start..].trim_end_matches('0').len();
        out.truncate(start + trimmed);
    }
    Ok(())
}

/// Hive's INTERVAL_YEAR_MONTH text: `[-]years-months`.
fn write_year_month(out: &mut String, months: i32) -> fmt::Result {
    let sign = if months < 0 { "-" } else { "" };
    let months = months.unsigned_abs();
    write!(out, "{sign}{}-{}", months / 12, months % 12)
}

/// Hive's INTERVAL_DAY_TIME text: `[-]days HH:MM:SS.nnnnnnnnn`.
fn write_day_time(out: &mut String, nanos: i128) -> fmt::Result {
    let sign = if nanos < 0 { "-" } else { "" };
    let nanos = nanos.unsigned_abs();
    let per_second = NANOS_PER_SECOND as u128;
    let seconds = nanos / per_second;
    write!(
        out,
        "{sign}{} {:02}:{:02}:{:02}.{:09}",
        seconds / SECONDS_PER_DAY as u128,
        seconds / 3600 % 24,
        seconds / 60 % 60,
        seconds % 60,
        nanos % per_second
    )
}

/// A decimal in plain notation: the unscaled digits with a point `scale` digits from the
/// right (`-0.05`), or followed by zeros for a negative scale.
fn write_decimal(out: &mut String, unscaled: i128, scale: i8) -> fmt::Result {
    if unscaled < 0 {
        out.push('-');
    }
    let digits_start = out.len();
    write!(out, "{}", unscaled.unsigned_abs())?;
    place_decimal_point(out, digits_start, scale);
    Ok(())
}

fn write_decimal256(out: &mut String, unscaled: i256, scale: i8) -> fmt::Result {
    match unscaled.to_i128() {
        Some(small) => write_decimal(out, small, scale),
        None => {
            if unscaled.is_negative() {
                out.push('-');
            }
            let digits_start = out.len();
            // i256::MIN has no positive twin; its digits are those of MIN itself.
            let magnitude = unscaled.checked_abs();
            match magnitude {
                Some(m) => write!(out, "{m}")?,
                None => write!(out, "{}", &unscaled.to_string()[1..])?,
            }
            place_decimal_point(out, digits_start, scale);
            Ok(())
        }
    }
}

/// Turns the digits from `digits_start` on into the decimal's text.
fn place_decimal_point(out: &mut String, digits_start: usize, scale: i8) {
    let digits = out.len() - digits_start;
    if scale < 0 {
        if &out[digits_start..] != "0" {
            out.extend(std::iter::repeat_n('0', usize::from(scale.unsigned_abs())));
        }
        return;
    }
    let scale = usize::from(scale.unsigned_abs());
    if scale == 0 {
        return;
    }
    if digits > scale {
        out.insert(out.len() - scale, '.');
    } else {
        // 5 with scale 3 is 0.005: a leading "0." and zeros up to the digits.
        let zeros = scale - digits;
        out.insert_str(digits_start, "0.");
        for _ in 0..zeros {
            out.insert(digits_start + 2, '0');
        }
    }
}

/// A float as Java's `Double.toString` / `Float.toString` prints it: at least one digit
/// after the point, and computerized scientific notation (`1.0E10`, `1.5E-5`) outside
/// [10^-3, 10^7).
fn write_java_float<F>(out: &mut String, value: F) -> fmt::Result
where
    F: Display + LowerExp + Into<f64> + Copy,
{
    let wide: f64 = value.into();
    if wide.is_nan() {
        out.push_str("NaN");
        return Ok(());
    }
    if wide.is_infinite() {
        out.push_str(if wide > 0.0 { "Infinity" } else { "-Infinity" });
        return Ok(());
    }
    let start = out.len();
    let magnitude = wide.abs();
    if magnitude == 0.0 || (1e-3..1e7).contains(&magnitude) {
        write!(out, "{value}")?;
        if !out[start..].contains('.') {
            out.push_str(".0");
        }
    } else {
        // Rust's shortest form is `1e10` or `1.5e-5`: add Java's `.0`, upper-case the E.
        write!(out, "{value:e}")?;
        let e = start + out[start..].find('e').ok_or(fmt::Error)?;
        out.replace_range(e..=e, "E");
        if !out[start..e].contains('.') {
            out.insert_str(e, ".0");
        }
    }
    Ok(())
}

/// Bytes as UTF-8 text, invalid sequences replaced, as Hive's `Text.toString` reads them.
fn write_bytes(out: &mut String, bytes: &[u8]) -> fmt::Result {
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }
    Ok(())
}

/// A JSON string: quoted, with quotes, backslashes and control characters escaped
/// (Hive's `SerDeUtils.escapeString`).
fn write_quoted(out: &mut String, text: &str) -> fmt::Result {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c < ' ' => write!(out, "\\u{:04x}", u32::from(c))?,
            c => out.push(c),
        }
    }
    out.push('"');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn java(value: f64) -> String {
        let mut out = String::new();
        write_java_float(&mut out, value).unwrap();
        out
    }

    #[test]
    fn floats_print_as_java_does() {
        assert_eq!(java(1.0), "1.0");
        assert_eq!(java(2.5), "2.5");
        assert_eq!(java(-0.0), "-0.0");
        assert_eq!(java(1e10), "1.0E10");
        assert_eq!(java(1.5e-5), "1.5E-5");
        assert_eq!(java(1234567.0), "1234567.0");
        assert_eq!(java(f64::NAN), "NaN");
        let mut out = String::new();
        write_java_float(&mut out, 0.1f32).unwrap();
        assert_eq!(out, "0.1");
    }

    fn decimal_text(unscaled: i128, scale: i8) -> String {
        let mut out = String::new();
        write_decimal(&mut out, unscaled, scale).unwrap();
        out
    }

    #[test]
    fn decimals_are_plain_with_their_scale() {
        assert_eq!(decimal_text(12345, 2), "123.45");
        assert_eq!(decimal_text(-5, 3), "-0.005");
        assert_eq!(decimal_text(500, 3), "0.500");
        assert_eq!(decimal_text(0, 2), "0.00");
        assert_eq!(decimal_text(7, 0), "7");
        assert_eq!(decimal_text(12, -3), "12000");
        assert_eq!(decimal_text(0, -3), "0");
        assert_eq!(decimal_text(i128::MIN, 0), i128::MIN.to_string());
    }

    #[test]
    fn intervals_print_as_hive_does() {
        let mut out = String::new();
        write_day_time(&mut out, -(NANOS_PER_DAY + 3_723_000_000_005)).unwrap();
        assert_eq!(out, "-1 01:02:03.000000005");
        out.clear();
        write_year_month(&mut out, -14).unwrap();
        assert_eq!(out, "-1-2");
    }

    #[test]
    fn month_day_nano_intervals_print_in_hives_forms() {
        use datafusion::arrow::array::IntervalMonthDayNanoArray;
        use datafusion::arrow::datatypes::IntervalMonthDayNano;
        let array = IntervalMonthDayNanoArray::from(vec![
            IntervalMonthDayNano::new(2, 0, 0),
            IntervalMonthDayNano::new(0, 1, 0),
            IntervalMonthDayNano::new(0, -1, -3_723_000_000_005),
            IntervalMonthDayNano::new(14, 1, 5),
            IntervalMonthDayNano::new(0, 0, 0),
        ]);
        let render = plain(&array);
        let texts: Vec<String> = (0..array.len())
            .map(|i| {
                let mut out = String::new();
                render(i, &mut out).unwrap();
                out
            })
            .collect();
        assert_eq!(
            texts,
            [
                "0-2",
                "1 00:00:00.000000000",
                "-1 01:02:03.000000005",
                "1-2 1 00:00:00.000000005",
                "0-0"
            ]
        );
    }

    #[test]
    fn strings_are_escaped_like_hive() {
        let mut out = String::from("[");
        write_quoted(&mut out, "a\"b\\c\nd\u{1}").unwrap();
        assert_eq!(out, r#"["a\"b\\c\nd\u0001""#);
    }
}
