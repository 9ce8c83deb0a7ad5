//! Arrow types as HiveServer2 types: the `TTypeDesc` of a result column, the Thrift column
//! a type travels in, and the JDBC facts (type name, `java.sql.Types` code, size) that the
//! metadata operations report.
//!
//! Hive's own mapping is the reference, because clients decode values by the type id they
//! are told: Hive JDBC parses a DECIMAL column's strings with `BigDecimal`, an
//! INTERVAL_DAY_TIME column's with `HiveIntervalDayTime.valueOf`, and so on. Arrow types
//! that Hive lacks travel as the nearest Hive type whose values carry them exactly (unsigned
//! integers widen; `UInt64` becomes `DECIMAL(20,0)`), or as STRING text when none does
//! (times of day, month-day-nano intervals). Complex types are described, as Hive's
//! `TypeDescriptor` does, by a single primitive entry (ARRAY_TYPE, MAP_TYPE, ...) and their
//! values travel as JSON text.

use std::collections::BTreeMap;

use datafusion::arrow::datatypes::{DataType, IntervalUnit, Schema};
use kumiho_thrift::cli::{
    TColumnDesc, TPrimitiveTypeEntry, TTableSchema, TTypeDesc, TTypeEntry, TTypeId,
    TTypeQualifierValue, TTypeQualifiers,
};

/// `u64::MAX` has 20 digits, so `UInt64` values fit `DECIMAL(20,0)` exactly.
const UINT64_DECIMAL_PRECISION: i32 = 20;

/// The `TTypeDesc` of a column of this Arrow type: one primitive entry, with `precision`
/// and `scale` qualifiers for decimals.
pub fn type_desc(dt: &DataType) -> TTypeDesc {
    let qualifiers = decimal_precision_scale(dt).map(|(precision, scale)| {
        TTypeQualifiers::new(BTreeMap::from([
            (
                "precision".to_owned(),
                TTypeQualifierValue::I32Value(precision),
            ),
            ("scale".to_owned(), TTypeQualifierValue::I32Value(scale)),
        ]))
    });
    TTypeDesc::new(vec![TTypeEntry::PrimitiveEntry(TPrimitiveTypeEntry::new(
        type_id(dt),
        qualifiers,
    ))])
}

/// The result set metadata (GetResultSetMetadata) of a schema; positions count from 1, as
/// in Hive.
pub fn table_schema(schema: &Schema) -> TTableSchema {
    let columns = schema
        .fields()
        .iter()
        .zip(1..)
        .map(|(field, position)| {
            TColumnDesc::new(
                field.name().clone(),
                type_desc(field.data_type()),
                position,
                None,
            )
        })
        .collect();
    TTableSchema::new(columns)
}

/// The Hive type a column of this Arrow type is presented as.
pub(crate) fn type_id(dt: &DataType) -> TTypeId {
    match dt {
        DataType::Null => TTypeId::NULL_TYPE,
        DataType::Boolean => TTypeId::BOOLEAN_TYPE,
        DataType::Int8 => TTypeId::TINYINT_TYPE,
        DataType::Int16 | DataType::UInt8 => TTypeId::SMALLINT_TYPE,
        DataType::Int32 | DataType::UInt16 => TTypeId::INT_TYPE,
        DataType::Int64 | DataType::UInt32 => TTypeId::BIGINT_TYPE,
        DataType::UInt64
        | DataType::Decimal32(..)
        | DataType::Decimal64(..)
        | DataType::Decimal128(..)
        | DataType::Decimal256(..) => TTypeId::DECIMAL_TYPE,
        DataType::Float16 | DataType::Float32 => TTypeId::FLOAT_TYPE,
        DataType::Float64 => TTypeId::DOUBLE_TYPE,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => TTypeId::STRING_TYPE,
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => TTypeId::BINARY_TYPE,
        DataType::Date32 | DataType::Date64 => TTypeId::DATE_TYPE,
        DataType::Timestamp(..) => TTypeId::TIMESTAMP_TYPE,
        DataType::Interval(IntervalUnit::YearMonth) => TTypeId::INTERVAL_YEAR_MONTH_TYPE,
        DataType::Interval(IntervalUnit::DayTime) | DataType::Duration(_) => {
            TTypeId::INTERVAL_DAY_TIME_TYPE
        }
        // Months and days-with-nanoseconds together fit neither Hive interval type.
        DataType::Interval(IntervalUnit::MonthDayNano) => TTypeId::STRING_TYPE,
        // Hive has no time-of-day type.
        DataType::Time32(_) | DataType::Time64(_) => TTypeId::STRING_TYPE,
        DataType::List(_)
        | DataType::LargeList(_)
        | DataType::FixedSizeList(..)
        | DataType::ListView(_)
        | DataType::LargeListView(_) => TTypeId::ARRAY_TYPE,
        DataType::Struct(_) => TTypeId::STRUCT_TYPE,
        DataType::Map(..) => TTypeId::MAP_TYPE,
        DataType::Union(..) => TTypeId::UNION_TYPE,
        DataType::Dictionary(_, value) => type_id(value),
        DataType::RunEndEncoded(_, values) => type_id(values.data_type()),
    }
}

