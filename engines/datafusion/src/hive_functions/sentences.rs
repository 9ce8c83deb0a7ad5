//! Hive's `sentences(text[, lang[, country]])`: the text's sentences, each an array of its
//! words, as Hive (and Spark) find them with Java's `BreakIterator` sentence and word
//! instances, whose rules (the JDK's `BreakIteratorRules`) are followed here: a sentence
//! ends after `!` or `?` (and what closes it), or after a period followed by spaces and a
//! letter that is not lower-case, or by opening marks before a letter; a word is a run of letters and digits, held together
//! by a single dash, apostrophe, quote or period between letters, or a period, comma,
//! apostrophe or quote between digits. Punctuation and spaces are dropped, and so is a
//! number led by a currency sign, `#` or `.` (`$100`), which Java keeps as one token that is
//! not a word. The locale arguments are accepted and, as in the JDK's rules for every
//! language but Thai, change nothing.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, ListBuilder, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::error::Result;
use datafusion::logical_expr::ScalarUDF;

use super::bad_arguments;
use super::encoding::strings_of;
use super::HiveFunction;

pub fn functions() -> Vec<ScalarUDF> {
    vec![HiveFunction::computed(
        "sentences",
        sentences_types,
        |_| Ok(sentences_type()),
        sentences,
    )
    .udf()]
}

fn sentences_type() -> DataType {
    let words = DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true)));
    DataType::List(Arc::new(Field::new_list_field(words, true)))
}

fn sentences_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let string = |t: &DataType| super::is_string(t) || t.is_null();
    if (1..=3).contains(&types.len()) && types.iter().all(string) {
        Ok(vec![DataType::Utf8; types.len()])
    } else {
        Err(bad_arguments(name, "(text[, language[, country]])", types))
    }
}

fn sentences(args: &[ArrayRef]) -> Result<ArrayRef> {
    let mut out = ListBuilder::new(ListBuilder::new(StringBuilder::new()));
    for text in strings_of(&args[0]) {
        let Some(text) = text else {
            out.append(false);
            continue;
        };
        let chars: Vec<char> = text.chars().collect();
        for sentence in split_sentences(&chars) {
            for word in words(sentence) {
                out.values()
                    .values()
                    .append_value(word.iter().collect::<String>());
            }
            out.values().append(true);
        }
        out.append(true);
    }
    Ok(Arc::new(out.finish()))
}

/// Java's `$term`: what ends a sentence whatever follows.
fn is_terminator(c: char) -> bool {
    matches!(c, '!' | '?' | '\u{3002}' | '\u{ff01}' | '\u{ff1f}')
}

fn is_period(c: char) -> bool {
    matches!(c, '.' | '\u{ff0e}')
}

/// Java's `$space` of the sentence rules.
fn is_sentence_space(c: char) -> bool {
    matches!(c, '\t' | '\r' | '\u{c}' | '\n' | '\u{2028}') || (c.is_whitespace() && !c.is_control())
}

/// Opening punctuation and quotes (`$start`).
fn is_opening(c: char) -> bool {
    matches!(
        c,
        '"' | '\''
            | '('
            | '['
            | '{'
            | '\u{ab}'
            | '\u{2018}'
            | '\u{201b}'
            | '\u{201c}'
            | '\u{201f}'
            | '\u{2039}'
    )
}

/// Closing punctuation and quotes (`$end`).
fn is_closing(c: char) -> bool {
    matches!(
        c,
        '"' | '\'' | ')' | ']' | '}' | '\u{bb}' | '\u{2019}' | '\u{201d}' | '\u{203a}'
    )
}

/// Java's `<sent-start>`: a mark that may stand before a sentence's first letter (a
/// symbol, say); no letter, digit, space or punctuation that ends sentences.
fn starts_sentence(c: char) -> bool {
    !(c.is_alphabetic()
        || is_sentence_space(c)
        || is_opening(c)
        || is_closing(c)
        || c.is_numeric()
        || is_terminator(c)
        || is_period(c)
        || c == ','
        || c == '\u{2029}')
}

/// Where a sentence after a period (at `at`, its periods and closing marks running to
/// `closed`, spaces to `after`) begins, if one does: at a letter that is not lower-case
/// after a space, or at a run of opening marks (or symbols) before a letter. A quote is
/// both a closing and an opening mark, so without a space that run may begin inside the
/// closing one (`U.S.A.'s` breaks before `'s`, as Java's rules do); Java's iterator takes
/// the longest match, the latest such place.
fn sentence_after_period(chars: &[char], at: usize, closed: usize, after: usize) -> Option<usize> {
    let letter_at = |p: usize| chars.get(p).is_some_and(|c| c.is_alphabetic());
    if after > closed && letter_at(after) && !chars[after].is_lowercase() {
        return Some(after);
    }
    let opens_before_letter = |p: usize| {
        let run = chars[p..]
            .iter()
            .take_while(|&&c| is_opening(c) || starts_sentence(c))
            .count();
        run > 0 && letter_at(p + run)
    };
    let first = if after > closed {
        after
    } else {
        // The latest place from which the rest of the closing run can be opening marks.
        (at..=closed)
            .find(|&p| chars[p..closed].iter().all(|&c| is_opening(c)))
            .unwrap_or(closed)
    };
    (first..=after).rev().find(|&p| opens_before_letter(p))
}

