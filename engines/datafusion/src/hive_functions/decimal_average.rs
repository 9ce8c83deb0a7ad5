//! Spark's `avg` of decimals: DataFusion's `avg`, whose answer for a `DECIMAL(p, s)` is
//! rounded half up to `DECIMAL(min(38, p + 4), min(38, s + 4))`, where DataFusion's truncates.
//!
//! [`SparkAverage`] takes the name `avg` (and `mean`) from DataFusion's [`Avg`] and hands it
//! everything: the signature, the types, the state, and the accumulators, which keep the count
//! and the sum. For a decimal argument it wraps the accumulator it gets and answers from that
//! state as Spark's `Average` does (`DecimalDivideWithOverflowCheck` of the sum by the count):
//! the mean rounded half up (away from zero), NULL for no values, for a sum beyond Spark's sum
//! type (`DECIMAL(min(38, p + 10), s)`) and for a mean beyond the result type (an average of
//! `DECIMAL(38,36)` values in `DECIMAL(38,38)`), where DataFusion fails the query. This holds
//! for the one accumulator of a query's whole rows or of a window's frame (a sliding frame
//! retracts rows through DataFusion's accumulator), for [`GroupsAccumulator`]s of
//! `GROUP BY`, and for `avg(DISTINCT x)`. The average of other types is DataFusion's
//! unchanged: its accumulators are returned as they are.
//!
//! Wrapping, rather than an accumulator of our own, keeps DataFusion's summing (wide enough
//! for a billion rows), its partial states, its merging and retracting, and its speed; only
//! the last division is Spark's ([`super::decimal_division::divide_half_up`]).

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, Decimal256Array, UInt64Array,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    i256, DataType, Decimal128Type, Decimal256Type, FieldRef, UInt64Type, DECIMAL128_MAX_PRECISION,
    DECIMAL256_MAX_PRECISION,
};
use datafusion::common::{internal_err, ScalarValue};
use datafusion::error::Result;
use datafusion::functions_aggregate::average::Avg;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, EmitTo, GroupsAccumulator,
    ReversedUDAF, Signature,
};

use super::decimal_division::{divide_half_up, divide_half_up_i128};

/// The averaging aggregate: `avg` (`mean`), in place of DataFusion's.
pub fn aggregates() -> Vec<AggregateUDF> {
    vec![AggregateUDF::new_from_impl(SparkAverage::default())]
}

/// `avg(x)`: DataFusion's [`Avg`], its answer for decimals rounded half up as Spark's.
#[derive(Debug, Default, PartialEq, Eq, Hash)]
struct SparkAverage {
    builtin: Avg,
}

impl AggregateUDFImpl for SparkAverage {
    fn name(&self) -> &str {
        self.builtin.name()
    }

    fn aliases(&self) -> &[String] {
        self.builtin.aliases()
    }

    fn signature(&self) -> &Signature {
        self.builtin.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.builtin.return_type(arg_types)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        self.builtin.state_fields(args)
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let mean = DecimalMean::of(&args);
        let distinct = args.is_distinct;
        let builtin = self.builtin.accumulator(args)?;
        Ok(match mean {
            Some(mean) => Box::new(DecimalAverage {
                builtin,
                mean,
                distinct,
            }),
            None => builtin,
        })
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        self.builtin.groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        let mean = DecimalMean::of(&args);
        let builtin = self.builtin.create_groups_accumulator(args)?;
        Ok(match mean {
            Some(mean) => Box::new(DecimalGroupsAverage { builtin, mean }),
            None => builtin,
        })
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        self.builtin.reverse_expr()
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.builtin.documentation()
    }
}

/// How Spark answers the mean of a sum and a count of `DECIMAL(p, s)` values.
#[derive(Debug, Clone)]
struct DecimalMean {
    /// Spark's sum's precision, `min(38, p + 10)`: a sum of more digits is NULL.
    sum_precision: u8,
    /// The result's type (DataFusion's, `DECIMAL(min(38, p + 4), min(38, s + 4))` for a
    /// `Decimal128`), its precision and scale.
    result: DataType,
    precision: u8,
    scale: i8,
}

