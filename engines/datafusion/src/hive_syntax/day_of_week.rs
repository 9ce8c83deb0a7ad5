//! `EXTRACT(DOW FROM d)` and `EXTRACT(DAYOFWEEK FROM d)` as Spark's: Sunday is 1 and Saturday
//! 7, as `dayofweek(d)`, where DataFusion counts from Sunday 0; `DOW_ISO` and
//! `DAYOFWEEK_ISO`, Monday 1 to Sunday 7.

use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::expr::Expr as LogicalExpr;
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult};
use datafusion::logical_expr::{lit, when};

/// Plans `EXTRACT` of a day of the week, before DataFusion's planner of `EXTRACT`.
#[derive(Debug)]
pub struct SparkDayOfWeek;

impl ExprPlanner for SparkDayOfWeek {
    fn plan_extract(&self, args: Vec<LogicalExpr>) -> Result<PlannerResult<Vec<LogicalExpr>>> {
        let iso = match &args[..] {
            [LogicalExpr::Literal(ScalarValue::Utf8(Some(field)), _), _] => {
                match field.to_ascii_uppercase().as_str() {
                    "DOW" | "DAYOFWEEK" => false,
                    "DOW_ISO" | "DAYOFWEEK_ISO" => true,
                    _ => return Ok(PlannerResult::Original(args)),
                }
            }
            _ => return Ok(PlannerResult::Original(args)),
        };
        let from_sunday = datafusion::functions::expr_fn::date_part(lit("dow"), args[1].clone());
        Ok(PlannerResult::Planned(if iso {
            when(from_sunday.clone().eq(lit(0)), lit(7)).otherwise(from_sunday)?
        } else {
            from_sunday + lit(1)
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::{engine, lines, open};

    #[tokio::test]
    async fn the_day_of_the_week_counts_from_sunday_one_as_in_spark() {
        let engine = engine().await;
        let session = open(&engine);
        // 2024-06-09 is a Sunday, 2024-06-10 a Monday.
        let rows = lines(
            &engine,
            &session,
            "SELECT concat_ws(',', extract(DOW FROM DATE '2024-06-09'), \
             extract(DAYOFWEEK FROM DATE '2024-06-10'), extract(DOW_ISO FROM DATE '2024-06-09'), \
             extract(DAYOFWEEK_ISO FROM DATE '2024-06-10'), extract(MONTH FROM DATE '2024-06-10'))",
        )
        .await;
        assert_eq!(
            rows[3].trim_matches(|c| c == '|' || c == ' '),
            "1,2,7,1,6",
            "{rows:?}"
        );
    }
}
