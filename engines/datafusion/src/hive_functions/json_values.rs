//! Spark's `to_json` and `from_json`: a struct, map or array written as JSON text, and JSON
//! text read into the struct, array or map a DDL schema literal names, with Spark 3.5's
//! defaults (NULL struct fields left out; PERMISSIVE reading).
//!
//! Both go through [`Json`], the value `get_json_object` reads and writes, so every JSON
//! function writes keys, strings and numbers alike (doubles as Java prints them).

use std::sync::Arc;

use base64::Engine as _;
use chrono::NaiveDateTime;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, Float32Array, Float64Array,
    Int16Array, Int32Array, Int64Array, Int8Array, ListArray, MapArray, PrimitiveArray,
    StringArray, StructArray,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::compute::kernels::cast_utils::{parse_decimal, Parser as _};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, DecimalType, Field, FieldRef, Fields, TimeUnit,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use datafusion::arrow::temporal_conversions::{as_datetime, date32_to_datetime};
use datafusion::arrow::util::display::array_value_to_string;
use datafusion::common::{Result, ScalarValue};
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};
use datafusion::sql::sqlparser::ast::{
    ArrayElemTypeDef, DataType as SqlType, ExactNumberInfo, Ident,
};
use datafusion::sql::sqlparser::dialect::SparkSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::json::Json;
use super::{bad_arguments, HiveFunction};
use crate::time_zones::Zone;

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::computed_in_zone("to_json", to_json_types, |_| Ok(DataType::Utf8), to_json)
            .udf(),
        ScalarUDF::new_from_impl(FromJson::new()),
    ]
}

/// `to_json` takes one struct, map or array, as Spark 3.5 does (a primitive is refused
/// there too). An options map is refused rather than ignored: Spark's options change the
/// text (`timestampFormat`, `ignoreNullFields`), and ignoring one would answer silently
/// differently.
fn to_json_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [DataType::Struct(_) | DataType::Map(..) | DataType::List(_) | DataType::Null] => {
            Ok(types.to_vec())
        }
        [DataType::LargeList(f) | DataType::FixedSizeList(f, _)] => {
            Ok(vec![DataType::List(Arc::clone(f))])
        }
        _ => Err(bad_arguments(
            name,
            "(a struct, map or array; no options map)",
            types,
        )),
    }
}

/// `to_json(value)`: the value as compact JSON text, NULL for NULL.
fn to_json(args: &[ArrayRef], zone: &Zone) -> Result<ArrayRef> {
    let values = &args[0];
    let text: StringArray = (0..values.len())
        .map(|i| {
            (!values.is_null(i)).then(|| {
                let mut out = String::new();
                json_of(values.as_ref(), i, zone).write(&mut out);
                out
            })
        })
        .collect();
    Ok(Arc::new(text))
}

