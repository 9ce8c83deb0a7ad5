//! Hive's and Spark's regex functions, `regexp_replace`, `regexp_extract`,
//! `regexp_extract_all`, `regexp_substr`, `split`, `rlike` (`regexp`, `regexp_like`),
//! `regexp_count` and `regexp_instr`, with regexes read and
//! applied as Java's `java.util.regex` reads and applies them, where DataFusion's use Rust's
//! `regex` crate:
//!
//! - look-around and back-references compile (`(?<=id=)[0-9]+`, `(a)\1`), through
//!   fancy-regex, which hands a regex without them to `regex` whole, at its speed;
//! - matches follow one another as Java's `Matcher.find` finds them: after an empty match the
//!   next search starts a character on, after any other where that match ended, so an empty
//!   match may follow it there (`regexp_replace('aaa', 'a*', 'x')` is `xx`, as in Java; Rust's
//!   iterator skips that empty match and gave `x`);
//! - a replacement reads `$n`, `${name}` and `\`-escapes as Java's `appendReplacement` does;
//! - `\d`, `\w`, `\s` and the POSIX classes (`\p{Punct}`) are ASCII's, and `\Q...\E`
//!   quotes, as in Java ([`java_syntax`]);
//! - `split` cuts as Java's `String.split(regex, limit)` with Spark's limit (-1 for none):
//!   no empty piece before a zero-width match at the start (`split('a|b', '|')` is
//!   `[a, |, b, ]`), and Spark's characters for the empty regex.
//!
//! A regex is compiled once for the rows that share it. A regex that does not compile, a
//! group it does not have and a bad replacement are the caller's mistakes, named in the
//! query's error.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BooleanBuilder, Int32Builder, ListBuilder, StringBuilder,
};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::ScalarUDF;
use fancy_regex::{Captures, Regex};

use super::encoding::{integers_of, strings_of};
use super::{bad_arguments, is_integer, is_string, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    let text = |_: &[DataType]| Ok(DataType::Utf8);
    let texts = |_: &[DataType]| Ok(DataType::new_list(DataType::Utf8, true));
    vec![
        HiveFunction::computed("regexp_replace", replace_types, text, regexp_replace).udf(),
        HiveFunction::computed("regexp_extract", group_types, text, regexp_extract).udf(),
        HiveFunction::computed("regexp_extract_all", group_types, texts, regexp_extract_all).udf(),
        HiveFunction::computed(
            "regexp_substr",
            |name, types| strings(name, types, 2, "(text, regex)"),
            text,
            regexp_substr,
        )
        .udf(),
        HiveFunction::computed("split", split_types, texts, split).udf(),
        HiveFunction::computed(
            "regexp_like",
            |name, types| strings(name, types, 2, "(text, regex)"),
            |_| Ok(DataType::Boolean),
            regexp_like,
        )
        .with_aliases(&["rlike", "regexp"])
        .udf(),
        HiveFunction::computed(
            "regexp_count",
            |name, types| strings(name, types, 2, "(text, regex)"),
            |_| Ok(DataType::Int32),
            regexp_count,
        )
        .udf(),
        HiveFunction::computed(
            "regexp_instr",
            |name, types| text_regex_and_integer(name, types, "(text, regex[, group number])"),
            |_| Ok(DataType::Int32),
            regexp_instr,
        )
        .udf(),
    ]
}

/// A compiled regex, matched as Java matches it.
pub struct JavaRegex {
    regex: Regex,
    /// The regex as the user wrote it, for messages.
    pattern: String,
    function: &'static str,
}

impl JavaRegex {
    pub fn new(function: &'static str, pattern: &str) -> Result<Self> {
        let regex = Regex::new(&java_syntax::translated(pattern)).map_err(|e| {
            DataFusionError::Execution(format!(
                "{function}: the regex '{pattern}' does not compile: {e}"
            ))
        })?;
        Ok(Self {
            regex,
            pattern: pattern.to_owned(),
            function,
        })
    }

    /// Its number of groups, the whole match not counted.
    pub fn groups(&self) -> usize {
        self.regex.captures_len() - 1
    }

    /// The group a caller asked for, when the regex has it.
    fn group(&self, requested: i64) -> Result<usize> {
        usize::try_from(requested)
            .ok()
            .filter(|&g| g <= self.groups())
            .ok_or_else(|| {
                DataFusionError::Execution(format!(
                    "{}: the regex '{}' has {} groups: group {requested} is none of them",
                    self.function,
                    self.pattern,
                    self.groups()
                ))
            })
    }

