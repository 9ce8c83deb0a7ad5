//! Time zones as Java names them, and the session's zone, in which the engine's timestamps
//! are wall-clock times.
//!
//! A `TIMESTAMP` here carries no zone: it is a wall-clock time, as Hive's is and as Spark
//! shows its own, in the session's zone (`spark.sql.session.timeZone`,
//! `hive.local.time.zone`, `SET TIME ZONE`; UTC unless the session sets one). A count since
//! 1970 and a timestamp that carries a zone (a Parquet column adjusted to UTC) are moments.
//! Every conversion between the two goes through [`utc_to_session`] and
//! [`session_to_utc`], which read the session's zone when the query runs:
//! `from_unixtime`, `unix_timestamp`, casts between numbers and timestamps,
//! `timestamp_seconds` and `unix_seconds` and their kin, `current_timestamp`, a string
//! with a zone cast to a timestamp, `make_timestamp` with a zone, `from_utc_timestamp` and
//! `to_utc_timestamp`, `to_json`, `window`; [`formatted_with_zone`] writes the zone's name
//! and offset as Java's patterns do.
//!
//! The zone is kept as DataFusion's `datafusion.execution.time_zone`, so that DataFusion's
//! own `current_date` and `SHOW TIME ZONE` agree with it; [`session_setting`] writes it in
//! the form DataFusion reads (a region or `+hh:mm`).

use std::sync::Arc;

use chrono::format::{Fixed, Item, StrftimeItems};
use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, TimeDelta, TimeZone, Utc};
use datafusion::arrow::array::timezone::Tz;
use datafusion::arrow::array::types::{
    ArrowTimestampType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray, StringArray};
use datafusion::arrow::compute::cast as cast_array;
use datafusion::arrow::datatypes::{DataType, Field, TimeUnit};
use datafusion::arrow::temporal_conversions::as_datetime;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{exec_err, Column, DFSchema, Result, ScalarValue};
use datafusion::dataframe::DataFrame;
use datafusion::logical_expr::expr::{Cast, ScalarFunction, TryCast};
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ExprSchemable, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

/// The session keys that name its zone, Spark's and Hive's, DataFusion's, and the
/// `timezone` (`time.zone`) that DataFusion reads as its own; each sets
/// `datafusion.execution.time_zone`, through [`session_setting`].
pub const SESSION_ZONE_KEYS: [&str; 5] = [
    "spark.sql.session.timeZone",
    "hive.local.time.zone",
    "datafusion.execution.time_zone",
    "timezone",
    "time.zone",
];

/// The session's zone as its user wrote it (`PST`, `GMT+8`), beside the setting it stands
/// for, so that `current_timezone()` repeats it as Spark does ([`zone_shown`]).
#[derive(Debug, Clone, Default)]
pub struct ZoneAsWritten {
    pub written: String,
    pub setting: String,
}

impl datafusion::common::config::ExtensionOptions for ZoneAsWritten {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn cloned(&self) -> Box<dyn datafusion::common::config::ExtensionOptions> {
        Box::new(self.clone())
    }

    fn set(&mut self, key: &str, _value: &str) -> Result<()> {
        exec_err!("'{key}' is kept by the engine; set the session's zone with SET TIME ZONE")
    }

    fn entries(&self) -> Vec<datafusion::common::config::ConfigEntry> {
        Vec::new()
    }
}

impl datafusion::common::config::ConfigExtension for ZoneAsWritten {
    const PREFIX: &'static str = "kumiho_zone_as_written";
}

/// The zone `current_timezone()` names: as the session's user wrote it while it is the
/// zone in force (Spark repeats `PST` and `GMT+8`), else the setting in force (a region or
/// an offset), UTC when none was set.
pub fn zone_shown(options: &ConfigOptions) -> String {
    let setting = options
        .execution
        .time_zone
        .clone()
        .filter(|zone| !zone.is_empty())
        .unwrap_or_else(|| "UTC".to_owned());
    match options.extensions.get::<ZoneAsWritten>() {
        Some(zone) if zone.setting == setting && !zone.written.eq_ignore_ascii_case("local") => {
            zone.written.clone()
        }
        _ => setting,
    }
}

