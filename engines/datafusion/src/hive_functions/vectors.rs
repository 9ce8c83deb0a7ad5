//! Spark's functions of vectors (embeddings), arrays of `FLOAT`s: `vector_inner_product`,
//! `vector_cosine_similarity`, `vector_l2_distance`, `vector_norm` and `vector_normalize`,
//! and the aggregates `vector_sum` and `vector_avg`. Each is computed in `DOUBLE`s and
//! answered as `FLOAT`s; a NULL vector or element gives NULL (an aggregate passes over such a
//! row, as Spark's does), vectors of different lengths fail the query. An array of other
//! numbers is read as `FLOAT`s (Spark takes `FLOAT`s alone).

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float32Builder, ListArray, ListBuilder};
use datafusion::arrow::datatypes::{
    DataType, Field, FieldRef, Float32Type, Float64Type, Int64Type,
};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, ScalarUDF, Signature, Volatility,
};

use super::{bad_arguments, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    let float = |_: &[DataType]| Ok(DataType::Float32);
    vec![
        HiveFunction::computed("vector_inner_product", two_vectors, float, |args| {
            pairwise("vector_inner_product", args, |a, b| Some(dot(a, b)))
        })
        .udf(),
        HiveFunction::computed("vector_cosine_similarity", two_vectors, float, |args| {
            pairwise("vector_cosine_similarity", args, |a, b| {
                let norms = norm(a, Degree::Two) * norm(b, Degree::Two);
                (norms != 0.0).then(|| dot(a, b) / norms)
            })
        })
        .udf(),
        HiveFunction::computed("vector_l2_distance", two_vectors, float, |args| {
            pairwise("vector_l2_distance", args, |a, b| {
                Some(
                    a.iter()
                        .zip(b)
                        .map(|(x, y)| (x - y) * (x - y))
                        .sum::<f64>()
                        .sqrt(),
                )
            })
        })
        .udf(),
        HiveFunction::computed("vector_norm", vector_and_degree, float, |args| {
            let mut out = Float32Builder::with_capacity(args[0].len());
            each_vector(args, |vector, degree| {
                out.append_option(vector.map(|v| norm(&v, degree) as f32));
            })?;
            Ok(Arc::new(out.finish()))
        })
        .udf(),
        HiveFunction::computed(
            "vector_normalize",
            vector_and_degree,
            |_| Ok(float_vector()),
            |args| {
                let mut out = ListBuilder::new(Float32Builder::new())
                    .with_field(Arc::new(Field::new_list_field(DataType::Float32, true)));
                each_vector(args, |vector, degree| {
                    let normalized: Option<Vec<Option<f32>>> = vector.and_then(|v| {
                        let length = norm(&v, degree);
                        // A zero vector has no direction (but an empty one is itself).
                        (length != 0.0 || v.is_empty())
                            .then(|| v.iter().map(|x| Some((x / length) as f32)).collect())
                    });
                    out.append_option(normalized);
                })?;
                Ok(Arc::new(out.finish()))
            },
        )
        .udf(),
    ]
}

pub fn aggregates() -> Vec<AggregateUDF> {
    vec![
        AggregateUDF::new_from_impl(VectorTotal::new("vector_sum", false)),
        AggregateUDF::new_from_impl(VectorTotal::new("vector_avg", true)),
    ]
}

/// `vector_sum(v)` and `vector_avg(v)`: the element-wise sum or mean of a group's vectors;
/// NULL for a group without one. Summed in `DOUBLE`s, so a mean is the exact one rounded to
/// a `FLOAT` (Spark's, kept in `FLOAT`s as it goes, may differ in the last digit).
#[derive(Debug, PartialEq, Eq, Hash)]
struct VectorTotal {
    name: &'static str,
    average: bool,
    signature: Signature,
}