/// The text cut into sentences at Java's sentence breaks.
fn split_sentences(chars: &[char]) -> Vec<&[char]> {
    let mut sentences = Vec::new();
    let mut start = 0;
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        at += 1;
        let skip = |mut at: usize, class: &dyn Fn(char) -> bool| {
            while at < chars.len() && class(chars[at]) {
                at += 1;
            }
            at
        };
        let end = if c == '\u{2029}' {
            Some(at)
        } else if matches!(c, '\u{964}' | '\u{965}') {
            Some(skip(at, &is_sentence_space))
        } else if is_terminator(c) {
            let after = skip(at, &|c| is_terminator(c) || is_period(c) || is_closing(c));
            let after = skip(after, &is_sentence_space);
            Some(if chars.get(after) == Some(&'\u{2029}') {
                after + 1
            } else {
                after
            })
        } else if is_period(c) {
            let closed = skip(at, &|c| is_period(c) || is_closing(c));
            let after = skip(closed, &is_sentence_space);
            sentence_after_period(chars, at, closed, after)
        } else {
            None
        };
        if let Some(end) = end {
            sentences.push(&chars[start..end]);
            start = end;
            at = end;
        }
    }
    if start < chars.len() {
        sentences.push(&chars[start..]);
    }
    sentences
}

fn is_ideograph(c: char) -> bool {
    matches!(c, '\u{3005}' | '\u{3400}'..='\u{4db5}' | '\u{4e00}'..='\u{9fa5}' | '\u{f900}'..='\u{fa6a}' | '\u{20000}'..='\u{3ffff}')
}

fn is_katakana(c: char) -> bool {
    matches!(c, '\u{3099}'..='\u{309c}' | '\u{30a1}'..='\u{30fe}')
}

fn is_hiragana(c: char) -> bool {
    matches!(c, '\u{3041}'..='\u{309e}' | '\u{30fc}')
}

/// Java's `$let`: letters other than ideographs and kana.
fn is_letter(c: char) -> bool {
    c.is_alphabetic() && !c.is_numeric() && !is_ideograph(c) && !is_katakana(c) && !is_hiragana(c)
}

/// Java's `$mid_word`: dashes, apostrophes, quotes and periods between letters.
fn joins_letters(c: char) -> bool {
    matches!(
        c,
        '-' | '\u{2010}'..='\u{2015}' | '\u{ad}' | '\u{2027}' | '"' | '\'' | '.'
    )
}

/// Java's `$mid_num`: quotes, apostrophes, periods and commas between digits.
fn joins_digits(c: char) -> bool {
    matches!(c, '"' | '\'' | ',' | '\u{66b}' | '.')
}

/// Java's `$pre_num`: currency signs, `#` and `.` before a number.
fn leads_number(c: char) -> bool {
    matches!(c, '#' | '.' | '$' | '\u{a3}'..='\u{a5}' | '\u{20a0}'..='\u{20cf}')
}

/// Java's `$post_num`.
fn ends_number(c: char) -> bool {
    matches!(
        c,
        '%' | '&' | '\u{a2}' | '\u{66a}' | '\u{2030}' | '\u{2031}'
    )
}

/// A class of characters of Java's rules.
type CharClass = fn(char) -> bool;

/// The end of the run of words and numbers (`$word?($number$word)*($number$post_num?)?`)
/// from `at`, where a letter or digit stands.
fn word_end(chars: &[char], mut at: usize) -> usize {
    let class_at = |at: usize, class: fn(char) -> bool| chars.get(at).is_some_and(|&c| class(c));
    loop {
        let number = class_at(at, char::is_numeric);
        let (run, joiner): (CharClass, CharClass) = if class_at(at, is_letter) {
            (is_letter, joins_letters)
        } else if number {
            (char::is_numeric, joins_digits)
        } else {
            return at;
        };
        while class_at(at, run) {
            at += 1;
            if class_at(at, joiner) && class_at(at + 1, run) {
                at += 1;
            }
        }
        if number && class_at(at, ends_number) {
            return at + 1;
        }
    }
}

/// A sentence's words: its runs of words and numbers, ideographs, katakana or hiragana;
/// the other tokens (spaces, punctuation, numbers led by a sign) dropped.
fn words(sentence: &[char]) -> Vec<&[char]> {
    let mut words = Vec::new();
    let mut at = 0;
    while at < sentence.len() {
        let c = sentence[at];
        let run = |class: fn(char) -> bool| {
            sentence[at..]
                .iter()
                .position(|&c| !class(c))
                .map_or(sentence.len(), |n| at + n)
        };
        let end = if is_letter(c) || c.is_numeric() {
            let end = word_end(sentence, at);
            words.push(&sentence[at..end]);
            end
        } else if is_ideograph(c) || is_katakana(c) || is_hiragana(c) {
            let class = if is_ideograph(c) {
                is_ideograph
            } else if is_katakana(c) {
                is_katakana
            } else {
                is_hiragana
            };
            let end = run(class);
            words.push(&sentence[at..end]);
            end
        } else if leads_number(c) && sentence.get(at + 1).is_some_and(|c| c.is_numeric()) {
            word_end(sentence, at + 1)
        } else {
            at + 1
        };
        at = end;
    }
    words
}