/// The Thrift column (`TColumn` union member) that carries values of a Hive type, by
/// Hive's rule: the numeric types in their own lists, everything else as strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WireColumn {
    Bool,
    Byte,
    I16,
    I32,
    I64,
    Double,
    String,
    Binary,
}

impl WireColumn {
    pub(crate) fn of(dt: &DataType) -> Self {
        match type_id(dt) {
            TTypeId::BOOLEAN_TYPE => Self::Bool,
            TTypeId::TINYINT_TYPE => Self::Byte,
            TTypeId::SMALLINT_TYPE => Self::I16,
            TTypeId::INT_TYPE => Self::I32,
            TTypeId::BIGINT_TYPE => Self::I64,
            TTypeId::FLOAT_TYPE | TTypeId::DOUBLE_TYPE => Self::Double,
            TTypeId::BINARY_TYPE => Self::Binary,
            _ => Self::String,
        }
    }
}

/// Precision and scale of a type presented as DECIMAL. A negative Arrow scale (the value
/// is the digits times a power of ten) is presented as scale 0 with the extra digits
/// counted in the precision, because Hive decimals cannot have negative scales.
pub(crate) fn decimal_precision_scale(dt: &DataType) -> Option<(i32, i32)> {
    let (precision, scale) = match dt {
        DataType::UInt64 => return Some((UINT64_DECIMAL_PRECISION, 0)),
        DataType::Decimal32(p, s)
        | DataType::Decimal64(p, s)
        | DataType::Decimal128(p, s)
        | DataType::Decimal256(p, s) => (i32::from(*p), i32::from(*s)),
        DataType::Dictionary(_, value) => return decimal_precision_scale(value),
        DataType::RunEndEncoded(_, values) => return decimal_precision_scale(values.data_type()),
        _ => return None,
    };
    Some(if scale < 0 {
        (precision - scale, 0)
    } else {
        (precision, scale)
    })
}

/// The name JDBC metadata reports for a column type (`TYPE_NAME`): Hive's upper-case name
/// for primitive types (`INT`, `DECIMAL`, `STRING`) and the full lower-case type for complex
/// ones (`array<int>`, `map<string,bigint>`, `struct<a:int,b:string>`), as Hive does.
pub(crate) fn type_name(dt: &DataType) -> String {
    let id = type_id(dt);
    if is_complex(id) {
        type_string(dt)
    } else {
        primitive_name(id).to_owned()
    }
}

/// Hive's full type string in lower case, as DESCRIBE shows a column's type: `bigint`,
/// `decimal(15,2)`, `array<map<string,int>>`, `struct<a:int,b:string>`.
pub(crate) fn type_string(dt: &DataType) -> String {
    let mut text = String::new();
    write_type_string(dt, &mut text);
    text
}

