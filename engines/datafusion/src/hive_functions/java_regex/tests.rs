//! The regex functions as Java reads and applies regexes, each expected value as pyspark 4.3
//! (local, without ANSI mode) answers the same SQL.

use super::{replacement_pieces, JavaRegex, Piece};
use crate::hive_functions::tests::check;
use crate::test_util::{engine, error, open};

#[tokio::test]
async fn matches_follow_one_another_as_javas_find_steps() {
    let engine = engine().await;
    let s = open(&engine);
    // An empty match right after a match counts, as in Java (Rust's iterator skips it). A
    // group is checked once a match is found, as in Spark and Hive.
    check(
        &engine,
        &s,
        "SELECT regexp_replace('aaa', 'a*', 'x'), regexp_replace('a b  c', '\\\\s*', '_'), \
         regexp_replace('abc', '', '-'), regexp_replace('2024-01-02', \
         '(\\\\d+)-(\\\\d+)-(\\\\d+)', '$3/$2/$1'), regexp_replace('a.b', '\\\\.', '\\\\$'), \
         regexp_replace('abab', 'a', 'X', 2), regexp_replace('abab', 'a', 'X', 9)",
        &[
            "xx",
            "_a__b__c_",
            "-a-b-c-",
            "02/01/2024",
            "a$b",
            "abXb",
            "abab",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT regexp_extract_all('a1b22', '\\\\d*', 0), regexp_extract('abc', 'x', 0), \
         regexp_extract('ab', '(x)?b', 1), regexp_extract(NULL, 'x'), \
         regexp_replace('a', NULL, 'b'), regexp_extract('foo', '[0-9]+'), \
         size(regexp_extract_all('foo', '[0-9]+'))",
        &["[, 1, , 22, ]", "", "", "NULL", "NULL", "", "0"],
    )
    .await;
    // regexp_count counts the matches find finds, an INT.
    check(
        &engine,
        &s,
        "SELECT regexp_count('aaa', 'a*'), regexp_count('a1b22', '\\\\d+'), \
         regexp_count(NULL, 'a'), regexp_count('abc', ''), typeof(regexp_count('a', 'a'))",
        &["2", "2", "NULL", "4", "int"],
    )
    .await;
    // regexp_substr: the first match, NULL without one or for an empty one.
    check(
        &engine,
        &s,
        "SELECT regexp_substr('Steven Jones and Stephen Smith', 'Ste(v|ph)en'), \
         regexp_substr('abc', 'x'), regexp_substr(NULL, 'a'), regexp_substr('abc', ''), \
         typeof(regexp_substr('a', 'a'))",
        &["Steven", "NULL", "NULL", "NULL", "string"],
    )
    .await;
}

#[tokio::test]
async fn look_around_and_back_references_compile_as_in_java() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT regexp_replace('id=42;id=7', '(?<=id=)\\\\d+', '#'), \
         regexp_replace('abcabc', '(a)(b)(c)', '$11'), regexp_replace('hello', '(l)\\\\1', 'L'), \
         regexp_extract('id=42', '(?<=id=)(\\\\d+)', 1), \
         regexp_extract('foofoo bar', '(foo)\\\\1', 0), 'test_x' RLIKE '^(?!test)', \
         'prod_x' RLIKE '^(?!test)', 'aa' RLIKE '(a)\\\\1', regexp_like('Abc', '(?i)^abc$')",
        &[
            "id=#;id=#",
            "a1a1",
            "heLo",
            "42",
            "foofoo",
            "false",
            "true",
            "true",
            "true",
        ],
    )
    .await;
}

