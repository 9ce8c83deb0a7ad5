//! Row sets decoded with the generated Thrift structs, as a client decodes them, and
//! compared with the Arrow values they came from.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Date64Array, Decimal128Array,
    Decimal256Array, DictionaryArray, DurationMicrosecondArray, FixedSizeBinaryArray, Float32Array,
    Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, IntervalDayTimeArray,
    IntervalYearMonthArray, LargeStringArray, ListArray, MapArray, NullArray, StringArray,
    StringViewArray, StructArray, Time32SecondArray, Time64NanosecondArray,
    TimestampMicrosecondArray, TimestampNanosecondArray, TimestampSecondArray, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array, UnionArray,
};
use datafusion::arrow::buffer::ScalarBuffer;
use datafusion::arrow::datatypes::{
    i256, DataType, Field, Fields, Int32Type, IntervalDayTime, Schema, UnionFields,
};
use kumiho_thrift::cli::{TColumn, TFetchResultsResp, TStatusCode};
use kumiho_thrift::codec::decode_result_body;

use super::*;

/// Decodes an encoded `_result` body as a client would.
fn decode(body: &[u8]) -> TFetchResultsResp {
    decode_result_body(body).expect("the encoded FetchResults result decodes")
}

/// The one batch's columns, decoded.
fn round_trip(columns: Vec<(&str, ArrayRef)>) -> Vec<TColumn> {
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let resp = decode(&encode_fetch_result(&[batch], 0, false));
    resp.results.unwrap().columns.unwrap()
}

/// Which `TColumn` member a column travels in, and its values as text with NULLs applied
/// from the bitmap, the way a client reads them.
fn shown(column: &TColumn) -> (&'static str, Vec<Option<String>>) {
    fn apply<T>(values: &[T], nulls: &[u8], show: impl Fn(&T) -> String) -> Vec<Option<String>> {
        values
            .iter()
            .enumerate()
            .map(|(row, v)| {
                let null = nulls
                    .get(row / 8)
                    .is_some_and(|b| b & (1 << (row % 8)) != 0);
                (!null).then(|| show(v))
            })
            .collect()
    }
    match column {
        TColumn::BoolVal(c) => ("bool", apply(&c.values, &c.nulls, bool::to_string)),
        TColumn::ByteVal(c) => ("byte", apply(&c.values, &c.nulls, i8::to_string)),
        TColumn::I16Val(c) => ("i16", apply(&c.values, &c.nulls, i16::to_string)),
        TColumn::I32Val(c) => ("i32", apply(&c.values, &c.nulls, i32::to_string)),
        TColumn::I64Val(c) => ("i64", apply(&c.values, &c.nulls, i64::to_string)),
        TColumn::DoubleVal(c) => ("double", apply(&c.values, &c.nulls, |v| v.0.to_string())),
        TColumn::StringVal(c) => ("string", apply(&c.values, &c.nulls, String::clone)),
        TColumn::BinaryVal(c) => ("binary", apply(&c.values, &c.nulls, |v| format!("{v:?}"))),
    }
}

fn nulls_of(column: &TColumn) -> &[u8] {
    match column {
        TColumn::BoolVal(c) => &c.nulls,
        TColumn::ByteVal(c) => &c.nulls,
        TColumn::I16Val(c) => &c.nulls,
        TColumn::I32Val(c) => &c.nulls,
        TColumn::I64Val(c) => &c.nulls,
        TColumn::DoubleVal(c) => &c.nulls,
        TColumn::StringVal(c) => &c.nulls,
        TColumn::BinaryVal(c) => &c.nulls,
    }
}

fn some(values: &[&str]) -> Vec<Option<String>> {
    values.iter().map(|v| Some((*v).to_owned())).collect()
}

/// Asserts how one single-column array arrives: its member and its text.
fn assert_shown(array: ArrayRef, wire: &str, expected: &[Option<&str>]) {
    let data_type = array.data_type().clone();
    let columns = round_trip(vec![("c", array)]);
    let expected: Vec<Option<String>> = expected.iter().map(|v| v.map(str::to_owned)).collect();
    assert_eq!(
        shown(&columns[0]),
        (wire_name(wire), expected),
        "{data_type}"
    );
}

fn wire_name(wire: &str) -> &'static str {
    [
        "bool", "byte", "i16", "i32", "i64", "double", "string", "binary",
    ]
    .into_iter()
    .find(|w| *w == wire)
    .expect("a TColumn member")
}

#[test]
fn envelope_has_status_flags_offset_and_no_rows() {
    let batch = RecordBatch::try_from_iter(vec![(
        "n",
        Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
    )])
    .unwrap();
    let resp = decode(&encode_fetch_result(&[batch], 40, true));
    assert_eq!(resp.status.status_code, TStatusCode::SUCCESS_STATUS);
    assert_eq!(resp.has_more_rows, Some(true));
    let results = resp.results.unwrap();
    assert_eq!(results.start_row_offset, 40);
    assert!(results.rows.is_empty());
    assert_eq!(results.columns.unwrap().len(), 1);
}

