use kumiho_thrift::cli::{
    TBinaryColumn, TBoolColumn, TBoolValue, TByteColumn, TDoubleColumn, TI16Column, TI32Column,
    TI32Value, TI64Column, TPrimitiveTypeEntry, TRow, TStringColumn, TStringValue, TTypeDesc,
    TTypeQualifiers,
};
use serde_json::json;
use thrift::OrderedFloat;

use super::*;

fn columnar(columns: Vec<TColumn>) -> Option<TRowSet> {
    Some(TRowSet {
        start_row_offset: 0,
        rows: Vec::new(),
        columns: Some(columns),
        binary_columns: None,
        column_count: None,
    })
}

fn json_of<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap()
}

#[test]
fn columnar_rows_of_every_column_kind_with_nulls_become_kyuubi_fields() {
    // Three rows; row 1 is null in every column (bit 1 of byte 0: LSB first).
    let nulls = vec![0b010];
    let rows = rows(columnar(vec![
        TColumn::BoolVal(TBoolColumn::new(vec![true, false, false], nulls.clone())),
        TColumn::ByteVal(TByteColumn::new(vec![-1, 0, 7], nulls.clone())),
        TColumn::I16Val(TI16Column::new(vec![300, 0, -300], nulls.clone())),
        TColumn::I32Val(TI32Column::new(vec![1, 0, i32::MIN], nulls.clone())),
        TColumn::I64Val(TI64Column::new(vec![i64::MAX, 0, -5], nulls.clone())),
        TColumn::DoubleVal(TDoubleColumn::new(
            vec![OrderedFloat(1.5), OrderedFloat(0.0), OrderedFloat(f64::NAN)],
            nulls.clone(),
        )),
        // Decimals, dates and timestamps travel as the engine's strings.
        TColumn::StringVal(TStringColumn::new(
            vec![
                "12.50".into(),
                String::new(),
                "2026-12-01 03:04:05.123".into(),
            ],
            nulls.clone(),
        )),
        TColumn::BinaryVal(TBinaryColumn::new(
            vec![b"hi".to_vec(), Vec::new(), vec![0, 255]],
            nulls.clone(),
        )),
    ]));
    assert_eq!(rows.row_count, 3);
    assert_eq!(
        json_of(&rows.rows[0]),
        json!({"fields": [
            {"dataType": "BOOL_VAL", "value": true},
            {"dataType": "BYTE_VAL", "value": -1},
            {"dataType": "I16_VAL", "value": 300},
            {"dataType": "I32_VAL", "value": 1},
            {"dataType": "I64_VAL", "value": i64::MAX},
            {"dataType": "DOUBLE_VAL", "value": 1.5},
            {"dataType": "STRING_VAL", "value": "12.50"},
            {"dataType": "BINARY_VAL", "value": "aGk="},
        ]})
    );
    let nulls: Vec<Value> = rows.rows[1]
        .fields
        .iter()
        .map(|f| f.value.clone())
        .collect();
    assert_eq!(nulls, vec![Value::Null; 8], "row 1 is null everywhere");
    assert_eq!(
        json_of(&rows.rows[2])["fields"],
        json!([
            {"dataType": "BOOL_VAL", "value": false},
            {"dataType": "BYTE_VAL", "value": 7},
            {"dataType": "I16_VAL", "value": -300},
            {"dataType": "I32_VAL", "value": i32::MIN},
            {"dataType": "I64_VAL", "value": -5},
            {"dataType": "DOUBLE_VAL", "value": "NaN"},
            {"dataType": "STRING_VAL", "value": "2026-12-01 03:04:05.123"},
            {"dataType": "BINARY_VAL", "value": "AP8="},
        ])
    );
}

#[test]
fn null_bitmaps_are_read_past_the_first_byte_and_may_be_short() {
    // 10 rows: row 9 is null (byte 1, bit 1); a bitmap of one byte says nothing of rows 8-9.
    let values: Vec<i32> = (0..10).collect();
    let long = rows(columnar(vec![TColumn::I32Val(TI32Column::new(
        values.clone(),
        vec![0b1000_0001, 0b10],
    ))]));
    let read: Vec<Value> = long
        .rows
        .iter()
        .map(|r| r.fields[0].value.clone())
        .collect();
    let mut expected: Vec<Value> = values.iter().map(|&v| json!(v)).collect();
    expected[0] = Value::Null;
    expected[7] = Value::Null;
    expected[9] = Value::Null;
    assert_eq!(read, expected);
    let short = rows(columnar(vec![TColumn::I32Val(TI32Column::new(
        values,
        vec![],
    ))]));
    assert!(short.rows.iter().all(|r| !r.fields[0].value.is_null()));
}

#[test]
fn a_column_shorter_than_the_first_reads_as_null_instead_of_failing() {
    let set = rows(columnar(vec![
        TColumn::I32Val(TI32Column::new(vec![1, 2], vec![])),
        TColumn::StringVal(TStringColumn::new(vec!["a".into()], vec![])),
    ]));
    assert_eq!(
        json_of(&set.rows[1])["fields"],
        json!([{"dataType": "I32_VAL", "value": 2}, {"dataType": "STRING_VAL", "value": null}])
    );
}

