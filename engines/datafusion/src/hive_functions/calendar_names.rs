//! Spark's `weekday(d)` (0 = Monday ... 6 = Sunday), and Spark 4's `dayname(d)` and
//! `monthname(d)` (`Mon`, `Jan`: English three-letter names), of a date, a timestamp or a
//! date string (NULL for a string that is none), as the other date functions take them.

use datafusion::arrow::datatypes::DataType;
use datafusion::functions::expr_fn::to_char;
use datafusion::logical_expr::{lit, ScalarUDF};

use super::datetime::{as_timestamp, field, one_date};
use super::HiveFunction;

pub fn functions() -> Vec<ScalarUDF> {
    let string = |_: &[DataType]| Ok(DataType::Utf8);
    vec![
        // DataFusion's dow counts from Sunday, 0; Spark's weekday from Monday.
        HiveFunction::rewrite(
            "weekday",
            one_date,
            |_| Ok(DataType::Int32),
            |a, t| Ok((field("dow", a, t)? + lit(6i32)) % lit(7i32)),
        )
        .udf(),
        HiveFunction::rewrite("dayname", one_date, string, |a, t| {
            Ok(to_char(as_timestamp(&a[0], &t[0]), lit("%a")))
        })
        .udf(),
        HiveFunction::rewrite("monthname", one_date, string, |a, t| {
            Ok(to_char(as_timestamp(&a[0], &t[0]), lit("%b")))
        })
        .udf(),
    ]
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, open};

    // Every expected value is Spark's (4.x for dayname and monthname).
    #[tokio::test]
    async fn days_and_months_by_number_and_name() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT weekday(DATE '2024-01-01'), weekday(DATE '2024-01-07'), \
             weekday('2024-01-03'), weekday(TIMESTAMP '2024-01-06 23:00:00'), weekday(NULL), \
             weekday('x'), dayname(DATE '2024-01-01'), dayname('2024-01-07'), \
             dayname(DATE '2024-01-03'), monthname(DATE '2024-09-01'), \
             monthname(TIMESTAMP '2024-02-01 10:00:00'), monthname('x'), dayname(NULL)",
            &[
                "0", "6", "2", "5", "NULL", "NULL", "Mon", "Sun", "Wed", "Sep", "Feb", "NULL",
                "NULL",
            ],
        )
        .await;
    }
}
