//! `round`, `ceil` and `floor`, each expected value and type as pyspark 4.3 (local, without
//! ANSI mode) answers the same SQL (its numbers `CAST(x AS DOUBLE)`, as the engine reads a
//! literal `1.005`).

use datafusion::arrow::datatypes::DataType;

use crate::hive_functions::tests::{check, only_row};
use crate::test_util::{engine, open};

#[tokio::test]
async fn round_takes_a_doubles_shortest_decimal_form_half_up() {
    let engine = engine().await;
    let s = open(&engine);
    // Spark: 1.01, 2.68, 2.68 (bround), 2.66 (bround), 2.67, -1.01, -3.0, 3.0, 1.0, -1.0.
    check(
        &engine,
        &s,
        "SELECT round(1.005, 2), round(2.675, 2), bround(2.675, 2), bround(2.665, 2), \
         round(2.665, 2), round(-1.005, 2), round(-2.5), round(2.5), round(0.5), round(-0.5)",
        &[
            "1.01", "2.68", "2.68", "2.66", "2.67", "-1.01", "-3.0", "3.0", "1.0", "-1.0",
        ],
    )
    .await;
    // Spark: 1200.0, 1300.0, 1400.0, 1200.0 (bround), 0.0, 1.0, 123456789012345.67, 0.0,
    // 0.0 (-0.0 rounded), 0.0 (-0.001).
    check(
        &engine,
        &s,
        "SELECT round(1234.5678, -2), round(1250.0, -2), round(1350.0, -2), \
         bround(1250.0, -2), round(123.456, -5), round(1.005), \
         round(123456789012345.675, 2), round(0.0, 2), round(-0.0, 2), round(-0.001, 2)",
        &[
            "1200.0",
            "1300.0",
            "1400.0",
            "1200.0",
            "0.0",
            "1.0",
            "123456789012345.67",
            "0.0",
            "0.0",
            "0.0",
        ],
    )
    .await;
    // Spark: NaN, Infinity, -Infinity, NaN (bround), NULL, NULL, 2.35 (a string read as a
    // DOUBLE).
    check(
        &engine,
        &s,
        "SELECT round(CAST('NaN' AS DOUBLE), 2), round(CAST('Infinity' AS DOUBLE), 2), \
         round(CAST('-Infinity' AS DOUBLE)), bround(CAST('NaN' AS DOUBLE), 1), \
         round(CAST(NULL AS DOUBLE), 2), round(1.5, NULL), round('2.345', 2)",
        &["NaN", "inf", "-inf", "NaN", "NULL", "NULL", "2.35"],
    )
    .await;
}

#[tokio::test]
async fn round_keeps_a_float_a_float_and_an_integer_an_integer() {
    // Spark: 1.0 (the FLOAT widened to 1.00499999523...), 2.67, 0.13, 1.5, 3.0; float.
    let (values, types) = only_row(
        "SELECT round(CAST(1.005 AS FLOAT), 2), round(CAST(2.675 AS FLOAT), 2), \
         round(CAST(0.125 AS FLOAT), 2), round(CAST(1.45 AS FLOAT), 1), \
         round(CAST(2.5 AS FLOAT))",
    )
    .await;
    assert_eq!(values, ["1.0", "2.67", "0.13", "1.5", "3.0"]);
    assert!(types.iter().all(|t| t == &DataType::Float32), "{types:?}");
    // Spark: 1200, 1300, -1300, 1234, 20, -20 (int), -9223372036854775806 (wrapped, as
    // Spark's longValue), -126 (a TINYINT 125 to 130, wrapped).
    let (values, types) = only_row(
        "SELECT round(1234, -2), round(1250, -2), round(-1250, -2), round(1234, 2), \
         round(CAST(15 AS INT), -1), round(CAST(-15 AS INT), -1), \
         round(CAST(9223372036854775807 AS BIGINT), -1), round(CAST(125 AS TINYINT), -1)",
    )
    .await;
    assert_eq!(
        values,
        [
            "1200",
            "1300",
            "-1300",
            "1234",
            "20",
            "-20",
            "-9223372036854775806",
            "-126"
        ]
    );
    assert_eq!(types[0], DataType::Int32);
    assert_eq!(types[4], DataType::Int32);
    assert_eq!(types[6], DataType::Int64);
    assert_eq!(types[7], DataType::Int8);
}

#[tokio::test]
async fn round_of_a_decimal_has_sparks_type() {
    // Spark: 1.3 decimal(5,1), 1.25 decimal(6,2), 1 decimal(4,0), 130 decimal(5,0), -1.3.
    let (values, types) = only_row(
        "SELECT round(CAST(1.25 AS DECIMAL(5,2)), 1), round(CAST(1.25 AS DECIMAL(5,2)), 3), \
         round(CAST(1.25 AS DECIMAL(5,2))), round(CAST(125.5 AS DECIMAL(5,1)), -1), \
         round(CAST(-1.25 AS DECIMAL(5,2)), 1)",
    )
    .await;
    assert_eq!(values, ["1.3", "1.25", "1", "130", "-1.3"]);
    assert_eq!(
        types,
        [
            DataType::Decimal128(5, 1),
            DataType::Decimal128(6, 2),
            DataType::Decimal128(4, 0),
            DataType::Decimal128(5, 0),
            DataType::Decimal128(5, 1)
        ]
    );
}