#[test]
fn integers_travel_in_their_own_lists_with_nulls() {
    assert_shown(
        Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
        "bool",
        &[Some("true"), None, Some("false")],
    );
    assert_shown(
        Arc::new(Int8Array::from(vec![Some(-128), None, Some(127)])),
        "byte",
        &[Some("-128"), None, Some("127")],
    );
    assert_shown(
        Arc::new(Int16Array::from(vec![Some(-32768), None])),
        "i16",
        &[Some("-32768"), None],
    );
    assert_shown(
        Arc::new(UInt8Array::from(vec![Some(255), None])),
        "i16",
        &[Some("255"), None],
    );
    assert_shown(
        Arc::new(Int32Array::from(vec![None, Some(i32::MAX)])),
        "i32",
        &[None, Some("2147483647")],
    );
    assert_shown(
        Arc::new(UInt16Array::from(vec![Some(65535)])),
        "i32",
        &[Some("65535")],
    );
    assert_shown(
        Arc::new(Int64Array::from(vec![Some(i64::MIN), None])),
        "i64",
        &[Some("-9223372036854775808"), None],
    );
    assert_shown(
        Arc::new(UInt32Array::from(vec![Some(u32::MAX)])),
        "i64",
        &[Some("4294967295")],
    );
    assert_shown(
        Arc::new(UInt64Array::from(vec![Some(u64::MAX), None])),
        "string",
        &[Some("18446744073709551615"), None],
    );
}

#[test]
fn floats_travel_as_doubles_with_the_float_text_value() {
    assert_shown(
        Arc::new(Float64Array::from(vec![Some(0.1), None, Some(-2.5)])),
        "double",
        &[Some("0.1"), None, Some("-2.5")],
    );
    // 0.1f widened bit for bit would be 0.10000000149011612.
    assert_shown(
        Arc::new(Float32Array::from(vec![Some(0.1f32), None])),
        "double",
        &[Some("0.1"), None],
    );
    assert_shown(
        cast(&Float32Array::from(vec![Some(1.5f32)]), &DataType::Float16).unwrap(),
        "double",
        &[Some("1.5")],
    );
}

#[test]
fn strings_and_binaries_travel_as_their_bytes() {
    assert_shown(
        Arc::new(StringArray::from(vec![Some("héllo"), None, Some("")])),
        "string",
        &[Some("héllo"), None, Some("")],
    );
    assert_shown(
        Arc::new(LargeStringArray::from(vec![Some("large"), None])),
        "string",
        &[Some("large"), None],
    );
    assert_shown(
        Arc::new(StringViewArray::from(vec![
            Some("a string longer than twelve bytes"),
            None,
        ])),
        "string",
        &[Some("a string longer than twelve bytes"), None],
    );
    assert_shown(
        Arc::new(BinaryArray::from(vec![Some(&[0u8, 255][..]), None])),
        "binary",
        &[Some("[0, 255]"), None],
    );
    assert_shown(
        Arc::new(
            FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                vec![Some(vec![1u8, 2]), None].into_iter(),
                2,
            )
            .unwrap(),
        ),
        "binary",
        &[Some("[1, 2]"), None],
    );
}

#[test]
fn decimals_are_plain_text_with_their_scale() {
    assert_shown(
        Arc::new(
            Decimal128Array::from(vec![Some(12345), Some(-5), None, Some(0)])
                .with_precision_and_scale(10, 2)
                .unwrap(),
        ),
        "string",
        &[Some("123.45"), Some("-0.05"), None, Some("0.00")],
    );
    let big = i256::from_i128(i128::MAX).wrapping_mul(i256::from_i128(10));
    assert_shown(
        Arc::new(
            Decimal256Array::from(vec![Some(big), Some(i256::from_i128(-15))])
                .with_precision_and_scale(60, 1)
                .unwrap(),
        ),
        "string",
        &[
            Some("170141183460469231731687303715884105727.0"),
            Some("-1.5"),
        ],
    );
}

