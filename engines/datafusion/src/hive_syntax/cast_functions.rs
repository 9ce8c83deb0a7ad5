//! Spark's casts written as functions, `int(x)`, `string(x)`, `date(x)` and the other type
//! names: read as `CAST(x AS type)`, so that they convert exactly as a CAST does here (a
//! value that does not convert is NULL, as in Hive).

use datafusion::sql::sqlparser::ast::{
    CastKind, DataType as SqlDataType, ExactNumberInfo, Expr, TimezoneInfo,
};

/// The SQL type a cast function's name stands for, as Spark names them.
fn type_named(name: &str) -> Option<SqlDataType> {
    Some(match name.to_ascii_lowercase().as_str() {
        "boolean" => SqlDataType::Boolean,
        "tinyint" => SqlDataType::TinyInt(None),
        "smallint" => SqlDataType::SmallInt(None),
        "int" => SqlDataType::Int(None),
        "bigint" => SqlDataType::BigInt(None),
        "float" => SqlDataType::Float(ExactNumberInfo::None),
        "double" => SqlDataType::Double(ExactNumberInfo::None),
        // Spark's `decimal(x)` is DECIMAL(10, 0), the type's default.
        "decimal" => SqlDataType::Decimal(ExactNumberInfo::PrecisionAndScale(10, 0)),
        "date" => SqlDataType::Date,
        "timestamp" => SqlDataType::Timestamp(None, TimezoneInfo::None),
        "string" => SqlDataType::String(None),
        "binary" => SqlDataType::Binary(None),
        _ => return None,
    })
}

/// `int(x)` (a plain call of one argument) as `CAST(x AS INT)`; anything else is left as
/// it is.
pub(super) fn as_cast(expr: &mut Expr) {
    let Some((name, args)) = super::plain_call(expr) else {
        return;
    };
    let (Some(data_type), [value]) = (type_named(&name), args.as_slice()) else {
        return;
    };
    *expr = Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new((*value).clone()),
        data_type,
        array: false,
        format: None,
    };
}

#[cfg(test)]
mod tests {
    use crate::test_util::{engine, lines, open};

    #[tokio::test]
    async fn a_type_named_as_a_function_casts_as_cast_does() {
        let engine = engine().await;
        let session = open(&engine);
        let rows = lines(
            &engine,
            &session,
            "SELECT concat_ws(',', string(1), int('5'), int('12.7'), int('abc') IS NULL, \
             bigint(3.9), double('1.5'), boolean('true'), date('2024-01-31'), \
             timestamp('2024-01-31 10:00:00'), decimal('2.5'), tinyint(300), \
             smallint('7'), float('0.5'))",
        )
        .await;
        assert_eq!(
            rows[3].trim_matches(|c| c == '|' || c == ' '),
            "1,5,12,true,3,1.5,true,2024-01-31,2024-01-31 10:00:00,3,44,7,0.5"
        );
        let types = lines(
            &engine,
            &session,
            "SELECT arrow_typeof(int('1')), arrow_typeof(string(1)), arrow_typeof(binary('a'))",
        )
        .await;
        assert!(
            types[3].contains("Int32") && types[3].contains("Utf8") && types[3].contains("Binary"),
            "{types:?}"
        );
    }
}
