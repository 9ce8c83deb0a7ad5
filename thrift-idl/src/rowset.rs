//! Counting the rows of a FetchResults `TRowSet` and splitting it in two after `n` rows.
//!
//! The gateway keeps replies fetched ahead of the client; when the client asks for fewer
//! rows than a kept row set holds, it hands out the first rows and keeps the rest.
//!
//! Nulls bitmaps follow HiveServer2: LSB first (bit `i % 8` of byte `i / 8` marks row `i`
//! as NULL), any length accepted on input (missing bytes mean "not NULL"), and written as
//! Java's `BitSet.toByteArray()` leaves them: ending with the last byte that marks a NULL,
//! empty when there is none (as `engines/datafusion/src/rowset.rs` writes them too).

#[cfg(test)]
mod tests;

use crate::cli::{
    TBinaryColumn, TBoolColumn, TByteColumn, TColumn, TDoubleColumn, TI16Column, TI32Column,
    TI64Column, TRowSet, TStringColumn,
};

/// Number of rows in a row set: in the columnar form (protocol V6 and later) the length of
/// the first column's values, in the row-based form `rows.len()`, and `None` (unknown)
/// when the columns are `binary_columns` (compressed, opaque).
pub fn row_count(rows: &TRowSet) -> Option<usize> {
    if rows.binary_columns.is_some() {
        return None;
    }
    match rows.columns.as_deref().and_then(<[TColumn]>::first) {
        Some(first) => Some(column_len(first)),
        None => Some(rows.rows.len()),
    }
}

/// Splits a row set after `n` rows: (the first `n` rows, the rest). The rest is `None`
/// when the set has at most `n` rows, and then the first part is the input unchanged;
/// otherwise the rest's `start_row_offset` is the input's plus `n`, and both parts keep
/// the input's `column_count`.
///
/// Returns `Err(input)` unchanged when the set cannot be split: `binary_columns` is set,
/// the columns have different lengths, or both `rows` and `columns` hold rows and
/// disagree on how many.
pub fn split_rows(mut rows: TRowSet, n: usize) -> Result<(TRowSet, Option<TRowSet>), TRowSet> {
    let Some(len) = splittable_len(&rows) else {
        return Err(rows);
    };
    if len <= n {
        return Ok((rows, None));
    }
    let rest_rows = if rows.rows.is_empty() {
        Vec::new()
    } else {
        rows.rows.split_off(n)
    };
    let rest_columns = rows
        .columns
        .as_mut()
        .map(|columns| columns.iter_mut().map(|c| split_column(c, n)).collect());
    let offset = i64::try_from(n)
        .ok()
        .and_then(|n| rows.start_row_offset.checked_add(n))
        .unwrap_or(i64::MAX);
    let rest = TRowSet {
        start_row_offset: offset,
        rows: rest_rows,
        columns: rest_columns,
        binary_columns: None,
        column_count: rows.column_count,
    };
    Ok((rows, Some(rest)))
}

/// The number of rows when every part of the set agrees on it, `None` when it cannot be
/// split.
fn splittable_len(rows: &TRowSet) -> Option<usize> {
    if rows.binary_columns.is_some() {
        return None;
    }
    let columns = rows.columns.as_deref().unwrap_or_default();
    let Some(first) = columns.first() else {
        return Some(rows.rows.len());
    };
    let len = column_len(first);
    let columns_agree = columns.iter().all(|c| column_len(c) == len);
    let rows_agree = rows.rows.is_empty() || rows.rows.len() == len;
    (columns_agree && rows_agree).then_some(len)
}

/// Runs `$body` with `$c` bound to the column struct, whatever the union member.
macro_rules! each_column {
    ($column:expr, $c:ident => $body:expr) => {
        match $column {
            TColumn::BoolVal($c) => $body,
            TColumn::ByteVal($c) => $body,
            TColumn::I16Val($c) => $body,
            TColumn::I32Val($c) => $body,
            TColumn::I64Val($c) => $body,
            TColumn::DoubleVal($c) => $body,
            TColumn::StringVal($c) => $body,
            TColumn::BinaryVal($c) => $body,
        }
    };
}

/// Number of values in one column.
fn column_len(column: &TColumn) -> usize {
    each_column!(column, c => c.values.len())
}

/// Keeps the first `n` rows in `column` and returns the rest as a column of the same type.
fn split_column(column: &mut TColumn, n: usize) -> TColumn {
    /// The rest of one union member, built from its split values and bitmap.
    macro_rules! rest {
        ($c:ident, $variant:ident, $ty:ident) => {{
            let (values, nulls) = split_values(&mut $c.values, &mut $c.nulls, n);
            TColumn::$variant($ty { values, nulls })
        }};
    }
    match column {
        TColumn::BoolVal(c) => rest!(c, BoolVal, TBoolColumn),
        TColumn::ByteVal(c) => rest!(c, ByteVal, TByteColumn),
        TColumn::I16Val(c) => rest!(c, I16Val, TI16Column),
        TColumn::I32Val(c) => rest!(c, I32Val, TI32Column),
        TColumn::I64Val(c) => rest!(c, I64Val, TI64Column),
        TColumn::DoubleVal(c) => rest!(c, DoubleVal, TDoubleColumn),
        TColumn::StringVal(c) => rest!(c, StringVal, TStringColumn),
        TColumn::BinaryVal(c) => rest!(c, BinaryVal, TBinaryColumn),
    }
}

/// Splits one column's values and nulls bitmap after `n` rows (`n` less than the number
/// of values): `values` and `nulls` keep the first `n` rows, the rest is returned with its
/// bits shifted down by `n`. Both bitmaps are trimmed after their last NULL.
fn split_values<T>(values: &mut Vec<T>, nulls: &mut Vec<u8>, n: usize) -> (Vec<T>, Vec<u8>) {
    let len = values.len();
    let rest_values = values.split_off(n.min(len));
    let rest_nulls = shifted_bits(nulls, n, len);
    truncate_bits(nulls, n);
    (rest_values, rest_nulls)
}

/// Bits `from..to` of `bits`, moved down to start at bit 0, trimmed after the last set bit.
fn shifted_bits(bits: &[u8], from: usize, to: usize) -> Vec<u8> {
    let count = to.saturating_sub(from);
    let byte = |i: usize| bits.get(i).copied().unwrap_or(0);
    let (skip, shift) = (from / 8, from % 8);
    let mut out: Vec<u8> = (0..count.div_ceil(8))
        .map(|i| {
            let low = byte(skip + i) >> shift;
            let high = if shift == 0 {
                0
            } else {
                byte(skip + i + 1) << (8 - shift)
            };
            low | high
        })
        .collect();
    truncate_bits(&mut out, count);
    out
}

/// Clears every bit from `len` on and drops the trailing zero bytes.
fn truncate_bits(bits: &mut Vec<u8>, len: usize) {
    bits.truncate(len.div_ceil(8));
    if !len.is_multiple_of(8) {
        if let Some(last) = bits.get_mut(len / 8) {
            *last &= (1u8 << (len % 8)) - 1;
        }
    }
    while bits.last() == Some(&0) {
        bits.pop();
    }
}
