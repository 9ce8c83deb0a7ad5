//! Spark's functions that make a map from other values: `map_from_arrays(keys, values)`,
//! `map_from_entries(array of structs)` and `map_concat(map, ...)`. Each checks its keys as
//! Spark does by default (`spark.sql.mapKeyDedupPolicy=EXCEPTION`): a NULL key or a key
//! given twice fails the query, naming it.

use std::collections::HashSet;
use std::sync::Arc;

use datafusion::arrow::array::{
    new_empty_array, Array, ArrayRef, AsArray, MapArray, StructArray, UInt32Array,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::compute::{concat, take};
use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{ScalarUDF, Signature, TypeSignature, Volatility};

use super::arrays::{element_ranges, element_type, is_list, list_type};
use super::{bad_arguments, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::computed(
            "map_from_arrays",
            |name, types| match types {
                [k, v] if is_list(k) && is_list(v) => Ok(vec![list_type(k), list_type(v)]),
                _ => Err(bad_arguments(
                    name,
                    "(array of keys, array of values)",
                    types,
                )),
            },
            |t| Ok(map_type(element_type(&t[0]), element_type(&t[1]))),
            map_from_arrays,
        )
        .udf(),
        HiveFunction::computed(
            "map_from_entries",
            |name, types| match types {
                [DataType::List(e)] if pair_fields(e.data_type()).is_some() => Ok(types.to_vec()),
                _ => Err(bad_arguments(
                    name,
                    "an array of structs of two fields (key, value)",
                    types,
                )),
            },
            |t| {
                let (k, v) = pair_fields(&element_type(&t[0])).expect("coerced to pairs");
                Ok(map_type(k, v))
            },
            map_from_entries,
        )
        .udf(),
        HiveFunction::computed(
            "map_concat",
            map_concat_types,
            |t| {
                Ok(t.first()
                    .cloned()
                    .unwrap_or(map_type(DataType::Utf8, DataType::Utf8)))
            },
            map_concat,
        )
        .with_signature(Signature::one_of(
            vec![TypeSignature::Nullary, TypeSignature::UserDefined],
            Volatility::Immutable,
        ))
        .udf(),
    ]
}

/// Spark's map type of these keys and values, in DataFusion's names (`entries`, `key`,
/// `value`), as DataFusion's `map` makes it.
fn map_type(key: DataType, value: DataType) -> DataType {
    DataType::Map(
        Arc::new(Field::new(
            "entries",
            DataType::Struct(entry_fields(key, value)),
            false,
        )),
        false,
    )
}

fn entry_fields(key: DataType, value: DataType) -> Fields {
    Fields::from(vec![
        Field::new("key", key, false),
        Field::new("value", value, true),
    ])
}

/// The key and value types of a struct of two fields.
fn pair_fields(t: &DataType) -> Option<(DataType, DataType)> {
    match t {
        DataType::Struct(fields) if fields.len() == 2 => {
            Some((fields[0].data_type().clone(), fields[1].data_type().clone()))
        }
        _ => None,
    }
}

/// Maps of one type each (or NULLs); none gives an empty `map<string,string>`, as Spark.
fn map_concat_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let first_map = types.iter().find(|t| matches!(t, DataType::Map(..)));
    match first_map {
        Some(map) if types.iter().all(|t| t == map || t.is_null()) => {
            Ok(vec![map.clone(); types.len()])
        }
        None if types.is_empty() => Ok(vec![]),
        _ => Err(bad_arguments(name, "maps of one type", types)),
    }
}

/// The maps whose row `i` holds the entries `rows[i]` (key and value indexes into `keys` and
/// `values`), NULL for a `None` row; a NULL key or a key twice in a row fails the query.
fn build_maps(
    name: &str,
    keys: &ArrayRef,
    values: &ArrayRef,
    rows: Vec<Option<Vec<(u32, u32)>>>,
) -> Result<ArrayRef> {
    let nulls = NullBuffer::from_iter(rows.iter().map(Option::is_some));
    let lengths: Vec<usize> = rows
        .iter()
        .map(|r| r.as_ref().map_or(0, Vec::len))
        .collect();
    let (key_indexes, value_indexes): (Vec<u32>, Vec<u32>) =
        rows.into_iter().flatten().flatten().unzip();
    let keys = take(keys.as_ref(), &UInt32Array::from(key_indexes), None)?;
    let values = take(values.as_ref(), &UInt32Array::from(value_indexes), None)?;
    if keys.logical_null_count() > 0 {
        return Err(DataFusionError::Execution(format!(
            "{name}: a map key cannot be NULL"
        )));
    }
    let offsets = OffsetBuffer::<i32>::from_lengths(lengths);
    check_unique_keys(name, &keys, &offsets)?;
    let fields = entry_fields(keys.data_type().clone(), values.data_type().clone());
    let entries = StructArray::try_new(fields.clone(), vec![keys, values], None)?;
    let DataType::Map(entries_field, _) =
        map_type(fields[0].data_type().clone(), fields[1].data_type().clone())
    else {
        unreachable!("map_type makes a map");
    };
    Ok(Arc::new(MapArray::try_new(
        entries_field,
        offsets,
        entries,
        (nulls.null_count() > 0).then_some(nulls),
        false,
    )?))
}

