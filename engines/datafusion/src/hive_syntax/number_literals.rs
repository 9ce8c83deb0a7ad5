//! Hive's and Spark's typed number literals, `1Y`, `1S`, `2.5F`, `2.5D`, `1BD`, which
//! DataFusion's tokenizer reads as a number followed by an alias (`SELECT 2.5D` was 2.5 named
//! `D`, and `(SELECT 2.5D AS x)` a syntax error): written out as the values they are.
//! `1L` is a `BIGINT` where `1` is an `INT` ([`super::integer_literals`]).

use std::iter::Peekable;
use std::str::Chars;

/// Whether `sql` may hold a typed number literal: a digit right before one of the suffixes,
/// at the end of a word. Cheap and loose (a string's text counts too); [`read`] decides.
pub(super) fn may_hold_one(sql: &str) -> bool {
    let bytes = sql.as_bytes();
    (1..bytes.len()).any(|i| {
        bytes[i - 1].is_ascii_digit()
            && suffix_at(&bytes[i..]).is_some_and(|len| {
                bytes
                    .get(i + len)
                    .is_none_or(|&b| !(b.is_ascii_alphanumeric() || b == b'_'))
            })
    })
}

/// The length of the suffix `rest` starts with, if any (`BD` before `D`'s one letter).
fn suffix_at(rest: &[u8]) -> Option<usize> {
    match rest {
        [b'b' | b'B', b'd' | b'D', ..] => Some(2),
        [b'y' | b'Y' | b's' | b'S' | b'l' | b'L' | b'f' | b'F' | b'd' | b'D', ..] => Some(1),
        _ => None,
    }
}

/// Reads the number that starts with the digit `first` (the rest from `chars`, consumed):
/// digits, a fraction, an exponent, and a type suffix if one ends the word. Returns the
/// number as DataFusion should read it: with the suffix made a `CAST` (or, for a `DOUBLE`,
/// which a number with a point already is, a point), or as written when there is none.
pub(super) fn read(first: char, chars: &mut Peekable<Chars<'_>>) -> String {
    let mut number = String::from(first);
    take_digits(chars, &mut number);
    // `1.` alone is a number too; `t1.c` never reaches here, its word starts with a letter.
    if chars.peek() == Some(&'.') {
        number.push('.');
        chars.next();
        take_digits(chars, &mut number);
    }
    let mut exponent = false;
    if matches!(chars.peek(), Some('e' | 'E')) {
        let mut ahead = chars.clone();
        let e = ahead.next().unwrap_or('e');
        let sign = ahead.peek().copied().filter(|c| *c == '+' || *c == '-');
        if sign.is_some() {
            ahead.next();
        }
        if ahead.peek().is_some_and(char::is_ascii_digit) {
            number.push(e);
            chars.next();
            if let Some(sign) = sign {
                number.push(sign);
                chars.next();
            }
            take_digits(chars, &mut number);
            exponent = true;
        }
    }
    let rest: String = chars.clone().take(3).collect();
    let Some(len) = suffix_at(rest.as_bytes()) else {
        return number;
    };
    let after = rest[len..].chars().next();
    if after.is_some_and(|c| c.is_alphanumeric() || c == '_') {
        return number;
    }
    let suffix = rest[..len].to_ascii_uppercase();
    let written = match suffix.as_str() {
        "Y" => format!("CAST({number} AS TINYINT)"),
        "S" => format!("CAST({number} AS SMALLINT)"),
        "L" if number.contains('.') || exponent => return number,
        // `-9223372036854775808L`, the smallest BIGINT: its digits alone are one more than
        // the largest, so they stay a number for the parser to negate (the CAST would be
        // NULL before the minus applied).
        "L" if number == "9223372036854775808" => return number,
        "L" => format!("CAST({number} AS BIGINT)"),
        "F" => format!("CAST({number} AS FLOAT)"),
        "D" if number.contains('.') || exponent => number.clone(),
        "D" => format!("{number}.0"),
        _ if exponent => return number,
        _ => {
            let (whole, fraction) = number.split_once('.').unwrap_or((&number, ""));
            let scale = fraction.len();
            let precision = (whole.trim_start_matches('0').len() + scale).max(1);
            format!("CAST({number} AS DECIMAL({precision}, {scale}))")
        }
    };
    for _ in 0..len {
        chars.next();
    }
    written
}

fn take_digits(chars: &mut Peekable<Chars<'_>>, into: &mut String) {
    while let Some(&c) = chars.peek() {
        if !c.is_ascii_digit() {
            break;
        }
        into.push(c);
        chars.next();
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::{engine, lines, open};

    /// The cells of a one-row query's row, as beeline prints them.
    async fn row(sql: &str) -> Vec<String> {
        let engine = engine().await;
        let session = open(&engine);
        let lines = lines(&engine, &session, sql).await;
        assert_eq!(lines.len(), 5, "{sql}: {lines:?}");
        lines[3]
            .trim_matches('|')
            .split('|')
            .map(|cell| cell.trim().to_owned())
            .collect()
    }

    #[tokio::test]
    async fn a_typed_number_literal_has_its_suffixs_type() {
        assert_eq!(
            row(
                "SELECT arrow_typeof(1Y), arrow_typeof(1s), arrow_typeof(1L), \
                 arrow_typeof(2.5F), arrow_typeof(2.5D), arrow_typeof(1d), arrow_typeof(1.25BD)"
            )
            .await,
            [
                "Int8",
                "Int16",
                "Int64",
                "Float32",
                "Float64",
                "Float64",
                "Decimal128(3, 2)"
            ]
        );
        assert_eq!(
            row("SELECT 120000.5D + 1, 1e3D, 7Y, 0.10BD, -2S").await,
            ["120001.5", "1000.0", "7", "0.10", "-2"]
        );
        // The smallest BIGINT, whose digits alone are beyond the largest.
        assert_eq!(
            row("SELECT -9223372036854775808L, arrow_typeof(-9223372036854775808L)").await,
            ["-9223372036854775808", "Int64"]
        );
    }

    #[tokio::test]
    async fn a_typed_number_literal_reads_inside_a_subquery_and_a_table_definition() {
        // Before, `2.5D` was 2.5 named `D`, and a syntax error where an alias cannot be.
        assert_eq!(
            row("SELECT salary FROM (SELECT 1 AS id, 120000.0D AS salary) x").await,
            ["120000.0"]
        );
        let engine = engine().await;
        let session = open(&engine);
        lines(
            &engine,
            &session,
            "CREATE TABLE typed_literals AS SELECT 55000.25D AS salary, 'o''neil' AS name",
        )
        .await;
        let rows = lines(&engine, &session, "SELECT salary, name FROM typed_literals").await;
        assert!(
            rows[3].contains("55000.25") && rows[3].contains("o'neil"),
            "{rows:?}"
        );
    }

    #[tokio::test]
    async fn words_and_strings_that_look_like_suffixes_are_left_alone() {
        assert_eq!(
            row("SELECT '2.5D', 1 AS d, 3 AS s1, length('7Y')").await,
            ["2.5D", "1", "3", "2"]
        );
        let engine = engine().await;
        let session = open(&engine);
        let rows = lines(
            &engine,
            &session,
            "SELECT 1 d1, 2 AS bd FROM (SELECT 1 AS x) t",
        )
        .await;
        assert!(rows[1].contains("d1") && rows[1].contains("bd"), "{rows:?}");
    }
}
