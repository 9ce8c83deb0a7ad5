//! Arrow record batches straight to HiveServer2's columnar row set, encoded as the
//! FetchResults `_result` body that [`kumiho_thrift::service::Reply::Encoded`] carries.
//!
//! This is the engine's hot path, so it writes TBinaryProtocol directly from the Arrow
//! arrays with [`BinaryWriter`]: no generated structs, no allocation per value. Numbers
//! are written as they are, strings and binaries from the arrays' bytes; values that Hive
//! sends as text (decimals, dates, timestamps, intervals, complex types as JSON) are
//! rendered by [`text`] into one scratch buffer reused for the whole column.
//!
//! The wire shape (protocol V6 and later): `TRowSet { 1: startRowOffset, 2: rows = [],
//! 3: columns }`, one `TColumn` union member per column holding `{1: values, 2: nulls}`.
//! The nulls bitmap is LSB-first (bit `b` of byte `i` marks row `8i + b`) and, as Java's
//! `BitSet.toByteArray()` leaves it in HiveServer2, ends with the last byte that marks a
//! NULL (empty when there are none); Hive JDBC, PyHive and impyla all read it so. Values at
//! NULL positions are present as 0, `false` or an empty string.

#[cfg(test)]
mod tests;
mod text;

use std::fmt::Write as _;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use datafusion::arrow::array::{new_null_array, Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, Field, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, UInt16Type, UInt32Type, UInt8Type,
};
use kumiho_thrift::binary::{ttype, BinaryWriter};

use crate::types::WireColumn;

/// `TStatusCode.SUCCESS_STATUS`.
const SUCCESS_STATUS: i32 = 0;

/// What a NULL string or binary value is sent as.
const EMPTY: &[u8] = &[];

/// The encoded FetchResults `_result` body (struct `{0: TFetchResultsResp}`) with SUCCESS
/// status, `hasMoreRows`, and a columnar `TRowSet` (rows = empty list, columns filled,
/// `startRowOffset`), for `Reply::Encoded`.
///
/// The batches are one result page (the caller slices them to the client's `maxRows`);
/// their rows are concatenated per column, and the column types come from the first
/// batch's schema. An empty slice gives a row set without columns, which every client
/// reads as the end of the result; to send typed empty columns, pass an empty batch.
pub fn encode_fetch_result(
    batches: &[RecordBatch],
    start_row_offset: i64,
    has_more_rows: bool,
) -> Bytes {
    let fields: Vec<&Field> = batches
        .first()
        .map(|batch| {
            batch
                .schema_ref()
                .fields()
                .iter()
                .map(AsRef::as_ref)
                .collect()
        })
        .unwrap_or_default();
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let capacity = ENVELOPE_BYTES + rows * fields.len() * TYPICAL_VALUE_BYTES;
    encode_result(
        capacity,
        start_row_offset,
        has_more_rows,
        fields.len(),
        |w| {
            let mut scratch = Scratch::default();
            for (index, field) in fields.iter().enumerate() {
                let arrays: Vec<ArrayRef> = batches
                    .iter()
                    .map(|batch| match batch.columns().get(index) {
                        Some(column) => decoded(column),
                        // A batch with fewer columns than the first is the caller's bug; its
                        // rows still get a (NULL) value so that every column has `rows` values.
                        None => new_null_array(&DataType::Null, batch.num_rows()),
                    })
                    .collect();
                write_column(
                    w,
                    WireColumn::of(field.data_type()),
                    &arrays,
                    rows,
                    &mut scratch,
                );
            }
        },
    )
}

/// The same for a one-column string result (the operation log): one line per row, no
/// NULLs, `hasMoreRows` false.
pub fn encode_string_rows(lines: &[String], start_row_offset: i64) -> Bytes {
    let bytes: usize = lines.iter().map(|line| line.len() + 4).sum();
    encode_result(ENVELOPE_BYTES + bytes, start_row_offset, false, 1, |w| {
        let wire = WireColumn::String;
        begin_column(w, wire, lines.len());
        for line in lines {
            w.string(line.as_bytes());
        }
        end_column(w, &[]);
    })
}

