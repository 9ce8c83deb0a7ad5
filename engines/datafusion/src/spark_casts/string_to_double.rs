//! `CAST(s AS DOUBLE)` and `CAST(s AS FLOAT)` of a string read as Spark reads it: Java's
//! `Double.parseDouble` of the text between spaces and control characters, so `'1d'` and
//! `'2.5f'` are numbers (Java's type suffixes) and `'-nan'` is NULL, where DataFusion's cast
//! reads Rust's numbers. The same reading serves a string in arithmetic
//! ([`super::string_operands`]).

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Builder};
use datafusion::arrow::compute::cast as cast_array;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    cast, ColumnarValue, Expr, ExprSchemable, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

/// Replaces a cast of a string to a `DOUBLE` or a `FLOAT` by [`SparkDouble`]. An analyzer
/// rule, run after type coercion, since only then is the value's type known everywhere.
pub const SPARK_DOUBLE_CASTS: crate::hive_syntax::ExpressionRewrite =
    crate::hive_syntax::ExpressionRewrite::new("spark_double_casts", spark_double_cast);

fn spark_double_cast(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Some((value, target)) = super::cast_parts(&expr) else {
        return Ok(Transformed::no(expr));
    };
    if !matches!(target, DataType::Float64 | DataType::Float32) {
        return Ok(Transformed::no(expr));
    }
    let Ok(source) = value.get_type(schema) else {
        return Ok(Transformed::no(expr));
    };
    if !matches!(
        source,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    ) {
        return Ok(Transformed::no(expr));
    }
    let double = spark_double(value.as_ref().clone());
    Ok(Transformed::yes(if *target == DataType::Float64 {
        double
    } else {
        cast(double, target.clone())
    }))
}

/// `string` as a `DOUBLE`, as Spark casts a string to one ([`SparkDouble`]).
pub fn spark_double(string: Expr) -> Expr {
    Expr::ScalarFunction(ScalarFunction::new_udf(
        Arc::new(ScalarUDF::new_from_impl(SparkDouble::new())),
        vec![string],
    ))
}

/// A string read as a `DOUBLE` as Spark's cast reads it: Java's `Double.parseDouble` of the
/// text between spaces and control characters (`' 7 '`, `'1e3'`, `'1.5d'`, `'.5'`), or
/// `inf`, `infinity` and `nan` in any case; NULL for anything else.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct SparkDouble {
    signature: Signature,
}

impl SparkDouble {
    pub fn new() -> Self {
        Self {
            signature: Signature::string(1, Volatility::Immutable),
        }
    }
}

impl Default for SparkDouble {
    fn default() -> Self {
        Self::new()
    }
}

impl ScalarUDFImpl for SparkDouble {
    fn name(&self) -> &str {
        "spark_double"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let strings = cast_array(&args.args[0].to_array(args.number_rows)?, &DataType::Utf8)?;
        let mut out = Float64Builder::with_capacity(strings.len());
        for text in strings.as_string::<i32>().iter() {
            out.append_option(text.and_then(parse_double));
        }
        let result: ArrayRef = Arc::new(out.finish());
        crate::hive_functions::columnar(result, &args.args)
    }
}

pub(crate) fn parse_double(text: &str) -> Option<f64> {
    // Spark trims spaces and control characters, as Java's `String.trim`.
    let text = text.trim_matches(|c: char| c <= ' ');
    match text.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => return Some(f64::INFINITY),
        "-inf" | "-infinity" => return Some(f64::NEG_INFINITY),
        "nan" => return Some(f64::NAN),
        _ => {}
    }
    if matches!(text, "+NaN" | "-NaN") {
        return Some(f64::NAN);
    }
    // Java's number, with its optional type suffix (`1d`, `2.5f`); Rust reads the rest alike
    // once words such as `nan` are kept out.
    let number = text.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(text);
    let java_chars = number
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'));
    if !java_chars {
        return None;
    }
    number.parse().ok()
}
