//! Spark 4's `listagg(x[, delimiter]) [WITHIN GROUP (ORDER BY ...)]` and its other name
//! `string_agg`: the group's values joined, in the order `WITHIN GROUP` gives, as
//! DataFusion's `string_agg(x, delimiter ORDER BY ...)`, which has no `WITHIN GROUP` form
//! (it refused the query) and no `listagg` name. Without a delimiter the values are joined
//! with nothing between them, as in Spark.

use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArgumentClause, FunctionArguments, Ident,
    ObjectName, Value,
};

/// Such a call as DataFusion's `string_agg`; anything else is left as it is.
pub(super) fn as_string_agg(expr: &mut Expr) {
    if !matches!(
        super::function_name(expr).as_deref(),
        Some("listagg" | "string_agg")
    ) {
        return;
    }
    let Expr::Function(call) = expr else {
        return;
    };
    let FunctionArguments::List(list) = &mut call.args else {
        return;
    };
    if list.args.len() == 1 {
        list.args
            .push(FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::value(
                Value::SingleQuotedString(String::new()),
            ))));
    }
    if !call.within_group.is_empty() {
        let order = std::mem::take(&mut call.within_group);
        list.clauses.push(FunctionArgumentClause::OrderBy(order));
    }
    call.name = ObjectName::from(vec![Ident::new("string_agg")]);
}