/// Whether `key` names the session's zone (Hive's keys are read without regard to case).
pub fn is_session_zone_key(key: &str) -> bool {
    SESSION_ZONE_KEYS
        .iter()
        .any(|zone_key| zone_key.eq_ignore_ascii_case(key))
}

/// The value of `datafusion.execution.time_zone` for a zone as a user names it: a region
/// (`America/Los_Angeles`), an offset (`+09:00`, `-8`, `UTC+8`, `GMT+01:00`, `Z`), one of
/// Java's short IDs (`PST`), or `LOCAL` (Hive's and Spark's word for the machine's zone).
/// An error says what a zone looks like.
pub fn session_setting(name: &str) -> std::result::Result<String, String> {
    let name = name.trim();
    let zone = if name.eq_ignore_ascii_case("local") {
        Some(Zone::machine())
    } else {
        Zone::java(name)
    };
    if zone.is_some_and(|zone| zone.is_utc()) && name.starts_with(char::is_alphabetic) {
        // `UTC`, `GMT`, `Z`: UTC by its name, as Spark's `current_timezone()` shows it.
        return Ok("UTC".to_owned());
    }
    zone.and_then(|zone| zone.setting()).ok_or_else(|| {
        format!(
            "'{name}' is not a time zone: give a region such as 'America/Los_Angeles' or \
             'Asia/Seoul', an offset in hours and minutes such as '+09:00' or 'UTC-8', or LOCAL"
        )
    })
}

/// A zone as Java's `ZoneId.of(name, SHORT_IDS)` reads it, after Spark's rewriting of
/// `+h:mm` and `+hh:m`.
#[derive(Debug, Clone, Copy)]
pub enum Zone {
    /// Seconds east of UTC.
    Offset(i32),
    Region(Tz),
}

impl Zone {
    pub const UTC: Zone = Zone::Offset(0);

    /// The zone a name gives, as Java reads it; `None` for a name that is no zone.
    pub fn java(name: &str) -> Option<Zone> {
        if let Some(id) = java_short_zone(name) {
            return Zone::java(id);
        }
        if name == "Z" {
            return Some(Zone::UTC);
        }
        if name.starts_with(['+', '-']) {
            return offset_seconds(name).map(Zone::Offset);
        }
        for prefix in ["UTC", "GMT", "UT"] {
            if let Some(rest) = name.strip_prefix(prefix) {
                if rest.is_empty() {
                    return Some(Zone::UTC);
                }
                if rest.starts_with(['+', '-']) {
                    return offset_seconds(rest).map(Zone::Offset);
                }
            }
        }
        let region_id = name.bytes().enumerate().all(|(k, b)| {
            b.is_ascii_alphabetic() || (k > 0 && (b.is_ascii_digit() || b"~/._+-".contains(&b)))
        });
        if !region_id || name.len() < 2 {
            return None;
        }
        // Java's region IDs, tzdb's: chrono-tz's names.
        name.parse::<Tz>().ok().map(Zone::Region)
    }

    /// The session's zone: `datafusion.execution.time_zone`, UTC when unset.
    pub fn of_session(options: &ConfigOptions) -> Zone {
        options
            .execution
            .time_zone
            .as_deref()
            .and_then(|name| Zone::java(name.trim()))
            .unwrap_or(Zone::UTC)
    }

    /// The machine's zone (the `TZ` variable, else the system's), UTC when it has none.
    pub fn machine() -> Zone {
        // `TZ` may name a file (`:/etc/localtime`) rather than a zone: then the system's.
        std::env::var("TZ")
            .ok()
            .and_then(|tz| Zone::java(tz.trim_start_matches(':')))
            .or_else(|| Zone::java(&iana_time_zone::get_timezone().ok()?))
            .unwrap_or(Zone::UTC)
    }

    pub fn is_utc(&self) -> bool {
        matches!(self, Zone::Offset(0))
    }

