//! Spark's tumbling time windows, `window(ts, '10 minutes'[, slide[, start]])`: the struct
//! `{start, end}` of the window of that length that holds `ts`, windows starting at
//! 1970-01-01 00:00:00 UTC, in the session's zone (moved by `start`, `'5 minutes'`), so that
//! `GROUP BY window(ts, '1 hour')` counts each hour's rows. As `date_bin` of the length, and
//! the start plus the length. A sliding window (a slide shorter than the length), which
//! puts a row in several windows, is not taken: such a call is left to fail, naming `window`.

use datafusion::sql::sqlparser::ast::{Expr, Value, ValueWithSpan};

use super::interval_ranges::written_out;

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
    // 1970-01-01 00:00:00 UTC as the session's wall-clock time (`CAST(0 AS TIMESTAMP)`), so
    // that windows start where Spark's do in any session zone.
    let epoch = Expr::Cast {
        kind: datafusion::sql::sqlparser::ast::CastKind::TryCast,
        expr: Box::new(Expr::value(Value::Number("0".into(), false))),
        data_type: datafusion::sql::sqlparser::ast::DataType::Timestamp(
            None,
            datafusion::sql::sqlparser::ast::TimezoneInfo::None,
        ),
        array: false,
        format: None,
    };
    let origin = match start {
        Some(start) => plus(epoch, written_out(start)),
        None => epoch,
    };
    let window_start =
        super::function_call("date_bin", vec![written_out(length.clone()), time, origin]);
    let window_end = plus(window_start.clone(), written_out(length));
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

fn plus(left: Expr, right: Expr) -> Expr {
    Expr::BinaryOp {
        left: Box::new(left),
        op: datafusion::sql::sqlparser::ast::BinaryOperator::Plus,
        right: Box::new(right),
    }
}