/// Fails, naming the key, when a map's keys hold one twice.
fn check_unique_keys(name: &str, keys: &ArrayRef, offsets: &OffsetBuffer<i32>) -> Result<()> {
    let converter = RowConverter::new(vec![SortField::new(keys.data_type().clone())])?;
    let rows = converter.convert_columns(&[Arc::clone(keys)])?;
    let mut seen = HashSet::new();
    for window in offsets.windows(2) {
        seen.clear();
        for i in window[0] as usize..window[1] as usize {
            if !seen.insert(rows.row(i)) {
                let formatter = ArrayFormatter::try_new(keys.as_ref(), &FormatOptions::default())?;
                return Err(DataFusionError::Execution(format!(
                    "{name}: the map key {} appears twice (Spark's \
                     spark.sql.mapKeyDedupPolicy=EXCEPTION)",
                    formatter.value(i)
                )));
            }
        }
    }
    Ok(())
}

/// `map_from_arrays(keys, values)`: the map of the keys to the values at the same places;
/// arrays of different lengths fail the query.
fn map_from_arrays(args: &[ArrayRef]) -> Result<ArrayRef> {
    let (keys, values) = (args[0].as_list::<i32>(), args[1].as_list::<i32>());
    let mut rows = Vec::with_capacity(keys.len());
    for (k, v) in element_ranges(keys).zip(element_ranges(values)) {
        let (Some(k), Some(v)) = (k, v) else {
            rows.push(None);
            continue;
        };
        if k.len() != v.len() {
            return Err(DataFusionError::Execution(format!(
                "map_from_arrays: the key array has {} elements and the value array {}; \
                 they must have as many",
                k.len(),
                v.len()
            )));
        }
        rows.push(Some(k.zip(v).collect()));
    }
    build_maps("map_from_arrays", keys.values(), values.values(), rows)
}

/// `map_from_entries(array of (key, value) structs)`: NULL for a NULL array or one holding a
/// NULL struct, as Spark.
fn map_from_entries(args: &[ArrayRef]) -> Result<ArrayRef> {
    let list = args[0].as_list::<i32>();
    let pairs = list.values().as_struct();
    let rows = element_ranges(list)
        .map(|range| {
            let range = range?;
            range
                .clone()
                .all(|i| pairs.is_valid(i as usize))
                .then(|| range.map(|i| (i, i)).collect())
        })
        .collect();
    build_maps("map_from_entries", pairs.column(0), pairs.column(1), rows)
}

/// `map_concat(map, ...)`: the maps' entries in one map, in order; NULL when any map is
/// NULL; a key in two maps fails the query.
fn map_concat(args: &[ArrayRef]) -> Result<ArrayRef> {
    let Some(first) = args.first() else {
        // No map: one empty map<string,string>, as Spark's map_concat().
        let no_strings = new_empty_array(&DataType::Utf8);
        return build_maps("map_concat", &no_strings, &no_strings, vec![Some(vec![])]);
    };
    let maps: Vec<&MapArray> = args.iter().map(|a| a.as_map()).collect();
    // Every map's entries in one source, each map's from its base on.
    let keys = concat(&maps.iter().map(|m| m.keys().as_ref()).collect::<Vec<_>>())?;
    let values = concat(&maps.iter().map(|m| m.values().as_ref()).collect::<Vec<_>>())?;
    let bases: Vec<u32> = maps
        .iter()
        .scan(0u32, |base, m| {
            let this = *base;
            *base += m.keys().len() as u32;
            Some(this)
        })
        .collect();
    let rows = (0..first.len())
        .map(|row| {
            let mut entries = Vec::new();
            for (map, base) in maps.iter().zip(&bases) {
                if map.is_null(row) {
                    return None;
                }
                let offsets = map.value_offsets();
                let range = offsets[row] as u32..offsets[row + 1] as u32;
                entries.extend(range.map(|i| (base + i, base + i)));
            }
            Some(entries)
        })
        .collect();
    build_maps("map_concat", &keys, &values, rows)
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, error, open};

    // Every expected value is Spark's.
    #[tokio::test]
    async fn maps_from_arrays_entries_and_other_maps() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT map_from_arrays(array(1, 2), array('a', 'b')), \
             map_from_arrays(array(1), array(NULL)), map_from_arrays(NULL, array(1)), \
             map_from_entries(array(struct(1, 'a'), struct(2, 'b'))), \
             map_from_entries(array(struct(1, 'a'), NULL)), \
             map_from_entries(array(struct(1, CAST(NULL AS STRING)))), \
             map_concat(map(1, 'a', 3, 'c'), map(2, 'b'), map(4, 'd')), \
             map_concat(map(1, 'a'), IF(false, map(2, 'b'), NULL)), map_concat()",
            &[
                "{1: a, 2: b}",
                "{1: NULL}",
                "NULL",
                "{1: a, 2: b}",
                "NULL",
                "{1: NULL}",
                "{1: a, 3: c, 2: b, 4: d}",
                "NULL",
                "{}",
            ],
        )
        .await;
        for (sql, expected) in [
            (
                "SELECT map_from_arrays(array(1, 2), array('a'))",
                "map_from_arrays: the key array has 2 elements and the value array 1",
            ),
            (
                "SELECT map_from_arrays(array(1, NULL), array('a', 'b'))",
                "map_from_arrays: a map key cannot be NULL",
            ),
            (
                "SELECT map_from_arrays(array(1, 1), array('a', 'b'))",
                "map_from_arrays: the map key 1 appears twice",
            ),
            (
                "SELECT map_from_entries(array(struct(NULL, 'a')))",
                "map_from_entries: a map key cannot be NULL",
            ),
            (
                "SELECT map_concat(map(1, 'a'), map(1, 'b'))",
                "map_concat: the map key 1 appears twice",
            ),
        ] {
            let e = error(&engine, &s, sql).await.to_string();
            assert!(e.contains(expected), "{sql}: {e}");
        }
    }
}
