//! Spark's aggregates `skewness(x)` and `kurtosis(x)`, from a group's central moments.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Float64Type, Int64Type};
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Signature, Volatility,
};

use super::bad_arguments;

/// The moments aggregates: Spark's `skewness` and `kurtosis`.
pub fn aggregates() -> Vec<AggregateUDF> {
    [Shape::Skewness, Shape::Kurtosis]
        .into_iter()
        .map(|shape| {
            AggregateUDF::new_from_impl(CentralMoment {
                shape,
                signature: Signature::user_defined(Volatility::Immutable),
            })
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Shape {
    Skewness,
    Kurtosis,
}

/// `skewness(x)` or `kurtosis(x)` as Spark's `CentralMomentAgg` computes them, a `DOUBLE`:
/// the population skewness and the excess kurtosis of the group's non-NULL values. NULL for
/// a group without values, and for one whose values are all equal (Spark's default; its
/// `spark.sql.legacy.statisticalAggregate` would give NaN).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CentralMoment {
    shape: Shape,
    signature: Signature,
}

impl AggregateUDFImpl for CentralMoment {
    fn name(&self) -> &str {
        match self.shape {
            Shape::Skewness => "skewness",
            Shape::Kurtosis => "kurtosis",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        match types {
            [t] if t.is_numeric() || t.is_null() => Ok(vec![DataType::Float64]),
            _ => Err(bad_arguments(self.name(), "one number", types)),
        }
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let field = |part: &str, data_type: DataType| {
            Arc::new(Field::new(
                format!("{}[{part}]", args.name),
                data_type,
                false,
            ))
        };
        Ok(vec![
            field("count", DataType::Int64),
            field("mean", DataType::Float64),
            field("m2", DataType::Float64),
            field("m3", DataType::Float64),
            field("m4", DataType::Float64),
        ])
    }

    fn accumulator(&self, _: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(Moments {
            shape: self.shape,
            ..Moments::default()
        }))
    }
}

/// The count and mean of the values so far and the sums of their deviations from the mean
/// to the powers 2, 3 and 4.
#[derive(Debug, Clone, Copy)]
struct Moments {
    shape: Shape,
    n: i64,
    mean: f64,
    m2: f64,
    m3: f64,
    m4: f64,
}

impl Default for Moments {
    fn default() -> Self {
        Moments {
            shape: Shape::Skewness,
            n: 0,
            mean: 0.0,
            m2: 0.0,
            m3: 0.0,
            m4: 0.0,
        }
    }
}

impl Moments {
    /// Pools another set's moments into these (Pébay's pairwise formulas). A single value is
    /// pooled as a set of one, so the mean of equal values stays exactly that value and their
    /// m2 exactly 0, which is how a constant group is told apart (a sum divided by the count
    /// would drift by a rounding error and give a huge skewness instead of NULL).
    fn pool(&mut self, nb: i64, mean_b: f64, m2b: f64, m3b: f64, m4b: f64) {
        if nb == 0 {
            return;
        }
        let (na, nb_) = (self.n as f64, nb as f64);
        let n = na + nb_;
        let delta = mean_b - self.mean;
        let delta_n = delta / n;
        let (m2a, m3a) = (self.m2, self.m3);
        self.m4 += m4b
            + delta * delta_n * delta_n * delta_n * na * nb_ * (na * na - na * nb_ + nb_ * nb_)
            + 6.0 * delta_n * delta_n * (na * na * m2b + nb_ * nb_ * m2a)
            + 4.0 * delta_n * (na * m3b - nb_ * m3a);
        self.m3 += m3b
            + delta * delta_n * delta_n * na * nb_ * (na - nb_)
            + 3.0 * delta_n * (na * m2b - nb_ * m2a);
        self.m2 += m2b + delta * delta_n * na * nb_;
        self.mean += delta_n * nb_;
        self.n += nb;
    }
}

impl Accumulator for Moments {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        for x in values[0].as_primitive::<Float64Type>().iter().flatten() {
            self.pool(1, x, 0.0, 0.0, 0.0);
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let n = states[0].as_primitive::<Int64Type>();
        let [mean, m2, m3, m4] =
            [1, 2, 3, 4].map(|i| states[i].as_primitive::<Float64Type>().values());
        for (i, n) in n.values().iter().enumerate() {
            self.pool(*n, mean[i], m2[i], m3[i], m4[i]);
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            ScalarValue::Int64(Some(self.n)),
            ScalarValue::Float64(Some(self.mean)),
            ScalarValue::Float64(Some(self.m2)),
            ScalarValue::Float64(Some(self.m3)),
            ScalarValue::Float64(Some(self.m4)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        if self.n == 0 || self.m2 == 0.0 {
            return Ok(ScalarValue::Float64(None));
        }
        let n = self.n as f64;
        // Spark's expressions, operation for operation, so that the last digits agree.
        let value = match self.shape {
            Shape::Skewness => n.sqrt() * self.m3 / (self.m2 * self.m2 * self.m2).sqrt(),
            Shape::Kurtosis => n * self.m4 / (self.m2 * self.m2) - 3.0,
        };
        Ok(ScalarValue::Float64(Some(value)))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{ArrayRef, Float64Array};
    use datafusion::common::ScalarValue;
    use datafusion::logical_expr::Accumulator;

    use super::{Moments, Shape};
    use crate::test_util::{engine, error, merge_partial, open, run};

    /// The rows of a query, each value `None` for NULL.
    async fn numbers(sql: &str) -> Vec<Vec<Option<f64>>> {
        let engine = engine().await;
        let session = open(&engine);
        let batches = run(&engine, &session, sql)
            .await
            .unwrap_or_else(|e| panic!("{sql} failed: {e}"));
        let mut rows = Vec::new();
        for batch in &batches {
            for i in 0..batch.num_rows() {
                rows.push(
                    batch
                        .columns()
                        .iter()
                        .map(|c| match ScalarValue::try_from_array(c, i).unwrap() {
                            ScalarValue::Float64(v) => v,
                            other => other.to_string().parse().ok(),
                        })
                        .collect(),
                );
            }
        }
        rows
    }

    fn close(got: Option<f64>, expected: f64) -> bool {
        got.is_some_and(|g| (g - expected).abs() <= 1e-9 * expected.abs().max(1.0))
    }

    // 1, 2, 3, 4, 10: n = 5, mean 4, deviations -3 -2 -1 0 6, so m2 = 50, m3 = 180,
    // m4 = 1394; skewness = sqrt(5) * 180 / 50^1.5 = 1.1384199576606164, kurtosis =
    // 5 * 1394 / 50^2 - 3 = -0.212.
    const SKEWNESS: f64 = 1.1384199576606164;
    const KURTOSIS: f64 = -0.212;

    #[tokio::test]
    async fn skewness_and_kurtosis_per_group_with_constant_and_empty_groups_null() {
        let got = numbers(
            "SELECT g, skewness(x), kurtosis(x) FROM (VALUES \
             (1, 1), (1, 2), (1, NULL), (1, 3), (1, 4), (1, 10), \
             (2, 0.1), (2, 0.1), (2, 0.1), \
             (3, 7), \
             (4, NULL)) t(g, x) GROUP BY g ORDER BY g",
        )
        .await;
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(close(got[0][1], SKEWNESS), "{got:?}");
        assert!(close(got[0][2], KURTOSIS), "{got:?}");
        for row in &got[1..] {
            assert_eq!(row[1..], [None, None], "{got:?}");
        }
        let empty =
            numbers("SELECT skewness(x), kurtosis(x) FROM (VALUES (1.5), (2.5)) t(x) WHERE x > 9")
                .await;
        assert_eq!(empty, [[None, None]]);
    }

    #[tokio::test]
    async fn skewness_and_kurtosis_over_many_partitions_match_their_formulas() {
        // lineitem is read in several partitions, so partial states are pooled; the formulas
        // below take two passes over the exact mean instead.
        let got = numbers(
            "WITH s AS (SELECT avg(CAST(l_extendedprice AS DOUBLE)) AS m, count(*) AS n \
                        FROM tpch.lineitem), \
                  d AS (SELECT CAST(l_extendedprice AS DOUBLE) - m AS d, n FROM tpch.lineitem, s), \
                  p AS (SELECT sum(d * d) AS m2, sum(d * d * d) AS m3, sum(d * d * d * d) AS m4, \
                               max(n) AS n FROM d) \
             SELECT (SELECT skewness(l_extendedprice) FROM tpch.lineitem), \
                    sqrt(n) * m3 / sqrt(m2 * m2 * m2), \
                    (SELECT kurtosis(l_extendedprice) FROM tpch.lineitem), \
                    n * m4 / (m2 * m2) - 3 FROM p",
        )
        .await;
        let [skewness, expected_skewness, kurtosis, expected_kurtosis] = got[0][..] else {
            panic!("{got:?}");
        };
        assert!(close(skewness, expected_skewness.unwrap()), "{got:?}");
        assert!(close(kurtosis, expected_kurtosis.unwrap()), "{got:?}");
    }

    #[tokio::test]
    async fn skewness_takes_integers_and_strings_and_refuses_dates() {
        let got = numbers(
            "SELECT skewness(CAST(x AS BIGINT)), kurtosis(CAST(x AS TINYINT)) \
             FROM (VALUES (1), (2), (3), (4), (10)) t(x)",
        )
        .await;
        assert!(close(got[0][0], SKEWNESS), "{got:?}");
        assert!(close(got[0][1], KURTOSIS), "{got:?}");
        let engine = engine().await;
        let session = open(&engine);
        // A string is a DOUBLE, as Spark reads it (`crate::spark_casts::argument_casts`).
        let rows = crate::test_util::value_rows(
            &engine,
            &session,
            "SELECT kurtosis('a'), kurtosis(x) FROM (VALUES ('1'), ('2'), ('3'), ('4'), ('10')) t(x)",
        )
        .await;
        assert_eq!(rows[0][0], "NULL");
        assert!(close(rows[0][1].parse().ok(), KURTOSIS), "{rows:?}");
        let message = error(&engine, &session, "SELECT kurtosis(DATE '2024-01-01')")
            .await
            .to_string();
        assert!(message.contains("kurtosis takes"), "{message}");
    }

    #[test]
    fn pooled_partial_states_give_the_moments_of_the_whole() {
        for (shape, expected) in [(Shape::Skewness, SKEWNESS), (Shape::Kurtosis, KURTOSIS)] {
            let new = || Moments {
                shape,
                ..Moments::default()
            };
            let mut total = new();
            for part in [&[1.0, 2.0][..], &[], &[10.0], &[3.0, 4.0]] {
                let mut partial = new();
                let values: ArrayRef = Arc::new(Float64Array::from(part.to_vec()));
                partial.update_batch(&[values]).unwrap();
                merge_partial(&mut total, &mut partial);
            }
            let ScalarValue::Float64(got) = total.evaluate().unwrap() else {
                panic!("not a DOUBLE");
            };
            assert!(close(got, expected), "{shape:?}: {got:?}");
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
