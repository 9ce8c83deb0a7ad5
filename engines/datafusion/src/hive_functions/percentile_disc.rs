//! Spark's aggregate `percentile_disc(p) WITHIN GROUP (ORDER BY x)`: the first of the
//! group's values, in that order, at or past which a fraction `p` of them lie (the least
//! `x` whose cumulative distribution reaches `p`), as a `DOUBLE`. DataFusion's
//! `percentile_cont` (Hive's `percentile`) interpolates instead.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, Float64Array};
use datafusion::arrow::datatypes::{DataType, FieldRef, Float64Type, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::utils::SingleRowListArrayBuilder;
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, Documentation, Signature,
    Volatility,
};

use super::bad_arguments;

pub fn aggregates() -> Vec<AggregateUDF> {
    vec![AggregateUDF::new_from_impl(PercentileDisc {
        signature: Signature::user_defined(Volatility::Immutable),
    })]
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct PercentileDisc {
    signature: Signature,
}

impl AggregateUDFImpl for PercentileDisc {
    fn name(&self) -> &str {
        "percentile_disc"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    /// The ordering's numbers (the value the WITHIN GROUP clause orders by comes first) and
    /// the fraction, as `DOUBLE`s.
    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let number = |t: &DataType| t.is_numeric() || t.is_null();
        match types {
            [x, p] if number(x) && number(p) => Ok(vec![DataType::Float64; 2]),
            _ => Err(bad_arguments(
                self.name(),
                "(p) WITHIN GROUP (ORDER BY a number)",
                types,
            )),
        }
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn supports_within_group_clause(&self) -> bool {
        true
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name())
    }

    /// The group's values so far.
    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let values = DataType::new_list(DataType::Float64, true);
        Ok(vec![super::state_field(&args, "values", values, true)])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        // A constant evaluates without rows; a column does not.
        let no_rows = RecordBatch::new_empty(Arc::new(Schema::empty()));
        let fraction = match args.exprs.get(1).map(|e| e.evaluate(&no_rows)) {
            Some(Ok(ColumnarValue::Scalar(value))) => Some(value),
            _ => None,
        };
        let fraction = match fraction {
            Some(ScalarValue::Float64(Some(p))) if (0.0..=1.0).contains(&p) => p,
            Some(ScalarValue::Float64(Some(p))) => {
                return Err(DataFusionError::Plan(format!(
                    "percentile_disc: the percentile must be between 0 and 1; it was {p}"
                )))
            }
            _ => {
                return Err(DataFusionError::Plan(
                    "percentile_disc: the percentile must be a constant between 0 and 1".into(),
                ))
            }
        };
        let descending = args
            .order_bys
            .first()
            .is_some_and(|sort| sort.options.descending);
        Ok(Box::new(Values {
            fraction,
            descending,
            values: Vec::new(),
        }))
    }
}

#[derive(Debug)]
struct Values {
    fraction: f64,
    descending: bool,
    values: Vec<f64>,
}

impl Accumulator for Values {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.values
            .extend(values[0].as_primitive::<Float64Type>().iter().flatten());
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        for values in states[0].as_list::<i32>().iter().flatten() {
            self.update_batch(&[values])?;
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let values = Float64Array::from(self.values.clone());
        Ok(vec![
            SingleRowListArrayBuilder::new(Arc::new(values)).build_list_scalar()
        ])
    }

    /// The `i`th value in order for the least `i` with `(i + 1) / n >= p`: the fraction
    /// compared as a division, as Spark compares it, so that 0.3 of 10 values is the third
    /// (0.3 * 10 is 3.0000000000000004 in a `DOUBLE`).
    fn evaluate(&mut self) -> Result<ScalarValue> {
        if self.values.is_empty() {
            return Ok(ScalarValue::Float64(None));
        }
        self.values.sort_by(f64::total_cmp);
        if self.descending {
            self.values.reverse();
        }
        let n = self.values.len();
        let reaches = |i: usize| (i + 1) as f64 / n as f64 >= self.fraction;
        let index = (0..n).find(|&i| reaches(i)).unwrap_or(n - 1);
        Ok(ScalarValue::Float64(Some(self.values[index])))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.values.capacity() * size_of::<f64>()
    }
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::rows_with;
    use crate::test_util::{engine, error, open};

    // Every expected value is Spark's.
    #[tokio::test]
    async fn percentile_disc_is_a_value_of_the_group() {
        let engine = engine().await;
        let s = open(&engine);
        let none = Default::default();
        for (sql, expected) in [
            (
                "SELECT percentile_disc(0.25) WITHIN GROUP (ORDER BY x), \
                 percentile_disc(0.5) WITHIN GROUP (ORDER BY x), \
                 percentile_disc(0) WITHIN GROUP (ORDER BY x), \
                 percentile_disc(1) WITHIN GROUP (ORDER BY x), \
                 percentile_disc(0.5) WITHIN GROUP (ORDER BY x DESC) \
                 FROM (VALUES (0), (1), (2), (3), (NULL)) t(x)",
                vec![vec!["0.0", "1.0", "0.0", "3.0", "2.0"]],
            ),
            (
                "SELECT percentile_disc(0.3) WITHIN GROUP (ORDER BY x) \
                 FROM (VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10)) t(x)",
                vec![vec!["3.0"]],
            ),
            (
                "SELECT percentile_disc(0.6) WITHIN GROUP (ORDER BY x), \
                 percentile_disc(0.4) WITHIN GROUP (ORDER BY x), \
                 percentile_disc(0.99) WITHIN GROUP (ORDER BY x), \
                 percentile_disc(0.6) WITHIN GROUP (ORDER BY x DESC) \
                 FROM (VALUES (10), (20)) t(x)",
                vec![vec!["20.0", "10.0", "20.0", "10.0"]],
            ),
            (
                "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) \
                 FROM (VALUES (CAST(NULL AS INT))) t(x)",
                vec![vec!["NULL"]],
            ),
            (
                "SELECT g, percentile_disc(0.5) WITHIN GROUP (ORDER BY x) \
                 FROM (VALUES (1, 1.5), (1, 2.5), (1, 4.0), (2, 3.0)) t(g, x) \
                 GROUP BY g ORDER BY g",
                vec![vec!["1", "2.5"], vec!["2", "3.0"]],
            ),
        ] {
            let (rows, _) = rows_with(&engine, &s, sql, &none).await;
            assert_eq!(rows, expected, "{sql}");
        }
        let e = error(
            &engine,
            &s,
            "SELECT percentile_disc(1.5) WITHIN GROUP (ORDER BY x) FROM (VALUES (1)) t(x)",
        )
        .await
        .to_string();
        assert!(
            e.contains("percentile_disc: the percentile must be between 0 and 1; it was 1.5"),
            "{e}"
        );
    }
}