    /// Whether it matches anywhere in `text`.
    pub fn is_match(&self, text: &str) -> Result<bool> {
        self.regex.is_match(text).map_err(|e| self.failed(e))
    }

    /// Its matches in `text`, one after another as Java's `Matcher.find` finds them.
    pub fn matches<'r, 't>(&'r self, text: &'t str) -> Matches<'r, 't> {
        Matches {
            regex: self,
            text,
            from: Some(0),
        }
    }

    fn failed(&self, e: fancy_regex::Error) -> DataFusionError {
        // fancy-regex gives up on a regex that backtracks without end; Java would run on.
        DataFusionError::Execution(format!(
            "{}: the regex '{}' could not be matched: {e}",
            self.function, self.pattern
        ))
    }
}

/// The matches of a regex in a text, as Java's `Matcher.find` steps through them.
pub struct Matches<'r, 't> {
    regex: &'r JavaRegex,
    text: &'t str,
    /// Where the next search starts; `None` once no match is left.
    from: Option<usize>,
}

impl<'t> Iterator for Matches<'_, 't> {
    type Item = Result<Captures<'t, str>>;

    fn next(&mut self) -> Option<Self::Item> {
        let from = self.from?;
        let found = match self.regex.regex.captures_from_pos(self.text, from) {
            Ok(found) => found,
            Err(e) => {
                self.from = None;
                return Some(Err(self.regex.failed(e)));
            }
        };
        let Some(captures) = found else {
            self.from = None;
            return None;
        };
        let whole = captures.get(0).expect("a match has group 0");
        self.from = if whole.start() == whole.end() {
            // After an empty match, one character on (none left: done).
            self.text[whole.end()..]
                .chars()
                .next()
                .map(|c| whole.end() + c.len_utf8())
        } else {
            Some(whole.end())
        };
        Some(Ok(captures))
    }
}

/// One part of a replacement, as Java's `appendReplacement` reads it.
#[derive(Debug, PartialEq)]
enum Piece {
    Text(String),
    Group(usize),
    Named(String),
}

/// `replacement` read as Java reads it against `regex`: `$n` is group `n` (digits read while
/// the number is a group of the regex), `${name}` a named group, `\x` the character `x`.
fn replacement_pieces(regex: &JavaRegex, replacement: &str) -> Result<Vec<Piece>> {
    let bad = |why: String| {
        DataFusionError::Execution(format!(
            "regexp_replace: the replacement '{replacement}' {why}"
        ))
    };
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(escaped) => text.push(escaped),
                None => return Err(bad("ends with a lone '\\'".into())),
            },
            '$' => {
                pieces.push(Piece::Text(std::mem::take(&mut text)));
                match chars.next() {
                    Some('{') => {
                        let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                        let known = regex.regex.capture_names().flatten().any(|n| n == name);
                        if !known {
                            return Err(bad(format!("names a group '{name}' the regex has not")));
                        }
                        pieces.push(Piece::Named(name));
                    }
                    Some(digit @ '0'..='9') => {
                        let mut group = digit.to_digit(10).expect("a digit") as usize;
                        if group > regex.groups() {
                            return Err(bad(format!(
                                "refers to group {group}, and the regex has {} groups",
                                regex.groups()
                            )));
                        }
                        while let Some(next) = chars.peek().and_then(|c| c.to_digit(10)) {
                            let longer = group * 10 + next as usize;
                            if longer > regex.groups() {
                                break;
                            }
                            group = longer;
                            chars.next();
                        }
                        pieces.push(Piece::Group(group));
                    }
                    _ => {
                        return Err(bad(
                            "has a '$' that names no group (write \\$ for a dollar sign)".into(),
                        ))
                    }
                }
            }
            c => text.push(c),
        }
    }
    pieces.push(Piece::Text(text));
    pieces.retain(|piece| piece != &Piece::Text(String::new()));
    Ok(pieces)
}

/// `text` with each match of `regex` from its `start`th byte on replaced by `pieces`.
fn replace_all(regex: &JavaRegex, text: &str, start: usize, pieces: &[Piece]) -> Result<String> {
    let (kept, searched) = text.split_at(start);
    let mut out = String::with_capacity(text.len());
    out.push_str(kept);
    let mut copied = 0;
    for captures in regex.matches(searched) {
        let captures = captures?;
        let whole = captures.get(0).expect("a match has group 0");
        out.push_str(&searched[copied..whole.start()]);
        for piece in pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Group(n) => out.push_str(captures.get(*n).map_or("", |m| m.as_str())),
                Piece::Named(name) => {
                    out.push_str(captures.name(name).map_or("", |m| m.as_str()));
                }
            }
        }
        copied = whole.end();
    }
    out.push_str(&searched[copied..]);
    Ok(out)
}

