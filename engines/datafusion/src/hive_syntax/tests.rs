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
    let plan = lines(&engine, &session, "EXPLAIN SELECT 'a' RLIKE 'a'")
        .await
        .join("\n");
    assert!(plan.contains("regexp_like"), "{plan}");
    let bad = error(&engine, &session, "SELECT 'a' RLIKE '('").await;
    assert!(bad.to_string().contains("regex"), "{bad}");
}
