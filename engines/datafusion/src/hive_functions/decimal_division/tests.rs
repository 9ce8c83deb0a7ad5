//! `a / b` of decimals, each answer (value and type) as Spark 4 gives it without ANSI mode.

use datafusion::arrow::datatypes::DataType;

use crate::hive_functions::tests::only_row;

fn decimal(precision: u8, scale: i8) -> DataType {
    DataType::Decimal128(precision, scale)
}

#[tokio::test]
async fn decimals_divide_into_sparks_type_rounded_half_up() {
    // Spark: decimal(23,13) = (10 - 2 + 2 + max(6, 2 + 10 + 1), max(6, 13)).
    let (values, types) = only_row(
        "SELECT CAST(10 AS DECIMAL(10,2)) / CAST(3 AS DECIMAL(10,2)), \
         CAST(-10 AS DECIMAL(10,2)) / CAST(3 AS DECIMAL(10,2)), \
         CAST(2 AS DECIMAL(10,2)) / CAST(3 AS DECIMAL(10,2)), \
         CAST(-2 AS DECIMAL(10,2)) / CAST(3 AS DECIMAL(10,2))",
    )
    .await;
    assert_eq!(
        values,
        [
            "3.3333333333333",
            "-3.3333333333333",
            "0.6666666666667",
            "-0.6666666666667"
        ]
    );
    assert_eq!(types, vec![decimal(23, 13); 4]);
    // A half rounds away from zero (1/128 is 0.0078125): Java's HALF_UP, not half even.
    let (values, types) =
        only_row("SELECT x / 128, -x / 128 FROM (VALUES (CAST(1 AS DECIMAL(10,0)))) AS v(x)").await;
    assert_eq!(values, ["0.007813", "-0.007813"]);
    assert_eq!(types, vec![decimal(16, 6); 2]);
}

#[tokio::test]
async fn an_integer_literal_divides_as_a_decimal_of_its_digits() {
    // Spark's DecimalType.fromLiteral: 3 is decimal(1,0), 1000 decimal(4,0), -7 decimal(1,0).
    let (values, types) = only_row(
        "SELECT x / 3, -x / 3, 3 / x, 1000 / x, x / 123456, x / -7 \
         FROM (VALUES (CAST(7 AS DECIMAL(10,2)))) AS v(x)",
    )
    .await;
    assert_eq!(
        values,
        [
            "2.333333",
            "-2.333333",
            "0.42857142857",
            "142.85714285714",
            "0.000056700",
            "-1.000000"
        ]
    );
    assert_eq!(
        types,
        [
            decimal(14, 6),
            decimal(14, 6),
            decimal(14, 11),
            decimal(17, 11),
            decimal(17, 9),
            decimal(14, 6)
        ]
    );
    let (values, types) = only_row(
        "SELECT x / 3 FROM (VALUES (CAST(10 AS DECIMAL(10,2))), (CAST(-20 AS DECIMAL(10,2)))) \
         AS v(x) WHERE x < 0",
    )
    .await;
    assert_eq!(
        (values, types),
        (vec!["-6.666667".into()], vec![decimal(14, 6)])
    );
}

#[tokio::test]
async fn an_integer_column_divides_as_the_decimal_spark_widens_it_to() {
    // TINYINT as decimal(3,0), SMALLINT (5,0), INT (10,0), BIGINT (20,0).
    let (values, types) = only_row(
        "SELECT x / CAST(i AS TINYINT), x / CAST(i AS SMALLINT), x / CAST(i AS INT), \
         x / CAST(i AS BIGINT), CAST(i AS BIGINT) / x, CAST(i AS INT) / 1.25BD \
         FROM (VALUES (CAST(10 AS DECIMAL(10,2)), 3)) AS v(x, i)",
    )
    .await;
    assert_eq!(
        values,
        [
            "3.333333",
            "3.33333333",
            "3.3333333333333",
            "3.33333333333333333333333",
            "0.30000000000",
            "2.400000"
        ]
    );
    assert_eq!(
        types,
        [
            decimal(14, 6),
            decimal(16, 8),
            decimal(21, 13),
            decimal(31, 23),
            decimal(33, 11),
            decimal(18, 6)
        ]
    );
    // A sum by a count: decimal(20,2) by a BIGINT.
    let (values, types) = only_row(
        "SELECT sum(x) / count(*) FROM (VALUES (CAST(94.12 AS DECIMAL(10,2))), \
         (CAST(94.23 AS DECIMAL(10,2))), (CAST(94.24 AS DECIMAL(10,2)))) AS v(x)",
    )
    .await;
    assert_eq!(values, ["94.19666666666666666667"]);
    assert_eq!(types, [decimal(38, 20)]);
}

#[tokio::test]
async fn a_zero_divisor_or_a_null_gives_null() {
    let (values, types) = only_row(
        "SELECT x / 0, x / CAST(0 AS DECIMAL(10,2)), CAST(7 AS DECIMAL(10,2)) / \
         CAST(0 AS DECIMAL(5,3)), CAST(NULL AS DECIMAL(10,2)) / 3 \
         FROM (VALUES (CAST(10 AS DECIMAL(10,2)))) AS v(x)",
    )
    .await;
    assert_eq!(values, ["NULL"; 4]);
    assert_eq!(
        types,
        [
            decimal(14, 6),
            decimal(23, 13),
            decimal(19, 8),
            decimal(14, 6)
        ]
    );
}

