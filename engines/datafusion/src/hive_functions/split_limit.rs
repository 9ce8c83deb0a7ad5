//! Spark's `split(s, regex, limit)` with a positive limit: at most `limit` pieces, the
//! last holding the rest of the text, as Java's `String.split(regex, limit)` cuts them.
//! (`split` without a limit, or with one of 0 or less, is [`super::strings`]'s.)

use std::sync::{Arc, OnceLock};

use datafusion::arrow::array::{ArrayRef, ListBuilder, StringBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{Expr, ScalarUDF};
use regex::Regex;

use super::encoding::{integers_of, strings_of};
use super::HiveFunction;

/// `split(text, regex, limit)` for a positive `limit`, as an expression.
pub(super) fn split_limited(text: Expr, pattern: Expr, limit: Expr) -> Expr {
    static FUNCTION: OnceLock<Arc<ScalarUDF>> = OnceLock::new();
    let function = FUNCTION.get_or_init(|| {
        Arc::new(
            HiveFunction::computed(
                "split",
                |_, _| Ok(vec![DataType::Utf8, DataType::Utf8, DataType::Int64]),
                |_| Ok(DataType::new_list(DataType::Utf8, true)),
                split,
            )
            .udf(),
        )
    });
    Expr::ScalarFunction(ScalarFunction::new_udf(
        Arc::clone(function),
        vec![text, pattern, limit],
    ))
}

fn split(args: &[ArrayRef]) -> Result<ArrayRef> {
    let texts = strings_of(&args[0]);
    let patterns = strings_of(&args[1]);
    let limits = integers_of(&args[2]);
    let mut compiled: Option<(String, Regex)> = None;
    let mut out = ListBuilder::new(StringBuilder::new());
    for ((text, pattern), limit) in texts.into_iter().zip(patterns).zip(limits) {
        let (Some(text), Some(pattern), Some(limit)) = (text, pattern, limit) else {
            out.append_null();
            continue;
        };
        let limit = usize::try_from(limit).unwrap_or(0).max(1);
        if compiled.as_ref().is_none_or(|(p, _)| p != pattern) {
            let regex = Regex::new(pattern).map_err(|e| {
                DataFusionError::Execution(format!("split: the regex {pattern:?} is invalid: {e}"))
            })?;
            compiled = Some((pattern.to_owned(), regex));
        }
        let (_, regex) = compiled.as_ref().expect("compiled above");
        for piece in pieces(text, pattern, regex, limit) {
            out.values().append_value(piece);
        }
        out.append(true);
    }
    Ok(Arc::new(out.finish()))
}

/// At most `limit` pieces of `text`: Java's `split` (no empty piece before a zero-width
/// match at the start), or Spark's characters, the last the rest, for the empty pattern.
fn pieces<'a>(text: &'a str, pattern: &str, regex: &Regex, limit: usize) -> Vec<&'a str> {
    if pattern.is_empty() && !text.is_empty() {
        let mut starts: Vec<usize> = text.char_indices().map(|(i, _)| i).take(limit).collect();
        starts.push(text.len());
        return starts
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                if i + 2 == starts.len() {
                    &text[w[0]..]
                } else {
                    &text[w[0]..w[1]]
                }
            })
            .collect();
    }
    let mut pieces = Vec::new();
    let mut index = 0;
    for found in regex.find_iter(text) {
        if pieces.len() + 1 >= limit {
            break;
        }
        if found.start() == 0 && found.end() == 0 {
            continue;
        }
        pieces.push(&text[index..found.start()]);
        index = found.end();
    }
    pieces.push(&text[index..]);
    pieces
}

#[cfg(test)]
mod tests;