/// Hive's name of a type id (`Type.getName()`).
pub(crate) fn primitive_name(id: TTypeId) -> &'static str {
    match id {
        TTypeId::NULL_TYPE => "VOID",
        TTypeId::BOOLEAN_TYPE => "BOOLEAN",
        TTypeId::TINYINT_TYPE => "TINYINT",
        TTypeId::SMALLINT_TYPE => "SMALLINT",
        TTypeId::INT_TYPE => "INT",
        TTypeId::BIGINT_TYPE => "BIGINT",
        TTypeId::FLOAT_TYPE => "FLOAT",
        TTypeId::DOUBLE_TYPE => "DOUBLE",
        TTypeId::TIMESTAMP_TYPE => "TIMESTAMP",
        TTypeId::BINARY_TYPE => "BINARY",
        TTypeId::DECIMAL_TYPE => "DECIMAL",
        TTypeId::DATE_TYPE => "DATE",
        TTypeId::VARCHAR_TYPE => "VARCHAR",
        TTypeId::CHAR_TYPE => "CHAR",
        TTypeId::INTERVAL_YEAR_MONTH_TYPE => "INTERVAL_YEAR_MONTH",
        TTypeId::INTERVAL_DAY_TIME_TYPE => "INTERVAL_DAY_TIME",
        TTypeId::ARRAY_TYPE => "ARRAY",
        TTypeId::MAP_TYPE => "MAP",
        TTypeId::STRUCT_TYPE => "STRUCT",
        TTypeId::UNION_TYPE => "UNIONTYPE",
        _ => "STRING",
    }
}

fn is_complex(id: TTypeId) -> bool {
    matches!(
        id,
        TTypeId::ARRAY_TYPE | TTypeId::MAP_TYPE | TTypeId::STRUCT_TYPE | TTypeId::UNION_TYPE
    )
}

/// Hive's type string (`decimal(10,2)`, `array<map<string,int>>`), lower case.
fn write_type_string(dt: &DataType, out: &mut String) {
    match dt {
        DataType::List(item)
        | DataType::LargeList(item)
        | DataType::FixedSizeList(item, _)
        | DataType::ListView(item)
        | DataType::LargeListView(item) => {
            out.push_str("array<");
            write_type_string(item.data_type(), out);
            out.push('>');
        }
        DataType::Map(entries, _) => {
            out.push_str("map<");
            if let DataType::Struct(kv) = entries.data_type() {
                for (i, field) in kv.iter().take(2).enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_type_string(field.data_type(), out);
                }
            }
            out.push('>');
        }
        DataType::Struct(fields) => {
            out.push_str("struct<");
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(field.name());
                out.push(':');
                write_type_string(field.data_type(), out);
            }
            out.push('>');
        }
        DataType::Union(fields, _) => {
            out.push_str("uniontype<");
            for (i, (_, field)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_type_string(field.data_type(), out);
            }
            out.push('>');
        }
        DataType::Dictionary(_, value) => write_type_string(value, out),
        DataType::RunEndEncoded(_, values) => write_type_string(values.data_type(), out),
        _ => {
            let id = type_id(dt);
            out.push_str(&primitive_name(id).to_ascii_lowercase());
            if let Some((precision, scale)) = decimal_precision_scale(dt) {
                out.push_str(&format!("({precision},{scale})"));
            }
        }
    }
}