#[test]
fn infinite_doubles_are_written_as_jackson_writes_them() {
    let set = rows(columnar(vec![TColumn::DoubleVal(TDoubleColumn::new(
        vec![OrderedFloat(f64::INFINITY), OrderedFloat(f64::NEG_INFINITY)],
        vec![],
    ))]));
    assert_eq!(set.rows[0].fields[0].value, json!("Infinity"));
    assert_eq!(set.rows[1].fields[0].value, json!("-Infinity"));
}

#[test]
fn row_based_sets_and_empty_ones_convert_too() {
    let set = rows(Some(TRowSet {
        start_row_offset: 0,
        rows: vec![TRow::new(vec![
            TColumnValue::I32Val(TI32Value::new(42)),
            TColumnValue::StringVal(TStringValue::new(None)),
            TColumnValue::BoolVal(TBoolValue::new(true)),
        ])],
        columns: None,
        binary_columns: None,
        column_count: None,
    }));
    assert_eq!(
        json_of(&set),
        json!({"rows": [{"fields": [
            {"dataType": "I32_VAL", "value": 42},
            {"dataType": "STRING_VAL", "value": null},
            {"dataType": "BOOL_VAL", "value": true},
        ]}], "rowCount": 1})
    );
    assert_eq!(json_of(&rows(None)), json!({"rows": [], "rowCount": 0}));
    assert_eq!(
        json_of(&rows(columnar(vec![]))),
        json!({"rows": [], "rowCount": 0})
    );
}

#[test]
fn metadata_names_thrift_types_and_reads_decimal_qualifiers() {
    let column = |name: &str, type_: TTypeId, qualifiers: Option<TTypeQualifiers>| TColumnDesc {
        column_name: name.to_owned(),
        type_desc: TTypeDesc {
            types: vec![TTypeEntry::PrimitiveEntry(TPrimitiveTypeEntry {
                type_,
                type_qualifiers: qualifiers,
            })],
        },
        position: 1,
        comment: None,
    };
    let decimal = TTypeQualifiers::new(BTreeMap::from([
        ("precision".to_owned(), TTypeQualifierValue::I32Value(10)),
        ("scale".to_owned(), TTypeQualifierValue::I32Value(2)),
    ]));
    let meta = metadata(&[
        column("id", TTypeId::INT_TYPE, None),
        column("price", TTypeId::DECIMAL_TYPE, Some(decimal)),
        column("at", TTypeId::TIMESTAMP_TYPE, None),
    ]);
    assert_eq!(
        json_of(&meta),
        json!({"columns": [
            {"columnName": "id", "dataType": "INT_TYPE", "columnIndex": 1, "precision": 0, "scale": 0, "comment": null},
            {"columnName": "price", "dataType": "DECIMAL_TYPE", "columnIndex": 1, "precision": 10, "scale": 2, "comment": null},
            {"columnName": "at", "dataType": "TIMESTAMP_TYPE", "columnIndex": 1, "precision": 0, "scale": 0, "comment": null},
        ]})
    );
    assert_eq!(type_name(TTypeId(99)), "TYPE_99");
}

#[test]
fn log_lines_come_from_the_first_string_column() {
    let log = log_lines(columnar(vec![TColumn::StringVal(TStringColumn::new(
        vec!["one".into(), "two".into()],
        vec![],
    ))]));
    assert_eq!(
        json_of(&log),
        json!({"logRowSet": ["one", "two"], "rowCount": 2})
    );
    assert_eq!(log_lines(None).row_count, 0);
}

#[test]
fn requests_take_kyuubi_names_and_coerce_setting_values_to_strings() {
    let open: SessionOpenRequest = serde_json::from_value(json!({
        "configs": {"kyuubi.engine.pool.size": 2, "spark.ui.enabled": false, "a": "b", "gone": null}
    }))
    .unwrap();
    assert_eq!(
        open.configs,
        BTreeMap::from([
            ("a".to_owned(), "b".to_owned()),
            ("kyuubi.engine.pool.size".to_owned(), "2".to_owned()),
            ("spark.ui.enabled".to_owned(), "false".to_owned()),
        ])
    );
    let nested = serde_json::from_value::<SessionOpenRequest>(json!({"configs": {"a": {"b": 1}}}));
    assert!(nested.unwrap_err().to_string().contains("setting `a`"));
    let statement: StatementRequest = serde_json::from_value(json!({
        "statement": "SELECT 1", "runAsync": true, "queryTimeout": 30, "confOverlay": {"k": "v"}
    }))
    .unwrap();
    assert!(statement.run_async);
    assert_eq!(statement.query_timeout, 30);
    assert_eq!(statement.conf_overlay["k"], "v");
    let bare: StatementRequest = serde_json::from_value(json!({"statement": "SELECT 1"})).unwrap();
    assert!(!bare.run_async && bare.conf_overlay.is_empty());
    assert!(serde_json::from_value::<StatementRequest>(json!({"runAsync": true})).is_err());
}

#[test]
fn states_and_info_types_have_kyuubi_names() {
    assert_eq!(state_name(TOperationState::FINISHED_STATE), "FINISHED");
    assert_eq!(state_name(TOperationState::TIMEDOUT_STATE), "TIMEOUT");
    assert_eq!(state_name(TOperationState(42)), "UNKNOWN");
    assert_eq!(info_type(17).map(|(_, name)| name), Some("CLI_DBMS_NAME"));
    assert!(info_type(3).is_none());
    assert_eq!(info_value(&TGetInfoValue::IntegerFlag(7)), "7");
}
