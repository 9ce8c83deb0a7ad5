use crate::test_util::{engine, error, lines, open};

/// The one value of a one-row, one-column query.
async fn value(sql: &str) -> String {
    let engine = engine().await;
    let session = open(&engine);
    let lines = lines(&engine, &session, sql).await;
    assert_eq!(lines.len(), 5, "{sql}: {lines:?}");
    lines[3].trim_matches(|c| c == '|' || c == ' ').to_owned()
}

#[tokio::test]
async fn array_subscripts_count_from_zero_as_in_hive() {
    assert_eq!(value("SELECT split('a,b,c', ',')[0]").await, "a");
    assert_eq!(value("SELECT array(10, 20, 30)[2]").await, "30");
    // Past either end: NULL, as Hive answers (DataFusion would count -1 from the end).
    assert_eq!(value("SELECT array(10, 20, 30)[3] IS NULL").await, "true");
    assert_eq!(value("SELECT array(10, 20, 30)[-1] IS NULL").await, "true");
    // An index computed per row.
    assert_eq!(
        value("SELECT sum(array(10, 20, 30)[i]) FROM (VALUES (0), (2), (-1)) t(i)").await,
        "40"
    );
    // Map keys and struct fields are not indexes.
    assert_eq!(value("SELECT map(['a', 'b'], [1, 2])['b']").await, "2");
    assert_eq!(value("SELECT named_struct('x', 5)['x']").await, "5");
}

#[tokio::test]
async fn a_field_is_named_with_a_dot_after_any_struct_value_as_in_spark() {
    // After a function's result, as Spark reads `from_json(...).a`.
    assert_eq!(
        value(r#"SELECT from_json('{"a": 7, "b": "x"}', 'a INT, b STRING').b"#).await,
        "x"
    );
    assert_eq!(
        value("SELECT named_struct('a', 1, 'b', 2).a + 1").await,
        "2"
    );
    // After a map's entry and an array's element (counted from 0), and twice over.
    assert_eq!(
        value("SELECT map('k', named_struct('n', named_struct('m', 5)))['k'].n.m").await,
        "5"
    );
    assert_eq!(
        value("SELECT array(named_struct('a', 1), named_struct('a', 2))[1].a").await,
        "2"
    );
    // After a column's name, the dot stays DataFusion's: the column's field.
    assert_eq!(
        value("SELECT s.a FROM (SELECT named_struct('a', 3) AS s) t").await,
        "3"
    );
}

#[tokio::test]
async fn rlike_and_regexp_match_anywhere() {
    assert_eq!(value("SELECT 'foobar' RLIKE 'o+b'").await, "true");
    assert_eq!(value("SELECT 'foobar' REGEXP '^bar'").await, "false");
    assert_eq!(value("SELECT 'foobar' NOT RLIKE '^f'").await, "false");
    assert_eq!(
        value("SELECT count(*) FROM tpch.nation WHERE n_name RLIKE '^(CHINA|JAPAN)$'").await,
        "2"
    );
    // MOROCCO alone has neither.
    assert_eq!(
        value("SELECT min(n_name) FROM tpch.nation WHERE NOT n_name RLIKE 'A' AND n_name NOT REGEXP 'E'").await,
        "MOROCCO"
    );
    assert_eq!(
        value("SELECT CAST(NULL AS STRING) RLIKE 'x' IS NULL").await,
        "true"
    );
    // In EXPLAIN too.
    let engine = engine().await;
    let session = open(&engine);
    let plan = lines(
        &engine,
        &session,
        "EXPLAIN SELECT n_name RLIKE '[AB]+' FROM tpch.nation",
    )
    .await
    .join("\n");
    // regexp_like, Java's regexes' (hive_functions::java_regex).
    assert!(plan.contains("regexp_like("), "{plan}");
    let bad = error(&engine, &session, "SELECT 'a' RLIKE '('").await;
    assert!(bad.to_string().contains("regex"), "{bad}");
}

/// The rows of a query, each as its values joined by `,` (NULL as empty).
async fn rows(
    engine: &crate::engine::Engine,
    session: &crate::session::Session,
    sql: &str,
) -> Vec<String> {
    let lines = lines(engine, session, sql).await;
    lines[3..lines.len() - 1]
        .iter()
        .map(|line| joined_cells(line))
        .collect()
}

/// A table line's cells joined by `,`.
fn joined_cells(line: &str) -> String {
    line.trim_matches('|')
        .split('|')
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(",")
}

#[tokio::test]
async fn explode_and_lateral_view_give_a_row_per_element() {
    let engine = engine().await;
    let session = open(&engine);
    lines(
        &engine,
        &session,
        "CREATE TABLE tags AS SELECT * FROM (VALUES (1, 'a,b'), (2, 'c'), (3, CAST(NULL AS STRING)), (4, '')) t(id, s)",
    )
    .await;
    // No row for a NULL array; one for '' (split gives ['']), as in Hive.
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT id, tag FROM tags LATERAL VIEW explode(split(s, ',')) v AS tag ORDER BY id, tag"
        )
        .await,
        ["1,a", "1,b", "2,c", "4,"]
    );
    // The view's name qualifies its column; the table's alias and a database name work.
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT t.id, v.tag FROM default.tags t LATERAL VIEW explode(split(t.s, ',')) v AS tag \
             WHERE v.tag <> 'b' ORDER BY v.tag"
        )
        .await,
        ["4,", "1,a", "2,c"]
    );
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT tag, count(*) FROM default.tags LATERAL VIEW explode(split(s, ',')) v AS tag \
             GROUP BY tag ORDER BY tag"
        )
        .await,
        [",1", "a,1", "b,1", "c,1"]
    );
    // Two views: their product.
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT x, y FROM tags LATERAL VIEW explode(array(1, 2)) a AS x \
             LATERAL VIEW explode(array(10, 20)) b AS y WHERE id = 1 ORDER BY x, y"
        )
        .await,
        ["1,10", "1,20", "2,10", "2,20"]
    );
    // In a select list: named col, as Hive names it.
    let exploded = lines(&engine, &session, "SELECT explode(array(1, 2))").await;
    assert_eq!(exploded[1], "| col |");
    assert_eq!(exploded.len(), 6, "{exploded:?}");
    // Of a map: Hive's key and value, a row per entry.
    let exploded = lines(
        &engine,
        &session,
        "SELECT explode(map('a', 1, 'b', 2)) ORDER BY key",
    )
    .await;
    assert_eq!(exploded[1].replace(' ', ""), "|key|value|");
    assert_eq!(exploded[3].replace(' ', ""), "|a|1|");
    assert_eq!(exploded[4].replace(' ', ""), "|b|2|");
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT id, explode(str_to_map(concat('k=', s), ',', '=')) FROM tags WHERE id = 1"
        )
        .await,
        ["1,k,a", "1,b,"]
    );
    // A statement that fails either way reports the failure of arrays.
    let message = error(&engine, &session, "SELECT explode(1)")
        .await
        .to_string();
    assert!(!message.contains("map_keys"), "{message}");
    // posexplode: Hive's pos (from 0) and val.
    let exploded = lines(&engine, &session, "SELECT posexplode(array('a', 'b'))").await;
    assert_eq!(exploded[1].replace(' ', ""), "|pos|val|");
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT id, posexplode(split(s, ',')) FROM tags WHERE id IN (1, 3) ORDER BY id, pos"
        )
        .await,
        ["1,0,a", "1,1,b"]
    );

    // OUTER keeps a row, of NULLs, for a NULL array.
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT id, tag FROM tags LATERAL VIEW OUTER explode(split(s, ',')) v AS tag ORDER BY id, tag"
        )
        .await,
        ["1,a", "1,b", "2,c", "3,", "4,"]
    );
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT id, pos, tag FROM tags LATERAL VIEW posexplode(split(s, ',')) v AS pos, tag \
             WHERE id = 1 ORDER BY pos"
        )
        .await,
        ["1,0,a", "1,1,b"]
    );
    // The position is an INT, as Spark's.
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT typeof(pos), typeof(p) FROM tags LATERAL VIEW posexplode(split(s, ',')) v \
             AS pos, tag, LATERAL VIEW OUTER posexplode(array(1)) w AS p, e WHERE id = 2"
        )
        .await,
        ["int,int"]
    );
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT typeof(pos) FROM (SELECT posexplode(array(7)))"
        )
        .await,
        ["int"]
    );
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT id, k, val FROM tags LATERAL VIEW explode(map(['x', 'y'], [id, id * 10])) m AS k, val \
             WHERE id = 2 ORDER BY k"
        )
        .await,
        ["2,x,2", "2,y,20"]
    );
    for (sql, refusal) in [
        (
            "SELECT id FROM tags LATERAL VIEW my_udtf(s) v AS a",
            "LATERAL VIEW my_udtf(",
        ),
        (
            "SELECT * FROM tags LATERAL VIEW explode(split(s, ',')) v AS a, b, c",
            "LATERAL VIEW explode(split(s, ',')) AS a, b, c is not supported",
        ),
    ] {
        let refused = error(&engine, &session, sql).await.to_string();
        assert!(refused.contains(refusal), "{sql}: {refused}");
        assert!(refused.contains("unnest(array) AS column"), "{refused}");
    }
}

