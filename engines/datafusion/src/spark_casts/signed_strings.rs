//! A sign before a string reads the string as a `DOUBLE`, as Spark does: `-'5'` and `+'5'`
//! are -5.0 and 5.0 (NULL for `-'abc'`), `-s` of a string column `s` is `-CAST(s AS DOUBLE)`,
//! where DataFusion's planner refuses a sign before a string. Rewritten in the statement's
//! syntax, before planning, because the planner checks the sign's operand before any of the
//! engine's code sees it:
//!
//! - before a string literal, whose type the syntax shows, `-'5'` is `-('5' * 1)`: the product
//!   reads the string as Spark's arithmetic does ([`super::StringOperands`]) and keeps its
//!   value exactly (`-0.0`, NaN);
//! - before any other operand but a number, an interval or a typed literal, whose type only
//!   planning knows, `-x` is `negative(x)` and `+x` is `positive(x)`: Spark's functions of the
//!   same meaning, which take a number or an interval as it is and a string as a `DOUBLE`
//!   ([`super::argument_casts`]).

use datafusion::sql::sqlparser::ast::{BinaryOperator, Expr, UnaryOperator, Value, ValueWithSpan};

use crate::hive_syntax::function_call;

/// Rewrites a sign before a string, or before an operand that may be one (above).
pub fn as_number(expr: &mut Expr) {
    let Expr::UnaryOp { op, expr: operand } = expr else {
        return;
    };
    let function = match op {
        UnaryOperator::Minus => "negative",
        UnaryOperator::Plus => "positive",
        _ => return,
    };
    match operand.as_ref() {
        Expr::Value(ValueWithSpan {
            value: Value::SingleQuotedString(_),
            ..
        }) => {
            let string = std::mem::replace(operand.as_mut(), Expr::value(Value::Null));
            **operand = Expr::Nested(Box::new(Expr::BinaryOp {
                left: Box::new(string),
                op: BinaryOperator::Multiply,
                right: Box::new(Expr::value(Value::Number("1".to_owned(), false))),
            }));
        }
        Expr::Value(_) | Expr::Interval(_) | Expr::TypedString(_) => {}
        _ => {
            let operand = std::mem::replace(operand.as_mut(), Expr::value(Value::Null));
            *expr = function_call(function, vec![operand]);
        }
    }
}