/// Row `i` of an array as Spark's `JacksonGenerator` writes it: a struct's NULL fields left
/// out (`ignoreNullFields`), a map's keys as their text, dates `yyyy-MM-dd`, timestamps
/// `yyyy-MM-dd'T'HH:mm:ss.SSSXXX` in the session's zone ([`timestamp`]),
/// decimals with their scale, binary in base 64, NaN and infinities as strings.
pub(super) fn json_of(array: &dyn Array, i: usize, zone: &Zone) -> Json {
    if array.is_null(i) {
        return Json::Null;
    }
    match array.data_type() {
        DataType::Boolean => Json::Bool(array.as_boolean().value(i)),
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
            integer_text(array, i)
        }
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
            integer_text(array, i)
        }
        DataType::Float32 => {
            // Java's Float.toString gives a float's own shortest digits; read back as a
            // double they print the same through Double.toString.
            let x = array
                .as_primitive::<datafusion::arrow::datatypes::Float32Type>()
                .value(i);
            double(format!("{x}").parse().unwrap_or(f64::from(x)))
        }
        DataType::Float64 => double(
            array
                .as_primitive::<datafusion::arrow::datatypes::Float64Type>()
                .value(i),
        ),
        DataType::Decimal32(..)
        | DataType::Decimal64(..)
        | DataType::Decimal128(..)
        | DataType::Decimal256(..) => Json::Number(display(array, i)),
        DataType::Date32 => {
            let days = array.as_primitive::<Date32Type>().value(i);
            match date32_to_datetime(days) {
                Some(t) => Json::String(t.format("%Y-%m-%d").to_string()),
                None => Json::String(display(array, i)),
            }
        }
        DataType::Timestamp(unit, moment) => {
            let time = match unit {
                TimeUnit::Second => time_of::<TimestampSecondType>(array, i),
                TimeUnit::Millisecond => time_of::<TimestampMillisecondType>(array, i),
                TimeUnit::Microsecond => time_of::<TimestampMicrosecondType>(array, i),
                TimeUnit::Nanosecond => time_of::<TimestampNanosecondType>(array, i),
            };
            let stamp = time.and_then(|time| timestamp(time, moment.is_some(), zone));
            Json::String(stamp.unwrap_or_else(|| display(array, i)))
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            let bytes: &[u8] = match array.data_type() {
                DataType::Binary => array.as_binary::<i32>().value(i),
                DataType::LargeBinary => array.as_binary::<i64>().value(i),
                _ => array.as_binary_view().value(i),
            };
            // Base 64 with padding, as Spark writes a BINARY (Jackson's `writeBinary`).
            Json::String(base64::engine::general_purpose::STANDARD.encode(bytes))
        }
        DataType::Struct(fields) => {
            let structs = array.as_struct();
            let members = fields
                .iter()
                .zip(structs.columns())
                .filter(|(_, column)| !column.is_null(i))
                .map(|(field, column)| (field.name().clone(), json_of(column.as_ref(), i, zone)))
                .collect();
            Json::Object(members)
        }
        DataType::List(_) => items(&array.as_list::<i32>().value(i), zone),
        DataType::LargeList(_) => items(&array.as_list::<i64>().value(i), zone),
        DataType::FixedSizeList(..) => items(&array.as_fixed_size_list().value(i), zone),
        DataType::Map(..) => {
            let entries = array.as_map().value(i);
            let (keys, values) = (entries.column(0), entries.column(1));
            let members = (0..entries.len())
                .map(|j| {
                    let key = match json_of(keys.as_ref(), j, zone) {
                        Json::String(s) => s,
                        other => {
                            let mut text = String::new();
                            other.write(&mut text);
                            text
                        }
                    };
                    (key, json_of(values.as_ref(), j, zone))
                })
                .collect();
            Json::Object(members)
        }
        // Strings, and any other type as its text (Spark writes its string form).
        _ => Json::String(display(array, i)),
    }
}

fn display(array: &dyn Array, i: usize) -> String {
    array_value_to_string(array, i).unwrap_or_default()
}

fn integer_text(array: &dyn Array, i: usize) -> Json {
    Json::Number(display(array, i))
}

/// Spark writes NaN and the infinities as strings: JSON has no such numbers.
fn double(x: f64) -> Json {
    if x.is_finite() {
        Json::Double(x)
    } else {
        Json::String(super::printf::java_double(x))
    }
}

fn items(array: &ArrayRef, zone: &Zone) -> Json {
    Json::Array(
        (0..array.len())
            .map(|j| json_of(array.as_ref(), j, zone))
            .collect(),
    )
}

/// A timestamp as Spark's default `timestampFormat` (`yyyy-MM-dd'T'HH:mm:ss.SSSXXX`)
/// writes it: the session's wall-clock time, milliseconds always, then the zone's offset at
/// that time (`Z` for none). `time` is the session's wall-clock time, or the moment's UTC
/// time when the timestamp carries a zone (`is_moment`).
fn timestamp(time: NaiveDateTime, is_moment: bool, zone: &Zone) -> Option<String> {
    let (local, utc) = if is_moment {
        (zone.to_local(time)?, time)
    } else {
        (time, zone.to_utc(time)?)
    };
    let offset = (local - utc).num_seconds();
    let text = local.format("%Y-%m-%dT%H:%M:%S%.3f");
    if offset == 0 {
        return Some(format!("{text}Z"));
    }
    let sign = if offset < 0 { '-' } else { '+' };
    let minutes = offset.abs() / 60;
    Some(format!(
        "{text}{sign}{:02}:{:02}",
        minutes / 60,
        minutes % 60
    ))
}