#[tokio::test]
async fn ceil_and_floor_give_a_bigint_or_a_decimal_of_no_scale() {
    // Spark: 3, -3, 3 (ceiling), 5, 3 (of a FLOAT), 3 (of a string), 0 (NaN), the BIGINT
    // bounds for infinities and 1e20; all bigint.
    let (values, types) = only_row(
        "SELECT ceil(2.1), floor(-2.1), ceiling(2.1), ceil(CAST(5 AS INT)), \
         ceil(CAST(2.5 AS FLOAT)), ceil('2.5'), ceil(CAST('NaN' AS DOUBLE)), \
         ceil(CAST('Infinity' AS DOUBLE)), floor(CAST('-Infinity' AS DOUBLE)), ceil(1e20), \
         floor('-2.5'), ceil(-0.5)",
    )
    .await;
    assert_eq!(
        values,
        [
            "3",
            "-3",
            "3",
            "5",
            "3",
            "3",
            "0",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775807",
            "-3",
            "0"
        ]
    );
    assert!(types.iter().all(|t| t == &DataType::Int64), "{types:?}");
    // Spark: 3 decimal(4,0), -3 decimal(4,0), 2 decimal(5,0), 1 decimal(1,0), 100
    // decimal(3,0).
    let (values, types) = only_row(
        "SELECT ceil(CAST(2.1 AS DECIMAL(5,2))), floor(CAST(-2.1 AS DECIMAL(5,2))), \
         ceil(CAST(2 AS DECIMAL(5,0))), ceil(CAST(0.5 AS DECIMAL(3,3))), \
         ceil(CAST(99.5 AS DECIMAL(3,1)))",
    )
    .await;
    assert_eq!(values, ["3", "-3", "2", "1", "100"]);
    assert_eq!(
        types,
        [
            DataType::Decimal128(4, 0),
            DataType::Decimal128(4, 0),
            DataType::Decimal128(5, 0),
            DataType::Decimal128(1, 0),
            DataType::Decimal128(3, 0)
        ]
    );
}

#[tokio::test]
async fn ceil_and_floor_to_decimal_places_give_sparks_decimals() {
    // Spark: 3.15 decimal(18,2), 3.14 decimal(18,2), 1300 decimal(16,0), -1300, 4
    // decimal(16,0), 1.01 and 1.00 (the DOUBLE 1.005 read as 1.005000000000000), NULL
    // (beyond DECIMAL(30,15)), NULL (NaN), -130.
    let (values, types) = only_row(
        "SELECT ceil(3.14159, 2), floor(3.14159, 2), ceil(1234.0, -2), floor(-1234.5, -2), \
         ceil(3.14159, 0), ceil(1.005, 2), floor(1.005, 2), ceil(1e20, 2), \
         ceil(CAST('NaN' AS DOUBLE), 2), floor(-123.456, -1)",
    )
    .await;
    assert_eq!(
        values,
        ["3.15", "3.14", "1300", "-1300", "4", "1.01", "1.00", "NULL", "NULL", "-130"]
    );
    assert_eq!(types[0], DataType::Decimal128(18, 2));
    assert_eq!(types[2], DataType::Decimal128(16, 0));
    assert_eq!(types[4], DataType::Decimal128(16, 0));
    // Spark: 3.15 decimal(8,2), 1300 decimal(11,0) (an INT), 1200 decimal(21,0) (a
    // BIGINT), 1234 decimal(11,0), 2.5 decimal(9,1) (a FLOAT), -1 decimal(2,0).
    let (values, types) = only_row(
        "SELECT ceil(CAST(3.14159 AS DECIMAL(10,5)), 2), ceil(CAST(1234 AS INT), -2), \
         floor(CAST(1234 AS BIGINT), -2), ceil(CAST(1234 AS INT), 2), \
         ceil(CAST(2.5 AS FLOAT), 1), floor(CAST(-0.5 AS DECIMAL(2,1)), 0)",
    )
    .await;
    assert_eq!(values, ["3.15", "1300", "1200", "1234", "2.5", "-1"]);
    assert_eq!(
        types,
        [
            DataType::Decimal128(8, 2),
            DataType::Decimal128(11, 0),
            DataType::Decimal128(21, 0),
            DataType::Decimal128(11, 0),
            DataType::Decimal128(9, 1),
            DataType::Decimal128(2, 0)
        ]
    );
}
