//! Hive syntax that DataFusion reads differently or not at all, made to mean what it means
//! in Hive (and Spark SQL).
//!
//! - Array subscripts count from 0 (`split(s, ',')[0]` is the first piece), where
//!   DataFusion's count from 1; a negative or too-large index is NULL, as in Hive. Map keys
//!   (`m['k']`) and struct fields are DataFusion's own. An [`ExprPlanner`] placed before
//!   DataFusion's ([`HiveSubscripts`]).
//! - `a / b` divides integers into a `DOUBLE` (`1 / 2` is 0.5), decimals as Spark does
//!   (`crate::hive_functions::decimal_division`), and gives NULL for a zero divisor, as Hive
//!   and Spark do, as does `a % b`; `a DIV b` is the quotient's integer part, a `BIGINT`
//!   ([`HiveDivision`]).
//! - `SUBSTR`/`SUBSTRING` is Hive's ([`HiveSubstring`]): a negative start counts from the
//!   end.
//! - `count(DISTINCT a, b)` counts the distinct combinations without a NULL, as Hive
//!   ([`count_distinct_columns`]).
//! - `a RLIKE 'regex'` and `a REGEXP 'regex'` (with `NOT`), which DataFusion parses but
//!   cannot plan, become `regexp_like(a, 'regex')`: true when the regex matches anywhere
//!   in `a`, as Java's `find()` in Hive ([`rewrite`]).
//! - Result columns without a name are named by their SQL, as Spark names them (`1 + 1`
//!   rather than DataFusion's `Int64(1) + Int64(1)`) ([`name_columns`]); one named like
//!   one before it takes Hive's `_cN`, where DataFusion refuses `SELECT NULL, NULL` and
//!   `INSERT ... SELECT 1, 1` ([`rename_duplicates`]).
//! - `struct(a, 1)`'s fields are Spark's `a` and `col2`, not DataFusion's `c0`, `c1`
//!   ([`named_struct`]).
//! - A struct's field by name after any value, `from_json(j, 'a INT').a` or `m['k'].b`, as
//!   in Spark, where DataFusion's planner takes `.field` only after a column's name
//!   ([`dotted_fields`]).
//! - Spark's cast functions, `int(x)`, `string(x)`, `date(x)` ..., read as `CAST(x AS type)`
//!   ([`cast_functions`]).
//! - Spark's `decode(x, search, result, ..., default)`, a `CASE` ([`decode_cases`]), beside
//!   Hive's `decode(binary, charset)`.
//! - `percentile(x, array(p1, p2))` and `percentile_approx(x, array(...))`, an array of
//!   the percentiles, as Hive and Spark answer ([`percentile_lists`]).
//! - `TRIM(BOTH FROM s)` (or `LEADING`, `TRAILING`) trims spaces, as Spark's
//!   ([`trim_spaces`]).
//! - `sum(x)` beside `sum(CAST(x AS DOUBLE))`, aggregates DataFusion names alike and
//!   refuses ([`cast_names`]).
//! - `EXTRACT(DOW FROM d)` counts from Sunday 1, and `EXTRACT(SECOND FROM ts)` keeps the
//!   fraction, as Spark's ([`extract_fields`]).
//! - `CAST(x AS type)` is NULL when `x` does not convert, as in Hive, instead of an error
//!   (DataFusion's `TRY_CAST`; `x::type` keeps DataFusion's meaning); to an integer type, a
//!   decimal string is truncated and a number out of range wraps ([`HIVE_INTEGER_CASTS`]).
//! - Typed number literals, `1Y`, `1S`, `1L`, `2.5F`, `2.5D`, `2.5BD`, are `TINYINT`,
//!   `SMALLINT`, `BIGINT`, `FLOAT`, `DOUBLE` and `DECIMAL` values ([`number_literals`]),
//!   where DataFusion reads the suffix as an alias.
//! - String literals take Hive's backslash escapes (`'\\d'` is `\d`, `'\t'` a tab), so
//!   regexes written for Hive mean the same ([`hive_unescape`]).
//! - `"text"` is a string, as in Hive, where DataFusion reads a quoted identifier; backquotes
//!   still name a column ([`rewrite_text`], [`rewrite`]).
//! - `CAST(x AS VARCHAR(n))` keeps the first `n` characters.
//! - `GROUP BY a WITH ROLLUP|WITH CUBE`, `GROUP BY a GROUPING SETS (...)`, which DataFusion
//!   parses and then ignores the modifier of ([`group_by_modifiers`]), with Hive's
//!   `GROUPING__ID` and Spark's `grouping_id()` ([`grouping_ids`]); `SORT BY`,
//!   `CLUSTER BY`, `DISTRIBUTE BY`, which it refuses ([`sort_by_as_order_by`]).
//! - `explode(array)` and `posexplode(array)` in a select list, and
//!   `LATERAL VIEW explode(array) view AS column` over a table or a join: DataFusion's
//!   `unnest` ([`LateralViews`]); `json_tuple`, `stack` and `inline` there too
//!   ([`generators`]); Spark's `explode_outer`, `posexplode_outer` and `inline_outer`
//!   ([`outer_generators`]).
//! - Spark's lambdas, `transform(a, x -> x + 1)`, parsed ([`lambdas`]) for the higher-order
//!   functions.
//! - `INTERSECT ALL` and `EXCEPT ALL` count a row's copies on each side, where DataFusion's
//!   kept or dropped every copy ([`multiset_operations`]).
//! - Spark's `PIVOT` and `UNPIVOT` clauses, a grouped query and a union ([`pivots`]).
//! - `s LIKE ANY|SOME|ALL (p1, p2)` (and `ILIKE`, `NOT`), Hive's `likeany` and `likeall`:
//!   one `LIKE` per pattern, joined ([`like_lists`]).
//! - `INTERVAL '1 12:30' DAY TO MINUTE` and the other ranges of fields, which DataFusion
//!   refuses ([`interval_ranges`]).
//! - An inline table's columns are Spark's `col1`, `col2`, ... (`SELECT col1 FROM VALUES (1)`),
//!   where DataFusion's are `column1`, ... ([`inline_tables`]).
//! - `left`/`right` of a length of 0 or less and `array_position` of a value not there answer
//!   as Spark's, where DataFusion's answer as Postgres ([`edge_answers`]).

use std::ops::ControlFlow;
use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, DataFusionError, Result, ScalarValue};
use datafusion::functions_nested::expr_fn::array_element;
use datafusion::logical_expr::expr::{Cast, ScalarFunction, TryCast};
use datafusion::logical_expr::expr::{Expr as LogicalExpr, GetFieldAccess};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::planner::{
    ExprPlanner, PlannerResult, RawBinaryExpr, RawFieldAccessExpr,
};
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{
    cast, lit, try_cast, when, BinaryExpr, ExprSchemable, LogicalPlan, Operator,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::sql::parser::Statement;
use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, AccessExpr, ArrayElemTypeDef, BinaryOperator, CastKind, CharacterLength,
    DataType as SqlDataType, DuplicateTreatment, Expr, Function, FunctionArg, FunctionArgExpr,
    FunctionArgumentList, FunctionArguments, GroupByExpr, GroupByWithModifier, Ident, ObjectName,
    ObjectNamePart, OrderBy, OrderByExpr, OrderByKind, OrderByOptions, Query, Select, SelectItem,
    SetExpr, Statement as SqlStatement, Subscript, TableAlias, TableFactor, TableWithJoins,
    UnaryOperator, Value, ValueWithSpan, VisitMut, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;

use crate::hive_functions::decimal_division::DecimalDivision;

/// The planners to place before DataFusion's.
pub fn expr_planners() -> Vec<Arc<dyn ExprPlanner>> {
    vec![
        Arc::new(HiveSubscripts),
        Arc::new(HiveSubstring),
        Arc::new(extract_fields::SparkExtractFields),
        Arc::new(HiveDivision),
    ]
}

/// `a / b` as Hive's (and Spark's): integers divide into a `DOUBLE` (`1 / 2` is 0.5, where
/// DataFusion's integer division gives 0, so that `count(x) / count(*)` ratios come out 0),
/// a decimal by a decimal or an integer as Spark's decimals ([`DecimalDivision`]), and a zero
/// divisor gives NULL, where DataFusion fails the query (or gives infinity).
///
/// A `DECIMAL` and an integer literal in `+`, `-` and `*` too: the literal is the decimal
/// of its digits, as Spark reads it (`DecimalType.fromLiteral`), so the result has Spark's
/// type: `d * 2` of a `DECIMAL(10,2)` `d` is a `DECIMAL(12,2)`, where DataFusion widened the
/// literal's `BIGINT` to `DECIMAL(20,0)` and gave `DECIMAL(31,2)`, which a CTAS then kept.
#[derive(Debug)]
pub struct HiveDivision;

impl ExprPlanner for HiveDivision {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        let expr = decimal_literal_operand(expr, schema);
        let integer_division = match expr.op {
            BinaryOperator::Divide => false,
            // `a % 0` is NULL in Hive and Spark, where DataFusion fails the query (and gives
            // NaN for a floating point dividend).
            // A decimal's remainder has Spark's type.
            BinaryOperator::Modulo => {
                let remainder = match (expr.left.get_type(schema), expr.right.get_type(schema)) {
                    (Ok(left), Ok(right)) => {
                        crate::hive_functions::decimal_division::remainder_type(
                            &expr.left,
                            &left,
                            &expr.right,
                            &right,
                        )
                    }
                    _ => None,
                };
                let divisor = datafusion::functions::expr_fn::nullif(expr.right, lit(0i64));
                let remainder_value = expr.left % divisor;
                return Ok(PlannerResult::Planned(match remainder {
                    Some((p, s)) => cast(remainder_value, DataType::Decimal128(p, s)),
                    None => remainder_value,
                }));
            }
            // `DIV`, written `//` before parsing ([`rewrite_text`]).
            BinaryOperator::DuckIntegerDivide | BinaryOperator::MyIntegerDivide => true,
            _ => return Ok(PlannerResult::Original(expr)),
        };
        // A type that cannot be known here (an error DataFusion reports better later) leaves
        // the division to DataFusion.
        let (Ok(left), Ok(right)) = (expr.left.get_type(schema), expr.right.get_type(schema))
        else {
            return Ok(PlannerResult::Original(expr));
        };
        let integer = |t: &DataType| t.is_integer() || t.is_null();
        let numeric = |t: &DataType| t.is_numeric() || t.is_null();
        if !(numeric(&left) && numeric(&right)) {
            return Ok(PlannerResult::Original(expr));
        }
        if integer_division {
            let integers = integer(&left) && integer(&right);
            return Ok(PlannerResult::Planned(integer_divide(
                expr.left, expr.right, integers,
            )));
        }
        if let Some(division) = DecimalDivision::of(&expr.left, &left, &expr.right, &right) {
            return Ok(PlannerResult::Planned(division.plan(expr.left, expr.right)));
        }
        let (dividend, divisor) = if integer(&left) && integer(&right) {
            (
                cast(expr.left, DataType::Float64),
                cast(expr.right, DataType::Float64),
            )
        } else {
            (expr.left, expr.right)
        };
        let divisor = datafusion::functions::expr_fn::nullif(divisor, lit(0i64));
        Ok(PlannerResult::Planned(dividend / divisor))
    }
}

