//! Aggregates that differ only by a cast, `sum(x)` beside `sum(CAST(x AS DOUBLE))`, told
//! apart. DataFusion names a cast by its operand alone (as Postgres and Spark name a result
//! column), so the two aggregates take one name and the query is refused ("Schema contains
//! duplicate unqualified field name sum(t.x)"; apache/datafusion#18975), where Hive and
//! Spark answer both. In the second and later of such calls, each cast is wrapped in
//! `CASE WHEN TRUE THEN cast END`, once more per call: another name, the same value, which
//! the optimizer unwraps.

use std::collections::HashMap;
use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken;
use datafusion::sql::sqlparser::ast::{
    visit_expressions, visit_expressions_mut, CaseWhen, Expr, Statement, Value, VisitMut,
    VisitorMut,
};

/// Tells apart the calls of `statement` that differ only by casts.
pub(super) fn tell_apart(statement: &mut Statement) {
    let renames = renames(statement);
    if renames.is_empty() {
        return;
    }
    let _ = statement.visit(&mut Renamer { renames });
}

/// For each aggregate call (as written) that one before it matches but for its casts, how
/// many times its casts are wrapped.
fn renames(statement: &Statement) -> HashMap<String, usize> {
    let mut variants: HashMap<String, Vec<String>> = HashMap::new();
    let _ = visit_expressions(statement, |expr| {
        if is_aggregate_call(expr) {
            let written = expr.to_string();
            let known = variants.entry(without_casts(expr)).or_default();
            if !known.contains(&written) {
                known.push(written);
            }
        }
        ControlFlow::<()>::Continue(())
    });
    variants
        .into_values()
        .flat_map(|written| written.into_iter().enumerate().skip(1))
        .map(|(depth, written)| (written, depth))
        .collect()
}

/// A call's text with every cast in it left out (a text to compare, not to read: without
/// the cast's parentheses, an operand may read otherwise; two calls taken for alike that are
/// not are told apart all the same, which changes nothing).
fn without_casts(expr: &Expr) -> String {
    let mut bare = expr.clone();
    let _ = visit_expressions_mut(&mut bare, |expr| {
        if let Expr::Cast { expr: operand, .. } = expr {
            *expr = std::mem::replace(operand.as_mut(), Expr::value(Value::Null));
        }
        ControlFlow::<()>::Continue(())
    });
    bare.to_string()
}

/// Wraps the casts of the calls to rename, outermost call first: the calls inside one
/// renamed are then written otherwise, and are left alone.
struct Renamer {
    renames: HashMap<String, usize>,
}

impl VisitorMut for Renamer {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        if !is_aggregate_call(expr) {
            return ControlFlow::Continue(());
        }
        if let Some(&depth) = self.renames.get(&expr.to_string()) {
            let _ = visit_expressions_mut(expr, |inner| {
                if matches!(inner, Expr::Cast { .. }) {
                    for _ in 0..depth {
                        let value = std::mem::replace(inner, Expr::value(Value::Null));
                        *inner = always(value);
                    }
                }
                ControlFlow::<()>::Continue(())
            });
        }
        ControlFlow::Continue(())
    }
}

/// `CASE WHEN TRUE THEN value END`.
fn always(value: Expr) -> Expr {
    Expr::Nested(Box::new(Expr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions: vec![CaseWhen {
            condition: Expr::value(Value::Boolean(true)),
            result: value,
        }],
        else_result: None,
    }))
}

/// Whether `expr` calls one of the aggregates analysts cast the arguments of (the statement
/// is read before planning, where which functions aggregate is not known).
fn is_aggregate_call(expr: &Expr) -> bool {
    const AGGREGATES: &[&str] = &[
        "sum",
        "avg",
        "mean",
        "min",
        "max",
        "count",
        "count_if",
        "collect_list",
        "collect_set",
        "array_agg",
        "first",
        "first_value",
        "last",
        "last_value",
        "any_value",
        "stddev",
        "stddev_samp",
        "stddev_pop",
        "std",
        "variance",
        "var_samp",
        "var_pop",
        "percentile",
        "percentile_approx",
        "approx_percentile",
        "median",
        "mode",
        "approx_count_distinct",
        "corr",
        "covar_samp",
        "covar_pop",
        "max_by",
        "min_by",
        "bool_and",
        "bool_or",
        "every",
        "some",
        "any",
        "kurtosis",
        "skewness",
        "string_agg",
        "histogram_numeric",
    ];
    matches!(expr, Expr::Function(_))
        && super::function_name(expr).is_some_and(|name| AGGREGATES.contains(&name.as_str()))
}

#[cfg(test)]
mod tests {
    use crate::test_util::{engine, lines, open};

    #[tokio::test]
    async fn aggregates_of_a_column_and_of_its_cast_both_answer() {
        let engine = engine().await;
        let session = open(&engine);
        let rows = lines(
            &engine,
            &session,
            "SELECT sum(n_nationkey), sum(CAST(n_nationkey AS DOUBLE)), \
             max(n_regionkey), max(CAST(n_regionkey AS STRING)), \
             sum(CAST(n_nationkey AS DECIMAL(10,2))) \
             FROM tpch.nation HAVING sum(CAST(n_nationkey AS DOUBLE)) > 1",
        )
        .await;
        assert_eq!(
            rows[3]
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect::<Vec<_>>(),
            ["300", "300.0", "4", "4", "300.00"],
            "{rows:?}"
        );
        // The columns keep the names they are written with.
        assert!(
            rows[1].contains("sum(CAST(n_nationkey AS DOUBLE))"),
            "{rows:?}"
        );
    }
}
