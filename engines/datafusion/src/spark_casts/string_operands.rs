//! A string beside a number in arithmetic or a comparison is read as a number, as Spark
//! (non-ANSI) reads it, where DataFusion refuses arithmetic ("Cannot coerce arithmetic
//! expression Int64 + Utf8") and fails a comparison on a string that is not a number.
//!
//! - `+`, `-`, `*`, `/`, `%`: a string operand is a `DOUBLE` (`1 + '2'` is 3.0, `'3' * '4'`
//!   12.0), NULL when it is not a number (`'abc' + 1`); beside an interval, a date or a
//!   timestamp it is left to DataFusion.
//! - `=`, `<>`, `<`, `<=`, `>`, `>=`, `<=>`: a string is read as the other side's type
//!   (`'10' > 9` compares 10 with 9; `'5.5' = 5` reads `'5.5'` as an `INT`, 5), NULL when it
//!   does not convert; beside a decimal both sides are `DOUBLE`s; beside a boolean `'t'`,
//!   `'yes'`, `'1'` ... are true. Dates and timestamps stay DataFusion's (the string read as
//!   one, as Spark reads it).

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Builder};
use datafusion::arrow::compute::cast as cast_array;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{
    cast, lit, try_cast, when, ColumnarValue, Expr, ExprSchemable, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};
use datafusion::sql::sqlparser::ast::BinaryOperator;

/// Converts the string operands of arithmetic and comparisons, then leaves the operator to
/// the planners after it (Hive's division among them). Placed before every other planner.
#[derive(Debug)]
pub struct StringOperands;

impl ExprPlanner for StringOperands {
    fn plan_binary_op(
        &self,
        mut expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        // A type that cannot be known here (an error DataFusion reports better later) leaves
        // the operator to DataFusion.
        let (Ok(left), Ok(right)) = (expr.left.get_type(schema), expr.right.get_type(schema))
        else {
            return Ok(PlannerResult::Original(expr));
        };
        if !(is_string(&left) || is_string(&right)) {
            return Ok(PlannerResult::Original(expr));
        }
        match expr.op {
            BinaryOperator::Plus
            | BinaryOperator::Minus
            | BinaryOperator::Multiply
            | BinaryOperator::Divide
            | BinaryOperator::Modulo => {
                let number = |t: &DataType| t.is_numeric() || t.is_null() || is_string(t);
                if number(&left) && number(&right) {
                    if is_string(&left) {
                        expr.left = spark_double(expr.left);
                    }
                    if is_string(&right) {
                        expr.right = spark_double(expr.right);
                    }
                }
            }
            BinaryOperator::Eq
            | BinaryOperator::NotEq
            | BinaryOperator::Lt
            | BinaryOperator::LtEq
            | BinaryOperator::Gt
            | BinaryOperator::GtEq
            | BinaryOperator::Spaceship => {
                if is_string(&left) {
                    (expr.left, expr.right) = compared(expr.left, expr.right, &right)?;
                } else if is_string(&right) {
                    (expr.right, expr.left) = compared(expr.right, expr.left, &left)?;
                }
            }
            _ => {}
        }
        Ok(PlannerResult::Original(expr))
    }
}

fn is_string(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    )
}

/// A string and the value of type `other` it is compared with, as Spark compares them
/// (`findCommonTypeForBinaryComparison`): the string converted to `other`, or both to
/// `DOUBLE` beside a decimal. Other types are left as they are.
fn compared(string: Expr, value: Expr, other: &DataType) -> Result<(Expr, Expr)> {
    Ok(match other {
        // A cast to an integer is Hive's and Spark's (`HiveIntegerCasts`): `'5.5'` is 5.
        t if t.is_integer() => (try_cast(string, t.clone()), value),
        DataType::Float64 => (spark_double(string), value),
        DataType::Float32 | DataType::Float16 => (cast(spark_double(string), other.clone()), value),
        DataType::Decimal128(..) | DataType::Decimal256(..) => {
            (spark_double(string), cast(value, DataType::Float64))
        }
        DataType::Boolean => (spark_boolean(string)?, value),
        _ => (string, value),
    })
}

/// Spark's cast of a string to a boolean: `t`, `true`, `y`, `yes`, `1` are true and `f`,
/// `false`, `n`, `no`, `0` false, in any case and between spaces; anything else is NULL.
fn spark_boolean(string: Expr) -> Result<Expr> {
    let word =
        datafusion::functions::expr_fn::lower(datafusion::functions::expr_fn::btrim(vec![string]));
    let any = |words: &[&str]| {
        word.clone()
            .in_list(words.iter().map(|w| lit(*w)).collect(), false)
    };
    when(any(&["t", "true", "y", "yes", "1"]), lit(true))
        .when(any(&["f", "false", "n", "no", "0"]), lit(false))
        .otherwise(lit(ScalarValue::Boolean(None)))
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
        let scalar = matches!(args.args[0], ColumnarValue::Scalar(_));
        let strings = cast_array(&args.args[0].to_array(args.number_rows)?, &DataType::Utf8)?;
        let mut out = Float64Builder::with_capacity(strings.len());
        for text in strings.as_string::<i32>().iter() {
            out.append_option(text.and_then(parse_double));
        }
        let result: ArrayRef = Arc::new(out.finish());
        Ok(if scalar {
            ColumnarValue::Scalar(ScalarValue::try_from_array(&result, 0)?)
        } else {
            ColumnarValue::Array(result)
        })
    }
}

fn parse_double(text: &str) -> Option<f64> {
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
