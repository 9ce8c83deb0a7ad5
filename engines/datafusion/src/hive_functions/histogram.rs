//! Hive's aggregate `histogram_numeric(x, b)`: a histogram of a group's numbers in at most
//! `b` bins, each its centre `x` and height `y`, built as Hive's (and Spark's)
//! `NumericHistogram` builds it (Ben-Haim and Tom-Tov's streaming histogram): each value is
//! a bin of height 1, or adds 1 to the bin of its value; past `b` bins the two closest are
//! merged into their weighted mean, ties broken by a `java.util.Random(31183)` as Hive
//! breaks them. Partial histograms merge by pooling their bins and merging again.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Array};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Float64Type, Int64Type};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Signature, Volatility,
};

use super::bad_arguments;
use super::math::JavaRandom;

/// Hive's seed for breaking ties between equally close bins.
const TIE_SEED: i64 = 31183;

pub fn aggregates() -> Vec<AggregateUDF> {
    vec![AggregateUDF::new_from_impl(HistogramNumeric {
        signature: Signature::user_defined(Volatility::Immutable),
    })]
}

fn bin_fields() -> Fields {
    Fields::from(vec![
        Field::new("x", DataType::Float64, true),
        Field::new("y", DataType::Float64, true),
    ])
}

fn result_type() -> DataType {
    DataType::new_list(DataType::Struct(bin_fields()), true)
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct HistogramNumeric {
    signature: Signature,
}

impl AggregateUDFImpl for HistogramNumeric {
    fn name(&self) -> &str {
        "histogram_numeric"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        match types {
            [x, b] if (x.is_numeric() || x.is_null()) && super::is_integer(b) => {
                Ok(vec![DataType::Float64, DataType::Int64])
            }
            _ => Err(bad_arguments(
                self.name(),
                "(number, number of bins)",
                types,
            )),
        }
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(result_type())
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation("histogram_numeric")
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(super::list_and_parameters_state(
            args.name,
            result_type(),
            &["b"],
        ))
    }

    fn accumulator(&self, _: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(NumericHistogram {
            bins: Vec::new(),
            most: None,
            ties: JavaRandom::new(TIE_SEED),
        }))
    }
}

/// Hive's `NumericHistogram`: bins sorted by centre.
#[derive(Debug)]
struct NumericHistogram {
    /// `(x, y)`: centre and height.
    bins: Vec<(f64, f64)>,
    /// The number of bins `b`, from the first row that gives it.
    most: Option<usize>,
    ties: JavaRandom,
}

impl NumericHistogram {
    fn set_most(&mut self, b: i64) -> Result<()> {
        if self.most.is_none() {
            let b = usize::try_from(b).ok().filter(|&b| b >= 2).ok_or_else(|| {
                DataFusionError::Execution(
                    "histogram_numeric: the number of bins must be at least 2".into(),
                )
            })?;
            self.most = Some(b);
        }
        Ok(())
    }

    /// Hive's `add`: a value's bin gets 1 higher, or a bin of height 1 is inserted.
    fn add(&mut self, v: f64) {
        let at = self.bins.partition_point(|&(x, _)| x < v);
        match self.bins.get_mut(at) {
            Some((x, y)) if *x == v => *y += 1.0,
            _ => {
                self.bins.insert(at, (v, 1.0));
                self.trim();
            }
        }
    }

    /// Hive's `trim`: merges the two closest bins until at most `b` are left; among
    /// equally close pairs, each later one replaces the chosen one with probability
    /// `1 / (pairs seen)`, drawn from Hive's generator.
    fn trim(&mut self) {
        let Some(most) = self.most else { return };
        while self.bins.len() > most {
            let mut smallest = self.bins[1].0 - self.bins[0].0;
            let (mut at, mut count) = (0, 1u32);
            for i in 1..self.bins.len() - 1 {
                let diff = self.bins[i + 1].0 - self.bins[i].0;
                if diff < smallest {
                    smallest = diff;
                    at = i;
                    count = 1;
                } else if diff == smallest {
                    count += 1;
                    if self.ties.next_double() <= 1.0 / f64::from(count) {
                        at = i;
                    }
                }
            }
            let (x1, y1) = self.bins[at];
            let (x2, y2) = self.bins.remove(at + 1);
            let d = y1 + y2;
            // Hive's arithmetic, in its order.
            self.bins[at] = (x1 * (y1 / d) + x2 / d * y2, d);
        }
    }

    fn to_scalar(&self) -> Result<ScalarValue> {
        let xs = Float64Array::from_iter_values(self.bins.iter().map(|(x, _)| *x));
        let ys = Float64Array::from_iter_values(self.bins.iter().map(|(_, y)| *y));
        super::struct_list(bin_fields(), vec![Arc::new(xs), Arc::new(ys)])
    }
}

impl Accumulator for NumericHistogram {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(b) = values[1]
            .as_primitive::<Int64Type>()
            .iter()
            .flatten()
            .next()
        else {
            return Ok(());
        };
        self.set_most(b)?;
        for v in values[0].as_primitive::<Float64Type>().iter().flatten() {
            self.add(v);
        }
        Ok(())
    }

    /// Hive's `merge`: an empty histogram takes the other's bins; otherwise both are pooled,
    /// sorted, and trimmed.
    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let most = states[1].as_primitive::<Int64Type>();
        for (row, bins) in states[0].as_list::<i32>().iter().enumerate() {
            let Some(bins) = bins.filter(|bins| !bins.is_empty()) else {
                continue;
            };
            if !most.is_null(row) {
                self.set_most(most.value(row))?;
            }
            let bins = bins.as_struct();
            let xs = bins.column(0).as_primitive::<Float64Type>();
            let ys = bins.column(1).as_primitive::<Float64Type>();
            self.bins
                .extend(xs.values().iter().copied().zip(ys.values().iter().copied()));
            self.bins.sort_by(|a, b| a.0.total_cmp(&b.0));
            self.trim();
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            self.to_scalar()?,
            ScalarValue::Int64(self.most.map(|b| b as i64)),
        ])
    }

    /// The bins; NULL for a group without a value, as Hive and Spark.
    fn evaluate(&mut self) -> Result<ScalarValue> {
        if self.bins.is_empty() {
            return ScalarValue::try_from(result_type());
        }
        self.to_scalar()
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.bins.capacity() * std::mem::size_of::<(f64, f64)>()
    }
}
