//! `INTERSECT ALL` and `EXCEPT ALL` counted as multisets, as Spark and Hive count them.
//!
//! A row that the left side has `m` times and the right side `n` times is in
//! `INTERSECT ALL` `min(m, n)` times and in `EXCEPT ALL` `max(m - n, 0)` times. DataFusion
//! plans both as a semi (anti) join of the left side on every column without counting, so
//! `INTERSECT ALL` kept all `m` copies of a row the right side had once, and `EXCEPT ALL`
//! dropped all `m` copies of a row the right side had once.
//!
//! Numbering each side's copies of a row (`row_number()` over a partition by every column)
//! makes them distinct: the left's third copy of a row meets the right's third copy or
//! nothing. The same join on every column plus that number then counts as it should.
//! DataFusion's set operations are the only joins an analyzer sees with equality keys that
//! take NULL as equal to NULL (a join written in SQL still holds its condition as a
//! filter then), which is how this rule tells them from a user's `LEFT SEMI JOIN`.

use std::sync::Arc;

use datafusion::common::tree_node::Transformed;
use datafusion::common::{NullEquality, Result};
use datafusion::config::ConfigOptions;
use datafusion::functions_window::expr_fn::row_number;
use datafusion::logical_expr::{
    col, Expr, ExprFunctionExt, Join, JoinType, LogicalPlan, LogicalPlanBuilder,
};
use datafusion::optimizer::AnalyzerRule;

/// The column numbering the copies of a row on each side; a name no query writes.
const LEFT_COPY: &str = "__kumiho_left_copy";
const RIGHT_COPY: &str = "__kumiho_right_copy";

/// Rewrites DataFusion's `INTERSECT ALL` and `EXCEPT ALL` joins to count copies.
#[derive(Debug, Default)]
pub struct MultisetOperations;

impl AnalyzerRule for MultisetOperations {
    fn name(&self) -> &str {
        "multiset_operations"
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|plan| match plan {
            LogicalPlan::Join(join) if counts_no_copies(&join) => {
                count_copies(join).map(Transformed::yes)
            }
            plan => Ok(Transformed::no(plan)),
        })
        .map(|transformed| transformed.data)
    }
}

/// Whether `join` is DataFusion's `INTERSECT ALL` or `EXCEPT ALL`: a semi or anti join
/// with NULL-equal keys on every column of both sides, and a left side that may hold a row
/// twice (over a `DISTINCT` left side, `ALL` and `DISTINCT` are the same).
fn counts_no_copies(join: &Join) -> bool {
    let columns = join.left.schema().fields().len();
    matches!(join.join_type, JoinType::LeftSemi | JoinType::LeftAnti)
        && join.null_equality == NullEquality::NullEqualsNull
        && join.filter.is_none()
        && join.on.len() == columns
        && join.right.schema().fields().len() == columns
        && !matches!(join.left.as_ref(), LogicalPlan::Distinct(_))
}

/// The same join on every column and on each row's copy number, keeping the left's columns.
fn count_copies(join: Join) -> Result<LogicalPlan> {
    let output: Vec<Expr> = join
        .left
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    let left = number_copies(Arc::unwrap_or_clone(join.left), LEFT_COPY)?;
    let right = number_copies(Arc::unwrap_or_clone(join.right), RIGHT_COPY)?;
    let mut on = join.on;
    on.push((col(LEFT_COPY), col(RIGHT_COPY)));
    let counted = Join::try_new(
        Arc::new(left),
        Arc::new(right),
        on,
        None,
        join.join_type,
        join.join_constraint,
        NullEquality::NullEqualsNull,
        join.null_aware,
    )?;
    LogicalPlanBuilder::from(LogicalPlan::Join(counted))
        .project(output)?
        .build()
}

/// `plan` with a column `name` counting the copies of each row: 1, 2, ... among the rows
/// equal to it in every column.
fn number_copies(plan: LogicalPlan, name: &str) -> Result<LogicalPlan> {
    let every_column: Vec<Expr> = plan
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    let copy = row_number().partition_by(every_column).build()?.alias(name);
    LogicalPlanBuilder::from(plan).window(vec![copy])?.build()
}
