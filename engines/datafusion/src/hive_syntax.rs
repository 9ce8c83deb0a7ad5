//! Hive syntax that DataFusion reads differently or not at all, made to mean what it means
//! in Hive (and Spark SQL).
//!
//! - Array subscripts count from 0 (`split(s, ',')[0]` is the first piece), where
//!   DataFusion's count from 1; a negative or too-large index is NULL, as in Hive. Map keys
//!   (`m['k']`) and struct fields are DataFusion's own. An [`ExprPlanner`] placed before
//!   DataFusion's ([`HiveSubscripts`]).
//! - `SUBSTR`/`SUBSTRING` is Hive's ([`HiveSubstring`]): a negative start counts from the
//!   end.
//! - `a RLIKE 'regex'` and `a REGEXP 'regex'` (with `NOT`), which DataFusion parses but
//!   cannot plan, become `regexp_like(a, 'regex')`: true when the regex matches anywhere
//!   in `a`, as Java's `find()` in Hive ([`rewrite`]).

use std::ops::ControlFlow;
use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::functions_nested::expr_fn::array_element;
use datafusion::logical_expr::expr::{Expr as LogicalExpr, GetFieldAccess};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawFieldAccessExpr};
use datafusion::logical_expr::{lit, when, ExprSchemable};
use datafusion::sql::parser::Statement;
use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList,
    FunctionArguments, Ident, ObjectName, UnaryOperator,
};

/// The planners to place before DataFusion's.
pub fn expr_planners() -> Vec<Arc<dyn ExprPlanner>> {
    vec![Arc::new(HiveSubscripts), Arc::new(HiveSubstring)]
}

/// `SUBSTR(s, p[, n])` and `SUBSTRING(s FROM p [FOR n])`, which the parser reads as one
/// syntax and DataFusion plans as its own `substr` (counting a negative `p` from before the
/// start), planned as Hive's ([`crate::hive_functions`]: a negative `p` counts from the end).
#[derive(Debug)]
pub struct HiveSubstring;

impl ExprPlanner for HiveSubstring {
    fn plan_substring(&self, args: Vec<LogicalExpr>) -> Result<PlannerResult<Vec<LogicalExpr>>> {
        Ok(PlannerResult::Planned(
            crate::hive_functions::strings::substr_udf().call(args),
        ))
    }
}

/// `array[i]` with Hive's 0-based `i`.
#[derive(Debug)]
pub struct HiveSubscripts;

impl ExprPlanner for HiveSubscripts {
    fn plan_field_access(
        &self,
        access: RawFieldAccessExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawFieldAccessExpr>> {
        let GetFieldAccess::ListIndex { key } = &access.field_access else {
            return Ok(PlannerResult::Original(access));
        };
        let is_array = matches!(
            access.expr.get_type(schema)?,
            DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..)
        );
        if !is_array {
            return Ok(PlannerResult::Original(access));
        }
        let key = key.as_ref().clone();
        // DataFusion's array_element counts from 1, and from the end for a negative index;
        // Hive's negative index is NULL.
        let one_based = match &key {
            LogicalExpr::Literal(value, _) => match integer(value) {
                Some(i) if i >= 0 => lit(i + 1),
                Some(_) => lit(ScalarValue::Int64(None)),
                None => key.clone() + lit(1i64),
            },
            _ => when(key.clone().lt(lit(0i64)), lit(ScalarValue::Int64(None)))
                .otherwise(key.clone() + lit(1i64))?,
        };
        Ok(PlannerResult::Planned(array_element(
            access.expr,
            one_based,
        )))
    }
}

fn integer(value: &ScalarValue) -> Option<i64> {
    match value {
        ScalarValue::Int8(Some(i)) => Some(i64::from(*i)),
        ScalarValue::Int16(Some(i)) => Some(i64::from(*i)),
        ScalarValue::Int32(Some(i)) => Some(i64::from(*i)),
        ScalarValue::Int64(Some(i)) => Some(*i),
        ScalarValue::UInt8(Some(i)) => Some(i64::from(*i)),
        ScalarValue::UInt16(Some(i)) => Some(i64::from(*i)),
        ScalarValue::UInt32(Some(i)) => Some(i64::from(*i)),
        _ => None,
    }
}

/// Rewrites a parsed statement's Hive-only expressions into DataFusion's.
pub fn rewrite(statement: &mut Statement) {
    match statement {
        Statement::Statement(statement) => {
            let _ = visit_expressions_mut(statement.as_mut(), |expr| {
                rewrite_expr(expr);
                ControlFlow::<()>::Continue(())
            });
        }
        Statement::Explain(explain) => rewrite(explain.statement.as_mut()),
        _ => {}
    }
}

fn rewrite_expr(expr: &mut Expr) {
    if let Expr::RLike {
        negated,
        expr: value,
        pattern,
        ..
    } = expr
    {
        let call = function_call(
            "regexp_like",
            vec![
                std::mem::replace(value.as_mut(), Expr::value(sqlparser_null())),
                std::mem::replace(pattern.as_mut(), Expr::value(sqlparser_null())),
            ],
        );
        *expr = if *negated {
            Expr::UnaryOp {
                op: UnaryOperator::Not,
                expr: Box::new(Expr::Nested(Box::new(call))),
            }
        } else {
            call
        };
    }
}

fn sqlparser_null() -> datafusion::sql::sqlparser::ast::Value {
    datafusion::sql::sqlparser::ast::Value::Null
}

/// `name(args)` in the AST.
fn function_call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function(Function {
        name: ObjectName::from(vec![Ident::new(name)]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|arg| FunctionArg::Unnamed(FunctionArgExpr::Expr(arg)))
                .collect(),
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}

#[cfg(test)]
mod tests;
