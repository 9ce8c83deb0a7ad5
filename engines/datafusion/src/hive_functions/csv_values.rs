//! Spark's CSV functions: `to_csv(struct)`, a struct written as one CSV line;
//! `from_csv(line, 'a INT, b DATE')`, a line read into the struct a DDL schema names; and
//! `schema_of_csv(line)`, the struct Spark's CSV reader infers for a sample line. Each with
//! Spark's defaults (its univocity settings): fields split by `,`, quoted in `"` with `\`
//! escaping, an empty field NULL.
//!
//! `to_csv` writes what Spark's CSV writer does: every value trimmed of leading and trailing
//! spaces, quoted when it holds the separator, a quote or a line break (an empty string as
//! `""`), a NULL as nothing; dates `yyyy-MM-dd`, timestamps `yyyy-MM-dd'T'HH:mm:ss.SSSXXX`
//! in the session's zone, arrays, maps and structs as their text (`[1, 2]`).

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Date32Array, Float32Array, Float64Array, Int16Array,
    Int32Array, Int64Array, Int8Array, StringArray, StructArray, TimestampNanosecondArray,
};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::compute::kernels::cast_utils::parse_decimal;
use datafusion::arrow::datatypes::{
    DataType, Decimal128Type, DecimalType, Field, FieldRef, TimeUnit,
};
use datafusion::common::{Result, ScalarValue};
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};
use datafusion::sql::sqlparser::ast::{Expr as SqlExpr, Value, ValueWithSpan};

use super::json::Json;
use super::json_values::{json_of, schema_type};
use super::{bad_arguments, is_string, HiveFunction};
use crate::spark_casts::datetime_strings::{parse_date, parse_timestamp};
use crate::spark_casts::string_to_double::parse_double;
use crate::time_zones::Zone;

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::computed_in_zone("to_csv", to_csv_types, |_| Ok(DataType::Utf8), to_csv)
            .udf(),
        ScalarUDF::new_from_impl(FromCsv::new()),
        HiveFunction::computed(
            "schema_of_csv",
            |name, types| match types {
                [t] if is_string(t) || t.is_null() => Ok(vec![DataType::Utf8]),
                [t, DataType::Map(..)] if is_string(t) => {
                    Ok(vec![DataType::Utf8, types[1].clone()])
                }
                _ => Err(bad_arguments(name, "a CSV line[, options map]", types)),
            },
            |_| Ok(DataType::Utf8),
            |args| {
                let options = Options::of("schema_of_csv", args.get(1))?;
                let lines = super::encoding::strings_of(&args[0]);
                Ok(super::encoding::string_result(lines.into_iter().map(
                    |line| line.map(|line| schema_of_csv(line, &options)),
                )))
            },
        )
        .udf(),
    ]
}

/// The options the functions take (Spark's names, any case); another is refused rather
/// than ignored, since it would change the text.
struct Options {
    separator: char,
    quote_all: bool,
    null_value: String,
}

impl Options {
    fn of(function: &str, map: Option<&ArrayRef>) -> Result<Options> {
        let mut options = Options {
            separator: ',',
            quote_all: false,
            null_value: String::new(),
        };
        let Some(map) = map else {
            return Ok(options);
        };
        if map.is_empty() || map.is_null(0) {
            return Ok(options);
        }
        let entries = map.as_map().value(0);
        let keys = entries.column(0).as_string::<i32>();
        let values = datafusion::arrow::compute::cast(entries.column(1), &DataType::Utf8)?;
        let values = values.as_string::<i32>();
        for i in 0..entries.len() {
            let (key, value) = (keys.value(i), values.value(i));
            match key.to_ascii_lowercase().as_str() {
                "sep" | "delimiter" => {
                    let mut chars = value.chars();
                    options.separator = match (chars.next(), chars.next()) {
                        (Some(c), None) => c,
                        _ => {
                            return Err(DataFusionError::Execution(format!(
                                "{function}: the separator is one character, not '{value}'"
                            )))
                        }
                    };
                }
                "quoteall" => options.quote_all = value.eq_ignore_ascii_case("true"),
                "nullvalue" => options.null_value = value.to_owned(),
                _ => {
                    return Err(DataFusionError::Execution(format!(
                        "{function}: the option '{key}' is not supported; the options are \
                         sep (delimiter), quoteAll and nullValue"
                    )))
                }
            }
        }
        Ok(options)
    }
}

fn to_csv_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t @ DataType::Struct(_)] => Ok(vec![t.clone()]),
        [t @ DataType::Struct(_), options @ DataType::Map(..)] => {
            Ok(vec![t.clone(), options.clone()])
        }
        _ => Err(bad_arguments(name, "a struct[, options map]", types)),
    }
}

