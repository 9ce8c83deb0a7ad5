//! `percentile(x, array(p1, p2, ...))` and `percentile_approx(x, array(...)[, accuracy])`:
//! an array of the percentiles, as Hive and Spark answer, where DataFusion's functions take
//! one percentage. Read as `array(percentile(x, p1), percentile(x, p2), ...)`.

use datafusion::sql::sqlparser::ast::Expr;

/// A call of `percentile` or `percentile_approx` whose percentage is an array as the array
/// of one call per percentage; anything else is left as it is.
pub(super) fn as_list_of_percentiles(expr: &mut Expr) {
    let Some((name, args)) = super::plain_call(expr) else {
        return;
    };
    if !matches!(
        name.as_str(),
        "percentile" | "percentile_approx" | "approx_percentile"
    ) {
        return;
    }
    let [value, percentages, rest @ ..] = args.as_slice() else {
        return;
    };
    let Some(percentages) = array_elements(percentages) else {
        return;
    };
    let calls = percentages
        .into_iter()
        .map(|percentage| {
            let mut args = vec![(*value).clone(), percentage];
            args.extend(rest.iter().map(|arg| (*arg).clone()));
            super::function_call(&name, args)
        })
        .collect();
    *expr = super::function_call("array", calls);
}

/// The elements of `array(a, b)` or `ARRAY[a, b]`.
fn array_elements(expr: &Expr) -> Option<Vec<Expr>> {
    match expr {
        Expr::Array(array) => Some(array.elem.clone()),
        _ => match super::plain_call(expr)? {
            (name, elements) if name == "array" => Some(elements.into_iter().cloned().collect()),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::{engine, lines, open};

    #[tokio::test]
    async fn percentiles_of_an_array_of_percentages_are_an_array() {
        let engine = engine().await;
        let session = open(&engine);
        let rows = lines(
            &engine,
            &session,
            "SELECT percentile(n_nationkey, array(0.25, 0.75)), \
             percentile_approx(n_nationkey, array(0.5, 0.9), 100), \
             percentile(n_nationkey, 0.5) \
             FROM tpch.nation",
        )
        .await;
        // Spark's percentile_approx of a BIGINT column is BIGINTs ([12, 22]).
        assert!(
            rows[3].contains("[6.0, 18.0]") && rows[3].contains("[12, 22]"),
            "{rows:?}"
        );
        assert!(rows[3].contains("| 12.0"), "{rows:?}");
    }
}
