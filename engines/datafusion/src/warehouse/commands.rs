//! Running the warehouse's statements.
//!
//! Writes are staged, then made visible: the rows of an INSERT (or CTAS) are written to a
//! hidden directory `TABLE/.staging-UUID/` (which readers skip: its name starts with a dot,
//! and DataFusion reads only a table's own directory and its `col=value/` partitions), and
//! only when every file is complete are they moved into the table. What a concurrent reader
//! can see:
//!
//! - never a partly written file: each file appears whole (a rename on a local disk; a
//!   copy on object stores, whose objects appear whole);
//! - INSERT INTO: some of the new files before others, for the moment the moves take;
//! - INSERT OVERWRITE and TRUNCATE: the new files are moved in, then the old ones deleted, so a
//!   reader in between may count old and new rows (or, for TRUNCATE, some of the old ones).
//!   Nothing replaces a whole table in one step: neither a directory on a disk nor a prefix
//!   on an object store can be swapped atomically with Hive's layout, which other engines
//!   read.
//! - metadata files (CREATE, ALTER) are replaced in one step: written whole, then renamed
//!   locally; an object store's put.

use std::sync::Arc;

use datafusion::arrow::array::{Array, UInt64Array};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::config::{CsvOptions, TableParquetOptions};
use datafusion::dataframe::DataFrameWriteOptions;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use object_store::path::Path;
use object_store::ObjectMeta;
use url::Url;

use super::ddl::{TableName, WarehouseCommand};
use super::meta::{StoredFormat, TableKind, TableMeta};
use super::{child_dir, local_dir, object_path, warehouse_of, Warehouse};
use crate::catalog::{CATALOG, DEFAULT_DATABASE};

/// What a warehouse statement did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The rows it wrote, if it writes rows (INSERT, CTAS).
    pub rows: Option<u64>,
    /// Lines for the operation log: what it did that the client should hear of.
    pub notes: Vec<String>,
}

/// Runs a warehouse statement in `context` (the session's).
pub async fn run(context: &SessionContext, command: &WarehouseCommand) -> Result<Outcome> {
    let warehouse = warehouse_of(context).ok_or_else(|| {
        DataFusionError::Internal("a warehouse statement without a warehouse".to_owned())
    })?;
    let notes = match command {
        WarehouseCommand::Load {
            name,
            local,
            path,
            overwrite,
            partition,
        } => {
            let meta = existing(&warehouse, name).await?;
            let request = super::load::LoadRequest {
                local: *local,
                path,
                overwrite: *overwrite,
                partition,
            };
            super::load::load(&warehouse, name, &meta, &request).await?
        }
        WarehouseCommand::SetProperties { name, properties } => {
            let mut meta = existing(&warehouse, name).await?;
            super::properties::set_properties(name, &mut meta, &warehouse, properties)?;
            write_meta(&warehouse, name, &meta).await?
        }
        WarehouseCommand::UnsetProperties {
            name,
            keys,
            if_exists,
        } => {
            let mut meta = existing(&warehouse, name).await?;
            super::properties::unset_properties(name, &mut meta, keys, *if_exists)?;
            write_meta(&warehouse, name, &meta).await?
        }
        WarehouseCommand::SetSerdeProperties { name, properties } => {
            let mut meta = existing(&warehouse, name).await?;
            set_serde_properties(name, &mut meta, properties)?;
            write_meta(&warehouse, name, &meta).await?
        }
        WarehouseCommand::SetFileFormat { name, format } => {
            let mut meta = existing(&warehouse, name).await?;
            set_file_format(&warehouse, name, &mut meta, *format).await?;
            write_meta(&warehouse, name, &meta).await?
        }
        WarehouseCommand::SetLocation { name, location } => {
            let mut meta = existing(&warehouse, name).await?;
            if meta.kind == TableKind::View {
                return Err(DataFusionError::Plan(format!(
                    "{name} is a view; it has no location"
                )));
            }
            meta.location = Some(location.clone());
            // The counts were of the old location's files.
            meta.statistics.clear();
            if let Some(dir) = local_dir(&super::directory_url(location, false)?) {
                let _ = std::fs::create_dir_all(dir);
            }
            write_meta(&warehouse, name, &meta).await?;
            vec![format!(
                "{name} now reads and writes its files at {location}; files already there are \
                 its rows, and none were moved (as in Hive)"
            )]
        }
        _ => {
            return Ok(Outcome {
                rows: run_statement(context, &warehouse, command).await?,
                notes: Vec::new(),
            })
        }
    };
    Ok(Outcome { rows: None, notes })
}

