//! An ordered subquery keeps its order for the aggregates that read rows in order, as in
//! Hive and Spark: `SELECT collect_list(x) FROM (SELECT x FROM t ORDER BY ts)` lists the
//! values by `ts`, and `first(x)` / `last(x)` over it are the first and last by `ts` (the
//! Hive idiom for an ordered list is `... FROM (... DISTRIBUTE BY k SORT BY ts) GROUP BY k`).
//!
//! DataFusion's aggregates promise no order for rows they were not told to order: its
//! physical planner drops a sort under an aggregate and reads the rows over several
//! partitions. So each such aggregate that names no order of its own is given the
//! subquery's, as its `ORDER BY`, which DataFusion honours however it splits the work: the
//! sort's keys are carried up through the projections, aliases, filters and limits
//! between the sort and the aggregate, as columns of a name no query writes.
//!
//! `first_value`, `last_value`, `nth_value`, `array_agg` and `string_agg` take the order as
//! they are. `collect_list`, which takes no `ORDER BY`, becomes DataFusion's `array_agg` of
//! the non-NULL values, an empty array for a group without any, as `collect_list` answers.
//!
//! The session keeps an ordered subquery's sort in the plan for this
//! (`datafusion.sql_parser.enable_subquery_sort_elimination` is off), which also keeps the
//! order of `SELECT * FROM (SELECT ... ORDER BY x) t`, as Hive and Spark return it.

use std::sync::Arc;

use datafusion::common::tree_node::Transformed;
use datafusion::common::{
    Column, DFSchemaRef, DataFusionError, Result, ScalarValue, TableReference,
};
use datafusion::config::ConfigOptions;
use datafusion::functions::core::expr_fn::coalesce;
use datafusion::functions_aggregate::array_agg::array_agg_udaf;
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::{
    lit, Aggregate, Expr, ExprSchemable, Filter, Limit, LogicalPlan, Projection, SortExpr,
    SubqueryAlias,
};
use datafusion::optimizer::AnalyzerRule;

/// The columns carrying a sort's keys up to the aggregate: `__kumiho_order_0`, `_1`, ...
const ORDER_KEY: &str = "__kumiho_order_";

/// The aggregates whose answer depends on the order they read rows in.
const READS_IN_ORDER: &[&str] = &[
    "first_value",
    "last_value",
    "nth_value",
    "array_agg",
    "string_agg",
    "collect_list",
];

/// Gives the order-dependent aggregates over an ordered subquery that subquery's order.
#[derive(Debug, Default)]
pub struct OrderedSubqueries;

impl AnalyzerRule for OrderedSubqueries {
    fn name(&self) -> &str {
        "ordered_subqueries"
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|plan| match plan {
            LogicalPlan::Aggregate(aggregate)
                if aggregate.aggr_expr.iter().any(reads_in_any_order)
                    && !aggregate.aggr_expr.iter().any(has_own_order) =>
            {
                order_aggregate(aggregate)
            }
            plan => Ok(Transformed::no(plan)),
        })
        .map(|transformed| transformed.data)
    }
}

/// The aggregate call `expr` makes, under its alias if it has one.
fn call_of(expr: &Expr) -> Option<&AggregateFunction> {
    match expr {
        Expr::AggregateFunction(call) => Some(call),
        Expr::Alias(alias) => call_of(&alias.expr),
        _ => None,
    }
}

/// Whether `expr` is an order-dependent aggregate that names no order of its own. Not one
/// of `DISTINCT` values, whose order DataFusion takes only from those values.
fn reads_in_any_order(expr: &Expr) -> bool {
    call_of(expr).is_some_and(|call| {
        call.params.order_by.is_empty()
            && !call.params.distinct
            && READS_IN_ORDER.contains(&call.func.name())
    })
}

/// Whether `expr` is an aggregate with an `ORDER BY` of its own: the subquery's order is
/// then given to none of its neighbours, since DataFusion refuses two orders in one
/// aggregation.
fn has_own_order(expr: &Expr) -> bool {
    call_of(expr).is_some_and(|call| !call.params.order_by.is_empty())
}

/// `aggregate` with its order-dependent aggregates ordered by the sort under it, when one
/// is there; as it was otherwise.
fn order_aggregate(aggregate: Aggregate) -> Result<Transformed<LogicalPlan>> {
    let Some((input, keys)) = carry_order(&aggregate.input)? else {
        return Ok(Transformed::no(LogicalPlan::Aggregate(aggregate)));
    };
    let mut listed = Vec::new();
    let aggr_expr = aggregate
        .aggr_expr
        .iter()
        .map(|expr| {
            if !reads_in_any_order(expr) {
                return expr.clone();
            }
            let call = call_of(expr).expect("reads_in_any_order matched an aggregate call");
            let name = expr.schema_name().to_string();
            let mut call = call.clone();
            call.params.order_by = keys.clone();
            if call.func.name() == "collect_list" {
                listed.push(name.clone());
                call = non_null_array_agg(call);
            }
            Expr::AggregateFunction(call).alias(name)
        })
        .collect();
    let ordered = LogicalPlan::Aggregate(Aggregate::try_new(
        Arc::new(input),
        aggregate.group_expr,
        aggr_expr,
    )?);
    if listed.is_empty() {
        return Ok(Transformed::yes(ordered));
    }
    empty_lists_for_no_values(ordered, &listed).map(Transformed::yes)
}

