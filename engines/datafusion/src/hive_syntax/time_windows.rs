//! Spark's tumbling time windows, `window(ts, '10 minutes'[, slide[, start]])`: the struct
//! `{start, end}` of the window of that length that holds `ts`, windows starting at
//! 1970-01-01 00:00:00 UTC (moved by `start`, `'5 minutes'`), so that
//! `GROUP BY window(ts, '1 hour')` counts each hour's rows. Counted in seconds since 1970,
//! so that in the session's zone they start at the moments Spark's start. Spark's column
//! `window` of a query grouped by a window (`SELECT window.start, count(*) ... GROUP BY
//! window(ts, '1 hour')`) is that window. A sliding window (a slide shorter than the length), which
//! puts a row in several windows, is not taken: such a call is left to fail, naming `window`.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, AccessExpr, BinaryOperator, CastKind, DataType as SqlType,
    ExactNumberInfo, Expr, GroupByExpr, Ident, Query, SelectItem, SetExpr, TimezoneInfo, Value,
    ValueWithSpan, VisitorMut,
};

use super::interval_ranges::written_out;

/// Reads Spark's `window` column in each query grouped by a window ([`window_columns`]).
pub(super) struct WindowColumns;

impl VisitorMut for WindowColumns {
    type Break = ();

    fn post_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        window_columns(query);
        ControlFlow::Continue(())
    }
}

/// In a select grouped by a `window(...)` call, Spark's `window` column (`window`,
/// `window.start`) read as that call, in the select list, HAVING and the query's ORDER BY.
fn window_columns(query: &mut Query) {
    let SetExpr::Select(select) = query.body.as_mut() else {
        return;
    };
    let GroupByExpr::Expressions(groups, _) = &select.group_by else {
        return;
    };
    let Some(window) = groups
        .iter()
        .find(|group| super::plain_call(group).is_some_and(|(name, _)| name == "window"))
        .cloned()
    else {
        return;
    };
    let as_window = |expr: &mut Expr| {
        match expr {
            Expr::Identifier(name) if is_window(name) => *expr = window.clone(),
            Expr::CompoundIdentifier(parts) if parts.len() == 2 && is_window(&parts[0]) => {
                *expr = Expr::CompoundFieldAccess {
                    root: Box::new(window.clone()),
                    access_chain: vec![AccessExpr::Dot(Expr::Identifier(parts[1].clone()))],
                };
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    };
    for item in &mut select.projection {
        // A bare `window` keeps its name, as Spark's column.
        if let SelectItem::UnnamedExpr(Expr::Identifier(name)) = item {
            if is_window(name) {
                let alias = name.clone();
                *item = SelectItem::ExprWithAlias {
                    expr: window.clone(),
                    alias,
                };
            }
        }
    }
    let _ = visit_expressions_mut(&mut select.projection, as_window);
    if let Some(having) = &mut select.having {
        let _ = visit_expressions_mut(having, as_window);
    }
    if let Some(order_by) = &mut query.order_by {
        let _ = visit_expressions_mut(order_by, as_window);
    }
}

fn is_window(name: &Ident) -> bool {
    name.quote_style.is_none() && name.value.eq_ignore_ascii_case("window")
}

/// Such a call as the struct of its window's start and end; anything else as it is.
pub(super) fn as_bucket(expr: &mut Expr) {
    let Some((name, args)) = super::plain_call(expr) else {
        return;
    };
    if name != "window" {
        return;
    }
    let text = |arg: &Expr| match arg {
        Expr::Value(ValueWithSpan {
            value: Value::SingleQuotedString(text),
            ..
        }) => Some(text.trim().to_owned()),
        _ => None,
    };
    let (time, length, start) = match args.as_slice() {
        [time, length] => ((*time).clone(), text(length), None),
        [time, length, slide] if text(slide) == text(length) => {
            ((*time).clone(), text(length), None)
        }
        [time, length, slide, start] if text(slide) == text(length) => {
            ((*time).clone(), text(length), text(start))
        }
        _ => return,
    };
    let Some(length) = length else {
        return;
    };
    // In seconds since 1970 (the casts between numbers and timestamps convert in the
    // session's zone), so that windows start at the moments Spark's do, daylight-saving
    // changes included: the start is `floor((t - offset) / length) * length + offset`.
    let seconds_of = |interval: String| {
        super::function_call(
            "date_part",
            vec![
                Expr::value(Value::SingleQuotedString("epoch".into())),
                written_out(interval),
            ],
        )
    };
    let length = seconds_of(length);
    let offset = match start {
        Some(start) => seconds_of(start),
        None => Expr::value(Value::Number("0".into(), false)),
    };
    let since_offset = binary(
        cast(time, SqlType::Double(ExactNumberInfo::None)),
        BinaryOperator::Minus,
        offset.clone(),
    );
    let windows = super::function_call(
        "floor",
        vec![binary(since_offset, BinaryOperator::Divide, length.clone())],
    );
    let start_seconds = binary(
        binary(windows, BinaryOperator::Multiply, length.clone()),
        BinaryOperator::Plus,
        offset,
    );
    let timestamp = SqlType::Timestamp(None, TimezoneInfo::None);
    let window_start = cast(start_seconds.clone(), timestamp.clone());
    let window_end = cast(
        binary(start_seconds, BinaryOperator::Plus, length),
        timestamp,
    );
    *expr = super::function_call(
        "named_struct",
        vec![
            Expr::value(Value::SingleQuotedString("start".into())),
            window_start,
            Expr::value(Value::SingleQuotedString("end".into())),
            window_end,
        ],
    );
}

fn binary(left: Expr, op: BinaryOperator, right: Expr) -> Expr {
    Expr::BinaryOp {
        left: Box::new(left),
        op,
        right: Box::new(right),
    }
}

/// `CAST(expr AS to)`, which the engine reads as Spark's cast.
fn cast(expr: Expr, to: SqlType) -> Expr {
    Expr::Cast {
        kind: CastKind::TryCast,
        expr: Box::new(expr),
        data_type: to,
        array: false,
        format: None,
    }
}
