//! Integer literals are `INT`s when they fit one, as in Hive and Spark, where DataFusion reads
//! every integer literal as a `BIGINT`: `SELECT 1` is an `INT`, `int_col + 1` and
//! `coalesce(int_col, 0)` stay `INT`s (a table created from them too), `typeof(1)` is
//! `int`, and `'9999999999' > 1` reads the string as an `INT` (NULL, as Spark's).
//!
//! An analyzer rule ahead of type coercion, so that coercion sees the literal's type as
//! Spark's planner would. A literal keeps DataFusion's `BIGINT` where the `INT` could change
//! what is asked rather than the answer's type:
//! - an argument a function (scalar, aggregate or window) would cast to another type anyway
//!   (`round(x, 2)` of a function that takes a `BIGINT` there): a literal a function reads
//!   as a setting stays a literal of the type it is read as;
//! - `count(1)`, which is DataFusion's `count(*)`, and every literal of an aggregate that
//!   calls `grouping()`, which finds its argument among the grouping set's keys as planned;
//! - a lambda nested in another; a lambda's parameters are typed again from the
//!   function's values (`aggregate(a, 0, ...)`'s start among them);
//! - a `LIMIT`, a `VALUES` column with a value that needs a `BIGINT` (`VALUES (1),
//!   (3000000000)`), and a statement with a recursive query, whose working table was typed
//!   with the `BIGINT`s.
//!
//! Each plan node's schema is made again from its inputs' (a union's and a `VALUES` list's
//! too), its columns keep their names, a subquery's outer columns take their new types, and
//! an `INSERT`'s values still reach the table as its columns' types.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, DFSchema, Result, ScalarValue};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::expr::{
    GroupingSet, HigherOrderFunction, Lambda, ScalarFunction, Sort,
};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::logical_plan::{DmlStatement, Subquery, Union, Values};
use datafusion::logical_expr::type_coercion::binary::type_union_resolution;
use datafusion::logical_expr::type_coercion::functions::{fields_with_udf, UDFCoercionExt};
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{
    Expr, ExprSchemable, LogicalPlan, LogicalPlanBuilder, WindowFunctionDefinition,
};
use datafusion::optimizer::AnalyzerRule;

/// Types the integer literals that fit an `INT` as `INT`s.
#[derive(Debug, Default)]
pub struct IntegerLiterals;

impl AnalyzerRule for IntegerLiterals {
    fn name(&self) -> &str {
        "integer_literals"
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        if !holds_a_narrowable_literal(&plan) || holds_a_recursive_query(&plan) {
            return Ok(plan);
        }
        match plan {
            LogicalPlan::Dml(dml) => insert_as_before(dml),
            plan => narrow_plan(plan),
        }
    }
}

/// The plan with its literals narrowed, each node's schema made again over its inputs'.
fn narrow_plan(plan: LogicalPlan) -> Result<LogicalPlan> {
    plan.transform_up_with_subqueries(|plan| match plan {
        LogicalPlan::Limit(_) => Ok(Transformed::no(plan)),
        LogicalPlan::Values(values) => narrow_values(values).map(Transformed::yes),
        LogicalPlan::Union(union) => union_retyped(union).map(Transformed::yes),
        plan => {
            // What the node's expressions are read against: its inputs' schemas, side by side.
            let schema = merge_schema(&plan.inputs());
            let planned = Arc::clone(plan.schema());
            // A column keeps its name (`avg(CASE ... Int64(1) ...)`), which the plans
            // above read it by.
            let names = NamePreserver::new(&plan);
            // `grouping(x)` must name `x` as the grouping set does, both as planned.
            let left_as_planned = calls_grouping(&plan);
            plan.map_expressions(|expr| {
                if left_as_planned {
                    return Ok(Transformed::no(expr));
                }
                if let Expr::GroupingSet(set) = expr {
                    return narrow_grouping_set(set, &schema);
                }
                let name = names.save(&expr);
                let expr = outer_references_retyped(expr, &schema)?;
                narrow(expr, &schema).map(|expr| expr.update_data(|expr| name.restore(expr)))
            })?
            .map_data(LogicalPlan::recompute_schema)?
            .transform_data(|plan| named_as_planned(plan, &planned))
        }
    })
    .map(|transformed| transformed.data)
}

