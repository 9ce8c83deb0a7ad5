//! `CAST(x AS STRING)` written as Spark writes it, where DataFusion's text differs or it
//! cannot cast: an array, a map or a struct as `[1, 2]`, `{a -> 1, b -> 2}`, `{1, x}` (a
//! struct's values only), nested alike, a NULL inside as `null`; a double or a float as Java
//! writes it (`1.0E20`, `100.0`), a decimal as Java's `BigDecimal` (`0E-10`), a timestamp as
//! `2024-01-02 03:04:05.1`. The casts type coercion adds (`concat('a', 1.5D)`) are written so
//! too, as Spark's implicit casts are.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Float32Type, Float64Type, TimeUnit};
use datafusion::arrow::temporal_conversions::{
    timestamp_ms_to_datetime, timestamp_ns_to_datetime, timestamp_s_to_datetime,
    timestamp_us_to_datetime,
};
use datafusion::arrow::util::display::array_value_to_string;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    cast, ColumnarValue, Expr, ExprSchemable, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use crate::hive_functions::printf::java_double;

/// Replaces a cast to a string of a value DataFusion writes otherwise than Spark by
/// [`SparkText`]. An analyzer rule, run after type coercion, since only then is the value's
/// type known everywhere, and the casts coercion adds are there.
pub const SPARK_TEXT_CASTS: crate::hive_syntax::ExpressionRewrite =
    crate::hive_syntax::ExpressionRewrite::new("spark_text_casts", spark_text_cast);

fn spark_text_cast(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Some((value, target)) = super::cast_parts(&expr) else {
        return Ok(Transformed::no(expr));
    };
    if !matches!(
        target,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    ) {
        return Ok(Transformed::no(expr));
    }
    let Ok(source) = value.get_type(schema) else {
        return Ok(Transformed::no(expr));
    };
    if !written_otherwise(&source) {
        return Ok(Transformed::no(expr));
    }
    // A moment (a timestamp with a zone) is written as the session's wall-clock time.
    let value = match source {
        DataType::Timestamp(_, Some(_)) => {
            crate::time_zones::utc_to_session(value.as_ref().clone())
        }
        _ => value.as_ref().clone(),
    };
    let text = Expr::ScalarFunction(ScalarFunction::new_udf(
        Arc::new(ScalarUDF::new_from_impl(SparkText::new())),
        vec![value],
    ));
    Ok(Transformed::yes(if *target == DataType::Utf8 {
        text
    } else {
        cast(text, target.clone())
    }))
}

/// Whether DataFusion writes a value of the type otherwise than Spark (integers, strings,
/// booleans and dates it writes alike).
fn written_otherwise(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(..)
            | DataType::Map(..)
            | DataType::Struct(_)
            | DataType::Float32
            | DataType::Float64
            | DataType::Decimal128(..)
            | DataType::Timestamp(..)
    )
}

/// A value as Spark's `CAST(x AS STRING)` writes it (`Cast`'s `ToStringBase`); NULL for
/// NULL.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct SparkText {
    signature: Signature,
}

