//! Every expected value is pyspark 4.3's (local, `spark.sql.ansi.enabled=false`).

use crate::hive_functions::tests::check;
use crate::test_util::{engine, error, open, refusals};

#[tokio::test]
async fn to_csv_writes_a_struct_as_sparks_csv_writer() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        r#"SELECT to_csv(named_struct('a', 1, 'b', 'x,y', 'c', NULL, 'd', 'q"t', 'e', 2.50BD,
                  'f', DATE'2024-01-02', 'g', TIMESTAMP'2024-01-02 03:04:05.6', 'h', true,
                  'i', 1.5D, 'j', '', 'k', ' sp ')),
                  to_csv(named_struct('a', '  ', 'b', 'x\ny', 'c', 'a\\b', 'd', '#x', 'e', 'é',
                  'f', 1.0E10D, 'g', CAST(1.5 AS FLOAT), 'h', map('k', 1),
                  'i', named_struct('x', 1, 'y', 'z'), 'j', X'0102', 'k', 'a"', 'l', ' "q" ')),
                  to_csv(named_struct('a', 'a\\b,c', 'b', 'x\\"y')),
                  to_csv(named_struct('a', array(1, 2))),
                  to_csv(named_struct('a', 1, 'b', 'x'), map('sep', '|', 'quoteAll', 'true')),
                  to_csv(named_struct('a', 1, 'b', NULL), map('nullValue', 'NA'))"#,
        &[
            r#"1,"x,y",,"q\"t",2.50,2024-01-02,2024-01-02T03:04:05.600Z,true,1.5,"",sp"#,
            "\"\",\"x\ny\",a\\b,#x,é,1.0E10,1.5,{k -> 1},\"{1, z}\",[01 02],\"a\\\"\",\"\\\"q\\\"\"",
            r#""a\\b,c","x\\\"y""#,
            r#""[1, 2]""#,
            r#""1"|"x""#,
            "1,NA",
        ],
    )
    .await;
    let message = error(&engine, &s, "SELECT to_csv(1)").await.to_string();
    assert!(message.contains("to_csv takes a struct"), "{message}");
    let message = error(
        &engine,
        &s,
        "SELECT to_csv(named_struct('a', 1), map('compression', 'gzip'))",
    )
    .await
    .to_string();
    assert!(
        message.contains("the option 'compression' is not supported"),
        "{message}"
    );
}

#[tokio::test]
async fn from_csv_reads_a_line_into_the_schemas_fields() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        r#"SELECT to_json(from_csv('1,abc,2.5', 'a INT, b STRING, c DOUBLE')),
                  to_json(from_csv('1,"a,b",', 'a INT, b STRING, c DOUBLE')),
                  to_json(from_csv('x,y', 'a INT, b STRING')),
                  to_json(from_csv('1', 'a INT, b STRING')),
                  to_json(from_csv('1,2,3', 'a INT, b INT')),
                  to_json(from_csv('', 'a INT')), from_csv(NULL, 'a INT'),
                  typeof(from_csv('1', 'a INT, t TIMESTAMP, d DATE'))"#,
        &[
            r#"{"a":1,"b":"abc","c":2.5}"#,
            r#"{"a":1,"b":"a,b"}"#,
            r#"{"b":"y"}"#,
            r#"{"a":1}"#,
            r#"{"a":1,"b":2}"#,
            "{}",
            "NULL",
            "struct<a:int,t:timestamp,d:date>",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        r#"SELECT to_json(from_csv('1,""," x ", 2 ,+3,1.5d',
                      'a INT, b STRING, c STRING, d INT, e INT, f DOUBLE')),
                  to_json(from_csv('true,TRUE,yes,NaN,Inf,-Inf,Infinity,1,2.999',
                      'a BOOLEAN, b BOOLEAN, c BOOLEAN, d DOUBLE, e DOUBLE, f DOUBLE, g DOUBLE,
                       h DECIMAL(3,1), i DECIMAL(3,2)')),
                  to_json(from_csv('2024-1-2,2024-01-02T03:04:05.000Z,2024-01-02 03:04,x',
                      'a DATE, b TIMESTAMP, c TIMESTAMP, d DATE')),
                  to_json(from_csv('a|"b|c"', 'x STRING, y STRING', map('sep', '|'))),
                  to_json(from_csv('"a\\"b","c""d"', 'x STRING, y STRING')),
                  to_json(from_csv(s, 'a INT'))
           FROM VALUES ('7') AS t(s)"#,
        &[
            r#"{"a":1,"c":" x ","e":3,"f":1.5}"#,
            r#"{"a":true,"b":true,"d":"NaN","e":"Infinity","f":"-Infinity","g":"Infinity","h":1.0,"i":3.00}"#,
            r#"{"a":"2024-01-02","b":"2024-01-02T03:04:05.000Z","c":"2024-01-02T03:04:00.000Z"}"#,
            r#"{"x":"a","y":"b|c"}"#,
            r#"{"x":"a\"b","y":"\"c\"\"d\""}"#,
            r#"{"a":7}"#,
        ],
    )
    .await;
    refusals(
        &engine,
        &s,
        &[
            (
                "SELECT from_csv('1', 'a ARRAY<INT>')",
                "from_csv cannot read the field a of type List",
            ),
            (
                "SELECT from_csv('1', s) FROM VALUES ('a INT') AS t(s)",
                "from_csv takes its schema as a string literal",
            ),
        ],
    )
    .await;
}

#[tokio::test]
async fn schema_of_csv_infers_the_types_spark_infers_for_a_line() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        r#"SELECT schema_of_csv('1,abc,2.5,true,2024-01-02,,"x"'),
                  schema_of_csv('12345678901,1e5,NaN'),
                  schema_of_csv('123456789012345678901,2024-01-02 03:04:05,2024-01-02T03:04:05,true,TRUE,1.5d,+1, 1 ,1.50,-0,2024-1-2,Infinity,-Inf,x y'),
                  schema_of_csv('a|1', map('sep', '|')),
                  to_json(from_csv('5,kim,2024-03-01', schema_of_csv('1,abc,2024-01-02')))"#,
        &[
            "STRUCT<_c0: INT, _c1: STRING, _c2: DOUBLE, _c3: BOOLEAN, _c4: DATE, _c5: STRING, _c6: STRING>",
            "STRUCT<_c0: BIGINT, _c1: DOUBLE, _c2: DOUBLE>",
            "STRUCT<_c0: DECIMAL(21,0), _c1: TIMESTAMP, _c2: TIMESTAMP, _c3: BOOLEAN, _c4: BOOLEAN, \
             _c5: DOUBLE, _c6: INT, _c7: DOUBLE, _c8: DOUBLE, _c9: INT, _c10: TIMESTAMP, \
             _c11: DOUBLE, _c12: DOUBLE, _c13: STRING>",
            "STRUCT<_c0: STRING, _c1: INT>",
            r#"{"_c0":5,"_c1":"kim","_c2":"2024-03-01"}"#,
        ],
    )
    .await;
}