    /// The zone as DataFusion's time-zone setting holds it; `None` for an offset with
    /// seconds, which Arrow's zones cannot hold.
    fn setting(&self) -> Option<String> {
        match self {
            Zone::Region(tz) => Some(tz.to_string()),
            Zone::Offset(seconds) if seconds % 60 != 0 => None,
            Zone::Offset(seconds) => {
                let sign = if *seconds < 0 { '-' } else { '+' };
                let minutes = seconds.abs() / 60;
                Some(format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60))
            }
        }
    }

    /// The moment (as a UTC wall-clock time) of the zone's wall-clock time `local`. A time
    /// that a daylight-saving change skips is moved forward by the gap, and one it repeats is
    /// its earlier moment, as Java's `ZonedDateTime.of` reads them.
    pub fn to_utc(&self, local: NaiveDateTime) -> Option<NaiveDateTime> {
        match self {
            Zone::Offset(seconds) => {
                local.checked_sub_signed(TimeDelta::seconds(i64::from(*seconds)))
            }
            Zone::Region(tz) => match tz.from_local_datetime(&local).earliest() {
                Some(moment) => Some(moment.naive_utc()),
                None => {
                    // In a gap: the offset in force before it, which moves the time forward.
                    let before = tz.offset_from_utc_datetime(&(local - TimeDelta::days(1)));
                    local.checked_sub_signed(TimeDelta::seconds(i64::from(
                        chrono::Offset::fix(&before).local_minus_utc(),
                    )))
                }
            },
        }
    }

    /// A wall-clock time as the zone can show it: one that a daylight-saving change skips
    /// moved forward by the gap (02:30 on the night clocks go from 02:00 to 03:00 is 03:30),
    /// as Spark shows a time it made of it.
    pub fn shown(&self, local: NaiveDateTime) -> Option<NaiveDateTime> {
        match self {
            Zone::Region(tz) if tz.from_local_datetime(&local).earliest().is_none() => {
                self.to_local(self.to_utc(local)?)
            }
            _ => Some(local),
        }
    }

    /// The zone's wall-clock time at the moment `utc`.
    pub fn to_local(&self, utc: NaiveDateTime) -> Option<NaiveDateTime> {
        match self {
            Zone::Offset(seconds) => {
                utc.checked_add_signed(TimeDelta::seconds(i64::from(*seconds)))
            }
            Zone::Region(tz) => Some(tz.from_utc_datetime(&utc).naive_local()),
        }
    }

    /// The zone's date now.
    pub fn today(&self) -> NaiveDate {
        let now: DateTime<Utc> = Utc::now();
        self.to_local(now.naive_utc())
            .map_or(now.date_naive(), |local| local.date())
    }
}

/// The zone of one of Java's `ZoneId.SHORT_IDS` (`PST` is `America/Los_Angeles`).
pub fn java_short_zone(zone: &str) -> Option<&'static str> {
    const SHORT_IDS: &[(&str, &str)] = &[
        ("ACT", "Australia/Darwin"),
        ("AET", "Australia/Sydney"),
        ("AGT", "America/Argentina/Buenos_Aires"),
        ("ART", "Africa/Cairo"),
        ("AST", "America/Anchorage"),
        ("BET", "America/Sao_Paulo"),
        ("BST", "Asia/Dhaka"),
        ("CAT", "Africa/Harare"),
        ("CNT", "America/St_Johns"),
        ("CST", "America/Chicago"),
        ("CTT", "Asia/Shanghai"),
        ("EAT", "Africa/Addis_Ababa"),
        ("ECT", "Europe/Paris"),
        ("IET", "America/Indiana/Indianapolis"),
        ("IST", "Asia/Kolkata"),
        ("JST", "Asia/Tokyo"),
        ("MIT", "Pacific/Apia"),
        ("NET", "Asia/Yerevan"),
        ("NST", "Pacific/Auckland"),
        ("PLT", "Asia/Karachi"),
        ("PNT", "America/Phoenix"),
        ("PRT", "America/Puerto_Rico"),
        ("PST", "America/Los_Angeles"),
        ("SST", "Pacific/Guadalcanal"),
        ("VST", "Asia/Ho_Chi_Minh"),
        ("EST", "-05:00"),
        ("MST", "-07:00"),
        ("HST", "-10:00"),
    ];
    SHORT_IDS
        .iter()
        .find(|(short, _)| *short == zone)
        .map(|(_, zone)| *zone)
}

