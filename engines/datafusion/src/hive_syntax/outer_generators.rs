//! Spark's `explode_outer`, `posexplode_outer` and `inline_outer`: the generator without
//! `_outer`, whose NULL or empty array (or map) gives one row of NULLs rather than none.
//!
//! In `LATERAL VIEW`, `explode_outer(x)` is `LATERAL VIEW OUTER explode(x)`. In a select
//! list the call becomes its generator's with its argument marked ([`mark`]); the generator
//! is rewritten as ever into `unnest`s of lists made from the argument (the array, a map's
//! keys and values, the positions), and each list that holds the mark is then made
//! `LATERAL VIEW OUTER`'s ([`super::outer_list`]) by [`unmark`]: a NULL or empty list is
//! one NULL, so that `posexplode_outer`'s position is NULL too, as Spark's.

use std::ops::ControlFlow;

use datafusion::common::Result;
use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, Ident,
    ObjectName, ObjectNamePart, Select, SelectItem,
};

use super::{function_call, function_name, outer_list, parse_expr};

/// The function that marks an outer generator's argument between [`mark`] and [`unmark`].
const MARK: &str = "__kumiho_outer";

/// The generator an outer generator's name stands for.
fn generator(name: &str) -> Option<&'static str> {
    match name {
        "explode_outer" => Some("explode"),
        "posexplode_outer" => Some("posexplode"),
        "inline_outer" => Some("inline"),
        _ => None,
    }
}

/// Renames a select's outer generators to their generators: a lateral view's made OUTER, a
/// select-list call's argument marked.
pub(super) fn mark(select: &mut Select) {
    for view in &mut select.lateral_views {
        if let Some(generator) = function_name(&view.lateral_view).and_then(|n| generator(&n)) {
            rename(&mut view.lateral_view, generator);
            view.outer = true;
        }
    }
    for item in &mut select.projection {
        let (SelectItem::UnnamedExpr(call)
        | SelectItem::ExprWithAlias { expr: call, .. }
        | SelectItem::ExprWithAliases { expr: call, .. }) = item
        else {
            continue;
        };
        let Some(generator) = function_name(call).and_then(|n| generator(&n)) else {
            continue;
        };
        rename(call, generator);
        if let Expr::Function(Function {
            args: FunctionArguments::List(list),
            ..
        }) = call
        {
            if let [FunctionArg::Unnamed(FunctionArgExpr::Expr(argument))] =
                list.args.as_mut_slice()
            {
                let marked = function_call(MARK, vec![argument.clone()]);
                *argument = marked;
            }
        }
    }
}

fn rename(call: &mut Expr, name: &str) {
    if let Expr::Function(function) = call {
        function.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))]);
    }
}

/// Makes each `unnest(list)` of a select list whose list holds a marked argument unnest
/// the list with the mark removed, as `LATERAL VIEW OUTER` does.
pub(super) fn unmark(select: &mut Select) -> Result<()> {
    let mut result = Ok(());
    let _ = visit_expressions_mut(&mut select.projection, |expr| {
        if function_name(expr).as_deref() != Some("unnest") {
            return ControlFlow::Continue(());
        }
        let Expr::Function(Function {
            args: FunctionArguments::List(list),
            ..
        }) = expr
        else {
            return ControlFlow::Continue(());
        };
        let [FunctionArg::Unnamed(FunctionArgExpr::Expr(unnested))] = list.args.as_mut_slice()
        else {
            return ControlFlow::Continue(());
        };
        let mut marked = false;
        let _ = visit_expressions_mut(unnested, |inner| {
            if function_name(inner).as_deref() == Some(MARK) {
                if let Expr::Function(Function {
                    args: FunctionArguments::List(list),
                    ..
                }) = inner
                {
                    if let [FunctionArg::Unnamed(FunctionArgExpr::Expr(argument))] =
                        list.args.as_slice()
                    {
                        *inner = argument.clone();
                        marked = true;
                    }
                }
            }
            ControlFlow::<()>::Continue(())
        });
        if marked {
            match parse_expr(&outer_list(&unnested.to_string())) {
                Ok(outer) => *unnested = outer,
                Err(error) => {
                    result = Err(error);
                    return ControlFlow::Break(());
                }
            }
        }
        ControlFlow::Continue(())
    });
    result
}

#[cfg(test)]
mod tests;