/// Room for everything around the values: status, flags, list and column headers.
const ENVELOPE_BYTES: usize = 256;
/// A guess at the encoded size of one value, to size the buffer once for most results.
const TYPICAL_VALUE_BYTES: usize = 8;

/// Writes `{0: TFetchResultsResp { 1: status, 2: hasMoreRows, 3: TRowSet }}` around the
/// columns that `write_columns` appends.
fn encode_result(
    capacity: usize,
    start_row_offset: i64,
    has_more_rows: bool,
    columns: usize,
    write_columns: impl FnOnce(&mut BinaryWriter<'_>),
) -> Bytes {
    let mut buf = BytesMut::with_capacity(capacity);
    let mut w = BinaryWriter::new(&mut buf);
    w.field_begin(ttype::STRUCT, 0); // _result.success
    {
        w.field_begin(ttype::STRUCT, 1); // TFetchResultsResp.status
        w.field_begin(ttype::I32, 1); // TStatus.statusCode
        w.i32(SUCCESS_STATUS);
        w.field_stop();

        w.field_begin(ttype::BOOL, 2); // hasMoreRows
        w.bool(has_more_rows);

        w.field_begin(ttype::STRUCT, 3); // results: TRowSet
        {
            w.field_begin(ttype::I64, 1); // startRowOffset
            w.i64(start_row_offset);
            w.field_begin(ttype::LIST, 2); // rows: always empty in the columnar form
            w.list_begin(ttype::STRUCT, 0);
            w.field_begin(ttype::LIST, 3); // columns
            w.list_begin(ttype::STRUCT, columns);
            write_columns(&mut w);
            w.field_stop();
        }
        w.field_stop(); // TFetchResultsResp
    }
    w.field_stop(); // _result
    buf.freeze()
}

impl WireColumn {
    /// The member of the `TColumn` union.
    fn field_id(self) -> i16 {
        match self {
            Self::Bool => 1,
            Self::Byte => 2,
            Self::I16 => 3,
            Self::I32 => 4,
            Self::I64 => 5,
            Self::Double => 6,
            Self::String => 7,
            Self::Binary => 8,
        }
    }

    /// The Thrift type of the values list's elements.
    fn element_type(self) -> u8 {
        match self {
            Self::Bool => ttype::BOOL,
            Self::Byte => ttype::BYTE,
            Self::I16 => ttype::I16,
            Self::I32 => ttype::I32,
            Self::I64 => ttype::I64,
            Self::Double => ttype::DOUBLE,
            Self::String | Self::Binary => ttype::STRING,
        }
    }
}

/// Opens a `TColumn` union member and its values list of `rows` elements.
fn begin_column(w: &mut BinaryWriter<'_>, wire: WireColumn, rows: usize) {
    w.field_begin(ttype::STRUCT, wire.field_id());
    w.field_begin(ttype::LIST, 1);
    w.list_begin(wire.element_type(), rows);
}

/// Writes the nulls bitmap and closes the column struct and the union.
fn end_column(w: &mut BinaryWriter<'_>, nulls: &[u8]) {
    w.field_begin(ttype::STRING, 2);
    w.string(nulls);
    w.field_stop();
    w.field_stop();
}

/// Buffers reused from column to column, so that a page costs a few allocations, not one
/// per value.
#[derive(Default)]
struct Scratch {
    nulls: NullBits,
    text: String,
}

/// HiveServer2's nulls bitmap, grown only as far as the last NULL.
#[derive(Default)]
struct NullBits {
    bytes: Vec<u8>,
}

impl NullBits {
    fn clear(&mut self) {
        self.bytes.clear();
    }

    fn set(&mut self, row: usize) {
        let byte = row / 8;
        if byte >= self.bytes.len() {
            self.bytes.resize(byte + 1, 0);
        }
        self.bytes[byte] |= 1 << (row % 8);
    }
}

/// Writes one column: the values of every batch's array in turn, then the bitmap.
fn write_column(
    w: &mut BinaryWriter<'_>,
    wire: WireColumn,
    arrays: &[ArrayRef],
    rows: usize,
    scratch: &mut Scratch,
) {
    begin_column(w, wire, rows);
    scratch.nulls.clear();
    let mut first_row = 0;
    for array in arrays {
        write_values(w, wire, array.as_ref(), first_row, scratch);
        first_row += array.len();
    }
    end_column(w, &scratch.nulls.bytes);
}

/// Writes the values of one array, marking its NULLs from `first_row` on.
fn write_values(
    w: &mut BinaryWriter<'_>,
    wire: WireColumn,
    array: &dyn Array,
    first_row: usize,
    scratch: &mut Scratch,
) {
    let Scratch { nulls, text } = scratch;
    let mut rows = Rows {
        array,
        first_row,
        nulls,
    };
    match (wire, array.data_type()) {
        (WireColumn::Bool, DataType::Boolean) => {
            let a = array.as_boolean();
            rows.each(|i| w.bool(i.is_some_and(|i| a.value(i))));
        }
        (WireColumn::Byte, DataType::Int8) => {
            let a = array.as_primitive::<Int8Type>();
            rows.each(|i| w.byte(i.map_or(0, |i| a.value(i))));
        }
        (WireColumn::I16, DataType::Int16) => {
            let a = array.as_primitive::<Int16Type>();
            rows.each(|i| w.i16(i.map_or(0, |i| a.value(i))));
        }
        (WireColumn::I16, DataType::UInt8) => {
            let a = array.as_primitive::<UInt8Type>();
            rows.each(|i| w.i16(i.map_or(0, |i| a.value(i).into())));
        }
        (WireColumn::I32, DataType::Int32) => {
            let a = array.as_primitive::<Int32Type>();
            rows.each(|i| w.i32(i.map_or(0, |i| a.value(i))));
        }
        (WireColumn::I32, DataType::UInt16) => {
            let a = array.as_primitive::<UInt16Type>();
            rows.each(|i| w.i32(i.map_or(0, |i| a.value(i).into())));
        }
        (WireColumn::I64, DataType::Int64) => {
            let a = array.as_primitive::<Int64Type>();
            rows.each(|i| w.i64(i.map_or(0, |i| a.value(i))));
        }
        (WireColumn::I64, DataType::UInt32) => {
            let a = array.as_primitive::<UInt32Type>();
            rows.each(|i| w.i64(i.map_or(0, |i| a.value(i).into())));
        }
        (WireColumn::Double, DataType::Float64) => {
            let a = array.as_primitive::<Float64Type>();
            rows.each(|i| w.double(i.map_or(0.0, |i| a.value(i))));
        }
        (WireColumn::Double, DataType::Float32) => {
            let a = array.as_primitive::<Float32Type>();
            rows.each(|i| w.double(i.map_or(0.0, |i| widen_float(a.value(i), text))));
        }
        (WireColumn::Double, DataType::Float16) => {
            let a = array.as_primitive::<Float16Type>();
            rows.each(|i| w.double(i.map_or(0.0, |i| widen_float(a.value(i).to_f32(), text))));
        }
        (WireColumn::String, DataType::Utf8) => {
            let a = array.as_string::<i32>();
            rows.each(|i| w.string(i.map_or(EMPTY, |i| a.value(i).as_bytes())));
        }
        (WireColumn::String, DataType::LargeUtf8) => {
            let a = array.as_string::<i64>();
            rows.each(|i| w.string(i.map_or(EMPTY, |i| a.value(i).as_bytes())));
        }
        (WireColumn::String, DataType::Utf8View) => {
            let a = array.as_string_view();
            rows.each(|i| w.string(i.map_or(EMPTY, |i| a.value(i).as_bytes())));
        }
        (WireColumn::Binary, DataType::Binary) => {
            let a = array.as_binary::<i32>();
            rows.each(|i| w.string(i.map_or(EMPTY, |i| a.value(i))));
        }
        (WireColumn::Binary, DataType::LargeBinary) => {
            let a = array.as_binary::<i64>();
            rows.each(|i| w.string(i.map_or(EMPTY, |i| a.value(i))));
        }
        (WireColumn::Binary, DataType::BinaryView) => {
            let a = array.as_binary_view();
            rows.each(|i| w.string(i.map_or(EMPTY, |i| a.value(i))));
        }
        (WireColumn::Binary, DataType::FixedSizeBinary(_)) => {
            let a = array.as_fixed_size_binary();
            rows.each(|i| w.string(i.map_or(EMPTY, |i| a.value(i))));
        }
        (WireColumn::String, _) => {
            let render = text::plain(array);
            rows.each_fallible(|i| {
                text.clear();
                let shown = i.is_none_or(|i| render(i, text).is_ok());
                w.string(if shown { text.as_bytes() } else { EMPTY });
                shown
            });
        }
        // An array whose type differs from the first batch's (the caller's bug): its rows
        // are sent as NULLs rather than as values of another type.
        (wire, _) => rows.each_fallible(|_| {
            write_default(w, wire);
            false
        }),
    }
}

/// The rows of one array, with the column's nulls bitmap to mark.
struct Rows<'a> {
    array: &'a dyn Array,
    first_row: usize,
    nulls: &'a mut NullBits,
}