/// `to_csv(struct[, options])`: each row's struct as one CSV line; NULL for a NULL struct.
fn to_csv(args: &[ArrayRef], zone: &Zone) -> Result<ArrayRef> {
    let options = Options::of("to_csv", args.get(1))?;
    let rows = args[0].as_struct();
    let mut lines = Vec::with_capacity(rows.len());
    for row in 0..rows.len() {
        if rows.is_null(row) {
            lines.push(None);
            continue;
        }
        let mut line = String::new();
        for (i, column) in rows.columns().iter().enumerate() {
            if i > 0 {
                line.push(options.separator);
            }
            match field_text(column.as_ref(), row, zone)? {
                Some(text) => write_field(&text, &options, &mut line),
                None => line.push_str(&options.null_value),
            }
        }
        lines.push(Some(line));
    }
    Ok(super::encoding::string_result(lines.into_iter()))
}

/// A field's value as Spark's CSV writer puts it in text, before quoting.
fn field_text(column: &dyn Array, row: usize, zone: &Zone) -> Result<Option<String>> {
    // A NULL struct field (`named_struct('c', NULL)`) is of the NULL type, whose values
    // have no null buffer.
    if column
        .logical_nulls()
        .is_some_and(|nulls| nulls.is_null(row))
    {
        return Ok(None);
    }
    Ok(Some(match column.data_type() {
        DataType::Date32 | DataType::Timestamp(..) => match json_of(column, row, zone) {
            Json::String(text) => text,
            _ => unreachable!("a date or a timestamp is written as a JSON string"),
        },
        DataType::Binary => {
            let bytes = column.as_binary::<i32>().value(row);
            let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02X}")).collect();
            format!("[{}]", hex.join(" "))
        }
        _ => {
            let mut text = String::new();
            crate::spark_casts::spark_text::write_value(column, row, &mut text)?;
            text
        }
    }))
}

/// One field's text as Spark's writer puts it in the line: trimmed, and quoted (`"` and `\`
/// escaped by `\`) when it must be.
fn write_field(text: &str, options: &Options, line: &mut String) {
    let text = text.trim_matches(|c: char| c <= ' ');
    let must_quote =
        options.quote_all || text.is_empty() || text.contains([options.separator, '"', '\n', '\r']);
    if !must_quote {
        line.push_str(text);
        return;
    }
    line.push('"');
    for c in text.chars() {
        if matches!(c, '"' | '\\') {
            line.push('\\');
        }
        line.push(c);
    }
    line.push('"');
}

/// A line's fields as Spark's CSV parser reads them: `None` for an empty one. A quoted
/// field ends at its closing quote (`\"` a quote inside); one whose closing quote is not
/// followed by the separator is read as written, quotes and all, as Spark reads it.
fn fields_of(line: &str, separator: char) -> Vec<Option<String>> {
    let mut fields = Vec::new();
    let mut rest = line;
    loop {
        let (field, after) = next_field(rest, separator);
        fields.push((!field.is_empty()).then_some(field));
        match after {
            Some(after) => rest = after,
            None => return fields,
        }
    }
}

/// The first field of `text` and what follows its separator (`None` at the line's end).
fn next_field(text: &str, separator: char) -> (String, Option<&str>) {
    let raw = || match text.find(separator) {
        Some(at) => (
            text[..at].to_owned(),
            Some(&text[at + separator.len_utf8()..]),
        ),
        None => (text.to_owned(), None),
    };
    let Some(quoted) = text.strip_prefix('"') else {
        return raw();
    };
    let mut value = String::new();
    let mut chars = quoted.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, escaped)) => value.push(escaped),
                None => value.push('\\'),
            },
            '"' => {
                let after = &quoted[at + 1..];
                return match after.chars().next() {
                    None => (value, None),
                    Some(c) if c == separator => (value, Some(&after[c.len_utf8()..])),
                    Some(_) => raw(),
                };
            }
            c => value.push(c),
        }
    }
    // No closing quote: the rest of the line.
    (value, None)
}

/// `from_csv(line, 'schema'[, options])`: the line read into the struct of the schema's
/// fields, by position. A value its field's type cannot read is NULL, the other fields kept
/// (Spark's PERMISSIVE reading); missing fields are NULL, extra ones ignored. The schema
/// must be a literal: the result's type is read from it when the query is planned.
#[derive(Debug, PartialEq, Eq, Hash)]
struct FromCsv {
    signature: Signature,
}

