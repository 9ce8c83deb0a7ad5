//! `transform`, `filter`, `exists`, `forall`, `aggregate` and `zip_with` over a batch's
//! arrays.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, ListArray, UInt32Array};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::compute::{concat, filter, nullif, take};
use datafusion::arrow::datatypes::DataType;
use datafusion::error::Result;
use datafusion::logical_expr::LambdaArgument;

use super::flat::{booleans, evaluate, kept, Flat};
use super::list_field;

pub(super) fn transform(
    array: &ArrayRef,
    lambda: &LambdaArgument,
    returns: &DataType,
) -> Result<ArrayRef> {
    let flat = Flat::of_list(array)?;
    let transformed = evaluate(
        lambda,
        &[&|| Ok(Arc::clone(&flat.values)), &|| Ok(flat.positions())],
        &flat.rows,
        flat.values.len(),
    )?;
    Ok(Arc::new(ListArray::try_new(
        list_field(returns)?,
        flat.offsets,
        transformed,
        flat.nulls,
    )?))
}

pub(super) fn filter_elements(array: &ArrayRef, lambda: &LambdaArgument) -> Result<ArrayRef> {
    let flat = Flat::of_list(array)?;
    let keep = kept(&booleans(&evaluate(
        lambda,
        &[&|| Ok(Arc::clone(&flat.values)), &|| Ok(flat.positions())],
        &flat.rows,
        flat.values.len(),
    )?)?);
    let kept = filter(&flat.values, &keep)?;
    let DataType::List(field) = array.data_type() else {
        unreachable!("the argument was coerced to a list");
    };
    Ok(Arc::new(ListArray::try_new(
        Arc::clone(field),
        flat.kept_offsets(&keep),
        kept,
        flat.nulls,
    )?))
}

/// `exists` (`some`), or `forall` (`!some`): Spark's three-valued logic, where a NULL answer
/// for an element makes the result NULL unless another element decides it.
pub(super) fn exists(array: &ArrayRef, lambda: &LambdaArgument, some: bool) -> Result<ArrayRef> {
    let flat = Flat::of_list(array)?;
    let answers = booleans(&evaluate(
        lambda,
        &[&|| Ok(Arc::clone(&flat.values))],
        &flat.rows,
        flat.values.len(),
    )?)?;
    let result: BooleanArray = (0..flat.rows())
        .map(|r| {
            if flat.nulls.as_ref().is_some_and(|n| n.is_null(r)) {
                return None;
            }
            let mut unknown = false;
            for i in flat.range(r) {
                if answers.is_null(i) {
                    unknown = true;
                } else if answers.value(i) == some {
                    return Some(some);
                }
            }
            (!unknown).then_some(!some)
        })
        .collect();
    Ok(Arc::new(result))
}

/// `aggregate`: the merge lambda applied to every row's `n`th element at once, `n` from the
/// first, with each row's accumulator; then the finish lambda over the accumulators.
///
/// The rows are taken longest array first, so that those still folding at step `n` are the
/// first ones: each step's work is that of the rows it folds, and a row whose array is done
/// keeps its accumulator where it stands.
pub(super) fn aggregate(
    array: &ArrayRef,
    start: &ArrayRef,
    merge: &LambdaArgument,
    finish: Option<&LambdaArgument>,
) -> Result<ArrayRef> {
    let flat = Flat::of_list(array)?;
    let mut longest_first: Vec<u32> = (0..flat.rows() as u32).collect();
    longest_first.sort_by_key(|&r| std::cmp::Reverse(flat.range(r as usize).len()));
    let longest_first = UInt32Array::from(longest_first);
    // The accumulators of the rows still folding, the first ones of `longest_first`; and
    // those of the rows done, step by step (the last rows of `longest_first` first).
    let mut folding = take(start, &longest_first, None)?;
    let mut done: Vec<ArrayRef> = Vec::new();
    for n in 0.. {
        let still = longest_first
            .values()
            .iter()
            .take_while(|&&r| flat.range(r as usize).len() > n)
            .count();
        if still < folding.len() {
            done.push(folding.slice(still, folding.len() - still));
            folding = folding.slice(0, still);
        }
        if still == 0 {
            break;
        }
        let rows = longest_first.slice(0, still);
        let elements: UInt32Array = rows
            .values()
            .iter()
            .map(|&r| (flat.range(r as usize).start + n) as u32)
            .collect();
        folding = evaluate(
            merge,
            &[&|| Ok(Arc::clone(&folding)), &|| {
                Ok(take(&flat.values, &elements, None)?)
            }],
            &rows,
            still,
        )?;
    }
    // Back in the rows' order.
    done.reverse();
    let by_length = match done.as_slice() {
        [] => folding,
        pieces => concat(&pieces.iter().map(|a| a.as_ref()).collect::<Vec<_>>())?,
    };
    let mut positions = vec![0u32; flat.rows()];
    for (k, r) in longest_first.values().iter().enumerate() {
        positions[*r as usize] = k as u32;
    }
    let accumulators = take(&by_length, &UInt32Array::from(positions), None)?;
    let result = match finish {
        Some(finish) => finish
            .evaluate(&[&|| Ok(Arc::clone(&accumulators))], |captured| {
                Ok(captured.to_vec())
            })?
            .into_array(flat.rows())?,
        None => accumulators,
    };
    match &flat.nulls {
        Some(nulls) if nulls.null_count() > 0 => {
            let is_null: BooleanArray = nulls.iter().map(|valid| Some(!valid)).collect();
            Ok(nullif(&result, &is_null)?)
        }
        _ => Ok(result),
    }
}

pub(super) fn zip_with(
    left: &ArrayRef,
    right: &ArrayRef,
    lambda: &LambdaArgument,
    returns: &DataType,
) -> Result<ArrayRef> {
    let (left, right) = (Flat::of_list(left)?, Flat::of_list(right)?);
    let nulls = NullBuffer::union(left.nulls.as_ref(), right.nulls.as_ref());
    let mut lengths = Vec::with_capacity(left.rows());
    let (mut rows, mut lefts, mut rights) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..left.rows() {
        let (a, b) = (left.range(r), right.range(r));
        let length = if nulls.as_ref().is_some_and(|n| n.is_null(r)) {
            0
        } else {
            a.len().max(b.len())
        };
        lengths.push(length);
        for n in 0..length {
            rows.push(r as u32);
            lefts.push((n < a.len()).then(|| (a.start + n) as u32));
            rights.push((n < b.len()).then(|| (b.start + n) as u32));
        }
    }
    let rows = UInt32Array::from(rows);
    let lefts = UInt32Array::from(lefts);
    let rights = UInt32Array::from(rights);
    let zipped = evaluate(
        lambda,
        &[&|| Ok(take(&left.values, &lefts, None)?), &|| {
            Ok(take(&right.values, &rights, None)?)
        }],
        &rows,
        rows.len(),
    )?;
    Ok(Arc::new(ListArray::try_new(
        list_field(returns)?,
        OffsetBuffer::from_lengths(lengths),
        zipped,
        nulls,
    )?))
}
