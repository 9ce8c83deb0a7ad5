//! Spark's `PIVOT` and `UNPIVOT` clauses, which DataFusion parses and cannot plan, read as
//! the grouped query and the union that Spark computes for them.
//!
//! `t PIVOT (sum(amount) FOR region IN ('north', 'south' AS s))` groups by every column of
//! `t` that the clause does not name and gives, per value, the aggregate over that value's
//! rows: `sum(CASE WHEN region IS NOT DISTINCT FROM 'north' THEN amount END) AS north`
//! (Spark compares NULL-safely and wraps the aggregate's arguments the same way), NULL for
//! a group without such a row (`count` too, as Spark answers). The
//! grouping columns are not known before planning, so the query names them by what it
//! leaves out: `SELECT * EXCLUDE (region, amount), ... GROUP BY ALL`.
//!
//! `t UNPIVOT (v FOR n IN (q1, q2 AS second))` is one `SELECT * EXCLUDE (q1, q2), 'q1' AS n,
//! q1 AS v` per column, joined by `UNION ALL`, without the rows whose values are all NULL
//! unless `INCLUDE NULLS` says so.

use std::ops::ControlFlow;

use datafusion::common::{DataFusionError, Result};
use datafusion::sql::sqlparser::ast::{
    Expr, ExprWithAlias, FunctionArg, FunctionArgExpr, FunctionArguments, NullInclusion,
    PivotValueSource, TableAlias, TableFactor, Value, VisitMut, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;

/// Rewrites every `PIVOT` and `UNPIVOT` of `statement` (inner ones first).
pub fn rewrite<V: VisitMut>(statement: &mut V) -> Result<()> {
    super::visit_refusing(statement, &mut Pivots)
}

struct Pivots;

impl VisitorMut for Pivots {
    type Break = DataFusionError;

    fn post_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<Self::Break> {
        let rewritten = match factor {
            TableFactor::Pivot {
                table,
                aggregate_functions,
                value_column,
                value_source,
                default_on_null,
                alias,
            } => {
                if default_on_null.is_some() {
                    return ControlFlow::Break(unsupported("PIVOT ... DEFAULT ON NULL"));
                }
                let PivotValueSource::List(values) = value_source else {
                    return ControlFlow::Break(unsupported(
                        "PIVOT over ANY or a subquery (list the values: IN ('a', 'b'))",
                    ));
                };
                pivot(table, aggregate_functions, value_column, values)
                    .map(|sql| (sql, alias.take()))
            }
            TableFactor::Unpivot {
                table,
                value,
                name,
                columns,
                null_inclusion,
                alias,
            } => {
                let nulls = matches!(null_inclusion, Some(NullInclusion::IncludeNulls));
                unpivot(table, value, &name.to_string(), columns, nulls)
                    .map(|sql| (sql, alias.take()))
            }
            _ => return ControlFlow::Continue(()),
        };
        match rewritten.and_then(|(sql, alias)| derived(&sql, alias)) {
            Ok(table) => {
                *factor = table;
                ControlFlow::Continue(())
            }
            Err(error) => ControlFlow::Break(error),
        }
    }
}

/// The grouped query of a `PIVOT`.
fn pivot(
    table: &TableFactor,
    aggregates: &[ExprWithAlias],
    pivot_columns: &[Expr],
    values: &[ExprWithAlias],
) -> Result<String> {
    let pivot_columns = flattened(pivot_columns);
    let mut excluded: Vec<String> = pivot_columns.iter().filter_map(column_name).collect();
    for aggregate in aggregates {
        collect_columns(&aggregate.expr, &mut excluded);
    }
    let mut items = Vec::new();
    for value in values {
        let value_exprs = parts_of(&value.expr, pivot_columns.len(), "PIVOT value")?;
        let condition = pivot_columns
            .iter()
            .zip(&value_exprs)
            .map(|(column, value)| format!("(({column}) IS NOT DISTINCT FROM ({value}))"))
            .collect::<Vec<_>>()
            .join(" AND ");
        let value_name = match &value.alias {
            Some(alias) => alias.value.clone(),
            None => value_text(&value.expr),
        };
        for aggregate in aggregates {
            // One aggregate takes the value's name; several, the value's and their own.
            let name = match (aggregates.len(), &aggregate.alias) {
                (1, _) => value_name.clone(),
                (_, Some(alias)) => format!("{value_name}_{}", alias.value),
                (_, None) => format!("{value_name}_{}", aggregate.expr),
            };
            // NULL where the group has no row of the value, `count` too, as Spark's.
            let computed = only_where(&aggregate.expr, &condition)?;
            items.push(format!(
                "CASE WHEN count(CASE WHEN {condition} THEN 1 END) > 0 THEN {computed} END AS {}",
                quoted(&name)
            ));
        }
    }
    Ok(format!(
        "SELECT * EXCLUDE ({}), {} FROM {table} GROUP BY ALL",
        excluded.join(", "),
        items.join(", ")
    ))
}

/// The union of an `UNPIVOT`.
fn unpivot(
    table: &TableFactor,
    value: &Expr,
    name_column: &str,
    columns: &[ExprWithAlias],
    nulls: bool,
) -> Result<String> {
    let value_columns = flattened(std::slice::from_ref(value));
    let mut excluded = Vec::new();
    for column in columns {
        collect_columns(&column.expr, &mut excluded);
    }
    let mut branches = Vec::new();
    for column in columns {
        let sources = parts_of(&column.expr, value_columns.len(), "UNPIVOT columns")?;
        let name = match &column.alias {
            Some(alias) => alias.value.clone(),
            None => sources.iter().map(value_text).collect::<Vec<_>>().join("_"),
        };
        let values = sources
            .iter()
            .zip(&value_columns)
            .map(|(source, target)| format!("{source} AS {}", quoted(&value_text(target))))
            .collect::<Vec<_>>()
            .join(", ");
        let mut branch = format!(
            "SELECT * EXCLUDE ({}), {} AS {}, {values} FROM {table}",
            excluded.join(", "),
            string_literal(&name),
            quoted(name_column)
        );
        if !nulls {
            let all_null = sources
                .iter()
                .map(|source| format!("(({source}) IS NULL)"))
                .collect::<Vec<_>>()
                .join(" AND ");
            branch.push_str(&format!(" WHERE NOT ({all_null})"));
        }
        branches.push(branch);
    }
    Ok(branches.join(" UNION ALL "))
}

/// `query` as a derived table named `alias`.
/// The table of `query`, named `alias`: how a rewrite of a table's clause into SQL reaches
/// the statement (PIVOT's, UNPIVOT's, TABLESAMPLE's).
pub(super) fn derived(query: &str, alias: Option<TableAlias>) -> Result<TableFactor> {
    let subquery = Parser::new(&GenericDialect {})
        .try_with_sql(query)
        .and_then(|mut parser| parser.parse_query())
        .map_err(|e| DataFusionError::Internal(format!("the rewritten table `{query}`: {e}")))?;
    Ok(TableFactor::Derived {
        lateral: false,
        subquery,
        alias,
        sample: None,
    })
}

/// `aggregate` over the rows where `condition` holds: each argument of its outermost
/// aggregate calls (through arithmetic and the usual scalar wrappers such as `coalesce`)
/// is NULL elsewhere, as Spark wraps them. Literal arguments (`percentile(x, 0.5)`) stay.
fn only_where(aggregate: &Expr, condition: &str) -> Result<String> {
    let mut aggregate = aggregate.clone();
    wrap_arguments(&mut aggregate, condition)?;
    Ok(aggregate.to_string())
}

fn wrap_arguments(expr: &mut Expr, condition: &str) -> Result<()> {
    match expr {
        Expr::BinaryOp { left, right, .. } => {
            wrap_arguments(left, condition)?;
            wrap_arguments(right, condition)
        }
        Expr::UnaryOp { expr, .. } | Expr::Nested(expr) | Expr::Cast { expr, .. } => {
            wrap_arguments(expr, condition)
        }
        Expr::Function(function) => {
            let wrapper = SCALAR_WRAPPERS
                .iter()
                .any(|name| function.name.to_string().eq_ignore_ascii_case(name));
            let FunctionArguments::List(list) = &mut function.args else {
                return Ok(());
            };
            for arg in &mut list.args {
                let (FunctionArg::Unnamed(arg) | FunctionArg::Named { arg, .. }) = arg else {
                    continue;
                };
                match arg {
                    FunctionArgExpr::Expr(inner) if wrapper => wrap_arguments(inner, condition)?,
                    FunctionArgExpr::Expr(Expr::Value(_)) => {}
                    FunctionArgExpr::Expr(inner) => {
                        *inner =
                            super::parse_expr(&format!("CASE WHEN {condition} THEN {inner} END"))?;
                    }
                    // count(*): the rows where it holds.
                    FunctionArgExpr::Wildcard if !wrapper => {
                        *arg = FunctionArgExpr::Expr(super::parse_expr(&format!(
                            "CASE WHEN {condition} THEN 1 END"
                        ))?);
                    }
                    _ => {}
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Scalar functions written around an aggregate (`coalesce(sum(x), 0)`): the aggregate
/// inside is the one that counts only the pivot value's rows.
const SCALAR_WRAPPERS: &[&str] = &[
    "coalesce",
    "nvl",
    "ifnull",
    "if",
    "nullif",
    "round",
    "bround",
    "abs",
    "floor",
    "ceil",
    "ceiling",
    "concat",
    "concat_ws",
    "format_number",
    "greatest",
    "least",
    "size",
    "sort_array",
    "array_sort",
    "array_distinct",
    "to_json",
    "cast",
];

/// `(a, b)` as `a`, `b`; anything else as itself.
fn flattened(exprs: &[Expr]) -> Vec<Expr> {
    exprs
        .iter()
        .flat_map(|expr| match expr {
            Expr::Tuple(items) => items.clone(),
            Expr::Nested(inner) => vec![inner.as_ref().clone()],
            other => vec![other.clone()],
        })
        .collect()
}

/// The parts of `expr` (a tuple's items, or itself), which must be `count`, one for each
/// column the clause names.
fn parts_of(expr: &Expr, count: usize, what: &str) -> Result<Vec<Expr>> {
    let parts = flattened(std::slice::from_ref(expr));
    if parts.len() != count {
        return Err(DataFusionError::Plan(format!(
            "{what} {expr} has {} parts where the clause names {count} columns",
            parts.len()
        )));
    }
    Ok(parts)
}

/// The columns an expression names (by their last part), added to `names` once.
fn collect_columns(expr: &Expr, names: &mut Vec<String>) {
    let _ = datafusion::sql::sqlparser::ast::visit_expressions(expr, |expr| {
        if let Some(name) = column_name(expr) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

fn column_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Identifier(ident) => Some(quoted(&super::column_name(ident))),
        Expr::CompoundIdentifier(parts) => {
            parts.last().map(|ident| quoted(&super::column_name(ident)))
        }
        _ => None,
    }
}

/// A value as Spark names a column by it: a string's text, a number as written, `null`,
/// a tuple as `{a, b}`.
fn value_text(expr: &Expr) -> String {
    match expr {
        Expr::Value(value) => match &value.value {
            Value::SingleQuotedString(text) | Value::DoubleQuotedString(text) => text.clone(),
            Value::Null => "null".into(),
            other => other.to_string(),
        },
        Expr::Identifier(ident) => ident.value.clone(),
        Expr::CompoundIdentifier(parts) => {
            parts.last().map(|p| p.value.clone()).unwrap_or_default()
        }
        Expr::Tuple(items) => format!(
            "{{{}}}",
            items.iter().map(value_text).collect::<Vec<_>>().join(", ")
        ),
        Expr::Nested(inner) => value_text(inner),
        other => other.to_string(),
    }
}

/// A column name in backquotes, which DataFusion takes as written.
fn quoted(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn string_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn unsupported(what: &str) -> DataFusionError {
    DataFusionError::NotImplemented(format!("{what} is not supported"))
}
