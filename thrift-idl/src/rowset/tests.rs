use thrift::OrderedFloat;

use super::*;
use crate::cli::{TColumnValue, TI32Value, TRow, TStringValue};

/// A bitmap with the given rows marked NULL, trimmed after the last NULL (the reference
/// the splitter's output is compared with).
fn bitmap(null_rows: &[usize]) -> Vec<u8> {
    let mut bits = Vec::new();
    for &row in null_rows {
        if bits.len() <= row / 8 {
            bits.resize(row / 8 + 1, 0);
        }
        bits[row / 8] |= 1 << (row % 8);
    }
    bits
}

/// Whether row `i` is marked NULL, read independently of the code under test.
fn is_null(bits: &[u8], i: usize) -> bool {
    bits.get(i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1)
}

/// A columnar row set.
fn columnar(start: i64, columns: Vec<TColumn>) -> TRowSet {
    TRowSet {
        start_row_offset: start,
        rows: Vec::new(),
        column_count: Some(i32::try_from(columns.len()).unwrap()),
        columns: Some(columns),
        binary_columns: None,
    }
}

/// One column of each of the eight types, `len` rows, with the given rows NULL.
fn all_types(len: usize, null_rows: &[usize]) -> Vec<TColumn> {
    let nulls = bitmap(null_rows);
    let r = 0..len;
    vec![
        TColumn::BoolVal(TBoolColumn {
            values: r.clone().map(|i| i % 3 == 0).collect(),
            nulls: nulls.clone(),
        }),
        TColumn::ByteVal(TByteColumn {
            values: r.clone().map(|i| i as i8).collect(),
            nulls: nulls.clone(),
        }),
        TColumn::I16Val(TI16Column {
            values: r.clone().map(|i| i as i16 * 10).collect(),
            nulls: nulls.clone(),
        }),
        TColumn::I32Val(TI32Column {
            values: r.clone().map(|i| i as i32 * 100).collect(),
            nulls: nulls.clone(),
        }),
        TColumn::I64Val(TI64Column {
            values: r.clone().map(|i| i as i64 * 1000).collect(),
            nulls: nulls.clone(),
        }),
        TColumn::DoubleVal(TDoubleColumn {
            values: r.clone().map(|i| OrderedFloat(i as f64 / 2.0)).collect(),
            nulls: nulls.clone(),
        }),
        TColumn::StringVal(TStringColumn {
            values: r.clone().map(|i| format!("s{i}")).collect(),
            nulls: nulls.clone(),
        }),
        TColumn::BinaryVal(TBinaryColumn {
            values: r.map(|i| vec![i as u8; i % 4]).collect(),
            nulls,
        }),
    ]
}

/// The column's values rendered as strings and its bitmap, to compare any column type.
fn parts(column: &TColumn) -> (Vec<String>, Vec<u8>) {
    fn show<T: std::fmt::Debug>(values: &[T], nulls: &[u8]) -> (Vec<String>, Vec<u8>) {
        (
            values.iter().map(|v| format!("{v:?}")).collect(),
            nulls.to_vec(),
        )
    }
    match column {
        TColumn::BoolVal(c) => show(&c.values, &c.nulls),
        TColumn::ByteVal(c) => show(&c.values, &c.nulls),
        TColumn::I16Val(c) => show(&c.values, &c.nulls),
        TColumn::I32Val(c) => show(&c.values, &c.nulls),
        TColumn::I64Val(c) => show(&c.values, &c.nulls),
        TColumn::DoubleVal(c) => show(&c.values, &c.nulls),
        TColumn::StringVal(c) => show(&c.values, &c.nulls),
        TColumn::BinaryVal(c) => show(&c.values, &c.nulls),
    }
}

/// Same union member on both sides.
fn same_type(a: &TColumn, b: &TColumn) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

/// NULL patterns over `len` rows that put NULLs around every bit and byte boundary.
fn null_patterns(len: usize) -> Vec<Vec<usize>> {
    let mut patterns = vec![
        vec![],
        (0..len).collect(),
        (0..len).step_by(2).collect(),
        (0..len).filter(|i| i % 3 == 1).collect(),
        vec![0],
        vec![len - 1],
    ];
    for boundary in [6usize, 7, 8, 9, 15, 16, 17] {
        patterns.push(
            (boundary.saturating_sub(1)..=boundary + 1)
                .filter(|&i| i < len)
                .collect(),
        );
    }
    patterns
}

