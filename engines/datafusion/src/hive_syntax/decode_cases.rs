//! Spark's `decode(x, search1, result1, ..., default)`: the result of the first search equal
//! to `x` (NULL matching NULL), else the default or NULL. Read as that `CASE`; Hive's
//! `decode(binary, charset)`, two arguments, is the function of that name.

use datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken;
use datafusion::sql::sqlparser::ast::{CaseWhen, Expr};

/// A call of `decode` with three arguments or more as its `CASE`; anything else is left as
/// it is.
pub(super) fn as_case(expr: &mut Expr) {
    let Some((name, args)) = super::plain_call(expr) else {
        return;
    };
    let [value, rest @ ..] = args.as_slice() else {
        return;
    };
    if name != "decode" || rest.len() < 2 {
        return;
    }
    let pairs = rest.chunks_exact(2);
    let default = pairs.remainder().first().map(|d| Box::new((*d).clone()));
    let conditions = pairs
        .map(|pair| CaseWhen {
            condition: Expr::IsNotDistinctFrom(
                Box::new((*value).clone()),
                Box::new(pair[0].clone()),
            ),
            result: pair[1].clone(),
        })
        .collect();
    *expr = Expr::Nested(Box::new(Expr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions,
        else_result: default,
    }));
}

#[cfg(test)]
mod tests {
    use crate::test_util::{engine, lines, open};

    #[tokio::test]
    async fn decode_with_searches_answers_as_spark() {
        let engine = engine().await;
        let session = open(&engine);
        let rows = lines(
            &engine,
            &session,
            "SELECT concat_ws(',', decode(2, 1, 'one', 2, 'two', 'other'), \
             decode(5, 1, 'one', 'other'), coalesce(decode(5, 1, 'one'), 'null'), \
             decode(NULL, 6, 'a', NULL, 'b', 'c'), \
             decode(n_regionkey, 0, 'AFRICA', 1, 'AMERICA', '?')) \
             FROM tpch.nation WHERE n_nationkey = 1",
        )
        .await;
        assert_eq!(
            rows[3].trim_matches(|c| c == '|' || c == ' '),
            "two,other,null,b,AMERICA"
        );
        // Hive's decode of bytes in a charset is still there.
        let rows = lines(
            &engine,
            &session,
            "SELECT decode(encode('é', 'UTF-8'), 'UTF-8')",
        )
        .await;
        assert_eq!(rows[3].trim_matches(|c| c == '|' || c == ' '), "é");
    }
}
