//! An aggregate over a window frame that slides (`max_by(x, t) OVER (ORDER BY t ROWS BETWEEN
//! 2 PRECEDING AND CURRENT ROW)`), where rows leave the frame as others enter. DataFusion asks
//! such an aggregate to take rows back, which a mode, a skewness, a quantile summary or a
//! `bool_and` cannot; it refused the query. Spark computes such an aggregate again over the
//! frame's rows each time the frame moves, and so does [`Recomputed`]: it keeps the frame's
//! rows and feeds them to a fresh accumulator when the frame's value is asked for.

use std::collections::VecDeque;
use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{FieldRef, Schema};
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::logical_expr::function::AccumulatorArgs;
use datafusion::logical_expr::{Accumulator, AggregateUDFImpl};
use datafusion::physical_expr::PhysicalSortExpr;
use datafusion::physical_plan::PhysicalExpr;

/// An accumulator for a sliding frame of `aggregate`, whose own accumulators cannot take rows
/// back.
pub(super) fn recomputed(
    aggregate: Arc<dyn AggregateUDFImpl>,
    args: AccumulatorArgs,
) -> Result<Box<dyn Accumulator>> {
    let arguments = OwnedArgs {
        return_field: Arc::clone(&args.return_field),
        schema: args.schema.clone(),
        ignore_nulls: args.ignore_nulls,
        order_bys: args.order_bys.to_vec(),
        is_reversed: args.is_reversed,
        name: args.name.to_owned(),
        is_distinct: args.is_distinct,
        exprs: args.exprs.to_vec(),
        expr_fields: args.expr_fields.to_vec(),
    };
    // Made once here, so that arguments the aggregate refuses fail the query at once.
    aggregate.accumulator(args)?;
    Ok(Box::new(Recomputed {
        aggregate,
        arguments,
        rows: VecDeque::new(),
    }))
}

/// What an accumulator is made from, kept to make fresh ones.
#[derive(Debug)]
struct OwnedArgs {
    return_field: FieldRef,
    schema: Schema,
    ignore_nulls: bool,
    order_bys: Vec<PhysicalSortExpr>,
    is_reversed: bool,
    name: String,
    is_distinct: bool,
    exprs: Vec<Arc<dyn PhysicalExpr>>,
    expr_fields: Vec<FieldRef>,
}

impl OwnedArgs {
    fn borrowed(&self) -> AccumulatorArgs<'_> {
        AccumulatorArgs {
            return_field: Arc::clone(&self.return_field),
            schema: &self.schema,
            ignore_nulls: self.ignore_nulls,
            order_bys: &self.order_bys,
            is_reversed: self.is_reversed,
            name: &self.name,
            is_distinct: self.is_distinct,
            exprs: &self.exprs,
            expr_fields: &self.expr_fields,
        }
    }
}

/// The frame's rows, each its arguments' values, in the order they entered it.
#[derive(Debug)]
struct Recomputed {
    aggregate: Arc<dyn AggregateUDFImpl>,
    arguments: OwnedArgs,
    rows: VecDeque<Vec<ScalarValue>>,
}

impl Recomputed {
    /// A fresh accumulator of the aggregate, given the frame's rows.
    fn over_frame(&self) -> Result<Box<dyn Accumulator>> {
        let mut accumulator = self.aggregate.accumulator(self.arguments.borrowed())?;
        if let Some(first) = self.rows.front() {
            let columns = (0..first.len())
                .map(|i| ScalarValue::iter_to_array(self.rows.iter().map(|row| row[i].clone())))
                .collect::<Result<Vec<_>>>()?;
            accumulator.update_batch(&columns)?;
        }
        Ok(accumulator)
    }
}

impl Accumulator for Recomputed {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let rows = values.first().map_or(0, |column| column.len());
        for row in 0..rows {
            let arguments = values
                .iter()
                .map(|column| ScalarValue::try_from_array(column, row))
                .collect::<Result<Vec<_>>>()?;
            self.rows.push_back(arguments);
        }
        Ok(())
    }

    /// The rows leaving the frame are its first ones.
    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let leaving = values.first().map_or(0, |column| column.len());
        self.rows.drain(..leaving.min(self.rows.len()));
        Ok(())
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        self.over_frame()?.evaluate()
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        self.over_frame()?.state()
    }

    fn merge_batch(&mut self, _: &[ArrayRef]) -> Result<()> {
        Err(datafusion::error::DataFusionError::Internal(
            "a window frame's aggregate is never merged".into(),
        ))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self
                .rows
                .iter()
                .flatten()
                .map(ScalarValue::size)
                .sum::<usize>()
    }
}
