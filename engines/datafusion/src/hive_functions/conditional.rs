//! Hive's conditional functions: `if`, `isnull`, `isnotnull`.

use datafusion::arrow::datatypes::DataType;
use datafusion::error::Result;
use datafusion::logical_expr::type_coercion::binary::type_union_resolution;
use datafusion::logical_expr::{when, Expr, ScalarUDF};

use super::{bad_arguments, Rewrite};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        Rewrite::new("if", coerce_if, |types| Ok(types[1].clone()), rewrite_if).udf(),
        Rewrite::new("isnull", any_one, boolean, |mut args, _| {
            Ok(args.remove(0).is_null())
        })
        .udf(),
        Rewrite::new("isnotnull", any_one, boolean, |mut args, _| {
            Ok(args.remove(0).is_not_null())
        })
        .udf(),
    ]
}

/// `if(condition, then, else)`: a `CASE`, so that only the chosen branch is evaluated
/// (`if(d = 0, NULL, n / d)` does not divide by zero); a NULL condition takes `else`, as in
/// Hive. The branches take their common type.
fn rewrite_if(mut args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    let otherwise = args.pop().expect("three arguments");
    let then = args.pop().expect("three arguments");
    let condition = args.pop().expect("three arguments");
    when(condition, then).otherwise(otherwise)
}

fn coerce_if(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let takes = "(boolean condition, value if true, value if false)";
    if types.len() != 3 {
        return Err(bad_arguments(name, takes, types));
    }
    if !matches!(types[0], DataType::Boolean | DataType::Null) {
        return Err(bad_arguments(name, takes, types));
    }
    let branches = type_union_resolution(&types[1..])
        .ok_or_else(|| bad_arguments(name, "two values of one type after its condition", types))?;
    Ok(vec![DataType::Boolean, branches.clone(), branches])
}

fn any_one(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] => Ok(vec![t.clone()]),
        _ => Err(bad_arguments(name, "one value", types)),
    }
}

fn boolean(_: &[DataType]) -> Result<DataType> {
    Ok(DataType::Boolean)
}