impl Rows<'_> {
    /// Calls `write` once per row: with the index of a value, or with `None` for a NULL
    /// (which `write` sends as the type's default).
    fn each(&mut self, mut write: impl FnMut(Option<usize>)) {
        self.each_fallible(|i| {
            write(i);
            true
        });
    }

    /// Like [`Rows::each`], for values that may turn out not to be showable (a date out
    /// of the calendar's range): `write` returns false after sending a default, and the
    /// row is marked NULL.
    fn each_fallible(&mut self, mut write: impl FnMut(Option<usize>) -> bool) {
        let logical_nulls = self.array.logical_nulls();
        for i in 0..self.array.len() {
            let is_null = logical_nulls.as_ref().is_some_and(|n| n.is_null(i));
            let shown = write((!is_null).then_some(i));
            if is_null || !shown {
                self.nulls.set(self.first_row + i);
            }
        }
    }
}

fn write_default(w: &mut BinaryWriter<'_>, wire: WireColumn) {
    match wire {
        WireColumn::Bool => w.bool(false),
        WireColumn::Byte => w.byte(0),
        WireColumn::I16 => w.i16(0),
        WireColumn::I32 => w.i32(0),
        WireColumn::I64 => w.i64(0),
        WireColumn::Double => w.double(0.0),
        WireColumn::String | WireColumn::Binary => w.string(EMPTY),
    }
}

