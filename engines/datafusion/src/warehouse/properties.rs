//! A table's parameters as Hive shows them (`SHOW TBLPROPERTIES`, `DESCRIBE FORMATTED`'s
//! "Table Parameters:"), what `ALTER TABLE ... SET|UNSET TBLPROPERTIES` changes, and
//! `ANALYZE TABLE ... COMPUTE STATISTICS`.
//!
//! Hive keeps a table's properties, its comment and its statistics (`numFiles`,
//! `totalSize`, `numRows`) among its parameters. Here the properties and the comment are
//! kept in the table's metadata file; the file count and size are read from a listing of
//! the files whenever they are shown, so they are never stale; a row count is kept by
//! `ANALYZE` together with the files it counted, and shown only while the files are still
//! those (any write since hides it). DataFusion needs none of it to plan: it reads Parquet
//! files' row counts and column statistics from their footers at each query.

use std::collections::BTreeMap;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::SessionContext;
use object_store::ObjectMeta;
use url::Url;

use super::commands::{data_objects, existing};
use super::ddl::TableName;
use super::meta::{FileStatistics, RowStatistics, StoredFormat, TableKind, TableMeta};
use super::{child_dir, object_path, Warehouse};
use crate::catalog::CATALOG;

/// Hive's name for the directory of rows whose partition value is NULL.
pub const DEFAULT_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// A partition's name, `c1=v1/c2=v2`, from row `row` of its columns' values (cast to Utf8),
/// a NULL value being Hive's [`DEFAULT_PARTITION`].
pub fn partition_name(
    columns: &[impl std::fmt::Display],
    values: &[datafusion::arrow::array::ArrayRef],
    row: usize,
) -> String {
    columns
        .iter()
        .zip(values)
        .map(|(column, values)| {
            let values = values.as_string::<i32>();
            let value = match values.is_null(row) {
                true => DEFAULT_PARTITION,
                false => values.value(row),
            };
            format!("{column}={value}")
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The parameter that makes a table EXTERNAL (`'EXTERNAL'='TRUE'`) or managed again.
const EXTERNAL: &str = "EXTERNAL";

/// A partition's directory under its table's, `dt=2024-01-01/hr=1`: the key of its
/// statistics.
pub fn partition_path(spec: &[(String, String)]) -> String {
    spec.iter()
        .map(|(column, value)| format!("{column}={value}"))
        .collect::<Vec<_>>()
        .join("/")
}

/// The directory of a partition (every partition column given) or of the table (none).
pub fn partition_dir(location: &Url, spec: &[(String, String)]) -> Url {
    spec.iter().fold(location.clone(), |dir, (column, value)| {
        child_dir(&dir, &format!("{column}={value}"))
    })
}

/// What the data files in `files` add up to.
pub fn file_statistics<'a>(files: impl IntoIterator<Item = &'a ObjectMeta>) -> FileStatistics {
    let mut stats = FileStatistics::default();
    for file in files {
        let size = file.size;
        stats.min_bytes = if stats.files == 0 {
            size
        } else {
            stats.min_bytes.min(size)
        };
        stats.files += 1;
        stats.bytes += size;
        stats.max_bytes = stats.max_bytes.max(size);
        stats.last_modified_ms = stats
            .last_modified_ms
            .max(file.last_modified.timestamp_millis());
    }
    stats
}

/// The data files of a directory, and what they add up to.
pub async fn directory_statistics(warehouse: &Warehouse, dir: &Url) -> Result<FileStatistics> {
    Ok(file_statistics(&data_objects(warehouse, dir).await?))
}

/// The parameters Hive shows for a table (`partition` empty) or one of its partitions, sorted
/// by name: the table's properties and comment, `EXTERNAL`, and the statistics, read now.
pub async fn parameters(
    warehouse: &Warehouse,
    name: &TableName,
    meta: &TableMeta,
    partition: &[(String, String)],
) -> Result<Vec<(String, String)>> {
    let mut shown = BTreeMap::new();
    if partition.is_empty() {
        shown.extend(meta.properties.clone());
        if let Some(comment) = &meta.comment {
            shown.insert("comment".to_owned(), comment.clone());
        }
        if meta.kind == TableKind::External {
            shown.insert(EXTERNAL.to_owned(), "TRUE".to_owned());
        }
    }
    if meta.kind != TableKind::View {
        let location = warehouse.data_location(&name.database, &name.table, meta)?;
        let dir = partition_dir(&location, partition);
        let files = data_objects(warehouse, &dir).await?;
        let current = file_statistics(&files);
        shown.insert("numFiles".to_owned(), current.files.to_string());
        shown.insert("totalSize".to_owned(), current.bytes.to_string());
        let counted = meta
            .statistics
            .get(&partition_path(partition))
            .filter(|counted| counted.describes(&current))
            .map(|counted| counted.rows);
        // A partitioned table's rows, as Hive adds them up: its partitions' counts, when
        // every partition with files has one that is current.
        let added_up = || {
            let dir_path = object_path(&dir);
            let mut by_partition: BTreeMap<String, Vec<&ObjectMeta>> = BTreeMap::new();
            for file in &files {
                by_partition
                    .entry(partition_of(&dir_path, file))
                    .or_default()
                    .push(file);
            }
            if by_partition.is_empty() {
                return None;
            }
            by_partition
                .iter()
                .map(|(key, files)| {
                    let current = file_statistics(files.iter().copied());
                    meta.statistics
                        .get(key)
                        .filter(|counted| counted.describes(&current))
                        .map(|counted| counted.rows)
                })
                .sum::<Option<u64>>()
        };
        let rows = match counted {
            Some(rows) => Some(rows),
            None if partition.is_empty() && !meta.partition_columns.is_empty() => added_up(),
            None => None,
        };
        if let Some(rows) = rows {
            shown.insert("numRows".to_owned(), rows.to_string());
        }
    }
    Ok(shown.into_iter().collect())
}

/// The partition directory of a data file under the table's `location`, `dt=x/hr=y` (""
/// for a file of an unpartitioned table): the key of its statistics.
fn partition_of(location: &object_store::path::Path, file: &ObjectMeta) -> String {
    let mut parts: Vec<String> = file
        .location
        .prefix_match(location)
        .map(|parts| parts.map(|p| p.as_ref().to_owned()).collect())
        .unwrap_or_default();
    parts.pop();
    parts.join("/")
}

/// `ALTER TABLE t SET TBLPROPERTIES (...)` applied to the metadata: `comment` is the
/// table's comment and `EXTERNAL` its kind, as in Hive; the statistics Hive computes are
/// refused, since here they are read from the files.
pub fn set_properties(
    name: &TableName,
    meta: &mut TableMeta,
    warehouse: &Warehouse,
    properties: &BTreeMap<String, String>,
) -> Result<()> {
    for (key, value) in properties {
        if is_statistic(key) {
            return Err(computed_statistic(name, key));
        }
        if key == "comment" {
            meta.comment = Some(value.clone());
        } else if key.eq_ignore_ascii_case(EXTERNAL) {
            set_external(name, meta, warehouse, value.eq_ignore_ascii_case("true"))?;
        } else {
            meta.properties.insert(key.clone(), value.clone());
        }
    }
    Ok(())
}

/// `ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)` applied to the metadata; a key
/// the table lacks is refused without IF EXISTS, as Hive refuses it.
pub fn unset_properties(
    name: &TableName,
    meta: &mut TableMeta,
    keys: &[String],
    if_exists: bool,
) -> Result<()> {
    let missing: Vec<&str> = keys
        .iter()
        .filter(|key| match key.as_str() {
            "comment" => meta.comment.is_none(),
            _ => !meta.properties.contains_key(key.as_str()),
        })
        .map(String::as_str)
        .collect();
    if !missing.is_empty() && !if_exists {
        return Err(DataFusionError::Plan(format!(
            "{name} has no propert{} {}; ALTER TABLE {name} UNSET TBLPROPERTIES IF EXISTS (...) \
             passes over properties that are not set",
            if missing.len() == 1 { "y" } else { "ies" },
            missing.join(", ")
        )));
    }
    for key in keys {
        if key == "comment" {
            meta.comment = None;
        } else {
            meta.properties.remove(key);
        }
    }
    Ok(())
}

/// Managed to EXTERNAL (`'EXTERNAL'='TRUE'`) or back: an EXTERNAL table's files stay when it
/// is dropped, so its location is written down, wherever its files are.
fn set_external(
    name: &TableName,
    meta: &mut TableMeta,
    warehouse: &Warehouse,
    external: bool,
) -> Result<()> {
    match (meta.kind, external) {
        (TableKind::View, _) => Err(DataFusionError::Plan(format!(
            "{name} is a view; EXTERNAL is a table's property"
        ))),
        (TableKind::Managed, true) => {
            let location = warehouse.data_location(&name.database, &name.table, meta)?;
            meta.location = Some(location.to_string());
            meta.kind = TableKind::External;
            Ok(())
        }
        (TableKind::External, false) => {
            meta.kind = TableKind::Managed;
            Ok(())
        }
        _ => Ok(()),
    }
}

fn is_statistic(key: &str) -> bool {
    ["numFiles", "totalSize", "numRows", "rawDataSize"]
        .iter()
        .any(|s| key.eq_ignore_ascii_case(s))
}

fn computed_statistic(name: &TableName, key: &str) -> DataFusionError {
    DataFusionError::Plan(format!(
        "{key} of {name} is read from its files, not set: numFiles and totalSize are counted \
         whenever they are shown, numRows by ANALYZE TABLE {name} COMPUTE STATISTICS"
    ))
}

/// What `ANALYZE TABLE ... COMPUTE STATISTICS` is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnalyzeMode {
    /// Rows counted, and files.
    Scan,
    /// `NOSCAN`: files alone.
    NoScan,
    /// `FOR COLUMNS [c, ...]`: column statistics (no list: every column).
    Columns(Vec<String>),
}

/// `ANALYZE TABLE t [PARTITION (...)] COMPUTE STATISTICS [NOSCAN | FOR COLUMNS ...]` of a
/// warehouse table: counts its (or the partitions') rows and files, keeps the row counts
/// with the files they describe, and returns lines for the operation log. A PARTITION
/// clause naming every partition column with a value analyzes that partition; one with
/// columns left without a value (`PARTITION (dt)`) every partition it matches, as Hive.
pub async fn analyze(
    context: &SessionContext,
    warehouse: &Warehouse,
    name: &TableName,
    partition: Option<&[(String, Option<String>)]>,
    mode: &AnalyzeMode,
) -> Result<Vec<String>> {
    let meta = existing(warehouse, name).await?;
    meta.table_only(name, "ANALYZE TABLE counts a table's rows")?;
    let statics = static_values(name, &meta, partition.unwrap_or_default())?;
    let mut notes = vec![format!(
        "ANALYZE changes no plan here: {} Row counts are kept for DESCRIBE FORMATTED and SHOW \
         TBLPROPERTIES, and shown while the files are those counted.",
        match meta.format {
            Some(StoredFormat::Parquet) | None => "DataFusion reads row counts and column \
                 statistics from the Parquet footers as it plans each query."
                .to_owned(),
            Some(format) => format!(
                "DataFusion plans a query of a {} table without kept statistics.",
                format.name()
            ),
        }
    )];
    if let AnalyzeMode::Columns(columns) = mode {
        let schema = meta.full_schema()?;
        for column in columns {
            if schema
                .fields()
                .iter()
                .all(|f| !f.name().eq_ignore_ascii_case(column))
            {
                return Err(DataFusionError::Plan(format!(
                    "'{column}' is not a column of {name}; DESCRIBE {name} lists its columns"
                )));
            }
        }
        notes.push(format!(
            "Column statistics of {name} are not kept: DataFusion takes minimums, maximums and \
             null counts from Parquet footers at each query."
        ));
        return Ok(notes);
    }
    let location = warehouse.data_location(&name.database, &name.table, &meta)?;
    let files = data_objects(warehouse, &location).await?;
    let location_path = object_path(&location);
    let directory_of = |file: &ObjectMeta| partition_of(&location_path, file);
    // The directories analyzed: the table, one partition, or every partition under the
    // static values.
    let whole = partition.is_none() || meta.partition_columns.is_empty();
    let full = statics.len() == meta.partition_columns.len();
    let prefix = partition_path(&statics);
    let keys: Vec<String> = if whole {
        vec![String::new()]
    } else if full {
        vec![prefix.clone()]
    } else {
        let mut keys: Vec<String> = files
            .iter()
            .map(directory_of)
            .filter(|d| prefix.is_empty() || d.starts_with(&format!("{prefix}/")))
            .collect();
        keys.sort();
        keys.dedup();
        keys
    };
    if !whole && full && files.iter().all(|f| directory_of(f) != prefix) {
        let dir = partition_dir(&location, &statics);
        let exists = super::local_dir(&dir).is_some_and(|d| d.is_dir());
        if !exists {
            return Err(no_partition(name, &prefix));
        }
    }
    let counts = if *mode == AnalyzeMode::Scan {
        Some(count_rows(context, name, &meta, &statics, whole || full).await?)
    } else {
        None
    };
    let mut counted = BTreeMap::new();
    for key in &keys {
        let stats = file_statistics(
            files
                .iter()
                .filter(|f| key.is_empty() || directory_of(f) == *key),
        );
        let rows = counts.as_ref().map(|counts| {
            if whole || full {
                counts.get("").copied().unwrap_or(0)
            } else {
                counts.get(key).copied().unwrap_or(0)
            }
        });
        let what = if key.is_empty() {
            format!("Table {name}")
        } else {
            format!("Partition {name}{{{}}}", key.replace('/', ", "))
        };
        notes.push(match rows {
            Some(rows) => format!(
                "{what} stats: [numFiles={}, numRows={rows}, totalSize={}]",
                stats.files, stats.bytes
            ),
            None => format!(
                "{what} stats: [numFiles={}, totalSize={}] (NOSCAN: rows not counted)",
                stats.files, stats.bytes
            ),
        });
        if let Some(rows) = rows {
            counted.insert(key.clone(), RowStatistics { rows, files: stats });
        }
    }
    if !counted.is_empty() {
        // Read again just before writing: the shortest window for another ALTER to be lost.
        let mut meta = existing(warehouse, name).await?;
        meta.statistics.extend(counted);
        warehouse
            .write_table_meta(&name.database, &name.table, &meta, false)
            .await?;
    }
    Ok(notes)
}

/// The values of a PARTITION clause, in the table's partition order; those left without a
/// value must come last.
fn static_values(
    name: &TableName,
    meta: &TableMeta,
    partition: &[(String, Option<String>)],
) -> Result<Vec<(String, String)>> {
    for (column, _) in partition {
        if !meta
            .partition_columns
            .iter()
            .any(|p| p.name.eq_ignore_ascii_case(column))
        {
            return Err(DataFusionError::Plan(format!(
                "'{column}' is not a partition column of {name}"
            )));
        }
    }
    let mut values = Vec::new();
    for column in &meta.partition_columns {
        match partition
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(&column.name))
        {
            Some((_, Some(value))) => values.push((column.name.clone(), value.clone())),
            _ => break,
        }
    }
    let given = partition.iter().filter(|(_, v)| v.is_some()).count();
    if given != values.len() {
        return Err(DataFusionError::Plan(format!(
            "PARTITION clause of {name}: values must be given for the first partition columns, \
             in order ({})",
            meta.partition_columns
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(values)
}

pub fn no_partition(name: &TableName, path: &str) -> DataFusionError {
    DataFusionError::Plan(format!(
        "partition {path} of {name} does not exist; SHOW PARTITIONS {name} lists its partitions"
    ))
}

/// The rows of the table under the static values: one count (key "") when `one`, else
/// a count per partition directory.
async fn count_rows(
    context: &SessionContext,
    name: &TableName,
    meta: &TableMeta,
    statics: &[(String, String)],
    one: bool,
) -> Result<BTreeMap<String, u64>> {
    let quote = |name: &str| format!("\"{}\"", name.replace('"', "\"\""));
    let from = [CATALOG, &name.database, &name.table]
        .iter()
        .map(|part| quote(part))
        .collect::<Vec<_>>()
        .join(".");
    let columns: Vec<&str> = if one {
        Vec::new()
    } else {
        meta.partition_columns
            .iter()
            .map(|c| c.name.as_str())
            .collect()
    };
    let mut select: Vec<String> = columns
        .iter()
        .map(|c| format!("CAST({} AS VARCHAR)", quote(c)))
        .collect();
    select.push("count(*)".to_owned());
    let mut sql = format!("SELECT {} FROM {from}", select.join(", "));
    if !statics.is_empty() {
        let filters: Vec<String> = statics
            .iter()
            .map(|(c, v)| {
                format!(
                    "CAST({} AS VARCHAR) = '{}'",
                    quote(c),
                    v.replace('\'', "''")
                )
            })
            .collect();
        sql.push_str(&format!(" WHERE {}", filters.join(" AND ")));
    }
    if !columns.is_empty() {
        let by: Vec<String> = (1..=columns.len()).map(|i| i.to_string()).collect();
        sql.push_str(&format!(" GROUP BY {}", by.join(", ")));
    }
    let batches = context.sql(&sql).await?.collect().await?;
    let mut counts = BTreeMap::new();
    for batch in &batches {
        let values = batch
            .columns()
            .iter()
            .take(columns.len())
            .map(|values| cast(values, &DataType::Utf8))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let rows = cast(batch.column(columns.len()), &DataType::Int64)?;
        let rows = rows.as_primitive::<Int64Type>();
        for row in 0..batch.num_rows() {
            let key = partition_name(&columns, &values, row);
            counts.insert(key, u64::try_from(rows.value(row)).unwrap_or(0));
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests;