#[tokio::test]
async fn a_type_beyond_38_digits_keeps_its_integer_digits_and_at_least_6_decimals() {
    let (values, types) = only_row(
        "SELECT CAST(1 AS DECIMAL(38,0)) / CAST(3 AS DECIMAL(38,0)), \
         CAST(1 AS DECIMAL(38,10)) / CAST(3 AS DECIMAL(38,10)), \
         CAST(1 AS DECIMAL(20,10)) / CAST(3 AS DECIMAL(20,10)), \
         CAST('12345678901234567890.12345678' AS DECIMAL(28,8)) / \
         CAST('0.0000007' AS DECIMAL(8,7)), \
         CAST('9999999999999999999999999999.9999999999' AS DECIMAL(38,10)) / \
         CAST('0.001' AS DECIMAL(4,3))",
    )
    .await;
    assert_eq!(
        values,
        [
            "0.333333",
            "0.333333",
            "0.333333333333333333",
            "17636684144620811271604938.25714285714",
            "9999999999999999999999999999999.9999999"
        ]
    );
    assert_eq!(
        types,
        [
            decimal(38, 6),
            decimal(38, 6),
            decimal(38, 18),
            decimal(38, 11),
            decimal(38, 7)
        ]
    );
}

#[tokio::test]
async fn a_quotient_beyond_its_type_is_null() {
    let (values, types) = only_row(
        "SELECT x / CAST('0.01' AS DECIMAL(3,2)), x / CAST(0.5 AS DECIMAL(2,1)) \
         FROM (VALUES (CAST('99999999999999999999999999999999999999' AS DECIMAL(38,0)))) \
         AS v(x)",
    )
    .await;
    assert_eq!(values, ["NULL", "NULL"]);
    assert_eq!(types, [decimal(38, 6), decimal(38, 6)]);
}

#[tokio::test]
async fn a_decimal_and_a_floating_point_number_divide_as_doubles() {
    let (values, types) = only_row(
        "SELECT x / CAST(3 AS DOUBLE), x / CAST(3 AS FLOAT) \
         FROM (VALUES (CAST(10 AS DECIMAL(10,2)))) AS v(x)",
    )
    .await;
    assert_eq!(values, ["3.3333333333333335", "3.3333333333333335"]);
    assert_eq!(types, [DataType::Float64, DataType::Float64]);
}

#[tokio::test]
async fn a_decimal_by_null_is_a_decimal_and_null_by_a_decimal_a_double() {
    let (values, types) =
        only_row("SELECT x / NULL, NULL / x FROM (VALUES (CAST(10 AS DECIMAL(10,2)))) AS v(x)")
            .await;
    assert_eq!(values, ["NULL", "NULL"]);
    assert_eq!(types, [decimal(23, 13), DataType::Float64]);
}

#[tokio::test]
async fn an_integer_literal_adds_and_multiplies_as_a_decimal_of_its_digits() {
    // Spark 4.3: decimal(10,2) * 2 is decimal(12,2) (10 + 1 + 1), + 1 and - 100 are
    // decimal(11,2), * -12345 decimal(16,2); an INT column widens to decimal(10,0).
    let (values, types) = only_row(
        "SELECT x * 2, x + 1, x - 100, 2 * x, x * -12345, x * i \
         FROM (VALUES (CAST(1000.25 AS DECIMAL(10,2)), CAST(3 AS INT))) AS v(x, i)",
    )
    .await;
    assert_eq!(
        values,
        [
            "2000.50",
            "1001.25",
            "900.25",
            "2000.50",
            "-12348086.25",
            "3000.75"
        ]
    );
    assert_eq!(
        types,
        [
            decimal(12, 2),
            decimal(11, 2),
            decimal(11, 2),
            decimal(12, 2),
            decimal(16, 2),
            decimal(21, 2)
        ]
    );
}

#[tokio::test]
async fn a_decimals_remainder_has_sparks_type() {
    // Spark 4.3: DECIMAL(min(p1 - s1, p2 - s2) + max(s1, s2), max(s1, s2)), an integer
    // literal the decimal of its digits, an INT column DECIMAL(10,0); NULL for a zero divisor.
    let (values, types) = only_row(
        "SELECT x % 3, x % i, i % x, x % 2.5BD, x % 0, -x % 3 \
         FROM (VALUES (CAST(1001.25 AS DECIMAL(10,2)), CAST(4 AS INT))) AS v(x, i)",
    )
    .await;
    assert_eq!(values, ["2.25", "1.25", "4.00", "1.25", "NULL", "-2.25"]);
    assert_eq!(
        types,
        [
            decimal(3, 2),
            decimal(10, 2),
            decimal(10, 2),
            decimal(3, 2),
            decimal(3, 2),
            decimal(3, 2)
        ]
    );
}
