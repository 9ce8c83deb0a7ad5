//! `SHOW TBLPROPERTIES`, `SHOW PARTITIONS`, `SHOW TABLE EXTENDED`, `DESCRIBE ...
//! PARTITION (...)` and `ANALYZE TABLE`, in Hive's result shapes.
//!
//! DataFusion parses the SHOW forms as `SHOW <variable>` and answers "is not a variable",
//! which tells a Hive user nothing; BI tools send them while browsing a table, and ETL
//! scripts run ANALYZE after each load.

use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::datasource::listing::ListingTable;
use datafusion::error::{DataFusionError, Result};

use std::sync::Arc;

use url::Url;

use super::{
    is_temporary_view, qualified, quote_identifier, string_columns, string_rows, table_provider,
    Executed,
};
use crate::catalog::CATALOG;
use crate::session::Session;
use crate::warehouse::ddl::TableName;
use crate::warehouse::meta::{ColumnMeta, FileStatistics, StoredFormat, TableKind, TableMeta};
use crate::warehouse::properties::partition_name;
use crate::warehouse::{self, Warehouse};

/// `SHOW TBLPROPERTIES t [('key')]`: a warehouse table's parameters, as Hive's
/// ([`warehouse::properties::parameters`]: its properties, comment, `EXTERNAL`, and the
/// file statistics, read now); another table (DataFusion's, the demo data's) has none. A
/// key asked for answers its row, or Hive's and Spark's "does not have property" row. The
/// table must exist.
pub(super) async fn show_tblproperties(
    session: &Session,
    table: &[String],
    key: Option<&str>,
) -> Result<Executed> {
    table_provider(session, table).await?;
    let name = qualified(session, table);
    let parameters = match stored(session, table).await {
        Some((warehouse, meta, name)) => {
            warehouse::properties::parameters(&warehouse, &name, &meta, &[]).await?
        }
        None => Vec::new(),
    };
    let (names, values) = match key {
        None => parameters.into_iter().unzip(),
        Some(key) => match parameters.into_iter().find(|(k, _)| k == key) {
            Some((k, v)) => (vec![k], vec![v]),
            None => (
                vec![key.to_owned()],
                vec![format!(
                    "Table {} does not have property: {key}",
                    name.join(".")
                )],
            ),
        },
    };
    string_columns(vec![("prpt_name", names), ("prpt_value", values)])
}

/// A warehouse table's metadata, with its name; None for a temporary view or another table.
async fn stored(
    session: &Session,
    table: &[String],
) -> Option<(Arc<Warehouse>, TableMeta, TableName)> {
    if is_temporary_view(session, table) {
        return None;
    }
    let name = qualified(session, table);
    let (warehouse, meta) =
        warehouse::commands::table_meta(session.context(), &name[0], &name[1]).await?;
    Some((
        warehouse,
        meta,
        TableName {
            database: name[0].clone(),
            table: name[1].clone(),
        },
    ))
}

/// Hive's block of parameters in DESCRIBE FORMATTED: a `title` row, then a row
/// `("", key, value)` each.
pub(super) fn parameter_rows(title: &str, parameters: Vec<(String, String)>) -> Vec<[String; 3]> {
    let mut rows = vec![[title.to_owned(), String::new(), String::new()]];
    rows.extend(
        parameters
            .into_iter()
            .map(|(key, value)| [String::new(), key, value]),
    );
    rows
}

