//! Spark's array functions DataFusion lacks or counts otherwise: `slice`, `array_insert`,
//! `shuffle`, `try_element_at` (of an array or a map) and `get`.

use std::sync::Arc;

use datafusion::arrow::array::{
    new_null_array, Array, ArrayRef, AsArray, GenericListArray, ListArray, UInt32Array,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::compute::{concat, take};
use datafusion::arrow::datatypes::{DataType, Int32Type};
use datafusion::error::{DataFusionError, Result};
use datafusion::functions_nested::expr_fn::{array_element, map_extract};
use datafusion::logical_expr::{lit, when, Expr, ScalarUDF, Signature, Volatility};

use super::{bad_arguments, is_integer, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::computed(
            "slice",
            |name, types| match types {
                [a, s, l] if is_list(a) && is_integer(s) && is_integer(l) => {
                    Ok(vec![list_type(a), DataType::Int32, DataType::Int32])
                }
                _ => Err(bad_arguments(name, "(array, start, length)", types)),
            },
            |t| Ok(t[0].clone()),
            slice,
        )
        .udf(),
        HiveFunction::computed(
            "array_insert",
            |name, types| match types {
                [a, p, _] if is_list(a) && is_integer(p) => {
                    let list = list_type(a);
                    let element = element_type(&list);
                    Ok(vec![list, DataType::Int32, element])
                }
                _ => Err(bad_arguments(name, "(array, position, value)", types)),
            },
            |t| Ok(t[0].clone()),
            array_insert,
        )
        .udf(),
        HiveFunction::computed(
            "shuffle",
            |name, types| match types {
                [a] if is_list(a) => Ok(vec![list_type(a)]),
                _ => Err(bad_arguments(name, "(array)", types)),
            },
            |t| Ok(t[0].clone()),
            shuffle,
        )
        // Drawn anew for each row, as Spark's.
        .with_signature(Signature::user_defined(Volatility::Volatile))
        .udf(),
        // Spark's `get(array, index)` counts from 0 and is NULL outside the array, a
        // negative index included (which `array_element` would count from the end).
        HiveFunction::rewrite(
            "get",
            |name, types| match types {
                [a, i] if is_list(a) && is_integer(i) => Ok(vec![list_type(a), DataType::Int64]),
                _ => Err(bad_arguments(name, "(array, index)", types)),
            },
            |t| Ok(element_type(&t[0])),
            |a, _| {
                let [array, index] = <[Expr; 2]>::try_from(a).expect("two arguments");
                when(
                    index.clone().gt_eq(lit(0i64)),
                    array_element(array, index + lit(1i64)),
                )
                .end()
            },
        )
        .udf(),
        HiveFunction::rewrite(
            "try_element_at",
            |name, types| match types {
                [a, i] if is_list(a) && is_integer(i) => Ok(vec![list_type(a), DataType::Int64]),
                [m @ DataType::Map(entries, _), _] => {
                    let DataType::Struct(fields) = entries.data_type() else {
                        return Err(bad_arguments(name, "(array, index) or (map, key)", types));
                    };
                    Ok(vec![m.clone(), fields[0].data_type().clone()])
                }
                _ => Err(bad_arguments(name, "(array, index) or (map, key)", types)),
            },
            |t| match &t[0] {
                DataType::Map(entries, _) => match entries.data_type() {
                    DataType::Struct(fields) => Ok(fields[1].data_type().clone()),
                    _ => Ok(DataType::Null),
                },
                list => Ok(element_type(list)),
            },
            // DataFusion's array_element counts from 1 and from the end for a negative
            // index, and is NULL beyond either end, as Spark's try_element_at; a map's
            // value is its entry's first (only) match.
            |a, t| match &t[0] {
                DataType::Map(..) => Ok(array_element(
                    map_extract(a[0].clone(), a[1].clone()),
                    lit(1i64),
                )),
                _ => Ok(array_element(a[0].clone(), a[1].clone())),
            },
        )
        .udf(),
    ]
}

pub(super) fn is_list(t: &DataType) -> bool {
    matches!(t, DataType::List(_) | DataType::Null)
}

/// An array argument's type, a NULL taken as an array of NULLs.
pub(super) fn list_type(t: &DataType) -> DataType {
    match t {
        DataType::Null => DataType::new_list(DataType::Null, true),
        t => t.clone(),
    }
}

pub(super) fn element_type(list: &DataType) -> DataType {
    match list {
        DataType::List(field) => field.data_type().clone(),
        _ => DataType::Null,
    }
}

