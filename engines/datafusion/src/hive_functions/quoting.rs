//! Hive's (and Spark 4's) `quote(s)`: the string between single quotes, each single quote
//! in it preceded by a backslash (`Don't` is `'Don\'t'`); NULL for NULL.

use datafusion::arrow::datatypes::DataType;
use datafusion::functions::expr_fn::replace;
use datafusion::logical_expr::{binary_expr, lit, Operator, ScalarUDF};

use super::{bad_arguments, is_string, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![HiveFunction::rewrite(
        "quote",
        |name, types| match types {
            [t] if is_string(t) || t.is_null() => Ok(vec![DataType::Utf8]),
            _ => Err(bad_arguments(name, "a string", types)),
        },
        |_| Ok(DataType::Utf8),
        // `||` keeps a NULL NULL.
        |a, _| {
            let escaped = replace(a[0].clone(), lit("'"), lit("\\'"));
            let opened = binary_expr(lit("'"), Operator::StringConcat, escaped);
            Ok(binary_expr(opened, Operator::StringConcat, lit("'")))
        },
    )
    .udf()]
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, open};

    // Spark 4's answers (Hive's documentation gives the same).
    #[tokio::test]
    async fn quote_escapes_single_quotes() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT quote('x'), quote('Don''t'), quote('a\\\\b'), quote(NULL)",
            &["'x'", "'Don\\'t'", "'a\\b'", "NULL"],
        )
        .await;
    }
}
