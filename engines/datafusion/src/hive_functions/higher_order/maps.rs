//! `map_filter`, `transform_keys`, `transform_values` and `map_zip_with` over a batch's
//! maps.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, MapArray, StructArray, UInt32Array};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::compute::{filter, interleave, take};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::LambdaArgument;

use super::flat::{booleans, display, evaluate, kept, Flat};

pub(super) fn map_filter(map: &ArrayRef, lambda: &LambdaArgument) -> Result<ArrayRef> {
    let flat = Flat::of_map(map)?;
    let (keys, values) = flat.map_parts();
    let keep = kept(&booleans(&evaluate(
        lambda,
        &[&|| Ok(Arc::clone(&keys)), &|| Ok(Arc::clone(&values))],
        &flat.rows,
        flat.values.len(),
    )?)?);
    let kept = filter(&flat.values, &keep)?;
    let DataType::Map(field, ordered) = map.data_type() else {
        unreachable!("the argument was coerced to a map");
    };
    Ok(Arc::new(MapArray::try_new(
        Arc::clone(field),
        flat.kept_offsets(&keep),
        kept.as_struct().clone(),
        flat.nulls,
        *ordered,
    )?))
}

/// `transform_keys` (`keys`) or `transform_values`: the lambda's answer for each entry in
/// place of its key or value. New keys must be neither NULL nor repeated in a map, as Spark
/// requires (its default `spark.sql.mapKeyDedupPolicy`, EXCEPTION).
pub(super) fn transform_entries(
    map: &ArrayRef,
    lambda: &LambdaArgument,
    returns: &DataType,
    keys: bool,
) -> Result<ArrayRef> {
    let flat = Flat::of_map(map)?;
    let (old_keys, old_values) = flat.map_parts();
    let answers = evaluate(
        lambda,
        &[&|| Ok(Arc::clone(&old_keys)), &|| {
            Ok(Arc::clone(&old_values))
        }],
        &flat.rows,
        flat.values.len(),
    )?;
    let (new_keys, new_values) = if keys {
        unique_keys(&answers, &flat)?;
        (answers, old_values)
    } else {
        (old_keys, answers)
    };
    map_from(returns, flat.offsets, new_keys, new_values, flat.nulls)
}

/// Fails as Spark does when a map would have a NULL key or a key twice.
fn unique_keys(keys: &ArrayRef, flat: &Flat) -> Result<()> {
    if keys.null_count() > 0 {
        return Err(DataFusionError::Execution(
            "Cannot use null as map key (transform_keys gave NULL)".to_owned(),
        ));
    }
    let converter = RowConverter::new(vec![SortField::new(keys.data_type().clone())])?;
    let rows = converter.convert_columns(&[Arc::clone(keys)])?;
    let mut seen = HashSet::new();
    for r in 0..flat.rows() {
        seen.clear();
        for i in flat.range(r) {
            if !seen.insert(rows.row(i)) {
                return Err(DataFusionError::Execution(format!(
                    "Duplicate map key {} was found, please check the input data \
                     (transform_keys gave it twice in one map)",
                    display(keys, i)?
                )));
            }
        }
    }
    Ok(())
}

pub(super) fn map_zip_with(
    first: &ArrayRef,
    second: &ArrayRef,
    lambda: &LambdaArgument,
    returns: &DataType,
) -> Result<ArrayRef> {
    let (first, second) = (Flat::of_map(first)?, Flat::of_map(second)?);
    let nulls = NullBuffer::union(first.nulls.as_ref(), second.nulls.as_ref());
    let ((keys1, values1), (keys2, values2)) = (first.map_parts(), second.map_parts());
    let converter = RowConverter::new(vec![SortField::new(keys1.data_type().clone())])?;
    let rows1 = converter.convert_columns(&[Arc::clone(&keys1)])?;
    let rows2 = converter.convert_columns(&[Arc::clone(&keys2)])?;
    let mut lengths = Vec::with_capacity(first.rows());
    let (mut rows, mut keys, mut lefts, mut rights) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut in_second = HashMap::new();
    for r in 0..first.rows() {
        if nulls.as_ref().is_some_and(|n| n.is_null(r)) {
            lengths.push(0);
            continue;
        }
        in_second.clear();
        in_second.extend(second.range(r).map(|j| (rows2.row(j), j)));
        let before = keys.len();
        // The first map's keys in its order, then the second's it lacks, as Spark.
        for i in first.range(r) {
            let j = in_second.remove(&rows1.row(i));
            keys.push((0, i));
            lefts.push(Some(i as u32));
            rights.push(j.map(|j| j as u32));
        }
        for j in second.range(r) {
            if in_second.contains_key(&rows2.row(j)) {
                keys.push((1, j));
                lefts.push(None);
                rights.push(Some(j as u32));
            }
        }
        rows.extend(std::iter::repeat_n(r as u32, keys.len() - before));
        lengths.push(keys.len() - before);
    }
    let keys = interleave(&[keys1.as_ref(), keys2.as_ref()], &keys)?;
    let rows = UInt32Array::from(rows);
    let lefts = UInt32Array::from(lefts);
    let rights = UInt32Array::from(rights);
    let values = evaluate(
        lambda,
        &[
            &|| Ok(Arc::clone(&keys)),
            &|| Ok(take(&values1, &lefts, None)?),
            &|| Ok(take(&values2, &rights, None)?),
        ],
        &rows,
        rows.len(),
    )?;
    map_from(
        returns,
        OffsetBuffer::from_lengths(lengths),
        keys,
        values,
        nulls,
    )
}

/// A map of the type `returns` from its rows' offsets, keys and values.
fn map_from(
    returns: &DataType,
    offsets: OffsetBuffer<i32>,
    keys: ArrayRef,
    values: ArrayRef,
    nulls: Option<NullBuffer>,
) -> Result<ArrayRef> {
    let DataType::Map(entries, ordered) = returns else {
        return Err(DataFusionError::Internal(format!(
            "expected a map type, got {returns}"
        )));
    };
    let DataType::Struct(fields) = entries.data_type() else {
        return Err(DataFusionError::Internal(format!(
            "expected a map's entries, got {entries}"
        )));
    };
    let entries_array = StructArray::try_new(fields.clone(), vec![keys, values], None)?;
    Ok(Arc::new(MapArray::try_new(
        Arc::clone(entries),
        offsets,
        entries_array,
        nulls,
        *ordered,
    )?))
}
