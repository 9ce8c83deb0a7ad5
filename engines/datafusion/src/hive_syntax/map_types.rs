//! `MAP<K, V>` as a column's type (`CREATE TABLE t (props MAP<STRING, INT>)`) and in a
//! `CAST`, as Hive and Spark write it: the engine's dialect parses it
//! ([`super::lambdas::LambdaDialect`]) and [`MapTypes`] plans it, since DataFusion's planner
//! has no SQL type for a map and refused it.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::planner::TypePlanner;
use datafusion::sql::sqlparser::ast::DataType as SqlType;

use crate::hive_functions::json_values::arrow_type;

/// Plans `MAP<K, V>` as Arrow's map of `K` keys (never NULL) to `V` values, the layout the
/// engine's `map(...)` builds; every other type is left to DataFusion.
#[derive(Debug)]
pub struct MapTypes;

impl TypePlanner for MapTypes {
    #[allow(deprecated)]
    fn plan_type(&self, sql_type: &SqlType) -> Result<Option<DataType>> {
        let SqlType::Map(key, value) = sql_type else {
            return Ok(None);
        };
        let typed = |sql: &SqlType| {
            arrow_type(sql).map_err(|why| {
                DataFusionError::Plan(format!("cannot read the type {sql_type}: {why}"))
            })
        };
        let entries = Field::new(
            "entries",
            DataType::Struct(Fields::from(vec![
                Field::new("key", typed(key)?, false),
                Field::new("value", typed(value)?, true),
            ])),
            false,
        );
        Ok(Some(DataType::Map(Arc::new(entries), false)))
    }
}