/// Row `i` of a timestamp array as a date and time.
fn time_of<T: datafusion::arrow::datatypes::ArrowTimestampType>(
    array: &dyn Array,
    i: usize,
) -> Option<NaiveDateTime> {
    as_datetime::<T>(array.as_primitive::<T>().value(i))
}

/// `from_json(json, 'schema')`: the JSON text read into the struct (`'a INT, b STRING'`,
/// `'struct<a:int>'`), array or map its DDL schema names. Its type is the schema's, so the
/// schema must be a literal, read when the query is planned.
#[derive(Debug, PartialEq, Eq, Hash)]
struct FromJson {
    signature: Signature,
}

impl FromJson {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

const FROM_JSON_TAKES: &str =
    "(JSON text, schema as a string literal such as 'a INT, b STRING'; no options map)";

impl ScalarUDFImpl for FromJson {
    fn name(&self) -> &str {
        "from_json"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let string = |t: &DataType| super::is_string(t) || t.is_null();
        match types {
            // The schema keeps its own type, so that it stays a literal for
            // `return_field_from_args` (a cast would hide it).
            [json, schema] if string(json) && super::is_string(schema) => {
                Ok(vec![DataType::Utf8, schema.clone()])
            }
            _ => Err(bad_arguments(self.name(), FROM_JSON_TAKES, types)),
        }
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Err(DataFusionError::Internal(
            "from_json's type is read from its schema argument".to_owned(),
        ))
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let schema = match args.scalar_arguments.get(1) {
            Some(Some(
                ScalarValue::Utf8(Some(s))
                | ScalarValue::LargeUtf8(Some(s))
                | ScalarValue::Utf8View(Some(s)),
            )) => s,
            _ => {
                return Err(DataFusionError::Plan(
                    "from_json takes its schema as a string literal (such as 'a INT, b \
                     STRING'): the result's type is read from it when the query is planned"
                        .to_owned(),
                ))
            }
        };
        Ok(Arc::new(Field::new(
            self.name(),
            schema_type(self.name(), schema)?,
            true,
        )))
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation("from_json")
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let target = args.return_field.data_type().clone();
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let texts = arrays[0].as_string::<i32>();
        let documents: Vec<Option<Json>> = (0..rows)
            .map(|i| {
                (!texts.is_null(i))
                    .then(|| texts.value(i))
                    .and_then(|t| read(t, &target))
            })
            .collect();
        let refs: Vec<Option<&Json>> = documents.iter().map(Option::as_ref).collect();
        let zone = Zone::of_session(&args.config_options);
        super::columnar(build(&refs, &target, &zone)?, &args.args)
    }
}

/// One row's document as Spark's PERMISSIVE mode keeps it: NULL for empty text; for a
/// struct, malformed text or another JSON value (`null`, `5`) is a struct of NULLs; an
/// array or a map is NULL unless the text is one whose elements all have the type.
fn read(text: &str, target: &DataType) -> Option<Json> {
    if text.trim().is_empty() {
        return None;
    }
    // The first JSON value; text after it is ignored, as Spark's Jackson parser stops
    // after the first value (`{"a":1} x` reads as `{"a":1}`).
    let mut parser = serde_json::Deserializer::from_str(text);
    let document = serde::Deserialize::deserialize(&mut parser).ok();
    match (document, target) {
        (Some(object @ Json::Object(_)), DataType::Struct(_)) => Some(object),
        // Spark gives a struct of NULLs for JSON `null` too.
        (_, DataType::Struct(_)) => Some(Json::Object(Vec::new())),
        (Some(Json::Null), _) => None,
        (Some(document), _) if conforms(&document, target) => Some(document),
        _ => None,
    }
}

/// Whether every value of a document has its type (JSON null has any). A struct's fields
/// are not checked: Spark keeps the fields it could read.
fn conforms(value: &Json, target: &DataType) -> bool {
    match (value, target) {
        (Json::Null, _) => true,
        (Json::Array(items), DataType::List(field)) => {
            items.iter().all(|item| conforms(item, field.data_type()))
        }
        (Json::Object(members), DataType::Map(entries, _)) => {
            let value_type = map_value_type(entries);
            members.iter().all(|(_, v)| conforms(v, value_type))
        }
        (Json::Object(_), DataType::Struct(_)) => true,
        (_, DataType::List(_) | DataType::Map(..) | DataType::Struct(_)) => false,
        (value, leaf) => leaf_conforms(value, leaf),
    }
}

fn leaf_conforms(value: &Json, leaf: &DataType) -> bool {
    match leaf {
        DataType::Boolean => matches!(value, Json::Bool(_)),
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
            integer(value, leaf).is_some()
        }
        DataType::Float32 | DataType::Float64 => number(value).is_some(),
        DataType::Decimal128(p, s) => decimal(value, *p, *s).is_some(),
        DataType::Date32 => date(value).is_some(),
        // Whether it is a timestamp at all: the zone it is shown in does not change that.
        DataType::Timestamp(unit, _) => timestamp_value(value, *unit, &Zone::UTC, false).is_some(),
        _ => true,
    }
}

