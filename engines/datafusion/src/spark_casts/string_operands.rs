//! A string beside a number in arithmetic or a comparison is read as a number, as Spark
//! (non-ANSI) reads it, where DataFusion refuses arithmetic ("Cannot coerce arithmetic
//! expression Int64 + Utf8") and fails a comparison on a string that is not a number.
//!
//! - `+`, `-`, `*`, `/`, `%`: a string operand is a `DOUBLE` (`1 + '2'` is 3.0, `'3' * '4'`
//!   12.0), NULL when it is not a number (`'abc' + 1`); beside a day-time interval it is a
//!   moment, moved and written back as text ([`moment_text`]); beside a date or a timestamp it
//!   is left to DataFusion.
//! - `=`, `<>`, `<`, `<=`, `>`, `>=`, `<=>`: a string is read as the other side's type
//!   (`'10' > 9` compares 10 with 9; `'5.5' = 5` reads `'5.5'` as an `INT`, 5), NULL when it
//!   does not convert; beside a decimal both sides are `DOUBLE`s; beside a boolean `'t'`,
//!   `'yes'`, `'1'` ... are true. Dates and timestamps stay DataFusion's (the string read as
//!   one, as Spark reads it).
//! - `||` of numbers, booleans, dates and timestamps joins their text ([`concatenated`]).
//! - `BETWEEN` and `IN` with strings beside numbers, as Spark reads them
//!   ([`STRING_RANGES_AND_LISTS`]).

use datafusion::arrow::datatypes::{DataType, IntervalUnit, TimeUnit};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{plan_err, DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{Between, InList};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{
    binary_expr, cast, lit, try_cast, when, Expr, ExprSchemable, Operator,
};
use datafusion::sql::sqlparser::ast::BinaryOperator;

use super::argument_casts::has_text;
use super::string_to_double::spark_double;

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
        if expr.op == BinaryOperator::StringConcat {
            return Ok(PlannerResult::Original(concatenated(expr, &left, &right)));
        }
        if !(is_string(&left) || is_string(&right)) {
            return Ok(PlannerResult::Original(expr));
        }
        if let Some(moment) = moment_text(&expr, &left, &right)? {
            return Ok(PlannerResult::Planned(moment));
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
                        expr.left = spark_double(plain(expr.left, &left));
                    }
                    if is_string(&right) {
                        expr.right = spark_double(plain(expr.right, &right));
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
                (expr.left, expr.right) = comparison(expr.left, expr.right, &left, &right)?;
            }
            _ => {}
        }
        Ok(PlannerResult::Original(expr))
    }
}

/// `string + interval`, `interval + string` or `string - interval` of a day-time interval:
/// the string read as a timestamp, moved, and written back as text, as Spark answers
/// (`'2024-01-02' + INTERVAL 1 DAY` is the STRING `'2024-01-03 00:00:00'`; `'abc' + INTERVAL
/// 1 DAY` is NULL). Spark refuses months beside a string, and so does this, saying how to
/// write it.
fn moment_text(expr: &RawBinaryExpr, left: &DataType, right: &DataType) -> Result<Option<Expr>> {
    let op = match expr.op {
        BinaryOperator::Plus => Operator::Plus,
        BinaryOperator::Minus => Operator::Minus,
        _ => return Ok(None),
    };
    let string_first = is_string(left);
    let (string, string_type, interval, interval_type) = if string_first {
        (&expr.left, left, &expr.right, right)
    } else if op == Operator::Plus && is_string(right) {
        (&expr.right, right, &expr.left, left)
    } else {
        return Ok(None);
    };
    let months = match (interval_type, interval) {
        (DataType::Interval(IntervalUnit::YearMonth), _) => true,
        (
            DataType::Interval(_),
            Expr::Literal(ScalarValue::IntervalMonthDayNano(Some(value)), _),
        ) => value.months != 0,
        (DataType::Interval(_), _) => false,
        _ => return Ok(None),
    };
    if months {
        return plan_err!(
            "a string cannot be moved by months or years: cast it to a DATE or a TIMESTAMP \
             first (CAST(s AS DATE) + INTERVAL 1 MONTH)"
        );
    }
    let moment = cast(
        plain(string.clone(), string_type),
        DataType::Timestamp(TimeUnit::Nanosecond, None),
    );
    let moved = if string_first {
        binary_expr(moment, op, interval.clone())
    } else {
        binary_expr(interval.clone(), op, moment)
    };
    Ok(Some(cast(moved, DataType::Utf8)))
}

/// `a || b` of numbers, booleans, dates or timestamps, each side that is not a string cast
/// to its text, as Spark's `concat` takes them (`1 || TRUE` is `'1true'`), where DataFusion
/// refused such a pair ("Cannot infer common string type"). Arrays are left to DataFusion,
/// which joins them.
fn concatenated(mut expr: RawBinaryExpr, left: &DataType, right: &DataType) -> RawBinaryExpr {
    let text = |t: &DataType| is_string(t) || t.is_null() || has_text(t);
    if text(left) && text(right) && !(is_string(left) && is_string(right)) {
        for (side, t) in [(&mut expr.left, left), (&mut expr.right, right)] {
            if has_text(t) {
                *side = cast(std::mem::take(side), DataType::Utf8);
            }
        }
    }
    expr
}

/// Whether the type is a string's, a dictionary of strings (a partition's column) too.
pub(super) fn is_string(data_type: &DataType) -> bool {
    match data_type {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, values) => is_string(values),
        _ => false,
    }
}

/// A string of a dictionary as a plain string, which the conversions below read.
fn plain(string: Expr, data_type: &DataType) -> Expr {
    if matches!(data_type, DataType::Dictionary(..)) {
        cast(string, DataType::Utf8)
    } else {
        string
    }
}