/// A list of `list`'s element type whose row `i` holds the elements of `source` at
/// `rows[i]`'s indexes (`None` a NULL element), or is NULL for a `None` row.
pub(super) fn gather_lists(
    list: &DataType,
    source: &ArrayRef,
    rows: Vec<Option<Vec<Option<u32>>>>,
) -> Result<ArrayRef> {
    let DataType::List(field) = list else {
        return Err(DataFusionError::Internal(format!("{list} is not a list")));
    };
    let nulls = NullBuffer::from_iter(rows.iter().map(Option::is_some));
    let lengths: Vec<usize> = rows
        .iter()
        .map(|r| r.as_ref().map_or(0, Vec::len))
        .collect();
    let indexes: UInt32Array = rows.into_iter().flatten().flatten().collect();
    let values = take(source.as_ref(), &indexes, None)?;
    Ok(Arc::new(ListArray::try_new(
        Arc::clone(field),
        OffsetBuffer::from_lengths(lengths),
        values,
        (nulls.null_count() > 0).then_some(nulls),
    )?))
}

/// The positions in a list's values of each row's elements (`None` for a NULL row).
pub(super) fn element_ranges(
    list: &GenericListArray<i32>,
) -> impl Iterator<Item = Option<std::ops::Range<u32>>> + '_ {
    list.offsets()
        .windows(2)
        .enumerate()
        .map(|(i, w)| list.is_valid(i).then(|| w[0] as u32..w[1] as u32))
}

/// `slice(array, start, length)`: `length` elements from `start` (1 the first, -1 the
/// last); `[]` when `start` lies beyond either end. A 0 `start` or a negative `length` fails
/// the query, as in Spark.
fn slice(args: &[ArrayRef]) -> Result<ArrayRef> {
    let list = args[0].as_list::<i32>();
    let starts = args[1].as_primitive::<Int32Type>();
    let lengths = args[2].as_primitive::<Int32Type>();
    let mut rows = Vec::with_capacity(list.len());
    for (i, range) in element_ranges(list).enumerate() {
        let (Some(range), true, true) = (range, starts.is_valid(i), lengths.is_valid(i)) else {
            rows.push(None);
            continue;
        };
        let (start, length) = (starts.value(i) as i64, lengths.value(i) as i64);
        if start == 0 {
            return Err(DataFusionError::Execution(
                "slice: start must be positive (1 the first element) or negative (-1 the \
                 last); it was 0"
                    .into(),
            ));
        }
        if length < 0 {
            return Err(DataFusionError::Execution(format!(
                "slice: length must be 0 or more; it was {length}"
            )));
        }
        let count = range.len() as i64;
        let first = if start > 0 { start - 1 } else { count + start };
        let taken = if (0..count).contains(&first) {
            let last = (first + length).min(count);
            (range.start + first as u32..range.start + last as u32)
                .map(Some)
                .collect()
        } else {
            Vec::new()
        };
        rows.push(Some(taken));
    }
    gather_lists(args[0].data_type(), list.values(), rows)
}

/// Spark's `shuffle(array)`: the array's elements in a random order, a new one for each
/// row and each run.
fn shuffle(args: &[ArrayRef]) -> Result<ArrayRef> {
    use rand::seq::SliceRandom;
    let list = args[0].as_list::<i32>();
    let mut random = rand::rng();
    let rows = element_ranges(list)
        .map(|range| {
            range.map(|range| {
                let mut row: Vec<Option<u32>> = range.map(Some).collect();
                row.shuffle(&mut random);
                row
            })
        })
        .collect();
    gather_lists(args[0].data_type(), list.values(), rows)
}

