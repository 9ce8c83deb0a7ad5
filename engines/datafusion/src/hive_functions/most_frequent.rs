//! Spark's aggregate `mode(x)`: the group's most frequent non-NULL value.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Int64Type};
use datafusion::common::utils::SingleRowListArrayBuilder;
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Signature, Volatility,
};

use super::bad_arguments;

pub fn aggregates() -> Vec<AggregateUDF> {
    vec![AggregateUDF::new_from_impl(Mode {
        signature: Signature::user_defined(Volatility::Immutable),
    })]
}

/// `mode(x)`: the value the group's rows hold most often, NULLs skipped; NULL for a group
/// without a value. Of values as frequent, the least, so that the answer never depends on
/// how rows were split (Spark picks any; its 4.0 `mode(x, true)` the least too).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Mode {
    signature: Signature,
}

impl AggregateUDFImpl for Mode {
    fn name(&self) -> &str {
        "mode"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        match types {
            [_] => Ok(types.to_vec()),
            _ => Err(bad_arguments(self.name(), "one value", types)),
        }
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        Ok(types[0].clone())
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name())
    }

    /// The distinct values so far and how often each came, as two lists.
    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let value = args.input_fields[0].data_type().clone();
        Ok(vec![
            Arc::new(Field::new(
                format!("{}[values]", args.name),
                DataType::new_list(value, true),
                true,
            )),
            Arc::new(Field::new(
                format!("{}[counts]", args.name),
                DataType::new_list(DataType::Int64, true),
                true,
            )),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(Counts {
            value_type: args.expr_fields[0].data_type().clone(),
            counts: HashMap::new(),
        }))
    }
}

#[derive(Debug)]
struct Counts {
    value_type: DataType,
    counts: HashMap<ScalarValue, i64>,
}

impl Counts {
    fn add(&mut self, values: &ArrayRef, counts: impl Fn(usize) -> i64) -> Result<()> {
        for i in 0..values.len() {
            if values.is_valid(i) {
                *self
                    .counts
                    .entry(ScalarValue::try_from_array(values, i)?)
                    .or_default() += counts(i);
            }
        }
        Ok(())
    }
}

impl Accumulator for Counts {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.add(&values[0], |_| 1)
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (values, counts) = (states[0].as_list::<i32>(), states[1].as_list::<i32>());
        for row in 0..values.len() {
            if values.is_valid(row) {
                let counts = counts.value(row);
                let counts = counts.as_primitive::<Int64Type>();
                self.add(&values.value(row), |i| counts.value(i))?;
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let values: Vec<ScalarValue> = self.counts.keys().cloned().collect();
        let counts: Int64Array = self.counts.values().copied().collect();
        let values = if values.is_empty() {
            datafusion::arrow::array::new_empty_array(&self.value_type)
        } else {
            ScalarValue::iter_to_array(values)?
        };
        Ok(vec![
            SingleRowListArrayBuilder::new(values).build_list_scalar(),
            SingleRowListArrayBuilder::new(Arc::new(counts)).build_list_scalar(),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let best = self.counts.iter().max_by(|(a, m), (b, n)| {
            m.cmp(n)
                .then_with(|| b.partial_cmp(a).unwrap_or(Ordering::Equal))
        });
        match best {
            Some((value, _)) => Ok(value.clone()),
            None => ScalarValue::try_from(&self.value_type),
        }
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self
                .counts
                .keys()
                .map(|v| v.size() + size_of::<i64>())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use datafusion::arrow::array::{ArrayRef, Int64Array};
    use datafusion::arrow::datatypes::DataType;
    use datafusion::common::ScalarValue;
    use datafusion::logical_expr::Accumulator;

    use super::Counts;
    use crate::hive_functions::tests::rows_with;
    use crate::test_util::{engine, merge_partial, open};

    /// Counts of the values, as one partition's accumulator holds them.
    fn counted(values: &[i64]) -> Counts {
        let mut counts = Counts {
            value_type: DataType::Int64,
            counts: HashMap::new(),
        };
        let values: ArrayRef = Arc::new(Int64Array::from(values.to_vec()));
        counts.update_batch(&[values]).unwrap();
        counts
    }

    // The group [1, 1, 2, 2, 2, 3] split over two partitions: 2 is the most frequent of the
    // whole, where each partition alone would answer 1 and 2.
    #[test]
    fn mode_adds_up_partial_counts() {
        let mut total = counted(&[1, 1, 2]);
        merge_partial(&mut total, &mut counted(&[2, 2, 3]));
        assert_eq!(total.evaluate().unwrap(), ScalarValue::Int64(Some(2)));
    }

    // Every expected value is Spark's (groups without ties, where Spark picks any).
    #[tokio::test]
    async fn mode_is_the_most_frequent_value() {
        let engine = engine().await;
        let s = open(&engine);
        let none = Default::default();
        for (sql, expected) in [
            (
                "SELECT mode(x) FROM (VALUES (0), (10), (10), (NULL), (NULL), (NULL)) t(x)",
                vec![vec!["10"]],
            ),
            (
                "SELECT mode(x) FROM (VALUES (CAST(NULL AS INT))) t(x)",
                vec![vec!["NULL"]],
            ),
            (
                "SELECT g, mode(x) FROM (VALUES (1, 1.5), (1, 2.5), (1, 2.5), (2, 3.0)) t(g, x) \
                 GROUP BY g ORDER BY g",
                vec![vec!["1", "2.5"], vec!["2", "3.0"]],
            ),
        ] {
            let (rows, _) = rows_with(&engine, &s, sql, &none).await;
            assert_eq!(rows, expected, "{sql}");
        }
    }
}
