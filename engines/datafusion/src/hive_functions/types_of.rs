//! Spark's `typeof(x)`: the name Spark gives the argument's type (`int`, `bigint`,
//! `string`, `decimal(10,2)`, `array<int>`, `struct<a:int>`, `map<string,int>`), a constant
//! of the query's plan.

use datafusion::arrow::datatypes::{DataType, IntervalUnit};
use datafusion::logical_expr::{lit, ScalarUDF};

use super::{bad_arguments, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![HiveFunction::rewrite(
        "typeof",
        |name, types| match types {
            [_] => Ok(types.to_vec()),
            _ => Err(bad_arguments(name, "one argument", types)),
        },
        |_| Ok(DataType::Utf8),
        |_, t| Ok(lit(spark_type_name(&t[0]))),
    )
    .udf()]
}

/// Spark's name of a type (`DataType.simpleString`). A timestamp is Spark's `timestamp`
/// whatever its unit, as the engine reads one without a zone as UTC; an unsigned integer
/// takes the name of the signed type of its width.
pub fn spark_type_name(data_type: &DataType) -> String {
    match data_type {
        DataType::Null => "void".into(),
        DataType::Boolean => "boolean".into(),
        DataType::Int8 | DataType::UInt8 => "tinyint".into(),
        DataType::Int16 | DataType::UInt16 => "smallint".into(),
        DataType::Int32 | DataType::UInt32 => "int".into(),
        DataType::Int64 | DataType::UInt64 => "bigint".into(),
        DataType::Float16 | DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Decimal32(p, s)
        | DataType::Decimal64(p, s)
        | DataType::Decimal128(p, s)
        | DataType::Decimal256(p, s) => format!("decimal({p},{s})"),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "string".into(),
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => "binary".into(),
        DataType::Date32 | DataType::Date64 => "date".into(),
        DataType::Timestamp(..) => "timestamp".into(),
        DataType::Interval(IntervalUnit::YearMonth) => "interval year to month".into(),
        DataType::Interval(IntervalUnit::DayTime) | DataType::Duration(_) => {
            "interval day to second".into()
        }
        // Months, days and nanoseconds together: Spark's calendar interval.
        DataType::Interval(IntervalUnit::MonthDayNano) => "interval".into(),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _) => format!("array<{}>", spark_type_name(f.data_type())),
        DataType::Struct(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|f| format!("{}:{}", f.name(), spark_type_name(f.data_type())))
                .collect();
            format!("struct<{}>", fields.join(","))
        }
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => format!(
                "map<{},{}>",
                spark_type_name(kv[0].data_type()),
                spark_type_name(kv[1].data_type())
            ),
            other => spark_type_name(other),
        },
        DataType::Dictionary(_, values) => spark_type_name(values),
        DataType::RunEndEncoded(_, values) => spark_type_name(values.data_type()),
        other => other.to_string().to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, open};

    // Every expected value is Spark's, but for the literals `1` (Spark's is an `int`, the
    // engine's a `bigint`) and `1.5` (Spark's a `decimal(2,1)`, the engine's a `double`).
    #[tokio::test]
    async fn typeof_names_types_as_spark() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT typeof(CAST(1 AS INT)), typeof(CAST(1 AS BIGINT)), typeof('a'), \
             typeof(array(CAST(1 AS INT))), typeof(named_struct('a', CAST(1 AS INT))), \
             typeof(CAST(1 AS DECIMAL(10, 2))), typeof(CAST(1 AS DOUBLE)), \
             typeof(CAST(1 AS FLOAT)), typeof(true), typeof(DATE '2024-01-01'), \
             typeof(TIMESTAMP '2024-01-01 00:00:00'), typeof(NULL), \
             typeof(map('a', CAST(1 AS INT))), typeof(CAST(1 AS TINYINT)), \
             typeof(CAST(1 AS SMALLINT)), typeof(X'01'), \
             typeof(named_struct('a', CAST(1 AS INT), 'b', array('x'))), \
             typeof(array(map('a', array(CAST(1 AS BIGINT)))))",
            &[
                "int",
                "bigint",
                "string",
                "array<int>",
                "struct<a:int>",
                "decimal(10,2)",
                "double",
                "float",
                "boolean",
                "date",
                "timestamp",
                "void",
                "map<string,int>",
                "tinyint",
                "smallint",
                "binary",
                "struct<a:int,b:array<string>>",
                "array<map<string,array<bigint>>>",
            ],
        )
        .await;
    }
}
