//! Calls whose edge cases DataFusion answers as Postgres does, read as Spark answers them:
//! `left(s, n)` and `right(s, n)` of a length of 0 or less are `''` (DataFusion's keep all
//! but the last or first `|n|` characters), and `array_position(a, x)` of a value the
//! array does not hold is 0 (DataFusion's is NULL; NULL stays the answer for a NULL array
//! or value).
//!
//! Counts and positions DataFusion gives as unsigned 64-bit integers, which no Hive type
//! holds (the engine sends them as `DECIMAL(20,0)`, so PyHive handed out `Decimal('3')`), are
//! `BIGINT`s, as Spark types them: `approx_count_distinct(x)`, `array_position(a, x)` (and
//! its other name `array_indexof`), `array_length`, `array_ndims` and `regr_count(y, x)`;
//! `cardinality(x)` is Spark's other name for `size(x)`, an `INT`, -1 for NULL. Spark's
//! `grouping(x)` is a `TINYINT` (DataFusion's an `INT`).
//!
//! Spark's `first(x, true)`, `last(x, true)`, `first_value(x, true)`, `last_value(x, true)`
//! and `nth_value(x, n, true)`, whose last argument says to skip NULLs, are DataFusion's
//! `... IGNORE NULLS`, in a group or over a window (DataFusion's took the flag for a value
//! and ignored it). `map()` is an empty `MAP<STRING, STRING>`, where DataFusion's `map`
//! refused no entries.
//!
//! Spark's `array_prepend(array, x)` is DataFusion's with its arguments the other way round.

use datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken;
use datafusion::sql::sqlparser::ast::{
    ArrayElemTypeDef, BinaryOperator, CaseWhen, CastKind, DataType, Expr, FunctionArg,
    FunctionArgExpr, FunctionArguments, Ident, NullTreatment, ObjectName, Value, ValueWithSpan,
};

/// Such a call as the `CASE` that answers as Spark; anything else is left as it is.
pub(super) fn as_spark(expr: &mut Expr) {
    null_flag_as_treatment(expr);
    let Some((name, args)) = super::plain_call(expr) else {
        return;
    };
    let replacement = match (name.as_str(), args.as_slice()) {
        ("left" | "right", [_, length]) => case(
            binary((*length).clone(), BinaryOperator::LtEq, number("0")),
            Expr::value(Value::SingleQuotedString(String::new())),
            Some(expr.clone()),
        ),
        ("array_position" | "array_indexof", [array, value]) => bigint(case(
            binary(
                Expr::IsNotNull(Box::new((*array).clone())),
                BinaryOperator::And,
                Expr::IsNotNull(Box::new((*value).clone())),
            ),
            super::function_call("coalesce", vec![expr.clone(), number("0")]),
            None,
        )),
        (
            "approx_count_distinct"
            | "approx_distinct"
            | "array_length"
            | "array_ndims"
            | "regr_count",
            _,
        ) => bigint(expr.clone()),
        ("grouping", [_]) => cast_to(expr.clone(), DataType::TinyInt(None)),
        ("cardinality", [value]) => super::function_call("size", vec![(*value).clone()]),
        // DataFusion's other name, which this rewrite leaves as it is.
        ("array_prepend", [array, value]) => {
            super::function_call("array_push_front", vec![(*value).clone(), (*array).clone()])
        }
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
        _ => return,
    };
    *expr = replacement;
}

/// Spark's NULL-skipping flag, the last argument of `first`, `last`, `first_value`,
/// `last_value` (the second) and `nth_value` (the third), as `IGNORE NULLS` (or nothing for
/// `false`): in a group, over a window or with a `FILTER`.
fn null_flag_as_treatment(expr: &mut Expr) {
    let (renamed, arity) = match super::function_name(expr).as_deref() {
        Some("first" | "first_value") => ("first_value", 2),
        Some("last" | "last_value") => ("last_value", 2),
        Some("nth_value") => ("nth_value", 3),
        _ => return,
    };
    let Expr::Function(call) = expr else {
        return;
    };
    let FunctionArguments::List(list) = &mut call.args else {
        return;
    };
    let ignore = match list.args.as_slice() {
        [.., FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(ValueWithSpan {
            value: Value::Boolean(ignore),
            ..
        })))]
            if list.args.len() == arity =>
        {
            *ignore
        }
        _ => return,
    };
    list.args.pop();
    call.name = ObjectName::from(vec![Ident::new(renamed)]);
    call.null_treatment = ignore.then_some(NullTreatment::IgnoreNulls);
}

fn bigint(value: Expr) -> Expr {
    cast_to(value, DataType::BigInt(None))
}

fn cast_to(value: Expr, data_type: DataType) -> Expr {
    Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(value),
        data_type,
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