fn map_value_type(entries: &FieldRef) -> &DataType {
    match entries.data_type() {
        DataType::Struct(fields) => fields[1].data_type(),
        other => other,
    }
}

/// An integer within the type's range; Spark reads no other value (a string, a fraction,
/// `true`) as one.
fn integer(value: &Json, target: &DataType) -> Option<i64> {
    let Json::Integer(i) = value else { return None };
    let (min, max) = match target {
        DataType::Int8 => (i8::MIN.into(), i8::MAX.into()),
        DataType::Int16 => (i16::MIN.into(), i16::MAX.into()),
        DataType::Int32 => (i32::MIN.into(), i32::MAX.into()),
        _ => (i64::MIN, i64::MAX),
    };
    i64::try_from(*i).ok().filter(|i| (min..=max).contains(i))
}

/// A number, or the strings Jackson reads as the numbers JSON lacks.
fn number(value: &Json) -> Option<f64> {
    match value {
        Json::Integer(i) => Some(*i as f64),
        Json::Double(x) => Some(*x),
        Json::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" | "+Infinity" | "+INF" | "INF" => Some(f64::INFINITY),
            "-Infinity" | "-INF" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// A number as a decimal of the precision and scale, rounded half up; NULL when it does not
/// fit.
fn decimal(value: &Json, precision: u8, scale: i8) -> Option<i128> {
    let text = match value {
        Json::Integer(i) => i.to_string(),
        Json::Double(x) if x.is_finite() => x.to_string(),
        Json::Number(digits) => digits.clone(),
        _ => return None,
    };
    // Spark rounds half up to the scale (1.999 is 2.00); arrow's parser cuts the digits
    // beyond the scale, so one more digit is read and rounded here.
    let parsed = if scale < 38 {
        let longer = parse_decimal::<Decimal128Type>(&text, 38, scale + 1).ok()?;
        let (quotient, last) = (longer / 10, longer % 10);
        quotient + if last.abs() >= 5 { last.signum() } else { 0 }
    } else {
        parse_decimal::<Decimal128Type>(&text, precision, scale).ok()?
    };
    Decimal128Type::is_valid_decimal_precision(parsed, precision).then_some(parsed)
}

fn date(value: &Json) -> Option<i32> {
    let Json::String(s) = value else { return None };
    Date32Type::parse(s.trim())
}

/// A timestamp, as the session's wall-clock time (its moment, UTC's, for a target that holds
/// moments): text as Spark's cast reads it (`2024-01-02 03:04:05`,
/// `2024-01-02T03:04:05.000Z`, a zone converted to the session's), or a number of seconds
/// since 1970.
fn timestamp_value(value: &Json, unit: TimeUnit, session: &Zone, moment: bool) -> Option<i64> {
    let wall_clock = match value {
        Json::String(s) => {
            crate::spark_casts::datetime_strings::parse_timestamp(s.as_bytes(), session)?
        }
        Json::Integer(i) => {
            let moment = chrono::DateTime::from_timestamp(i64::try_from(*i).ok()?, 0)?;
            session.to_local(moment.naive_utc())?
        }
        _ => return None,
    };
    let utc = if moment {
        session.to_utc(wall_clock)?.and_utc()
    } else {
        wall_clock.and_utc()
    };
    match unit {
        TimeUnit::Second => Some(utc.timestamp()),
        TimeUnit::Millisecond => Some(utc.timestamp_millis()),
        TimeUnit::Microsecond => Some(utc.timestamp_micros()),
        TimeUnit::Nanosecond => utc.timestamp_nanos_opt(),
    }
}

/// The column of a target type from one document (or none) per row: a value of another
/// type is NULL, as Spark's PERMISSIVE mode reads it.
fn build(values: &[Option<&Json>], target: &DataType, session: &Zone) -> Result<ArrayRef> {
    fn present<'a>(v: &Option<&'a Json>) -> Option<&'a Json> {
        v.filter(|v| **v != Json::Null)
    }
    Ok(match target {
        DataType::Null => datafusion::arrow::array::new_null_array(target, values.len()),
        DataType::Boolean => Arc::new(
            values
                .iter()
                .map(|v| match present(v) {
                    Some(Json::Bool(b)) => Some(*b),
                    _ => None,
                })
                .collect::<BooleanArray>(),
        ),
        DataType::Int8 => Arc::new(Int8Array::from_iter(
            ints(values, target).map(|i| i.map(|i| i as i8)),
        )),
        DataType::Int16 => Arc::new(Int16Array::from_iter(
            ints(values, target).map(|i| i.map(|i| i as i16)),
        )),
        DataType::Int32 => Arc::new(Int32Array::from_iter(
            ints(values, target).map(|i| i.map(|i| i as i32)),
        )),
        DataType::Int64 => Arc::new(Int64Array::from_iter(ints(values, target))),
        DataType::Float32 => Arc::new(Float32Array::from_iter(
            values
                .iter()
                .map(|v| present(v).and_then(number).map(|x| x as f32)),
        )),
        DataType::Float64 => Arc::new(Float64Array::from_iter(
            values.iter().map(|v| present(v).and_then(number)),
        )),
        DataType::Decimal128(p, s) => Arc::new(
            Decimal128Array::from_iter(
                values
                    .iter()
                    .map(|v| present(v).and_then(|v| decimal(v, *p, *s))),
            )
            .with_precision_and_scale(*p, *s)?,
        ),
        DataType::Utf8 => Arc::new(StringArray::from_iter(values.iter().map(|v| {
            present(v).map(|v| match v {
                Json::String(s) => s.clone(),
                // Spark gives any other value's JSON text.
                other => {
                    let mut text = String::new();
                    other.write(&mut text);
                    text
                }
            })
        }))),
        DataType::Date32 => Arc::new(PrimitiveArray::<Date32Type>::from_iter(
            values.iter().map(|v| present(v).and_then(date)),
        )),
        DataType::Timestamp(unit, zone) => {
            let stamps = values.iter().map(|v| {
                present(v).and_then(|v| timestamp_value(v, *unit, session, zone.is_some()))
            });
            match unit {
                TimeUnit::Second => Arc::new(
                    PrimitiveArray::<TimestampSecondType>::from_iter(stamps)
                        .with_timezone_opt(zone.clone()),
                ),
                TimeUnit::Millisecond => Arc::new(
                    PrimitiveArray::<TimestampMillisecondType>::from_iter(stamps)
                        .with_timezone_opt(zone.clone()),
                ),
                TimeUnit::Microsecond => Arc::new(
                    PrimitiveArray::<TimestampMicrosecondType>::from_iter(stamps)
                        .with_timezone_opt(zone.clone()),
                ),
                TimeUnit::Nanosecond => Arc::new(
                    PrimitiveArray::<TimestampNanosecondType>::from_iter(stamps)
                        .with_timezone_opt(zone.clone()),
                ),
            }
        }
        DataType::List(field) => {
            let mut lengths = Vec::with_capacity(values.len());
            let mut valid = Vec::with_capacity(values.len());
            let mut children = Vec::new();
            for value in values {
                // An array holding a value of another type is NULL as a whole, as Spark
                // reads it.
                match present(value).filter(|v| conforms(v, target)) {
                    Some(Json::Array(items)) => {
                        lengths.push(items.len());
                        valid.push(true);
                        children.extend(items.iter().map(Some));
                    }
                    _ => {
                        lengths.push(0);
                        valid.push(false);
                    }
                }
            }
            Arc::new(ListArray::try_new(
                Arc::clone(field),
                OffsetBuffer::from_lengths(lengths),
                build(&children, field.data_type(), session)?,
                Some(NullBuffer::from(valid)),
            )?)
        }
        DataType::Struct(fields) => {
            let objects: Vec<Option<&[(String, Json)]>> = values
                .iter()
                .map(|v| match present(v) {
                    Some(Json::Object(members)) => Some(members.as_slice()),
                    _ => None,
                })
                .collect();
            let columns = fields
                .iter()
                .map(|field| {
                    // Field names match exactly, as Spark's (case-sensitive) JSON reader
                    // matches them.
                    let column: Vec<Option<&Json>> = objects
                        .iter()
                        .map(|o| o.and_then(|members| Json::member(members, field.name())))
                        .collect();
                    build(&column, field.data_type(), session)
                })
                .collect::<Result<Vec<_>>>()?;
            let valid: NullBuffer = objects.iter().map(Option::is_some).collect();
            Arc::new(StructArray::try_new(fields.clone(), columns, Some(valid))?)
        }
        DataType::Map(entries, sorted) => {
            let DataType::Struct(entry_fields) = entries.data_type() else {
                return Err(DataFusionError::Internal(
                    "a map's entries are a struct".into(),
                ));
            };
            let mut lengths = Vec::with_capacity(values.len());
            let mut valid = Vec::with_capacity(values.len());
            let mut keys = Vec::new();
            let mut children = Vec::new();
            for value in values {
                // So is a map holding one.
                match present(value).filter(|v| conforms(v, target)) {
                    Some(Json::Object(members)) => {
                        lengths.push(members.len());
                        valid.push(true);
                        for (key, value) in members {
                            keys.push(key.as_str());
                            children.push(Some(value));
                        }
                    }
                    _ => {
                        lengths.push(0);
                        valid.push(false);
                    }
                }
            }
            let keys: ArrayRef = Arc::new(StringArray::from_iter_values(keys));
            let values = build(&children, entry_fields[1].data_type(), session)?;
            let entries_array =
                StructArray::try_new(entry_fields.clone(), vec![keys, values], None)?;
            Arc::new(MapArray::try_new(
                Arc::clone(entries),
                OffsetBuffer::from_lengths(lengths),
                entries_array,
                Some(NullBuffer::from(valid)),
                *sorted,
            )?)
        }
        other => {
            return Err(DataFusionError::Internal(format!(
                "from_json cannot read a {other}"
            )))
        }
    })
}

