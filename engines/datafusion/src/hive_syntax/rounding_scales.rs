//! Spark's `ceil(x, d)` and `floor(x, d)`, which the parser reads as its own `CEIL(x, d)`
//! syntax and DataFusion refuses ("CEIL with scale is not supported"), as calls of the
//! two-argument `ceil` and `floor` ([`crate::hive_functions::decimal_places`]).

use datafusion::sql::sqlparser::ast::{CeilFloorKind, Expr};

use super::function_call;

/// `CEIL(x, d)` or `FLOOR(x, d)` as the call `ceil(x, d)` or `floor(x, d)`.
pub(super) fn as_call(expr: &mut Expr) {
    let (name, value, scale) = match expr {
        Expr::Ceil {
            expr: value,
            field: CeilFloorKind::Scale(scale),
        } => ("ceil", value, scale),
        Expr::Floor {
            expr: value,
            field: CeilFloorKind::Scale(scale),
        } => ("floor", value, scale),
        _ => return,
    };
    let args = vec![value.as_ref().clone(), Expr::Value(scale.clone())];
    *expr = function_call(name, args);
}