/// An offset as `ZoneOffset.of` reads it (`+h`, `+hh`, `+hh:mm`, `+hhmm`, `+hh:mm:ss`,
/// `+hhmmss`, up to 18 hours), after Spark's `+h:mm` and `+hh:m`.
fn offset_seconds(text: &str) -> Option<i32> {
    let sign = if text.starts_with('-') { -1 } else { 1 };
    let body = &text[1..];
    // Spark's rewriting: `+h:mm` is `+0h:mm`, `+hh:m` (at the end) `+hh:0m`.
    let mut body = body.to_owned();
    if body.len() > 1 && body.as_bytes()[0].is_ascii_digit() && body.as_bytes()[1] == b':' {
        body.insert(0, '0');
    }
    let b = body.as_bytes();
    if b.len() == 4 && b[2] == b':' && b[..2].iter().chain(&b[3..]).all(u8::is_ascii_digit) {
        body.insert(3, '0');
    }
    let b = body.as_bytes();
    if !b.iter().all(|c| c.is_ascii_digit() || *c == b':') {
        return None;
    }
    let number = |s: &[u8]| -> Option<i32> { std::str::from_utf8(s).ok()?.parse().ok() };
    let (hours, minutes, seconds) = match b.len() {
        1 | 2 if b.iter().all(u8::is_ascii_digit) => (number(b)?, 0, 0),
        4 if b.iter().all(u8::is_ascii_digit) => (number(&b[..2])?, number(&b[2..])?, 0),
        5 if b[2] == b':' => (number(&b[..2])?, number(&b[3..])?, 0),
        6 if b.iter().all(u8::is_ascii_digit) => {
            (number(&b[..2])?, number(&b[2..4])?, number(&b[4..])?)
        }
        8 if b[2] == b':' && b[5] == b':' => {
            (number(&b[..2])?, number(&b[3..5])?, number(&b[6..])?)
        }
        _ => return None,
    };
    if hours > 18 || minutes > 59 || seconds > 59 {
        return None;
    }
    let total = hours * 3600 + minutes * 60 + seconds;
    (total <= 18 * 3600).then_some(sign * total)
}

/// `moment` (a timestamp without a zone read as UTC's wall-clock time, or one with a zone)
/// as the session's wall-clock time, a timestamp without a zone.
pub fn utc_to_session(moment: Expr) -> Expr {
    SessionTime::udf(Direction::FromUtc, None).call(vec![moment])
}

/// `moment` as the wall-clock time of `zone` (a name [`Zone::java`] reads), whatever the
/// session's: Hive's `from_utc_timestamp`.
pub fn utc_to_zone(moment: Expr, zone: &str) -> Expr {
    SessionTime::udf(Direction::FromUtc, Some(zone)).call(vec![moment])
}

/// `wall_clock`, a wall-clock time of `zone`, as UTC's: Hive's `to_utc_timestamp`.
pub fn zone_to_utc(wall_clock: Expr, zone: &str) -> Expr {
    SessionTime::udf(Direction::ToUtc, Some(zone)).call(vec![wall_clock])
}

/// `wall_clock` (a timestamp without a zone, the session's wall-clock time) as the moment's
/// UTC wall-clock time; a timestamp with a zone is its moment already.
pub fn session_to_utc(wall_clock: Expr) -> Expr {
    SessionTime::udf(Direction::ToUtc, None).call(vec![wall_clock])
}

/// A query's result with each column of moments (a timestamp with a zone: a Parquet column
/// adjusted to UTC, say) as the session's wall-clock times, which Spark shows for them and
/// the rest of the engine's timestamps are.
pub fn shown_in_session_zone(frame: DataFrame) -> Result<DataFrame> {
    let is_moment = |field: &Field| matches!(field.data_type(), DataType::Timestamp(_, Some(_)));
    if !frame.schema().fields().iter().any(|field| is_moment(field)) {
        return Ok(frame);
    }
    let columns: Vec<Expr> = frame
        .schema()
        .iter()
        .map(|(qualifier, field)| {
            let column = Expr::Column(Column::from((qualifier, field)));
            if is_moment(field) {
                utc_to_session(column).alias_qualified(qualifier.cloned(), field.name())
            } else {
                column
            }
        })
        .collect();
    frame.select(columns)
}