/// Whether `plan` is an aggregate that calls `grouping` (`grouping_id()` and Hive's
/// `GROUPING__ID` do), which DataFusion resolves against the grouping set's expressions: its
/// expressions keep their `BIGINT` literals, the calls' and the set's alike.
fn calls_grouping(plan: &LogicalPlan) -> bool {
    let LogicalPlan::Aggregate(aggregate) = plan else {
        return false;
    };
    aggregate.aggr_expr.iter().any(|expr| {
        expr.exists(|e| {
            Ok(matches!(e, Expr::AggregateFunction(call) if call.func.name() == "grouping"))
        })
        .unwrap_or(true)
    })
}

/// A grouping set (`ROLLUP (a, b % 2)`) with each expression narrowed. Its columns are named
/// by the expressions it holds, which no alias can keep: [`named_as_planned`] renames them
/// above the aggregate.
fn narrow_grouping_set(set: GroupingSet, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let narrow_all = |exprs: Vec<Expr>| -> Result<Vec<Expr>> {
        exprs
            .into_iter()
            .map(|expr| narrow(expr, schema).map(|expr| expr.data))
            .collect()
    };
    let set = match set {
        GroupingSet::Rollup(exprs) => GroupingSet::Rollup(narrow_all(exprs)?),
        GroupingSet::Cube(exprs) => GroupingSet::Cube(narrow_all(exprs)?),
        GroupingSet::GroupingSets(sets) => {
            GroupingSet::GroupingSets(sets.into_iter().map(narrow_all).collect::<Result<_>>()?)
        }
    };
    Ok(Transformed::yes(Expr::GroupingSet(set)))
}

/// An aggregate whose grouping set's columns were renamed by the narrowing, under a
/// projection that gives each column the name it was planned with, which the plans above
/// read it by; any other plan as it is.
fn named_as_planned(plan: LogicalPlan, planned: &DFSchema) -> Result<Transformed<LogicalPlan>> {
    let renamed = plan.schema().fields().len() == planned.fields().len()
        && plan
            .schema()
            .iter()
            .zip(planned.iter())
            .any(|((q, f), (pq, pf))| q != pq || f.name() != pf.name());
    if !matches!(plan, LogicalPlan::Aggregate(_)) || !renamed {
        return Ok(Transformed::no(plan));
    }
    let columns = plan
        .schema()
        .iter()
        .zip(planned.iter())
        .map(|((qualifier, field), (planned_qualifier, planned_field))| {
            Expr::Column(Column::from((qualifier, field)))
                .alias_qualified(planned_qualifier.cloned(), planned_field.name())
        })
        .collect::<Vec<_>>();
    LogicalPlanBuilder::from(plan)
        .project(columns)?
        .build()
        .map(Transformed::yes)
}

/// A DML statement's input narrowed, its columns then cast back to the types the statement
/// was planned with: the table's, which `INSERT INTO t VALUES (1)` of a `BIGINT` column
/// had given its values already.
fn insert_as_before(dml: DmlStatement) -> Result<LogicalPlan> {
    let planned = Arc::clone(dml.input.schema());
    let input = narrow_plan(Arc::unwrap_or_clone(dml.input))?;
    let input = if input.schema().as_ref() == planned.as_ref() {
        input
    } else {
        let columns = input
            .schema()
            .columns()
            .into_iter()
            .zip(planned.fields())
            .map(|(column, field)| {
                Expr::Column(column.clone())
                    .cast_to(field.data_type(), input.schema())
                    .map(|cast| cast.alias(column.name))
            })
            .collect::<Result<Vec<_>>>()?;
        LogicalPlanBuilder::from(input).project(columns)?.build()?
    };
    Ok(LogicalPlan::Dml(DmlStatement {
        input: Arc::new(input),
        ..dml
    }))
}

/// The type `expr`, planned as `planned`, has once this rule has run: a literal's that
/// fits an `INT` is `INT` (`'9999999999' = 1` reads the string as an `INT`, as Spark).
pub(crate) fn type_once_narrowed(expr: &Expr, planned: &DataType) -> DataType {
    match as_int(expr) {
        Some(_) => DataType::Int32,
        None => planned.clone(),
    }
}

