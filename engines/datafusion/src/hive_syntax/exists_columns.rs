//! `EXISTS (subquery)` in a select list (`SELECT id, EXISTS (SELECT 1 FROM orders o WHERE
//! o.cid = c.id) AS has_orders FROM customers c`), which Spark answers and DataFusion's
//! planner cannot (it decorrelates `EXISTS` in a filter alone): written as the count of the
//! subquery's rows compared with 0, a scalar subquery DataFusion decorrelates. Only a plain
//! `SELECT ... FROM ... WHERE ...` subquery is rewritten (its select list does not count);
//! one with grouping, `DISTINCT`, a limit or set operations is left as it was.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, BinaryOperator, Expr, Select, SelectItem, SetExpr, Value,
};

use super::function_call;

/// Rewrites each `[NOT] EXISTS (subquery)` of the select list (above).
pub(super) fn as_counts(select: &mut Select) {
    let _ = visit_expressions_mut(&mut select.projection, |expr| {
        if let Some(counted) = counted(expr) {
            *expr = counted;
        }
        ControlFlow::<()>::Continue(())
    });
}

/// `(SELECT count(*) FROM ... WHERE ...) > 0` (`= 0` for `NOT EXISTS`) for a plain subquery.
fn counted(expr: &Expr) -> Option<Expr> {
    let Expr::Exists { subquery, negated } = expr else {
        return None;
    };
    let plain = subquery.with.is_none()
        && subquery.order_by.is_none()
        && subquery.limit_clause.is_none()
        && subquery.fetch.is_none();
    let SetExpr::Select(inner) = subquery.body.as_ref() else {
        return None;
    };
    let grouped = !matches!(
        &inner.group_by,
        datafusion::sql::sqlparser::ast::GroupByExpr::Expressions(keys, modifiers)
            if keys.is_empty() && modifiers.is_empty()
    );
    if !plain || grouped || inner.distinct.is_some() || inner.having.is_some() {
        return None;
    }
    let mut counting = subquery.clone();
    let SetExpr::Select(select) = counting.body.as_mut() else {
        return None;
    };
    select.projection = vec![SelectItem::UnnamedExpr(function_call(
        "count",
        vec![Expr::value(Value::Number("1".to_owned(), false))],
    ))];
    Some(Expr::Nested(Box::new(Expr::BinaryOp {
        left: Box::new(Expr::Subquery(counting)),
        op: if *negated {
            BinaryOperator::Eq
        } else {
            BinaryOperator::Gt
        },
        right: Box::new(Expr::value(Value::Number("0".to_owned(), false))),
    })))
}