/// The regexes of one batch, compiled once for the rows that share one.
struct Compiled {
    function: &'static str,
    last: Option<(String, JavaRegex)>,
}

impl Compiled {
    fn new(function: &'static str) -> Self {
        Self {
            function,
            last: None,
        }
    }

    fn get(&mut self, pattern: &str) -> Result<&JavaRegex> {
        if self.last.as_ref().is_none_or(|(p, _)| p != pattern) {
            self.last = Some((pattern.to_owned(), JavaRegex::new(self.function, pattern)?));
        }
        Ok(&self.last.as_ref().expect("compiled above").1)
    }
}

/// `regexp_replace(text, regex, replacement[, position])`: every match replaced, searched
/// from the `position`th character on (Spark's; 1 by default), NULL when an argument is.
fn regexp_replace(args: &[ArrayRef]) -> Result<ArrayRef> {
    let (texts, patterns) = (strings_of(&args[0]), strings_of(&args[1]));
    let replacements = strings_of(&args[2]);
    let positions = args.get(3).map(integers_of);
    let mut compiled = Compiled::new("regexp_replace");
    // The last replacement read, for the rows that share it and its regex.
    let mut read: Option<(String, String, Vec<Piece>)> = None;
    let mut out = StringBuilder::new();
    for row in 0..texts.len() {
        let position = positions.as_ref().map_or(Some(1), |p| p[row]);
        let (Some(text), Some(pattern), Some(replacement), Some(position)) =
            (texts[row], patterns[row], replacements[row], position)
        else {
            out.append_null();
            continue;
        };
        if position < 1 {
            return Err(DataFusionError::Execution(format!(
                "regexp_replace: the position {position} is not a positive number (the first \
                 character is 1)"
            )));
        }
        // Spark leaves a text whose characters end before the position as it is.
        let skipped = usize::try_from(position - 1).unwrap_or(usize::MAX);
        let start = match text.char_indices().nth(skipped) {
            Some((start, _)) => start,
            None if skipped == 0 => 0,
            None => {
                out.append_value(text);
                continue;
            }
        };
        let regex = compiled.get(pattern)?;
        if read
            .as_ref()
            .is_none_or(|(p, r, _)| p != pattern || r != replacement)
        {
            let pieces = replacement_pieces(regex, replacement)?;
            read = Some((pattern.to_owned(), replacement.to_owned(), pieces));
        }
        let (_, _, pieces) = read.as_ref().expect("read above");
        out.append_value(replace_all(regex, text, start, pieces)?);
    }
    Ok(Arc::new(out.finish()))
}

/// A row of `(text, regex[, group])`: the text, its regex, and the group asked for (1 by
/// default), which must be one of the regex's once a match is found (as Hive and Spark
/// check it: a text without a match gives `''` whatever the group).
struct GroupRow<'a> {
    text: &'a str,
    regex: &'a JavaRegex,
    group: i64,
}

impl GroupRow<'_> {
    fn group(&self) -> Result<usize> {
        self.regex.group(self.group)
    }
}