#[tokio::test]
async fn lateral_view_over_a_join_explodes_the_joined_rows() {
    let engine = engine().await;
    let session = open(&engine);
    for sql in [
        "CREATE TABLE tags AS SELECT * FROM (VALUES (1, 'a,b'), (2, 'c'), (3, CAST(NULL AS STRING)), (4, '')) t(id, s)",
        "CREATE TABLE people AS SELECT * FROM (VALUES (1, 'ann'), (2, 'bob'), (3, 'cy'), (5, 'dan')) t(id, name)",
    ] {
        lines(&engine, &session, sql).await;
    }
    let query = |sql: &'static str| {
        let engine = &engine;
        let session = &session;
        async move { rows(engine, session, sql).await }
    };
    // Both tables have `id`; the view reads the joined table's column.
    let joined = ["ann,a", "ann,b", "bob,c"];
    assert_eq!(
        query(
            "SELECT p.name, v.tag FROM people p JOIN tags t ON p.id = t.id \
             LATERAL VIEW explode(split(t.s, ',')) v AS tag ORDER BY p.name, v.tag"
        )
        .await,
        joined
    );
    // A NULL array (cy's) or no match (dan) gives no row; with OUTER, one of NULLs.
    assert_eq!(
        query(
            "SELECT p.name, tag FROM people p LEFT JOIN tags t ON p.id = t.id \
             LATERAL VIEW explode(split(t.s, ',')) v AS tag ORDER BY p.name, tag"
        )
        .await,
        joined
    );
    assert_eq!(
        query(
            "SELECT p.name, tag FROM people p LEFT JOIN tags t ON p.id = t.id \
             LATERAL VIEW OUTER explode(split(t.s, ',')) v AS tag ORDER BY p.name, tag"
        )
        .await,
        ["ann,a", "ann,b", "bob,c", "cy,", "dan,"]
    );
    // The preserved side exploded; a subquery joined; views chained, the second reading the
    // first's column.
    assert_eq!(
        query(
            "SELECT t.id, tag, q.name FROM tags t LEFT JOIN (SELECT * FROM people) q ON q.id = t.id \
             LATERAL VIEW explode(split(t.s, ',')) v AS tag WHERE t.id <> 3 ORDER BY t.id, tag"
        )
        .await,
        ["1,a,ann", "1,b,ann", "2,c,bob", "4,,"]
    );
    assert_eq!(
        query(
            "SELECT p.name, y FROM people p, tags t LATERAL VIEW explode(split(t.s, ',')) v AS tag \
             LATERAL VIEW explode(array(tag, upper(v.tag))) w AS y WHERE p.id = t.id AND p.id = 1 \
             ORDER BY y"
        )
        .await,
        ["ann,A", "ann,B", "ann,a", "ann,b"]
    );
    for (sql, refusal) in [
        (
            "SELECT * FROM people p JOIN tags t ON p.id = t.id LATERAL VIEW explode(split(s, ',')) v AS tag",
            "the column s without its table's name",
        ),
        (
            "SELECT * FROM people p JOIN tags t ON p.id = t.id LATERAL VIEW explode(array(p.name, t.s)) v AS x",
            "several of its tables",
        ),
        (
            "SELECT * FROM people p LEFT JOIN tags t ON p.id = t.id LATERAL VIEW explode(array(t.s)) v AS x",
            "not NULL where an outer join",
        ),
    ] {
        let refused = error(&engine, &session, sql).await.to_string();
        assert!(refused.contains(refusal), "{sql}: {refused}");
    }
}

#[tokio::test]
async fn unnamed_result_columns_are_named_by_their_sql_as_spark_names_them() {
    let engine = engine().await;
    let session = open(&engine);
    let header = |sql: &'static str| {
        let engine = &engine;
        let session = &session;
        // The header line, its padding squeezed.
        async move {
            lines(engine, session, sql).await[1]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        }
    };
    assert_eq!(
        header("SELECT 1 + 1, 1, 'text', upper(n_name), n_name, count(*) FROM tpch.nation GROUP BY n_name LIMIT 1").await,
        "| 1 + 1 | 1 | text | upper(n_name) | n_name | count(*) |"
    );
    // Names given are kept; a union is named by its first query.
    assert_eq!(
        header("SELECT 2 * 3 AS six UNION ALL SELECT 7").await,
        "| six |"
    );
    assert_eq!(header("SELECT 2 * 3 UNION ALL SELECT 7").await, "| 2 * 3 |");
    // Two expressions DataFusion would print alike (the cast is not in its name).
    assert_eq!(
        header("SELECT CAST(1 AS STRING), 1").await,
        "| CAST(1 AS STRING) | 1 |"
    );
    // ORDER BY and GROUP BY still find the expressions they repeat.
    let grouped = lines(
        &engine,
        &session,
        "SELECT n_regionkey % 2, count(*) FROM tpch.nation GROUP BY n_regionkey % 2 ORDER BY n_regionkey % 2",
    )
    .await;
    assert_eq!(
        grouped[1].split_whitespace().collect::<Vec<_>>().join(" "),
        "| n_regionkey % 2 | count(*) |"
    );
    assert_eq!(
        grouped[3..5],
        [
            "| 0               | 15       |",
            "| 1               | 10       |"
        ]
    );
    // A table or view made from a query takes the same names.
    lines(
        &engine,
        &session,
        "CREATE VIEW named AS SELECT 1 + 1, upper('a')",
    )
    .await;
    assert_eq!(
        header("SELECT * FROM named").await,
        "| 1 + 1 | upper('a') |"
    );
    // A subquery's columns keep DataFusion's names, which the outer query may use.
    assert_eq!(
        header("SELECT `count(*)` AS n FROM (SELECT count(*) FROM tpch.region)").await,
        "| n |"
    );
}

#[tokio::test]
async fn cast_is_null_for_what_does_not_convert_as_in_hive() {
    assert_eq!(value("SELECT CAST('abc' AS INT) IS NULL").await, "true");
    assert_eq!(
        value("SELECT CAST('2024-13-01' AS DATE) IS NULL").await,
        "true"
    );
    assert_eq!(value("SELECT CAST('42' AS INT) + 1").await, "43");
    assert_eq!(
        value("SELECT sum(CAST(s AS INT)) FROM (VALUES ('1'), ('x'), ('2')) t(s)").await,
        "3"
    );
    // A decimal string is truncated, as in Hive; a number out of range wraps.
    assert_eq!(
        value(
            "SELECT concat_ws(',', CAST('1.5' AS INT), CAST('-1.9' AS INT), CAST(' 2 ' AS INT), \
             CAST('1.5' AS TINYINT), CAST('1.5' AS BIGINT), CAST('1e2' AS INT) IS NULL, \
             CAST('300' AS TINYINT) IS NULL, CAST('3000000000' AS INT) IS NULL)"
        )
        .await,
        "1,-1,2,1,1,true,true,true"
    );
    assert_eq!(
        value(
            "SELECT concat_ws(',', CAST(300 AS TINYINT), CAST(-129 AS TINYINT), \
             CAST(70000 AS SMALLINT), CAST(3000000000 AS INT), CAST(CAST(1.9 AS DECIMAL(2,1)) AS INT), \
             CAST(CAST(300.5 AS DECIMAL(4,1)) AS TINYINT), CAST(1e10 AS INT), CAST(-1.9 AS INT), \
             CAST(42 AS BIGINT))"
        )
        .await,
        "44,127,4464,-1294967296,1,44,2147483647,-1,42"
    );
    // `::` is DataFusion's own cast, and keeps failing.
    let engine = engine().await;
    let session = open(&engine);
    let strict = error(&engine, &session, "SELECT 'abc'::INT").await;
    assert!(strict.to_string().contains("Cannot cast"), "{strict}");
    // Over a column, and under the name the query gives.
    assert_eq!(
        lines(
            &engine,
            &session,
            "SELECT CAST(s AS TINYINT) AS v FROM (VALUES ('1.5'), ('x'), ('300'), ('-7')) t(s)"
        )
        .await[1..7],
        ["| v  |", "+----+", "| 1  |", "|    |", "|    |", "| -7 |"]
    );
}

#[tokio::test]
async fn string_literals_take_hives_backslash_escapes() {
    assert_eq!(value(r"SELECT split('a|b', '\\|')[1]").await, "b");
    assert_eq!(
        value(r"SELECT regexp_extract('ab12cd', '(\\d+)', 1)").await,
        "12"
    );
    // A tab, a backslash, and a q whose backslash is dropped.
    assert_eq!(
        value(r"SELECT length('a\tb') * 100 + length('\\') * 10 + length('\q')").await,
        "311"
    );
    // LIKE's escapes stay escapes: the underscore is literal.
    assert_eq!(
        value(r"SELECT 'a_b' LIKE 'a\\_b' AND NOT 'axb' LIKE 'a\\_b'").await,
        "true"
    );
    // Hive's default field delimiter (Ctrl-A) written in octal, and a UTF-16 escape.
    assert_eq!(
        value(r"SELECT ascii('\001') * 100 + length('k\001v') * 10 + length('\u00e9')").await,
        "131"
    );
}

#[tokio::test]
async fn a_quote_escaped_with_a_backslash_is_a_quote_as_in_hive() {
    assert_eq!(value(r"SELECT 'it\'s'").await, "it's");
    assert_eq!(value(r"SELECT concat('\'', 'a', '''')").await, "'a'");
    // An escaped backslash before the closing quote leaves the quote closing.
    assert_eq!(value(r"SELECT length('a\\') + length('\\\'')").await, "4");
    let engine = engine().await;
    let session = open(&engine);
    // A quote in a comment or an identifier opens no literal.
    assert_eq!(
        lines(
            &engine,
            &session,
            "SELECT 'x\\'y' AS \"it's\" -- it's\n, /* it's */ 'z' AS w"
        )
        .await[3],
        "| x'y  | z |"
    );
}

