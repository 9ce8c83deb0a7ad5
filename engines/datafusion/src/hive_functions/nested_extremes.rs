//! `max` and `min` of structs and arrays compared as Spark compares them: field by field
//! (element by element, a shorter array first), a NULL field or element the smallest value.
//! DataFusion's `max` and `min` take a NULL field for the greatest, so that
//! `max(struct(salary, name))` was the row without a salary.

use std::sync::{Arc, OnceLock};

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::{AggregateFunction, WindowFunction};
use datafusion::logical_expr::{AggregateUDF, Expr, ExprSchemable, WindowFunctionDefinition};

use crate::spark_aggregates::SparkAggregate;

/// Makes each `max(x)` and `min(x)` of a struct or an array `max_by(x, x)` and
/// `min_by(x, x)` ([`super::extremes`]), which order by Arrow's comparator with NULLs
/// first, as Spark orders, and skip a NULL `x`, as `max` does; over a window too (over a
/// frame that slides, computed again as it moves: [`SparkAggregate`]). The column keeps its
/// name. An analyzer rule placed after type coercion, which has given the
/// arguments their types.
pub const NESTED_EXTREMES: crate::hive_syntax::ExpressionRewrite =
    crate::hive_syntax::ExpressionRewrite::new("nested_extremes", nested_extreme);

/// `max_by` or `min_by` in place of `max` or `min` of a `t`, if `t` is nested.
fn replacement(name: &str, t: &DataType) -> Option<Arc<AggregateUDF>> {
    static BY: OnceLock<Vec<Arc<AggregateUDF>>> = OnceLock::new();
    if !matches!(
        t,
        DataType::Struct(_)
            | DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(..)
    ) {
        return None;
    }
    let by = BY.get_or_init(|| {
        super::extremes::aggregates()
            .into_iter()
            .map(|by| Arc::new(AggregateUDF::new_from_impl(SparkAggregate::new(by, false))))
            .collect()
    });
    let wanted = match name {
        "max" => "max_by",
        "min" => "min_by",
        _ => return None,
    };
    by.iter().find(|f| f.name() == wanted).cloned()
}

fn nested_extreme(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    match expr {
        Expr::AggregateFunction(AggregateFunction { func, mut params })
            if params.args.len() == 1 =>
        {
            let t = params.args[0].get_type(schema)?;
            let Some(by) = replacement(func.name(), &t) else {
                return Ok(Transformed::no(Expr::AggregateFunction(
                    AggregateFunction { func, params },
                )));
            };
            params.args.push(params.args[0].clone());
            Ok(Transformed::yes(Expr::AggregateFunction(
                AggregateFunction { func: by, params },
            )))
        }
        Expr::WindowFunction(mut window) => {
            let WindowFunction { fun, params } = window.as_mut();
            let by = match fun {
                WindowFunctionDefinition::AggregateUDF(f) if params.args.len() == 1 => {
                    replacement(f.name(), &params.args[0].get_type(schema)?)
                }
                _ => None,
            };
            let Some(by) = by else {
                return Ok(Transformed::no(Expr::WindowFunction(window)));
            };
            *fun = WindowFunctionDefinition::AggregateUDF(by);
            params.args.push(params.args[0].clone());
            Ok(Transformed::yes(Expr::WindowFunction(window)))
        }
        expr => Ok(Transformed::no(expr)),
    }
}

#[cfg(test)]
mod tests;