/// `expr` with an integer literal beside a `DECIMAL` in `+`, `-` or `*` cast to the decimal
/// of its digits; anything else as it is.
fn decimal_literal_operand(mut expr: RawBinaryExpr, schema: &DFSchema) -> RawBinaryExpr {
    use BinaryOperator::{Minus, Multiply, Plus};
    if !matches!(expr.op, Plus | Minus | Multiply) {
        return expr;
    }
    let is_decimal = |operand: &LogicalExpr| {
        matches!(
            operand.get_type(schema),
            Ok(DataType::Decimal128(..) | DataType::Decimal256(..))
        )
    };
    let as_decimal = |operand: LogicalExpr| match DecimalDivision::literal_digits(&operand) {
        Some(digits) => cast(operand, DataType::Decimal128(digits, 0)),
        None => operand,
    };
    if is_decimal(&expr.left) {
        expr.right = as_decimal(expr.right);
    } else if is_decimal(&expr.right) {
        expr.left = as_decimal(expr.left);
    }
    expr
}

/// `a DIV b` as Hive's and Spark's: the quotient's integer part (towards zero) as a
/// `BIGINT`, NULL for a zero divisor. Integers divide as `BIGINT`s; other numbers divide in
/// their type before the fraction is dropped (`7.9 DIV 0.5` is 15, as Spark's decimals).
pub(crate) fn integer_divide(
    dividend: LogicalExpr,
    divisor: LogicalExpr,
    integers: bool,
) -> LogicalExpr {
    let (dividend, divisor) = if integers {
        (
            cast(dividend, DataType::Int64),
            cast(divisor, DataType::Int64),
        )
    } else {
        (dividend, divisor)
    };
    let divisor = datafusion::functions::expr_fn::nullif(divisor, lit(0i64));
    cast(dividend / divisor, DataType::Int64)
}

/// Hive's `CAST(x AS TINYINT|SMALLINT|INT|BIGINT)` (DataFusion's `TRY_CAST` after
/// [`rewrite`], or the cast its type coercion adds to a string argument of a function that
/// casts as Spark does) where Hive's answer is not DataFusion's NULL: a decimal string is truncated
/// (`CAST('1.5' AS INT)` is 1; `' 2 '` is 2; a string out of the type's range stays NULL),
/// and a number out of the type's range wraps (`CAST(300 AS TINYINT)` is 44), after a
/// decimal's fraction is dropped; a floating-point number first saturates at `INT`'s (or
/// `BIGINT`'s) bounds, as Java's `(int)` does; and Spark's casts of dates and timestamps
/// that DataFusion answers otherwise ([`temporal_cast`]). An analyzer rule, run after type
/// coercion, since the answer depends on `x`'s type.
pub const HIVE_INTEGER_CASTS: ExpressionRewrite =
    ExpressionRewrite::new("hive_integer_casts", hive_integer_cast);

/// An analyzer rule that rewrites every expression of a plan and its subqueries, bottom up,
/// with one function ([`rewrite_expressions`]): the shape of each of the engine's rules that
/// make DataFusion's expressions mean what they mean in Hive and Spark.
#[derive(Debug, Clone, Copy)]
pub struct ExpressionRewrite {
    name: &'static str,
    rewrite: fn(LogicalExpr, &DFSchema) -> Result<Transformed<LogicalExpr>>,
}

impl ExpressionRewrite {
    pub const fn new(
        name: &'static str,
        rewrite: fn(LogicalExpr, &DFSchema) -> Result<Transformed<LogicalExpr>>,
    ) -> Self {
        Self { name, rewrite }
    }
}

impl AnalyzerRule for ExpressionRewrite {
    fn name(&self) -> &str {
        self.name
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        rewrite_expressions(plan, self.rewrite)
    }
}

/// Every expression of `plan` and its subqueries, rewritten bottom up by `rewrite` against its
/// node's input schema, the columns keeping their names: the walk of the engine's analyzer
/// rules that replace an expression by Hive's or Spark's meaning of it.
pub(crate) fn rewrite_expressions(
    plan: LogicalPlan,
    rewrite: fn(LogicalExpr, &DFSchema) -> Result<Transformed<LogicalExpr>>,
) -> Result<LogicalPlan> {
    plan.transform_up_with_subqueries(|plan| {
        let schema = match &plan {
            // A VALUES list's rows read no columns.
            LogicalPlan::Values(_) => DFSchema::empty(),
            _ if plan.inputs().is_empty() => return Ok(Transformed::no(plan)),
            _ => merge_schema(&plan.inputs()),
        };
        let names = NamePreserver::new(&plan);
        plan.map_expressions(|expr| {
            let name = names.save(&expr);
            expr.transform_up(|expr| rewrite(expr, &schema))?
                .map_data(|expr| Ok(name.restore(expr)))
        })
    })
    .map(|transformed| transformed.data)
}

fn hive_integer_cast(expr: LogicalExpr, schema: &DFSchema) -> Result<Transformed<LogicalExpr>> {
    let (value, field) = match expr {
        LogicalExpr::TryCast(TryCast { expr: value, field }) => (value, field),
        LogicalExpr::ScalarFunction(call) if casts_implicitly(&call) => {
            return argument_integer_casts(call, schema);
        }
        expr => return Ok(Transformed::no(expr)),
    };
    let expr = LogicalExpr::TryCast(TryCast {
        expr: value.clone(),
        field: field.clone(),
    });
    let data_type = field.data_type();
    let Ok(source) = value.get_type(schema) else {
        return Ok(Transformed::no(expr));
    };
    if let Some(spark) = temporal_cast(&value, &source, data_type)? {
        return Ok(Transformed::yes(spark));
    }
    let bits = match data_type {
        DataType::Int8 => 8,
        DataType::Int16 => 16,
        DataType::Int32 => 32,
        DataType::Int64 => 64,
        _ => return Ok(Transformed::no(expr)),
    };
    let value = value.as_ref().clone();
    let long = match &source {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            // Digits with an optional fraction, read as a decimal and truncated; a string out
            // of the type's range is NULL, as in Hive, so it does not wrap.
            let trimmed = datafusion::functions::expr_fn::btrim(vec![value]);
            let number = datafusion::functions::expr_fn::regexp_like(
                trimmed.clone(),
                lit(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$"),
                None,
            );
            let truncated = try_cast(
                try_cast(trimmed, DataType::Decimal128(38, 9)),
                data_type.clone(),
            );
            return Ok(Transformed::yes(
                when(number, truncated).otherwise(lit(ScalarValue::try_from(data_type)?))?,
            ));
        }
        t if t.is_integer() || matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..)) => {
            try_cast(value, DataType::Int64)
        }
        t if t.is_floating() => {
            let (low, high) = if bits == 64 {
                (i64::MIN, i64::MAX)
            } else {
                (i64::from(i32::MIN), i64::from(i32::MAX))
            };
            // Java's `(long)` and `(int)` stop at the bounds (`CAST(1e20 AS BIGINT)` is
            // 9223372036854775807) and take NaN to 0; a NULL stays NULL (`greatest` and
            // `least` would pass over it and give a bound).
            let double = cast(value, DataType::Float64);
            when(double.clone().is_null(), lit(ScalarValue::Int64(None)))
                .when(
                    datafusion::functions::expr_fn::isnan(double.clone()),
                    lit(0i64),
                )
                .when(double.clone().gt_eq(lit(high as f64)), lit(high))
                .when(double.clone().lt_eq(lit(low as f64)), lit(low))
                .otherwise(try_cast(double, DataType::Int64))?
        }
        // Spark's seconds since 1970 (rounded down), where DataFusion's cast gives the
        // timestamp's unit (nanoseconds).
        DataType::Timestamp(..) => crate::hive_functions::epochs::count_of(value, 1_000_000_000),
        _ => return Ok(Transformed::no(expr)),
    };
    // The low bits, sign-extended: Java's narrowing of an integer.
    let wrapped = if bits == 64 {
        long
    } else {
        let shift = lit(64 - bits as i64);
        LogicalExpr::BinaryExpr(BinaryExpr::new(
            Box::new(LogicalExpr::BinaryExpr(BinaryExpr::new(
                Box::new(long),
                Operator::BitwiseShiftLeft,
                Box::new(shift.clone()),
            ))),
            Operator::BitwiseShiftRight,
            Box::new(shift),
        ))
    };
    Ok(Transformed::yes(cast(wrapped, data_type.clone())))
}

