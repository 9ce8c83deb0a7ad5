//! Spark's aggregates `max_by(x, ord)` and `min_by(x, ord)`: x on the row whose ord is the greatest or least.

use std::cmp::Ordering;
use std::sync::Arc;

use datafusion::arrow::array::{make_comparator, Array, ArrayRef};
use datafusion::arrow::compute::SortOptions;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Signature, Volatility,
};

use super::bad_arguments;

/// The extremes aggregates: Spark's `max_by` and `min_by`.
pub fn aggregates() -> Vec<AggregateUDF> {
    [true, false]
        .into_iter()
        .map(|greatest| {
            AggregateUDF::new_from_impl(ExtremeBy {
                greatest,
                signature: Signature::user_defined(Volatility::Immutable),
            })
        })
        .collect()
}

/// `max_by(x, ord)` (`greatest`) or `min_by(x, ord)`: x of the row with the greatest (least)
/// ord, rows with a NULL ord skipped; NULL when no row has one. Of tied rows the first read
/// wins, as Spark's strict comparison keeps it, though Spark promises no order either.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ExtremeBy {
    greatest: bool,
    signature: Signature,
}

impl AggregateUDFImpl for ExtremeBy {
    fn name(&self) -> &str {
        if self.greatest {
            "max_by"
        } else {
            "min_by"
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        match types {
            // A map has no order in Spark either; refusing it here names the call rather than
            // failing in the middle of a scan.
            [_, ord] if !matches!(ord, DataType::Map(..)) => Ok(types.to_vec()),
            _ => Err(bad_arguments(
                self.name(),
                "a value and an orderable ordering",
                types,
            )),
        }
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        Ok(types[0].clone())
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let [value, ord] = args.input_fields else {
            return Err(bad_arguments(self.name(), "two arguments", &[]));
        };
        Ok(vec![
            Arc::new(Field::new(
                format!("{}[value]", args.name),
                value.data_type().clone(),
                true,
            )),
            Arc::new(Field::new(
                format!("{}[ord]", args.name),
                ord.data_type().clone(),
                true,
            )),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let [value, ord] = args.expr_fields else {
            return Err(bad_arguments(self.name(), "two arguments", &[]));
        };
        Ok(Box::new(Extreme {
            greatest: self.greatest,
            best: None,
            value_type: value.data_type().clone(),
            ord_type: ord.data_type().clone(),
        }))
    }
}

/// The value and ord of the best row so far, `None` before a row with an ord.
#[derive(Debug)]
struct Extreme {
    greatest: bool,
    best: Option<(ScalarValue, ScalarValue)>,
    value_type: DataType,
    ord_type: DataType,
}

impl Extreme {
    fn beats(&self, order: Ordering) -> bool {
        if self.greatest {
            order == Ordering::Greater
        } else {
            order == Ordering::Less
        }
    }

    /// Takes the best row of `values` and `ords` when it beats the best so far. Arrow's
    /// comparator orders every type one way (NaN above every number, as Spark orders it),
    /// so the batch and the kept ord are compared by it too, not by `ScalarValue`'s order.
    fn take(&mut self, values: &ArrayRef, ords: &ArrayRef) -> Result<()> {
        // A NULL-typed ord has no comparator; a batch of NULL ords has nothing to offer.
        if ords.logical_null_count() == ords.len() {
            return Ok(());
        }
        let nulls = ords.logical_nulls();
        let compare = make_comparator(ords.as_ref(), ords.as_ref(), SortOptions::default())?;
        let mut best: Option<usize> = None;
        for i in 0..ords.len() {
            if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                continue;
            }
            best = match best {
                Some(b) if !self.beats(compare(i, b)) => Some(b),
                _ => Some(i),
            };
        }
        let Some(i) = best else { return Ok(()) };
        if let Some((_, kept)) = &self.best {
            let kept = kept.to_array()?;
            let compare = make_comparator(ords.as_ref(), kept.as_ref(), SortOptions::default())?;
            if !self.beats(compare(i, 0)) {
                return Ok(());
            }
        }
        self.best = Some((
            ScalarValue::try_from_array(values, i)?,
            ScalarValue::try_from_array(ords, i)?,
        ));
        Ok(())
    }
}

impl Accumulator for Extreme {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.take(&values[0], &values[1])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.take(&states[0], &states[1])
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        match &self.best {
            Some((value, ord)) => Ok(vec![value.clone(), ord.clone()]),
            None => Ok(vec![
                ScalarValue::try_from(&self.value_type)?,
                ScalarValue::try_from(&self.ord_type)?,
            ]),
        }
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        match &self.best {
            Some((value, _)) => Ok(value.clone()),
            None => ScalarValue::try_from(&self.value_type),
        }
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self.best.as_ref().map_or(0, |(v, o)| {
                v.size() + o.size() - 2 * size_of::<ScalarValue>()
            })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{ArrayRef, Int64Array, StringArray};
    use datafusion::common::ScalarValue;
    use datafusion::logical_expr::Accumulator;

    use super::Extreme;
    use crate::test_util::{engine, error, merge_partial, open, value_rows};

    /// The rows of a query, each value as beeline prints it (NULL as `NULL`).
    async fn rows(sql: &str) -> Vec<Vec<String>> {
        let engine = engine().await;
        let session = open(&engine);
        value_rows(&engine, &session, sql).await
    }

    #[tokio::test]
    async fn max_by_and_min_by_skip_null_ords_per_group() {
        // Group a: the NULL ord would be the greatest and least if it counted.
        // Group b: the greatest ord's x is NULL, and NULL is the answer.
        // Group c: no ord at all.
        let got = rows(
            "SELECT g, max_by(x, o), min_by(x, o) FROM (VALUES \
             ('a', 'one', 1), ('a', 'three', 3), ('a', 'nothing', NULL), ('a', 'two', 2), \
             ('b', NULL, 9), ('b', 'low', 0), \
             ('c', 'none', NULL)) t(g, x, o) GROUP BY g ORDER BY g",
        )
        .await;
        assert_eq!(
            got,
            [
                ["a", "three", "one"],
                ["b", "NULL", "low"],
                ["c", "NULL", "NULL"],
            ]
        );
    }

    #[tokio::test]
    async fn max_by_orders_strings_dates_and_timestamps() {
        // 'b' > 'B' > 'A' in byte order; a date and a timestamp as ords; an integer x.
        let got = rows(
            "SELECT max_by(x, s), min_by(x, s), max_by(s, d), min_by(s, ts) FROM (VALUES \
             (1, 'B', DATE '2024-03-01', TIMESTAMP '2024-01-01 10:00:00'), \
             (2, 'b', DATE '2023-12-31', TIMESTAMP '2024-01-01 09:59:59'), \
             (3, 'A', DATE '2024-02-29', TIMESTAMP '2024-01-01 10:00:01')) t(x, s, d, ts)",
        )
        .await;
        assert_eq!(got, [["2", "3", "B", "b"]]);
    }

    #[tokio::test]
    async fn max_by_of_an_empty_input_is_null_and_a_map_ord_is_refused() {
        let got =
            rows("SELECT max_by(x, o), min_by(x, o) FROM (VALUES (1, 2)) t(x, o) WHERE o > 5")
                .await;
        assert_eq!(got, [["NULL", "NULL"]]);
        let engine = engine().await;
        let session = open(&engine);
        let message = error(&engine, &session, "SELECT max_by(1, map('k', 1))")
            .await
            .to_string();
        assert!(message.contains("max_by takes"), "{message}");
    }

    #[tokio::test]
    async fn max_by_over_many_partitions_matches_a_sort() {
        // TPC-H's lineitem is read in several partitions, so partial states are merged.
        // The line numbers tie in a sort by price, so the key is made unique with the line.
        let got = rows(
            "SELECT max_by(l_orderkey * 10 + l_linenumber, l_extendedprice * 1e9 + l_orderkey * 10 + l_linenumber), \
                    min_by(l_orderkey * 10 + l_linenumber, l_extendedprice * 1e9 + l_orderkey * 10 + l_linenumber) \
             FROM tpch.lineitem",
        )
        .await;
        let max = rows(
            "SELECT l_orderkey * 10 + l_linenumber FROM tpch.lineitem \
             ORDER BY l_extendedprice * 1e9 + l_orderkey * 10 + l_linenumber DESC LIMIT 1",
        )
        .await;
        let min = rows(
            "SELECT l_orderkey * 10 + l_linenumber FROM tpch.lineitem \
             ORDER BY l_extendedprice * 1e9 + l_orderkey * 10 + l_linenumber LIMIT 1",
        )
        .await;
        assert_eq!(got, [[max[0][0].clone(), min[0][0].clone()]]);
    }

    #[test]
    fn merged_states_keep_the_best_row_of_either() {
        let new = |greatest| Extreme {
            greatest,
            best: None,
            value_type: datafusion::arrow::datatypes::DataType::Utf8,
            ord_type: datafusion::arrow::datatypes::DataType::Int64,
        };
        let batch = |xs: &[&str], os: &[Option<i64>]| -> [ArrayRef; 2] {
            [
                Arc::new(StringArray::from(xs.to_vec())),
                Arc::new(Int64Array::from(os.to_vec())),
            ]
        };
        for greatest in [true, false] {
            let mut left = new(greatest);
            left.update_batch(&batch(&["p", "q"], &[Some(5), None]))
                .unwrap();
            let mut right = new(greatest);
            right
                .update_batch(&batch(&["r", "s"], &[Some(9), Some(-1)]))
                .unwrap();
            let mut empty = new(greatest);
            let mut total = new(greatest);
            for partial in [&mut left, &mut empty, &mut right] {
                merge_partial(&mut total, partial);
            }
            let expected = if greatest { "r" } else { "s" };
            assert_eq!(
                total.evaluate().unwrap(),
                ScalarValue::Utf8(Some(expected.into()))
            );
        }
    }

    #[test]
    fn every_one_has_a_usage() {
        for udaf in super::aggregates() {
            assert!(
                udaf.documentation().is_some(),
                "{} has no usage",
                udaf.name()
            );
        }
    }
}
