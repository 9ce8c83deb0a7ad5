//! Every aggregate as Spark runs it, DataFusion's and the engine's alike: one wrapper
//! ([`SparkAggregate`]) around each registered aggregate, which is the aggregate itself but
//! for two things DataFusion refused while Spark answers:
//!
//! - over a window frame that slides, an aggregate whose accumulator cannot take rows back
//!   (`bool_and`, `string_agg`, `mode`, `percentile_approx`, ...) is computed again over the
//!   frame's rows as it moves ([`sliding_frames`]);
//! - an aggregate of numbers given a string (`sum(s)` of a `STRING` column) reads it as a
//!   `DOUBLE`, as Spark's implicit casts do
//!   ([`crate::spark_casts::argument_casts::NUMBER_AGGREGATES`]).

mod sliding_frames;

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::expr::{
    AggregateFunction, AggregateFunctionParams, WindowFunctionParams,
};
use datafusion::logical_expr::function::{
    AccumulatorArgs, AggregateFunctionSimplification, StateFieldsArgs,
};
use datafusion::logical_expr::utils::AggregateOrderSensitivity;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Expr, GroupsAccumulator, Operator,
    ReversedUDAF, SetMonotonicity, Signature, StatisticsArgs,
};
use datafusion::prelude::SessionContext;

use crate::spark_casts::argument_casts::{strings_as_numbers, NUMBER_AGGREGATES};

/// Replaces every aggregate registered in `ctx` by its [`SparkAggregate`]. Called once all of
/// the engine's aggregates are registered.
pub fn register(ctx: &SessionContext) {
    let state = ctx.state();
    let mut aggregates: Vec<_> = state.aggregate_functions().values().cloned().collect();
    // The registry holds an aggregate under each of its aliases: wrap it once.
    aggregates.sort_by(|a, b| a.name().cmp(b.name()));
    aggregates.dedup_by(|a, b| a.name() == b.name());
    for aggregate in aggregates {
        // By any of its names: `var_samp` is DataFusion's `var`.
        let reads_strings = std::iter::once(aggregate.name())
            .chain(aggregate.aliases().iter().map(String::as_str))
            .any(|name| NUMBER_AGGREGATES.contains(&name));
        let wrapped = SparkAggregate::new(aggregate.as_ref().clone(), reads_strings);
        ctx.register_udaf(AggregateUDF::new_from_impl(wrapped));
    }
}

/// `aggregate`, computed again over a sliding frame where it cannot take rows back and, for
/// the aggregates of numbers, reading strings as numbers where it refuses them.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct SparkAggregate {
    aggregate: AggregateUDF,
    /// For an aggregate of numbers: a signature that lets every argument through to
    /// `coerce_types`, which reads a string as a number where the aggregate refuses it.
    strings_as_numbers: Option<Signature>,
}

impl SparkAggregate {
    pub fn new(aggregate: AggregateUDF, reads_strings: bool) -> Self {
        let strings_as_numbers =
            reads_strings.then(|| Signature::user_defined(aggregate.signature().volatility));
        Self {
            aggregate,
            strings_as_numbers,
        }
    }

    fn inner(&self) -> &dyn AggregateUDFImpl {
        self.aggregate.inner().as_ref()
    }

    /// `aggregate` wrapped as this one is (a variant of it DataFusion planned instead).
    fn wrapping(&self, aggregate: AggregateUDF) -> Self {
        Self::new(aggregate, self.strings_as_numbers.is_some())
    }
}

#[warn(clippy::missing_trait_methods)] // It delegates: a method left out would be the default.
impl AggregateUDFImpl for SparkAggregate {
    fn name(&self) -> &str {
        self.aggregate.name()
    }

    fn aliases(&self) -> &[String] {
        self.aggregate.aliases()
    }

    fn schema_name(&self, params: &AggregateFunctionParams) -> Result<String> {
        self.inner().schema_name(params)
    }

    fn human_display(&self, params: &AggregateFunctionParams) -> Result<String> {
        self.inner().human_display(params)
    }

    fn display_name(&self, params: &AggregateFunctionParams) -> Result<String> {
        self.inner().display_name(params)
    }

    fn window_function_schema_name(&self, params: &WindowFunctionParams) -> Result<String> {
        self.inner().window_function_schema_name(params)
    }

    fn window_function_display_name(&self, params: &WindowFunctionParams) -> Result<String> {
        self.inner().window_function_display_name(params)
    }

    fn signature(&self) -> &Signature {
        self.strings_as_numbers
            .as_ref()
            .unwrap_or_else(|| self.inner().signature())
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        if self.strings_as_numbers.is_some() {
            strings_as_numbers(&self.aggregate, types)
        } else {
            self.inner().coerce_types(types)
        }
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        self.inner().return_type(types)
    }

    fn return_field(&self, fields: &[FieldRef]) -> Result<FieldRef> {
        self.inner().return_field(fields)
    }

    fn is_nullable(&self) -> bool {
        self.inner().is_nullable()
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        self.inner().accumulator(args)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        self.inner().state_fields(args)
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        self.inner().groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        self.inner().create_groups_accumulator(args)
    }

    /// The aggregate's own, where it takes rows back (`sum`, `count`, `collect_list`);
    /// otherwise computed again over the frame as it moves.
    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let own = self.inner().create_sliding_accumulator(args.clone())?;
        if own.supports_retract_batch() {
            return Ok(own);
        }
        sliding_frames::recomputed(Arc::clone(self.aggregate.inner()), args)
    }

    fn with_beneficial_ordering(
        self: Arc<Self>,
        beneficial_ordering: bool,
    ) -> Result<Option<Arc<dyn AggregateUDFImpl>>> {
        let ordered =
            Arc::clone(self.aggregate.inner()).with_beneficial_ordering(beneficial_ordering)?;
        Ok(ordered.map(|inner| {
            Arc::new(self.wrapping(AggregateUDF::new_from_shared_impl(inner)))
                as Arc<dyn AggregateUDFImpl>
        }))
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        self.inner().order_sensitivity()
    }

    fn simplify(&self) -> Option<AggregateFunctionSimplification> {
        self.inner().simplify()
    }

    fn simplify_expr_op_literal(
        &self,
        aggregate: &AggregateFunction,
        argument: &Expr,
        op: Operator,
        literal: &Expr,
        argument_is_left: bool,
    ) -> Result<Option<Expr>> {
        self.inner()
            .simplify_expr_op_literal(aggregate, argument, op, literal, argument_is_left)
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        match self.inner().reverse_expr() {
            ReversedUDAF::Reversed(reversed) => ReversedUDAF::Reversed(Arc::new(
                AggregateUDF::new_from_impl(self.wrapping(reversed.as_ref().clone())),
            )),
            same_or_none => same_or_none,
        }
    }

    fn is_descending(&self) -> Option<bool> {
        self.inner().is_descending()
    }

    fn value_from_stats(&self, statistics_args: &StatisticsArgs) -> Option<ScalarValue> {
        self.inner().value_from_stats(statistics_args)
    }

    fn default_value(&self, data_type: &DataType) -> Result<ScalarValue> {
        self.inner().default_value(data_type)
    }

    fn supports_null_handling_clause(&self) -> bool {
        self.inner().supports_null_handling_clause()
    }

    fn supports_within_group_clause(&self) -> bool {
        self.inner().supports_within_group_clause()
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner().documentation()
    }

    fn set_monotonicity(&self, data_type: &DataType) -> SetMonotonicity {
        self.inner().set_monotonicity(data_type)
    }
}