impl DecimalMean {
    /// The mean of an aggregate of `Decimal32`, `Decimal64` or `Decimal128` values (Spark's
    /// decimals, of at most 38 digits); `None` for other arguments, whose average stays
    /// DataFusion's.
    fn of(args: &AccumulatorArgs) -> Option<Self> {
        let input = match args.expr_fields.first()?.data_type() {
            DataType::Decimal32(p, _) | DataType::Decimal64(p, _) | DataType::Decimal128(p, _) => {
                *p
            }
            _ => return None,
        };
        let result = args.return_type().clone();
        let (precision, scale) = match result {
            DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s) => {
                (p, s)
            }
            _ => return None,
        };
        Some(Self {
            sum_precision: input.saturating_add(10).min(DECIMAL128_MAX_PRECISION),
            result,
            precision,
            scale,
        })
    }

    /// The means of `sums` (unscaled, of any decimal type) over `counts`, group by group, as
    /// an array of the result's type: NULL where either is NULL, the count 0, the sum beyond
    /// Spark's sum type or the mean beyond the result's.
    fn means(&self, counts: &UInt64Array, sums: &dyn Array) -> Result<ArrayRef> {
        let sum_scale = match sums.data_type() {
            DataType::Decimal32(_, s)
            | DataType::Decimal64(_, s)
            | DataType::Decimal128(_, s)
            | DataType::Decimal256(_, s) => *s,
            other => return internal_err!("avg's sum is a decimal, not {other}"),
        };
        // The mean of unscaled sums is read at the sum's scale: scaled up to the result's.
        let shift = i32::from(self.scale) - i32::from(sum_scale);
        let means: Decimal128Array = if let Some(sums) = sums.as_primitive_opt::<Decimal128Type>() {
            let sum_bound = 10i128.pow(u32::from(self.sum_precision));
            counts
                .iter()
                .zip(sums.iter())
                .map(|(count, sum)| {
                    let (count, sum) = (i128::from(count?), sum?);
                    if count == 0 || sum.unsigned_abs() >= sum_bound.unsigned_abs() {
                        return None;
                    }
                    divide_half_up_i128(sum, count, shift, self.precision)
                })
                .collect()
        } else {
            let wide = cast(
                sums,
                &DataType::Decimal256(DECIMAL256_MAX_PRECISION, sum_scale),
            )?;
            let sum_bound = i256::from(10i8).wrapping_pow(u32::from(self.sum_precision));
            counts
                .iter()
                .zip(wide.as_primitive::<Decimal256Type>().iter())
                .map(|(count, sum)| {
                    let (count, sum) = (i256::from_i128(i128::from(count?)), sum?);
                    if count == i256::ZERO || sum.checked_abs()? >= sum_bound {
                        return None;
                    }
                    // Within the result's precision (at most 38 digits), an i128.
                    divide_half_up(sum, count, shift, self.precision).map(i256::as_i128)
                })
                .collect()
        };
        let means = means.with_precision_and_scale(self.precision, self.scale)?;
        Ok(if self.result == *means.data_type() {
            Arc::new(means)
        } else {
            cast(&means, &self.result)?
        })
    }
}

/// DataFusion's accumulator of `avg` over decimals, answering with Spark's mean of its state.
#[derive(Debug)]
struct DecimalAverage {
    builtin: Box<dyn Accumulator>,
    mean: DecimalMean,
    /// `avg(DISTINCT x)`, whose state is the list of the distinct values rather than the
    /// count and the sum.
    distinct: bool,
}

impl DecimalAverage {
    /// The count and the sum of the distinct values in `list`, the distinct accumulator's
    /// state.
    fn distinct_count_and_sum(list: &ScalarValue) -> Result<(ArrayRef, ArrayRef)> {
        let ScalarValue::List(list) = list else {
            return internal_err!("avg(DISTINCT)'s state is a list, not {list:?}");
        };
        let values = if list.is_null(0) {
            list.values().slice(0, 0)
        } else {
            list.value(0)
        };
        let scale = match values.data_type() {
            DataType::Decimal32(_, s)
            | DataType::Decimal64(_, s)
            | DataType::Decimal128(_, s)
            | DataType::Decimal256(_, s) => *s,
            other => return internal_err!("avg(DISTINCT) of decimals lists {other}"),
        };
        let wide_type = DataType::Decimal256(DECIMAL256_MAX_PRECISION, scale);
        let wide = cast(&values, &wide_type)?;
        let wide = wide.as_primitive::<Decimal256Type>();
        // Distinct values of at most 38 digits: far too few to overflow 76.
        let sum = wide.iter().flatten().fold(i256::ZERO, i256::wrapping_add);
        let count = (wide.len() - wide.null_count()) as u64;
        let sums = Decimal256Array::from(vec![sum]).with_data_type(wide_type);
        Ok((Arc::new(UInt64Array::from(vec![count])), Arc::new(sums)))
    }
}

impl Accumulator for DecimalAverage {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.builtin.update_batch(values)
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        // DataFusion's state is its count and sum as they are (it does not reset them), so
        // a window may ask for it after every row.
        let state = self.builtin.state()?;
        let (counts, sums) = if self.distinct {
            Self::distinct_count_and_sum(&state[0])?
        } else {
            (state[0].to_array()?, state[1].to_array()?)
        };
        let means = self
            .mean
            .means(counts.as_primitive::<UInt64Type>(), sums.as_ref())?;
        ScalarValue::try_from_array(&means, 0)
    }

    fn size(&self) -> usize {
        self.builtin.size() + size_of_val(self)
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        self.builtin.state()
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.builtin.merge_batch(states)
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.builtin.retract_batch(values)
    }

    fn supports_retract_batch(&self) -> bool {
        self.builtin.supports_retract_batch()
    }
}

/// DataFusion's groups accumulator of `avg` over decimals, answering with Spark's means of
/// its states.
struct DecimalGroupsAverage {
    builtin: Box<dyn GroupsAccumulator>,
    mean: DecimalMean,
}

impl GroupsAccumulator for DecimalGroupsAverage {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.builtin
            .update_batch(values, group_indices, opt_filter, total_num_groups)
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        // The state takes the emitted groups' counts and sums as evaluating would.
        let state = self.builtin.state(emit_to)?;
        self.mean
            .means(state[0].as_primitive::<UInt64Type>(), state[1].as_ref())
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        self.builtin.state(emit_to)
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.builtin
            .merge_batch(values, group_indices, total_num_groups)
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        self.builtin.convert_to_state(values, opt_filter)
    }

    fn size(&self) -> usize {
        self.builtin.size() + size_of_val(self)
    }
}

#[cfg(test)]
mod tests;