#[test]
fn dates_times_and_timestamps_print_as_hive_does() {
    assert_shown(
        Arc::new(Date32Array::from(vec![Some(0), None, Some(19_000)])),
        "string",
        &[Some("1970-01-01"), None, Some("2022-01-08")],
    );
    assert_shown(
        Arc::new(Date64Array::from(vec![Some(86_400_000)])),
        "string",
        &[Some("1970-01-02")],
    );
    assert_shown(
        Arc::new(TimestampNanosecondArray::from(vec![
            Some(1_500_000_000_000_000_000),
            Some(1_500_000_000_100_000_000),
            Some(1_500_000_000_000_000_001),
            Some(-1),
            None,
        ])),
        "string",
        &[
            Some("2017-07-14 02:40:00"),
            Some("2017-07-14 02:40:00.1"),
            Some("2017-07-14 02:40:00.000000001"),
            Some("1969-12-31 23:59:59.999999999"),
            None,
        ],
    );
    // A zoned timestamp shows its own zone's wall clock.
    assert_shown(
        Arc::new(
            TimestampMicrosecondArray::from(vec![Some(1_500_000_000_123_000)])
                .with_timezone("+02:00"),
        ),
        "string",
        &[Some("2017-07-14 04:40:00.123")],
    );
    assert_shown(
        Arc::new(TimestampSecondArray::from(vec![Some(0)]).with_timezone("UTC")),
        "string",
        &[Some("1970-01-01 00:00:00")],
    );
    assert_shown(
        Arc::new(Time32SecondArray::from(vec![Some(3_723), None])),
        "string",
        &[Some("01:02:03"), None],
    );
    assert_shown(
        Arc::new(Time64NanosecondArray::from(vec![Some(3_723_500_000_000)])),
        "string",
        &[Some("01:02:03.5")],
    );
}

#[test]
fn intervals_print_as_hive_parses_them() {
    assert_shown(
        Arc::new(IntervalYearMonthArray::from(vec![Some(14), Some(-3), None])),
        "string",
        &[Some("1-2"), Some("-0-3"), None],
    );
    assert_shown(
        Arc::new(IntervalDayTimeArray::from(vec![
            Some(IntervalDayTime::new(2, 3_723_004)),
            Some(IntervalDayTime::new(-1, 0)),
        ])),
        "string",
        &[Some("2 01:02:03.004000000"), Some("-1 00:00:00.000000000")],
    );
    assert_shown(
        Arc::new(DurationMicrosecondArray::from(vec![Some(90_061_000_001)])),
        "string",
        &[Some("1 01:01:01.000001000")],
    );
}

#[test]
fn null_type_columns_are_all_null() {
    let columns = round_trip(vec![("n", Arc::new(NullArray::new(3)) as ArrayRef)]);
    assert_eq!(shown(&columns[0]), ("string", vec![None, None, None]));
}

#[test]
fn complex_values_are_hive_json() {
    let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
        Some(vec![Some(1), Some(2), None]),
        None,
        Some(vec![]),
    ]);
    assert_shown(
        Arc::new(list),
        "string",
        &[Some("[1,2,null]"), None, Some("[]")],
    );

    let record = StructArray::from(vec![
        (
            Arc::new(Field::new("a", DataType::Int32, true)),
            Arc::new(Int32Array::from(vec![Some(1), None])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("b", DataType::Utf8, true)),
            Arc::new(StringArray::from(vec![Some("x\"y"), Some("z")])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("d", DataType::Date32, true)),
            Arc::new(Date32Array::from(vec![Some(0), None])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("f", DataType::Float64, true)),
            Arc::new(Float64Array::from(vec![Some(1.0), Some(1e10)])) as ArrayRef,
        ),
    ]);
    assert_shown(
        Arc::new(record),
        "string",
        &[
            Some(r#"{"a":1,"b":"x\"y","d":"1970-01-01","f":1.0}"#),
            Some(r#"{"a":null,"b":"z","d":null,"f":1.0E10}"#),
        ],
    );

    let values = Int64Array::from(vec![Some(1), None, Some(3)]);
    let map = MapArray::new_from_strings(["k", "l", "m"].into_iter(), &values, &[0, 2, 3]).unwrap();
    assert_shown(
        Arc::new(map),
        "string",
        &[Some(r#"{"k":1,"l":null}"#), Some(r#"{"m":3}"#)],
    );

    let union = UnionArray::try_new(
        UnionFields::try_new(
            [0, 1],
            [
                Field::new("i", DataType::Int32, true),
                Field::new("s", DataType::Utf8, true),
            ],
        )
        .unwrap(),
        ScalarBuffer::from(vec![0i8, 1]),
        Some(ScalarBuffer::from(vec![0i32, 0])),
        vec![
            Arc::new(Int32Array::from(vec![7])) as ArrayRef,
            Arc::new(StringArray::from(vec!["u"])) as ArrayRef,
        ],
    )
    .unwrap();
    assert_shown(
        Arc::new(union),
        "string",
        &[Some("{0:7}"), Some(r#"{1:"u"}"#)],
    );
}

#[test]
fn dictionaries_travel_as_their_values() {
    let dictionary: DictionaryArray<Int32Type> = vec![Some("red"), None, Some("red"), Some("blue")]
        .into_iter()
        .collect();
    assert_shown(
        Arc::new(dictionary),
        "string",
        &[Some("red"), None, Some("red"), Some("blue")],
    );
    let list_of_dictionaries = {
        let dictionary: DictionaryArray<Int32Type> =
            vec![Some("a"), Some("b")].into_iter().collect();
        let field = Arc::new(Field::new_list_field(dictionary.data_type().clone(), true));
        ListArray::new(
            field,
            datafusion::arrow::buffer::OffsetBuffer::new(ScalarBuffer::from(vec![0, 2])),
            Arc::new(dictionary),
            None,
        )
    };
    assert_shown(
        Arc::new(list_of_dictionaries),
        "string",
        &[Some(r#"["a","b"]"#)],
    );
}

#[test]
fn batches_are_concatenated_with_nulls_at_their_rows() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
    ]));
    let first = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from((0..9).map(Some).collect::<Vec<_>>())),
            Arc::new(StringArray::from(vec![Some("a"); 9])),
        ],
    )
    .unwrap();
    let second = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(vec![None, Some(10)])),
            Arc::new(StringArray::from(vec![Some("b"), None])),
        ],
    )
    .unwrap();
    let resp = decode(&encode_fetch_result(&[first, second], 0, false));
    let columns = resp.results.unwrap().columns.unwrap();

    let mut ids: Vec<Option<String>> = (0..9).map(|i| Some(i.to_string())).collect();
    ids.extend([None, Some("10".to_owned())]);
    assert_eq!(shown(&columns[0]), ("i64", ids));
    // Row 9 is bit 1 of the second byte (row 8 is its bit 0).
    assert_eq!(nulls_of(&columns[0]), &[0, 0b10]);

    let mut names = some(&["a"; 9]);
    names.extend([Some("b".to_owned()), None]);
    assert_eq!(shown(&columns[1]), ("string", names));
    assert_eq!(nulls_of(&columns[1]), &[0, 0b100]);
}