/// `collect_list(x)` as `array_agg(x) FILTER (WHERE x IS NOT NULL)`, whose `ORDER BY`
/// DataFusion honours; NULL for a group without values, which the projection over it
/// makes an empty array.
fn non_null_array_agg(mut call: AggregateFunction) -> AggregateFunction {
    let has_value = call.params.args[0].clone().is_not_null();
    call.params.filter = Some(Box::new(match call.params.filter.take() {
        Some(filter) => filter.and(has_value),
        None => has_value,
    }));
    call.func = array_agg_udaf();
    call
}

/// Every column of `aggregate` as it is, but the `listed` ones, NULL for a group without
/// values, as an empty array.
fn empty_lists_for_no_values(aggregate: LogicalPlan, listed: &[String]) -> Result<LogicalPlan> {
    let schema = Arc::clone(aggregate.schema());
    let columns = schema
        .iter()
        .map(|(qualifier, field)| {
            let column = Expr::Column(Column::new(qualifier.cloned(), field.name()));
            if qualifier.is_some() || !listed.contains(field.name()) {
                return Ok(column);
            }
            let item = match column.get_type(schema.as_ref())? {
                datafusion::arrow::datatypes::DataType::List(item) => item.data_type().clone(),
                other => other,
            };
            let empty = ScalarValue::List(ScalarValue::new_list_nullable(&[], &item));
            Ok(coalesce(vec![column, lit(empty)]).alias(field.name()))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(LogicalPlan::Projection(Projection::try_new(
        columns,
        Arc::new(aggregate),
    )?))
}

/// `plan` rebuilt so that its rows carry the keys of the sort it reads from, with those keys
/// as they read over its output; `None` when no sort is found through the projections,
/// aliases, filters and limits that keep the sort's order.
fn carry_order(plan: &LogicalPlan) -> Result<Option<(LogicalPlan, Vec<SortExpr>)>> {
    let carried = match plan {
        LogicalPlan::Sort(sort) => Some((plan.clone(), sort.expr.clone())),
        LogicalPlan::Projection(projection) => carry_order(&projection.input)?
            .map(|(input, keys)| project_keys(projection.expr.clone(), input, &keys))
            .transpose()?,
        LogicalPlan::SubqueryAlias(alias) => carry_order(&alias.input)?
            .map(|(input, keys)| realias(input, keys, &alias.alias))
            .transpose()?,
        LogicalPlan::Filter(filter) => carry_order(&filter.input)?
            .map(|(input, keys)| {
                let filtered = Filter::try_new(filter.predicate.clone(), Arc::new(input))?;
                Ok::<_, DataFusionError>((LogicalPlan::Filter(filtered), keys))
            })
            .transpose()?,
        LogicalPlan::Limit(limit) => carry_order(&limit.input)?.map(|(input, keys)| {
            let limited = Limit {
                input: Arc::new(input),
                ..limit.clone()
            };
            (LogicalPlan::Limit(limited), keys)
        }),
        _ => None,
    };
    Ok(carried)
}

/// `input` under `alias` again, carrying `keys` as columns of the alias.
fn realias(
    input: LogicalPlan,
    keys: Vec<SortExpr>,
    alias: &TableReference,
) -> Result<(LogicalPlan, Vec<SortExpr>)> {
    let (input, keys) = if keys.iter().all(is_carried) {
        (input, keys)
    } else {
        project_keys(columns_of(input.schema()), input, &keys)?
    };
    let aliased = SubqueryAlias::try_new(Arc::new(input), alias.clone())?;
    let keys = keys
        .into_iter()
        .map(|key| {
            let Expr::Column(column) = &key.expr else {
                unreachable!("carried keys are columns");
            };
            let name = column.name.clone();
            key.with_expr(Expr::Column(Column::new(Some(alias.clone()), name)))
        })
        .collect();
    Ok((LogicalPlan::SubqueryAlias(aliased), keys))
}

/// A projection of `exprs` over `input` that also carries `keys` (read over `input`) as
/// columns, with the keys as they read over it.
fn project_keys(
    mut exprs: Vec<Expr>,
    input: LogicalPlan,
    keys: &[SortExpr],
) -> Result<(LogicalPlan, Vec<SortExpr>)> {
    let mut carried = Vec::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        let name = format!("{ORDER_KEY}{i}");
        exprs.push(key.expr.clone().alias(&name));
        carried.push(key.with_expr(Expr::Column(Column::new_unqualified(name))));
    }
    let projection = Projection::try_new(exprs, Arc::new(input))?;
    Ok((LogicalPlan::Projection(projection), carried))
}

/// Whether `key` is already a column that carries a key.
fn is_carried(key: &SortExpr) -> bool {
    matches!(&key.expr, Expr::Column(column)
        if column.relation.is_none() && column.name.starts_with(ORDER_KEY))
}

fn columns_of(schema: &DFSchemaRef) -> Vec<Expr> {
    schema.columns().into_iter().map(Expr::Column).collect()
}
