//! Hive's generators `json_tuple`, `parse_url_tuple`, `stack` and `inline`, in a select list
//! (`SELECT json_tuple(js, 'a', 'b') AS (a, b) FROM t`) and in
//! `LATERAL VIEW json_tuple(t.js, 'a', 'b') v AS a, b`: each call stands for a list of
//! columns of DataFusion's expressions, evaluated in the select list the call stood in (or,
//! for a view, the one its table is folded into, [`super::LateralViews`]).
//!
//! - `json_tuple(json, k1, ..., kn)` and `parse_url_tuple(url, p1, ..., pn)`: one row per
//!   row; the fields of the function's struct of strings, which parses the text once for
//!   all ([`crate::hive_functions::json`], [`crate::hive_functions::strings`]). Named `c0`,
//!   `c1`, ... as Hive names them.
//!
//! A struct's fields are read by position with `generator_field`
//! ([`crate::hive_functions::collections`]), so that the struct is computed once for all
//! its columns.
//! - `stack(n, v1, ..., vk)`: `n` rows of `ceil(k / n)` columns `col0`, `col1`, ..., each
//!   the `unnest` of its `n` values (NULL where the values run out); the unnests of one
//!   select list advance together, a row at a time.
//! - `inline(array of structs)`: a row per element (none for a NULL or empty array, one of
//!   NULLs with OUTER), a column per field. Without an alias list its columns are named
//!   by the structs' fields, which only planning knows: the first plan unnests the structs
//!   into a column named [`INLINE_PROBE`] and the second names the fields
//!   ([`InlineFields`]).

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::LogicalPlan;
use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, Select, SelectItem, Value,
};

use super::{function_call, function_name};

/// The name of the column that holds the structs of the `k`th unnamed `inline` in the
/// first plan of a statement: this, followed by `k`.
pub const INLINE_PROBE: &str = "__kumiho_inline_";

/// The field names of each `inline` without an alias list, in the order the statement
/// calls them, as the first plan found them ([`inline_fields`]); empty before that plan.
pub type InlineFields = Vec<Vec<String>>;

/// Whether an expression is a call of one of these generators.
pub(super) fn is_generator(expr: &Expr) -> bool {
    matches!(
        function_name(expr).as_deref(),
        Some("json_tuple" | "parse_url_tuple" | "stack" | "inline" | "inline_outer")
    )
}

/// What a generator call becomes.
pub(super) struct Generated {
    /// Its columns, as select-list items with their names.
    pub columns: Vec<SelectItem>,
    /// Where a view of it gives rows as [`super::fold_into_joins`] reads them: an expression
    /// whose NULL (on a row an outer join filled with NULLs) gives no row, or one of
    /// NULLs with `outer`.
    pub rows_from: Expr,
    pub outer: bool,
}

/// Numbers the unnamed `inline` calls of a statement as they are met, and names their
/// columns from [`InlineFields`] once known.
#[derive(Default)]
pub(super) struct Inlines {
    /// The fields the first plan found, empty in the first plan.
    pub fields: InlineFields,
    /// How many unnamed `inline` calls the rewrite has met so far.
    pub met: usize,
}

/// The columns of a call of `json_tuple`, `parse_url_tuple`, `stack` or `inline`, named by `aliases` (Hive's
/// names when there are none); `None` when `call` is none of them. An error for a call
/// Hive refuses (aliases that do not match the columns, a `stack` count that is not a
/// positive constant).
pub(super) fn generate(
    call: &Expr,
    aliases: &[Ident],
    outer: bool,
    inlines: &mut Inlines,
) -> Option<Result<Generated>> {
    let name = function_name(call)?;
    let Expr::Function(function) = call else {
        return None;
    };
    let args: Vec<Expr> = match &function.args {
        FunctionArguments::List(list) => list
            .args
            .iter()
            .map(|arg| match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(arg)) => Some(arg.clone()),
                _ => None,
            })
            .collect::<Option<_>>()?,
        _ => Vec::new(),
    };
    Some(match name.as_str() {
        "json_tuple" | "parse_url_tuple" => string_tuple(&name, args, aliases),
        "stack" => stack(args, aliases, call),
        "inline" => inline(args, aliases, outer, inlines),
        _ => return None,
    })
}

/// Replaces a select list's generator calls (bare, `AS alias` or `AS (a, b)`) by their
/// columns.
pub(super) fn spread_in_select(select: &mut Select, inlines: &mut Inlines) -> Result<()> {
    let is_call = |item: &SelectItem| match item {
        SelectItem::UnnamedExpr(expr)
        | SelectItem::ExprWithAlias { expr, .. }
        | SelectItem::ExprWithAliases { expr, .. } => is_generator(expr),
        _ => false,
    };
    if !select.projection.iter().any(is_call) {
        return Ok(());
    }
    let mut projection = Vec::with_capacity(select.projection.len() + 2);
    for item in std::mem::take(&mut select.projection) {
        let (call, aliases) = match &item {
            SelectItem::UnnamedExpr(expr) => (expr, Vec::new()),
            SelectItem::ExprWithAlias { expr, alias } => (expr, vec![alias.clone()]),
            SelectItem::ExprWithAliases { expr, aliases } => (expr, aliases.clone()),
            _ => {
                projection.push(item);
                continue;
            }
        };
        match generate(call, &aliases, false, inlines) {
            Some(generated) => projection.extend(generated?.columns),
            None => projection.push(item),
        }
    }
    select.projection = projection;
    Ok(())
}