/// A partition clause in the table's partition order, every partition column given, and
/// the partition's directory, which must exist.
async fn existing_partition(
    warehouse: &Warehouse,
    name: &TableName,
    meta: &TableMeta,
    spec: &[(String, String)],
) -> Result<(Vec<(String, String)>, Url)> {
    if meta.partition_columns.is_empty() {
        return Err(DataFusionError::Plan(format!(
            "table {name} is not partitioned, so it has no partition to name"
        )));
    }
    let mut ordered = Vec::new();
    for column in &meta.partition_columns {
        let value = spec
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(&column.name))
            .map(|(_, v)| v.clone())
            .ok_or_else(|| {
                DataFusionError::Plan(format!(
                    "PARTITION clause of {name}: name every partition column ({})",
                    meta.partition_columns
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
        ordered.push((column.name.clone(), value));
    }
    if ordered.len() != spec.len() {
        return Err(DataFusionError::Plan(format!(
            "PARTITION clause of {name}: a column there is not one of its partition columns"
        )));
    }
    let location = warehouse.data_location(&name.database, &name.table, meta)?;
    let dir = warehouse::properties::partition_dir(&location, &ordered);
    let exists = match warehouse::local_dir(&dir) {
        Some(path) => path.is_dir(),
        None => !warehouse.list_files(&dir).await?.is_empty(),
    };
    if !exists {
        return Err(warehouse::properties::no_partition(
            name,
            &warehouse::properties::partition_path(&ordered),
        ));
    }
    Ok((ordered, dir))
}

/// The rows `DESCRIBE FORMATTED t PARTITION (...)` shows in place of the table's details:
/// the partition's values, location and parameters. The partition must exist.
pub(super) async fn partition_details(
    session: &Session,
    table: &[String],
    spec: &[(String, String)],
) -> Result<Vec<[String; 3]>> {
    let Some((warehouse, meta, name)) = stored(session, table).await else {
        return Err(DataFusionError::Plan(format!(
            "{} is not a partitioned table of the warehouse, so it has no partition to describe",
            qualified(session, table).join(".")
        )));
    };
    let (ordered, dir) = existing_partition(&warehouse, &name, &meta, spec).await?;
    let detail = |key: &str, value: &str| [key.to_owned(), value.to_owned(), String::new()];
    let mut rows = vec![
        detail("", ""),
        detail("# Detailed Partition Information", ""),
        detail("Database", &name.database),
        detail("Table", &name.table),
        detail(
            "Partition Values",
            &format!(
                "[{}]",
                warehouse::properties::partition_path(&ordered).replace('/', ", ")
            ),
        ),
        detail("Location", dir.as_str()),
    ];
    let parameters = warehouse::properties::parameters(&warehouse, &name, &meta, &ordered).await?;
    rows.extend(parameter_rows("Partition Parameters:", parameters));
    Ok(rows)
}

/// `ANALYZE TABLE ... COMPUTE STATISTICS`: a warehouse table's counted and kept
/// ([`warehouse::properties::analyze`]); another table's accepted, nothing to keep.
pub(super) async fn analyze(
    session: &Session,
    table: &[String],
    partition: Option<&[(String, Option<String>)]>,
    mode: &warehouse::properties::AnalyzeMode,
) -> Result<Executed> {
    table_provider(session, table).await?;
    let notes = match stored(session, table).await {
        Some((warehouse, _, name)) => {
            warehouse::properties::analyze(session.context(), &warehouse, &name, partition, mode)
                .await?
        }
        None => vec![format!(
            "{} is not a warehouse table: DataFusion knows its statistics as it plans each \
             query; nothing to keep",
            qualified(session, table).join(".")
        )],
    };
    Ok(Executed::Noted(notes))
}

/// `SHOW TABLE EXTENDED [IN db] LIKE 'pattern' [PARTITION (...)]`: Hive's one column
/// `tab_name`, for each table matching (sorted) the lines Hive 2.3's `showTableStatus`
/// writes (`tableName:`, `owner:`, `location:`, `inputformat:`, `outputformat:`,
/// `columns:`, `partitioned:`, `partitionColumns:`, the files' count, sizes and times) and
/// an empty line. With a PARTITION clause the pattern names one table, and the location
/// and files are the partition's. What the engine does not know is written as Hive writes
/// it then: `null`, or `unknown` for file statistics (an in-memory table's, and every
/// last access time: none is kept).
pub(super) async fn show_table_extended(
    session: &Session,
    database: &str,
    pattern: &str,
    partition: &[(String, String)],
) -> Result<Executed> {
    let schema = super::database_schema(session, Some(database))?;
    let mut names = if partition.is_empty() {
        super::matching(schema.table_names(), &Some(pattern.to_owned()))
    } else {
        vec![pattern.to_lowercase()]
    };
    names.sort();
    let mut lines = Vec::new();
    for table in names {
        let parts = vec![database.to_owned(), table.clone()];
        let found = stored(session, &parts).await;
        if found.is_none() && !partition.is_empty() {
            return Err(DataFusionError::Plan(format!(
                "{database}.{table} is not a partitioned table of the warehouse, so it has no \
                 partition to show"
            )));
        }
        let Some((warehouse, meta, name)) = found else {
            let provider = table_provider(session, &parts).await?;
            let schema = provider.schema();
            let columns: Vec<(String, String)> = schema
                .fields()
                .iter()
                .map(|f| (f.name().clone(), crate::types::type_string(f.data_type())))
                .collect();
            lines.extend(status_lines(
                &table,
                "null",
                "null",
                None,
                &columns,
                &[],
                None,
            ));
            continue;
        };
        let hive_type = |c: &ColumnMeta| {
            c.data_type()
                .map(|t| crate::types::type_string(&t))
                .unwrap_or_else(|_| c.data_type.clone())
        };
        let columns: Vec<(String, String)> = meta
            .columns
            .iter()
            .map(|c| (c.name.clone(), hive_type(c)))
            .collect();
        let partition_columns: Vec<(String, String)> = meta
            .partition_columns
            .iter()
            .map(|c| (c.name.clone(), hive_type(c)))
            .collect();
        let (location, files) = if meta.kind == TableKind::View {
            (None, None)
        } else {
            let location = warehouse.data_location(&name.database, &name.table, &meta)?;
            let dir = if partition.is_empty() {
                location
            } else {
                existing_partition(&warehouse, &name, &meta, partition)
                    .await?
                    .1
            };
            let stats = warehouse::properties::directory_statistics(&warehouse, &dir).await?;
            (Some(dir.to_string()), Some(stats))
        };
        lines.extend(status_lines(
            &table,
            meta.owner.as_deref().unwrap_or("null"),
            location.as_deref().unwrap_or("null"),
            Some((meta.kind, meta.format.unwrap_or(StoredFormat::Parquet))),
            &columns,
            &partition_columns,
            files,
        ));
    }
    string_rows("tab_name", lines)
}

/// One table's lines of SHOW TABLE EXTENDED, as Hive writes them.
fn status_lines(
    table: &str,
    owner: &str,
    location: &str,
    kind: Option<(TableKind, StoredFormat)>,
    columns: &[(String, String)],
    partition_columns: &[(String, String)],
    files: Option<FileStatistics>,
) -> Vec<String> {
    let (input, output) = match kind {
        None => ("null", "null"),
        // Hive's views' storage descriptor names the sequence file formats.
        Some((TableKind::View, _)) => (
            "org.apache.hadoop.mapred.SequenceFileInputFormat",
            "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat",
        ),
        Some((_, StoredFormat::Parquet)) => (
            "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        ),
        Some((_, StoredFormat::Orc)) => (
            "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
            "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
        ),
        Some((_, StoredFormat::Csv | StoredFormat::Textfile | StoredFormat::Json)) => (
            "org.apache.hadoop.mapred.TextInputFormat",
            "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        ),
    };
    let number = |value: Option<u64>| value.map_or("unknown".to_owned(), |v| v.to_string());
    let mut lines = vec![
        format!("tableName:{table}"),
        format!("owner:{owner}"),
        format!("location:{location}"),
        format!("inputformat:{input}"),
        format!("outputformat:{output}"),
        format!("columns:{}", thrift_ddl("columns", columns)),
        format!("partitioned:{}", !partition_columns.is_empty()),
        format!(
            "partitionColumns:{}",
            if partition_columns.is_empty() {
                String::new()
            } else {
                thrift_ddl("partition_columns", partition_columns)
            }
        ),
        format!("totalNumberFiles:{}", number(files.map(|f| f.files))),
        format!("totalFileSize:{}", number(files.map(|f| f.bytes))),
        format!("maxFileSize:{}", number(files.map(|f| f.max_bytes))),
        format!("minFileSize:{}", number(files.map(|f| f.min_bytes))),
        "lastAccessTime:unknown".to_owned(),
        format!(
            "lastUpdateTime:{}",
            files.map_or("unknown".to_owned(), |f| f.last_modified_ms.to_string())
        ),
    ];
    lines.push(String::new());
    lines
}

/// Hive's Thrift DDL of columns (`MetaStoreUtils.getDDLFromFieldSchema`):
/// `struct columns { i32 id, string name}`, Hive's type names in Thrift's words.
pub(super) fn thrift_ddl(struct_name: &str, columns: &[(String, String)]) -> String {
    let fields: Vec<String> = columns
        .iter()
        .map(|(name, data_type)| format!("{} {name}", thrift_type(data_type)))
        .collect();
    format!("struct {struct_name} {{ {}}}", fields.join(", "))
}

/// A Hive type written in Thrift's words, word by word as Hive converts it
/// (`MetaStoreUtils.typeToThriftType`): `int` is `i32`, `array<bigint>` `list<i64>`.
fn thrift_type(hive: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(match word.as_str() {
            "boolean" => "bool",
            "tinyint" => "byte",
            "smallint" => "i16",
            "int" => "i32",
            "bigint" => "i64",
            "array" => "list",
            other => other,
        });
        word.clear();
    };
    for c in hive.chars() {
        if c.is_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// `SHOW PARTITIONS t [PARTITION (col='v', ...)]`: the partitions of a table declared with
/// `PARTITIONED BY` over Hive-style directories (`col=value/`), read from the table's files
/// (`SELECT DISTINCT` of the partition columns, which reads no data columns), sorted, as
/// `col=value/col2=value2`; a spec keeps those that match it. Any other table has none,
/// and is refused as Hive refuses it.
pub(super) async fn show_partitions(
    session: &Session,
    table: &[String],
    spec: &[(String, String)],
) -> Result<Executed> {
    let provider = table_provider(session, table).await?;
    let name = qualified(session, table);
    let columns: Vec<String> = provider
        .downcast_ref::<ListingTable>()
        .map(|listing| {
            listing
                .options()
                .table_partition_cols
                .iter()
                .map(|(column, _)| column.clone())
                .collect()
        })
        .unwrap_or_default();
    if columns.is_empty() {
        return Err(DataFusionError::Plan(format!(
            "table {} is not partitioned, so it has no partitions to show; only tables \
             created with PARTITIONED BY over directories named column=value have them",
            name.join(".")
        )));
    }
    let mut filters = Vec::new();
    for (column, value) in spec {
        let Some(column) = columns.iter().find(|c| c.eq_ignore_ascii_case(column)) else {
            return Err(DataFusionError::Plan(format!(
                "'{column}' is not a partition column of {}; its partition columns are {}",
                name.join("."),
                columns.join(", ")
            )));
        };
        filters.push(format!(
            "CAST({} AS VARCHAR) = '{}'",
            quote_identifier(column),
            value.replace('\'', "''")
        ));
    }
    let select: Vec<String> = columns
        .iter()
        .map(|c| format!("CAST({} AS VARCHAR)", quote_identifier(c)))
        .collect();
    let from = [CATALOG, &name[0], &name[1]]
        .iter()
        .map(|part| quote_identifier(part))
        .collect::<Vec<_>>()
        .join(".");
    let mut sql = format!("SELECT DISTINCT {} FROM {from}", select.join(", "));
    if !filters.is_empty() {
        sql.push_str(&format!(" WHERE {}", filters.join(" AND ")));
    }
    let order: Vec<String> = (1..=columns.len()).map(|i| i.to_string()).collect();
    sql.push_str(&format!(" ORDER BY {}", order.join(", ")));
    let batches = session.context().sql(&sql).await?.collect().await?;
    let mut partitions = Vec::new();
    for batch in &batches {
        // Utf8 or Utf8View, as DataFusion casts to VARCHAR; read as Utf8 either way.
        let values = batch
            .columns()
            .iter()
            .map(|values| cast(values, &DataType::Utf8))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        for row in 0..batch.num_rows() {
            partitions.push(partition_name(&columns, &values, row));
        }
    }
    string_rows("partition", partitions)
}

#[cfg(test)]
mod tests;
