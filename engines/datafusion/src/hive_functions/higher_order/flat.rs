//! The elements of a batch's arrays (or maps' entries) laid out for a lambda: one column of
//! all of them, each captured column repeated for its row's elements, so that the lambda's
//! body is evaluated once for the whole batch.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Int32Array, UInt32Array};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::compute::kernels::cast::cast;
use datafusion::arrow::compute::{filter, prep_null_mask_filter, take_arrays};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::LambdaArgument;

/// The elements of a batch's arrays (or a map's entries), one after another, with their
/// rows; a NULL row has none.
pub(super) struct Flat {
    /// Where each row's elements start in `values`, from 0.
    pub offsets: OffsetBuffer<i32>,
    /// The elements (a map's entries: a struct of `key` and `value`).
    pub values: ArrayRef,
    /// The row of each element, by which a captured column's value is repeated for each.
    pub rows: UInt32Array,
    pub nulls: Option<NullBuffer>,
}

impl Flat {
    pub fn of_list(array: &ArrayRef) -> Result<Self> {
        let list = array.as_list_opt::<i32>().ok_or_else(|| {
            DataFusionError::Internal(format!("expected an array, got {}", array.data_type()))
        })?;
        Self::new(list.offsets(), list.values(), list.nulls())
    }

    pub fn of_map(array: &ArrayRef) -> Result<Self> {
        let map = array.as_map_opt().ok_or_else(|| {
            DataFusionError::Internal(format!("expected a map, got {}", array.data_type()))
        })?;
        let entries: ArrayRef = Arc::new(map.entries().clone());
        Self::new(map.offsets(), &entries, map.nulls())
    }

    fn new(
        offsets: &OffsetBuffer<i32>,
        child: &ArrayRef,
        nulls: Option<&NullBuffer>,
    ) -> Result<Self> {
        let start = offsets[0] as usize;
        let end = offsets[offsets.len() - 1] as usize;
        let mut values = child.slice(start, end - start);
        let mut lengths: Vec<usize> = offsets.lengths().collect();
        if let Some(nulls) = nulls {
            // A NULL row's elements are not the lambda's to see (it could fail on them):
            // DataFusion empties a NULL array's, but a NULL map may keep its entries.
            if nulls.null_count() > 0
                && (0..lengths.len()).any(|r| nulls.is_null(r) && lengths[r] > 0)
            {
                let keep: BooleanArray = lengths
                    .iter()
                    .enumerate()
                    .flat_map(|(r, n)| std::iter::repeat_n(Some(nulls.is_valid(r)), *n))
                    .collect();
                values = filter(&values, &keep)?;
                for (r, n) in lengths.iter_mut().enumerate() {
                    if nulls.is_null(r) {
                        *n = 0;
                    }
                }
            }
        }
        let rows = lengths
            .iter()
            .enumerate()
            .flat_map(|(r, n)| std::iter::repeat_n(r as u32, *n))
            .collect();
        Ok(Self {
            offsets: OffsetBuffer::from_lengths(lengths),
            values,
            rows,
            nulls: nulls.cloned(),
        })
    }

    pub fn rows(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn range(&self, row: usize) -> std::ops::Range<usize> {
        self.offsets[row] as usize..self.offsets[row + 1] as usize
    }

    /// Each element's position in its array, from 0: Spark's `i` in `(x, i) -> ...`.
    pub fn positions(&self) -> ArrayRef {
        let positions: Int32Array = (0..self.rows())
            .flat_map(|r| 0..self.range(r).len() as i32)
            .collect();
        Arc::new(positions)
    }

    /// Where each row's elements start once only those `keep` marks are kept.
    pub fn kept_offsets(&self, keep: &BooleanArray) -> OffsetBuffer<i32> {
        OffsetBuffer::from_lengths((0..self.rows()).map(|r| {
            let range = self.range(r);
            keep.values()
                .slice(range.start, range.len())
                .count_set_bits()
        }))
    }

    pub fn map_parts(&self) -> (ArrayRef, ArrayRef) {
        let entries = self.values.as_struct();
        (Arc::clone(entries.column(0)), Arc::clone(entries.column(1)))
    }
}

/// The lambda's body over `len` elements, its variables' columns from `params`; `rows`
/// gives each element's row, by which each captured column's value is repeated.
pub(super) fn evaluate(
    lambda: &LambdaArgument,
    params: &[&dyn Fn() -> Result<ArrayRef>],
    rows: &UInt32Array,
    len: usize,
) -> Result<ArrayRef> {
    lambda
        .evaluate(params, |captured| Ok(take_arrays(captured, rows, None)?))?
        .into_array(len)
}

/// A predicate lambda's answers as booleans.
pub(super) fn booleans(result: &ArrayRef) -> Result<BooleanArray> {
    Ok(cast(result, &DataType::Boolean)?.as_boolean().clone())
}

/// Which elements a predicate keeps: those it is true for (not NULL).
pub(super) fn kept(answers: &BooleanArray) -> BooleanArray {
    match answers.nulls() {
        Some(_) => prep_null_mask_filter(answers),
        None => answers.clone(),
    }
}

/// A value as an error shows it.
pub(super) fn display(array: &ArrayRef, i: usize) -> Result<String> {
    let formatter = ArrayFormatter::try_new(array.as_ref(), &FormatOptions::default())?;
    Ok(formatter.value(i).to_string())
}