/// A FLOAT as the double HiveServer2 sends: it goes through the float's shortest decimal
/// text (`Double.valueOf(Float.toString(f))`), so that 0.1f arrives as 0.1 rather than
/// 0.10000000149011612.
fn widen_float(value: f32, scratch: &mut String) -> f64 {
    scratch.clear();
    // Writing to a String cannot fail, and the shortest text of a float always parses.
    let _ = write!(scratch, "{value}");
    scratch.parse().unwrap_or(f64::from(value))
}

/// The array with dictionaries and run-end encodings, at any depth, replaced by their
/// values: the types are described by their value types, so the values must travel so.
fn decoded(array: &ArrayRef) -> ArrayRef {
    let plain = plain_type(array.data_type());
    if &plain == array.data_type() {
        return Arc::clone(array);
    }
    // Arrow casts every dictionary and run-end encoding to its values; should one ever
    // refuse, the column's values are sent as NULLs rather than failing the whole fetch.
    cast(array, &plain).unwrap_or_else(|_| new_null_array(&plain, array.len()))
}

/// The type without dictionary or run-end encoding anywhere in it.
fn plain_type(dt: &DataType) -> DataType {
    let field =
        |f: &Arc<Field>| Arc::new(f.as_ref().clone().with_data_type(plain_type(f.data_type())));
    match dt {
        DataType::Dictionary(_, value) => plain_type(value),
        DataType::RunEndEncoded(_, values) => plain_type(values.data_type()),
        DataType::List(item) => DataType::List(field(item)),
        DataType::LargeList(item) => DataType::LargeList(field(item)),
        DataType::FixedSizeList(item, len) => DataType::FixedSizeList(field(item), *len),
        DataType::Map(entries, sorted) => DataType::Map(field(entries), *sorted),
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(field).collect()),
        other => other.clone(),
    }
}
