//! The values a conditional expression chooses among take Spark's common type (non-ANSI
//! `findWiderCommonType`): a string beside numbers, dates or timestamps makes them all
//! strings, where DataFusion casts the string to the number's type and fails on one that is
//! not a number (`coalesce(1, 'a')`) or gives NULL for it (`if(false, 1.5, 'a')`).
//!
//! - `coalesce`, `nvl` (`ifnull`), `nvl2` and `if`'s values, `CASE`'s `THEN`s and `ELSE`:
//!   `coalesce(1, 'a')` is `'1'`, `if(false, 1.5D, 'a')` `'a'`, a double written as Spark
//!   writes it (`1.0E20`), a date `2024-01-02` ([`super::spark_text`] writes them).
//! - `CASE x WHEN v ...` with a string beside a number compares them as `x = v` does
//!   ([`super::string_operands`]): `CASE 'a' WHEN 1 ...` does not match, where DataFusion
//!   failed the query.
//!
//! A boolean, a binary or a nested value beside a string is left to DataFusion (Spark
//! refuses it).

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::{Case, ScalarFunction};
use datafusion::logical_expr::{cast, Expr, ExprSchemable};

use super::string_operands::{comparison, is_string};

/// Casts the values of a conditional expression to strings where one of them is a string and
/// the others numbers, dates or timestamps, as Spark's common type makes them. An analyzer
/// rule placed before type coercion, which would otherwise cast the strings to a number.
pub const STRING_COMMON_TYPES: crate::hive_syntax::ExpressionRewrite =
    crate::hive_syntax::ExpressionRewrite::new("string_common_types", common_type);

fn common_type(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    match expr {
        Expr::ScalarFunction(ScalarFunction { func, mut args }) => {
            // The arguments that are values to choose among (`if`'s and `nvl2`'s first is not).
            let first = match func.name() {
                "coalesce" | "nvl" | "ifnull" => 0,
                "if" | "nvl2" if args.len() == 3 => 1,
                _ => {
                    return Ok(Transformed::no(Expr::ScalarFunction(ScalarFunction {
                        func,
                        args,
                    })))
                }
            };
            let changed = to_strings(&mut args[first..], schema);
            if changed && func.name() == "nvl2" {
                // DataFusion's nvl2 gives its tested value the values' type too, so a date
                // tested beside strings turned them back into (NULL) dates; the CASE it
                // stands for types its values alone.
                let [tested, present, absent] =
                    <[Expr; 3]>::try_from(args).expect("nvl2 of three arguments");
                let case = datafusion::logical_expr::when(tested.is_not_null(), present)
                    .otherwise(absent)?;
                return Ok(Transformed::yes(case));
            }
            let expr = Expr::ScalarFunction(ScalarFunction { func, args });
            Ok(if changed {
                Transformed::yes(expr)
            } else {
                Transformed::no(expr)
            })
        }
        Expr::Case(case) => case_common_type(case, schema),
        expr => Ok(Transformed::no(expr)),
    }
}

fn case_common_type(case: Case, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Case {
        expr: operand,
        when_then_expr,
        else_expr,
    } = case;
    let (whens, thens): (Vec<Expr>, Vec<Expr>) = when_then_expr
        .into_iter()
        .map(|(when, then)| (*when, *then))
        .unzip();
    let mut whens = whens;
    let mut changed = false;
    let mut operand = operand;
    // `CASE x WHEN v`: compared as `x = v` is when a string stands beside a number.
    if let Some(value) = &operand {
        if let Ok(value_type) = value.get_type(schema) {
            let types: Vec<_> = whens.iter().map(|w| w.get_type(schema)).collect();
            let mixed = types.iter().flatten().any(|t| {
                (is_string(t) && value_type.is_numeric())
                    || (t.is_numeric() && is_string(&value_type))
            });
            if mixed && types.iter().all(Result::is_ok) {
                whens = whens
                    .into_iter()
                    .zip(types)
                    .map(|(when, t)| {
                        let (left, right) =
                            comparison(value.as_ref().clone(), when, &value_type, &t?)?;
                        Ok(left.eq(right))
                    })
                    .collect::<Result<_>>()?;
                operand = None;
                changed = true;
            }
        }
    }
    let mut values = thens;
    let has_else = else_expr.is_some();
    values.extend(else_expr.map(|e| *e));
    changed |= to_strings(&mut values, schema);
    let else_expr = if has_else {
        values.pop().map(Box::new)
    } else {
        None
    };
    let expr = Expr::Case(Case {
        expr: operand,
        when_then_expr: whens
            .into_iter()
            .zip(values)
            .map(|(when, then)| (Box::new(when), Box::new(then)))
            .collect(),
        else_expr,
    });
    Ok(if changed {
        Transformed::yes(expr)
    } else {
        Transformed::no(expr)
    })
}

/// Whether a value of this type becomes a string beside one.
fn promoted(t: &DataType) -> bool {
    !(is_string(t) || t.is_null())
}

/// `STRING` when Spark's common type of `types` is a string and some are not: a string
/// beside numbers, dates or timestamps (and NULLs).
pub fn string_common_type(types: &[DataType]) -> Option<DataType> {
    let joins_a_string = |t: &DataType| {
        t.is_numeric()
            || t.is_null()
            || is_string(t)
            || matches!(
                t,
                DataType::Date32 | DataType::Date64 | DataType::Timestamp(..)
            )
    };
    (types.iter().any(is_string) && types.iter().any(promoted) && types.iter().all(joins_a_string))
        .then_some(DataType::Utf8)
}

/// Casts `values` that are numbers, dates or timestamps to strings when another of them is a
/// string and none is of a type Spark would not join with a string; whether any was cast.
fn to_strings(values: &mut [Expr], schema: &DFSchema) -> bool {
    let Ok(types) = values
        .iter()
        .map(|v| v.get_type(schema))
        .collect::<Result<Vec<_>>>()
    else {
        return false;
    };
    if string_common_type(&types).is_none() {
        return false;
    }
    for (value, t) in values.iter_mut().zip(&types) {
        if promoted(t) {
            *value = cast(value.clone(), DataType::Utf8);
        }
    }
    true
}
