//! Hive's arithmetic functions DataFusion lacks: `pmod`.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use datafusion::functions::expr_fn::nullif;
use datafusion::logical_expr::type_coercion::binary::type_union_resolution;
use datafusion::logical_expr::{lit, Expr, ScalarUDF};

use super::{bad_arguments, Rewrite};

pub fn functions() -> Vec<ScalarUDF> {
    vec![Rewrite::new("pmod", two_numbers, |t| Ok(t[0].clone()), pmod).udf()]
}

/// `pmod(a, b)`: `a` modulo `b`, never negative for a positive `b` (`pmod(-7, 3)` is 2
/// where `-7 % 3` is -1); NULL when `b` is 0, as in Hive, not a division error.
fn pmod(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let [a, b] = <[Expr; 2]>::try_from(args).expect("two arguments");
    let divisor = nullif(b, lit(ScalarValue::new_zero(&types[1])?));
    Ok(((a % divisor.clone()) + divisor.clone()) % divisor)
}

fn two_numbers(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let numeric = |t: &DataType| t.is_numeric() || t.is_null();
    match types {
        [a, b] if numeric(a) && numeric(b) => {
            let common = type_union_resolution(types)
                .filter(|t| t.is_numeric())
                .unwrap_or(DataType::Int64);
            Ok(vec![common.clone(), common])
        }
        _ => Err(bad_arguments(name, "two numbers", types)),
    }
}