/// The `java.sql.Types` code JDBC metadata reports for a Hive type (Hive's
/// `Type.toJavaSQLType`).
pub(crate) fn jdbc_type(id: TTypeId) -> i32 {
    match id {
        TTypeId::NULL_TYPE => jdbc::NULL,
        TTypeId::BOOLEAN_TYPE => jdbc::BOOLEAN,
        TTypeId::TINYINT_TYPE => jdbc::TINYINT,
        TTypeId::SMALLINT_TYPE => jdbc::SMALLINT,
        TTypeId::INT_TYPE => jdbc::INTEGER,
        TTypeId::BIGINT_TYPE => jdbc::BIGINT,
        TTypeId::FLOAT_TYPE => jdbc::FLOAT,
        TTypeId::DOUBLE_TYPE => jdbc::DOUBLE,
        TTypeId::STRING_TYPE | TTypeId::VARCHAR_TYPE => jdbc::VARCHAR,
        TTypeId::CHAR_TYPE => jdbc::CHAR,
        TTypeId::DATE_TYPE => jdbc::DATE,
        TTypeId::TIMESTAMP_TYPE => jdbc::TIMESTAMP,
        TTypeId::BINARY_TYPE => jdbc::BINARY,
        TTypeId::DECIMAL_TYPE => jdbc::DECIMAL,
        TTypeId::ARRAY_TYPE => jdbc::ARRAY,
        TTypeId::MAP_TYPE => jdbc::JAVA_OBJECT,
        TTypeId::STRUCT_TYPE => jdbc::STRUCT,
        _ => jdbc::OTHER,
    }
}

/// `java.sql.Types` codes.
pub(crate) mod jdbc {
    pub const NULL: i32 = 0;
    pub const BOOLEAN: i32 = 16;
    pub const TINYINT: i32 = -6;
    pub const SMALLINT: i32 = 5;
    pub const INTEGER: i32 = 4;
    pub const BIGINT: i32 = -5;
    pub const FLOAT: i32 = 6;
    pub const DOUBLE: i32 = 8;
    pub const VARCHAR: i32 = 12;
    pub const CHAR: i32 = 1;
    pub const DATE: i32 = 91;
    pub const TIMESTAMP: i32 = 93;
    pub const BINARY: i32 = -2;
    pub const DECIMAL: i32 = 3;
    pub const ARRAY: i32 = 2003;
    pub const JAVA_OBJECT: i32 = 2000;
    pub const STRUCT: i32 = 2002;
    pub const OTHER: i32 = 1111;
}

/// Whether Hive counts a type as numeric (`Type.isNumericType`).
pub(crate) fn is_numeric(id: TTypeId) -> bool {
    matches!(
        id,
        TTypeId::TINYINT_TYPE
            | TTypeId::SMALLINT_TYPE
            | TTypeId::INT_TYPE
            | TTypeId::BIGINT_TYPE
            | TTypeId::FLOAT_TYPE
            | TTypeId::DOUBLE_TYPE
            | TTypeId::DECIMAL_TYPE
    )
}

/// The largest precision of a numeric Hive type (`Type.getMaxPrecision`).
pub(crate) fn max_precision(id: TTypeId) -> Option<i32> {
    match id {
        TTypeId::TINYINT_TYPE => Some(3),
        TTypeId::SMALLINT_TYPE => Some(5),
        TTypeId::INT_TYPE => Some(10),
        TTypeId::BIGINT_TYPE => Some(19),
        TTypeId::FLOAT_TYPE => Some(7),
        TTypeId::DOUBLE_TYPE => Some(15),
        TTypeId::DECIMAL_TYPE => Some(38),
        _ => None,
    }
}

/// `COLUMN_SIZE` of a column (Hive's `TypeDescriptor.getColumnSize`): the precision of
/// numbers, the longest text of dates and timestamps, unbounded strings as `i32::MAX`.
pub(crate) fn column_size(dt: &DataType) -> Option<i32> {
    let id = type_id(dt);
    if let Some((precision, _)) = decimal_precision_scale(dt) {
        return Some(precision);
    }
    if is_numeric(id) {
        return max_precision(id);
    }
    match id {
        TTypeId::STRING_TYPE | TTypeId::BINARY_TYPE => Some(i32::MAX),
        TTypeId::DATE_TYPE => Some(10),
        TTypeId::TIMESTAMP_TYPE => Some(29),
        _ => None,
    }
}