async fn write_meta(
    warehouse: &Warehouse,
    name: &TableName,
    meta: &TableMeta,
) -> Result<Vec<String>> {
    warehouse
        .write_table_meta(&name.database, &name.table, meta, false)
        .await?;
    Ok(Vec::new())
}

/// `SET SERDEPROPERTIES` of a text table: Hive's `field.delim` (and `separatorChar`,
/// OpenCSV's) is its delimiter; what else a SerDe takes has no meaning here and is refused,
/// named.
fn set_serde_properties(
    name: &TableName,
    meta: &mut TableMeta,
    properties: &std::collections::BTreeMap<String, String>,
) -> Result<()> {
    let text = matches!(
        meta.format,
        Some(StoredFormat::Csv) | Some(StoredFormat::Textfile)
    );
    for (key, value) in properties {
        match key.as_str() {
            "field.delim" | "separatorChar" | "serialization.format" if text => {
                let mut chars = value.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if c.is_ascii() => meta.delimiter = Some(c),
                    _ => {
                        return Err(DataFusionError::Plan(format!(
                            "{key} '{value}' of {name}: the field delimiter is one ASCII character"
                        )))
                    }
                }
            }
            _ => {
                return Err(DataFusionError::Plan(format!(
                    "SET SERDEPROPERTIES ('{key}'): the DataFusion engine reads {name} by its \
                     format, {}, without a Java SerDe; of a TEXTFILE or CSV table it takes \
                     'field.delim', the field delimiter",
                    meta.format.unwrap_or(StoredFormat::Parquet).name()
                )))
            }
        }
    }
    Ok(())
}

/// `SET FILEFORMAT` of a table without data files; a table with files would be left
/// unreadable (Hive changes the format and leaves the files, which then fail to read).
async fn set_file_format(
    warehouse: &Warehouse,
    name: &TableName,
    meta: &mut TableMeta,
    format: StoredFormat,
) -> Result<()> {
    if meta.kind == TableKind::View {
        return Err(DataFusionError::Plan(format!(
            "{name} is a view; it has no file format"
        )));
    }
    if meta.format == Some(format) {
        return Ok(());
    }
    let location = warehouse.data_location(&name.database, &name.table, meta)?;
    let files = data_objects(warehouse, &location).await?.len();
    if files > 0 {
        return Err(DataFusionError::Plan(format!(
            "{name} holds {files} {} file{}, which would not read as {}: files are not \
             converted. CREATE TABLE ... STORED AS {} AS SELECT * FROM {name} makes a copy in \
             that format",
            meta.format.unwrap_or(StoredFormat::Parquet).name(),
            if files == 1 { "" } else { "s" },
            format.name(),
            format.name()
        )));
    }
    if meta.kind == TableKind::Managed && format == StoredFormat::Orc {
        super::orc::check_writable(
            meta.file_schema()?.fields().iter().map(|f| f.as_ref()),
            &name.to_string(),
        )?;
    }
    meta.format = Some(format);
    meta.file_extension = None;
    Ok(())
}

