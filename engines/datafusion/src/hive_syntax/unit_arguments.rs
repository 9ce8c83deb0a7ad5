//! Spark's calls that name a unit of time as a word: `timestampadd(HOUR, n, ts)`,
//! `timestampdiff(DAY, a, b)`, and their 3-argument other names `dateadd(unit, n, ts)` and
//! `datediff(unit, a, b)` / `date_diff(unit, a, b)`. The word, which DataFusion would read as
//! a column, becomes the unit's name as a string for
//! [`crate::hive_functions::timestamp_units`]; a string naming the unit is taken too.

use datafusion::sql::sqlparser::ast::{Expr, Value, ValueWithSpan};

use crate::hive_functions::timestamp_units::UNITS;

/// Such a call as `timestampadd('UNIT', ...)` or `timestampdiff('UNIT', ...)`; anything else
/// is left as it is.
pub(super) fn as_unit_string(expr: &mut Expr) {
    let Some((name, args)) = super::plain_call(expr) else {
        return;
    };
    let function = match (name.as_str(), args.len()) {
        ("timestampadd" | "dateadd", 3) => "timestampadd",
        ("timestampdiff" | "datediff" | "date_diff", 3) => "timestampdiff",
        _ => return,
    };
    let unit = match args[0] {
        Expr::Identifier(word) if word.quote_style.is_none() => word.value.to_ascii_uppercase(),
        Expr::Value(ValueWithSpan {
            value: Value::SingleQuotedString(unit),
            ..
        }) => unit.clone(),
        _ => return,
    };
    // A word that is no unit stays a column (`datediff(d, a, b)` fails as before).
    if matches!(args[0], Expr::Identifier(_)) && !UNITS.contains(&unit.as_str()) {
        return;
    }
    *expr = super::function_call(
        function,
        vec![
            Expr::value(Value::SingleQuotedString(unit)),
            args[1].clone(),
            args[2].clone(),
        ],
    );
}
