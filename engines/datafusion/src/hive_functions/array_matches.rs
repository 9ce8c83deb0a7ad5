//! Spark's `array_remove` and `array_contains`, which compare an array's elements with a
//! value: every equal element removed (DataFusion's `array_remove` removes the first), and
//! membership that is NULL where a NULL element might have been the value.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::functions_nested::expr_fn::{array_has, array_position, array_remove_all};
use datafusion::logical_expr::type_coercion::binary::type_union_resolution;
use datafusion::logical_expr::{cast, lit, when, Expr, ScalarUDF};

use super::arrays::{element_type, is_list, list_type};
use super::{bad_arguments, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::rewrite(
            "array_remove",
            array_and_element,
            |t| Ok(t[0].clone()),
            // array_remove_all is NULL for a NULL array or value, and finds NaN, as Spark.
            |a, _| Ok(array_remove_all(a[0].clone(), a[1].clone())),
        )
        .udf(),
        HiveFunction::rewrite(
            "array_contains",
            array_and_element,
            |_| Ok(DataType::Boolean),
            contains,
        )
        .udf(),
    ]
}

/// An array and a value, as an array of their common type and a value of it.
fn array_and_element(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let common = match types {
        [a, x] if is_list(a) => type_union_resolution(&[element_type(&list_type(a)), x.clone()]),
        _ => None,
    };
    match common {
        Some(common) => Ok(vec![DataType::new_list(common.clone(), true), common]),
        None => Err(bad_arguments(
            name,
            "(array, value of its elements' type)",
            types,
        )),
    }
}

/// `array_contains(a, x)`: true when an element equals `x`; else NULL when one is NULL (it
/// might have been `x`), false when none is; NULL for a NULL `a` or `x`.
fn contains(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let [a, x] = [args[0].clone(), args[1].clone()];
    let null_element = cast(lit(ScalarValue::Null), types[1].clone());
    // array_position finds a NULL element where array_has does not.
    when(
        a.clone().is_null().or(x.clone().is_null()),
        lit(ScalarValue::Boolean(None)),
    )
    .when(array_has(a.clone(), x), lit(true))
    .when(
        array_position(a, null_element, lit(1i64)).is_not_null(),
        lit(ScalarValue::Boolean(None)),
    )
    .otherwise(lit(false))
}

#[cfg(test)]
mod tests;