/// Runs the statements that write rows or change tables without notes; returns the rows
/// written, if it writes rows.
async fn run_statement(
    context: &SessionContext,
    warehouse: &Arc<Warehouse>,
    command: &WarehouseCommand,
) -> Result<Option<u64>> {
    let warehouse = Arc::clone(warehouse);
    match command {
        WarehouseCommand::CreateDatabase {
            name,
            if_not_exists,
            meta,
        } => {
            let in_memory = context
                .catalog(CATALOG)
                .is_some_and(|c| c.schema_names().contains(name));
            let created = !in_memory && warehouse.create_database(name, meta).await?;
            if !created && !if_not_exists {
                return Err(DataFusionError::Plan(format!(
                    "database '{name}' already exists"
                )));
            }
            Ok(None)
        }
        WarehouseCommand::DropDatabase {
            name,
            if_exists,
            cascade,
        } => drop_database(context, &warehouse, name, *if_exists, *cascade)
            .await
            .map(|()| None),
        WarehouseCommand::Create {
            name,
            if_not_exists,
            or_replace,
            meta,
            query,
        } => {
            create(
                context,
                &warehouse,
                name,
                *if_not_exists,
                *or_replace,
                meta,
                query.as_ref(),
            )
            .await
        }
        WarehouseCommand::Insert {
            name,
            overwrite,
            partition,
            query,
        } => {
            let meta = existing(&warehouse, name).await?;
            write_rows(
                context,
                &warehouse,
                name,
                &meta,
                partition,
                query.clone(),
                *overwrite,
            )
            .await
            .map(Some)
        }
        WarehouseCommand::Truncate { name, partition } => {
            let meta = existing(&warehouse, name).await?;
            if meta.kind != TableKind::Managed {
                return Err(DataFusionError::Plan(format!(
                    "cannot truncate {name}: it is {}; TRUNCATE deletes a managed table's files",
                    kind_text(meta.kind)
                )));
            }
            let mut target = warehouse.data_location(&name.database, &name.table, &meta)?;
            for (column, value) in static_prefix(&meta, partition, name)? {
                target = child_dir(&target, &format!("{column}={value}"));
            }
            let old = data_files(&warehouse, &target).await?;
            warehouse.delete_files(&target, old.into_iter()).await?;
            Ok(None)
        }
        WarehouseCommand::Drop { name, if_exists } => {
            let Some(meta) = warehouse.table_meta(&name.database, &name.table).await? else {
                if *if_exists {
                    return Ok(None);
                }
                return Err(DataFusionError::Plan(format!(
                    "table or view {name} does not exist"
                )));
            };
            drop_table(&warehouse, name, &meta).await.map(|()| None)
        }
        WarehouseCommand::Rename { from, to } => rename(&warehouse, from, to).await.map(|()| None),
        WarehouseCommand::Repair { name } => {
            existing(&warehouse, name).await?;
            Ok(None)
        }
        WarehouseCommand::AlterPartitions {
            name,
            add,
            partitions,
        } => {
            let meta = existing(&warehouse, name).await?;
            let location = warehouse.data_location(&name.database, &name.table, &meta)?;
            for spec in partitions {
                let prefix = static_prefix(&meta, spec, name)?;
                if prefix.len() != meta.partition_columns.len() {
                    return Err(DataFusionError::Plan(format!(
                        "PARTITION clause of {name}: name every partition column"
                    )));
                }
                let mut dir = location.clone();
                for (column, value) in &prefix {
                    dir = child_dir(&dir, &format!("{column}={value}"));
                }
                match (add, local_dir(&dir)) {
                    (true, Some(path)) => std::fs::create_dir_all(&path).map_err(|e| {
                        DataFusionError::Execution(format!("cannot create {}: {e}", path.display()))
                    })?,
                    // Object stores have no empty directories: a partition appears with its files.
                    (true, None) => {}
                    // An external table's files are the user's, as in Hive.
                    (false, _) if meta.kind == TableKind::External => {}
                    (false, _) => warehouse.delete_dir(&dir).await?,
                }
            }
            Ok(None)
        }
        WarehouseCommand::AddColumns { name, columns } => {
            let mut meta = existing(&warehouse, name).await?;
            if meta.kind == TableKind::View {
                return Err(DataFusionError::Plan(format!(
                    "{name} is a view; ALTER VIEW ... AS changes its query"
                )));
            }
            for column in columns {
                let taken = meta
                    .columns
                    .iter()
                    .chain(&meta.partition_columns)
                    .any(|c| c.name.eq_ignore_ascii_case(&column.name));
                if taken {
                    return Err(DataFusionError::Plan(format!(
                        "{name} has a column '{}' already",
                        column.name
                    )));
                }
                meta.columns.push(column.clone());
            }
            if meta.kind == TableKind::Managed && meta.format == Some(StoredFormat::Orc) {
                super::orc::check_writable(
                    meta.file_schema()?.fields().iter().map(|f| f.as_ref()),
                    &name.to_string(),
                )?;
            }
            warehouse
                .write_table_meta(&name.database, &name.table, &meta, false)
                .await?;
            Ok(None)
        }
        WarehouseCommand::Load { .. }
        | WarehouseCommand::SetProperties { .. }
        | WarehouseCommand::UnsetProperties { .. }
        | WarehouseCommand::SetSerdeProperties { .. }
        | WarehouseCommand::SetFileFormat { .. }
        | WarehouseCommand::SetLocation { .. } => Err(DataFusionError::Internal(
            "a statement with notes reached run_statement".to_owned(),
        )),
    }
}

