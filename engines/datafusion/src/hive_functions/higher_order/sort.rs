//! `array_sort(array, (l, r) -> int)`, Spark's sort by a comparator, over a batch's arrays.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray, UInt32Array};
use datafusion::arrow::compute::kernels::cast::cast;
use datafusion::arrow::compute::take;
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::LambdaArgument;

use super::flat::{display, evaluate, Flat};

/// `array_sort(array, comparator)`: a bottom-up merge sort of every row's array at once.
/// Each round compares the next pair of every merge under way, in one evaluation of the
/// comparator; the left element goes first unless the comparator is positive, so equal
/// elements keep their order, as in Java's (Spark's) sort, and any consistent comparator
/// sorts as Spark's does.
pub(super) fn sort_with_comparator(
    array: &ArrayRef,
    comparator: &LambdaArgument,
) -> Result<ArrayRef> {
    let flat = Flat::of_list(array)?;
    // `order[k]` is the element at position k, each row's positions sorted run by run.
    let mut order: Vec<u32> = (0..flat.values.len() as u32).collect();
    let longest = (0..flat.rows())
        .map(|r| flat.range(r).len())
        .max()
        .unwrap_or(0);
    let mut width = 1;
    while width < longest {
        let mut merges: Vec<Merge> = Vec::new();
        for r in 0..flat.rows() {
            let range = flat.range(r);
            let mut start = range.start;
            while start + width < range.end {
                let middle = start + width;
                let end = (start + 2 * width).min(range.end);
                merges.push(Merge {
                    row: r as u32,
                    left: start..middle,
                    right: middle..end,
                    out: start,
                });
                start = end;
            }
        }
        let mut merged = order.clone();
        loop {
            let active: Vec<&mut Merge> = merges
                .iter_mut()
                .filter(|m| !m.left.is_empty() && !m.right.is_empty())
                .collect();
            if active.is_empty() {
                break;
            }
            let rows = UInt32Array::from_iter_values(active.iter().map(|m| m.row));
            let lefts = UInt32Array::from_iter_values(active.iter().map(|m| order[m.left.start]));
            let rights = UInt32Array::from_iter_values(active.iter().map(|m| order[m.right.start]));
            let compared = evaluate(
                comparator,
                &[&|| Ok(take(&flat.values, &lefts, None)?), &|| {
                    Ok(take(&flat.values, &rights, None)?)
                }],
                &rows,
                rows.len(),
            )?;
            let compared = cast(&compared, &DataType::Int64)?;
            let compared = compared.as_primitive::<Int64Type>();
            if let Some(k) = (0..compared.len()).find(|&k| compared.is_null(k)) {
                // Spark's words (COMPARATOR_RETURNS_NULL).
                return Err(DataFusionError::Execution(format!(
                    "The comparator has returned a NULL for a comparison between {} and {}; \
                     array_sort's comparator must return a negative integer, 0 or a positive \
                     integer",
                    display(&take(&flat.values, &lefts, None)?, k)?,
                    display(&take(&flat.values, &rights, None)?, k)?,
                )));
            }
            for (m, c) in active.into_iter().zip(compared.values()) {
                let side = if *c > 0 { &mut m.right } else { &mut m.left };
                merged[m.out] = order[side.start];
                side.start += 1;
                m.out += 1;
            }
        }
        // What is left of a merge (one side done) follows in its order.
        for m in merges.iter_mut() {
            for k in m.left.clone().chain(m.right.clone()) {
                merged[m.out] = order[k];
                m.out += 1;
            }
        }
        order = merged;
        width *= 2;
    }
    let sorted = take(&flat.values, &UInt32Array::from(order), None)?;
    let DataType::List(field) = array.data_type() else {
        unreachable!("the argument was coerced to a list");
    };
    Ok(Arc::new(ListArray::try_new(
        Arc::clone(field),
        flat.offsets,
        sorted,
        flat.nulls,
    )?))
}

/// One merge of two sorted runs of a row's array under way in [`sort_with_comparator`]:
/// the positions of each run not yet taken, and where the next one taken goes.
struct Merge {
    row: u32,
    left: std::ops::Range<usize>,
    right: std::ops::Range<usize>,
    out: usize,
}