#[tokio::test]
async fn split_cuts_as_javas_split_with_sparks_limit() {
    let engine = engine().await;
    let s = open(&engine);
    // No empty piece before a zero-width match at the start; a text holding any character
    // is cut only at the regex's matches.
    check(
        &engine,
        &s,
        "SELECT split('a|b', '|'), split('abc', 'x*'), split('a1b', '(?=[0-9])'), \
         split('a,b,,', ','), split(',a', ','), split('', ','), split('abc', ''), \
         split(concat('a', chr(31), 'b'), ',')",
        &[
            "[a, |, b, ]",
            "[a, b, c, ]",
            "[a, 1b]",
            "[a, b, , ]",
            "[, a]",
            "[]",
            "[a, b, c]",
            "[a\u{1f}b]",
        ],
    )
    .await;
    // A positive limit keeps the rest in the last piece; 0 or less is none.
    check(
        &engine,
        &s,
        "SELECT split('a1b2c3', '[0-9]', 2), split('a1b2c3', '[0-9]', 0), \
         split('a1b2c3', '[0-9]', 1), split('a,b,,,', ',', 3), split('abc', '', 2), \
         split('abc', '', 0), size(split('', ',', 2)), split(NULL, ',', 2), \
         split('a,b', ',', NULL)",
        &[
            "[a, b2c3]",
            "[a, b, c, ]",
            "[a1b2c3]",
            "[a, b, ,,]",
            "[a, bc]",
            "[a, b, c]",
            "1",
            "NULL",
            "NULL",
        ],
    )
    .await;
}

#[tokio::test]
async fn bad_regexes_groups_and_replacements_are_named() {
    let engine = engine().await;
    let s = open(&engine);
    for (sql, reason) in [
        (
            "SELECT 'a' RLIKE '('",
            "rlike: the regex '(' does not compile",
        ),
        (
            "SELECT regexp_extract('a', '(a)', 2)",
            "regexp_extract: the regex '(a)' has 1 groups: group 2 is none of them",
        ),
        (
            "SELECT regexp_extract('foo1', '[0-9]+')",
            "regexp_extract: the regex '[0-9]+' has 0 groups: group 1 is none of them",
        ),
        (
            "SELECT regexp_replace('a', '(a)', '$2')",
            "the replacement '$2' refers to group 2, and the regex has 1 groups",
        ),
        (
            "SELECT regexp_replace('a', 'a', 'x', 0)",
            "regexp_replace: the position 0 is not a positive number",
        ),
    ] {
        let refused = error(&engine, &s, sql).await.to_string();
        assert!(refused.contains(reason), "{sql}: {refused}");
    }
}

#[test]
fn a_replacement_reads_groups_names_and_escapes_as_java() {
    let regex = JavaRegex::new("test", "(?<word>[a-z]+)(-)?").unwrap();
    assert_eq!(
        replacement_pieces(&regex, "<${word}> $1$2$21 \\$1 \\\\").unwrap(),
        [
            Piece::Text("<".into()),
            Piece::Named("word".into()),
            Piece::Text("> ".into()),
            Piece::Group(1),
            Piece::Group(2),
            Piece::Group(2),
            Piece::Text("1 $1 \\".into()),
        ]
    );
    for bad in ["$", "$x", "${nope}", "$3", "a\\"] {
        assert!(replacement_pieces(&regex, bad).is_err(), "{bad}");
    }
}

#[tokio::test]
async fn javas_classes_are_ascii_and_its_quoting_quotes() {
    // Spark 4.3's answers: `\w`, `\d`, `\s` and `\p{Punct}` take ASCII's characters alone.
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT regexp_extract('café 123', '(\\\\w+)', 1), \
         regexp_replace('café naïve', '\\\\w+', 'X'), \
         size(regexp_extract_all('a1 b٢ c3', '\\\\d', 0)), \
         size(split('a b\u{a0}c', '\\\\s')), 'café' rlike '^\\\\w+$', \
         regexp_replace('a.b*c', '\\\\Q.b*\\\\E', '-'), regexp_replace('x[1]y', '\\\\Q[1]\\\\E', ''), \
         regexp_replace('Hello, World! 123', '\\\\p{Punct}', ''), \
         regexp_extract('Über ABC', '(\\\\p{Upper}+)', 1), regexp_replace('12-ab', '[^\\\\d]', ''), \
         regexp_replace('é1', '\\\\W', '?'), regexp_replace('a]b', '[]]', '|')",
        &[
            "caf",
            "Xé XïX",
            "2",
            "2",
            "false",
            "a-c",
            "xy",
            "Hello World 123",
            "ABC",
            "12",
            "?1",
            "a|b",
        ],
    )
    .await;
}