fn kind_text(kind: TableKind) -> &'static str {
    match kind {
        TableKind::Managed => "a managed table",
        TableKind::External => "an external table",
        TableKind::View => "a view",
    }
}

/// The metadata of table (or view) `name`, which must exist.
pub(super) async fn existing(warehouse: &Warehouse, name: &TableName) -> Result<TableMeta> {
    warehouse
        .table_meta(&name.database, &name.table)
        .await?
        .ok_or_else(|| DataFusionError::Plan(format!("table {name} does not exist")))
}

async fn drop_database(
    context: &SessionContext,
    warehouse: &Warehouse,
    name: &str,
    if_exists: bool,
    cascade: bool,
) -> Result<()> {
    if name == DEFAULT_DATABASE {
        return Err(DataFusionError::Plan(
            "the default database cannot be dropped".to_owned(),
        ));
    }
    let catalog = context
        .catalog(CATALOG)
        .ok_or_else(|| DataFusionError::Internal("no catalog".to_owned()))?;
    let stored = warehouse.database_exists(name).await?;
    if !stored {
        let dropped = catalog.deregister_schema(name, cascade)?;
        if dropped.is_none() && !if_exists {
            return Err(DataFusionError::Plan(format!(
                "database '{name}' does not exist"
            )));
        }
        return Ok(());
    }
    let tables = warehouse.table_names(name).await?;
    if !tables.is_empty() && !cascade {
        return Err(DataFusionError::Plan(format!(
            "database {name} is not empty: it holds {} ({}); DROP DATABASE {name} CASCADE \
             drops it with its tables",
            if tables.len() == 1 {
                "a table"
            } else {
                "tables"
            },
            tables.join(", ")
        )));
    }
    for table in tables {
        let table_name = TableName {
            database: name.to_owned(),
            table,
        };
        if let Some(meta) = warehouse.table_meta(name, &table_name.table).await? {
            drop_table(warehouse, &table_name, &meta).await?;
        }
    }
    // A database's own LOCATION stays: its tables' files are gone with them.
    warehouse.delete_dir(&warehouse.database_dir(name)).await?;
    let _ = catalog.deregister_schema(name, true);
    Ok(())
}

async fn drop_table(warehouse: &Warehouse, name: &TableName, meta: &TableMeta) -> Result<()> {
    let dir = warehouse.table_dir(&name.database, &name.table);
    let data = match meta.kind {
        TableKind::View => None,
        _ => Some(warehouse.data_location(&name.database, &name.table, meta)?),
    };
    if meta.kind == TableKind::Managed {
        if let Some(data) = data.as_ref().filter(|data| **data != dir) {
            warehouse.delete_dir(data).await?;
        }
    }
    // The metadata file first: from then on the table is gone for every reader.
    let file = dir
        .join(super::meta::TABLE_FILE)
        .expect("a file name joins");
    warehouse
        .delete_files(&file, std::iter::once(object_path(&file)))
        .await?;
    // An EXTERNAL table whose files are in its warehouse directory (a managed table made
    // EXTERNAL) keeps them.
    if meta.kind == TableKind::External && data.as_ref() == Some(&dir) {
        return Ok(());
    }
    warehouse.delete_dir(&dir).await
}

