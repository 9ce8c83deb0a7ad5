//! A NULL of no type (`NULL`, a column of NULL literals) given to `sum` or `avg` is a
//! `DOUBLE`, as Spark casts it to the number its function expects (`sum(NULL)` is a NULL
//! `DOUBLE`), where DataFusion refuses it ("SUM not supported for Null", "AvgAccumulator for
//! Null").
//!
//! `avg`'s argument is cast by an analyzer rule ([`NULL_NUMBERS`]); `sum` refuses the NULL
//! while the statement is planned, before any rule runs, so [`SparkSum`] takes its name from
//! DataFusion's `Sum` and coerces a NULL to a `DOUBLE`, handing everything else to `Sum`.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::functions_aggregate::sum::Sum;
use datafusion::logical_expr::expr::WindowFunction;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::type_coercion::functions::fields_with_udf;
use datafusion::logical_expr::utils::AggregateOrderSensitivity;
use datafusion::logical_expr::{
    cast, Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Expr, ExprSchemable,
    GroupsAccumulator, ReversedUDAF, SetMonotonicity, Signature, StatisticsArgs, Volatility,
    WindowFunctionDefinition,
};

/// The aggregates whose NULL argument is a `DOUBLE` (Spark's `NumericType` inputs).
const NUMERIC_AGGREGATES: [&str; 3] = ["sum", "avg", "mean"];

/// `sum`, in place of DataFusion's.
pub fn aggregates() -> Vec<AggregateUDF> {
    vec![AggregateUDF::new_from_impl(SparkSum::default())]
}

/// DataFusion's [`Sum`], a NULL argument taken as a `DOUBLE`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct SparkSum {
    builtin: Sum,
    signature: Signature,
}

impl Default for SparkSum {
    fn default() -> Self {
        Self {
            builtin: Sum::default(),
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl AggregateUDFImpl for SparkSum {
    fn name(&self) -> &str {
        self.builtin.name()
    }

    fn aliases(&self) -> &[String] {
        self.builtin.aliases()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        if let [t] = types {
            if t.is_null() {
                return Ok(vec![DataType::Float64]);
            }
        }
        let builtin = AggregateUDF::new_from_impl(Sum::default());
        let fields: Vec<_> = types
            .iter()
            .map(|t| Arc::new(Field::new("x", t.clone(), true)))
            .collect();
        Ok(fields_with_udf(&fields, &builtin)?
            .iter()
            .map(|f| f.data_type().clone())
            .collect())
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        self.builtin.return_type(types)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        self.builtin.state_fields(args)
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        self.builtin.accumulator(args)
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        self.builtin.groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        self.builtin.create_groups_accumulator(args)
    }

    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        self.builtin.create_sliding_accumulator(args)
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        self.builtin.reverse_expr()
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        self.builtin.order_sensitivity()
    }

    fn set_monotonicity(&self, data_type: &DataType) -> SetMonotonicity {
        self.builtin.set_monotonicity(data_type)
    }

    fn value_from_stats(&self, statistics_args: &StatisticsArgs) -> Option<ScalarValue> {
        self.builtin.value_from_stats(statistics_args)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.builtin.documentation()
    }
}

/// Casts an untyped NULL argument of [`NUMERIC_AGGREGATES`] (as an aggregate or over a
/// window) to a `DOUBLE`. An analyzer rule placed before type coercion, which refuses it.
pub const NULL_NUMBERS: crate::hive_syntax::ExpressionRewrite =
    crate::hive_syntax::ExpressionRewrite::new("null_numbers", null_number);

fn null_number(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    match expr {
        Expr::AggregateFunction(mut aggregate)
            if NUMERIC_AGGREGATES.contains(&aggregate.func.name()) =>
        {
            let changed = doubles(&mut aggregate.params.args, schema);
            Ok(transformed(Expr::AggregateFunction(aggregate), changed))
        }
        Expr::WindowFunction(mut window)
            if matches!(&window.fun, WindowFunctionDefinition::AggregateUDF(f)
                if NUMERIC_AGGREGATES.contains(&f.name())) =>
        {
            let WindowFunction { params, .. } = window.as_mut();
            let changed = doubles(&mut params.args, schema);
            Ok(transformed(Expr::WindowFunction(window), changed))
        }
        expr => Ok(Transformed::no(expr)),
    }
}

fn transformed(expr: Expr, changed: bool) -> Transformed<Expr> {
    if changed {
        Transformed::yes(expr)
    } else {
        Transformed::no(expr)
    }
}

/// Casts each argument of the `Null` type to a `DOUBLE`; whether any was.
fn doubles(args: &mut [Expr], schema: &DFSchema) -> bool {
    let mut changed = false;
    for arg in args {
        if arg.get_type(schema).is_ok_and(|t| t.is_null()) {
            *arg = cast(arg.clone(), DataType::Float64);
            changed = true;
        }
    }
    changed
}
