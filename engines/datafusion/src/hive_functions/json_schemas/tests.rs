//! Every expected value is pyspark 4.3's (local, `spark.sql.ansi.enabled=false`).

use crate::hive_functions::tests::check;
use crate::test_util::{engine, error, open};

#[tokio::test]
async fn schema_of_json_infers_the_types_spark_infers() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        r#"SELECT schema_of_json('[{"col":0}]'),
                  schema_of_json('{"b":1.5,"a":"x","c":true,"d":null,"e":[],"f":{},"g":12345678901234567890,"h":[1,2.5],"i":[1,"a"],"j":1e3, "k":[{"x":1},{"y":2}]}'),
                  schema_of_json('1'), schema_of_json('"a"'), schema_of_json('null'),
                  schema_of_json('[]'), schema_of_json('{"a b":1, "`c":2}'),
                  schema_of_json('{"1a":1,"123":2,"_x":3,"aB":4, "a.b":5, "":6}'),
                  schema_of_json('{"ä":1, "b":2}')"#,
        &[
            "ARRAY<STRUCT<col: BIGINT>>",
            "STRUCT<a: STRING, b: DOUBLE, c: BOOLEAN, d: STRING, e: ARRAY<STRING>, \
             g: DECIMAL(20,0), h: ARRAY<DOUBLE>, i: ARRAY<STRING>, j: DOUBLE, \
             k: ARRAY<STRUCT<x: BIGINT, y: BIGINT>>>",
            "BIGINT",
            "STRING",
            "STRING",
            "ARRAY<STRING>",
            "STRUCT<```c`: BIGINT, `a b`: BIGINT>",
            "STRUCT<`123`: BIGINT, `1a`: BIGINT, _x: BIGINT, `a.b`: BIGINT, aB: BIGINT>",
            "STRUCT<b: BIGINT, `ä`: BIGINT>",
        ],
    )
    .await;
    // How elements' types widen, and what is left of empty structs.
    check(
        &engine,
        &s,
        r#"SELECT schema_of_json('[1, null, 2]'), schema_of_json('[{"a":1},{"a":"x"}]'),
                  schema_of_json('[{"a":1},{"a":1.5}]'),
                  schema_of_json('[{"a":12345678901234567890},{"a":1}]'),
                  schema_of_json('[{"a":12345678901234567890},{"a":1.5}]'),
                  schema_of_json('[{"a":[1]},{"a":{"b":1}}]'), schema_of_json('[1, [2]]'),
                  schema_of_json('[true, 1]'), schema_of_json('[{}, {"a":1}]'),
                  schema_of_json('[[], [1]]'), schema_of_json('{}'), schema_of_json('[{}]'),
                  schema_of_json('[[{}]]'), schema_of_json('{"a":[{}]}'),
                  schema_of_json('{"a":{"b":{}}, "c":1}'), schema_of_json('{"a":[null]}'),
                  schema_of_json('{"a":1, "A":2}'), schema_of_json('{"a":1, "a":"x"}'),
                  schema_of_json('{"a":1} x'), schema_of_json('  ')"#,
        &[
            "ARRAY<BIGINT>",
            "ARRAY<STRUCT<a: STRING>>",
            "ARRAY<STRUCT<a: DOUBLE>>",
            "ARRAY<STRUCT<a: DECIMAL(20,0)>>",
            "ARRAY<STRUCT<a: DOUBLE>>",
            "ARRAY<STRUCT<a: STRING>>",
            "ARRAY<STRING>",
            "ARRAY<STRING>",
            "ARRAY<STRUCT<a: BIGINT>>",
            "ARRAY<ARRAY<BIGINT>>",
            "STRUCT<>",
            "ARRAY<STRUCT<>>",
            "STRING",
            "STRUCT<>",
            "STRUCT<c: BIGINT>",
            "STRUCT<a: ARRAY<STRING>>",
            "STRUCT<A: BIGINT, a: BIGINT>",
            "STRUCT<a: BIGINT, a: STRING>",
            "STRUCT<a: BIGINT>",
            "STRING",
        ],
    )
    .await;
}

#[tokio::test]
async fn from_json_reads_documents_by_the_schema_of_a_sample() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        r#"SELECT to_json(from_json(j, schema_of_json('{"id": 1, "tags": ["x"], "who": {"name": "a"}}'))),
                  typeof(from_json(j, schema_of_json('{"id": 1, "tags": ["x"], "who": {"name": "a"}}'))),
                  schema_of_json(j)
           FROM VALUES ('{"id": 7, "tags": ["p", "q"], "who": {"name": "kim"}}') AS t(j)"#,
        &[
            r#"{"id":7,"tags":["p","q"],"who":{"name":"kim"}}"#,
            "struct<id:bigint,tags:array<string>,who:struct<name:string>>",
            "STRUCT<id: BIGINT, tags: ARRAY<STRING>, who: STRUCT<name: STRING>>",
        ],
    )
    .await;
    let message = error(&engine, &s, "SELECT schema_of_json('{bad')")
        .await
        .to_string();
    assert!(
        message.contains("schema_of_json: the sample is not JSON"),
        "{message}"
    );
}
