//! Hive's conditional functions: `if`, `isnull`, `isnotnull`, `istrue`, `isfalse`,
//! `isnottrue`, `isnotfalse`, and `field`, a search among its arguments; and Spark's
//! `equal_null` and aggregate `count_if`.

use datafusion::arrow::array::{ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, FieldRef, Int64Type};
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::type_coercion::binary::type_union_resolution;
use datafusion::logical_expr::{
    binary_expr, lit, when, Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Expr,
    Operator, ScalarUDF, Signature, Volatility,
};

use super::{bad_arguments, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::rewrite("if", coerce_if, |types| Ok(types[1].clone()), rewrite_if).udf(),
        HiveFunction::rewrite("isnull", any_one, boolean, |mut args, _| {
            Ok(args.remove(0).is_null())
        })
        .udf(),
        HiveFunction::rewrite("isnotnull", any_one, boolean, |mut args, _| {
            Ok(args.remove(0).is_not_null())
        })
        .udf(),
        // Spark's `equal_null(a, b)`: `a <=> b`, true for two NULLs.
        HiveFunction::rewrite(
            "equal_null",
            |name, types| {
                let common = crate::spark_casts::common_types::string_common_type(types)
                    .or_else(|| type_union_resolution(types))
                    .filter(|_| types.len() == 2)
                    .ok_or_else(|| bad_arguments(name, "two values of one type", types))?;
                Ok(vec![common.clone(), common])
            },
            boolean,
            |a, _| {
                let [left, right] = <[Expr; 2]>::try_from(a).expect("two arguments");
                Ok(binary_expr(left, Operator::IsNotDistinctFrom, right))
            },
        )
        .udf(),
        HiveFunction::rewrite("field", coerce_field, |_| Ok(DataType::Int32), field).udf(),
        // Hive 3's `x IS [NOT] TRUE|FALSE` as functions: never NULL.
        HiveFunction::rewrite("istrue", one_boolean, boolean, |mut a, _| {
            Ok(a.remove(0).is_true())
        })
        .udf(),
        HiveFunction::rewrite("isfalse", one_boolean, boolean, |mut a, _| {
            Ok(a.remove(0).is_false())
        })
        .udf(),
        HiveFunction::rewrite("isnottrue", one_boolean, boolean, |mut a, _| {
            Ok(a.remove(0).is_not_true())
        })
        .udf(),
        HiveFunction::rewrite("isnotfalse", one_boolean, boolean, |mut a, _| {
            Ok(a.remove(0).is_not_false())
        })
        .udf(),
    ]
}

fn one_boolean(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [DataType::Boolean | DataType::Null] => Ok(vec![DataType::Boolean]),
        _ => Err(bad_arguments(name, "a boolean", types)),
    }
}

/// `field(x, v1, v2, ...)`: the position (from 1) of the first `v` equal to `x`, 0 when
/// none is or `x` is NULL (a NULL `v` equals nothing), as Hive's: a `CASE` of equalities.
fn field(mut args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    let values = args.split_off(1);
    let x = args.pop().expect("a value to find");
    let mut positions = values.into_iter().zip(1i32..);
    let Some((first, position)) = positions.next() else {
        return Ok(lit(0i32));
    };
    let mut case = when(x.clone().eq(first), lit(position));
    for (value, position) in positions {
        case = case.when(x.clone().eq(value), lit(position));
    }
    case.otherwise(lit(0i32))
}

/// `field`'s arguments in their common type, as Hive compares them.
fn coerce_field(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let takes = "(value, value to compare, ...) of one type";
    if types.len() < 2 {
        return Err(bad_arguments(name, takes, types));
    }
    let common = type_union_resolution(types).ok_or_else(|| bad_arguments(name, takes, types))?;
    Ok(vec![common; types.len()])
}

/// `if(condition, then, else)`: a `CASE`, so that only the chosen branch is evaluated
/// (`if(d = 0, NULL, n / d)` does not divide by zero); a NULL condition takes `else`, as in
/// Hive. The branches take their common type.
fn rewrite_if(mut args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    let otherwise = args.pop().expect("three arguments");
    let then = args.pop().expect("three arguments");
    let condition = args.pop().expect("three arguments");
    when(condition, then).otherwise(otherwise)
}

fn coerce_if(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let takes = "(boolean condition, value if true, value if false)";
    if types.len() != 3 {
        return Err(bad_arguments(name, takes, types));
    }
    if !matches!(types[0], DataType::Boolean | DataType::Null) {
        return Err(bad_arguments(name, takes, types));
    }
    // A string beside a number, a date or a timestamp: Spark's common type, a string.
    let branches = crate::spark_casts::common_types::string_common_type(&types[1..])
        .or_else(|| type_union_resolution(&types[1..]))
        .ok_or_else(|| bad_arguments(name, "two values of one type after its condition", types))?;
    Ok(vec![DataType::Boolean, branches.clone(), branches])
}

fn any_one(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] => Ok(vec![t.clone()]),
        _ => Err(bad_arguments(name, "one value", types)),
    }
}

fn boolean(_: &[DataType]) -> Result<DataType> {
    Ok(DataType::Boolean)
}

/// The conditional aggregates: Spark's `count_if`.
pub fn aggregates() -> Vec<AggregateUDF> {
    vec![AggregateUDF::new_from_impl(CountIf {
        signature: Signature::exact(vec![DataType::Boolean], Volatility::Immutable),
    })]
}

/// `count_if(condition)` (Spark's): the group's rows where the condition is true, a `BIGINT`,
/// 0 for a group without one (NULL counts as false).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CountIf {
    signature: Signature,
}

impl AggregateUDFImpl for CountIf {
    fn name(&self) -> &str {
        "count_if"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn is_nullable(&self) -> bool {
        false
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![super::state_field(
            &args,
            "count",
            DataType::Int64,
            false,
        )])
    }

    fn accumulator(&self, _: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::<TrueCount>::default())
    }

    fn default_value(&self, _: &DataType) -> Result<ScalarValue> {
        Ok(ScalarValue::Int64(Some(0)))
    }
}

/// The rows counted so far.
#[derive(Debug, Default)]
struct TrueCount(i64);

impl Accumulator for TrueCount {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.0 += values[0].as_boolean().true_count() as i64;
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.0 += states[0]
            .as_primitive::<Int64Type>()
            .iter()
            .flatten()
            .sum::<i64>();
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![ScalarValue::Int64(Some(self.0))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Int64(Some(self.0)))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}
