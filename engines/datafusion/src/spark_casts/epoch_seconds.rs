//! Casts between numbers and timestamps count seconds since 1970-01-01 00:00:00 UTC, as in
//! Hive and Spark, where DataFusion counts its timestamps' nanoseconds (a timestamp being the
//! session's wall-clock time, [`crate::time_zones`]):
//!
//! - `CAST(1704164645 AS TIMESTAMP)` is `2024-01-02 03:04:05` (DataFusion's was
//!   `1970-01-01 00:00:01.704164645`); a fractional number keeps its microseconds, as Spark's
//!   `timestamp_seconds` does (`CAST(1.5 AS TIMESTAMP)` is `1970-01-01 00:00:01.5`);
//! - `CAST(ts AS DOUBLE)` is the seconds with their fraction (DataFusion's were nanoseconds);
//!   `CAST(ts AS BIGINT)` and the other integers, the whole seconds rounded down, are Hive's
//!   integer casts' (`hive_syntax`), which narrow them as Java does.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::TryCast;
use datafusion::logical_expr::{cast, lit, try_cast, Expr, ExprSchemable};

use crate::hive_functions::epochs::{count_of, of_seconds};

/// Rewrites each cast between a number and a timestamp to count seconds.
pub const SPARK_EPOCH_CASTS: crate::hive_syntax::ExpressionRewrite =
    crate::hive_syntax::ExpressionRewrite::new("spark_epoch_casts", epoch_seconds);

fn epoch_seconds(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    // A SQL `CAST` is a `TRY_CAST` by now; the plain casts between the two that the engine's
    // own functions build (`timestamp_seconds`, `unix_timestamp`) count in their own units.
    let Expr::TryCast(TryCast { expr: value, field }) = &expr else {
        return Ok(Transformed::no(expr));
    };
    let target = field.data_type();
    let Ok(source) = value.get_type(schema) else {
        return Ok(Transformed::no(expr));
    };
    let value = value.as_ref().clone();
    let converted = match (&source, target) {
        (number, DataType::Timestamp(..)) if number.is_numeric() => {
            cast(of_seconds(value, number), target.clone())
        }
        (DataType::Timestamp(..), number) if number.is_floating() => {
            // Spark's microseconds over a million, which a DOUBLE holds exactly (the
            // nanoseconds it would round).
            let micros = cast(count_of(value, 1_000), DataType::Float64);
            try_cast(micros / lit(1e6), number.clone())
        }
        _ => return Ok(Transformed::no(expr)),
    };
    Ok(Transformed::yes(converted))
}