async fn create(
    context: &SessionContext,
    warehouse: &Warehouse,
    name: &TableName,
    if_not_exists: bool,
    or_replace: bool,
    meta: &TableMeta,
    query: Option<&LogicalPlan>,
) -> Result<Option<u64>> {
    let catalog = crate::session::temporary::engine_catalog(context)
        .ok_or_else(|| DataFusionError::Internal("no catalog".to_owned()))?;
    if catalog.schema(&name.database).is_none() {
        return Err(DataFusionError::Plan(format!(
            "database '{}' does not exist; CREATE DATABASE {} makes it",
            name.database, name.database
        )));
    }
    let in_memory = catalog
        .downcast_ref::<super::WarehouseCatalog>()
        .is_some_and(|c| c.in_memory(&name.database, &name.table));
    if in_memory {
        if if_not_exists {
            return Ok(None);
        }
        return Err(DataFusionError::Plan(format!(
            "table {name} already exists (one of the engine's in-memory tables)"
        )));
    }
    if let Some(old) = warehouse.table_meta(&name.database, &name.table).await? {
        if if_not_exists {
            return Ok(None);
        }
        if !or_replace {
            return Err(DataFusionError::Plan(format!(
                "table {name} already exists"
            )));
        }
        if (old.kind == TableKind::View) != (meta.kind == TableKind::View) {
            return Err(DataFusionError::Plan(format!(
                "{name} is {}; drop it first",
                kind_text(old.kind)
            )));
        }
        if meta.kind == TableKind::View {
            warehouse
                .write_table_meta(&name.database, &name.table, meta, false)
                .await?;
            return Ok(None);
        }
        drop_table(warehouse, name, &old).await?;
    }
    if meta.kind == TableKind::Managed && meta.format == Some(StoredFormat::Orc) {
        // A table the engine could never fill is refused now, not at its first INSERT.
        super::orc::check_writable(
            meta.file_schema()?.fields().iter().map(|f| f.as_ref()),
            &name.to_string(),
        )?;
    }
    let mut meta = meta.clone();
    if meta.kind == TableKind::Managed
        && meta.location.is_none()
        && name.database != DEFAULT_DATABASE
    {
        // A database created with a LOCATION keeps its tables' files there.
        if let Some(location) = warehouse
            .database_meta(&name.database)
            .await?
            .and_then(|d| d.location)
        {
            let dir = super::directory_url(&location, false)?;
            meta.location = Some(child_dir(&dir, &name.table).to_string());
        }
    }
    if !warehouse
        .write_table_meta(&name.database, &name.table, &meta, true)
        .await?
    {
        if if_not_exists {
            return Ok(None);
        }
        return Err(DataFusionError::Plan(format!(
            "table {name} already exists"
        )));
    }
    if meta.kind != TableKind::View {
        if let Some(dir) =
            local_dir(&warehouse.data_location(&name.database, &name.table, &meta)?)
        {
            let _ = std::fs::create_dir_all(dir);
        }
    }
    let Some(query) = query else {
        return Ok(None);
    };
    match write_rows(context, warehouse, name, &meta, &[], query.clone(), false).await {
        Ok(rows) => Ok(Some(rows)),
        Err(e) => {
            // A CTAS that fails leaves no table behind.
            let _ = drop_table(warehouse, name, &meta).await;
            Err(e)
        }
    }
}