/// The two sides of a comparison of `left` and `right` (of types `left_type` and
/// `right_type`), a string among them converted as Spark converts it ([`compared`]).
pub(super) fn comparison(
    left: Expr,
    right: Expr,
    left_type: &DataType,
    right_type: &DataType,
) -> Result<(Expr, Expr)> {
    Ok(if is_string(left_type) {
        compared(plain(left, left_type), right, right_type)?
    } else if is_string(right_type) {
        let (right, left) = compared(plain(right, right_type), left, left_type)?;
        (left, right)
    } else {
        (left, right)
    })
}

/// A string and the value of type `other` it is compared with, as Spark compares them
/// (`findCommonTypeForBinaryComparison`): the string converted to `other`, or both to
/// `DOUBLE` beside a decimal. Other types are left as they are.
fn compared(string: Expr, value: Expr, other: &DataType) -> Result<(Expr, Expr)> {
    Ok(match other {
        // A cast to an integer is Hive's and Spark's (`HIVE_INTEGER_CASTS`): `'5.5'` is 5.
        t if t.is_integer() => {
            let t = crate::hive_syntax::integer_literals::type_once_narrowed(&value, t);
            (try_cast(string, t), value)
        }
        DataType::Float64 => (spark_double(string), value),
        DataType::Float32 | DataType::Float16 => (cast(spark_double(string), other.clone()), value),
        DataType::Decimal128(..) | DataType::Decimal256(..) => {
            (spark_double(string), cast(value, DataType::Float64))
        }
        DataType::Boolean => (spark_boolean(string)?, value),
        _ => (string, value),
    })
}

/// `x BETWEEN a AND b` and `x IN (a, b, ...)` with a string beside a number, as Spark reads
/// them, where DataFusion casts the strings to the number's type and fails on one that is not
/// a number. `BETWEEN` is `a <= x AND x <= b`, each comparison as [`StringOperands`] makes it
/// (`'10' BETWEEN 9 AND 11` is true). `IN` compares them all as strings (Spark's common type
/// of a string and a number), so `5 IN ('5.0')` is false; a list DataFusion already answers
/// alike, integers and strings that are integers as written (`id IN ('5', '6')`), is left
/// as it is. An analyzer rule placed before type coercion.
pub const STRING_RANGES_AND_LISTS: crate::hive_syntax::ExpressionRewrite =
    crate::hive_syntax::ExpressionRewrite::new("string_ranges_and_lists", range_or_list);

fn range_or_list(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let number = |t: &DataType| t.is_numeric() || *t == DataType::Boolean;
    match expr {
        Expr::Between(Between {
            expr: value,
            negated,
            low,
            high,
        }) => {
            let types = [&value, &low, &high].map(|e| e.get_type(schema));
            let [Ok(value_type), Ok(low_type), Ok(high_type)] = &types else {
                return Ok(Transformed::no(Expr::Between(Between {
                    expr: value,
                    negated,
                    low,
                    high,
                })));
            };
            let types = [value_type, low_type, high_type];
            if !(types.iter().any(|t| is_string(t)) && types.iter().any(|t| number(t))) {
                return Ok(Transformed::no(Expr::Between(Between {
                    expr: value,
                    negated,
                    low,
                    high,
                })));
            }
            let (above, low) = comparison(*value.clone(), *low, value_type, low_type)?;
            let (below, high) = comparison(*value, *high, value_type, high_type)?;
            let within = above.gt_eq(low).and(below.lt_eq(high));
            Ok(Transformed::yes(if negated { !within } else { within }))
        }
        Expr::InList(InList {
            expr: value,
            list,
            negated,
        }) => {
            let members = std::iter::once(value.as_ref()).chain(&list);
            let Ok(types) = members
                .clone()
                .map(|e| e.get_type(schema))
                .collect::<Result<Vec<_>>>()
            else {
                return Ok(Transformed::no(Expr::InList(InList::new(
                    value, list, negated,
                ))));
            };
            let mixed = types.iter().any(is_string) && types.iter().any(|t| t.is_numeric());
            let answered_alike = members.zip(&types).all(|(member, t)| {
                t.is_integer() || t.is_null() || (is_string(t) && integer_as_written(member))
            });
            if !mixed || answered_alike {
                return Ok(Transformed::no(Expr::InList(InList::new(
                    value, list, negated,
                ))));
            }
            let as_string = |member: Expr, t: &DataType| {
                if t.is_numeric() {
                    try_cast(member, DataType::Utf8)
                } else {
                    member
                }
            };
            let value = as_string(*value, &types[0]);
            let list = list
                .into_iter()
                .zip(&types[1..])
                .map(|(member, t)| as_string(member, t))
                .collect();
            Ok(Transformed::yes(Expr::InList(InList::new(
                Box::new(value),
                list,
                negated,
            ))))
        }
        expr => Ok(Transformed::no(expr)),
    }
}

/// Whether `expr` is a string literal of an integer as Rust and Java write it, `'5'` but not
/// `'05'` or `'5.0'`: one that DataFusion's reading as a number and Spark's comparison as a
/// string answer alike.
fn integer_as_written(expr: &Expr) -> bool {
    let Expr::Literal(value, _) = expr else {
        return false;
    };
    let (ScalarValue::Utf8(Some(text))
    | ScalarValue::LargeUtf8(Some(text))
    | ScalarValue::Utf8View(Some(text))) = value
    else {
        return false;
    };
    text.parse::<i64>()
        .is_ok_and(|number| number.to_string() == *text)
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
