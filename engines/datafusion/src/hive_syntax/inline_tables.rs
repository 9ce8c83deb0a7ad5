//! Spark's names for the columns of an inline table, `col1`, `col2`, ... (`SELECT col1 FROM
//! VALUES (1, 'a'), (2, 'b')`), where DataFusion names them `column1`, `column2`: a `VALUES`
//! list in a query's `FROM`, or a query of its own, without a list of column names (`AS t(a,
//! b)` names them), reads as `SELECT column1 AS col1, ... FROM (VALUES ...)`. An `INSERT`'s
//! `VALUES` are left alone: their columns are the table's.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    Query, SetExpr, Statement, TableFactor, VisitMut, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;

/// Names the columns of every inline table of `statement` as Spark does.
pub fn rewrite(statement: &mut Statement) {
    if let Statement::Query(query) = statement {
        spark_named(query);
    }
    let _ = statement.visit(&mut InlineTables);
}

struct InlineTables;

impl VisitorMut for InlineTables {
    type Break = ();

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::Derived {
            subquery, alias, ..
        } = factor
        {
            if alias.as_ref().is_none_or(|alias| alias.columns.is_empty()) {
                spark_named(subquery);
            }
        }
        ControlFlow::Continue(())
    }
}

/// `query`, a `VALUES` list, as the `SELECT` of its columns under Spark's names.
fn spark_named(query: &mut Query) {
    let SetExpr::Values(values) = query.body.as_ref() else {
        return;
    };
    let Some(width) = values.rows.first().map(|row| row.content.len()) else {
        return;
    };
    let named = |f: fn(usize) -> String| (1..=width).map(f).collect::<Vec<_>>().join(", ");
    let columns = named(|i| format!("column{i} AS col{i}"));
    let listed = named(|i| format!("column{i}"));
    // The template's one-value list is replaced by the query's own, as it was parsed. Its
    // list of column names keeps the visitor from naming it again.
    let template = format!("SELECT {columns} FROM (VALUES (NULL)) AS __inline_table({listed})");
    let Ok(Statement::Query(mut select)) = Parser::new(&GenericDialect {})
        .try_with_sql(&template)
        .and_then(|mut parser| parser.parse_statement())
    else {
        return;
    };
    let SetExpr::Select(body) = select.body.as_mut() else {
        return;
    };
    let Some(TableFactor::Derived { subquery, .. }) =
        body.from.first_mut().map(|table| &mut table.relation)
    else {
        return;
    };
    std::mem::swap(&mut subquery.body, &mut query.body);
    query.body = select.body;
}