/// Reads a wall-clock time or a string cast to a moment (a timestamp with a zone) as the
/// session's wall-clock time: `ts_utc >= '2024-07-01 08:00:00'` and `ts_utc = TIMESTAMP
/// '...'` (the casts coercion adds) compare at the moment the session means, where
/// DataFusion's cast read the text as the column's zone's (UTC's). An analyzer rule, run after
/// type coercion and before the string casts (`spark_casts`), which then read the string.
pub const SESSION_MOMENT_CASTS: crate::hive_syntax::ExpressionRewrite =
    crate::hive_syntax::ExpressionRewrite::new("session_moment_casts", session_moment_cast);

fn session_moment_cast(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let (Expr::Cast(Cast { expr: value, field }) | Expr::TryCast(TryCast { expr: value, field })) =
        &expr
    else {
        return Ok(Transformed::no(expr));
    };
    let DataType::Timestamp(unit, Some(zone)) = field.data_type() else {
        return Ok(Transformed::no(expr));
    };
    let (value, unit, zone) = (value.as_ref(), *unit, Arc::clone(zone));
    let Ok(source) = value.get_type(schema) else {
        return Ok(Transformed::no(expr));
    };
    let naive = DataType::Timestamp(TimeUnit::Nanosecond, None);
    let wall_clock = match source {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            datafusion::logical_expr::try_cast(value.clone(), naive)
        }
        DataType::Timestamp(_, None) if !is_session_to_utc(value) => value.clone(),
        _ => return Ok(Transformed::no(expr)),
    };
    let moment = datafusion::logical_expr::cast(
        session_to_utc(wall_clock),
        DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
    );
    Ok(Transformed::yes(datafusion::logical_expr::cast(
        moment,
        DataType::Timestamp(unit, Some(zone)),
    )))
}

/// DataFusion's functions of a moment's fields, `date_part` (`EXTRACT`), `date_trunc` and
/// `date_bin`, reading a moment (a timestamp with a zone: Spark's INT96, a Parquet
/// timestamp adjusted to UTC) in the session's zone, as Spark reads it: `EXTRACT(HOUR FROM
/// ts)` of 12:00 UTC is 5 in Los Angeles, and `date_trunc('DAY', ts)` the moment its day
/// starts there. DataFusion read the moment in its type's zone (UTC). `date_trunc` and
/// `date_bin` still give a moment of the column's type. An analyzer rule, run after type
/// coercion.
pub const SESSION_MOMENT_FIELDS: crate::hive_syntax::ExpressionRewrite =
    crate::hive_syntax::ExpressionRewrite::new("session_moment_fields", session_moment_fields);

fn session_moment_fields(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Expr::ScalarFunction(call) = &expr else {
        return Ok(Transformed::no(expr));
    };
    let name = call.func.name();
    if !matches!(name, "date_part" | "date_trunc" | "date_bin") {
        return Ok(Transformed::no(expr));
    }
    // The moment is the second argument (and `date_bin`'s origin the third).
    let mut zoned = None;
    let mut args = call.args.clone();
    for arg in args.iter_mut().skip(1) {
        if let Ok(DataType::Timestamp(unit, Some(zone))) = arg.get_type(schema) {
            zoned.get_or_insert((unit, zone));
            *arg = utc_to_session(arg.clone());
        }
    }
    let Some((unit, zone)) = zoned else {
        return Ok(Transformed::no(expr));
    };
    let wall_clock = Expr::ScalarFunction(ScalarFunction::new_udf(Arc::clone(&call.func), args));
    if name == "date_part" {
        return Ok(Transformed::yes(wall_clock));
    }
    // In the column's unit: a year past 2262 has no nanoseconds.
    let moment = datafusion::logical_expr::cast(
        session_to_utc(wall_clock),
        DataType::Timestamp(unit, Some("UTC".into())),
    );
    Ok(Transformed::yes(datafusion::logical_expr::cast(
        moment,
        DataType::Timestamp(unit, Some(zone)),
    )))
}

/// Whether `expr` is already [`session_to_utc`]'s conversion.
fn is_session_to_utc(expr: &Expr) -> bool {
    matches!(expr, Expr::ScalarFunction(call) if call.func.name() == SESSION_TO_UTC)
}

/// The name of [`session_to_utc`]'s function.
const SESSION_TO_UTC: &str = "session_time_to_utc";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Direction {
    FromUtc,
    ToUtc,
}