/// Calls `each` for every row of `(text, regex[, group])`, with `None` for a row with a NULL
/// argument.
fn each_group(
    function: &'static str,
    args: &[ArrayRef],
    mut each: impl FnMut(Option<GroupRow<'_>>) -> Result<()>,
) -> Result<()> {
    let (texts, patterns) = (strings_of(&args[0]), strings_of(&args[1]));
    let groups = args.get(2).map(integers_of);
    let mut compiled = Compiled::new(function);
    for row in 0..texts.len() {
        let group = groups.as_ref().map_or(Some(1), |g| g[row]);
        let (Some(text), Some(pattern), Some(group)) = (texts[row], patterns[row], group) else {
            each(None)?;
            continue;
        };
        let regex = compiled.get(pattern)?;
        each(Some(GroupRow { text, regex, group }))?;
    }
    Ok(())
}

/// `regexp_extract(text, regex[, group])`: the `group`th group (default 1; 0 the whole
/// match) of the first match, `''` without a match or when the group took no part.
fn regexp_extract(args: &[ArrayRef]) -> Result<ArrayRef> {
    let mut out = StringBuilder::new();
    each_group("regexp_extract", args, |row| {
        let Some(row) = row else {
            out.append_null();
            return Ok(());
        };
        match row.regex.matches(row.text).next().transpose()? {
            Some(first) => out.append_value(first.get(row.group()?).map_or("", |m| m.as_str())),
            None => out.append_value(""),
        }
        Ok(())
    })?;
    Ok(Arc::new(out.finish()))
}

/// `regexp_substr(text, regex)` (Spark's): the first match, NULL without one, or when it is
/// empty (Spark's is `regexp_extract(text, regex, 0)` with `''` made NULL).
fn regexp_substr(args: &[ArrayRef]) -> Result<ArrayRef> {
    let (texts, patterns) = (strings_of(&args[0]), strings_of(&args[1]));
    let mut compiled = Compiled::new("regexp_substr");
    let mut out = StringBuilder::new();
    for (text, pattern) in texts.into_iter().zip(patterns) {
        let (Some(text), Some(pattern)) = (text, pattern) else {
            out.append_null();
            continue;
        };
        let first = compiled.get(pattern)?.matches(text).next().transpose()?;
        let matched = first.as_ref().and_then(|m| m.get(0)).map(|m| m.as_str());
        out.append_option(matched.filter(|m| !m.is_empty()));
    }
    Ok(Arc::new(out.finish()))
}

/// `regexp_extract_all(text, regex[, group])` (Spark's): the `group`th group (default 1; 0
/// the whole match) of every match, `''` for a group that took no part, `[]` without a
/// match.
fn regexp_extract_all(args: &[ArrayRef]) -> Result<ArrayRef> {
    let mut out = ListBuilder::new(StringBuilder::new());
    each_group("regexp_extract_all", args, |row| {
        let Some(row) = row else {
            out.append_null();
            return Ok(());
        };
        for captures in row.regex.matches(row.text) {
            let value = captures?.get(row.group()?).map_or("", |m| m.as_str());
            out.values().append_value(value);
        }
        out.append(true);
        Ok(())
    })?;
    Ok(Arc::new(out.finish()))
}

/// `rlike`, `regexp` and `regexp_like(text, regex)`: whether the regex matches anywhere in
/// the text.
fn regexp_like(args: &[ArrayRef]) -> Result<ArrayRef> {
    let (texts, patterns) = (strings_of(&args[0]), strings_of(&args[1]));
    let mut compiled = Compiled::new("rlike");
    let mut out = BooleanBuilder::with_capacity(texts.len());
    for (text, pattern) in texts.into_iter().zip(patterns) {
        match (text, pattern) {
            (Some(text), Some(pattern)) => out.append_value(compiled.get(pattern)?.is_match(text)?),
            _ => out.append_null(),
        }
    }
    Ok(Arc::new(out.finish()))
}

/// Spark's `regexp_count(text, regex)`: how many times `Matcher.find` finds the regex, an
/// `INT` (`regexp_count('aaa', 'a*')` is 2: `aaa`, then the empty match at the end).
fn regexp_count(args: &[ArrayRef]) -> Result<ArrayRef> {
    integer_per_match("regexp_count", args, |regex, text| {
        let mut count = 0i32;
        for found in regex.matches(text) {
            found?;
            count = count.saturating_add(1);
        }
        Ok(count)
    })
}

/// Spark's `regexp_instr(text, regex[, group])`: where the first match starts, counted from 1
/// in UTF-16 units as Java's `Matcher.start` counts, 0 without a match. Spark takes the
/// group number and answers the whole match's start whatever it is; so does this.
fn regexp_instr(args: &[ArrayRef]) -> Result<ArrayRef> {
    integer_per_match("regexp_instr", args, |regex, text| {
        let first = regex.matches(text).next().transpose()?;
        Ok(first.and_then(|captures| captures.get(0)).map_or(0, |m| {
            let before = text[..m.start()].encode_utf16().count();
            i32::try_from(before + 1).unwrap_or(i32::MAX)
        }))
    })
}

/// An `INT` for each row of `(text, regex, ...)`, `answer` of its compiled regex and text;
/// NULL when either is.
fn integer_per_match(
    function: &'static str,
    args: &[ArrayRef],
    answer: impl Fn(&JavaRegex, &str) -> Result<i32>,
) -> Result<ArrayRef> {
    let (texts, patterns) = (strings_of(&args[0]), strings_of(&args[1]));
    let mut compiled = Compiled::new(function);
    let mut out = Int32Builder::with_capacity(texts.len());
    for (text, pattern) in texts.into_iter().zip(patterns) {
        match (text, pattern) {
            (Some(text), Some(pattern)) => out.append_value(answer(compiled.get(pattern)?, text)?),
            _ => out.append_null(),
        }
    }
    Ok(Arc::new(out.finish()))
}

/// `split(text, regex[, limit])`: the pieces of `text` between matches of `regex`, as
/// Spark cuts them ([`pieces`]); NULL when an argument is.
fn split(args: &[ArrayRef]) -> Result<ArrayRef> {
    let (texts, patterns) = (strings_of(&args[0]), strings_of(&args[1]));
    let limits = args.get(2).map(integers_of);
    let mut compiled = Compiled::new("split");
    let mut out = ListBuilder::new(StringBuilder::new());
    for row in 0..texts.len() {
        let limit = limits.as_ref().map_or(Some(-1), |l| l[row]);
        let (Some(text), Some(pattern), Some(limit)) = (texts[row], patterns[row], limit) else {
            out.append_null();
            continue;
        };
        for piece in pieces(text, pattern, compiled.get(pattern)?, limit)? {
            out.values().append_value(piece);
        }
        out.append(true);
    }
    Ok(Arc::new(out.finish()))
}

/// The pieces of `text` as Spark's `split` cuts them: Java's `String.split(regex, limit)`,
/// a limit of 0 read as -1 (trailing empty pieces kept, as Hive since HIVE-5506); a positive
/// limit keeps at most that many pieces, the last holding the rest. The empty regex cuts a
/// text into its characters (Spark's own, without Java's trailing empty piece).
fn pieces<'t>(text: &'t str, pattern: &str, regex: &JavaRegex, limit: i64) -> Result<Vec<&'t str>> {
    let limit = usize::try_from(limit).ok().filter(|&l| l > 0);
    if pattern.is_empty() && !text.is_empty() {
        let mut starts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        if let Some(limit) = limit {
            starts.truncate(limit);
        }
        starts.push(text.len());
        let last = starts.len() - 2;
        return Ok(starts
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                if i == last {
                    &text[w[0]..]
                } else {
                    &text[w[0]..w[1]]
                }
            })
            .collect());
    }
    let mut pieces = Vec::new();
    let mut index = 0;
    for found in regex.matches(text) {
        let whole = found?.get(0).expect("a match has group 0");
        if limit.is_some_and(|limit| pieces.len() + 1 >= limit) {
            // The last piece holds the rest of the text.
            break;
        }
        // No empty leading piece before a zero-width match at the start (Java 8's rule).
        if index == 0 && whole.start() == 0 && whole.end() == 0 {
            continue;
        }
        pieces.push(&text[index..whole.start()]);
        index = whole.end();
    }
    pieces.push(&text[index..]);
    Ok(pieces)
}