impl VectorTotal {
    fn new(name: &'static str, average: bool) -> Self {
        Self {
            name,
            average,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl AggregateUDFImpl for VectorTotal {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        match types {
            [v] if is_vector(v) => Ok(vec![float_vector()]),
            _ => Err(bad_arguments(self.name, "an array of FLOATs", types)),
        }
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(float_vector())
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let sums = DataType::new_list(DataType::Float64, true);
        Ok(vec![
            super::state_field(&args, "sums", sums, true),
            super::state_field(&args, "count", DataType::Int64, false),
        ])
    }

    fn accumulator(&self, _: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(VectorTotals {
            name: self.name,
            average: self.average,
            sums: None,
            count: 0,
        }))
    }
}

/// A group's element-wise sums so far, and how many vectors they add up.
#[derive(Debug)]
struct VectorTotals {
    name: &'static str,
    average: bool,
    sums: Option<Vec<f64>>,
    count: i64,
}

impl VectorTotals {
    fn add(&mut self, vector: &[f64], count: i64) -> Result<()> {
        let sums = self.sums.get_or_insert_with(|| vec![0.0; vector.len()]);
        if sums.len() != vector.len() {
            return Err(DataFusionError::Execution(format!(
                "{}: the vectors must have the same length; they have {} and {}",
                self.name,
                sums.len(),
                vector.len()
            )));
        }
        for (sum, x) in sums.iter_mut().zip(vector) {
            *sum += x;
        }
        self.count += count;
        Ok(())
    }
}

impl Accumulator for VectorTotals {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let vectors = values[0].as_list::<i32>();
        for row in 0..vectors.len() {
            if let Some(vector) = vector_at(vectors, row) {
                self.add(&vector, 1)?;
            }
        }
        Ok(())
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let divisor = if self.average { self.count as f64 } else { 1.0 };
        let values = self.sums.as_ref().map(|sums| {
            let floats: Vec<ScalarValue> = sums
                .iter()
                .map(|sum| ScalarValue::Float32(Some((sum / divisor) as f32)))
                .collect();
            ScalarValue::new_list_nullable(&floats, &DataType::Float32)
        });
        Ok(match values {
            Some(list) => ScalarValue::List(list),
            None => ScalarValue::try_from(float_vector())?,
        })
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let sums = match &self.sums {
            Some(sums) => {
                let values: Vec<ScalarValue> = sums
                    .iter()
                    .map(|sum| ScalarValue::Float64(Some(*sum)))
                    .collect();
                ScalarValue::List(ScalarValue::new_list_nullable(&values, &DataType::Float64))
            }
            None => ScalarValue::try_from(DataType::new_list(DataType::Float64, true))?,
        };
        Ok(vec![sums, ScalarValue::Int64(Some(self.count))])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (sums, counts) = (
            states[0].as_list::<i32>(),
            states[1].as_primitive::<Int64Type>(),
        );
        for row in 0..sums.len() {
            if sums.is_null(row) {
                continue;
            }
            let partial = sums.value(row);
            let partial: Vec<f64> = partial.as_primitive::<Float64Type>().values().to_vec();
            self.add(&partial, counts.value(row))?;
        }
        Ok(())
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.sums.as_ref().map_or(0, |s| s.len() * 8)
    }
}

fn float_vector() -> DataType {
    DataType::new_list(DataType::Float32, true)
}

fn is_vector(t: &DataType) -> bool {
    match t {
        DataType::List(item) | DataType::LargeList(item) | DataType::FixedSizeList(item, _) => {
            item.data_type().is_numeric() || item.data_type().is_null()
        }
        DataType::Null => true,
        _ => false,
    }
}

fn two_vectors(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [a, b] if is_vector(a) && is_vector(b) => Ok(vec![float_vector(), float_vector()]),
        _ => Err(bad_arguments(name, "two arrays of FLOATs", types)),
    }
}

fn vector_and_degree(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [v] if is_vector(v) => Ok(vec![float_vector()]),
        [v, degree] if is_vector(v) && degree.is_numeric() => {
            Ok(vec![float_vector(), DataType::Float32])
        }
        _ => Err(bad_arguments(
            name,
            "(array of FLOATs[, degree 1.0, 2.0 or float('inf')])",
            types,
        )),
    }
}

