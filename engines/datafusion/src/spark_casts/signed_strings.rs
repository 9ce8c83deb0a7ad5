//! A sign before a string literal, `-'5'` and `+'5'`, reads the string as a `DOUBLE`, as
//! Spark does (-5.0, 5.0; NULL for `-'abc'`), where DataFusion's planner refuses a sign
//! before a string. Rewritten in the statement's syntax, before planning: the planner checks
//! the sign's operand before any of the engine's code sees it, so only a literal, whose type
//! the syntax shows, is read so (`-s` of a string column is still refused).

use datafusion::sql::sqlparser::ast::{BinaryOperator, Expr, UnaryOperator, Value, ValueWithSpan};

/// `-'5'` as `-('5' * 1)`: the product reads the string as a `DOUBLE` as Spark's arithmetic
/// does ([`super::StringOperands`]), and keeps its value exactly (`-0.0`, NaN).
pub fn as_number(expr: &mut Expr) {
    let Expr::UnaryOp {
        op: UnaryOperator::Minus | UnaryOperator::Plus,
        expr: operand,
    } = expr
    else {
        return;
    };
    if !matches!(
        operand.as_ref(),
        Expr::Value(ValueWithSpan {
            value: Value::SingleQuotedString(_),
            ..
        })
    ) {
        return;
    }
    let string = std::mem::replace(operand.as_mut(), Expr::value(Value::Null));
    **operand = Expr::Nested(Box::new(Expr::BinaryOp {
        left: Box::new(string),
        op: BinaryOperator::Multiply,
        right: Box::new(Expr::value(Value::Number("1".to_owned(), false))),
    }));
}