/// Splits every column type for every length 1..=20, every `n` in 0..=len+1 and every
/// NULL pattern, and checks each part row by row against the input, plus the bitmaps'
/// trimmed shape and the round trip.
#[test]
fn splits_every_type_at_every_point() {
    for len in 1..=20usize {
        for null_rows in null_patterns(len) {
            for n in 0..=len + 1 {
                let input = columnar(40, all_types(len, &null_rows));
                let (head, rest) = split_rows(input.clone(), n).expect("splittable");
                if n >= len {
                    assert_eq!(head, input, "len {len} n {n}: unchanged");
                    assert!(rest.is_none());
                    continue;
                }
                let rest = rest.expect("rest when n < len");
                assert_eq!(head.start_row_offset, 40);
                assert_eq!(rest.start_row_offset, 40 + n as i64);
                assert_eq!(head.column_count, Some(8));
                assert_eq!(rest.column_count, Some(8));
                assert_eq!(row_count(&head), Some(n));
                assert_eq!(row_count(&rest), Some(len - n));

                let original = input.columns.as_ref().unwrap();
                let heads = head.columns.as_ref().unwrap();
                let rests = rest.columns.as_ref().unwrap();
                assert_eq!(heads.len(), 8);
                assert_eq!(rests.len(), 8);
                for ((o, h), r) in original.iter().zip(heads).zip(rests) {
                    assert!(same_type(o, h) && same_type(o, r));
                    let (ov, on) = parts(o);
                    let (hv, hn) = parts(h);
                    let (rv, rn) = parts(r);
                    let ctx = format!("len {len} n {n} nulls {null_rows:?} {o:?}");
                    assert_eq!(hv, ov[..n], "{ctx}");
                    assert_eq!(rv, ov[n..], "{ctx}");
                    for i in 0..len {
                        let got = if i < n {
                            is_null(&hn, i)
                        } else {
                            is_null(&rn, i - n)
                        };
                        assert_eq!(got, is_null(&on, i), "{ctx}: row {i}");
                    }
                    // Trimmed as HiveServer2 writes them: nothing after the last NULL.
                    let head_nulls: Vec<usize> =
                        null_rows.iter().copied().filter(|&i| i < n).collect();
                    let rest_nulls: Vec<usize> = null_rows
                        .iter()
                        .filter(|&&i| i >= n)
                        .map(|&i| i - n)
                        .collect();
                    assert_eq!(hn, bitmap(&head_nulls), "{ctx}: head bitmap");
                    assert_eq!(rn, bitmap(&rest_nulls), "{ctx}: rest bitmap");
                    assert!(hn.len() <= n.div_ceil(8));
                    assert!(rn.len() <= (len - n).div_ceil(8));
                    // Round trip: the values and the bitmaps concatenated give the input.
                    let mut joined = hv.clone();
                    joined.extend(rv.clone());
                    assert_eq!(joined, ov, "{ctx}");
                    let mut joined_nulls = Vec::new();
                    for i in 0..n {
                        if is_null(&hn, i) {
                            joined_nulls.push(i);
                        }
                    }
                    for i in 0..len - n {
                        if is_null(&rn, i) {
                            joined_nulls.push(n + i);
                        }
                    }
                    assert_eq!(bitmap(&joined_nulls), on, "{ctx}");
                }
            }
        }
    }
}

#[test]
fn splits_at_byte_boundaries_exactly() {
    // Rows 6..=10 NULL out of 20: n = 7, 8 and 9 cut through that run.
    let column = |nulls: Vec<u8>| {
        TColumn::I32Val(TI32Column {
            values: (0..20).collect(),
            nulls,
        })
    };
    let input = columnar(0, vec![column(vec![0b1100_0000, 0b0000_0111])]);
    let cases: [(usize, Vec<u8>, Vec<u8>); 3] = [
        (7, vec![0b0100_0000], vec![0b0000_1111]),
        (8, vec![0b1100_0000], vec![0b0000_0111]),
        (9, vec![0b1100_0000, 0b0000_0001], vec![0b0000_0011]),
    ];
    for (n, head_nulls, rest_nulls) in cases {
        let (head, rest) = split_rows(input.clone(), n).unwrap();
        let head = head.columns.unwrap();
        let TColumn::I32Val(head) = &head[0] else {
            panic!("type changed: {head:?}");
        };
        assert_eq!(head.nulls, head_nulls, "n {n}");
        assert_eq!(head.values, (0..n as i32).collect::<Vec<_>>());
        let rest = rest.unwrap().columns.unwrap();
        let TColumn::I32Val(rest) = &rest[0] else {
            panic!("type changed: {rest:?}");
        };
        assert_eq!(rest.nulls, rest_nulls, "n {n}");
        assert_eq!(rest.values, (n as i32..20).collect::<Vec<_>>());
    }
}

#[test]
fn n_zero_gives_an_empty_head() {
    let input = columnar(5, all_types(10, &[0, 9]));
    let (head, rest) = split_rows(input.clone(), 0).unwrap();
    assert_eq!(row_count(&head), Some(0));
    assert_eq!(head.start_row_offset, 5);
    for column in head.columns.as_ref().unwrap() {
        assert_eq!(parts(column), (vec![], vec![]));
    }
    let rest = rest.unwrap();
    assert_eq!(rest.start_row_offset, 5);
    assert_eq!(rest.columns, input.columns);
}

