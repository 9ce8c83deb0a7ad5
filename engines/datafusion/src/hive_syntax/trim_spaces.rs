//! `TRIM(BOTH FROM s)`, `TRIM(LEADING FROM s)` and `TRIM(TRAILING FROM s)`, Spark's trims of
//! spaces without characters to trim, which DataFusion's parser refuses (it reads `FROM` as
//! the characters): written `TRIM(BOTH ' ' FROM s)` before parsing.
//!
//! Spark's two-argument `ltrim(trimStr, s)`, `rtrim(trimStr, s)` and `trim(trimStr, s)` take
//! the characters first, where DataFusion's take the string first: their arguments are
//! swapped after parsing ([`spark_argument_order`]). `btrim(s, trimStr)` is alike in both.

use std::borrow::Cow;

use datafusion::sql::sqlparser::ast::{Expr, FunctionArg, FunctionArgExpr, FunctionArguments};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

/// `sql` with `' '` written between `BOTH`, `LEADING` or `TRAILING` and `FROM` right after
/// `TRIM(`; as it was where there is none (or it does not tokenize).
pub fn rewrite(sql: Cow<'_, str>) -> Cow<'_, str> {
    if !sql
        .as_bytes()
        .windows(4)
        .any(|w| w.eq_ignore_ascii_case(b"trim"))
    {
        return sql;
    }
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, &sql).tokenize_with_location() else {
        return sql;
    };
    // The tokens that are not spaces or comments, with their places.
    let words: Vec<_> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let keyword = |k: usize, keywords: &[Keyword]| matches!(&words.get(k).map(|t| &t.token), Some(Token::Word(w)) if keywords.contains(&w.keyword));
    let mut insertions = Vec::new();
    for k in 0..words.len() {
        if keyword(k, &[Keyword::TRIM])
            && matches!(words.get(k + 1).map(|t| &t.token), Some(Token::LParen))
            && keyword(k + 2, &[Keyword::BOTH, Keyword::LEADING, Keyword::TRAILING])
            && keyword(k + 3, &[Keyword::FROM])
        {
            let from = words[k + 3].span.start;
            if let Some(offset) = byte_offset(&sql, from.line, from.column) {
                insertions.push(offset);
            }
        }
    }
    if insertions.is_empty() {
        return sql;
    }
    let mut out = sql.to_string();
    for offset in insertions.into_iter().rev() {
        out.insert_str(offset, "' ' ");
    }
    out.into()
}

/// The byte offset in `text` of a tokenizer's place: a line and a column, each from 1, the
/// column counted in characters.
fn byte_offset(text: &str, line: u64, column: u64) -> Option<usize> {
    let line_start = if line <= 1 {
        0
    } else {
        let newline = text
            .match_indices('\n')
            .nth(usize::try_from(line).ok()? - 2)?
            .0;
        newline + 1
    };
    let column = usize::try_from(column).ok()?.checked_sub(1)?;
    text[line_start..]
        .char_indices()
        .nth(column)
        .map(|(at, _)| line_start + at)
}

/// `ltrim(trimStr, s)`, `rtrim(trimStr, s)` and `trim(trimStr, s)` as written for Spark, with
/// their arguments in DataFusion's order (`ltrim('x', 'xxa')` is `a`, as in Spark).
pub(super) fn spark_argument_order(expr: &mut Expr) {
    let is_side_trim = matches!(
        super::function_name(expr).as_deref(),
        Some("ltrim" | "rtrim")
    );
    match expr {
        Expr::Trim {
            trim_where: None,
            trim_what: None,
            expr: text,
            trim_characters: Some(characters),
        } if characters.len() == 1 => std::mem::swap(text.as_mut(), &mut characters[0]),
        Expr::Function(function) if is_side_trim => {
            if let FunctionArguments::List(list) = &mut function.args {
                if let [FunctionArg::Unnamed(FunctionArgExpr::Expr(_)), FunctionArg::Unnamed(FunctionArgExpr::Expr(_))] =
                    list.args.as_slice()
                {
                    list.args.swap(0, 1);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::{engine, open, value_rows};

    // Every expected value is Spark 4's.
    #[tokio::test]
    async fn trim_without_characters_trims_spaces() {
        let engine = engine().await;
        let session = open(&engine);
        let rows = value_rows(
            &engine,
            &session,
            "SELECT concat('[', TRIM(TRAILING FROM '  x  '), ']'), \
             concat('[', TRIM(LEADING FROM '  x  '), ']'), \
             concat('[', trim(BOTH FROM '  x  '), ']'), \
             concat('[', TRIM(LEADING FROM '\\t x  '), ']')",
        )
        .await;
        assert_eq!(rows, [["[  x]", "[x  ]", "[x]", "[\t x  ]"]]);
        let rows = value_rows(
            &engine,
            &session,
            "SELECT concat('[', TRIM(TRAILING\nFROM s), ']') FROM VALUES ('  a  ') AS t(s)",
        )
        .await;
        assert_eq!(rows, [["[  a]"]]);
        // With characters, as before; a string holding the words is left as it is.
        let rows = value_rows(
            &engine,
            &session,
            "SELECT TRIM(BOTH 'x' FROM 'xxaxx'), TRIM(LEADING 'x' FROM 'xxaxx'), \
             TRIM(TRAILING 'x' FROM 'xxaxx'), TRIM('x' FROM 'xxaxx'), \
             TRIM(BOTH 'ab' FROM 'abxba'), 'trim(both from s)'",
        )
        .await;
        assert_eq!(rows, [["a", "axx", "xxa", "a", "x", "trim(both from s)"]]);
    }
}