#[test]
fn rewrite_text_turn_backslash_quotes_into_doubled_quotes() {
    use super::rewrite_text;
    assert_eq!(rewrite_text(r"SELECT 'a\'b'"), "SELECT 'a''b'");
    assert_eq!(
        rewrite_text(r"SELECT 'a\\', 'b\'c'"),
        r"SELECT 'a\\', 'b''c'"
    );
    assert_eq!(rewrite_text(r"SELECT 'a''\'b'"), "SELECT 'a''''b'");
    // Outside a literal, in a comment or a string in the other quotes, a backslash before
    // a quote stays.
    assert_eq!(
        rewrite_text("SELECT \"x\\'\" -- \\'\n, 'a\\''"),
        "SELECT \"x\\'\" -- \\'\n, 'a'''"
    );
    assert_eq!(
        rewrite_text(r#"SELECT "a\"b", "c\\", 'd\"' -- \""#),
        r#"SELECT "a""b", "c\\", 'd\"' -- \""#
    );
    assert_eq!(rewrite_text(r#"SELECT `a\"`"#), r#"SELECT `a\"`"#);
    assert_eq!(rewrite_text(r"SELECT '\d'"), r"SELECT '\d'");
    assert_eq!(
        rewrite_text("SELECT a DIV b, 'a div b', t.div, divide, \"div\" FROM t -- div"),
        "SELECT a // b, 'a div b', t.div, divide, \"div\" FROM t -- div"
    );
    assert_eq!(
        rewrite_text("SELECT current_user(), CURRENT_USER ( ), current_user, 'current_user()'"),
        "SELECT current_user, current_user, current_user, 'current_user()'"
    );
    // Spark's other names, called; a column named `user` stays one.
    assert_eq!(
        rewrite_text("SELECT user(), session_user(), user, t.user FROM t"),
        "SELECT current_user, current_user, user, t.user FROM t"
    );
}

#[test]
fn hive_unescape_follows_hives_rules() {
    use super::hive_unescape;
    assert_eq!(hive_unescape(r"\\d+"), r"\d+");
    assert_eq!(hive_unescape(r"a\tb\nc"), "a\tb\nc");
    assert_eq!(hive_unescape(r"\%\_"), r"\%\_");
    assert_eq!(hive_unescape(r"\d\q"), "dq");
    assert_eq!(hive_unescape(r"end\"), r"end\");
    // Octal and UTF-16 escapes: Hive's default field delimiter, and a written-out é.
    assert_eq!(hive_unescape(r"a\001b"), "a\u{1}b");
    assert_eq!(hive_unescape(r"\177\0"), "\u{7f}\0");
    assert_eq!(hive_unescape(r"caf\u00e9"), "caf\u{e9}");
    // Not escapes of those kinds: \2 is out of Hive's octal range, \u needs four hex digits.
    assert_eq!(hive_unescape(r"\200"), "200");
    assert_eq!(hive_unescape(r"\u00g1"), "u00g1");
    assert_eq!(hive_unescape(r"\01"), "\u{0}1");
}

#[tokio::test]
async fn group_by_modifiers_and_sort_by_mean_what_they_mean_in_hive() {
    let engine = engine().await;
    let session = open(&engine);
    // WITH ROLLUP adds the grand total (DataFusion alone would drop the modifier).
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT n_regionkey, count(*) FROM tpch.nation WHERE n_regionkey < 2 \
             GROUP BY n_regionkey WITH ROLLUP ORDER BY n_regionkey NULLS LAST"
        )
        .await,
        ["0,5", "1,5", ",10"]
    );
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT n_regionkey, n_nationkey % 2, count(*) FROM tpch.nation WHERE n_regionkey < 1 \
             GROUP BY n_regionkey, n_nationkey % 2 WITH CUBE ORDER BY 1 NULLS LAST, 2 NULLS LAST"
        )
        .await,
        ["0,0,3", "0,1,2", "0,,5", ",0,3", ",1,2", ",,5"]
    );
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT n_regionkey, count(*) FROM tpch.nation WHERE n_regionkey < 2 \
             GROUP BY n_regionkey GROUPING SETS ((n_regionkey), ()) ORDER BY 1 NULLS LAST"
        )
        .await,
        ["0,5", "1,5", ",10"]
    );
    // SORT BY and CLUSTER BY order; DISTRIBUTE BY alone is accepted.
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT n_name FROM tpch.nation DISTRIBUTE BY n_regionkey SORT BY n_name DESC LIMIT 2"
        )
        .await,
        ["VIETNAM", "UNITED STATES"]
    );
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT n_name FROM tpch.nation CLUSTER BY n_name LIMIT 2"
        )
        .await,
        ["ALGERIA", "ARGENTINA"]
    );
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT count(*) FROM (SELECT n_name FROM tpch.nation DISTRIBUTE BY n_regionkey)"
        )
        .await,
        ["25"]
    );
}

#[tokio::test]
async fn division_gives_doubles_and_null_for_zero_as_in_hive() {
    let engine = engine().await;
    let session = open(&engine);
    assert_eq!(value("SELECT 1 / 2").await, "0.5");
    // The ratio of two counts, which integer division would make 0.
    assert_eq!(
        value("SELECT count(CASE WHEN n_regionkey = 0 THEN 1 END) / count(*) FROM tpch.nation")
            .await,
        "0.2"
    );
    assert_eq!(
        value("SELECT 1 / 0 IS NULL AND 1.5 / 0 IS NULL").await,
        "true"
    );
    // Decimals stay decimal.
    let lines = lines(
        &engine,
        &session,
        "SELECT arrow_typeof(CAST(1 AS DECIMAL(10,2)) / 3)",
    )
    .await;
    assert!(lines[3].contains("Decimal128"), "{lines:?}");
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT n_regionkey, sum(n_nationkey) / count(*) FROM tpch.nation GROUP BY n_regionkey \
             HAVING sum(n_nationkey) / count(*) > 12 ORDER BY 1"
        )
        .await,
        ["2,13.6", "3,15.4"]
    );
}

#[tokio::test]
async fn a_remainder_by_zero_is_null_as_in_hive() {
    assert_eq!(
        value("SELECT concat_ws(',', 7 % 3, -7 % 3, mod(-7, 3), 7.5 % 2)").await,
        "1,-1,-1,1.5"
    );
    // DataFusion failed the whole query for an integer, and gave NaN for a double.
    assert_eq!(
        value("SELECT 5 % 0 IS NULL AND 5.5 % 0 IS NULL AND mod(5, 0) IS NULL").await,
        "true"
    );
    assert_eq!(
        value("SELECT count(*) FROM tpch.nation WHERE (n_nationkey % (n_regionkey - 1)) IS NULL")
            .await,
        "5"
    );
}

#[tokio::test]
async fn div_gives_the_integer_part_as_a_bigint_and_null_for_zero_as_in_hive() {
    assert_eq!(
        value("SELECT concat_ws(',', 7 DIV 2, -7 DIV 2, 7 div 0 IS NULL, NULL DIV 1 IS NULL)")
            .await,
        "3,-3,true,true"
    );
    // Other numbers divide before the fraction is dropped.
    assert_eq!(
        value(
            "SELECT concat_ws(',', 7.9 DIV 0.5, CAST(7.5 AS DECIMAL(3,1)) DIV 2, -7.5 DIV 2, \
             1.5 DIV 0.0 IS NULL)"
        )
        .await,
        "15,3,-3,true"
    );
    assert_eq!(
        value("SELECT arrow_typeof(CAST(7 AS TINYINT) DIV CAST(2 AS TINYINT))").await,
        "Int64"
    );
    assert_eq!(
        value("SELECT sum(n_nationkey DIV 5) FROM tpch.nation").await,
        "50"
    );
}

#[tokio::test]
async fn count_distinct_of_several_columns_counts_their_combinations() {
    // (1, x) twice, (1, y); rows with a NULL are not counted, as in Hive.
    assert_eq!(
        value(
            "SELECT count(DISTINCT a, b) FROM \
             (VALUES (1, 'x'), (1, 'x'), (1, 'y'), (NULL, 'z'), (2, NULL)) t(a, b)"
        )
        .await,
        "2"
    );
    assert_eq!(
        value("SELECT count(DISTINCT n_regionkey, n_nationkey % 2) FROM tpch.nation").await,
        "10"
    );
}