impl FromCsv {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

const FROM_CSV_TAKES: &str =
    "(CSV line, schema as a string literal such as 'a INT, b STRING'[, options map])";

impl ScalarUDFImpl for FromCsv {
    fn name(&self) -> &str {
        "from_csv"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let string = |t: &DataType| is_string(t) || t.is_null();
        match types {
            // The schema keeps its own type, so that it stays a literal for
            // `return_field_from_args` (a cast would hide it).
            [line, schema] if string(line) && is_string(schema) => {
                Ok(vec![DataType::Utf8, schema.clone()])
            }
            [line, schema, options @ DataType::Map(..)] if string(line) && is_string(schema) => {
                Ok(vec![DataType::Utf8, schema.clone(), options.clone()])
            }
            _ => Err(bad_arguments(self.name(), FROM_CSV_TAKES, types)),
        }
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Err(DataFusionError::Internal(
            "from_csv's type is read from its schema argument".to_owned(),
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
                    "from_csv takes its schema as a string literal (such as 'a INT, b \
                     STRING'): the result's type is read from it when the query is planned"
                        .to_owned(),
                ))
            }
        };
        let schema = schema_type(self.name(), schema)?;
        let DataType::Struct(fields) = &schema else {
            return Err(DataFusionError::Plan(format!(
                "from_csv reads a line into a struct's fields ('a INT, b STRING'), not a {schema}"
            )));
        };
        if let Some(field) = fields.iter().find(|f| !is_csv_value(f.data_type())) {
            return Err(DataFusionError::Plan(format!(
                "from_csv cannot read the field {} of type {}: a CSV field is a number, a \
                 string, a boolean, a date or a timestamp",
                field.name(),
                field.data_type()
            )));
        }
        Ok(Arc::new(Field::new(self.name(), schema, true)))
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation("from_csv")
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let DataType::Struct(fields) = args.return_field.data_type().clone() else {
            unreachable!("from_csv's type is a struct")
        };
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let options = Options::of(self.name(), arrays.get(2))?;
        let lines = arrays[0].as_string::<i32>();
        let split: Vec<Option<Vec<Option<String>>>> = (0..rows)
            .map(|i| (!lines.is_null(i)).then(|| fields_of(lines.value(i), options.separator)))
            .collect();
        let zone = Zone::of_session(&args.config_options);
        let columns = fields
            .iter()
            .enumerate()
            .map(|(at, field)| {
                let texts = split.iter().map(|row| {
                    row.as_ref()
                        .and_then(|values| values.get(at).cloned().flatten())
                        .filter(|text| *text != options.null_value)
                });
                read_column(texts, field.data_type(), &zone)
            })
            .collect::<Result<Vec<_>>>()?;
        let nulls = NullBuffer::from_iter(split.iter().map(Option::is_some));
        let structs = StructArray::try_new(fields, columns, Some(nulls))?;
        super::columnar(Arc::new(structs), &args.args)
    }
}

/// Whether a CSV field can be read as the type.
fn is_csv_value(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Utf8
            | DataType::Boolean
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Float32
            | DataType::Float64
            | DataType::Decimal128(..)
            | DataType::Date32
            | DataType::Timestamp(TimeUnit::Nanosecond, None)
    )
}

/// One field of every row, read as its type as Spark's CSV parser reads it: integers as
/// Java's `Integer.parseInt` (no spaces), numbers as `Double.parseDouble`, booleans `true` or
/// `false` in any case, dates and timestamps as Spark's cast reads them.
fn read_column(
    texts: impl Iterator<Item = Option<String>>,
    data_type: &DataType,
    zone: &Zone,
) -> Result<ArrayRef> {
    let texts: Vec<Option<String>> = texts.collect();
    let each = texts.iter().map(Option::as_deref);
    Ok(match data_type {
        DataType::Utf8 => Arc::new(each.collect::<StringArray>()),
        DataType::Boolean => Arc::new(
            each.map(|t| {
                t.and_then(|t| match t.to_ascii_lowercase().as_str() {
                    "true" => Some(true),
                    "false" => Some(false),
                    _ => None,
                })
            })
            .collect::<BooleanArray>(),
        ),
        DataType::Int8 => Arc::new(each.map(|t| t?.parse().ok()).collect::<Int8Array>()),
        DataType::Int16 => Arc::new(each.map(|t| t?.parse().ok()).collect::<Int16Array>()),
        DataType::Int32 => Arc::new(each.map(|t| t?.parse().ok()).collect::<Int32Array>()),
        DataType::Int64 => Arc::new(each.map(|t| t?.parse().ok()).collect::<Int64Array>()),
        DataType::Float64 => Arc::new(each.map(|t| parse_double(t?)).collect::<Float64Array>()),
        DataType::Float32 => Arc::new(
            each.map(|t| parse_double(t?).map(|x| x as f32))
                .collect::<Float32Array>(),
        ),
        DataType::Decimal128(precision, scale) => {
            let values = each.map(|t| decimal(t?, *precision, *scale));
            Arc::new(
                values
                    .collect::<datafusion::arrow::array::Decimal128Array>()
                    .with_precision_and_scale(*precision, *scale)?,
            )
        }
        DataType::Date32 => Arc::new(
            each.map(|t| Some(days_since_epoch(parse_date(t?.as_bytes())?)))
                .collect::<Date32Array>(),
        ),
        DataType::Timestamp(TimeUnit::Nanosecond, None) => Arc::new(
            each.map(|t| {
                parse_timestamp(t?.as_bytes(), zone)?
                    .and_utc()
                    .timestamp_nanos_opt()
            })
            .collect::<TimestampNanosecondArray>(),
        ),
        other => {
            return Err(DataFusionError::Internal(format!(
                "from_csv of a {other} field"
            )))
        }
    })
}