#[test]
fn bitmaps_end_at_the_last_null_as_hive_sends_them() {
    let columns = round_trip(vec![
        (
            "none",
            Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef,
        ),
        (
            "first",
            Arc::new(Int32Array::from(vec![None, Some(2), Some(3)])) as ArrayRef,
        ),
    ]);
    assert_eq!(nulls_of(&columns[0]), &[] as &[u8]);
    assert_eq!(nulls_of(&columns[1]), &[0b1]);
}

#[test]
fn empty_input_ends_the_result() {
    let resp = decode(&encode_fetch_result(&[], 7, false));
    let results = resp.results.unwrap();
    assert_eq!(results.start_row_offset, 7);
    assert_eq!(results.columns, Some(vec![]));

    // An empty batch keeps the column types.
    let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
    let empty = RecordBatch::new_empty(schema);
    let resp = decode(&encode_fetch_result(&[empty], 0, false));
    let columns = resp.results.unwrap().columns.unwrap();
    assert_eq!(shown(&columns[0]), ("string", vec![]));
}

#[test]
fn string_rows_are_one_string_column() {
    let lines = vec!["first line".to_owned(), "second".to_owned()];
    let resp = decode(&encode_string_rows(&lines, 3));
    assert_eq!(resp.status.status_code, TStatusCode::SUCCESS_STATUS);
    assert_eq!(resp.has_more_rows, Some(false));
    let results = resp.results.unwrap();
    assert_eq!(results.start_row_offset, 3);
    let columns = results.columns.unwrap();
    assert_eq!(columns.len(), 1);
    assert_eq!(
        shown(&columns[0]),
        ("string", some(&["first line", "second"]))
    );

    let resp = decode(&encode_string_rows(&[], 0));
    let columns = resp.results.unwrap().columns.unwrap();
    assert_eq!(shown(&columns[0]), ("string", vec![]));
}

#[test]
fn metadata_types_match_the_values_sent() {
    // The row set's members must agree with what GetResultSetMetadata announces, or Hive
    // JDBC reads the wrong list.
    let fields = Fields::from(vec![
        Field::new("b", DataType::Boolean, true),
        Field::new("d", DataType::Decimal128(5, 1), true),
    ]);
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        vec![
            Arc::new(BooleanArray::from(vec![true])),
            Arc::new(
                Decimal128Array::from(vec![15])
                    .with_precision_and_scale(5, 1)
                    .unwrap(),
            ),
        ],
    )
    .unwrap();
    let described = crate::types::table_schema(&batch.schema());
    let resp = decode(&encode_fetch_result(&[batch], 0, false));
    let columns = resp.results.unwrap().columns.unwrap();
    assert_eq!(described.columns.len(), columns.len());
    assert_eq!(shown(&columns[0]).0, "bool");
    assert_eq!(shown(&columns[1]), ("string", some(&["1.5"])));
}