#[tokio::test]
async fn double_quoted_text_is_a_string_as_in_hive() {
    assert_eq!(value(r#"SELECT "abc""#).await, "abc");
    assert_eq!(value(r#"SELECT concat("a", 'b', "c")"#).await, "abc");
    assert_eq!(
        value(r#"SELECT count(*) FROM tpch.nation WHERE n_name = "CHINA" OR n_name IN ("JAPAN", "PERU")"#)
            .await,
        "3"
    );
    // Hive's escapes, as in single quotes; a quote inside is `\"` or `""`.
    assert_eq!(value(r#"SELECT "say \"hi\"""#).await, r#"say "hi""#);
    assert_eq!(value(r#"SELECT "a""b""#).await, r#"a"b"#);
    assert_eq!(value(r#"SELECT "it's""#).await, "it's");
    assert_eq!(value(r#"SELECT length("a\\b") + length("\t")"#).await, "4");
    assert_eq!(value(r#"SELECT split("a|b", "\\|")[1]"#).await, "b");
    // Wherever a value goes: a map key, a typed literal, LIKE, a date pattern.
    assert_eq!(value(r#"SELECT map(['k'], [7])["k"]"#).await, "7");
    assert_eq!(value(r#"SELECT DATE "2024-01-02""#).await, "2024-01-02");
    assert_eq!(value(r#"SELECT "abc" LIKE "a%""#).await, "true");
    assert_eq!(
        value(r#"SELECT date_format('2024-03-05', "yyyy/MM")"#).await,
        "2024/03"
    );
    assert_eq!(value(r#"SELECT "div""#).await, "div");
    // Backquotes still name a column; a double-quoted alias is still a name.
    assert_eq!(
        value("SELECT `n_name` FROM tpch.nation WHERE `n_nationkey` = 0").await,
        "ALGERIA"
    );
    let engine = engine().await;
    let session = open(&engine);
    let header = |sql| {
        let engine = &engine;
        let session = &session;
        async move { lines(engine, session, sql).await[1].replace(' ', "") }
    };
    assert_eq!(
        header(r#"SELECT "x", "a\tb" AS "named""#).await,
        "|x|named|"
    );
    assert_eq!(
        header(r#"SELECT n FROM (SELECT "v" AS n) AS "q""#).await,
        "|n|"
    );
}

#[tokio::test]
async fn cast_to_varchar_keeps_as_many_characters_as_hive() {
    assert_eq!(value("SELECT CAST('abcdef' AS VARCHAR(3))").await, "abc");
    assert_eq!(value("SELECT CAST(12345 AS VARCHAR(2))").await, "12");
    assert_eq!(value("SELECT CAST('ab' AS VARCHAR(5))").await, "ab");
    assert_eq!(
        value("SELECT length(CAST('é€xyz' AS VARCHAR(2)))").await,
        "2"
    );
    assert_eq!(
        value("SELECT CAST(NULL AS VARCHAR(2)) IS NULL").await,
        "true"
    );
    // Without a length, and DataFusion's `::`, any string.
    assert_eq!(value("SELECT CAST('abcdef' AS VARCHAR)").await, "abcdef");
    assert_eq!(value("SELECT 'abcdef'::VARCHAR(3)").await, "abcdef");
}

/// A query's column names, as a table's header line.
async fn header(
    engine: &crate::engine::Engine,
    session: &crate::session::Session,
    sql: &str,
) -> String {
    lines(engine, session, sql).await[1].replace(' ', "")
}

#[tokio::test]
async fn json_tuple_gives_the_keys_values_as_columns() {
    let engine = engine().await;
    let session = open(&engine);
    lines(
        &engine,
        &session,
        r#"CREATE TABLE docs AS SELECT * FROM (VALUES (1, '{"a": 1, "b": "x", "c": {"d": [1, 2]}}'), (2, '{"b": null}'), (3, 'not json'), (4, CAST(NULL AS STRING)), (5, '[1]')) t(id, js)"#,
    )
    .await;
    // One row per row: strings, nested values as JSON text, NULL for a missing key, a JSON
    // null, a text that is not a JSON object.
    let sql = "SELECT d.id, v.a, v.b, v.c FROM docs d \
               LATERAL VIEW json_tuple(d.js, 'a', 'b', 'c') v AS a, b, c ORDER BY d.id";
    assert_eq!(
        rows(&engine, &session, sql).await,
        [r#"1,1,x,{"d":[1,2]}"#, "2,,,", "3,,,", "4,,,", "5,,,"]
    );
    // In a select list, with Hive's alias list or its names c0, c1.
    let sql = "SELECT json_tuple(js, 'b', 'a') AS (b, a) FROM docs WHERE id = 1";
    assert_eq!(header(&engine, &session, sql).await, "|b|a|");
    assert_eq!(rows(&engine, &session, sql).await, ["x,1"]);
    let sql = "SELECT id, json_tuple(js, 'a', 'zz') FROM docs WHERE id = 1";
    assert_eq!(header(&engine, &session, sql).await, "|id|c0|c1|");
    assert_eq!(rows(&engine, &session, sql).await, ["1,1,"]);
    let message = error(
        &engine,
        &session,
        "SELECT json_tuple(js, 'a', 'b') AS (a) FROM docs",
    )
    .await
    .to_string();
    assert!(message.contains("json_tuple gives 2 columns"), "{message}");
    // Views chain: a nested object's keys from the first view's column.
    let sql = "SELECT d.id, w.d FROM docs d LATERAL VIEW json_tuple(d.js, 'c') v AS c \
               LATERAL VIEW json_tuple(v.c, 'd') w AS d WHERE d.id = 1";
    assert_eq!(rows(&engine, &session, sql).await, ["1,[1,2]"]);
    // The text is parsed once for all the keys: one json_tuple in the plan that runs.
    let plan = lines(
        &engine,
        &session,
        "EXPLAIN SELECT v.a, v.b FROM docs d LATERAL VIEW json_tuple(d.js, 'a', 'b') v AS a, b",
    )
    .await;
    let physical: String = plan
        .iter()
        .skip_while(|line| !line.contains("physical_plan"))
        .cloned()
        .collect();
    assert_eq!(physical.matches("json_tuple(").count(), 1, "{plan:#?}");
    // parse_url_tuple likewise, QUERY:k a parameter.
    let sql = "SELECT u.host, u.k, u.none FROM (SELECT 'http://a.com/p?k=1' AS url) t \
               LATERAL VIEW parse_url_tuple(t.url, 'HOST', 'QUERY:k', 'QUERY:z') u AS host, k, none";
    assert_eq!(rows(&engine, &session, sql).await, ["a.com,1,"]);
    let sql = "SELECT parse_url_tuple('nonsense', 'HOST')";
    assert_eq!(header(&engine, &session, sql).await, "|c0|");
    // Over a join: a row for every joined row, NULLs where the outer join found none.
    let sql = "SELECT p.n, v.a FROM (VALUES (1), (9)) p(n) LEFT JOIN docs d ON p.n = d.id \
               LATERAL VIEW json_tuple(d.js, 'a') v AS a ORDER BY p.n";
    assert_eq!(rows(&engine, &session, sql).await, ["1,1", "9,"]);
    // stack's rows do not come from its table: not over the side an outer join fills.
    let message = error(
        &engine,
        &session,
        "SELECT p.n FROM (VALUES (1)) p(n) LEFT JOIN docs d ON p.n = d.id \
         LATERAL VIEW stack(2, d.id, d.id) s AS x",
    )
    .await
    .to_string();
    assert!(
        message.contains("LATERAL VIEW over a join of stack"),
        "{message}"
    );
}

#[tokio::test]
async fn stack_and_inline_give_rows_of_columns() {
    let engine = engine().await;
    let session = open(&engine);
    // stack: n rows, the values in order, NULL where they run out; named col0, col1.
    let sql = "SELECT stack(3, 'a', 1, 'b', 2, 'c')";
    assert_eq!(header(&engine, &session, sql).await, "|col0|col1|");
    assert_eq!(rows(&engine, &session, sql).await, ["a,1", "b,2", "c,"]);
    let sql = "SELECT k, v FROM (SELECT 1 AS id) t LATERAL VIEW stack(2, 'x', 10, 'y', 20) s AS k, v ORDER BY k";
    assert_eq!(rows(&engine, &session, sql).await, ["x,10", "y,20"]);
    let message = error(&engine, &session, "SELECT stack(0, 1)")
        .await
        .to_string();
    assert!(message.contains("positive integer constant"), "{message}");
    lines(
        &engine,
        &session,
        "CREATE TABLE orders AS SELECT * FROM (VALUES (1, array(named_struct('sku', 'a', 'qty', 2), named_struct('sku', 'b', 'qty', 1))), (2, CAST(NULL AS ARRAY<STRUCT<sku: STRING, qty: BIGINT>>))) t(id, items)",
    )
    .await;
    // inline: a row per struct, named by its fields or by the AS clause; none for a NULL
    // array, one of NULLs with OUTER.
    let sql = "SELECT inline(items) FROM orders WHERE id = 1";
    assert_eq!(header(&engine, &session, sql).await, "|sku|qty|");
    assert_eq!(rows(&engine, &session, sql).await, ["a,2", "b,1"]);
    let sql = "SELECT id, inline(items) AS (s, q) FROM orders ORDER BY s";
    assert_eq!(header(&engine, &session, sql).await, "|id|s|q|");
    assert_eq!(rows(&engine, &session, sql).await, ["1,a,2", "1,b,1"]);
    let sql = "SELECT o.id, i.s, i.q FROM orders o LATERAL VIEW OUTER inline(o.items) i AS s, q ORDER BY o.id, i.s";
    assert_eq!(
        rows(&engine, &session, sql).await,
        ["1,a,2", "1,b,1", "2,,"]
    );
    let sql = "SELECT count(*) FROM orders o LATERAL VIEW inline(o.items) i AS s, q";
    assert_eq!(rows(&engine, &session, sql).await, ["2"]);
    let message = error(
        &engine,
        &session,
        "SELECT s FROM orders LATERAL VIEW inline(items) i AS s",
    )
    .await
    .to_string();
    assert!(
        message.contains("inline's structs have 2 fields"),
        "{message}"
    );
}

#[tokio::test]
async fn generators_are_listed_and_refused_inside_expressions() {
    let engine = engine().await;
    let session = open(&engine);
    let listed = rows(&engine, &session, "SHOW FUNCTIONS LIKE '*e*'").await;
    for generator in ["explode", "posexplode", "inline", "json_tuple"] {
        assert!(
            listed.iter().any(|f| f == generator),
            "{generator}: {listed:?}"
        );
    }
    let described = rows(&engine, &session, "DESCRIBE FUNCTION stack").await;
    assert!(
        described[0].starts_with("stack(n, v1, v2, ...)"),
        "{described:?}"
    );
    let message = error(&engine, &session, "SELECT 1 + stack(1, 2)")
        .await
        .to_string();
    assert!(message.contains("stack is a generator"), "{message}");
}

#[tokio::test]
async fn explode_and_posexplode_take_hives_alias_list() {
    let engine = engine().await;
    let session = open(&engine);
    let sql = "SELECT explode(map('a', 1, 'b', 2)) AS (k, v) ORDER BY k";
    assert_eq!(header(&engine, &session, sql).await, "|k|v|");
    assert_eq!(rows(&engine, &session, sql).await, ["a,1", "b,2"]);
    let sql = "SELECT posexplode(array('x', 'y')) AS (p, e)";
    assert_eq!(header(&engine, &session, sql).await, "|p|e|");
    assert_eq!(rows(&engine, &session, sql).await, ["0,x", "1,y"]);
    let sql = "SELECT explode(array(1, 2)) AS (n)";
    assert_eq!(header(&engine, &session, sql).await, "|n|");
    let message = error(
        &engine,
        &session,
        "SELECT posexplode(array(1)) AS (a, b, c)",
    )
    .await
    .to_string();
    assert!(
        message.contains("posexplode gives two columns"),
        "{message}"
    );
}

#[tokio::test]
async fn struct_fields_are_named_as_spark_names_them() {
    let engine = engine().await;
    let session = open(&engine);
    // A value is colN (from 1), as in Hive and Spark; a column keeps its name, as in Spark.
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT s.col1, t.s.col2 FROM (SELECT struct(1, 'a') s) t"
        )
        .await,
        ["1,a"]
    );
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT s.a, s.b, s.col3, s.col4.col1 FROM (SELECT struct(a, t.b, a + 1, struct(2)) s \
             FROM (VALUES (1, 'x')) t(a, b)) u"
        )
        .await,
        ["1,x,2,2"]
    );
    let missing = error(&engine, &session, "SELECT struct(1).c0").await;
    assert!(missing.to_string().contains("c0"), "{missing}");
}

#[tokio::test]
async fn grouping_id_is_hives_and_sparks_bit_vector() {
    let engine = engine().await;
    let session = open(&engine);
    // Bit set = the column is not grouped, the first column the most significant bit.
    let sql = "SELECT a, b, GROUPING__ID, grouping_id(), grouping_id(b), count(*) \
               FROM (VALUES (1, 'x'), (1, 'y')) t(a, b) GROUP BY a, b WITH ROLLUP \
               ORDER BY grouping__id, b";
    assert_eq!(
        rows(&engine, &session, sql).await,
        ["1,x,0,0,0,1", "1,y,0,0,0,1", "1,,1,1,1,2", ",,3,3,1,2"]
    );
    assert_eq!(
        header(&engine, &session, sql).await,
        "|a|b|grouping__id|grouping_id()|grouping_id(b)|count(*)|"
    );
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT b, grouping__id FROM (VALUES (1, 'x')) t(a, b) GROUP BY a, b WITH CUBE \
             HAVING grouping__id = 2"
        )
        .await,
        ["x,2"]
    );
    // Hive's GROUPING SETS: `b`, listed and in no set, is always a set bit.
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT a, grouping__id FROM (VALUES (1, 'x')) t(a, b) GROUP BY a, b \
             GROUPING SETS ((a), ()) ORDER BY 2"
        )
        .await,
        ["1,1", ",3"]
    );
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT a, grouping_id(a, b) FROM (VALUES (1, 'x')) t(a, b) GROUP BY CUBE(a, b) \
             ORDER BY 2"
        )
        .await,
        ["1,0", "1,1", ",2", ",3"]
    );
}

#[tokio::test]
async fn unnamed_columns_named_alike_take_hives_names() {
    let engine = engine().await;
    let session = open(&engine);
    assert_eq!(
        header(&engine, &session, "SELECT NULL, NULL, 1, 1, 1 AS x").await,
        "|NULL|_c1|1|_c3|x|"
    );
    assert_eq!(
        header(
            &engine,
            &session,
            "SELECT n_name, n_name FROM tpch.nation LIMIT 1"
        )
        .await,
        "|n_name|_c1|"
    );
    lines(&engine, &session, "CREATE TABLE twice (a INT, b INT)").await;
    lines(&engine, &session, "INSERT INTO twice SELECT NULL, NULL").await;
    lines(&engine, &session, "INSERT INTO twice SELECT 1, 1").await;
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT a, b FROM twice ORDER BY a NULLS FIRST"
        )
        .await,
        [",", "1,1"]
    );
    lines(&engine, &session, "CREATE TABLE twice_copy AS SELECT 2, 2").await;
    assert_eq!(
        header(&engine, &session, "SELECT * FROM twice_copy").await,
        "|2|_c1|"
    );
}

#[tokio::test]
async fn a_lateral_view_over_a_subquery_without_a_name_explodes_its_rows() {
    let engine = engine().await;
    let session = open(&engine);
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT k, v FROM (SELECT map('x', 1, 'y', 2) m) LATERAL VIEW explode(m) t AS k, v \
             ORDER BY k"
        )
        .await,
        ["x,1", "y,2"]
    );
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT n, x FROM (SELECT 'a' AS n, array(1, 2) AS xs) LATERAL VIEW explode(xs) e AS x \
             ORDER BY x"
        )
        .await,
        ["a,1", "a,2"]
    );
}

#[tokio::test]
async fn a_double_or_timestamp_cast_to_an_integer_is_javas_long() {
    let engine = engine().await;
    let session = open(&engine);
    // A NULL stays NULL (it became INT's lowest value), the bounds hold, NaN is 0.
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT CAST(CAST(NULL AS DOUBLE) AS INT) IS NULL, CAST(1e20 AS BIGINT), \
             CAST(-1e20 AS INT), CAST(CAST('NaN' AS DOUBLE) AS INT), CAST(2.9D AS INT), \
             CAST(-2.9D AS SMALLINT)"
        )
        .await,
        ["true,9223372036854775807,-2147483648,0,2,-2"]
    );
    // A timestamp is its seconds since 1970, rounded down, as in Spark (not nanoseconds).
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT CAST(TIMESTAMP '2024-01-15 09:30:00' AS BIGINT), \
             CAST(TIMESTAMP '1969-12-31 23:59:59.5' AS BIGINT), \
             CAST(TIMESTAMP '2024-01-15 09:30:00' AS INT)"
        )
        .await,
        ["1705311000,-1,1705311000"]
    );
    // A date is no number and no boolean: NULL, as Spark's casts answer.
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT CAST(DATE '2024-05-17' AS INT) IS NULL, CAST(DATE '2024-05-17' AS BIGINT) \
             IS NULL, CAST(DATE '2024-05-17' AS DOUBLE) IS NULL, \
             CAST(DATE '2024-05-17' AS DECIMAL(10, 0)) IS NULL, \
             CAST(DATE '2024-05-17' AS BOOLEAN) IS NULL, typeof(CAST(DATE '2024-05-17' AS INT))"
        )
        .await,
        ["true,true,true,true,true,int"]
    );
    // A timestamp as a decimal is its seconds (rounded half up to the scale, NULL beyond
    // the precision), and as a boolean whether it is not 1970's start: Spark 4.3's answers.
    assert_eq!(
        rows(
            &engine,
            &session,
            "SELECT CAST(TIMESTAMP '2024-05-17 10:11:12.345678' AS DECIMAL(20, 6)), \
             CAST(TIMESTAMP '2024-05-17 10:11:12.345678' AS DECIMAL(12, 1)), \
             CAST(TIMESTAMP '2024-05-17 10:11:12.35' AS DECIMAL(12, 1)), \
             CAST(TIMESTAMP '1969-12-31 23:59:59.5' AS DECIMAL(10, 1)), \
             CAST(TIMESTAMP '2024-05-17 00:00:00' AS DECIMAL(5, 0)) IS NULL, \
             CAST(TIMESTAMP '1970-01-01 00:00:00' AS BOOLEAN), \
             CAST(TIMESTAMP '1970-01-01 00:00:00.000001' AS BOOLEAN)"
        )
        .await,
        ["1715940672.345678,1715940672.3,1715940672.4,-0.5,true,false,true"]
    );
}

/// The rows of `sql`, each as its values joined by a space.
async fn row_texts(sql: &str) -> Vec<String> {
    let engine = engine().await;
    let session = open(&engine);
    crate::test_util::value_rows(&engine, &session, sql)
        .await
        .into_iter()
        .map(|row| row.join(" "))
        .collect()
}

#[tokio::test]
async fn intersect_all_and_except_all_count_each_rows_copies_as_spark() {
    // Answers from Spark 4.3: the left side has (1, 'a') three times and (2, NULL) twice,
    // the right side each twice and once.
    let left = "SELECT x, y FROM (VALUES (1, 'a'), (1, 'a'), (1, 'a'), (2, NULL), (2, NULL), \
                (3, 'c')) l(x, y)";
    let right = "SELECT x, y FROM (VALUES (1, 'a'), (1, 'a'), (2, NULL), (4, 'd')) r(x, y)";
    assert_eq!(
        row_texts(&format!("{left} INTERSECT ALL {right} ORDER BY x")).await,
        ["1 a", "1 a", "2 NULL"]
    );
    assert_eq!(
        row_texts(&format!("{left} EXCEPT ALL {right} ORDER BY x")).await,
        ["1 a", "2 NULL", "3 c"]
    );
    // Without ALL each row once, as before.
    assert_eq!(
        row_texts(&format!("{left} INTERSECT {right} ORDER BY x")).await,
        ["1 a", "2 NULL"]
    );
    assert_eq!(
        row_texts(&format!("{left} EXCEPT {right} ORDER BY x")).await,
        ["3 c"]
    );
    // Chained, and inside a subquery.
    assert_eq!(
        row_texts(
            "SELECT x FROM (VALUES (1), (1), (2), (2), (2)) l(x) \
             INTERSECT ALL SELECT x FROM (VALUES (2), (2), (1), (3)) r(x) \
             EXCEPT ALL SELECT x FROM (VALUES (2)) s(x) ORDER BY x"
        )
        .await,
        ["1", "2"]
    );
    assert_eq!(
        row_texts(
            "SELECT count(*) FROM (SELECT x FROM (VALUES (1), (1), (1)) l(x) \
             EXCEPT ALL SELECT x FROM (VALUES (1)) r(x)) t"
        )
        .await,
        ["2"]
    );
}

#[tokio::test]
async fn intersect_all_of_a_table_with_itself_keeps_every_copy() {
    let engine = engine().await;
    let session = open(&engine);
    crate::test_util::run(
        &engine,
        &session,
        "CREATE TABLE copies AS SELECT * FROM (VALUES (1), (1), (2)) t(x)",
    )
    .await
    .unwrap();
    let rows = crate::test_util::value_rows(
        &engine,
        &session,
        "SELECT x FROM copies INTERSECT ALL SELECT x FROM copies ORDER BY x",
    )
    .await;
    assert_eq!(rows, [["1"], ["1"], ["2"]]);
    let rows = crate::test_util::value_rows(
        &engine,
        &session,
        "SELECT x FROM copies EXCEPT ALL (SELECT x FROM copies WHERE x = 1 LIMIT 1) ORDER BY x",
    )
    .await;
    assert_eq!(rows, [["1"], ["2"]]);
}

/// The names of the columns of `sql`'s result.
async fn column_names(sql: &str) -> Vec<String> {
    let engine = engine().await;
    let session = open(&engine);
    let batches = crate::test_util::run(&engine, &session, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql} failed: {e}"));
    batches[0]
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect()
}

const REGIONS: &str = "(SELECT emp_id, region, amount FROM (VALUES (1, 'north', 10), \
                       (1, 'south', 5), (2, 'north', 3), (1, 'north', 1)) t(emp_id, region, amount))";

#[tokio::test]
async fn pivot_groups_by_the_other_columns_as_spark() {
    // Answers and names from Spark 4.3.
    let sql = format!(
        "SELECT * FROM {REGIONS} PIVOT (sum(amount) FOR region IN ('north', 'south', 'west')) \
         ORDER BY emp_id"
    );
    assert_eq!(row_texts(&sql).await, ["1 11 5 NULL", "2 3 NULL NULL"]);
    assert_eq!(
        column_names(&sql).await,
        ["emp_id", "north", "south", "west"]
    );
    // Several aggregates: `value_alias`; a group without the value's rows is NULL, count too.
    let sql = format!(
        "SELECT * FROM {REGIONS} PIVOT (sum(amount) AS s, count(amount) AS c \
         FOR region IN ('north' AS n, 'south')) ORDER BY emp_id"
    );
    assert_eq!(row_texts(&sql).await, ["1 11 2 5 1", "2 3 1 NULL NULL"]);
    assert_eq!(
        column_names(&sql).await,
        ["emp_id", "n_s", "n_c", "south_s", "south_c"]
    );
    // The pivot table's alias; a NULL value matched as a value.
    assert_eq!(
        row_texts(&format!(
            "SELECT p.emp_id, p.n FROM {REGIONS} PIVOT (max(amount) AS m \
             FOR region IN ('north' AS n)) p ORDER BY p.emp_id"
        ))
        .await,
        ["1 10", "2 3"]
    );
    let sql = "SELECT * FROM (VALUES (1, NULL, 10), (1, 'a', 5)) t(id, region, amount) \
               PIVOT (sum(amount) FOR region IN (NULL, 'a'))";
    assert_eq!(row_texts(sql).await, ["1 10 5"]);
    assert_eq!(column_names(sql).await, ["id", "null", "a"]);
    // Nothing left to group by: one row.
    assert_eq!(
        row_texts(
            "SELECT * FROM (VALUES ('north', 10), ('south', 5)) t(region, amount) \
             PIVOT (sum(amount) FOR region IN ('north', 'west'))"
        )
        .await,
        ["10 NULL"]
    );
    // Two pivot columns, their values as tuples.
    let sql = "SELECT * FROM (VALUES (1, 'north', 10, 'x'), (1, 'south', 5, 'y')) \
               t(emp_id, region, amount, k) PIVOT (sum(amount) FOR (region, k) \
               IN (('north', 'x'), ('south', 'y') AS sy))";
    assert_eq!(row_texts(sql).await, ["1 10 5"]);
    assert_eq!(column_names(sql).await, ["emp_id", "{north, x}", "sy"]);
}

#[tokio::test]
async fn unpivot_turns_columns_into_rows_as_spark() {
    let table = "(VALUES (1, 10, NULL, 'x'), (2, NULL, NULL, 'y')) t(id, q1, q2, k)";
    // Rows whose value is NULL are left out, unless INCLUDE NULLS.
    let sql = format!("SELECT * FROM {table} UNPIVOT (v FOR quarter IN (q1, q2 AS second))");
    assert_eq!(row_texts(&sql).await, ["1 x q1 10"]);
    assert_eq!(column_names(&sql).await, ["id", "k", "quarter", "v"]);
    assert_eq!(
        row_texts(&format!(
            "SELECT * FROM {table} UNPIVOT INCLUDE NULLS (v FOR quarter IN (q1, q2)) \
             ORDER BY id, quarter"
        ))
        .await,
        ["1 x q1 10", "1 x q2 NULL", "2 y q1 NULL", "2 y q2 NULL"]
    );
    // Several values at once: a row is left out when all of them are NULL.
    let sql = "SELECT * FROM (VALUES (1, 10, NULL, 3, 4), (2, NULL, NULL, NULL, 5)) \
               t(id, a1, a2, b1, b2) UNPIVOT ((a, b) FOR n IN ((a1, b1), (a2, b2) AS two)) \
               ORDER BY id, n";
    assert_eq!(
        row_texts(sql).await,
        ["1 a1_b1 10 3", "1 two NULL 4", "2 two NULL 5"]
    );
    assert_eq!(column_names(sql).await, ["id", "n", "a", "b"]);
    // Columns of two types take their common one; the result can be aliased.
    assert_eq!(
        row_texts(
            "SELECT u.n, u.v FROM (VALUES (1, 10, 2.5D)) t(id, a, b) \
             UNPIVOT (v FOR n IN (a, b)) u ORDER BY u.n DESC"
        )
        .await,
        ["b 2.5", "a 10.0"]
    );
}

#[tokio::test]
async fn like_over_a_list_of_patterns_as_spark() {
    // Answers from Spark 4.3.
    assert_eq!(
        row_texts(
            "SELECT 'abc' LIKE ALL ('a%', '%c'), 'abc' LIKE ALL ('a%', '%x'), \
             'abc' LIKE ANY ('x%', NULL), 'abc' LIKE ALL ('a%', NULL), \
             'abc' NOT LIKE ANY ('a%', '%x'), 'abc' NOT LIKE ALL ('a%', '%x'), \
             'abc' NOT LIKE ALL ('x%', 'y%'), NULL LIKE ANY ('a%')"
        )
        .await,
        ["true false NULL NULL true false true NULL"]
    );
    assert_eq!(
        row_texts(
            "SELECT 'abc' LIKE SOME ('a%', '%x'), 'ABC' ILIKE ANY ('a%'), \
             'ABC' ILIKE ALL ('a%', '%C'), 'abc' NOT ILIKE ANY ('A%'), \
             likeany('abc', 'x%', '_b_'), likeall('abc', 'x%', '_b_')"
        )
        .await,
        ["true true true false true false"]
    );
    // Per row, in a WHERE clause.
    assert_eq!(
        row_texts(
            "SELECT s FROM (VALUES ('apple'), ('banana'), ('cherry')) t(s) \
             WHERE s LIKE ANY ('a%', '%rr%') ORDER BY s"
        )
        .await,
        ["apple", "cherry"]
    );
}

#[tokio::test]
async fn interval_literals_over_a_range_of_fields_as_spark() {
    // Answers from Spark 4.3.
    assert_eq!(
        row_texts(
            "SELECT TIMESTAMP'2024-01-01 10:00:00' + INTERVAL '1 12:30' DAY TO MINUTE, \
             TIMESTAMP'2024-01-01 10:00:00' + INTERVAL '1 12' DAY TO HOUR, \
             TIMESTAMP'2024-01-01 10:00:00' - INTERVAL '1 02:03:04.5' DAY TO SECOND"
        )
        .await,
        ["2024-01-02T22:30:00 2024-01-02T22:00:00 2023-12-31T07:56:55.500"]
    );
    assert_eq!(
        row_texts(
            "SELECT TIMESTAMP'2024-01-01 10:00:00' + INTERVAL '02:30' HOUR TO MINUTE, \
             TIMESTAMP'2024-01-01 10:00:00' + INTERVAL '-02:30:15' HOUR TO SECOND, \
             TIMESTAMP'2024-01-01 10:00:00' + INTERVAL '10:15.25' MINUTE TO SECOND"
        )
        .await,
        ["2024-01-01T12:30:00 2024-01-01T07:29:45 2024-01-01T10:10:15.250"]
    );
    assert_eq!(
        row_texts(
            "SELECT DATE'2024-01-31' + INTERVAL '1-2' YEAR TO MONTH, \
             DATE'2024-01-31' - INTERVAL '-1-2' YEAR TO MONTH"
        )
        .await,
        ["2025-03-31 2025-03-31"]
    );
}

#[tokio::test]
async fn a_structs_field_is_named_by_the_field_as_spark_names_it() {
    assert_eq!(
        column_names(
            "SELECT s.a, t.s.b, s.b.c, x FROM \
             (SELECT named_struct('a', 1, 'b', named_struct('c', 2)) AS s, 3 AS x) t"
        )
        .await,
        ["a", "b", "c", "x"]
    );
    // `table.column` stays the column's name, a join's and a lateral view's too.
    assert_eq!(
        column_names(
            "SELECT a.id, b.id FROM (SELECT 1 AS id) a JOIN (SELECT 1 AS id) b ON a.id = b.id"
        )
        .await,
        ["id", "id"]
    );
    assert_eq!(
        column_names(
            "SELECT t.id, v.tag FROM (SELECT 1 AS id) t LATERAL VIEW explode(array('x')) v AS tag"
        )
        .await,
        ["id", "tag"]
    );
}

#[tokio::test]
async fn a_pivot_value_of_the_wrong_arity_is_refused_naming_it() {
    let engine = engine().await;
    let session = open(&engine);
    let refused = error(
        &engine,
        &session,
        "SELECT * FROM (VALUES (1, 'north', 10, 'x')) t(emp_id, region, amount, k) \
         PIVOT (sum(amount) FOR (region, k) IN (('north', 'x'), 'south'))",
    )
    .await
    .to_string();
    assert!(
        refused.contains("PIVOT value 'south' has 1 parts where the clause names 2 columns"),
        "{refused}"
    );
}

#[tokio::test]
async fn left_right_and_array_position_answer_their_edge_cases_as_spark() {
    // Answers from Spark 4.3.
    assert_eq!(
        row_texts(
            "SELECT left('hello', 0), left('hello', -1), left('hello', 2), right('hello', -2), \
             right('hello', 2), left(NULL, 1), left('x', NULL)"
        )
        .await,
        ["  he  lo NULL NULL"]
    );
    assert_eq!(
        row_texts(
            "SELECT array_position(array(1, 2), 3), array_position(array(1, 2), 2), \
             array_position(array(1, 2), NULL), array_position(CAST(NULL AS ARRAY<INT>), 1)"
        )
        .await,
        ["0 2 NULL NULL"]
    );
    // Counts and positions are BIGINTs, as Spark types them (DataFusion's were unsigned).
    assert_eq!(
        row_texts(
            "SELECT typeof(array_position(array(1, 2), 2)), approx_count_distinct(x), \
             typeof(approx_count_distinct(x)), typeof(approx_distinct(x)) \
             FROM VALUES (1), (2), (2) AS t(x)"
        )
        .await,
        ["bigint 2 bigint bigint"]
    );
    // Spark's `first(x, true)`: the first value that is not NULL (Spark 4.3's answers).
    assert_eq!(
        row_texts(
            "SELECT first(x, true), last(x, true), count(*) \
             FROM VALUES (CAST(NULL AS INT)), (5), (NULL) AS t(x)"
        )
        .await,
        ["5 5 3"]
    );
    // A constant key is typed as the map's keys (a string beside Utf8View keys, or beside
    // numbers, failed the query); one that does not convert finds nothing. Spark 4.3's answers.
    assert_eq!(
        row_texts(
            "SELECT map_from_arrays(CAST(array(1, 2) AS ARRAY<STRING>), array('x', 'y'))['1'], \
             map(1, 'a')['1'], map(1, 'a')['x'], map(1.5, 'a')[1.5], m[k] \
             FROM (SELECT map('a', 1, 'b', 2) AS m, 'b' AS k)"
        )
        .await,
        ["x a NULL a 2"]
    );
    // Spark's empty map.
    assert_eq!(
        row_texts(
            "SELECT size(map()), typeof(map()), CAST(map('a', 1) AS MAP<STRING, BIGINT>)['a']"
        )
        .await,
        ["0 map<string,string> 1"]
    );
}

#[tokio::test]
async fn a_window_frame_takes_an_interval_with_an_unquoted_count_as_spark() {
    // Answers from Spark 4.3; DataFusion refused `INTERVAL 2 DAYS` in a frame.
    assert_eq!(
        row_texts(
            "SELECT d, sum(v) OVER (ORDER BY d RANGE BETWEEN INTERVAL 2 DAYS PRECEDING AND \
             CURRENT ROW) FROM (VALUES (DATE'2024-01-01', 1), (DATE'2024-01-02', 2), \
             (DATE'2024-01-04', 4), (DATE'2024-01-10', 8)) t(d, v) ORDER BY d"
        )
        .await,
        [
            "2024-01-01 1",
            "2024-01-02 3",
            "2024-01-04 6",
            "2024-01-10 8"
        ]
    );
}

#[tokio::test]
async fn tablesample_samples_the_rows_as_spark() {
    // DataFusion parsed TABLESAMPLE and read every row.
    let numbers = "WITH t AS (SELECT * FROM (VALUES (1), (2), (3), (4), (5), (6)) v(x))";
    let count = |sample: &str| format!("{numbers} SELECT count(*) FROM t TABLESAMPLE ({sample})");
    assert_eq!(row_texts(&count("2 ROWS")).await, ["2"]);
    assert_eq!(row_texts(&count("100 PERCENT")).await, ["6"]);
    assert_eq!(row_texts(&count("0 PERCENT")).await, ["0"]);
    assert_eq!(row_texts(&count("BUCKET 1 OUT OF 1")).await, ["6"]);
    // Hive's bucket of a column: the rows whose hash (an integer's own value) is 1 modulo 3.
    assert_eq!(
        row_texts(&format!(
            "{numbers} SELECT x FROM t TABLESAMPLE (BUCKET 2 OUT OF 3 ON x) ORDER BY x"
        ))
        .await,
        ["1", "4"]
    );
    // The table keeps its name or alias, and a sample of a subquery works alike.
    assert_eq!(
        row_texts(&format!(
            "{numbers} SELECT s.x FROM t TABLESAMPLE (1 ROWS) s JOIN t ON s.x = t.x"
        ))
        .await
        .len(),
        1
    );
    assert_eq!(
        row_texts(&format!(
            "{numbers} SELECT t.x FROM t TABLESAMPLE (3 ROWS) AS t WHERE t.x > 0"
        ))
        .await
        .len(),
        3
    );
    assert_eq!(
        row_texts(&format!(
            "{numbers} SELECT count(*) FROM (SELECT * FROM t) TABLESAMPLE (4 ROWS)"
        ))
        .await,
        ["4"]
    );
    // A sample of a size in bytes, or of no unit, is refused, saying what is taken.
    let engine = engine().await;
    let session = open(&engine);
    let refused = error(&engine, &session, &count("5")).await.to_string();
    assert!(refused.contains("sample by rows"), "{refused}");
}

#[tokio::test]
async fn an_ordered_subquery_keeps_its_order_for_its_rows_and_ordered_aggregates() {
    let engine = engine().await;
    let session = open(&engine);
    for sql in [
        "CREATE TABLE events (k STRING, ts INT, v STRING)",
        "INSERT INTO events VALUES ('a', 3, 'x'), ('b', 1, 'p')",
        "INSERT INTO events VALUES ('a', 1, 'y'), ('b', 2, NULL)",
        "INSERT INTO events VALUES ('a', 2, NULL), ('b', 3, 'q'), ('c', 1, NULL)",
    ] {
        lines(&engine, &session, sql).await;
    }
    let texts = |sql: &'static str| {
        let (engine, session) = (&engine, &session);
        async move {
            crate::test_util::value_rows(engine, session, sql)
                .await
                .into_iter()
                .map(|row| row.join(" "))
                .collect::<Vec<_>>()
        }
    };
    // Answers from Spark 4.3. Hive's idiom for an ordered list: each key's values by `ts`,
    // latest first; first and last by the same order; a group of NULLs collects nothing.
    assert_eq!(
        texts(
            "SELECT k, collect_list(v), first(v), last(v), first(v, true), \
             concat_ws(',', collect_list(v)), string_agg(v, '/') \
             FROM (SELECT * FROM events DISTRIBUTE BY k SORT BY ts DESC) t GROUP BY k ORDER BY k"
        )
        .await,
        [
            "a [x, y] x y x x,y x/y",
            "b [q, p] q p q q,p q/p",
            "c [] NULL NULL NULL  NULL",
        ]
    );
    // Without GROUP BY, through a filter and a CTE.
    assert_eq!(
        texts(
            "WITH latest AS (SELECT * FROM events ORDER BY ts DESC, k) \
             SELECT collect_list(v), first(k), last(ts) FROM latest WHERE v IS NOT NULL"
        )
        .await,
        ["[x, q, y, p] a 1"]
    );
    // The subquery's rows keep their order outside it, a LIMIT over it included.
    assert_eq!(
        texts(
            "SELECT ts, v FROM (SELECT * FROM events ORDER BY ts DESC, k) t \
             WHERE k <> 'c' LIMIT 4"
        )
        .await,
        ["3 x", "3 q", "2 NULL", "2 NULL"]
    );
    // An aggregate that names its own order keeps it; one of DISTINCT values, whose order
    // DataFusion takes from those values alone, is left in no order (it failed when given
    // the subquery's); a FILTER is kept.
    assert_eq!(
        texts(
            "SELECT string_agg(v, ',' ORDER BY v), length(string_agg(DISTINCT k, ',')) \
             FROM (SELECT * FROM events ORDER BY ts) t"
        )
        .await,
        ["p,q,x,y 5"]
    );
    assert_eq!(
        texts(
            "SELECT k, collect_list(v) FILTER (WHERE ts > 1) FROM \
             (SELECT * FROM events ORDER BY ts DESC) t GROUP BY k ORDER BY k"
        )
        .await,
        ["a [x]", "b [q]", "c []"]
    );
}

#[tokio::test]
async fn sparks_null_skipping_flag_holds_over_a_window_too() {
    // Answers from Spark 4.3.
    let events = "VALUES ('a', 3, 'x'), ('b', 1, 'p'), ('a', 1, 'y'), ('b', 2, NULL), \
                  ('a', 2, NULL), ('b', 3, 'q'), ('c', 1, NULL) AS events(k, ts, v)";
    assert_eq!(
        row_texts(&format!(
            "SELECT k, ts, last_value(v, true) OVER (PARTITION BY k ORDER BY ts), \
             first_value(v, true) OVER (PARTITION BY k ORDER BY ts DESC), \
             nth_value(v, 2, true) OVER (PARTITION BY k ORDER BY ts \
             ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING), \
             last(v, false) OVER (PARTITION BY k ORDER BY ts) \
             FROM {events} ORDER BY k, ts"
        ))
        .await,
        [
            "a 1 y x x y",
            "a 2 y x x NULL",
            "a 3 x x x x",
            "b 1 p q q p",
            "b 2 p q q NULL",
            "b 3 q q q q",
            "c 1 NULL NULL NULL NULL",
        ]
    );
    // Spark's other names and answers: cardinality is size, regexp_substr the first match
    // or NULL, array_prepend takes the array first.
    assert_eq!(
        row_texts(
            "SELECT cardinality(array(1, 2)), cardinality(NULL), typeof(cardinality(map(1, 2))), \
             regexp_substr('a1b22c333', '[0-9]{2}'), regexp_substr('abc', '[0-9]'), \
             array_prepend(array('a'), 'b'), array_indexof(array(1, 2), 5), \
             typeof(array_length(array(1)))"
        )
        .await,
        ["2 -1 int 22 NULL [b, a] 0 bigint"]
    );
}

#[tokio::test]
async fn listagg_and_string_agg_join_a_group_in_the_order_within_group_gives() {
    // Answers from Spark 4.3.
    let people = "VALUES ('eng', 'bob', 80.0), ('eng', 'alice', 100.5), ('hr', 'frank', 90.0), \
                  ('eng', 'carl', NULL) AS p(dept, name, salary)";
    assert_eq!(
        row_texts(&format!(
            "SELECT dept, listagg(name, ',') WITHIN GROUP (ORDER BY name DESC), \
             string_agg(name, '/') WITHIN GROUP (ORDER BY name DESC) \
             FROM {people} GROUP BY dept ORDER BY dept"
        ))
        .await,
        ["eng carl,bob,alice carl/bob/alice", "hr frank frank"]
    );
    // Without a delimiter, nothing between the values.
    assert_eq!(
        row_texts(&format!(
            "SELECT listagg(name) WITHIN GROUP (ORDER BY salary NULLS FIRST) FROM {people}"
        ))
        .await,
        ["carlbobfrankalice"]
    );
    assert_eq!(
        row_texts(&format!(
            "SELECT string_agg(DISTINCT dept, '|') WITHIN GROUP (ORDER BY dept DESC) FROM {people}"
        ))
        .await,
        ["hr|eng"]
    );
}

#[tokio::test]
async fn a_time_window_is_the_struct_of_its_start_and_end() {
    // Answers from Spark 4.3: windows start at 1970-01-01 00:00:00 UTC (a week's on a
    // Thursday), or that moved by the fourth argument.
    let times = "VALUES (TIMESTAMP '2024-01-01 10:00:00'), (TIMESTAMP '2024-01-02 11:30:00'), \
                 (TIMESTAMP '2024-01-02 23:59:59') AS t(ts)";
    assert_eq!(
        row_texts(&format!(
            "SELECT CAST(window(ts, '1 day').start AS STRING) AS s, \
             CAST(window(ts, '1 day').end AS STRING), count(*) \
             FROM {times} GROUP BY window(ts, '1 day') ORDER BY s"
        ))
        .await,
        [
            "2024-01-01 00:00:00 2024-01-02 00:00:00 1",
            "2024-01-02 00:00:00 2024-01-03 00:00:00 2"
        ]
    );
    assert_eq!(
        row_texts(&format!(
            "SELECT CAST(window(ts, '10 minutes', '10 minutes', '3 minutes').start AS STRING), \
             CAST(window(ts, '1 week').start AS STRING) FROM {times} ORDER BY ts LIMIT 1"
        ))
        .await,
        ["2024-01-01 09:53:00 2023-12-28 00:00:00"]
    );
}

#[tokio::test]
async fn a_query_grouped_by_a_window_names_it_window_as_spark() {
    // Answers from Spark 4.3: `window` is the grouping window, whole or by field.
    let times =
        "VALUES (TIMESTAMP '2024-01-01 10:05:00', 1), (TIMESTAMP '2024-01-01 10:55:00', 2), \
                 (TIMESTAMP '2024-01-02 11:00:00', 4) AS t(ts, x)";
    assert_eq!(
        row_texts(&format!(
            "SELECT CAST(window.start AS STRING), CAST(window.end AS STRING), sum(x) \
             FROM {times} GROUP BY window(ts, '1 hour') HAVING sum(x) > 1 \
             ORDER BY window.start DESC"
        ))
        .await,
        [
            "2024-01-02 11:00:00 2024-01-02 12:00:00 4",
            "2024-01-01 10:00:00 2024-01-01 11:00:00 3"
        ]
    );
    let engine = crate::test_util::engine().await;
    let s = crate::test_util::open(&engine);
    let batches = crate::test_util::run(
        &engine,
        &s,
        &format!("SELECT window, count(*) AS n FROM {times} GROUP BY window(ts, '1 day')"),
    )
    .await
    .unwrap();
    let schema = batches[0].schema();
    assert_eq!(schema.field(0).name(), "window");
}

#[tokio::test]
async fn an_inline_tables_columns_are_named_as_spark_names_them() {
    // Spark 4.3's answers: col1, col2, ... unless the table's alias names them.
    let engine = engine().await;
    let session = open(&engine);
    for (sql, expected) in [
        (
            "SELECT col2 FROM VALUES (1, 'a'), (2, 'b') ORDER BY col1",
            vec!["col2", "a", "b"],
        ),
        (
            "SELECT t.col1 FROM VALUES (1), (2) AS t ORDER BY 1",
            vec!["col1", "1", "2"],
        ),
        (
            "SELECT a FROM VALUES (1), (2) AS t(a) ORDER BY a",
            vec!["a", "1", "2"],
        ),
        ("SELECT col2 FROM (VALUES (1, 2)) AS v", vec!["col2", "2"]),
        ("VALUES (1, 'x')", vec!["col1,col2", "1,x"]),
        (
            "WITH v AS (SELECT * FROM VALUES (1, 'a')) SELECT col2 FROM v",
            vec!["col2", "a"],
        ),
    ] {
        let lines = lines(&engine, &session, sql).await;
        let cells: Vec<String> = lines
            .iter()
            .filter(|line| line.starts_with('|'))
            .map(|line| joined_cells(line))
            .collect();
        assert_eq!(cells, expected, "{sql}");
    }
    // An INSERT's values are the table's columns, as before.
    for sql in [
        "CREATE TABLE inline_target (a INT, b STRING)",
        "INSERT INTO inline_target VALUES (1, 'a')",
        "INSERT INTO inline_target SELECT * FROM VALUES (2, 'b')",
    ] {
        lines(&engine, &session, sql).await;
    }
    let rows = lines(
        &engine,
        &session,
        "SELECT a, b FROM inline_target ORDER BY a",
    )
    .await;
    assert_eq!(rows[3..5], ["| 1 | a |", "| 2 | b |"], "{rows:?}");
}

#[tokio::test]
async fn exists_in_a_select_list_answers_as_in_spark() {
    // pyspark 4.3's answers; DataFusion's planner refused EXISTS outside a filter.
    let engine = engine().await;
    let session = open(&engine);
    let sql = "SELECT c.id, \
         EXISTS (SELECT 1 FROM VALUES (1), (1), (3) AS o(cid) WHERE o.cid = c.id) AS has, \
         NOT EXISTS (SELECT o.cid FROM VALUES (1), (3) AS o(cid) WHERE o.cid = c.id) AS hasnt, \
         CASE WHEN EXISTS (SELECT 1) THEN 'y' ELSE 'n' END AS always \
         FROM VALUES (1), (2), (3) AS c(id) ORDER BY c.id";
    let batches = crate::test_util::run(&engine, &session, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql} failed: {e}"));
    assert_eq!(
        crate::test_util::formatted_rows(&batches),
        vec![
            vec!["1", "true", "false", "y"],
            vec!["2", "false", "true", "y"],
            vec!["3", "true", "false", "y"],
        ]
    );
}
