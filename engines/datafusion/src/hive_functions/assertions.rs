//! Spark's `assert_true(condition[, message])`: NULL when the condition is true, else the
//! query fails with the message, Spark's `'<condition>' is not true!` by default; and
//! `raise_error(message)`, which fails the query with the message wherever it is evaluated
//! (`CASE WHEN x < 0 THEN raise_error('negative') ELSE x END`).

use std::sync::Arc;

use datafusion::arrow::array::{new_null_array, Array, AsArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{lit, Expr, ScalarUDF, Signature, Volatility};

use super::{bad_arguments, is_string, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::rewrite(
            "assert_true",
            |name, types| match types {
                [c] if is_condition(c) => Ok(vec![DataType::Boolean]),
                [c, m] if is_condition(c) && (is_string(m) || m.is_null()) => {
                    Ok(vec![DataType::Boolean, DataType::Utf8])
                }
                _ => Err(bad_arguments(name, "(condition[, message])", types)),
            },
            |_| Ok(DataType::Null),
            // The message of a call without one names its condition, as the query wrote it.
            |mut args, _| {
                if args.len() == 1 {
                    let message = format!("'{}' is not true!", args[0].human_display());
                    args.push(lit(message));
                }
                Ok(Expr::ScalarFunction(ScalarFunction::new_udf(
                    Arc::new(checked_assertion()),
                    args,
                )))
            },
        )
        .udf(),
        HiveFunction::computed(
            "raise_error",
            |name, types| match types {
                [m] if is_string(m) || m.is_null() => Ok(vec![DataType::Utf8]),
                _ => Err(bad_arguments(name, "(message)", types)),
            },
            |_| Ok(DataType::Null),
            raise_error,
        )
        // Volatile, so that the planner never evaluates it ahead of the rows: a branch
        // that no row takes must not fail the query.
        .with_signature(Signature::user_defined(Volatility::Volatile))
        .udf(),
    ]
}

/// `raise_error(message)`: the query fails with the message (`null` for NULL, as Spark's)
/// as soon as a row evaluates it.
fn raise_error(
    args: &[datafusion::arrow::array::ArrayRef],
) -> datafusion::error::Result<datafusion::arrow::array::ArrayRef> {
    let messages = args[0].as_string::<i32>();
    if messages.is_empty() {
        return Ok(new_null_array(&DataType::Null, 0));
    }
    let message = if messages.is_null(0) {
        "null"
    } else {
        messages.value(0)
    };
    Err(DataFusionError::Execution(message.to_owned()))
}

fn is_condition(t: &DataType) -> bool {
    matches!(t, DataType::Boolean | DataType::Null)
}

/// `assert_true(condition, message)` itself, which `assert_true` becomes once its message
/// is known; not registered under a name of its own.
fn checked_assertion() -> ScalarUDF {
    HiveFunction::computed(
        "assert_true",
        |_, types| Ok(types.to_vec()),
        |_| Ok(DataType::Null),
        |args| {
            let (conditions, messages) = (args[0].as_boolean(), args[1].as_string::<i32>());
            for row in 0..conditions.len() {
                if conditions.is_null(row) || !conditions.value(row) {
                    let message = if messages.is_null(row) {
                        "NULL"
                    } else {
                        messages.value(row)
                    };
                    return Err(DataFusionError::Execution(message.to_owned()));
                }
            }
            Ok(new_null_array(&DataType::Null, conditions.len()))
        },
    )
    .udf()
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, error, open};

    // As Spark: NULL when true; else an error with the message.
    #[tokio::test]
    async fn assert_true_fails_the_query_with_its_message() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT assert_true(1 < 2), assert_true(NULL IS NULL)",
            &["NULL", "NULL"],
        )
        .await;
        for (sql, expected) in [
            (
                "SELECT assert_true(x > 1) FROM (VALUES (1)) t(x)",
                "'t.x > 1' is not true!",
            ),
            ("SELECT assert_true(NULL)", "'NULL' is not true!"),
            // A constant condition is folded before the message is written.
            ("SELECT assert_true(1 > 2)", "'false' is not true!"),
            (
                "SELECT assert_true(1 > 2, 'custom message')",
                "custom message",
            ),
        ] {
            let e = error(&engine, &s, sql).await.to_string();
            assert!(e.contains(expected), "{sql}: {e}");
        }
    }

    // As Spark: the query fails with the message where a row evaluates the call, and only
    // there.
    #[tokio::test]
    async fn raise_error_fails_the_query_only_where_evaluated() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT sum(CASE WHEN x > 5 THEN raise_error('big') ELSE x END) \
             FROM VALUES (1), (2) AS t(x)",
            &["3"],
        )
        .await;
        for (sql, expected) in [
            ("SELECT raise_error('boom')", "boom"),
            ("SELECT raise_error(NULL)", "null"),
            (
                "SELECT CASE WHEN x > 1 THEN raise_error(concat('too big: ', x)) END \
                 FROM VALUES (1), (7) AS t(x)",
                "too big: 7",
            ),
        ] {
            let e = error(&engine, &s, sql).await.to_string();
            assert!(e.contains(expected), "{sql}: {e}");
        }
    }
}
