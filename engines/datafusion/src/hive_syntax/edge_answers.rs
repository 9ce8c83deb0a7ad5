//! Calls whose edge cases DataFusion answers as Postgres does, read as Spark answers them:
//! `left(s, n)` and `right(s, n)` of a length of 0 or less are `''` (DataFusion's keep all
//! but the last or first `|n|` characters), and `array_position(a, x)` of a value the
//! array does not hold is 0 (DataFusion's is NULL; NULL stays the answer for a NULL array
//! or value).
//!
//! Counts and positions DataFusion gives as unsigned 64-bit integers, which no Hive type
//! holds (the engine sends them as `DECIMAL(20,0)`, so PyHive handed out `Decimal('3')`), are
//! `BIGINT`s, as Spark types them: `approx_count_distinct(x)` and `array_position(a, x)`.
//!
//! Spark's `first(x, true)` and `last(x, true)`, whose second argument says to skip NULLs,
//! are `first_value(x) IGNORE NULLS` and `last_value(x) IGNORE NULLS`; `map()` is an empty
//! `MAP<STRING, STRING>`, where DataFusion's `map` refused no entries.

use datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken;
use datafusion::sql::sqlparser::ast::{
    ArrayElemTypeDef, BinaryOperator, CaseWhen, CastKind, DataType, Expr, NullTreatment, Value,
    ValueWithSpan,
};

/// Such a call as the `CASE` that answers as Spark; anything else is left as it is.
pub(super) fn as_spark(expr: &mut Expr) {
    let Some((name, args)) = super::plain_call(expr) else {
        return;
    };
    let replacement = match (name.as_str(), args.as_slice()) {
        ("left" | "right", [_, length]) => case(
            binary((*length).clone(), BinaryOperator::LtEq, number("0")),
            Expr::value(Value::SingleQuotedString(String::new())),
            Some(expr.clone()),
        ),
        ("array_position", [array, value]) => bigint(case(
            binary(
                Expr::IsNotNull(Box::new((*array).clone())),
                BinaryOperator::And,
                Expr::IsNotNull(Box::new((*value).clone())),
            ),
            super::function_call("coalesce", vec![expr.clone(), number("0")]),
            None,
        )),
        ("approx_count_distinct" | "approx_distinct", _) => bigint(expr.clone()),
        // Spark's empty `map()`, a `MAP<STRING, STRING>`; DataFusion's `map` takes entries.
        ("map", []) => {
            let no_strings = || Expr::Cast {
                kind: CastKind::Cast,
                expr: Box::new(super::function_call("array", Vec::new())),
                data_type: DataType::Array(ArrayElemTypeDef::AngleBracket(Box::new(
                    DataType::String(None),
                ))),
                array: false,
                format: None,
            };
            super::function_call("map_from_arrays", vec![no_strings(), no_strings()])
        }
        // Spark's `first(x, ignore_nulls)` and `last(x, ignore_nulls)`.
        ("first" | "last", [value, ignore_nulls]) => {
            let ignore = match ignore_nulls {
                Expr::Value(ValueWithSpan {
                    value: Value::Boolean(ignore),
                    ..
                }) => *ignore,
                _ => return,
            };
            let Expr::Function(mut call) =
                super::function_call(&format!("{name}_value"), vec![(*value).clone()])
            else {
                return;
            };
            call.null_treatment = ignore.then_some(NullTreatment::IgnoreNulls);
            Expr::Function(call)
        }
        _ => return,
    };
    *expr = replacement;
}

fn bigint(value: Expr) -> Expr {
    Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(value),
        data_type: DataType::BigInt(None),
        array: false,
        format: None,
    }
}

fn case(condition: Expr, result: Expr, else_result: Option<Expr>) -> Expr {
    Expr::Nested(Box::new(Expr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions: vec![CaseWhen { condition, result }],
        else_result: else_result.map(Box::new),
    }))
}

fn binary(left: Expr, op: BinaryOperator, right: Expr) -> Expr {
    Expr::BinaryOp {
        left: Box::new(left),
        op,
        right: Box::new(right),
    }
}

fn number(digits: &str) -> Expr {
    Expr::value(Value::Number(digits.into(), false))
}