fn ints<'a>(
    values: &'a [Option<&'a Json>],
    target: &'a DataType,
) -> impl Iterator<Item = Option<i64>> + 'a {
    values
        .iter()
        .map(move |v| v.and_then(|v| integer(v, target)))
}

/// The type of a Spark DDL schema: `struct<...>`, `array<...>`, `map<string, ...>`, or a
/// column list `a INT, b STRING` (a struct). Read with sqlparser's Spark dialect, the parser
/// the engine's SQL goes through; its types are mapped here because DataFusion's own
/// mapping is private to its planner and has no `MAP`. `function` names the caller in an
/// error.
pub(super) fn schema_type(function: &str, schema: &str) -> Result<DataType> {
    let bad = |why: String| {
        DataFusionError::Plan(format!(
            "{function} cannot read the schema '{schema}': {why}"
        ))
    };
    let dialect = SparkSqlDialect {};
    // A whole type first; else a column list.
    if let Ok(mut parser) = Parser::new(&dialect).try_with_sql(schema) {
        if let Ok(whole) = parser.parse_data_type() {
            if parser.peek_token().token == Token::EOF
                && matches!(
                    whole,
                    SqlType::Struct(..) | SqlType::Array(_) | SqlType::Map(..)
                )
            {
                return arrow_type(&whole).map_err(bad);
            }
        }
    }
    let mut parser = Parser::new(&dialect)
        .try_with_sql(schema)
        .map_err(|e| bad(e.to_string()))?;
    let mut fields = Vec::new();
    loop {
        let name: Ident = parser.parse_identifier().map_err(|e| bad(e.to_string()))?;
        let _ = parser.consume_token(&Token::Colon);
        let sql_type = parser.parse_data_type().map_err(|e| bad(e.to_string()))?;
        fields.push(Field::new(
            name.value,
            arrow_type(&sql_type).map_err(bad)?,
            true,
        ));
        if !parser.consume_token(&Token::Comma) {
            break;
        }
    }
    if parser.peek_token().token != Token::EOF {
        return Err(bad(format!("unexpected {}", parser.peek_token().token)));
    }
    Ok(DataType::Struct(Fields::from(fields)))
}

