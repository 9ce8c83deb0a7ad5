//! Hive's variable substitution: `${name}`, `${hivevar:name}` and `${hiveconf:key}` in a
//! statement's text are replaced by their values before it is planned, as HiveServer2 and
//! the Spark Thrift Server do, so that beeline scripts run with `--hivevar dt=...`,
//! `--hiveconf k=v`, a JDBC URL's `#name=value` or `SET hivevar:name=value` work unchanged.
//!
//! The rules are Hive's (`VariableSubstitution`): a reference is `${` name `}` where the name
//! holds no `}`, `$` or space; replacement is textual, string literals included; a value may
//! hold references in turn, resolved again up to [`MAX_DEPTH`] times; a reference with no
//! value stays as it is; `SET hive.variable.substitute=false` turns substitution off.
//! `${env:...}` and `${system:...}` are never resolved: the engine's environment holds its
//! object-store credentials, which no statement may read.

use std::borrow::Cow;

/// How many rounds of substitution a statement may need (Hive's
/// `hive.variable.substitute.depth` default).
pub const MAX_DEPTH: usize = 40;

/// The key that turns substitution off when set to `false`, as in Hive.
pub const SUBSTITUTE_KEY: &str = "hive.variable.substitute";

/// The statement with every reference `lookup` resolves replaced by its value. `lookup`
/// gets the name inside `${...}` as written (`dt`, `hivevar:dt`, `hiveconf:k`).
///
/// Fails when values still hold references after [`MAX_DEPTH`] rounds (a variable that
/// refers to itself), naming the statement.
pub fn substitute<'a>(
    sql: &'a str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Cow<'a, str>, String> {
    let mut text = Cow::Borrowed(sql);
    for _ in 0..=MAX_DEPTH {
        match substitute_once(&text, &lookup) {
            Some(next) => text = Cow::Owned(next),
            None => return Ok(text),
        }
    }
    Err(format!(
        "variable substitution is deeper than {MAX_DEPTH} rounds (does a variable refer to \
         itself?) in: {sql}"
    ))
}

/// One round: the text with each resolvable reference replaced, or `None` when none was.
fn substitute_once(text: &str, lookup: &impl Fn(&str) -> Option<String>) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut replaced = false;
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let name_len = after
            .find(['}', '$', ' '])
            .filter(|&end| end > 0 && after[end..].starts_with('}'));
        let value = name_len.and_then(|len| lookup(&after[..len]).map(|value| (len, value)));
        match value {
            Some((len, value)) => {
                out.push_str(&rest[..start]);
                out.push_str(&value);
                rest = &after[len + 1..];
                replaced = true;
            }
            None => {
                // Not a reference, or one without a value: kept, and the search goes on
                // after its `$`.
                out.push_str(&rest[..start + 1]);
                rest = &rest[start + 1..];
            }
        }
    }
    out.push_str(rest);
    replaced.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(name: &str) -> Option<String> {
        match name {
            "dt" | "hivevar:dt" => Some("2024-01-31".into()),
            "hiveconf:queue" => Some("etl".into()),
            "outer" => Some("${dt}!".into()),
            "self" => Some("${self}".into()),
            _ => None,
        }
    }

    #[test]
    fn references_are_replaced_textually() {
        assert_eq!(
            substitute("SELECT '${dt}', ${hivevar:dt}, '${hiveconf:queue}'", vars).unwrap(),
            "SELECT '2024-01-31', 2024-01-31, 'etl'"
        );
        assert!(matches!(
            substitute("SELECT 1", vars).unwrap(),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn unknown_and_malformed_references_stay() {
        assert_eq!(
            substitute("${nope} ${} ${a b} $dt ${dt", vars).unwrap(),
            "${nope} ${} ${a b} $dt ${dt"
        );
        assert_eq!(
            substitute("${env:HOME}${system:user.name}", vars).unwrap(),
            "${env:HOME}${system:user.name}"
        );
        assert_eq!(substitute("$${dt}", vars).unwrap(), "$2024-01-31");
        assert_eq!(substitute("é${dt}é", vars).unwrap(), "é2024-01-31é");
    }

    #[test]
    fn values_are_resolved_again_up_to_the_depth() {
        assert_eq!(substitute("${outer}", vars).unwrap(), "2024-01-31!");
        let error = substitute("SELECT ${self}", vars).unwrap_err();
        assert!(error.contains("deeper than 40") && error.contains("SELECT ${self}"));
    }
}