/// The names of a generator's `count` columns: the aliases, or `default(i)`.
fn names(
    function: &str,
    aliases: &[Ident],
    count: usize,
    default: impl Fn(usize) -> String,
) -> Result<Vec<Ident>> {
    match aliases.len() {
        0 => Ok((0..count).map(|i| Ident::new(default(i))).collect()),
        n if n == count => Ok(aliases.to_vec()),
        n => Err(DataFusionError::Plan(format!(
            "{function} gives {count} columns, and the AS clause names {n}"
        ))),
    }
}

fn column(expr: Expr, alias: Ident) -> SelectItem {
    SelectItem::ExprWithAlias { expr, alias }
}

fn number(n: usize) -> Expr {
    Expr::value(Value::Number(n.to_string(), false))
}

/// `json_tuple(json, k1, ..., kn)` and `parse_url_tuple(url, p1, ..., pn)`: the fields `c0`
/// ... of the function's struct.
fn string_tuple(function: &str, args: Vec<Expr>, aliases: &[Ident]) -> Result<Generated> {
    if args.len() < 2 {
        return Err(DataFusionError::Plan(format!(
            "{function} takes a text and one name or more"
        )));
    }
    let count = args.len() - 1;
    let text = args[0].clone();
    let values = function_call(function, args);
    let columns = names(function, aliases, count, |i| format!("c{i}"))?
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let field = function_call(
                "generator_field",
                vec![values.clone(), number(i), number(count)],
            );
            column(field, name)
        })
        .collect();
    Ok(Generated {
        columns,
        rows_from: text,
        outer: true,
    })
}

/// `stack(n, v1, ..., vk)`: column `j` is the `unnest` of `v(j)`, `v(j + m)`, ... (`m`
/// columns), padded with NULL to `n` values.
fn stack(mut args: Vec<Expr>, aliases: &[Ident], call: &Expr) -> Result<Generated> {
    let refused = || {
        DataFusionError::Plan(
            "stack takes a number of rows, a positive integer constant, and one value or more"
                .into(),
        )
    };
    if args.len() < 2 {
        return Err(refused());
    }
    let values = args.split_off(1);
    let rows: usize = match &args[0] {
        Expr::Value(value) => match &value.value {
            Value::Number(n, _) => n.parse().ok().filter(|&n| n > 0).ok_or_else(refused)?,
            _ => return Err(refused()),
        },
        _ => return Err(refused()),
    };
    let width = values.len().div_ceil(rows);
    let columns = names("stack", aliases, width, |j| format!("col{j}"))?
        .into_iter()
        .enumerate()
        .map(|(j, name)| {
            let column_values = (0..rows)
                .map(|row| {
                    values
                        .get(row * width + j)
                        .cloned()
                        .unwrap_or_else(|| Expr::value(Value::Null))
                })
                .collect();
            let unnested =
                function_call("unnest", vec![function_call("make_array", column_values)]);
            column(unnested, name)
        })
        .collect();
    Ok(Generated {
        columns,
        // Its rows do not depend on its values: a view of it cannot be folded into a table
        // an outer join fills with NULLs.
        rows_from: call.clone(),
        outer: true,
    })
}

/// `inline(array)`: `generator_field(unnest(array), i, count)` for each field `i`.
fn inline(
    args: Vec<Expr>,
    aliases: &[Ident],
    outer: bool,
    inlines: &mut Inlines,
) -> Result<Generated> {
    let [array] = <[Expr; 1]>::try_from(args).map_err(|_| {
        DataFusionError::Plan("inline takes one argument, an array of structs".into())
    })?;
    let list = if outer {
        super::outer_list(&array.to_string())
    } else {
        array.to_string()
    };
    let list = super::parse_expr(&list)?;
    let structs = function_call("unnest", vec![list]);
    let names: Vec<Ident> = if aliases.is_empty() {
        let k = inlines.met;
        inlines.met += 1;
        match inlines.fields.get(k) {
            Some(fields) => fields.iter().map(Ident::new).collect(),
            // The first plan: the structs themselves, to learn their fields.
            None => {
                return Ok(Generated {
                    columns: vec![column(structs, Ident::new(format!("{INLINE_PROBE}{k}")))],
                    rows_from: array,
                    outer,
                })
            }
        }
    } else {
        aliases.to_vec()
    };
    let count = names.len();
    let columns = names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let field = function_call(
                "generator_field",
                vec![structs.clone(), number(i), number(count)],
            );
            column(field, name)
        })
        .collect();
    Ok(Generated {
        columns,
        rows_from: array,
        outer,
    })
}

/// The field names of the structs each unnamed `inline` of a plan unnests, in the order of
/// their columns' numbers ([`INLINE_PROBE`]); empty when the plan has none.
pub fn inline_fields(plan: &LogicalPlan) -> Result<InlineFields> {
    let mut found: Vec<(usize, Vec<String>)> = Vec::new();
    plan.apply_with_subqueries(|node| {
        for field in node.schema().fields() {
            let Some(k) = field
                .name()
                .strip_prefix(INLINE_PROBE)
                .and_then(|k| k.parse::<usize>().ok())
            else {
                continue;
            };
            if found.iter().any(|(seen, _)| *seen == k) {
                continue;
            }
            let DataType::Struct(fields) = field.data_type() else {
                return Err(DataFusionError::Plan(format!(
                    "inline takes an array of structs; it was given an array of {}",
                    field.data_type()
                )));
            };
            found.push((k, fields.iter().map(|f| f.name().clone()).collect()));
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    found.sort_by_key(|(k, _)| *k);
    Ok(found.into_iter().map(|(_, fields)| fields).collect())
}