async fn rename(warehouse: &Warehouse, from: &TableName, to: &TableName) -> Result<()> {
    existing(warehouse, from).await?;
    if !super::valid_name(&to.table) {
        return Err(DataFusionError::Plan(format!(
            "'{}' cannot name a table",
            to.table
        )));
    }
    if warehouse
        .table_meta(&to.database, &to.table)
        .await?
        .is_some()
    {
        return Err(DataFusionError::Plan(format!("table {to} already exists")));
    }
    if to.database != DEFAULT_DATABASE && !warehouse.database_exists(&to.database).await? {
        return Err(DataFusionError::Plan(format!(
            "database '{}' does not exist",
            to.database
        )));
    }
    let old_dir = warehouse.table_dir(&from.database, &from.table);
    let new_dir = warehouse.table_dir(&to.database, &to.table);
    if let (Some(old), Some(new)) = (local_dir(&old_dir), local_dir(&new_dir)) {
        // One rename moves metadata and (default location) files together.
        if let Some(parent) = new.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        return std::fs::rename(&old, &new)
            .map_err(|e| DataFusionError::Execution(format!("cannot rename {from} to {to}: {e}")));
    }
    // Object stores: the files one by one, the metadata last.
    let files = warehouse.list_files(&old_dir).await?;
    let old_prefix = object_path(&old_dir);
    let new_prefix = object_path(&new_dir);
    let mut metadata = None;
    for file in files {
        let Some(relative) = file.location.prefix_match(&old_prefix) else {
            continue;
        };
        let target = Path::from_iter(new_prefix.parts().chain(relative));
        if file.location.filename() == Some(super::meta::TABLE_FILE) {
            metadata = Some((file.location.clone(), target));
            continue;
        }
        warehouse
            .move_file(&old_dir, &file.location, &target)
            .await?;
    }
    if let Some((from_file, to_file)) = metadata {
        warehouse.move_file(&old_dir, &from_file, &to_file).await?;
    }
    Ok(())
}

