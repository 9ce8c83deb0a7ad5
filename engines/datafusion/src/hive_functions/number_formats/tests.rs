//! Every expected value is pyspark 4.3's (local, `spark.sql.ansi.enabled=false`).

use super::NumberFormat;
use crate::hive_functions::tests::check;
use crate::test_util::{engine, error, open};

#[tokio::test]
async fn to_number_reads_a_number_as_its_format_describes_it() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT to_number('454', '999'), to_number('454.00', '000.00'), \
         to_number('12,454', '99,999'), to_number('$78.12', '$99.99'), \
         to_number('12,454.8-', '99,999.9S'), to_number('<454>', '999PR'), \
         to_number('454-', '999MI'), to_number('-454', 'S999'), to_number('  12', '9999'), \
         to_number('0012', '0000')",
        &[
            "454", "454.00", "12454", "78.12", "-12454.8", "-454", "-454", "-454", "12", "12",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT typeof(to_number('454', '999')), typeof(to_number('454.00', '000.00')), \
         typeof(to_number('$78.12', '$99.99')), typeof(to_number('1', '9g999d99'))",
        &[
            "decimal(3,0)",
            "decimal(5,2)",
            "decimal(4,2)",
            "decimal(6,2)",
        ],
    )
    .await;
    // try_to_number: NULL where to_number fails.
    check(
        &engine,
        &s,
        "SELECT try_to_number('abc', '999'), try_to_number('1234', '999'), \
         try_to_number('12', '000'), try_to_number('1.234', '9.99'), try_to_number('5', '9.99'), \
         to_number(NULL, '999'), typeof(to_number('1', NULL))",
        &[
            "NULL",
            "NULL",
            "NULL",
            "NULL",
            "5.00",
            "NULL",
            "decimal(10,0)",
        ],
    )
    .await;
    let message = error(&engine, &s, "SELECT to_number('abc', '999')")
        .await
        .to_string();
    assert!(
        message.contains("'abc' is not a number as the format describes"),
        "{message}"
    );
}

#[tokio::test]
async fn to_char_writes_a_number_as_its_format_describes() {
    let engine = engine().await;
    let s = open(&engine);
    check(
        &engine,
        &s,
        "SELECT to_char(454, '999'), to_char(454.00, '000D00'), to_char(12454, '99G999'), \
         to_char(78.12, '$99.99'), to_char(-12454.8, '99G999D9S'), to_char(-454, '999PR'), \
         to_char(454, '999PR'), to_char(-454, '999MI'), to_char(454, 'S999'), \
         to_char(12345, '99'), to_char(0.5, '9.99'), to_char(0.5, '0.99'), \
         to_char(5, '0000'), to_char(5, '9999')",
        &[
            "454",
            "454.00",
            "12,454",
            "$78.12",
            "12,454.8-",
            "<454>",
            "454  ",
            "454-",
            "+454",
            "##",
            "0.50",
            "0.50",
            "0005",
            "   5",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT to_varchar(12.5, '99.99'), to_char(CAST(12.5 AS DOUBLE), '99.99'), \
         to_char(CAST(7 AS BIGINT), '999'), to_char(CAST(-0.25 AS DECIMAL(5,2)), 'S0.99'), \
         to_char(1234567.891, '9,999,999.99'), to_char(0, '999'), to_char(-5, 'MI999'), \
         to_char(1.005, '9.99'), to_char(CAST(0.1 AS DOUBLE), '9.99'), \
         to_char(CAST(1e20 AS DOUBLE), '9.99'), to_char('12.5', '99.99')",
        &[
            "12.50",
            "12.50",
            "  7",
            "-0.25",
            "# ### ###.##",
            "   ",
            "  -5",
            "#.##",
            "0.10",
            "NULL",
            "12.50",
        ],
    )
    .await;
    // A date or timestamp as date_format writes it; bytes as hex, Base64 or UTF-8.
    check(
        &engine,
        &s,
        "SELECT to_char(DATE '2024-01-02', 'yyyy-MM-dd'), \
         to_char(TIMESTAMP '2024-01-02 03:04:05', 'yyyy/MM/dd HH:mm'), \
         to_varchar(DATE '2024-01-02', 'dd.MM.yyyy'), to_char(X'414243', 'hex'), \
         to_char(X'414243', 'base64'), to_char(X'414243', 'utf-8'), to_char(NULL, '999')",
        &[
            "2024-01-02",
            "2024/01/02 03:04",
            "02.01.2024",
            "414243",
            "QUJD",
            "ABC",
            "NULL",
        ],
    )
    .await;
}

#[tokio::test]
async fn a_bad_format_is_named_with_what_is_wrong() {
    let engine = engine().await;
    let s = open(&engine);
    for (sql, expected) in [
        (
            "SELECT to_number('12.3.4', '99.9.9')",
            "at most one . or D is allowed",
        ),
        ("SELECT to_number('1', '')", "the format is empty"),
        (
            "SELECT to_char(1, 'x99')",
            "found the unexpected character 'X'",
        ),
        (
            "SELECT to_char(1, '9,,9')",
            "a , or G must stand between digits",
        ),
        (
            "SELECT to_number(a, f) FROM VALUES ('1', '9') AS t(a, f)",
            "must be a constant",
        ),
        (
            "SELECT to_char(X'41', 'octal')",
            "'hex', 'base64' or 'utf-8'",
        ),
    ] {
        let message = error(&engine, &s, sql).await.to_string();
        assert!(message.contains(expected), "{sql}: {message}");
    }
}

#[test]
fn a_formats_digits_give_its_decimal_type() {
    let format = NumberFormat::new("$99,999.99S").unwrap();
    assert_eq!(
        format.decimal_type(),
        datafusion::arrow::datatypes::DataType::Decimal128(7, 2)
    );
    assert_eq!(format.read("$12,345.67-"), Some(-1_234_567));
    assert_eq!(format.write(-1_234_567, 2), "$12,345.67-");
    assert!(NumberFormat::new("9".repeat(39).as_str()).is_err());
}