/// The Arrow type of a Spark type, as the engine types the same SQL type elsewhere (`INT`
/// an Int32, `STRING` a Utf8, `TIMESTAMP` nanoseconds without a zone).
pub(crate) fn arrow_type(sql: &SqlType) -> std::result::Result<DataType, String> {
    Ok(match sql {
        SqlType::Boolean | SqlType::Bool => DataType::Boolean,
        SqlType::TinyInt(_) => DataType::Int8,
        SqlType::SmallInt(_) => DataType::Int16,
        SqlType::Int(_) | SqlType::Integer(_) => DataType::Int32,
        SqlType::BigInt(_) => DataType::Int64,
        SqlType::Float(_) | SqlType::Real => DataType::Float32,
        SqlType::Double(_) | SqlType::DoublePrecision => DataType::Float64,
        SqlType::Decimal(info) | SqlType::Numeric(info) | SqlType::Dec(info) => {
            // Spark's DECIMAL is DECIMAL(10, 0).
            let (p, s) = match info {
                ExactNumberInfo::None => (10, 0),
                ExactNumberInfo::Precision(p) => (*p, 0),
                ExactNumberInfo::PrecisionAndScale(p, s) => (*p, *s),
            };
            let (p, s) = (u8::try_from(p).ok(), i8::try_from(s).ok());
            match (p, s) {
                (Some(p @ 1..=38), Some(s)) if s >= 0 && s as u8 <= p => DataType::Decimal128(p, s),
                _ => return Err(format!("{sql} is no DECIMAL Spark has")),
            }
        }
        SqlType::String(_) | SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Text => {
            DataType::Utf8
        }
        SqlType::Date => DataType::Date32,
        SqlType::Timestamp(_, _) | SqlType::TimestampNtz(..) => {
            DataType::Timestamp(TimeUnit::Nanosecond, None)
        }
        SqlType::Custom(name, _) => match name.to_string().to_ascii_lowercase().as_str() {
            "byte" => DataType::Int8,
            "short" => DataType::Int16,
            "long" => DataType::Int64,
            _ => return Err(format!("no type {name}")),
        },
        SqlType::Array(ArrayElemTypeDef::AngleBracket(item)) => {
            DataType::List(Arc::new(Field::new_list_field(arrow_type(item)?, true)))
        }
        SqlType::Struct(fields, _) => {
            let fields = fields
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let name = f
                        .field_name
                        .as_ref()
                        .map_or_else(|| format!("col{}", i + 1), |n| n.value.clone());
                    Ok(Field::new(name, arrow_type(&f.field_type)?, true))
                })
                .collect::<std::result::Result<Vec<_>, String>>()?;
            DataType::Struct(Fields::from(fields))
        }
        SqlType::Map(key, value) => {
            // Spark's JSON reader takes only string keys: an object's keys are text.
            if arrow_type(key)? != DataType::Utf8 {
                return Err(format!("a map read from JSON has STRING keys, not {key}"));
            }
            let entries = Field::new(
                "entries",
                DataType::Struct(Fields::from(vec![
                    Field::new("key", DataType::Utf8, false),
                    Field::new("value", arrow_type(value)?, true),
                ])),
                false,
            );
            DataType::Map(Arc::new(entries), false)
        }
        other => return Err(format!("{other} is not a type the engine reads here")),
    })
}

#[cfg(test)]
mod tests;