fn days_since_epoch(date: chrono::NaiveDate) -> i32 {
    (date - chrono::NaiveDate::from_ymd_opt(1970, 1, 1).expect("a date")).num_days() as i32
}

/// Text as a decimal of the precision and scale, rounded half up as Java's `BigDecimal`
/// is; NULL when it is no number or does not fit.
fn decimal(text: &str, precision: u8, scale: i8) -> Option<i128> {
    // One more digit than the scale is read, and rounded here: arrow's parser cuts them.
    let longer = parse_decimal::<Decimal128Type>(text, 38, scale.checked_add(1)?).ok()?;
    let (quotient, last) = (longer / 10, longer % 10);
    let rounded = quotient + if last.abs() >= 5 { last.signum() } else { 0 };
    Decimal128Type::is_valid_decimal_precision(rounded, precision).then_some(rounded)
}

/// `schema_of_csv('literal')` as written by a user, replaced by the literal it answers, so
/// that `from_csv(line, schema_of_csv('1,abc'))` knows its schema as it is planned.
pub(crate) fn as_literal(expr: &mut SqlExpr) {
    let Some((name, args)) = crate::hive_syntax::plain_call(expr) else {
        return;
    };
    let (
        "schema_of_csv",
        [SqlExpr::Value(ValueWithSpan {
            value: Value::SingleQuotedString(line),
            ..
        })],
    ) = (name.as_str(), &args[..])
    else {
        return;
    };
    let schema = schema_of_csv(line, &Options::of("schema_of_csv", None).expect("defaults"));
    *expr = SqlExpr::value(Value::SingleQuotedString(schema));
}

/// The struct Spark's CSV reader infers for one line: fields `_c0`, `_c1`, ... each of the
/// first type that reads it of `INT`, `BIGINT`, `DECIMAL(p,0)` (an integer beyond a
/// `BIGINT`), `DOUBLE`, `BOOLEAN`, `DATE` (`yyyy-MM-dd`), `TIMESTAMP`, else `STRING`.
fn schema_of_csv(line: &str, options: &Options) -> String {
    let types: Vec<String> = fields_of(line, options.separator)
        .into_iter()
        .enumerate()
        .map(|(i, field)| format!("_c{i}: {}", inferred_type(field.as_deref())))
        .collect();
    format!("STRUCT<{}>", types.join(", "))
}

fn inferred_type(field: Option<&str>) -> String {
    let Some(text) = field else {
        return "STRING".to_owned();
    };
    if text.parse::<i32>().is_ok() {
        return "INT".to_owned();
    }
    if text.parse::<i64>().is_ok() {
        return "BIGINT".to_owned();
    }
    let digits = text.trim_start_matches(['+', '-']);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        let precision = digits.trim_start_matches('0').len().max(1);
        if precision <= 38 {
            return format!("DECIMAL({precision},0)");
        }
    }
    if parse_double(text).is_some() {
        return "DOUBLE".to_owned();
    }
    if text.eq_ignore_ascii_case("true") || text.eq_ignore_ascii_case("false") {
        return "BOOLEAN".to_owned();
    }
    let is_plain_date = text.len() == 10
        && text.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        });
    if is_plain_date && parse_date(text.as_bytes()).is_some() {
        return "DATE".to_owned();
    }
    if parse_timestamp(text.as_bytes(), &Zone::Offset(0)).is_some() {
        return "TIMESTAMP".to_owned();
    }
    "STRING".to_owned()
}

#[cfg(test)]
mod tests;