#[test]
fn n_at_or_past_the_end_keeps_the_input() {
    // An untrimmed bitmap and an odd offset: returned exactly as given.
    let mut columns = all_types(9, &[3]);
    if let TColumn::StringVal(c) = &mut columns[6] {
        c.nulls = vec![0b1000, 0, 0];
    }
    let input = columnar(7, columns);
    for n in [9, 10, usize::MAX] {
        assert_eq!(split_rows(input.clone(), n), Ok((input.clone(), None)));
    }
}

#[test]
fn empty_row_sets() {
    let no_columns = columnar(3, vec![]);
    assert_eq!(row_count(&no_columns), Some(0));
    assert_eq!(split_rows(no_columns.clone(), 0), Ok((no_columns, None)));

    let empty_columns = columnar(3, all_types(0, &[]));
    assert_eq!(row_count(&empty_columns), Some(0));
    assert_eq!(
        split_rows(empty_columns.clone(), 0),
        Ok((empty_columns, None))
    );
}

/// A row-based row set (protocol < V6) of `len` rows of (int, string).
fn row_based(len: usize) -> TRowSet {
    TRowSet {
        start_row_offset: 100,
        rows: (0..len)
            .map(|i| TRow {
                col_vals: vec![
                    TColumnValue::I32Val(TI32Value {
                        value: (i % 2 == 0).then_some(i as i32),
                    }),
                    TColumnValue::StringVal(TStringValue {
                        value: Some(format!("r{i}")),
                    }),
                ],
            })
            .collect(),
        columns: None,
        binary_columns: None,
        column_count: None,
    }
}

#[test]
fn splits_row_based_sets() {
    let input = row_based(5);
    assert_eq!(row_count(&input), Some(5));
    let (head, rest) = split_rows(input.clone(), 2).unwrap();
    let rest = rest.unwrap();
    assert_eq!(head.rows, input.rows[..2]);
    assert_eq!(rest.rows, input.rows[2..]);
    assert_eq!((head.start_row_offset, rest.start_row_offset), (100, 102));
    assert_eq!((head.columns.as_ref(), rest.columns.as_ref()), (None, None));
    assert_eq!(split_rows(input.clone(), 5), Ok((input, None)));

    // Rows with an empty columns list (as some servers send) split the same way.
    let mut with_empty_columns = row_based(3);
    with_empty_columns.columns = Some(Vec::new());
    let (head, rest) = split_rows(with_empty_columns, 1).unwrap();
    let rest = rest.unwrap();
    assert_eq!((head.rows.len(), rest.rows.len()), (1, 2));
    assert_eq!(rest.columns, Some(Vec::new()));
}

#[test]
fn refuses_binary_columns() {
    let mut input = row_based(0);
    input.binary_columns = Some(vec![1, 2, 3]);
    input.column_count = Some(2);
    assert_eq!(row_count(&input), None);
    for n in [0, 1, 1000] {
        assert_eq!(split_rows(input.clone(), n), Err(input.clone()));
    }
}

#[test]
fn refuses_columns_of_different_lengths() {
    let mut columns = all_types(6, &[1]);
    columns.push(TColumn::I64Val(TI64Column {
        values: vec![1, 2, 3],
        nulls: vec![],
    }));
    let input = columnar(0, columns);
    assert_eq!(row_count(&input), Some(6));
    for n in [0, 2, 4, 6, 10] {
        assert_eq!(split_rows(input.clone(), n), Err(input.clone()));
    }

    // Rows and columns that disagree on the count.
    let mut mixed = row_based(4);
    mixed.columns = Some(all_types(3, &[]));
    assert_eq!(split_rows(mixed.clone(), 1), Err(mixed));
}

#[test]
fn accepts_any_bitmap_length() {
    // Trailing zero bytes and stray bits past the last row are dropped; a bitmap shorter
    // than the values means the missing rows are not NULL.
    let column = |nulls: Vec<u8>| {
        columnar(
            0,
            vec![TColumn::StringVal(TStringColumn {
                values: (0..10).map(|i| i.to_string()).collect(),
                nulls,
            })],
        )
    };
    let nulls_of = |set: &TRowSet| match &set.columns.as_ref().unwrap()[0] {
        TColumn::StringVal(c) => c.nulls.clone(),
        other => panic!("type changed: {other:?}"),
    };

    let (head, rest) = split_rows(column(vec![0b0000_0010, 0b1111_1100, 0, 0]), 4).unwrap();
    assert_eq!(nulls_of(&head), vec![0b0010]);
    assert_eq!(nulls_of(&rest.unwrap()), Vec::<u8>::new());

    let (head, rest) = split_rows(column(vec![0b0010_0000]), 3).unwrap();
    assert_eq!(nulls_of(&head), Vec::<u8>::new());
    assert_eq!(nulls_of(&rest.unwrap()), vec![0b0100]);

    let (head, rest) = split_rows(column(vec![]), 5).unwrap();
    assert_eq!(nulls_of(&head), Vec::<u8>::new());
    assert_eq!(nulls_of(&rest.unwrap()), Vec::<u8>::new());
}