/// `array_insert(array, pos, value)`: the array with `value` at `pos` (1 the first, -1
/// after the last), NULLs filling the gap when `pos` lies beyond either end, as Spark 3.5
/// (without its legacy `negativeIndexInArrayInsert`). A 0 `pos` fails the query.
fn array_insert(args: &[ArrayRef]) -> Result<ArrayRef> {
    let list = args[0].as_list::<i32>();
    let positions = args[1].as_primitive::<Int32Type>();
    // The inserted values follow the list's values in one source.
    let values = list.values();
    let inserted_from = values.len() as u32;
    let inserted = if args[2].data_type() == values.data_type() {
        Arc::clone(&args[2])
    } else {
        new_null_array(values.data_type(), args[2].len())
    };
    let source = concat(&[values.as_ref(), inserted.as_ref()])?;
    let mut rows = Vec::with_capacity(list.len());
    for (i, range) in element_ranges(list).enumerate() {
        let (Some(range), true) = (range, positions.is_valid(i)) else {
            rows.push(None);
            continue;
        };
        let position = positions.value(i) as i64;
        if position == 0 {
            return Err(DataFusionError::Execution(
                "array_insert: the position must be positive (1 the first element) or \
                 negative (-1 after the last); it was 0"
                    .into(),
            ));
        }
        let elements: Vec<Option<u32>> = range.map(Some).collect();
        let count = elements.len() as i64;
        let value = Some(inserted_from + i as u32);
        let row = if position > 0 {
            let at = position - 1;
            let mut row = elements;
            if at > count {
                row.resize(at as usize, None);
            }
            row.insert(at as usize, value);
            row
        } else {
            // -1 is after the last element: the place counted from the end.
            let at = count + position + 1;
            if at >= 0 {
                let mut row = elements;
                row.insert(at as usize, value);
                row
            } else {
                let mut row = vec![value];
                row.resize(1 + (-at) as usize, None);
                row.extend(elements);
                row
            }
        };
        rows.push(Some(row));
    }
    gather_lists(args[0].data_type(), &source, rows)
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, error, open};

    #[tokio::test]
    async fn shuffle_keeps_the_elements_in_some_order() {
        let engine = engine().await;
        let s = open(&engine);
        // The order is random; what it holds is not.
        check(
            &engine,
            &s,
            "SELECT sort_array(shuffle(array(3, 1, NULL, 2))), size(shuffle(array('a', 'b'))), \
             shuffle(array(7)), shuffle(array()), shuffle(NULL), \
             typeof(shuffle(array(1)))",
            &["[NULL, 1, 2, 3]", "2", "[7]", "[]", "NULL", "array<int>"],
        )
        .await;
        let rows = crate::test_util::value_rows(
            &engine,
            &s,
            "SELECT DISTINCT CAST(shuffle(sequence(1, 8)) AS STRING) FROM range(200)",
        )
        .await;
        assert!(
            rows.len() > 1,
            "200 shuffles of 8 elements gave one order: {rows:?}"
        );
    }

    // Every expected value is Spark's (3.5 semantics, ANSI off).
    #[tokio::test]
    async fn slice_counts_from_one_and_from_the_end() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT slice(array(1, 2, 3, 4), 2, 2), slice(array(1, 2, 3, 4), -2, 5), \
             slice(array(1, 2, 3, 4), 5, 1), slice(array(1, 2, 3, 4), -5, 2), \
             slice(array(1, 2, 3, 4), 1, 0), slice(array('a', 'b', 'c'), -1, 1), \
             slice(array(1, NULL, 3), 2, 1), slice(NULL, 1, 1), slice(array(1, 2), NULL, 1)",
            &[
                "[2, 3]", "[3, 4]", "[]", "[]", "[]", "[c]", "[NULL]", "NULL", "NULL",
            ],
        )
        .await;
        for (sql, expected) in [
            (
                "SELECT slice(array(1, 2), 0, 1)",
                "slice: start must be positive (1 the first element) or negative (-1 the last); it was 0",
            ),
            (
                "SELECT slice(array(1, 2), 1, -1)",
                "slice: length must be 0 or more; it was -1",
            ),
        ] {
            let e = error(&engine, &s, sql).await.to_string();
            assert!(e.contains(expected), "{sql}: {e}");
        }
    }

    #[tokio::test]
    async fn array_insert_pads_with_nulls_beyond_either_end() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT array_insert(array(1, 2, 3), 2, 9), array_insert(array(1, 2, 3), 5, 9), \
             array_insert(array(1, 2, 3), -1, 9), array_insert(array(1, 2, 3), -5, 9), \
             array_insert(array(1, 2, 3), 4, 9), array_insert(array(1, 2, 3), -3, 9), \
             array_insert(array(1, 2, 3), -4, 9), array_insert(array(1, 2), 1, NULL), \
             array_insert(CAST(NULL AS INT[]), 1, 9), array_insert(array(1, 2), NULL, 9)",
            &[
                "[1, 9, 2, 3]",
                "[1, 2, 3, NULL, 9]",
                "[1, 2, 3, 9]",
                "[9, NULL, 1, 2, 3]",
                "[1, 2, 3, 9]",
                "[1, 9, 2, 3]",
                "[9, 1, 2, 3]",
                "[NULL, 1, 2]",
                "NULL",
                "NULL",
            ],
        )
        .await;
        let e = error(&engine, &s, "SELECT array_insert(array(1), 0, 9)")
            .await
            .to_string();
        assert!(
            e.contains("array_insert: the position must be positive"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn try_element_at_is_null_beyond_either_end() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT try_element_at(array(1, 2, 3), 1), try_element_at(array(1, 2, 3), -1), \
             try_element_at(array(1, 2, 3), 4), try_element_at(array(1, 2, 3), -4), \
             try_element_at(map('a', 1), 'a'), try_element_at(map('a', 1), 'b'), \
             try_element_at(CAST(NULL AS INT[]), 1), try_element_at(array(1), NULL), \
             try_element_at(map('a', 1), NULL)",
            &[
                "1", "3", "NULL", "NULL", "1", "NULL", "NULL", "NULL", "NULL",
            ],
        )
        .await;
    }
}
