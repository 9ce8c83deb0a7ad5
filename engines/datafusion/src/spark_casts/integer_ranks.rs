//! `row_number()`, `rank()`, `dense_rank()` and `ntile(n)` are `INT`s, as in Hive and Spark,
//! where DataFusion's are unsigned 64-bit integers, which no Hive type holds: the engine sent
//! them as `DECIMAL(20,0)`, so a JDBC client saw a `DECIMAL` column and PyHive handed pandas
//! `Decimal('1')` objects for a row number.
//!
//! Each is wrapped ([`IntegerRanks`]) under its own name, so DataFusion's optimizations that
//! know them by name (a `row_number() <= n` filter read as a top-n) still apply; the wrapper's
//! evaluator converts the numbers DataFusion's computes. A partition of more than 2^31 - 1
//! rows, which Spark refuses, would wrap.

use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::compute::cast;
use datafusion::arrow::compute::SortOptions;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::function::{
    ExpressionArgs, PartitionEvaluatorArgs, WindowFunctionSimplification, WindowUDFFieldArgs,
};
use datafusion::logical_expr::window_state::WindowAggState;
use datafusion::logical_expr::{
    Documentation, LimitEffect, PartitionEvaluator, ReversedUDWF, Signature, WindowUDF,
    WindowUDFImpl,
};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::prelude::SessionContext;

/// The ranking functions whose numbers Hive and Spark type `INT`.
pub const RANKING_FUNCTIONS: &[&str] = &["row_number", "rank", "dense_rank", "ntile"];

/// Replaces each of [`RANKING_FUNCTIONS`] registered in `ctx` by its [`IntegerRanks`].
pub fn register(ctx: &SessionContext) {
    let state = ctx.state();
    for name in RANKING_FUNCTIONS {
        if let Some(function) = state.window_functions().get(*name) {
            ctx.register_udwf(WindowUDF::new_from_impl(IntegerRanks {
                function: function.as_ref().clone(),
            }));
        }
    }
}

/// A window function whose unsigned numbers are `INT`s; otherwise the wrapped function.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct IntegerRanks {
    function: WindowUDF,
}

impl IntegerRanks {
    fn inner(&self) -> &dyn WindowUDFImpl {
        self.function.inner().as_ref()
    }
}

impl WindowUDFImpl for IntegerRanks {
    fn name(&self) -> &str {
        self.function.name()
    }

    fn aliases(&self) -> &[String] {
        self.function.aliases()
    }

    fn signature(&self) -> &Signature {
        self.function.signature()
    }

    fn expressions(&self, args: ExpressionArgs) -> Vec<Arc<dyn PhysicalExpr>> {
        self.inner().expressions(args)
    }

    fn partition_evaluator(
        &self,
        args: PartitionEvaluatorArgs,
    ) -> Result<Box<dyn PartitionEvaluator>> {
        Ok(Box::new(IntegerEvaluator(
            self.inner().partition_evaluator(args)?,
        )))
    }

    fn simplify(&self) -> Option<WindowFunctionSimplification> {
        self.inner().simplify()
    }

    fn field(&self, args: WindowUDFFieldArgs) -> Result<FieldRef> {
        let field = self.inner().field(args)?;
        Ok(if field.data_type().is_unsigned_integer() {
            Arc::new(Field::new(
                field.name(),
                DataType::Int32,
                field.is_nullable(),
            ))
        } else {
            field
        })
    }

    fn sort_options(&self) -> Option<SortOptions> {
        self.inner().sort_options()
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        self.inner().coerce_types(types)
    }

    fn reverse_expr(&self) -> ReversedUDWF {
        self.inner().reverse_expr()
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner().documentation()
    }

    fn limit_effect(&self, args: &[Arc<dyn PhysicalExpr>]) -> LimitEffect {
        self.inner().limit_effect(args)
    }
}

/// The wrapped function's evaluator, its unsigned numbers converted to `INT`s.
#[derive(Debug)]
struct IntegerEvaluator(Box<dyn PartitionEvaluator>);

fn as_int(values: ArrayRef) -> Result<ArrayRef> {
    Ok(if values.data_type().is_unsigned_integer() {
        cast(&values, &DataType::Int32)?
    } else {
        values
    })
}

impl PartitionEvaluator for IntegerEvaluator {
    fn memoize(&mut self, state: &mut WindowAggState) -> Result<()> {
        self.0.memoize(state)
    }

    fn get_range(&self, idx: usize, n_rows: usize) -> Result<Range<usize>> {
        self.0.get_range(idx, n_rows)
    }

    fn is_causal(&self) -> bool {
        self.0.is_causal()
    }

    fn evaluate_all(&mut self, values: &[ArrayRef], num_rows: usize) -> Result<ArrayRef> {
        as_int(self.0.evaluate_all(values, num_rows)?)
    }

    fn evaluate(&mut self, values: &[ArrayRef], range: &Range<usize>) -> Result<ScalarValue> {
        let value = self.0.evaluate(values, range)?;
        if value.data_type().is_unsigned_integer() {
            value.cast_to(&DataType::Int32)
        } else {
            Ok(value)
        }
    }

    fn evaluate_all_with_rank(
        &self,
        num_rows: usize,
        ranks_in_partition: &[Range<usize>],
    ) -> Result<ArrayRef> {
        as_int(
            self.0
                .evaluate_all_with_rank(num_rows, ranks_in_partition)?,
        )
    }

    fn supports_bounded_execution(&self) -> bool {
        self.0.supports_bounded_execution()
    }

    fn uses_window_frame(&self) -> bool {
        self.0.uses_window_frame()
    }

    fn include_rank(&self) -> bool {
        self.0.include_rank()
    }
}