/// The static part of a PARTITION clause, in the table's partition order; it must come
/// before any dynamic column, as in Hive.
pub(super) fn static_prefix(
    meta: &TableMeta,
    partition: &[(String, impl AsRef<str> + Clone)],
    name: &TableName,
) -> Result<Vec<(String, String)>> {
    let mut prefix = Vec::new();
    let mut remaining = partition.len();
    for column in &meta.partition_columns {
        let found = partition
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(&column.name));
        match found {
            Some((_, value)) => {
                prefix.push((column.name.clone(), value.as_ref().to_owned()));
                remaining -= 1;
            }
            None => break,
        }
    }
    if remaining > 0 {
        return Err(DataFusionError::Plan(format!(
            "PARTITION clause of {name}: values must be given for the first partition \
             columns, in order ({})",
            meta.partition_columns
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(prefix)
}

/// Writes the rows of `plan` into the table, staged and then moved in; returns how many.
async fn write_rows(
    context: &SessionContext,
    warehouse: &Warehouse,
    name: &TableName,
    meta: &TableMeta,
    partition: &[(String, Option<String>)],
    plan: LogicalPlan,
    overwrite: bool,
) -> Result<u64> {
    meta.table_only(name, "INSERT writes to tables")?;
    let statics: Vec<(String, String)> = partition
        .iter()
        .filter_map(|(c, v)| v.clone().map(|v| (c.clone(), v)))
        .collect();
    let prefix = static_prefix(meta, &statics, name)?;
    let dynamic: Vec<String> = meta
        .partition_columns
        .iter()
        .skip(prefix.len())
        .map(|c| c.name.clone())
        .collect();
    let location = warehouse.data_location(&name.database, &name.table, meta)?;
    let mut target = location.clone();
    for (column, value) in &prefix {
        target = child_dir(&target, &format!("{column}={value}"));
    }
    let staging = child_dir(&location, &format!(".staging-{}", uuid::Uuid::new_v4()));
    let result = stage(context, name, meta, &staging, dynamic.clone(), plan).await;
    let outcome = match result {
        Ok(rows) => publish(warehouse, &staging, &target, !dynamic.is_empty(), overwrite)
            .await
            .map(|()| rows),
        Err(e) => Err(e),
    };
    if let Err(e) = warehouse.delete_dir(&staging).await {
        tracing::warn!(error = %e, staging = %staging, "cannot remove a staging directory");
    }
    outcome
}

/// Writes the rows into the staging directory, partitioned by `dynamic`.
async fn stage(
    context: &SessionContext,
    name: &TableName,
    meta: &TableMeta,
    staging: &Url,
    dynamic: Vec<String>,
    plan: LogicalPlan,
) -> Result<u64> {
    let path = staging.as_str();
    let frame = context.execute_logical_plan(plan).await?;
    let options = DataFrameWriteOptions::new().with_partition_by(dynamic.clone());
    let batches = match meta.format.unwrap_or(StoredFormat::Parquet) {
        StoredFormat::Parquet => {
            frame
                .write_parquet(path, options, Some(TableParquetOptions::default()))
                .await?
        }
        StoredFormat::Csv | StoredFormat::Textfile => {
            let csv = CsvOptions {
                has_header: Some(meta.has_header),
                delimiter: meta.delimiter_byte()?,
                ..Default::default()
            };
            frame.write_csv(path, options, Some(csv)).await?
        }
        StoredFormat::Json => frame.write_json(path, options, None).await?,
        // DataFrame has no ORC writer: the same COPY plan, with the warehouse's ORC format.
        StoredFormat::Orc => {
            let plan = frame.into_unoptimized_plan();
            super::orc::write(context, plan, path, dynamic, &name.to_string()).await?
        }
    };
    Ok(count(&batches))
}

/// The row count a write reports.
fn count(batches: &[RecordBatch]) -> u64 {
    batches
        .iter()
        .filter_map(|b| b.columns().first())
        .filter_map(|c| c.as_any().downcast_ref::<UInt64Array>())
        .filter(|c| !c.is_empty() && c.is_valid(0))
        .map(|c| c.value(0))
        .sum()
}

/// Moves the staged files into `target`; with `overwrite`, then deletes the files they
/// replace (all of `target`'s, or with dynamic partitions those of the partitions written).
async fn publish(
    warehouse: &Warehouse,
    staging: &Url,
    target: &Url,
    dynamic: bool,
    overwrite: bool,
) -> Result<()> {
    let staged = warehouse.list_files(staging).await?;
    let staging_path = object_path(staging);
    let target_path = object_path(target);
    let mut replaced = Vec::new();
    if overwrite {
        if dynamic {
            let mut partitions: Vec<Vec<String>> = staged
                .iter()
                .filter_map(|f| f.location.prefix_match(&staging_path))
                .map(|parts| {
                    let mut parts: Vec<String> = parts.map(|p| p.as_ref().to_owned()).collect();
                    parts.pop();
                    parts
                })
                .collect();
            partitions.sort();
            partitions.dedup();
            for partition in partitions {
                let mut dir = target.clone();
                for part in &partition {
                    dir = child_dir(&dir, part);
                }
                replaced.extend(data_files(warehouse, &dir).await?);
            }
        } else {
            replaced = data_files(warehouse, target).await?;
        }
    }
    for file in &staged {
        let Some(relative) = file.location.prefix_match(&staging_path) else {
            continue;
        };
        let destination = Path::from_iter(target_path.parts().chain(relative));
        warehouse
            .move_file(staging, &file.location, &destination)
            .await?;
    }
    warehouse.delete_files(target, replaced.into_iter()).await
}

/// The data files under `dir`, at any depth: every file but hidden ones (a name or
/// directory starting with `.` or `_`: metadata, staging, Hadoop's `_SUCCESS`).
pub(super) async fn data_objects(warehouse: &Warehouse, dir: &Url) -> Result<Vec<ObjectMeta>> {
    let prefix = object_path(dir);
    Ok(warehouse
        .list_files(dir)
        .await?
        .into_iter()
        .filter(|file| {
            file.location
                .prefix_match(&prefix)
                .is_some_and(|mut parts| {
                    parts.all(|p| !p.as_ref().starts_with('.') && !p.as_ref().starts_with('_'))
                })
        })
        .collect())
}

/// The paths of [`data_objects`].
async fn data_files(warehouse: &Warehouse, dir: &Url) -> Result<Vec<Path>> {
    Ok(data_objects(warehouse, dir)
        .await?
        .into_iter()
        .map(|file| file.location)
        .collect())
}

/// A warehouse database's comment and location, for DESCRIBE DATABASE.
pub async fn database_details(context: &SessionContext, name: &str) -> Option<(String, String)> {
    let warehouse = warehouse_of(context)?;
    let meta = warehouse.database_meta(name).await.ok()??;
    let location = match &meta.location {
        Some(location) => location.clone(),
        None => warehouse.database_dir(name).to_string(),
    };
    Some((meta.comment.unwrap_or_default(), location))
}

/// A warehouse table's metadata for DESCRIBE and SHOW CREATE TABLE, None for any other.
pub async fn table_meta(
    context: &SessionContext,
    database: &str,
    table: &str,
) -> Option<(Arc<Warehouse>, TableMeta)> {
    let warehouse = warehouse_of(context)?;
    let in_memory = crate::session::temporary::engine_catalog(context)?
        .downcast_ref::<super::WarehouseCatalog>()?
        .in_memory(database, table);
    if in_memory {
        return None;
    }
    let meta = warehouse.table_meta(database, table).await.ok()??;
    Some((warehouse, meta))
}

/// `SHOW CREATE TABLE` of a warehouse table: Hive's statement, from its metadata.
pub fn create_statement(name: &TableName, warehouse: &Warehouse, meta: &TableMeta) -> Vec<String> {
    let quoted = format!("`{}`.`{}`", name.database, name.table);
    if meta.kind == TableKind::View {
        let mut lines = vec![format!("CREATE VIEW {quoted} AS")];
        lines.extend(
            meta.view_sql
                .as_deref()
                .unwrap_or_default()
                .lines()
                .map(str::to_owned),
        );
        return lines;
    }
    let column_lines = |columns: &[super::meta::ColumnMeta]| -> Vec<String> {
        let count = columns.len();
        columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let data_type = c
                    .data_type()
                    .map(|t| crate::types::type_string(&t))
                    .unwrap_or_else(|_| c.data_type.clone());
                let comment = c
                    .comment
                    .as_ref()
                    .map(|t| format!(" COMMENT '{}'", t.replace('\'', "\\'")))
                    .unwrap_or_default();
                format!(
                    "  `{}` {data_type}{comment}{}",
                    c.name,
                    if i + 1 < count { "," } else { ")" }
                )
            })
            .collect()
    };
    let external = if meta.kind == TableKind::External {
        "EXTERNAL "
    } else {
        ""
    };
    let mut lines = vec![format!("CREATE {external}TABLE {quoted}(")];
    lines.extend(column_lines(&meta.columns));
    if let Some(comment) = &meta.comment {
        lines.push(format!("COMMENT '{}'", comment.replace('\'', "\\'")));
    }
    if !meta.partition_columns.is_empty() {
        lines.push("PARTITIONED BY (".to_owned());
        lines.extend(column_lines(&meta.partition_columns));
    }
    let format = meta.format.unwrap_or(StoredFormat::Parquet);
    if matches!(format, StoredFormat::Csv | StoredFormat::Textfile) && meta.delimiter.is_some() {
        let delimiter = meta.delimiter.unwrap_or(',');
        let shown = if delimiter.is_ascii_control() {
            format!("\\{:03o}", delimiter as u32)
        } else {
            delimiter.to_string()
        };
        lines.push(format!(
            "ROW FORMAT DELIMITED FIELDS TERMINATED BY '{shown}'"
        ));
    }
    lines.push(format!("STORED AS {}", format.name()));
    if let Ok(location) = warehouse.data_location(&name.database, &name.table, meta) {
        lines.push("LOCATION".to_owned());
        lines.push(format!("  '{location}'"));
    }
    lines
}