/// Spark's cast of a date or a timestamp `value` (of type `source`) to `target` where
/// DataFusion's answers otherwise: a date is no number and no boolean (NULL, where DataFusion
/// counted days or refused the cast); a timestamp as a decimal is its seconds to the
/// microsecond, rounded to the decimal's scale (NULL beyond its precision), and as a boolean
/// whether it is not 1970's first microsecond (DataFusion refused both). `None` for any
/// other cast.
fn temporal_cast(
    value: &LogicalExpr,
    source: &DataType,
    target: &DataType,
) -> Result<Option<LogicalExpr>> {
    let micros = || crate::hive_functions::epochs::count_of(value.clone(), 1_000);
    Ok(match (source, target) {
        (DataType::Date32 | DataType::Date64, t) if t.is_numeric() || *t == DataType::Boolean => {
            Some(lit(ScalarValue::try_from(t)?))
        }
        (DataType::Timestamp(..), DataType::Boolean) => Some(micros().not_eq(lit(0i64))),
        (DataType::Timestamp(..), DataType::Decimal128(..)) => {
            // Times a millionth, a DECIMAL(38, 6): exact, where a division's scale dropped
            // digits.
            let seconds = try_cast(micros(), DataType::Decimal128(38, 0))
                * lit(ScalarValue::Decimal128(Some(1), 7, 6));
            Some(try_cast(seconds, target.clone()))
        }
        _ => None,
    })
}

/// Whether `call` is of a function that casts its arguments as Spark does
/// ([`crate::spark_casts::argument_casts`]).
fn casts_implicitly(call: &ScalarFunction) -> bool {
    let function: &dyn std::any::Any = call.func.inner().as_ref();
    function
        .downcast_ref::<crate::spark_casts::argument_casts::ImplicitCasts>()
        .is_some()
}

/// `call` with each cast of a string argument to an integer, which DataFusion's type
/// coercion added where the function takes an integer (`repeat('x', s)`), read as Hive's and
/// Spark's casts read it: `'12.5'` is 12, where DataFusion's cast failed the query.
fn argument_integer_casts(
    mut call: ScalarFunction,
    schema: &DFSchema,
) -> Result<Transformed<LogicalExpr>> {
    let mut changed = false;
    for arg in &mut call.args {
        let LogicalExpr::Cast(Cast { expr, field }) = arg else {
            continue;
        };
        let from_string = expr
            .get_type(schema)
            .is_ok_and(|t| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View));
        if from_string && field.data_type().is_integer() {
            let lenient = LogicalExpr::TryCast(TryCast {
                expr: expr.clone(),
                field: field.clone(),
            });
            *arg = hive_integer_cast(lenient, schema)?.data;
            changed = true;
        }
    }
    let call = LogicalExpr::ScalarFunction(call);
    Ok(if changed {
        Transformed::yes(call)
    } else {
        Transformed::no(call)
    })
}

/// `SUBSTR(s, p[, n])` and `SUBSTRING(s FROM p [FOR n])`, which the parser reads as one
/// syntax and DataFusion plans as its own `substr` (counting a negative `p` from before the
/// start), planned as Hive's ([`crate::hive_functions`]: a negative `p` counts from the end).
#[derive(Debug)]
pub struct HiveSubstring;