/// The `INT` a `BIGINT` literal fits, if it is one.
fn as_int(expr: &Expr) -> Option<i32> {
    match expr {
        Expr::Literal(ScalarValue::Int64(Some(value)), _) => i32::try_from(*value).ok(),
        _ => None,
    }
}

fn int_literal(expr: &Expr, value: i32) -> Expr {
    let metadata = match expr {
        Expr::Literal(_, metadata) => metadata.clone(),
        _ => None,
    };
    Expr::Literal(ScalarValue::Int32(Some(value)), metadata)
}

fn holds_a_narrowable_literal(plan: &LogicalPlan) -> bool {
    any_node(plan, |node| {
        let mut found = false;
        let _ = node.apply_expressions(|expr| {
            found = expr.exists(|e| Ok(as_int(e).is_some()))?;
            Ok(if found {
                TreeNodeRecursion::Stop
            } else {
                TreeNodeRecursion::Continue
            })
        });
        found
    })
}

fn holds_a_recursive_query(plan: &LogicalPlan) -> bool {
    any_node(plan, |node| matches!(node, LogicalPlan::RecursiveQuery(_)))
}

/// Whether any node of `plan`, its subqueries' included, is one that `test` picks.
fn any_node(plan: &LogicalPlan, mut test: impl FnMut(&LogicalPlan) -> bool) -> bool {
    let mut found = false;
    let _ = plan.apply_with_subqueries(|node| {
        found = test(node);
        Ok(if found {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    });
    found
}

/// `expr` with its literals narrowed where the `INT` only changes the answer's type.
fn narrow(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    if let Some(value) = as_int(&expr) {
        return Ok(Transformed::yes(int_literal(&expr, value)));
    }
    match expr {
        Expr::HigherOrderFunction(function) => {
            let original = Expr::HigherOrderFunction(function.clone());
            // A lambda whose parameters cannot be typed again is left as it was planned.
            Ok(narrow_higher_order(function, schema)
                .map(Transformed::yes)
                .unwrap_or_else(|_| Transformed::no(original)))
        }
        Expr::Lambda(_) => Ok(Transformed::no(expr)),
        Expr::ScalarFunction(ScalarFunction { func, args }) if func.name() == "get_field" => {
            let args = args
                .into_iter()
                .map(|arg| narrow(arg, schema).map(|arg| arg.data))
                .collect::<Result<Vec<_>>>()?;
            let args = map_key_retyped(args, schema);
            Ok(Transformed::yes(Expr::ScalarFunction(ScalarFunction {
                func,
                args,
            })))
        }
        Expr::ScalarFunction(ScalarFunction { func, args }) => {
            Ok(narrow_arguments(func.as_ref(), args, schema)?
                .update_data(|args| Expr::ScalarFunction(ScalarFunction { func, args })))
        }
        // `count(1)` is how DataFusion writes `count(*)`, which its statistics answer.
        Expr::AggregateFunction(mut function) if function.func.name() != "count" => {
            let args = std::mem::take(&mut function.params.args);
            let args = narrow_arguments(function.func.as_ref(), args, schema)?;
            function.params.args = args.data;
            let mut transformed = args.transformed;
            // Its FILTER and ORDER BY, which are not arguments.
            if let Some(filter) = function.params.filter.take() {
                let filter = narrow(*filter, schema)?;
                transformed |= filter.transformed;
                function.params.filter = Some(Box::new(filter.data));
            }
            transformed |= narrow_sort_keys(&mut function.params.order_by, schema)?;
            Ok(Transformed::new_transformed(
                Expr::AggregateFunction(function),
                transformed,
            ))
        }
        Expr::WindowFunction(mut function) => {
            let args = std::mem::take(&mut function.params.args);
            let args = match &function.fun {
                WindowFunctionDefinition::AggregateUDF(udaf) if udaf.name() != "count" => {
                    narrow_arguments(udaf.as_ref(), args, schema)?
                }
                WindowFunctionDefinition::WindowUDF(udwf) => {
                    narrow_arguments(udwf.as_ref(), args, schema)?
                }
                WindowFunctionDefinition::AggregateUDF(_) => Transformed::no(args),
            };
            function.params.args = args.data;
            let mut transformed = args.transformed;
            // Its PARTITION BY and ORDER BY, which are not arguments.
            for key in &mut function.params.partition_by {
                let narrowed = narrow(
                    std::mem::replace(key, Expr::Literal(ScalarValue::Null, None)),
                    schema,
                )?;
                transformed |= narrowed.transformed;
                *key = narrowed.data;
            }
            transformed |= narrow_sort_keys(&mut function.params.order_by, schema)?;
            Ok(Transformed::new_transformed(
                Expr::WindowFunction(function),
                transformed,
            ))
        }
        expr => expr.map_children(|child| narrow(child, schema)),
    }
}

/// `transform(array(1, 2), x -> x + 1)` narrowed: its values (`aggregate`'s start too, so
/// that `aggregate(array(1, 2), 0, (acc, x) -> acc + x)` is an `INT`, as Spark's), then its
/// lambdas' parameters typed again from them
/// (they were typed when the query was planned) and, where no lambda is nested in another,
/// the lambdas' bodies.
fn narrow_higher_order(function: HigherOrderFunction, schema: &DFSchema) -> Result<Expr> {
    let HigherOrderFunction { func, args } = function;
    let args = args
        .into_iter()
        .map(|arg| match arg {
            Expr::Lambda(_) => Ok(arg),
            arg => narrow(arg, schema).map(|arg| arg.data),
        })
        .collect::<Result<Vec<_>>>()?;
    let expr = Expr::HigherOrderFunction(HigherOrderFunction { func, args })
        .resolve_lambda_variables(schema)?
        .data;
    let Expr::HigherOrderFunction(HigherOrderFunction { func, args }) = expr else {
        return Ok(expr);
    };
    let args = args
        .into_iter()
        .map(|arg| match arg {
            Expr::Lambda(Lambda { params, body }) if !holds_a_lambda(&body) => {
                narrow(*body, schema).map(|body| {
                    Expr::Lambda(Lambda {
                        params,
                        body: Box::new(body.data),
                    })
                })
            }
            arg => Ok(arg),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(
        Expr::HigherOrderFunction(HigherOrderFunction { func, args })
            .resolve_lambda_variables(schema)?
            .data,
    )
}

fn holds_a_lambda(expr: &Expr) -> bool {
    expr.exists(|e| Ok(matches!(e, Expr::HigherOrderFunction(_) | Expr::Lambda(_))))
        .unwrap_or(true)
}

/// A function's arguments narrowed: a literal one only where the function takes the `INT`
/// as it is (as `coalesce(int_col, 0)` does, where `round(d, 2)` may cast it).
fn narrow_arguments<F: UDFCoercionExt>(
    func: &F,
    args: Vec<Expr>,
    schema: &DFSchema,
) -> Result<Transformed<Vec<Expr>>> {
    let mut transformed = false;
    let mut candidates = Vec::with_capacity(args.len());
    let mut literals = Vec::new();
    for (i, arg) in args.into_iter().enumerate() {
        match as_int(&arg) {
            Some(value) => {
                literals.push((i, arg.clone()));
                candidates.push(int_literal(&arg, value));
            }
            None => {
                let arg = narrow(arg, schema)?;
                transformed |= arg.transformed;
                candidates.push(arg.data);
            }
        }
    }
    if literals.is_empty() {
        return Ok(Transformed::new_transformed(candidates, transformed));
    }
    let taken = arguments_taken(func, &candidates, schema);
    for (i, literal) in literals {
        if taken.as_ref().and_then(|types| types.get(i)) == Some(&DataType::Int32) {
            transformed = true;
        } else {
            candidates[i] = literal;
        }
    }
    Ok(Transformed::new_transformed(candidates, transformed))
}

/// Narrows the keys of an aggregate's or a window's `ORDER BY` in place; whether any was.
fn narrow_sort_keys(keys: &mut [Sort], schema: &DFSchema) -> Result<bool> {
    let mut transformed = false;
    for sort in keys {
        let narrowed = narrow(
            std::mem::replace(&mut sort.expr, Expr::Literal(ScalarValue::Null, None)),
            schema,
        )?;
        transformed |= narrowed.transformed;
        sort.expr = narrowed.data;
    }
    Ok(transformed)
}

/// The types `func` takes `args` as, after its coercion; `None` when they cannot be known.
fn arguments_taken<F: UDFCoercionExt>(
    func: &F,
    args: &[Expr],
    schema: &DFSchema,
) -> Option<Vec<DataType>> {
    let fields = args
        .iter()
        .map(|arg| arg.to_field(schema).map(|(_, field)| field))
        .collect::<Result<Vec<_>>>()
        .ok()?;
    let taken = fields_with_udf(&fields, func).ok()?;
    Some(taken.iter().map(|f| f.data_type().clone()).collect())
}

/// `get_field(m, key)` with a literal key of a map typed as the map's keys now are: the
/// planner typed it as they were then (`map(1, 'a')['1']`'s key a `BIGINT`, and a key that
/// converts to none, `['x']`, a `BIGINT` NULL).
fn map_key_retyped(mut args: Vec<Expr>, schema: &DFSchema) -> Vec<Expr> {
    let key_type = match args.first().map(|map| map.get_type(schema)) {
        Some(Ok(DataType::Map(entries, _))) => match entries.data_type() {
            DataType::Struct(fields) => fields.first().map(|key| key.data_type().clone()),
            _ => None,
        },
        _ => None,
    };
    if let (Some(key_type), Some(Expr::Literal(key, _))) = (key_type, args.get_mut(1)) {
        if key.data_type().is_integer() && key.data_type() != key_type {
            if let Ok(retyped) = key.cast_to(&key_type) {
                *key = retyped;
            }
        }
    }
    args
}

/// A union whose columns are typed as its first input's now are, where DataFusion's
/// `recompute_schema` keeps the types it was planned with; type coercion then finds the
/// type every input fits (`SELECT 1 UNION SELECT 2` is an `INT`, `SELECT 1 UNION SELECT
/// bigint_col` a `BIGINT`).
fn union_retyped(union: Union) -> Result<LogicalPlan> {
    let Union { inputs, schema } = union;
    let first = inputs[0].schema();
    let fields = schema
        .iter()
        .zip(first.fields())
        .map(|((qualifier, field), now)| {
            let field =
                if field.data_type() == &DataType::Int64 && now.data_type() == &DataType::Int32 {
                    Arc::new(field.as_ref().clone().with_data_type(DataType::Int32))
                } else {
                    Arc::clone(field)
                };
            (qualifier.cloned(), field)
        })
        .collect::<Vec<_>>();
    let schema = DFSchema::new_with_metadata(fields, schema.metadata().clone())?;
    Ok(LogicalPlan::Union(Union {
        inputs,
        schema: Arc::new(schema),
    }))
}

/// `expr` with the outer columns its subqueries read typed as `outer` (the schema `expr` is
/// read against) now types them: `(SELECT ... WHERE x > t.k)` over `SELECT 1 AS k`, whose
/// subquery was planned with `k` a `BIGINT`.
fn outer_references_retyped(expr: Expr, outer: &DFSchema) -> Result<Expr> {
    let retyped = |subquery: Subquery| -> Result<Subquery> {
        let retype = |expr: Expr| {
            expr.transform(|expr| match &expr {
                Expr::OuterReferenceColumn(field, column) => {
                    match outer
                        .qualified_field_from_column(column)
                        .map(|(_, field)| field)
                    {
                        Ok(now) if now.data_type() != field.data_type() => {
                            let field = field
                                .as_ref()
                                .clone()
                                .with_data_type(now.data_type().clone());
                            Ok(Transformed::yes(Expr::OuterReferenceColumn(
                                Arc::new(field),
                                column.clone(),
                            )))
                        }
                        _ => Ok(Transformed::no(expr)),
                    }
                }
                _ => Ok(Transformed::no(expr)),
            })
        };
        let plan = Arc::unwrap_or_clone(subquery.subquery)
            .transform_up_with_subqueries(|node| {
                node.map_expressions(retype)?
                    .map_data(LogicalPlan::recompute_schema)
            })?
            .data;
        let outer_ref_columns = subquery
            .outer_ref_columns
            .into_iter()
            .map(|column| retype(column).map(|column| column.data))
            .collect::<Result<Vec<_>>>()?;
        Ok(Subquery {
            subquery: Arc::new(plan),
            outer_ref_columns,
            spans: subquery.spans,
        })
    };
    expr.transform(|expr| {
        Ok(match expr {
            Expr::ScalarSubquery(subquery) => {
                Transformed::yes(Expr::ScalarSubquery(retyped(subquery)?))
            }
            Expr::Exists(mut exists) => {
                exists.subquery = retyped(exists.subquery)?;
                Transformed::yes(Expr::Exists(exists))
            }
            Expr::InSubquery(mut in_subquery) => {
                in_subquery.subquery = retyped(in_subquery.subquery)?;
                Transformed::yes(Expr::InSubquery(in_subquery))
            }
            Expr::SetComparison(mut comparison) => {
                comparison.subquery = retyped(comparison.subquery)?;
                Transformed::yes(Expr::SetComparison(comparison))
            }
            expr => Transformed::no(expr),
        })
    })
    .map(|expr| expr.data)
}

/// A `VALUES` list with its columns narrowed: each value narrowed as an expression is
/// (`VALUES (1), (2)` and `VALUES (array(10, 20)), (array())` are `INT`s), and the column
/// typed as the values' common type, as DataFusion typed it when it was planned. A column
/// of a value that needs a `BIGINT` (`VALUES (1), (3000000000)`) stays one.
fn narrow_values(values: Values) -> Result<LogicalPlan> {
    let Values { schema, mut values } = values;
    let empty = DFSchema::empty();
    let mut fields = Vec::with_capacity(schema.fields().len());
    for (j, field) in schema.fields().iter().enumerate() {
        let planned = field.data_type();
        let column = holds_bigint(planned)
            .then(|| narrowed_column(values.iter().map(|row| &row[j]), planned, &empty))
            .transpose()?
            .flatten();
        match column {
            Some((data_type, narrowed)) => {
                for (row, value) in values.iter_mut().zip(narrowed) {
                    row[j] = value;
                }
                fields.push(Arc::new(field.as_ref().clone().with_data_type(data_type)));
            }
            None => fields.push(Arc::clone(field)),
        }
    }
    let qualified = schema
        .iter()
        .zip(fields)
        .map(|((qualifier, _), field)| (qualifier.cloned(), field))
        .collect::<Vec<_>>();
    let schema = DFSchema::new_with_metadata(qualified, schema.metadata().clone())?;
    Ok(LogicalPlan::Values(Values {
        schema: Arc::new(schema),
        values,
    }))
}

/// The common type of a `VALUES` column's values once narrowed, and the values cast to it;
/// `None` where that is the type it was planned with. A cast DataFusion wrapped a value in
/// to reach the `planned` type (`array()` beside `array(1)`) is taken off first: one the
/// query wrote (`CAST(1 AS BIGINT)`) is of a value already of its type, and stays.
fn narrowed_column<'a>(
    column: impl Iterator<Item = &'a Expr>,
    planned: &DataType,
    empty: &DFSchema,
) -> Result<Option<(DataType, Vec<Expr>)>> {
    let mut narrowed = Vec::new();
    let mut common: Option<DataType> = None;
    for value in column {
        let value = match value {
            Expr::Cast(cast)
                if cast.field.data_type() == planned && cast.expr.get_type(empty)? != *planned =>
            {
                cast.expr.as_ref().clone()
            }
            value => value.clone(),
        };
        let value = match value {
            Expr::Literal(ref scalar, _) if scalar.is_null() => None,
            value => Some(narrow(value, empty)?.data),
        };
        if let Some(value) = &value {
            let data_type = value.get_type(empty)?;
            common = match common {
                None => Some(data_type),
                Some(before) => match type_union_resolution(&[before, data_type]) {
                    Some(union) => Some(union),
                    None => return Ok(None),
                },
            };
        }
        narrowed.push(value);
    }
    let Some(common) = common.filter(|common| common != planned) else {
        return Ok(None);
    };
    let values = narrowed
        .into_iter()
        .map(|value| match value {
            Some(value) => value.cast_to(&common, empty),
            None => Ok(Expr::Literal(ScalarValue::try_from(&common)?, None)),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Some((common, values)))
}

/// Whether a value of this type may hold a `BIGINT` that narrowing makes an `INT`.
fn holds_bigint(data_type: &DataType) -> bool {
    match data_type {
        DataType::Int64 => true,
        DataType::List(item) | DataType::LargeList(item) | DataType::FixedSizeList(item, _) => {
            holds_bigint(item.data_type())
        }
        DataType::Struct(fields) => fields.iter().any(|f| holds_bigint(f.data_type())),
        DataType::Map(entries, _) => holds_bigint(entries.data_type()),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
