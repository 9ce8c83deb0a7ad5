//! The catalog all sessions of one engine share: its databases and their tables.
//!
//! Like one Spark application, an engine has one catalog: a table one session creates is
//! visible to every other. Hive's databases are DataFusion's schemas, inside one
//! DataFusion catalog; `default` always exists, `tpch` holds the demo data.

pub mod tpch;

use std::path::Path;
use std::sync::Arc;

use datafusion::catalog::{
    CatalogProvider, CatalogProviderList, MemoryCatalogProvider, MemoryCatalogProviderList,
    MemorySchemaProvider, SchemaProvider,
};
use datafusion::common::TableReference;
use datafusion::error::Result as DfResult;
use datafusion::prelude::{CsvReadOptions, JsonReadOptions, ParquetReadOptions, SessionContext};

use crate::config::{split_table_name, TableConfig, TableFormat};

/// The one DataFusion catalog; Hive has no catalogs, so clients rarely see its name.
pub const CATALOG: &str = "datafusion";
/// The database every session starts in, as in Hive.
pub const DEFAULT_DATABASE: &str = "default";
/// The database of the TPC-H demo data.
pub const DEMO_DATABASE: &str = "tpch";

/// A fresh catalog list holding [`CATALOG`] with an empty [`DEFAULT_DATABASE`].
pub fn new_catalog_list() -> Arc<dyn CatalogProviderList> {
    let catalog = MemoryCatalogProvider::new();
    catalog
        .register_schema(DEFAULT_DATABASE, Arc::new(MemorySchemaProvider::new()))
        .expect("a memory catalog accepts new schemas");
    let list = MemoryCatalogProviderList::new();
    list.register_catalog(CATALOG.to_owned(), Arc::new(catalog));
    Arc::new(list)
}

/// Adds the demo database at `scale` to the catalog.
pub fn register_demo_data(
    catalogs: &dyn CatalogProviderList,
    scale: f64,
    max_parts: usize,
) -> DfResult<()> {
    let schema = tpch::schema_provider(scale, max_parts)?;
    main_catalog(catalogs).register_schema(DEMO_DATABASE, schema)?;
    Ok(())
}

/// The engine's catalog; [`new_catalog_list`] always creates it.
fn main_catalog(catalogs: &dyn CatalogProviderList) -> Arc<dyn CatalogProvider> {
    catalogs
        .catalog(CATALOG)
        .expect("the engine's catalog list always holds its catalog")
}

/// A configured table that could not be registered; the message names table and location.
#[derive(Debug, thiserror::Error)]
#[error("cannot register table '{table}' at '{location}': {reason}")]
pub struct TableRegistrationError {
    pub table: String,
    pub location: String,
    pub reason: String,
}

/// Registers a configured table through `ctx` (whose catalog list is the engine's),
/// creating its database when missing. A local location must exist.
pub async fn register_table(
    ctx: &SessionContext,
    name: &str,
    table: &TableConfig,
) -> Result<(), TableRegistrationError> {
    let fail = |reason: String| TableRegistrationError {
        table: name.to_owned(),
        location: table.location.clone(),
        reason,
    };
    let (database, table_name) = split_table_name(name).map_err(fail)?;
    let local_path = local_path(&table.location);
    if let Some(path) = local_path {
        if !path.exists() {
            return Err(fail("no such file or directory".to_owned()));
        }
    }
    ensure_database(&ctx.state().catalog_list().clone(), database)
        .map_err(|e| fail(e.to_string()))?;

    // A single file is read whatever its extension; a directory only with the format's.
    let single_file_extension = local_path.filter(|path| path.is_file()).map(|path| {
        path.extension()
            .map(|ext| format!(".{}", ext.to_string_lossy()))
            .unwrap_or_default()
    });
    let extension = table.file_extension.clone().or(single_file_extension);
    let reference = TableReference::partial(database, table_name);
    let result = match table.format {
        TableFormat::Csv => {
            let mut options = CsvReadOptions::new().has_header(table.has_header.unwrap_or(true));
            if let Some(delimiter) = table.delimiter {
                let byte = u8::try_from(delimiter)
                    .ok()
                    .filter(u8::is_ascii)
                    .ok_or_else(|| {
                        fail(format!(
                            "delimiter '{delimiter}' is not one ASCII character"
                        ))
                    })?;
                options = options.delimiter(byte);
            }
            if let Some(extension) = &extension {
                options = options.file_extension(extension);
            }
            ctx.register_csv(reference, &table.location, options).await
        }
        TableFormat::Parquet => {
            let mut options = ParquetReadOptions::default();
            if let Some(extension) = &extension {
                options = options.file_extension(extension);
            }
            ctx.register_parquet(reference, &table.location, options)
                .await
        }
        TableFormat::Json => {
            let mut options = JsonReadOptions::default();
            if let Some(extension) = &extension {
                options = options.file_extension(extension);
            }
            ctx.register_json(reference, &table.location, options).await
        }
    };
    result.map_err(|e| fail(e.strip_backtrace()))
}

/// The local file system path of a location that has no URL scheme or `file://`.
fn local_path(location: &str) -> Option<&Path> {
    if let Some(path) = location.strip_prefix("file://") {
        return Some(Path::new(path));
    }
    if location.contains("://") {
        None
    } else {
        Some(Path::new(location))
    }
}

/// Creates database `name` in the engine's catalog unless it exists.
pub fn ensure_database(catalogs: &Arc<dyn CatalogProviderList>, name: &str) -> DfResult<()> {
    let catalog = main_catalog(catalogs.as_ref());
    if catalog.schema(name).is_none() {
        let schema: Arc<dyn SchemaProvider> = Arc::new(MemorySchemaProvider::new());
        catalog.register_schema(name, schema)?;
    }
    Ok(())
}

/// The names of the databases, sorted, without DataFusion's `information_schema`.
pub fn database_names(catalogs: &dyn CatalogProviderList) -> Vec<String> {
    let mut names: Vec<String> = main_catalog(catalogs)
        .schema_names()
        .into_iter()
        .filter(|name| name != "information_schema")
        .collect();
    names.sort();
    names
}
