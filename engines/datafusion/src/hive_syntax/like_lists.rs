//! `s LIKE ANY (p1, p2)`, `LIKE SOME`, `LIKE ALL` (and `ILIKE`, `NOT LIKE`), as Spark reads
//! them, and Hive's `likeany(s, p1, p2)` and `likeall(s, p1, p2)`: one `LIKE` per pattern,
//! joined by `OR` (any) or `AND` (all), so a NULL pattern makes the answer NULL unless
//! another decides it, as in Spark. DataFusion refuses `LIKE ANY` and reads `ALL (...)` and
//! `SOME (...)` as calls of functions.
//!
//! `NOT LIKE ANY` is true when some pattern does not match, and `NOT LIKE ALL` when none
//! does, as Spark answers: each `LIKE` is negated, the join is kept.

use datafusion::sql::sqlparser::ast::{BinaryOperator, Expr};

/// A `LIKE` over a list of patterns, or a call of `likeany`/`likeall`, as its conditions;
/// anything else is left as it is.
pub(super) fn as_conditions(expr: &mut Expr) {
    if let Some((name, args)) = super::plain_call(expr) {
        let join = match name.as_str() {
            "likeany" => BinaryOperator::Or,
            "likeall" => BinaryOperator::And,
            _ => return,
        };
        let [subject, patterns @ ..] = args.as_slice() else {
            return;
        };
        if patterns.is_empty() {
            return;
        }
        let likes = patterns
            .iter()
            .map(|pattern| like(false, false, subject, pattern, None))
            .collect();
        *expr = joined(likes, join);
        return;
    }
    let (negated, any, subject, pattern, escape_char, case_insensitive) = match expr {
        Expr::Like {
            negated,
            any,
            expr,
            pattern,
            escape_char,
        } => (*negated, *any, expr, pattern, escape_char, false),
        Expr::ILike {
            negated,
            any,
            expr,
            pattern,
            escape_char,
        } => (*negated, *any, expr, pattern, escape_char, true),
        _ => return,
    };
    let (patterns, join): (Vec<&Expr>, _) = match (any, pattern.as_ref()) {
        (true, Expr::Tuple(items)) => (items.iter().collect(), BinaryOperator::Or),
        (true, Expr::Nested(item)) => (vec![item.as_ref()], BinaryOperator::Or),
        (false, call) => match super::plain_call(call) {
            Some((name, args)) if name == "all" => (args, BinaryOperator::And),
            Some((name, args)) if name == "any" || name == "some" => (args, BinaryOperator::Or),
            _ => return,
        },
        _ => return,
    };
    if patterns.is_empty() {
        return;
    }
    let escape_char = escape_char.clone();
    let likes = patterns
        .into_iter()
        .map(|pattern| {
            like(
                negated,
                case_insensitive,
                subject,
                pattern,
                escape_char.clone(),
            )
        })
        .collect();
    *expr = joined(likes, join);
}

fn like(
    negated: bool,
    case_insensitive: bool,
    subject: &Expr,
    pattern: &Expr,
    escape_char: Option<datafusion::sql::sqlparser::ast::ValueWithSpan>,
) -> Expr {
    let (expr, pattern) = (Box::new(subject.clone()), Box::new(pattern.clone()));
    if case_insensitive {
        Expr::ILike {
            negated,
            any: false,
            expr,
            pattern,
            escape_char,
        }
    } else {
        Expr::Like {
            negated,
            any: false,
            expr,
            pattern,
            escape_char,
        }
    }
}

/// `conditions` joined by `op`, in parentheses.
fn joined(conditions: Vec<Expr>, op: BinaryOperator) -> Expr {
    let joined = conditions
        .into_iter()
        .reduce(|left, right| Expr::BinaryOp {
            left: Box::new(left),
            op: op.clone(),
            right: Box::new(right),
        })
        .expect("at least one pattern");
    Expr::Nested(Box::new(joined))
}