fn replace_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [_, _, _] => strings(name, types, 3, "(text, regex, replacement[, position])"),
        [a, b, c, p] if [a, b, c].iter().all(|t| string_like(t)) && is_integer(p) => Ok(vec![
            DataType::Utf8,
            DataType::Utf8,
            DataType::Utf8,
            DataType::Int64,
        ]),
        _ => Err(bad_arguments(
            name,
            "(text, regex, replacement[, position])",
            types,
        )),
    }
}

/// `(text, regex[, integer])`: two strings, then the group of `regexp_extract` or the limit
/// of `split`.
fn text_regex_and_integer(name: &str, types: &[DataType], expected: &str) -> Result<Vec<DataType>> {
    match types {
        [_, _] => strings(name, types, 2, expected),
        [a, b, n] if string_like(a) && string_like(b) && is_integer(n) => {
            Ok(vec![DataType::Utf8, DataType::Utf8, DataType::Int64])
        }
        _ => Err(bad_arguments(name, expected, types)),
    }
}

fn group_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    text_regex_and_integer(name, types, "(text, regex[, group number])")
}

fn split_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    text_regex_and_integer(name, types, "(text, regex[, limit])")
}

/// `count` strings (or NULLs), as `Utf8`.
fn strings(name: &str, types: &[DataType], count: usize, expected: &str) -> Result<Vec<DataType>> {
    if types.len() == count && types.iter().all(string_like) {
        Ok(vec![DataType::Utf8; count])
    } else {
        Err(bad_arguments(name, expected, types))
    }
}

fn string_like(t: &DataType) -> bool {
    is_string(t) || t.is_null()
}

mod java_syntax;

#[cfg(test)]
mod tests;