/// Which norm: Manhattan, Euclidean (the default) or the largest magnitude.
#[derive(Clone, Copy)]
enum Degree {
    One,
    Two,
    Infinity,
}

fn norm(vector: &[f64], degree: Degree) -> f64 {
    match degree {
        Degree::One => total(vector.iter().map(|x| x.abs())),
        Degree::Two => total(vector.iter().map(|x| x * x)).sqrt(),
        Degree::Infinity => vector.iter().fold(0.0, |most, x| most.max(x.abs())),
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    total(a.iter().zip(b).map(|(x, y)| x * y))
}

/// The sum, 0.0 for none (Rust's `sum` of no floats is -0.0, which would print as such).
fn total(terms: impl Iterator<Item = f64>) -> f64 {
    terms.fold(0.0, |sum, term| sum + term)
}

/// Row `row`'s vector in `DOUBLE`s; `None` when it or an element is NULL.
fn vector_at(vectors: &ListArray, row: usize) -> Option<Vec<f64>> {
    if vectors.is_null(row) {
        return None;
    }
    let values = vectors.value(row);
    let values = values.as_primitive::<Float32Type>();
    (values.null_count() == 0).then(|| values.values().iter().map(|&x| f64::from(x)).collect())
}

/// A `FLOAT` of each row's two vectors, `f`'s answer (`None`: NULL).
fn pairwise(
    name: &str,
    args: &[ArrayRef],
    f: impl Fn(&[f64], &[f64]) -> Option<f64>,
) -> Result<ArrayRef> {
    let (left, right) = (args[0].as_list::<i32>(), args[1].as_list::<i32>());
    let mut out = Float32Builder::with_capacity(left.len());
    for row in 0..left.len() {
        let (Some(a), Some(b)) = (vector_at(left, row), vector_at(right, row)) else {
            out.append_null();
            continue;
        };
        if a.len() != b.len() {
            return Err(DataFusionError::Execution(format!(
                "{name}: the vectors must have the same length; they have {} and {}",
                a.len(),
                b.len()
            )));
        }
        out.append_option(f(&a, &b).map(|x| x as f32));
    }
    Ok(Arc::new(out.finish()))
}

/// Each row's vector and degree (2.0 without the argument); a NULL degree gives a NULL
/// vector, a degree other than 1.0, 2.0 and infinity fails the query, as in Spark.
fn each_vector(args: &[ArrayRef], mut each: impl FnMut(Option<Vec<f64>>, Degree)) -> Result<()> {
    let vectors = args[0].as_list::<i32>();
    let degrees = args.get(1).map(|d| d.as_primitive::<Float32Type>());
    for row in 0..vectors.len() {
        let degree = match degrees {
            None => Some(Degree::Two),
            Some(d) if d.is_null(row) => None,
            Some(d) => Some(match d.value(row) {
                1.0 => Degree::One,
                2.0 => Degree::Two,
                x if x == f32::INFINITY => Degree::Infinity,
                x => {
                    return Err(DataFusionError::Execution(format!(
                        "the degree of a vector's norm must be 1.0, 2.0 or float('inf'); it \
                         is {x}"
                    )))
                }
            }),
        };
        match degree {
            Some(degree) => each(vector_at(vectors, row), degree),
            None => each(None, Degree::Two),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, open, refusals, value_rows};

    // Every expected value is Spark 4.3's.
    #[tokio::test]
    async fn vectors_measure_as_sparks() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT vector_cosine_similarity(array(1.0F, 2.0F), array(2.0F, 4.0F)), \
             vector_inner_product(array(1.0F, 2.0F), array(3.0F, 4.0F)), \
             vector_l2_distance(array(0.0F, 0.0F), array(3.0F, 4.0F)), \
             vector_norm(array(3.0F, 4.0F)), vector_norm(array(3.0F, 4.0F), 1.0F), \
             vector_norm(array(3.0F, -4.0F), float('inf')), \
             vector_normalize(array(3.0F, 4.0F), 1.0F), \
             vector_normalize(array(3.0F, -4.0F), float('inf')), \
             vector_cosine_similarity(array(1.0F, 2.0F, 3.0F), array(-1.0F, 0.5F, 2.0F)), \
             typeof(vector_inner_product(array(1.0F), array(1.0F)))",
            &[
                "1.0",
                "11.0",
                "5.0",
                "5.0",
                "7.0",
                "4.0",
                "[0.42857143, 0.5714286]",
                "[0.75, -1.0]",
                "0.6998542",
                "float",
            ],
        )
        .await;
        // Zero and empty vectors, NULL elements, a norm beyond a FLOAT's sum of squares.
        check(
            &engine,
            &s,
            "SELECT vector_cosine_similarity(array(0.0F), array(0.0F)), \
             vector_normalize(array(0.0F, 0.0F)), \
             vector_norm(CAST(array() AS ARRAY<FLOAT>)), \
             vector_normalize(CAST(array() AS ARRAY<FLOAT>)), \
             vector_l2_distance(array(1.0F, NULL), array(1.0F, 2.0F)), \
             vector_norm(CAST(NULL AS ARRAY<FLOAT>)), vector_norm(array(1e30F, 1e30F)), \
             vector_inner_product(array(1e30F), array(1e30F))",
            &[
                "NULL",
                "NULL",
                "0.0",
                "[]",
                "NULL",
                "NULL",
                "1.4142135e30",
                "inf",
            ],
        )
        .await;
        // The aggregates: a row with a NULL passed over, NULL for none (Spark's answers; its
        // mean of these is 2.3333335 and 2.6666665, kept in FLOATs as it goes).
        check(
            &engine,
            &s,
            "SELECT vector_sum(v), vector_avg(v) FROM VALUES (array(1.0F, 2.0F)), \
             (array(2.0F, 5.0F)), (array(4.0F, 1.0F)), (array(9.0F, NULL)), \
             (CAST(NULL AS ARRAY<FLOAT>)) AS t(v)",
            &["[7.0, 8.0]", "[2.3333333, 2.6666667]"],
        )
        .await;
        check(
            &engine,
            &s,
            "SELECT vector_sum(v) IS NULL, vector_avg(v) IS NULL FROM VALUES \
             (CAST(NULL AS ARRAY<FLOAT>)) AS t(v)",
            &["true", "true"],
        )
        .await;
        // By group, and over a window frame that slides.
        assert_eq!(
            value_rows(
                &engine,
                &s,
                "SELECT g, vector_sum(v) FROM VALUES (1, array(1.0F)), (1, array(2.0F)), \
                 (2, array(5.0F)) AS t(g, v) GROUP BY g ORDER BY g"
            )
            .await,
            [["1", "[3.0]"], ["2", "[5.0]"]]
        );
        assert_eq!(
            value_rows(
                &engine,
                &s,
                "SELECT id, vector_sum(v) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND \
                 CURRENT ROW) FROM VALUES (1, array(1.0F)), (2, array(2.0F)), (3, array(4.0F)) \
                 AS t(id, v) ORDER BY id"
            )
            .await,
            [["1", "[1.0]"], ["2", "[3.0]"], ["3", "[6.0]"]]
        );
        refusals(
            &engine,
            &s,
            &[
                (
                    "SELECT vector_sum(v) FROM VALUES (array(1.0F)), (array(3.0F, 4.0F)) AS t(v)",
                    "vector_sum: the vectors must have the same length; they have 1 and 2",
                ),
                (
                    "SELECT vector_inner_product(array(1.0F), array(1.0F, 2.0F))",
                    "the same length; they have 1 and 2",
                ),
                (
                    "SELECT vector_norm(array(3.0F, 4.0F), 0.0F)",
                    "must be 1.0, 2.0 or float('inf')",
                ),
            ],
        )
        .await;
    }
}