impl SparkText {
    pub fn new() -> Self {
        Self {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl Default for SparkText {
    fn default() -> Self {
        Self::new()
    }
}

impl ScalarUDFImpl for SparkText {
    fn name(&self) -> &str {
        "spark_text"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let values = args.args[0].to_array(args.number_rows)?;
        let mut out = StringBuilder::new();
        let mut text = String::new();
        for row in 0..values.len() {
            if is_null(values.as_ref(), row) {
                out.append_null();
            } else {
                text.clear();
                write_value(values.as_ref(), row, &mut text)?;
                out.append_value(&text);
            }
        }
        let result: ArrayRef = Arc::new(out.finish());
        crate::hive_functions::columnar(result, &args.args)
    }
}

/// Writes `array`'s value at `row` as Spark casts it to a string, `null` for NULL.
pub(crate) fn write_value(array: &dyn Array, row: usize, out: &mut String) -> Result<()> {
    if is_null(array, row) {
        out.push_str("null");
        return Ok(());
    }
    match array.data_type() {
        DataType::List(_) => write_elements(array.as_list::<i32>().value(row).as_ref(), out)?,
        DataType::LargeList(_) => write_elements(array.as_list::<i64>().value(row).as_ref(), out)?,
        DataType::FixedSizeList(..) => {
            write_elements(array.as_fixed_size_list().value(row).as_ref(), out)?
        }
        DataType::Map(..) => {
            let entries = array.as_map().value(row);
            out.push('{');
            for entry in 0..entries.len() {
                if entry > 0 {
                    out.push_str(", ");
                }
                write_value(entries.column(0).as_ref(), entry, out)?;
                out.push_str(" -> ");
                write_value(entries.column(1).as_ref(), entry, out)?;
            }
            out.push('}');
        }
        DataType::Struct(_) => {
            out.push('{');
            for (i, field) in array.as_struct().columns().iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(field.as_ref(), row, out)?;
            }
            out.push('}');
        }
        DataType::Float64 => {
            out.push_str(&java_double(array.as_primitive::<Float64Type>().value(row)))
        }
        // Java's Float.toString gives a float's own shortest digits, which read as a double
        // print the same through Double.toString.
        DataType::Float32 => {
            let x = array.as_primitive::<Float32Type>().value(row);
            out.push_str(&java_double(format!("{x}").parse().unwrap_or(f64::from(x))))
        }
        DataType::Decimal128(_, scale) => out.push_str(&java_big_decimal(
            array
                .as_primitive::<datafusion::arrow::datatypes::Decimal128Type>()
                .value(row),
            *scale,
        )),
        DataType::Timestamp(unit, zone) => {
            out.push_str(&spark_timestamp(array, row, unit, zone.as_deref())?)
        }
        DataType::Binary => out.push_str(&String::from_utf8_lossy(
            array.as_binary::<i32>().value(row),
        )),
        DataType::LargeBinary => out.push_str(&String::from_utf8_lossy(
            array.as_binary::<i64>().value(row),
        )),
        DataType::BinaryView => {
            out.push_str(&String::from_utf8_lossy(array.as_binary_view().value(row)))
        }
        // Integers, booleans, strings (unquoted) and dates are written alike.
        _ => out.push_str(&array_value_to_string(array, row)?),
    }
    Ok(())
}

/// Whether the value is NULL, a value of the NULL type (`map('a', NULL)`'s) too.
fn is_null(array: &dyn Array, row: usize) -> bool {
    array
        .logical_nulls()
        .is_some_and(|nulls| nulls.is_null(row))
}

fn write_elements(elements: &dyn Array, out: &mut String) -> Result<()> {
    out.push('[');
    for i in 0..elements.len() {
        if i > 0 {
            out.push_str(", ");
        }
        write_value(elements, i, out)?;
    }
    out.push(']');
    Ok(())
}

/// Java's `BigDecimal.toString`, which Spark writes a decimal with: all the scale's digits
/// (`1.500`), in scientific notation when the exponent is below -6 (`0E-10`, `1.00E-8`).
fn java_big_decimal(unscaled: i128, scale: i8) -> String {
    let sign = if unscaled < 0 { "-" } else { "" };
    let digits = unscaled.unsigned_abs().to_string();
    let scale = i64::from(scale);
    let adjusted = digits.len() as i64 - 1 - scale;
    if scale >= 0 && adjusted >= -6 {
        let scale = scale as usize;
        if scale == 0 {
            format!("{sign}{digits}")
        } else if digits.len() > scale {
            let (whole, fraction) = digits.split_at(digits.len() - scale);
            format!("{sign}{whole}.{fraction}")
        } else {
            format!("{sign}0.{}{digits}", "0".repeat(scale - digits.len()))
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        let plus = if adjusted > 0 { "+" } else { "" };
        format!("{sign}{first}{point}{rest}E{plus}{adjusted}")
    }
}

/// `yyyy-MM-dd HH:mm:ss` and the fraction of a second without its trailing zeros, as Spark
/// writes a timestamp; one with a time zone in that zone's local time.
fn spark_timestamp(
    array: &dyn Array,
    row: usize,
    unit: &TimeUnit,
    zone: Option<&str>,
) -> Result<String> {
    use chrono::TimeZone;
    use datafusion::arrow::array::timezone::Tz;
    use datafusion::arrow::datatypes::{
        TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
        TimestampSecondType,
    };
    let time = match unit {
        TimeUnit::Second => {
            timestamp_s_to_datetime(array.as_primitive::<TimestampSecondType>().value(row))
        }
        TimeUnit::Millisecond => {
            timestamp_ms_to_datetime(array.as_primitive::<TimestampMillisecondType>().value(row))
        }
        TimeUnit::Microsecond => {
            timestamp_us_to_datetime(array.as_primitive::<TimestampMicrosecondType>().value(row))
        }
        TimeUnit::Nanosecond => {
            timestamp_ns_to_datetime(array.as_primitive::<TimestampNanosecondType>().value(row))
        }
    };
    let Some(utc) = time else {
        // Beyond chrono's years: as DataFusion writes it.
        return Ok(array_value_to_string(array, row)?);
    };
    let time = match zone {
        None => utc,
        Some(zone) => zone.parse::<Tz>()?.from_utc_datetime(&utc).naive_local(),
    };
    let mut text = time.format("%Y-%m-%d %H:%M:%S").to_string();
    let nanos = chrono::Timelike::nanosecond(&time);
    if nanos > 0 {
        text.push('.');
        text.push_str(format!("{nanos:09}").trim_end_matches('0'));
    }
    Ok(text)
}