/// The conversion between UTC's wall-clock times and a zone's: the zone the session has
/// when the query runs, or one named.
#[derive(Debug, PartialEq, Eq, Hash)]
struct SessionTime {
    direction: Direction,
    /// A zone's name ([`Zone::java`]), checked by the caller; None: the session's.
    zone: Option<String>,
    signature: Signature,
}

impl SessionTime {
    fn udf(direction: Direction, zone: Option<&str>) -> Arc<ScalarUDF> {
        Arc::new(ScalarUDF::new_from_impl(SessionTime {
            direction,
            zone: zone.map(str::to_owned),
            signature: Signature::user_defined(Volatility::Immutable),
        }))
    }
}

impl ScalarUDFImpl for SessionTime {
    fn name(&self) -> &str {
        match (self.direction, &self.zone) {
            (Direction::FromUtc, None) => "utc_to_session_time",
            (Direction::ToUtc, None) => SESSION_TO_UTC,
            (Direction::FromUtc, Some(_)) => "utc_to_zone_time",
            (Direction::ToUtc, Some(_)) => "zone_time_to_utc",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        match types {
            [DataType::Timestamp(..)] => Ok(types.to_vec()),
            [DataType::Null] => Ok(vec![DataType::Timestamp(TimeUnit::Nanosecond, None)]),
            _ => exec_err!("{} takes a timestamp, not {types:?}", self.name()),
        }
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        match types {
            [DataType::Timestamp(unit, _)] => Ok(DataType::Timestamp(*unit, None)),
            _ => Ok(DataType::Timestamp(TimeUnit::Nanosecond, None)),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let zone = match &self.zone {
            Some(name) => match Zone::java(name) {
                Some(zone) => zone,
                None => return exec_err!("'{name}' is not a time zone"),
            },
            None => Zone::of_session(&args.config_options),
        };
        let input = args.args[0].to_array(args.number_rows)?;
        let DataType::Timestamp(unit, input_zone) = input.data_type().clone() else {
            return exec_err!("{} takes a timestamp", self.name());
        };
        // A moment with a zone holds UTC's count: the same numbers, read as UTC's wall-clock.
        let convert = match (self.direction, &input_zone) {
            (Direction::ToUtc, Some(_)) => None,
            (_, None) if zone.is_utc() => None,
            (direction, _) => Some(move |time: NaiveDateTime| match direction {
                Direction::FromUtc => zone.to_local(time),
                Direction::ToUtc => zone.to_utc(time),
            }),
        };
        let output = match convert {
            None if input_zone.is_none() => input,
            None => strip_zone(&input, unit),
            Some(convert) => match unit {
                TimeUnit::Second => shift::<TimestampSecondType>(&input, convert),
                TimeUnit::Millisecond => shift::<TimestampMillisecondType>(&input, convert),
                TimeUnit::Microsecond => shift::<TimestampMicrosecondType>(&input, convert),
                TimeUnit::Nanosecond => shift::<TimestampNanosecondType>(&input, convert),
            },
        };
        crate::hive_functions::columnar(output, &args.args)
    }
}

/// The same counts, without a zone.
fn strip_zone(input: &ArrayRef, unit: TimeUnit) -> ArrayRef {
    let data = input.to_data();
    let builder = data
        .into_builder()
        .data_type(DataType::Timestamp(unit, None));
    datafusion::arrow::array::make_array(builder.build().expect("the same layout"))
}

/// Each wall-clock time converted; NULL where the result is beyond the unit's range.
fn shift<T: ArrowTimestampType>(
    input: &ArrayRef,
    convert: impl Fn(NaiveDateTime) -> Option<NaiveDateTime>,
) -> ArrayRef {
    let values = input.as_primitive::<T>();
    let shifted: PrimitiveArray<T> =
        values.unary_opt(|value| T::from_naive_datetime(convert(as_datetime::<T>(value)?)?, None));
    Arc::new(shifted)
}

/// `wall_clock` (the session's wall-clock time) written with a strftime `pattern` that
/// writes its zone: `%Z` the zone's short name at that time (`PDT`, Java's `z`; an offset's
/// text for an offset), `%z` and `%:z` its offset (`-0700`, `-07:00`).
pub fn formatted_with_zone(wall_clock: Expr, pattern: String) -> Expr {
    Arc::new(ScalarUDF::new_from_impl(ZonedFormat {
        pattern,
        signature: Signature::any(1, Volatility::Immutable),
    }))
    .call(vec![wall_clock])
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct ZonedFormat {
    pattern: String,
    signature: Signature,
}

impl ScalarUDFImpl for ZonedFormat {
    fn name(&self) -> &str {
        "format_in_session_zone"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let items: Vec<Item> = StrftimeItems::new(&self.pattern).collect();
        if items.contains(&Item::Error) {
            return exec_err!("'{}' is not a pattern the engine can write", self.pattern);
        }
        let zone = Zone::of_session(&args.config_options);
        // Java writes no offset as `Z` (`XXX`), and UTC's name as `UTC` (`z`).
        let at_no_offset: Vec<Item> = items
            .iter()
            .map(|item| match item {
                Item::Fixed(Fixed::TimezoneOffsetColon) => Item::Literal("Z"),
                Item::Fixed(Fixed::TimezoneName) if zone.is_utc() => Item::Literal("UTC"),
                item => item.clone(),
            })
            .collect();
        // chrono-tz's zone, which knows the zone's short names (Arrow's does not).
        let region: Option<chrono_tz::Tz> = match zone {
            Zone::Region(_) => zone.setting().and_then(|name| name.parse().ok()),
            Zone::Offset(_) => None,
        };
        let input = args.args[0].to_array(args.number_rows)?;
        // A moment (a timestamp with a zone) is its UTC time; a wall-clock time the session's.
        let is_moment = matches!(input.data_type(), DataType::Timestamp(_, Some(_)));
        let times = cast_array(&input, &DataType::Timestamp(TimeUnit::Nanosecond, None))?;
        let times = times.as_primitive::<TimestampNanosecondType>();
        let text: StringArray = times
            .iter()
            .map(|nanos| {
                let time = as_datetime::<TimestampNanosecondType>(nanos?)?;
                let utc = if is_moment { time } else { zone.to_utc(time)? };
                let items = if zone.to_local(utc)? == utc {
                    at_no_offset.iter()
                } else {
                    items.iter()
                };
                Some(match zone {
                    Zone::Offset(seconds) => FixedOffset::east_opt(seconds)?
                        .from_utc_datetime(&utc)
                        .format_with_items(items)
                        .to_string(),
                    Zone::Region(_) => region?
                        .from_utc_datetime(&utc)
                        .format_with_items(items)
                        .to_string(),
                })
            })
            .collect();
        crate::hive_functions::columnar(Arc::new(text), &args.args)
    }
}

/// `current_timestamp()` (`now()`, `localtimestamp()`): the query's start as the session's
/// wall-clock time, to the microsecond as Spark's, the same wherever it appears in a query.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct SessionNow {
    signature: Signature,
    aliases: Vec<String>,
}

impl SessionNow {
    pub fn udf() -> ScalarUDF {
        ScalarUDF::new_from_impl(SessionNow {
            signature: Signature::nullary(Volatility::Stable),
            aliases: vec!["current_timestamp".to_owned(), "localtimestamp".to_owned()],
        })
    }
}

impl ScalarUDFImpl for SessionNow {
    fn name(&self) -> &str {
        "now"
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Timestamp(TimeUnit::Nanosecond, None))
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        let Some(start) = info.query_execution_start_time() else {
            return Ok(ExprSimplifyResult::Original(args));
        };
        let now = wall_clock_at(&Zone::of_session(info.config_options()), start);
        Ok(ExprSimplifyResult::Simplified(Expr::Literal(now, None)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        // Not simplified (the optimizer turned off): now, when the batch is computed.
        let now = wall_clock_at(&Zone::of_session(&args.config_options), Utc::now());
        Ok(ColumnarValue::Scalar(now))
    }
}

/// The zone's wall-clock time at `moment`, to the microsecond.
fn wall_clock_at(zone: &Zone, moment: DateTime<Utc>) -> ScalarValue {
    let nanos = zone
        .to_local(moment.naive_utc())
        .and_then(|local| local.and_utc().timestamp_nanos_opt())
        .map(|nanos| nanos - nanos.rem_euclid(1_000));
    ScalarValue::TimestampNanosecond(nanos, None)
}

#[cfg(test)]
mod tests;