/// `DECIMAL_DIGITS` of a column (Hive's `TypeDescriptor.getDecimalDigits`).
pub(crate) fn decimal_digits(dt: &DataType) -> Option<i32> {
    match type_id(dt) {
        TTypeId::BOOLEAN_TYPE
        | TTypeId::TINYINT_TYPE
        | TTypeId::SMALLINT_TYPE
        | TTypeId::INT_TYPE
        | TTypeId::BIGINT_TYPE => Some(0),
        TTypeId::FLOAT_TYPE => Some(7),
        TTypeId::DOUBLE_TYPE => Some(15),
        TTypeId::DECIMAL_TYPE => decimal_precision_scale(dt).map(|(_, scale)| scale),
        TTypeId::TIMESTAMP_TYPE => Some(9),
        _ => None,
    }
}

/// `NUM_PREC_RADIX`: 10 for numeric types, none otherwise.
pub(crate) fn num_prec_radix(id: TTypeId) -> Option<i32> {
    is_numeric(id).then_some(10)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::datatypes::{Field, Fields, TimeUnit, UnionFields, UnionMode};

    use super::*;

    fn primitive(desc: &TTypeDesc) -> &TPrimitiveTypeEntry {
        match desc.types.as_slice() {
            [TTypeEntry::PrimitiveEntry(entry)] => entry,
            other => panic!("expected one primitive entry, got {other:?}"),
        }
    }

    #[test]
    fn decimals_carry_precision_and_scale() {
        let desc = type_desc(&DataType::Decimal128(10, 2));
        let entry = primitive(&desc);
        assert_eq!(entry.type_, TTypeId::DECIMAL_TYPE);
        let qualifiers = &entry.type_qualifiers.as_ref().unwrap().qualifiers;
        assert_eq!(
            qualifiers.get("precision"),
            Some(&TTypeQualifierValue::I32Value(10))
        );
        assert_eq!(
            qualifiers.get("scale"),
            Some(&TTypeQualifierValue::I32Value(2))
        );
    }

    #[test]
    fn uint64_is_a_twenty_digit_decimal() {
        let desc = type_desc(&DataType::UInt64);
        let entry = primitive(&desc);
        assert_eq!(entry.type_, TTypeId::DECIMAL_TYPE);
        let qualifiers = &entry.type_qualifiers.as_ref().unwrap().qualifiers;
        assert_eq!(
            qualifiers.get("precision"),
            Some(&TTypeQualifierValue::I32Value(20))
        );
        assert_eq!(
            qualifiers.get("scale"),
            Some(&TTypeQualifierValue::I32Value(0))
        );
    }

    #[test]
    fn negative_scales_become_wider_integers() {
        assert_eq!(
            decimal_precision_scale(&DataType::Decimal128(5, -3)),
            Some((8, 0))
        );
    }

    #[test]
    fn other_types_have_no_qualifiers() {
        for dt in [
            DataType::Int32,
            DataType::Utf8,
            DataType::Timestamp(TimeUnit::Nanosecond, None),
            DataType::List(Arc::new(Field::new_list_field(DataType::Int32, true))),
        ] {
            assert_eq!(primitive(&type_desc(&dt)).type_qualifiers, None, "{dt}");
        }
    }

    #[test]
    fn types_map_as_hive_presents_them() {
        let cases = [
            (DataType::Null, TTypeId::NULL_TYPE, WireColumn::String),
            (DataType::Boolean, TTypeId::BOOLEAN_TYPE, WireColumn::Bool),
            (DataType::Int8, TTypeId::TINYINT_TYPE, WireColumn::Byte),
            (DataType::UInt8, TTypeId::SMALLINT_TYPE, WireColumn::I16),
            (DataType::UInt16, TTypeId::INT_TYPE, WireColumn::I32),
            (DataType::UInt32, TTypeId::BIGINT_TYPE, WireColumn::I64),
            (DataType::UInt64, TTypeId::DECIMAL_TYPE, WireColumn::String),
            (DataType::Float16, TTypeId::FLOAT_TYPE, WireColumn::Double),
            (DataType::Float64, TTypeId::DOUBLE_TYPE, WireColumn::Double),
            (DataType::Utf8View, TTypeId::STRING_TYPE, WireColumn::String),
            (
                DataType::FixedSizeBinary(4),
                TTypeId::BINARY_TYPE,
                WireColumn::Binary,
            ),
            (DataType::Date64, TTypeId::DATE_TYPE, WireColumn::String),
            (
                DataType::Timestamp(TimeUnit::Microsecond, Some("+02:00".into())),
                TTypeId::TIMESTAMP_TYPE,
                WireColumn::String,
            ),
            (
                DataType::Time64(TimeUnit::Nanosecond),
                TTypeId::STRING_TYPE,
                WireColumn::String,
            ),
            (
                DataType::Interval(IntervalUnit::YearMonth),
                TTypeId::INTERVAL_YEAR_MONTH_TYPE,
                WireColumn::String,
            ),
            (
                DataType::Duration(TimeUnit::Second),
                TTypeId::INTERVAL_DAY_TIME_TYPE,
                WireColumn::String,
            ),
            (
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                TTypeId::STRING_TYPE,
                WireColumn::String,
            ),
        ];
        for (dt, id, wire) in cases {
            assert_eq!(type_id(&dt), id, "{dt}");
            assert_eq!(WireColumn::of(&dt), wire, "{dt}");
        }
    }

    #[test]
    fn complex_type_names_are_hive_type_strings() {
        let int_list = DataType::List(Arc::new(Field::new_list_field(DataType::Int32, true)));
        assert_eq!(type_name(&int_list), "array<int>");
        let entries = Field::new(
            "entries",
            DataType::Struct(Fields::from(vec![
                Field::new("key", DataType::Utf8, false),
                Field::new("value", DataType::Decimal128(10, 2), true),
            ])),
            false,
        );
        let map = DataType::Map(Arc::new(entries), false);
        assert_eq!(type_name(&map), "map<string,decimal(10,2)>");
        let record = DataType::Struct(Fields::from(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", int_list, true),
        ]));
        assert_eq!(type_name(&record), "struct<a:bigint,b:array<int>>");
        let union = DataType::Union(
            UnionFields::try_new(
                [0, 1],
                [
                    Field::new("i", DataType::Int32, true),
                    Field::new("s", DataType::Utf8, true),
                ],
            )
            .unwrap(),
            UnionMode::Dense,
        );
        assert_eq!(type_name(&union), "uniontype<int,string>");
        assert_eq!(type_name(&DataType::Decimal128(10, 2)), "DECIMAL");
        assert_eq!(type_string(&DataType::Decimal128(10, 2)), "decimal(10,2)");
        assert_eq!(type_string(&DataType::UInt64), "decimal(20,0)");
        assert_eq!(type_string(&DataType::Int64), "bigint");
        assert_eq!(type_name(&DataType::Utf8), "STRING");
    }

    #[test]
    fn table_schema_numbers_columns_from_one() {
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]);
        let table = table_schema(&schema);
        let described: Vec<_> = table
            .columns
            .iter()
            .map(|c| {
                (
                    c.column_name.as_str(),
                    c.position,
                    primitive(&c.type_desc).type_,
                )
            })
            .collect();
        assert_eq!(
            described,
            [
                ("id", 1, TTypeId::BIGINT_TYPE),
                ("name", 2, TTypeId::STRING_TYPE)
            ]
        );
    }

    #[test]
    fn jdbc_facts_follow_hive() {
        assert_eq!(jdbc_type(type_id(&DataType::Utf8)), jdbc::VARCHAR);
        assert_eq!(column_size(&DataType::Int32), Some(10));
        assert_eq!(column_size(&DataType::Decimal128(12, 3)), Some(12));
        assert_eq!(decimal_digits(&DataType::Decimal128(12, 3)), Some(3));
        assert_eq!(
            column_size(&DataType::Timestamp(TimeUnit::Nanosecond, None)),
            Some(29)
        );
        assert_eq!(num_prec_radix(type_id(&DataType::Utf8)), None);
        assert_eq!(num_prec_radix(type_id(&DataType::Float64)), Some(10));
    }
}
