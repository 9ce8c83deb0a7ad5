//! Spark's `EXTRACT` of the fields DataFusion answers otherwise:
//! - `EXTRACT(DOW FROM d)` and `EXTRACT(DAYOFWEEK FROM d)`: Sunday is 1 and Saturday 7, as
//!   `dayofweek(d)`, where DataFusion counts from Sunday 0; `DOW_ISO` and `DAYOFWEEK_ISO`,
//!   Monday 1 to Sunday 7;
//! - `EXTRACT(SECOND FROM ts)`: the seconds with their fraction, a `DECIMAL(8,6)` (9.5),
//!   where DataFusion's is the whole seconds (`second(ts)` still is).
//!
//! Spark's `date_part('field', x)` is its `EXTRACT(field FROM x)`, so the call is read as that
//! ([`as_extract`]).

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::expr::Expr as LogicalExpr;
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult};
use datafusion::logical_expr::{cast, lit, when};
use datafusion::sql::sqlparser::ast::{
    DateTimeField, Expr as SqlExpr, ExtractSyntax, Ident, Value, ValueWithSpan,
};

/// `date_part('field', x)` (or `datepart`) as written by a user, with its field a string, as
/// `EXTRACT(field FROM x)`; any other expression is left as it is.
pub(super) fn as_extract(expr: &mut SqlExpr) {
    let Some((name, args)) = super::plain_call(expr) else {
        return;
    };
    let (true, [field, value]) = (matches!(name.as_str(), "date_part" | "datepart"), &args[..])
    else {
        return;
    };
    let SqlExpr::Value(ValueWithSpan {
        value: Value::SingleQuotedString(field),
        ..
    }) = field
    else {
        return;
    };
    *expr = SqlExpr::Extract {
        field: DateTimeField::Custom(Ident::new(field.clone())),
        syntax: ExtractSyntax::From,
        expr: Box::new((*value).clone()),
    };
}

/// Plans `EXTRACT` of a day of the week or of the seconds, before DataFusion's planner of
/// `EXTRACT`.
#[derive(Debug)]
pub struct SparkExtractFields;

impl ExprPlanner for SparkExtractFields {
    fn plan_extract(&self, args: Vec<LogicalExpr>) -> Result<PlannerResult<Vec<LogicalExpr>>> {
        let iso = match &args[..] {
            [LogicalExpr::Literal(ScalarValue::Utf8(Some(field)), _), _] => {
                match field.to_ascii_uppercase().as_str() {
                    "DOW" | "DAYOFWEEK" => false,
                    "DOW_ISO" | "DAYOFWEEK_ISO" => true,
                    "SECOND" | "SECONDS" | "S" | "SEC" | "SECS" => {
                        return Ok(PlannerResult::Planned(seconds(args[1].clone())))
                    }
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

/// The seconds of `moment` with their fraction to the microsecond, a `DECIMAL(8,6)`: its
/// microseconds (DataFusion's count includes the whole seconds) over a million, exact for a
/// `DOUBLE` of at most 8 digits.
fn seconds(moment: LogicalExpr) -> LogicalExpr {
    let micros = datafusion::functions::expr_fn::date_part(lit("microsecond"), moment);
    cast(
        cast(micros, DataType::Float64) / lit(1_000_000f64),
        DataType::Decimal128(8, 6),
    )
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
        // The seconds with their fraction (Spark's DECIMAL(8,6)); second() drops it.
        let rows = lines(
            &engine,
            &session,
            "SELECT concat_ws(',', extract(SECOND FROM TIMESTAMP '2024-03-05 14:07:09.5'), \
             typeof(extract(SECOND FROM TIMESTAMP '2024-03-05 14:07:59.999999')), \
             extract(SECOND FROM TIMESTAMP '2024-03-05 14:07:59.999999'), \
             second(TIMESTAMP '2024-03-05 14:07:09.5'), extract(SECONDS FROM DATE '2024-03-05'), \
             date_part('second', TIMESTAMP '2024-03-05 14:07:09.25'), date_part('dow', DATE '2024-06-09'))",
        )
        .await;
        assert_eq!(
            rows[3].trim_matches(|c| c == '|' || c == ' '),
            "9.500000,decimal(8,6),59.999999,9,0.000000,9.250000,1",
            "{rows:?}"
        );
    }
}