impl ExprPlanner for HiveSubstring {
    fn plan_substring(&self, args: Vec<LogicalExpr>) -> Result<PlannerResult<Vec<LogicalExpr>>> {
        // The registry's `substr` reads a number as its text; this one must too.
        let substr = crate::spark_casts::argument_casts::values_as_strings(
            crate::hive_functions::strings::substr_udf(),
        );
        Ok(PlannerResult::Planned(substr.call(args)))
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
        let container = access.expr.get_type(schema)?;
        if let DataType::Map(entries, _) = &container {
            return Ok(PlannerResult::Original(map_key_typed(
                access,
                entries.data_type(),
            )));
        }
        let GetFieldAccess::ListIndex { key } = &access.field_access else {
            return Ok(PlannerResult::Original(access));
        };
        let is_array = matches!(
            container,
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

/// `m['k']` with the constant key `k` as the map's keys are typed (`entries`, the map's
/// key-value struct), which DataFusion left to the comparison of each row's keys, where its
/// two kinds of strings (`Utf8`, `Utf8View`), or a string and a number, failed the query. A
/// key that does not convert (`map(1, 'a')['x']`) finds nothing: NULL, as in Spark.
fn map_key_typed(mut access: RawFieldAccessExpr, entries: &DataType) -> RawFieldAccessExpr {
    let DataType::Struct(fields) = entries else {
        return access;
    };
    let Some(key_type) = fields.first().map(|f| f.data_type().clone()) else {
        return access;
    };
    let name = match &access.field_access {
        GetFieldAccess::NamedStructField { name } => name.clone(),
        GetFieldAccess::ListIndex { key } => match key.as_ref() {
            LogicalExpr::Literal(value, _) => value.clone(),
            _ => return access,
        },
        _ => return access,
    };
    if name.data_type() == key_type {
        return access;
    }
    let typed = name
        .cast_to(&key_type)
        .or_else(|_| ScalarValue::try_from(&key_type));
    if let Ok(name) = typed {
        access.field_access = GetFieldAccess::NamedStructField { name };
    }
    access
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

/// Rewrites a parsed statement's Hive-only syntax into DataFusion's; an error says what
/// Hive syntax the engine does not take.
pub fn rewrite(statement: &mut Statement) -> Result<()> {
    rewrite_exploding(statement, false, InlineFields::new()).map(|_| ())
}

/// [`rewrite`], with the columns of each `inline` without an alias list named by its
/// structs' fields, which the statement's first plan found ([`inline_fields`]).
pub fn rewrite_naming_inline_fields(statement: &mut Statement, fields: InlineFields) -> Result<()> {
    rewrite_exploding(statement, false, fields).map(|_| ())
}

/// [`rewrite`], with each `explode(x)` of a select list read as `explode` of a map: its
/// entries, in Hive's two columns `key` and `value` (DataFusion's `unnest` of the map's
/// keys and of its values, side by side). The planner tries this when the statement, its
/// `explode`s read as arrays, does not plan: the type of `x` is unknown before planning.
/// False when there is no such `explode`.
pub fn rewrite_exploding_maps(statement: &mut Statement) -> Result<bool> {
    rewrite_exploding(statement, true, InlineFields::new())
}

fn rewrite_exploding(
    statement: &mut Statement,
    maps: bool,
    inline_fields: InlineFields,
) -> Result<bool> {
    match statement {
        Statement::Statement(statement) => {
            pivots::rewrite(statement.as_mut())?;
            table_samples::rewrite(statement.as_mut())?;
            inline_tables::rewrite(statement.as_mut());
            // Named from the SQL as written, before the rewrites below; the columns of a
            // table or view created from a query too.
            match statement.as_mut() {
                SqlStatement::Query(query) => name_columns(&mut query.body),
                SqlStatement::CreateTable(create) => {
                    if let Some(query) = &mut create.query {
                        name_columns(&mut query.body);
                    }
                }
                SqlStatement::CreateView(create) => name_columns(&mut create.query.body),
                // The names do not reach the table (columns are matched by position), but
                // two alike fail the plan (`INSERT INTO t SELECT NULL, NULL`).
                SqlStatement::Insert(insert) => {
                    if let Some(source) = &mut insert.source {
                        name_columns(&mut source.body);
                    }
                }
                _ => {}
            }
            cast_names::tell_apart(statement.as_mut());
            let _ = statement.visit(&mut time_windows::WindowColumns);
            let _ = visit_expressions_mut(statement.as_mut(), |expr| {
                rewrite_expr(expr);
                ControlFlow::<()>::Continue(())
            });
            let mut lateral = LateralViews {
                maps,
                inlines: generators::Inlines {
                    fields: inline_fields,
                    met: 0,
                },
                ..LateralViews::default()
            };
            if let ControlFlow::Break(error) = statement.visit(&mut lateral) {
                return Err(error);
            }
            if !lateral.renamed.is_empty() {
                // `view.column` now names the column of the table the view was folded into.
                let _ = visit_expressions_mut(statement.as_mut(), |expr| {
                    if let Expr::CompoundIdentifier(parts) = expr {
                        if let [view, _] = parts.as_mut_slice() {
                            if let Some(table) = lateral.renamed.iter().find_map(|(v, t)| {
                                v.value.eq_ignore_ascii_case(&view.value).then_some(t)
                            }) {
                                *view = table.clone();
                            }
                        }
                    }
                    ControlFlow::<()>::Continue(())
                });
            }
            Ok(lateral.exploded_maps)
        }
        Statement::Explain(explain) => {
            rewrite_exploding(explain.statement.as_mut(), maps, inline_fields)
        }
        _ => Ok(false),
    }
}

/// `value.field` after a value that is not a column's name (a function's result, a map's
/// entry, an array's element) becomes `value['field']`, which DataFusion's planner takes for
/// the same struct field; it refuses the dot there ("Dot access not supported"). Dots right
/// after a column's name are left alone: they may be part of it (`t.s.field`).
fn dotted_fields(expr: &mut Expr) {
    let Expr::CompoundFieldAccess { root, access_chain } = expr else {
        return;
    };
    let mut after_a_name = matches!(
        root.as_ref(),
        Expr::Identifier(_) | Expr::CompoundIdentifier(_)
    );
    for access in access_chain.iter_mut() {
        match access {
            AccessExpr::Dot(Expr::Identifier(field)) if !after_a_name => {
                *access = AccessExpr::Subscript(Subscript::Index {
                    index: Expr::value(Value::SingleQuotedString(field.value.clone())),
                });
            }
            AccessExpr::Dot(_) => {}
            AccessExpr::Subscript(_) => after_a_name = false,
        }
    }
}

/// Names a query's unnamed result columns as Spark does, by their SQL (`1 + 1`, `upper(x)`,
/// `count(*)`; a string literal by its value), where DataFusion would print its plan's
/// expressions (`Int64(1) + Int64(1)`, `upper(t.x)`). Only the columns the client sees:
/// a subquery's keep DataFusion's names, which the query around it may use.
fn name_columns(body: &mut SetExpr) {
    match body {
        SetExpr::Select(select) => {
            let unnamed: Vec<bool> = select
                .projection
                .iter()
                .map(|item| matches!(item, SelectItem::UnnamedExpr(expr) if !(generator_argument(expr).is_some() || generators::is_generator(expr))))
                .collect();
            let relations = relation_names(select);
            for item in &mut select.projection {
                let SelectItem::UnnamedExpr(expr) = item else {
                    continue;
                };
                let name = match (&*expr, double_quoted_string(expr)) {
                    (_, Some(text)) => text,
                    // A struct's field by its name, as Hive and Spark name it (`s.a` is `a`,
                    // where DataFusion writes `t.s[a]`).
                    (Expr::CompoundIdentifier(parts), _) if names_a_field(parts, &relations) => {
                        match parts.last() {
                            Some(field) => column_name(field),
                            None => continue,
                        }
                    }
                    // DataFusion names a column by its name already; explode's is `col`
                    // ([`LateralViews`]).
                    (Expr::Identifier(_) | Expr::CompoundIdentifier(_), _) => continue,
                    _ if generator_argument(expr).is_some() || generators::is_generator(expr) => {
                        continue
                    }
                    (
                        Expr::Value(ValueWithSpan {
                            value: Value::SingleQuotedString(text),
                            ..
                        }),
                        _,
                    ) => text.clone(),
                    (other, _) => other.to_string(),
                };
                let expr = std::mem::replace(expr, Expr::value(Value::Null));
                *item = SelectItem::ExprWithAlias {
                    expr,
                    alias: Ident::with_quote('"', name),
                };
            }
            rename_duplicates(&mut select.projection, &unnamed);
        }
        // A union's columns are named by its first query.
        SetExpr::SetOperation { left, .. } => name_columns(left),
        SetExpr::Query(query) => name_columns(&mut query.body),
        _ => {}
    }
}

/// The names a select's columns can be qualified with: each relation's name or alias and
/// each lateral view's; `None` when a relation's name is not known (a table function), so
/// that no `x.y` can be told to be a field.
fn relation_names(select: &Select) -> Option<Vec<String>> {
    let mut names = Vec::new();
    for item in &select.from {
        let joined = item.joins.iter().map(|join| &join.relation);
        for relation in std::iter::once(&item.relation).chain(joined) {
            names.push(column_name(&relation_name(relation)?));
            if let TableFactor::Table { name, .. } = relation {
                if let Some(ObjectNamePart::Identifier(table)) = name.0.last() {
                    names.push(column_name(table));
                }
            }
        }
    }
    for view in &select.lateral_views {
        names.push(column_name(view.lateral_view_name.0.last()?.as_ident()?));
    }
    Some(names)
}

/// Whether `a.b` reads a struct's field: `a` is no relation of the select, so a column.
/// `a.b.c` is named by `c` either way (`table.struct.field`, or `database.table.column`,
/// which DataFusion names `c` too).
fn names_a_field(parts: &[Ident], relations: &Option<Vec<String>>) -> bool {
    match (parts, relations) {
        ([first, _], Some(relations)) => !relations.contains(&column_name(first)),
        ([_, _, _, ..], _) => true,
        _ => false,
    }
}

/// Unnamed result columns named like one before them (`SELECT NULL, NULL`, `SELECT 1, 1`,
/// `SELECT a, a`), which DataFusion refuses ("duplicate expression names") where Hive and
/// Spark answer: each after the first takes Hive's name for its position, `_c1`, as Hive
/// names every unnamed column (a header cannot repeat a name in DataFusion). `unnamed` says
/// which items had no alias in the SQL; an alias written twice stays the user's to fix.
fn rename_duplicates(projection: &mut [SelectItem], unnamed: &[bool]) {
    let mut seen = std::collections::HashSet::new();
    for (position, item) in projection.iter_mut().enumerate() {
        let name = match &*item {
            SelectItem::UnnamedExpr(Expr::Identifier(column)) => column_name(column),
            SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => {
                parts.iter().map(column_name).collect::<Vec<_>>().join(".")
            }
            SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
            _ => continue,
        };
        if seen.insert(name.to_lowercase()) || !unnamed.get(position).copied().unwrap_or(false) {
            continue;
        }
        let expr = match std::mem::replace(item, SelectItem::Wildcard(Default::default())) {
            SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } => expr,
            _ => unreachable!("matched above"),
        };
        let alias = format!("_c{position}");
        seen.insert(alias.clone());
        *item = SelectItem::ExprWithAlias {
            expr,
            alias: Ident::with_quote('"', alias),
        };
    }
}

/// Hive's `explode(array)`: DataFusion's `unnest`, in a select list (named `col`, as Hive
/// names it) or in `FROM t LATERAL VIEW explode(t.a) v AS x`, which becomes
/// `FROM (SELECT *, unnest(t.a) AS x FROM t) t`: a row per element, none for an empty or
/// NULL array; with OUTER, one row of NULLs for those. `explode(map) v AS k, val` unnests
/// the map's keys and values side by side, `posexplode(a) v AS pos, x` a range of positions
/// (from 0) beside the elements.
#[derive(Default)]
struct LateralViews {
    /// Each view's name and the table name its columns are now found under.
    renamed: Vec<(Ident, Ident)>,
    /// Whether a select list's `explode(x)` explodes a map ([`rewrite_exploding_maps`]).
    maps: bool,
    /// Whether a select list's `explode(x)` was read as a map's.
    exploded_maps: bool,
    /// The statement's unnamed `inline` calls.
    inlines: generators::Inlines,
}

impl VisitorMut for LateralViews {
    type Break = DataFusionError;

    fn post_visit_query(&mut self, query: &mut Query) -> ControlFlow<Self::Break> {
        sort_by_as_order_by(query);
        ControlFlow::Continue(())
    }

    fn post_visit_select(&mut self, select: &mut Select) -> ControlFlow<Self::Break> {
        if let Err(error) = group_by_modifiers(select) {
            return ControlFlow::Break(error);
        }
        outer_generators::mark(select);
        if let Err(error) = generators::spread_in_select(select, &mut self.inlines)
            .and_then(|()| aliased_explodes(select))
        {
            return ControlFlow::Break(error);
        }
        posexplode_columns(select);
        exists_columns::as_counts(select);
        if self.maps {
            self.exploded_maps |= map_explode_columns(select);
        }
        for item in &mut select.projection {
            if let SelectItem::UnnamedExpr(expr) = item {
                if explode_argument(expr).is_some() {
                    let expr = std::mem::replace(expr, Expr::value(Value::Null));
                    *item = SelectItem::ExprWithAlias {
                        expr,
                        alias: Ident::new("col"),
                    };
                }
            }
        }
        let _ = visit_expressions_mut(&mut select.projection, |expr| {
            if let Some(argument) = explode_argument(expr) {
                *expr = function_call("unnest", vec![argument]);
            }
            ControlFlow::<()>::Continue(())
        });
        if let Err(error) = outer_generators::unmark(select) {
            return ControlFlow::Break(error);
        }
        if select.lateral_views.is_empty() {
            return ControlFlow::Continue(());
        }
        match self.fold(select) {
            Ok(()) => ControlFlow::Continue(()),
            Err(error) => ControlFlow::Break(error),
        }
    }
}

impl LateralViews {
    /// Folds a select's lateral views into its tables, innermost first: over a join, each
    /// into the table whose columns it reads ([`join_target`], [`fold_into_joins`]).
    fn fold(&mut self, select: &mut Select) -> Result<()> {
        let unsupported = |what: &str| {
            DataFusionError::NotImplemented(format!(
                "{what}; the engine takes LATERAL VIEW [OUTER] explode(array) view AS column, \
                 explode(map) view AS key, value, posexplode(array) view AS pos, column, \
                 json_tuple(json, 'key', ...) view AS column, ..., stack(n, value, ...) \
                 view AS column, ... or inline(array) view AS column, ..., over a table or a \
                 join (or write SELECT ..., unnest(array) AS column FROM ...)"
            ))
        };
        let positions = relation_positions(&select.from);
        // A subquery without a name (Spark's `FROM (SELECT ...) LATERAL VIEW ...`) is given
        // one, for the view to be folded into: nothing can refer to it by a name it lacks.
        for (index, &position) in positions.iter().enumerate() {
            if let TableFactor::Derived {
                alias: alias @ None,
                ..
            } = relation_mut(&mut select.from, position)
            {
                *alias = Some(TableAlias {
                    explicit: true,
                    name: Ident::new(format!("__lateral_source_{index}")),
                    columns: Vec::new(),
                    at: None,
                });
            }
        }
        let names: Vec<Option<Ident>> = positions
            .iter()
            .map(|&position| relation_name(relation_mut(&mut select.from, position)))
            .collect();
        // The relation each earlier view's name and columns now belong to.
        let mut folded: Vec<(Ident, usize)> = Vec::new();
        for view in std::mem::take(&mut select.lateral_views) {
            let function = function_name(&view.lateral_view).unwrap_or_default();
            let (items, argument, outer) = match generators::generate(
                &view.lateral_view,
                &view.lateral_col_alias,
                view.outer,
                &mut self.inlines,
            ) {
                Some(generated) => {
                    let generated = generated?;
                    let items: Vec<String> =
                        generated.columns.iter().map(|c| c.to_string()).collect();
                    (items, generated.rows_from, generated.outer)
                }
                None => {
                    let Some(argument) = generator_argument(&view.lateral_view) else {
                        return Err(unsupported(&format!(
                            "LATERAL VIEW {} is not supported",
                            view.lateral_view
                        )));
                    };
                    let aliases = &view.lateral_col_alias;
                    let Some(items) = exploded_columns(&function, &argument, aliases, view.outer)
                    else {
                        return Err(unsupported(&format!(
                            "LATERAL VIEW {} AS {} is not supported",
                            view.lateral_view,
                            aliases
                                .iter()
                                .map(|c| c.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )));
                    };
                    let items = items?.iter().map(|c| c.to_string()).collect();
                    (items, argument, view.outer)
                }
            };
            let target = if positions.len() == 1 {
                0
            } else {
                join_target(&argument, &names, &folded).map_err(|what| unsupported(&what))?
            };
            let Some(table) = names[target].clone() else {
                return Err(unsupported("LATERAL VIEW over this table is not supported"));
            };
            let (item, join) = positions[target];
            fold_into_joins(&mut select.from[item], join, outer, &argument)
                .map_err(|what| unsupported(&what))?;
            let relation = relation_mut(&mut select.from, positions[target]);
            let inner = format!("SELECT *, {} FROM {}", items.join(", "), relation);
            let subquery = Parser::new(&GenericDialect {})
                .try_with_sql(&inner)
                .and_then(|mut parser| parser.parse_query())
                .map_err(|e| {
                    DataFusionError::Internal(format!("the rewritten LATERAL VIEW `{inner}`: {e}"))
                })?;
            *relation = TableFactor::Derived {
                lateral: false,
                subquery,
                alias: Some(TableAlias {
                    explicit: true,
                    name: table.clone(),
                    columns: Vec::new(),
                    at: None,
                }),
                sample: None,
            };
            if let Some(ObjectNamePart::Identifier(name)) = view.lateral_view_name.0.last() {
                self.renamed.push((name.clone(), table));
                folded.push((name.clone(), target));
            }
            for column in &view.lateral_col_alias {
                folded.push((column.clone(), target));
            }
        }
        Ok(())
    }
}

/// The select-list items of `explode(argument)` or `posexplode(argument)` with the columns
/// `aliases`, in a select list (`AS (k, v)`) or a `LATERAL VIEW [OUTER]`: what each column
/// unnests (unnests in one select list advance together). `None` for aliases that do not
/// fit: `explode` gives one column (two of a map's keys and values), `posexplode` two.
fn exploded_columns(
    function: &str,
    argument: &Expr,
    aliases: &[Ident],
    outer: bool,
) -> Option<Result<Vec<SelectItem>>> {
    let columns: Vec<(String, &Ident)> = match (function, aliases) {
        ("explode", [column]) => vec![(argument.to_string(), column)],
        ("explode", [key, value]) => vec![
            (format!("map_keys({argument})"), key),
            (format!("map_values({argument})"), value),
        ],
        ("posexplode", [pos, column]) => vec![
            (positions(argument.clone()).to_string(), pos),
            (argument.to_string(), column),
        ],
        _ => return None,
    };
    Some(
        columns
            .into_iter()
            .map(|(list, column)| {
                let list = if outer { outer_list(&list) } else { list };
                Ok(SelectItem::ExprWithAlias {
                    expr: parse_expr(&format!("unnest({list})"))?,
                    alias: column.clone(),
                })
            })
            .collect(),
    )
}

/// `explode(x) AS (k, v)` and `posexplode(x) AS (pos, v)` in a select list: Hive's alias
/// list names the columns ([`exploded_columns`]).
fn aliased_explodes(select: &mut Select) -> Result<()> {
    let aliased = |item: &SelectItem| matches!(item, SelectItem::ExprWithAliases { expr, .. } if generator_argument(expr).is_some());
    if !select.projection.iter().any(aliased) {
        return Ok(());
    }
    let mut projection = Vec::with_capacity(select.projection.len() + 1);
    for item in std::mem::take(&mut select.projection) {
        let SelectItem::ExprWithAliases { expr, aliases } = &item else {
            projection.push(item);
            continue;
        };
        let (Some(function), Some(argument)) = (function_name(expr), generator_argument(expr))
        else {
            projection.push(item);
            continue;
        };
        match exploded_columns(&function, &argument, aliases, false) {
            Some(columns) => projection.extend(columns?),
            None => {
                return Err(DataFusionError::Plan(format!(
                    "{function} gives {}, and the AS clause names {}",
                    if function == "explode" {
                        "one column (two of a map)"
                    } else {
                        "two columns"
                    },
                    aliases.len()
                )))
            }
        }
    }
    select.projection = projection;
    Ok(())
}

/// `LATERAL VIEW OUTER`'s list: a NULL or empty one still gives one row, of NULLs.
fn outer_list(list: &str) -> String {
    format!("CASE WHEN array_length({list}) > 0 THEN {list} ELSE make_array(NULL) END")
}

/// An expression of SQL the rewrite wrote itself.
fn parse_expr(sql: &str) -> Result<Expr> {
    Parser::new(&GenericDialect {})
        .try_with_sql(sql)
        .and_then(|mut parser| parser.parse_expr())
        .map_err(|e| DataFusionError::Internal(format!("the rewritten expression `{sql}`: {e}")))
}

/// Where a relation of a FROM clause is: its item (items are separated by commas) and, for
/// a joined relation, its join in the item.
type Position = (usize, Option<usize>);

fn relation_positions(from: &[TableWithJoins]) -> Vec<Position> {
    from.iter()
        .enumerate()
        .flat_map(|(item, joined)| {
            std::iter::once((item, None))
                .chain((0..joined.joins.len()).map(move |j| (item, Some(j))))
        })
        .collect()
}

fn relation_mut(from: &mut [TableWithJoins], (item, join): Position) -> &mut TableFactor {
    match join {
        None => &mut from[item].relation,
        Some(j) => &mut from[item].joins[j].relation,
    }
}

/// The name a relation's columns are qualified with: its alias, or its table's name.
fn relation_name(relation: &TableFactor) -> Option<Ident> {
    match relation {
        TableFactor::Table {
            alias: Some(alias), ..
        }
        | TableFactor::Derived {
            alias: Some(alias), ..
        } => Some(alias.name.clone()),
        TableFactor::Table { name, .. } => match name.0.last() {
            Some(ObjectNamePart::Identifier(ident)) => Some(ident.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// The relation of a join (an index of `names`) a view's argument reads: the one its
/// columns are qualified with (`b.tags`), or that an earlier view's column was folded into.
/// The engine knows no table's columns before planning, so a column without its table's
/// name is refused, as is an argument reading several tables. A constant argument is
/// folded into the first table.
fn join_target(
    argument: &Expr,
    names: &[Option<Ident>],
    folded: &[(Ident, usize)],
) -> std::result::Result<usize, String> {
    let same = |a: &Ident, b: &Ident| a.value.eq_ignore_ascii_case(&b.value);
    let earlier = |name: &Ident| {
        folded
            .iter()
            .rev()
            .find(|(n, _)| same(n, name))
            .map(|(_, t)| *t)
    };
    let mut targets = Vec::new();
    let outcome = datafusion::sql::sqlparser::ast::visit_expressions(argument, |expr| {
        let target = match expr {
            Expr::CompoundIdentifier(parts) if parts.len() >= 2 => {
                let qualifier = &parts[parts.len() - 2];
                earlier(qualifier)
                    .or_else(|| {
                        names
                            .iter()
                            .position(|n| n.as_ref().is_some_and(|n| same(n, qualifier)))
                    })
                    .ok_or_else(|| {
                        format!(
                            "LATERAL VIEW over a join reading {expr}, of no table of the join, \
                             is not supported"
                        )
                    })
            }
            Expr::Identifier(column) => earlier(column).ok_or_else(|| {
                format!(
                    "LATERAL VIEW over a join reading the column {column} without its table's \
                     name is not supported: write table.{column}"
                )
            }),
            _ => return ControlFlow::Continue(()),
        };
        match target {
            Ok(target) => {
                targets.push(target);
                ControlFlow::Continue(())
            }
            Err(error) => ControlFlow::Break(error),
        }
    });
    if let ControlFlow::Break(error) = outcome {
        return Err(error);
    }
    targets.sort_unstable();
    targets.dedup();
    match targets.as_slice() {
        [] => Ok(0),
        [target] => Ok(*target),
        _ => Err(format!(
            "LATERAL VIEW over a join reading several of its tables ({argument}) is not supported"
        )),
    }
}

/// Makes the joins of `item` keep the rows a view folded into one of its relations keeps:
/// the view over the join's rows is the view over that relation's rows, joined. Where the
/// relation is on a side an outer join fills with NULLs, the view's argument must be NULL
/// there too ([`null_propagating`]), and a view without OUTER, which gives no row for a
/// NULL, makes that join keep only the rows with the relation's (`a LEFT JOIN b` becomes
/// `a JOIN b` for a view of `b.tags`; `FULL` becomes `LEFT` or `RIGHT`).
fn fold_into_joins(
    item: &mut TableWithJoins,
    relation: Option<usize>,
    outer: bool,
    argument: &Expr,
) -> std::result::Result<(), String> {
    use datafusion::sql::sqlparser::ast::JoinOperator::*;
    let mut nullable = Vec::new();
    for (j, joined) in item.joins.iter().enumerate() {
        // Whether the relation is the join's right input, or in its left.
        let right = match relation {
            Some(k) if k == j => true,
            Some(k) if j < k => continue,
            _ => false,
        };
        let kept = match (&joined.join_operator, right) {
            (Join(_) | Inner(_) | CrossJoin(_) | StraightJoin(_), _) => None,
            (Left(_) | LeftOuter(_) | Semi(_) | LeftSemi(_) | Anti(_) | LeftAnti(_), false) => None,
            (Right(_) | RightOuter(_) | RightSemi(_) | RightAnti(_), true) => None,
            (Left(c) | LeftOuter(c), true) | (Right(c) | RightOuter(c), false) => {
                Some(Inner(c.clone()))
            }
            (FullOuter(c), true) => Some(RightOuter(c.clone())),
            (FullOuter(c), false) => Some(LeftOuter(c.clone())),
            _ => {
                return Err(
                    "LATERAL VIEW of a table a SEMI, ANTI or other special join leaves out \
                     of its result is not supported"
                        .into(),
                )
            }
        };
        if let Some(kept) = kept {
            nullable.push((j, kept));
        }
    }
    if nullable.is_empty() {
        return Ok(());
    }
    if !null_propagating(argument) {
        return Err(format!(
            "LATERAL VIEW over a join of {argument}, which is not NULL where an outer join \
             fills its table with NULLs, is not supported"
        ));
    }
    if !outer {
        for (j, kept) in nullable {
            item.joins[j].join_operator = kept;
        }
    }
    Ok(())
}

/// Whether an expression is NULL whenever the columns it reads are: a column, or a function
/// of one that keeps NULL (`split(b.s, ',')`).
fn null_propagating(expr: &Expr) -> bool {
    match expr {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => true,
        Expr::Nested(inner) => null_propagating(inner),
        Expr::Function(function) => {
            let keeps_null = matches!(
                function_name(expr).as_deref(),
                Some("split" | "map_keys" | "map_values" | "sort_array" | "array_distinct")
            );
            let first = match &function.args {
                FunctionArguments::List(list) => match list.args.first() {
                    Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(first))) => Some(first),
                    _ => None,
                },
                _ => None,
            };
            keeps_null && first.is_some_and(null_propagating)
        }
        _ => false,
    }
}

/// The positions of `array`'s elements, from 0, as `INT`s (Spark's `pos`):
/// `CAST(range(array_length(array)) AS ARRAY<INT>)`.
fn positions(array: Expr) -> Expr {
    Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(function_call(
            "range",
            vec![function_call("array_length", vec![array])],
        )),
        data_type: SqlDataType::Array(ArrayElemTypeDef::AngleBracket(Box::new(SqlDataType::Int(
            None,
        )))),
        array: false,
        format: None,
    }
}

/// `posexplode(array)` in a select list: Hive's two columns `pos` (from 0) and `val`, a row
/// per element, as two unnests side by side.
fn posexplode_columns(select: &mut Select) {
    let posexplode = |item: &SelectItem| match item {
        SelectItem::UnnamedExpr(expr) if function_name(expr).as_deref() == Some("posexplode") => {
            generator_argument(expr)
        }
        _ => None,
    };
    if !select
        .projection
        .iter()
        .any(|item| posexplode(item).is_some())
    {
        return;
    }
    let mut projection = Vec::with_capacity(select.projection.len() + 1);
    for item in std::mem::take(&mut select.projection) {
        let Some(argument) = posexplode(&item) else {
            projection.push(item);
            continue;
        };
        projection.push(SelectItem::ExprWithAlias {
            expr: function_call("unnest", vec![positions(argument.clone())]),
            alias: Ident::new("pos"),
        });
        projection.push(SelectItem::ExprWithAlias {
            expr: function_call("unnest", vec![argument]),
            alias: Ident::new("val"),
        });
    }
    select.projection = projection;
}

/// Hive's `GROUP BY a, b WITH ROLLUP`, `WITH CUBE` and `GROUP BY a GROUPING SETS (...)` as
/// `GROUP BY ROLLUP(a, b)`, `CUBE(a, b)` and `GROUPING SETS (...)`: DataFusion parses the
/// modifiers but would group without them, a silently different answer.
fn group_by_modifiers(select: &mut Select) -> Result<()> {
    let GroupByExpr::Expressions(exprs, modifiers) = &mut select.group_by else {
        if matches!(&select.group_by, GroupByExpr::All(modifiers) if !modifiers.is_empty()) {
            return Err(DataFusionError::NotImplemented(
                "GROUP BY ALL with WITH ROLLUP, WITH CUBE or GROUPING SETS is not supported; \
                 name the columns"
                    .into(),
            ));
        }
        return Ok(());
    };
    let modifiers = std::mem::take(modifiers);
    let grouping = grouping_columns(exprs, &modifiers);
    let each = |exprs: &[Expr]| exprs.iter().map(|e| vec![e.clone()]).collect::<Vec<_>>();
    match modifiers.as_slice() {
        [] => {}
        [GroupByWithModifier::Rollup] => *exprs = vec![Expr::Rollup(each(exprs))],
        [GroupByWithModifier::Cube] => *exprs = vec![Expr::Cube(each(exprs))],
        // Hive lists the grouped columns before the sets; the sets alone say the grouping.
        [GroupByWithModifier::GroupingSets(sets)] => *exprs = vec![sets.clone()],
        _ => {
            return Err(DataFusionError::NotImplemented(format!(
                "GROUP BY ... {} is not supported; write GROUP BY ROLLUP(...), CUBE(...) or \
                 GROUPING SETS (...)",
                modifiers
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            )))
        }
    }
    if let Some(grouping) = grouping {
        grouping_ids(select, &grouping);
    }
    Ok(())
}

/// A select's grouping columns, in the order `grouping_id()` weighs them (Spark's: the GROUP
/// BY's expressions, the first the most significant bit), each with whether some grouping
/// set holds it; `None` without ROLLUP, CUBE or GROUPING SETS, where there is no grouping ID.
fn grouping_columns(
    exprs: &[Expr],
    modifiers: &[GroupByWithModifier],
) -> Option<Vec<(Expr, bool)>> {
    // Hive's `GROUP BY a, b GROUPING SETS ((a), ())`: `b` is weighed, and never grouped.
    if let [GroupByWithModifier::GroupingSets(sets)] = modifiers {
        let mut grouped = Vec::new();
        flatten_grouping(std::slice::from_ref(sets), &mut grouped);
        return Some(
            exprs
                .iter()
                .map(|e| (e.clone(), grouped.contains(e)))
                .collect(),
        );
    }
    let sets = !modifiers.is_empty()
        || exprs
            .iter()
            .any(|e| matches!(e, Expr::Rollup(_) | Expr::Cube(_) | Expr::GroupingSets(_)));
    if !sets {
        return None;
    }
    let mut columns = Vec::new();
    flatten_grouping(exprs, &mut columns);
    Some(columns.into_iter().map(|e| (e, true)).collect())
}

/// The expressions of a GROUP BY's items, ROLLUP's, CUBE's and GROUPING SETS' included, each
/// once, in order.
fn flatten_grouping(exprs: &[Expr], out: &mut Vec<Expr>) {
    for expr in exprs {
        match expr {
            Expr::Rollup(lists) | Expr::Cube(lists) | Expr::GroupingSets(lists) => {
                for list in lists {
                    flatten_grouping(list, out);
                }
            }
            Expr::Tuple(items) => flatten_grouping(items, out),
            Expr::Nested(inner) if matches!(inner.as_ref(), Expr::Tuple(_)) => {
                flatten_grouping(std::slice::from_ref(inner.as_ref()), out)
            }
            other if !out.contains(other) => out.push(other.clone()),
            _ => {}
        }
    }
}

/// Hive's virtual column `GROUPING__ID` and Spark's `grouping_id([a, ...])` in a select list
/// and HAVING: the bit vector of the columns a row is not grouped by (bit set = aggregated
/// across it), the first column the most significant, as Spark's and Hive's since 2.3.0
/// (HIVE-16102), a BIGINT. Written as `grouping(a) * 2 + grouping(b)` (DataFusion has
/// `grouping` of one column); a column no grouping set holds is always a set bit. A bare
/// `GROUPING__ID` column is named `grouping__id`, as Spark and Hive name it.
fn grouping_ids(select: &mut Select, grouping: &[(Expr, bool)]) {
    let replace = |expr: &mut Expr| {
        if let Some(id) = grouping_id(expr, grouping) {
            *expr = id;
        }
    };
    for item in &mut select.projection {
        if let SelectItem::UnnamedExpr(expr @ Expr::Identifier(_)) = item {
            if let Some(id) = grouping_id(expr, grouping) {
                *item = SelectItem::ExprWithAlias {
                    expr: id,
                    alias: Ident::with_quote('"', "grouping__id"),
                };
            }
        }
    }
    let _ = visit_expressions_mut(&mut select.projection, |expr| {
        replace(expr);
        ControlFlow::<()>::Continue(())
    });
    if let Some(having) = &mut select.having {
        let _ = visit_expressions_mut(having, |expr| {
            replace(expr);
            ControlFlow::<()>::Continue(())
        });
    }
}

/// The grouping ID `expr` asks for, when it is `GROUPING__ID` or `grouping_id(...)`, of the
/// select's `grouping` columns ([`grouping_ids`]).
fn grouping_id(expr: &Expr, grouping: &[(Expr, bool)]) -> Option<Expr> {
    let columns: Vec<(Expr, bool)> = match expr {
        Expr::Identifier(ident) if is_grouping_id_column(ident) => grouping.to_vec(),
        Expr::Function(function) if function_name(expr)?.as_str() == "grouping_id" => {
            match &function.args {
                FunctionArguments::List(list) if !list.args.is_empty() => list
                    .args
                    .iter()
                    .map(|arg| match arg {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(column)) => {
                            // A column of no grouping set is aggregated across in every row.
                            let grouped = grouping
                                .iter()
                                .find(|(c, _)| c == column)
                                .is_none_or(|(_, grouped)| *grouped);
                            Some((column.clone(), grouped))
                        }
                        _ => None,
                    })
                    .collect::<Option<_>>()?,
                FunctionArguments::Subquery(_) => return None,
                _ => grouping.to_vec(),
            }
        }
        _ => return None,
    };
    // Spark's grouping IDs are BIGINTs: 63 columns at most.
    let n = columns.len().min(63);
    let terms: Vec<String> = columns[..n]
        .iter()
        .enumerate()
        .map(|(i, (column, grouped))| {
            let weight = 1i64 << (n - 1 - i);
            if *grouped {
                format!("CAST(grouping({column}) AS BIGINT) * {weight}")
            } else {
                format!("CAST({weight} AS BIGINT)")
            }
        })
        .collect();
    let sql = if terms.is_empty() {
        "CAST(0 AS BIGINT)".to_owned()
    } else {
        format!("({})", terms.join(" + "))
    };
    parse_expr(&sql).ok()
}

/// Hive's virtual column `GROUPING__ID` (two underscores), in any case.
fn is_grouping_id_column(ident: &Ident) -> bool {
    ident.value.eq_ignore_ascii_case("grouping__id")
}

/// Hive's `SORT BY`, `DISTRIBUTE BY` and `CLUSTER BY` (orders and partitions among
/// reducers): on one engine, `SORT BY x` and `CLUSTER BY x` are `ORDER BY x` (a total order
/// keeps each reducer's), and `DISTRIBUTE BY` alone orders nothing. DataFusion refuses them.
fn sort_by_as_order_by(query: &mut Query) {
    let SetExpr::Select(select) = query.body.as_mut() else {
        return;
    };
    let sort_by = std::mem::take(&mut select.sort_by);
    let cluster_by = std::mem::take(&mut select.cluster_by);
    select.distribute_by.clear();
    let order: Vec<OrderByExpr> = if !sort_by.is_empty() {
        sort_by
    } else {
        cluster_by
            .into_iter()
            .map(|expr| OrderByExpr {
                expr,
                options: OrderByOptions {
                    asc: None,
                    nulls_first: None,
                },
                with_fill: None,
            })
            .collect()
    };
    if !order.is_empty() && query.order_by.is_none() {
        query.order_by = Some(OrderBy {
            kind: OrderByKind::Expressions(order),
            interpolate: None,
        });
    }
}

/// `explode(map)` in a select list: Hive's two columns `key` and `value`, the map's keys
/// and values unnested side by side. Whether there was one.
fn map_explode_columns(select: &mut Select) -> bool {
    if !select
        .projection
        .iter()
        .any(|item| matches!(item, SelectItem::UnnamedExpr(e) if explode_argument(e).is_some()))
    {
        return false;
    }
    let mut projection = Vec::with_capacity(select.projection.len() + 1);
    for item in std::mem::take(&mut select.projection) {
        let argument = match &item {
            SelectItem::UnnamedExpr(expr) => explode_argument(expr),
            _ => None,
        };
        let Some(argument) = argument else {
            projection.push(item);
            continue;
        };
        for (part, alias) in [("map_keys", "key"), ("map_values", "value")] {
            projection.push(SelectItem::ExprWithAlias {
                expr: function_call("unnest", vec![function_call(part, vec![argument.clone()])]),
                alias: Ident::new(alias),
            });
        }
    }
    select.projection = projection;
    true
}

/// The argument of `explode(x)`.
fn explode_argument(expr: &Expr) -> Option<Expr> {
    (function_name(expr)? == "explode")
        .then(|| generator_argument(expr))
        .flatten()
}

/// The lower-case name of a call of an unqualified function.
fn function_name(expr: &Expr) -> Option<String> {
    let Expr::Function(function) = expr else {
        return None;
    };
    let [ObjectNamePart::Identifier(name)] = function.name.0.as_slice() else {
        return None;
    };
    Some(name.value.to_ascii_lowercase())
}

/// The lower-case name and the arguments of a plain call of an unqualified, unquoted
/// function: no DISTINCT, FILTER, OVER or clauses, every argument unnamed. The calls that
/// the rewrites of Spark's forms ([`cast_functions`], [`decode_cases`], [`percentile_lists`])
/// replace by other expressions.
pub(crate) fn plain_call(expr: &Expr) -> Option<(String, Vec<&Expr>)> {
    let Expr::Function(function) = expr else {
        return None;
    };
    let [ObjectNamePart::Identifier(name)] = function.name.0.as_slice() else {
        return None;
    };
    if name.quote_style.is_some()
        || function.over.is_some()
        || function.filter.is_some()
        || !function.within_group.is_empty()
    {
        return None;
    }
    let FunctionArguments::List(list) = &function.args else {
        return None;
    };
    if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
        return None;
    }
    let args = list
        .args
        .iter()
        .map(|arg| match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(value)) => Some(value),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some((name.value.to_ascii_lowercase(), args))
}

/// The one argument of a call of `explode` or `posexplode` (or their `_outer` forms,
/// [`outer_generators`]).
fn generator_argument(expr: &Expr) -> Option<Expr> {
    let Expr::Function(function) = expr else {
        return None;
    };
    if !matches!(
        function_name(expr)?.as_str(),
        "explode" | "posexplode" | "explode_outer" | "posexplode_outer"
    ) {
        return None;
    }
    match &function.args {
        FunctionArguments::List(list) => match list.args.as_slice() {
            [FunctionArg::Unnamed(FunctionArgExpr::Expr(argument))] => Some(argument.clone()),
            _ => None,
        },
        _ => None,
    }
}

fn rewrite_expr(expr: &mut Expr) {
    dotted_fields(expr);
    cast_functions::as_cast(expr);
    decode_cases::as_case(expr);
    like_lists::as_conditions(expr);
    interval_ranges::as_fields(expr);
    edge_answers::as_spark(expr);
    string_aggregates::as_string_agg(expr);
    unit_arguments::as_unit_string(expr);
    time_windows::as_bucket(expr);
    extract_fields::as_extract(expr);
    trim_spaces::spark_argument_order(expr);
    crate::hive_functions::json_schemas::as_literal(expr);
    crate::hive_functions::csv_values::as_literal(expr);
    percentile_lists::as_list_of_percentiles(expr);
    rounding_scales::as_call(expr);
    lambdas::sort_with_comparator(expr);
    lambdas::variable_fields(expr);
    crate::spark_casts::signed_strings::as_number(expr);
    if let Some(counted) = count_distinct_columns(expr) {
        *expr = counted;
        return;
    }
    if let Some(named) = named_struct(expr) {
        *expr = named;
        return;
    }
    if let Expr::Value(ValueWithSpan {
        value: Value::SingleQuotedString(text),
        ..
    }) = expr
    {
        if text.contains('\\') {
            *text = hive_unescape(text);
        }
        return;
    }
    // "text" is a string in Hive and Spark SQL, where DataFusion's parser reads a quoted
    // identifier (or, after DATE and the like, a double-quoted string); `name` stays one.
    if let Some(text) = double_quoted_string(expr) {
        *expr = Expr::value(Value::SingleQuotedString(text));
        return;
    }
    // Hive's CAST gives NULL for a value it cannot convert (CAST('abc' AS INT)); DataFusion's
    // fails the query, which on dirty data means no answer at all.
    if let Expr::Cast {
        kind, data_type, ..
    } = expr
    {
        if *kind == CastKind::Cast {
            *kind = CastKind::TryCast;
        }
        // Hive's BINARY, which DataFusion's SQL spells BYTEA.
        if *data_type == SqlDataType::Binary(None) {
            *data_type = SqlDataType::Bytea;
        }
        // Hive's VARCHAR(n) keeps the first n characters; DataFusion's is any string.
        if let (
            CastKind::TryCast,
            SqlDataType::Varchar(Some(CharacterLength::IntegerLength { length, .. })),
        ) = (&*kind, &*data_type)
        {
            let length = Expr::value(Value::Number(length.to_string(), false));
            let cast = std::mem::replace(expr, Expr::value(Value::Null));
            *expr = function_call("left", vec![cast, length]);
        }
        return;
    }
    // Hive's `~a`, which DataFusion parses but cannot plan: every bit flipped.
    if let Expr::UnaryOp {
        op: UnaryOperator::BitwiseNot,
        expr: value,
    } = expr
    {
        let value = std::mem::replace(value.as_mut(), Expr::value(Value::Null));
        *expr = Expr::Nested(Box::new(Expr::BinaryOp {
            left: Box::new(Expr::Nested(Box::new(value))),
            op: BinaryOperator::BitwiseXor,
            right: Box::new(Expr::value(Value::Number("-1".into(), false))),
        }));
        return;
    }
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
                std::mem::replace(value.as_mut(), Expr::value(Value::Null)),
                std::mem::replace(pattern.as_mut(), Expr::value(Value::Null)),
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

/// The text of a string in double quotes, Hive's escapes read: `"abc"` where DataFusion's
/// parser reads the identifier `"abc"`, or a `Value::DoubleQuotedString`.
fn double_quoted_string(expr: &Expr) -> Option<String> {
    let text = match expr {
        Expr::Identifier(Ident {
            value,
            quote_style: Some('"'),
            ..
        }) => value,
        Expr::Value(ValueWithSpan {
            value: Value::DoubleQuotedString(text),
            ..
        }) => text,
        _ => return None,
    };
    Some(if text.contains('\\') {
        hive_unescape(text)
    } else {
        text.clone()
    })
}

/// `struct(a, 1)` as Spark names its fields: a column keeps its name (`a`; `t.a` is `a`), any
/// other value is `col` and its position from 1 (`col2`), as Hive names every field;
/// DataFusion's would be `c0`, `c1`, and `s.col1` would not be found. Written as
/// `named_struct('a', a, 'col2', 1)`.
fn named_struct(expr: &Expr) -> Option<Expr> {
    // The parser reads `struct(...)` as a struct literal; a call, should another dialect.
    let values: Vec<&Expr> = match expr {
        Expr::Struct { values, fields } if fields.is_empty() => values.iter().collect(),
        Expr::Function(function) if function_name(expr)? == "struct" => {
            let FunctionArguments::List(list) = &function.args else {
                return None;
            };
            if list.duplicate_treatment.is_some() {
                return None;
            }
            list.args
                .iter()
                .map(|arg| match arg {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(value)) => Some(value),
                    _ => None,
                })
                .collect::<Option<_>>()?
        }
        _ => return None,
    };
    if values.is_empty() {
        return None;
    }
    let mut args = Vec::with_capacity(values.len() * 2);
    for (i, value) in values.into_iter().enumerate() {
        let (name, value) = match value {
            Expr::Identifier(column) => (column_name(column), value),
            Expr::CompoundIdentifier(parts) => (column_name(parts.last()?), value),
            // Spark's `struct(x + 1 AS y)`.
            Expr::Named { expr, name } => (name.value.clone(), expr.as_ref()),
            _ => (format!("col{}", i + 1), value),
        };
        args.push(Expr::value(Value::SingleQuotedString(name)));
        args.push(value.clone());
    }
    Some(function_call("named_struct", args))
}

/// The name of the column an identifier names, as DataFusion normalises it: lower case
/// unless quoted.
fn column_name(ident: &Ident) -> String {
    if ident.quote_style.is_some() {
        ident.value.clone()
    } else {
        ident.value.to_lowercase()
    }
}

/// Hive's `count(DISTINCT a, b)`, which DataFusion refuses: the distinct combinations of
/// values none of which is NULL, counted as
/// `count(DISTINCT CASE WHEN a IS NOT NULL AND b IS NOT NULL THEN struct(a, b) END)`.
fn count_distinct_columns(expr: &Expr) -> Option<Expr> {
    let Expr::Function(function) = expr else {
        return None;
    };
    if function_name(expr)? != "count" {
        return None;
    }
    let FunctionArguments::List(list) = &function.args else {
        return None;
    };
    if list.duplicate_treatment != Some(DuplicateTreatment::Distinct) || list.args.len() < 2 {
        return None;
    }
    let columns = list
        .args
        .iter()
        .map(|arg| match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(column)) => Some(column.to_string()),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let present = columns
        .iter()
        .map(|c| format!("({c}) IS NOT NULL"))
        .collect::<Vec<_>>()
        .join(" AND ");
    let combination = format!(
        "CASE WHEN {present} THEN struct({}) END",
        columns.join(", ")
    );
    let combination = Parser::new(&GenericDialect {})
        .try_with_sql(&combination)
        .and_then(|mut parser| parser.parse_expr())
        .ok()?;
    let mut counted = function.clone();
    if let FunctionArguments::List(list) = &mut counted.args {
        list.args = vec![FunctionArg::Unnamed(FunctionArgExpr::Expr(combination))];
    }
    Some(Expr::Function(counted))
}

/// A string literal's text as Hive reads it (`BaseSemanticAnalyzer.unescapeSQLString`):
/// `\\` is a backslash, `\n` `\t` `\r` `\b` `\0` `\Z` control characters, `\uXXXX` a UTF-16
/// code unit, `\ooo` an octal character up to `\177` (`'\001'`, Hive's default field
/// delimiter), `\%` and `\_` stay as they are (LIKE's escapes), and a backslash before any
/// other character is dropped. So `split(s, '\\|')` splits at `|` and `'(\\d+)'` is the
/// regex `(\d+)`, as written for Hive.
fn hive_unescape(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        at += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        if let Some(unit) = unicode_escape(&chars[at..]) {
            out.push(unit);
            at += 5;
            continue;
        }
        if let Some(octal) = octal_escape(&chars[at..]) {
            out.push(octal);
            at += 3;
            continue;
        }
        let Some(&next) = chars.get(at) else {
            out.push('\\');
            break;
        };
        at += 1;
        match next {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'b' => out.push('\u{8}'),
            '0' => out.push('\0'),
            'Z' => out.push('\u{1a}'),
            '%' | '_' => {
                out.push('\\');
                out.push(next);
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether an operand may start after `text`: at its start, after `(`, `,` or an operator,
/// or after a keyword that an expression follows. After anything else (a name, a number, a
/// `)`) an operator is expected, so `x div (2)` divides where `SELECT div(7, 2)` calls.
fn operand_may_start(text: &str) -> bool {
    const BEFORE_AN_OPERAND: &[&str] = &[
        "select", "where", "and", "or", "not", "when", "then", "else", "on", "having", "by",
        "distinct", "case", "all", "return", "in", "is", "like", "between",
    ];
    let text = text.trim_end();
    match text.chars().last() {
        None => true,
        Some(c) if c.is_alphanumeric() || c == '_' => {
            let word: String = text
                .chars()
                .rev()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            BEFORE_AN_OPERAND.iter().any(|keyword| {
                keyword
                    .chars()
                    .rev()
                    .eq(word.chars().map(|c| c.to_ascii_lowercase()))
            })
        }
        Some(c) => "(,=<>+-*/%|&^!~".contains(c),
    }
}

/// A statement's text with what DataFusion's tokenizer reads otherwise than Hive written
/// as it reads it: Hive's `\'` inside a string literal as `''` and `\"` inside a
/// double-quoted one as `""` (DataFusion ends the literal at the quote, as standard SQL
/// does; the other backslash escapes are left for [`hive_unescape`]), and the operator `DIV`
/// as `//`, which DataFusion parses (with `*`'s precedence) and [`HiveDivision`] plans,
/// a typed number literal (`2.5D`) as its value ([`number_literals`]),
/// and `current_user()` and `current_catalog()` as `current_user` and `current_catalog`,
/// the only form DataFusion's parser takes of these keywords (Spark's `user()` and
/// `session_user()` as `current_user`). Comments, strings and backquoted identifiers are
/// passed over, and a text with none of these is returned as it is.
pub fn rewrite_text(sql: &str) -> std::borrow::Cow<'_, str> {
    // Calls of keywords the parser takes only without parentheses, and Spark's other names
    // of `current_user()`, read as it only when called (`user` alone stays a column).
    const KEYWORD_CALLS: &[(&str, &str)] = &[
        ("current_user", "current_user"),
        ("current_catalog", "current_catalog"),
        ("user", "current_user"),
        ("session_user", "current_user"),
    ];
    let mentions = |part: &str| {
        sql.as_bytes()
            .windows(part.len())
            .any(|w| w.eq_ignore_ascii_case(part.as_bytes()))
    };
    if !sql.contains("\\'")
        && !sql.contains("\\\"")
        && !number_literals::may_hold_one(sql)
        && !mentions("div")
        && !mentions("user")
        && !mentions("catalog")
    {
        return sql.into();
    }
    let mut out = String::with_capacity(sql.len() + 8);
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            out.push_str(&number_literals::read(c, &mut chars));
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            let mut word = String::from(c);
            while let Some(&next) = chars.peek() {
                if !(next.is_alphanumeric() || next == '_') {
                    break;
                }
                word.push(next);
                chars.next();
            }
            let keyword = KEYWORD_CALLS
                .iter()
                .find(|(name, _)| word.eq_ignore_ascii_case(name));
            if let Some((_, keyword)) = keyword {
                // `current_user ( )`: the parentheses dropped.
                let rest: String = chars.clone().collect();
                let after_open = rest.trim_start().strip_prefix('(');
                if let Some(after) = after_open.and_then(|r| r.trim_start().strip_prefix(')')) {
                    let skip = rest.len() - after.len();
                    for _ in 0..rest[..skip].chars().count() {
                        chars.next();
                    }
                    out.push_str(keyword);
                    continue;
                }
            }
            // `t.div` is a column, `div(a, b)` Spark's function.
            let called =
                chars.clone().find(|c| !c.is_whitespace()) == Some('(') && operand_may_start(&out);
            if word.eq_ignore_ascii_case("div") && !out.trim_end().ends_with('.') && !called {
                out.push_str("//");
            } else {
                out.push_str(&word);
            }
            continue;
        }
        out.push(c);
        // Each arm copies up to the end of what `c` opens.
        match c {
            '\'' | '"' => copy_string(c, &mut chars, &mut out),
            '`' => {
                for next in chars.by_ref() {
                    out.push(next);
                    if next == c {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                for next in chars.by_ref() {
                    out.push(next);
                    if next == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                out.push('*');
                let mut last = ' ';
                for next in chars.by_ref() {
                    out.push(next);
                    if last == '*' && next == '/' {
                        break;
                    }
                    last = next;
                }
            }
            _ => {}
        }
    }
    out.into()
}

/// Copies the rest of a string literal opened by `quote` (`'` or `"`, both strings in
/// Hive), its backslash before `quote` written as a doubled `quote`, as DataFusion's
/// tokenizer reads a quote inside a string (or, for `"`, inside a quoted identifier, which
/// [`rewrite`] then reads as a string). Other backslash escapes are left for
/// [`hive_unescape`].
fn copy_string(
    quote: char,
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    out: &mut String,
) {
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(next) if next == quote => {
                    out.push(quote);
                    out.push(quote);
                }
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => out.push('\\'),
            },
            c if c == quote && chars.peek() == Some(&quote) => {
                chars.next();
                out.push(quote);
                out.push(quote);
            }
            c if c == quote => {
                out.push(quote);
                break;
            }
            other => out.push(other),
        }
    }
}

/// `uXXXX` after a backslash: the character of that UTF-16 code unit (a lone surrogate,
/// which Rust's strings cannot hold, is left to the other rules).
fn unicode_escape(after: &[char]) -> Option<char> {
    let [u, digits @ ..] = after.get(..5)? else {
        return None;
    };
    if *u != 'u' || !digits.iter().all(char::is_ascii_hexdigit) {
        return None;
    }
    let code = digits
        .iter()
        .fold(0, |code, digit| code * 16 + digit.to_digit(16).unwrap_or(0));
    char::from_u32(code)
}

/// `ooo` after a backslash, the first digit 0 or 1 and the others 0 to 7, as Hive takes
/// them: that ASCII character.
fn octal_escape(after: &[char]) -> Option<char> {
    let [first, second, third] = after.get(..3)? else {
        return None;
    };
    let digit = |c: &char, max: u32| c.to_digit(8).filter(|&d| d <= max);
    let code = digit(first, 1)? * 64 + digit(second, 7)? * 8 + digit(third, 7)?;
    char::from_u32(code)
}

/// Runs `visitor` over `statement`: the AST rewrites that may refuse what they find
/// ([`pivots`], [`table_samples`]), the first refusal the statement's error.
fn visit_refusing<S, V>(statement: &mut S, visitor: &mut V) -> Result<()>
where
    S: VisitMut,
    V: VisitorMut<Break = DataFusionError>,
{
    match statement.visit(visitor) {
        ControlFlow::Break(error) => Err(error),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// `name(args)` in the AST.
pub(crate) fn function_call(name: &str, args: Vec<Expr>) -> Expr {
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

mod cast_functions;
mod cast_names;
mod decode_cases;
mod edge_answers;
mod exists_columns;
mod extract_fields;
mod generators;
pub(crate) mod integer_literals;
pub use integer_literals::IntegerLiterals;
mod inline_tables;
mod interval_ranges;
mod multiset_operations;
pub use multiset_operations::MultisetOperations;
mod number_literals;
mod ordered_subqueries;
pub use ordered_subqueries::OrderedSubqueries;
mod outer_generators;
mod percentile_lists;
mod pivots;
mod rounding_scales;
mod string_aggregates;
mod table_samples;
mod time_windows;
pub mod trim_spaces;
mod unit_arguments;
pub use generators::{inline_fields, InlineFields};
pub(crate) mod lambdas;
mod like_lists;
pub mod map_types;
pub use lambdas::parse_statement;

#[cfg(test)]
mod tests;
