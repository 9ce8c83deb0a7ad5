//! The engine's catalog with a warehouse: its in-memory databases (the demo data, the
//! cluster's configured tables, temporary views) and the warehouse's, merged.
//!
//! A name is looked up in memory first (no I/O, so the demo data and configured tables
//! cost what they did), then in the warehouse, read afresh at every lookup.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{
    CatalogProvider, CatalogProviderList, MemoryCatalogProvider, MemoryCatalogProviderList,
    MemorySchemaProvider, SchemaProvider, TableProvider,
};
use datafusion::common::config::{ParquetOptions, TableParquetOptions};
use datafusion::common::{Constraint, Constraints};
use datafusion::datasource::file_format::csv::CsvFormat;
use datafusion::datasource::file_format::json::JsonFormat;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::datasource::ViewTable;
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::SessionContext;

use super::meta::{StoredFormat, TableKind, TableMeta};
use super::{block_on, Warehouse};
use crate::catalog::{CATALOG, DEFAULT_DATABASE};

/// The engine's one catalog when it has a warehouse.
#[derive(Debug)]
pub struct WarehouseCatalog {
    memory: Arc<MemoryCatalogProvider>,
    warehouse: Arc<Warehouse>,
}

impl WarehouseCatalog {
    pub fn new(memory: Arc<MemoryCatalogProvider>, warehouse: Arc<Warehouse>) -> Self {
        Self { memory, warehouse }
    }

    pub fn warehouse(&self) -> &Arc<Warehouse> {
        &self.warehouse
    }

    /// Whether `table` of `database` is one of the engine's in-memory tables.
    pub fn in_memory(&self, database: &str, table: &str) -> bool {
        self.memory
            .schema(database)
            .is_some_and(|schema| schema.table_exist(table))
    }
}

/// A catalog list like [`crate::catalog::new_catalog_list`]'s, whose catalog is a
/// [`WarehouseCatalog`] over `warehouse`.
pub fn catalog_list(warehouse: Arc<Warehouse>) -> Arc<dyn CatalogProviderList> {
    let memory = Arc::new(MemoryCatalogProvider::new());
    memory
        .register_schema(DEFAULT_DATABASE, Arc::new(MemorySchemaProvider::new()))
        .expect("a memory catalog accepts new schemas");
    let list = MemoryCatalogProviderList::new();
    list.register_catalog(
        CATALOG.to_owned(),
        Arc::new(WarehouseCatalog::new(memory, warehouse)),
    );
    Arc::new(list)
}

/// The warehouse of a session's catalog, if the engine has one.
pub fn warehouse_of(context: &SessionContext) -> Option<Arc<Warehouse>> {
    let catalog = crate::session::temporary::engine_catalog(context)?;
    let catalog = catalog.downcast_ref::<WarehouseCatalog>()?;
    Some(Arc::clone(&catalog.warehouse))
}

impl CatalogProvider for WarehouseCatalog {
    fn schema_names(&self) -> Vec<String> {
        let mut names = self.memory.schema_names();
        match block_on(self.warehouse.database_names()) {
            Ok(stored) => names.extend(stored),
            Err(e) => tracing::warn!(error = %e, "cannot list the warehouse's databases"),
        }
        names.sort();
        names.dedup();
        names
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        let memory = self.memory.schema(name);
        if memory.is_none() && !block_on(self.warehouse.database_exists(name)).unwrap_or(false) {
            return None;
        }
        Some(Arc::new(WarehouseSchema {
            database: name.to_owned(),
            memory,
            catalog: Arc::clone(&self.memory),
            warehouse: Arc::clone(&self.warehouse),
        }))
    }

    fn register_schema(
        &self,
        name: &str,
        schema: Arc<dyn SchemaProvider>,
    ) -> Result<Option<Arc<dyn SchemaProvider>>> {
        self.memory.register_schema(name, schema)
    }

    fn deregister_schema(
        &self,
        name: &str,
        cascade: bool,
    ) -> Result<Option<Arc<dyn SchemaProvider>>> {
        self.memory.deregister_schema(name, cascade)
    }
}

/// One database: its in-memory tables, then the warehouse's.
#[derive(Debug)]
struct WarehouseSchema {
    database: String,
    memory: Option<Arc<dyn SchemaProvider>>,
    catalog: Arc<MemoryCatalogProvider>,
    warehouse: Arc<Warehouse>,
}

#[async_trait]
impl SchemaProvider for WarehouseSchema {
    fn table_names(&self) -> Vec<String> {
        let mut names = self
            .memory
            .as_ref()
            .map(|m| m.table_names())
            .unwrap_or_default();
        match block_on(self.warehouse.table_names(&self.database)) {
            Ok(stored) => names.extend(stored),
            Err(e) => {
                tracing::warn!(error = %e, database = %self.database, "cannot list the warehouse's tables")
            }
        }
        names.sort();
        names.dedup();
        names
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(memory) = &self.memory {
            if let Some(table) = memory.table(name).await? {
                return Ok(Some(table));
            }
        }
        match self.warehouse.table_meta(&self.database, name).await? {
            None => Ok(None),
            Some(meta) => table_provider(&self.warehouse, &self.database, name, &meta)
                .await
                .map(Some),
        }
    }

    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        memory_schema(&self.catalog, &self.database).register_table(name, table)
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        match &self.memory {
            Some(memory) => memory.deregister_table(name),
            None => Ok(None),
        }
    }

    fn table_exist(&self, name: &str) -> bool {
        if self
            .memory
            .as_ref()
            .is_some_and(|memory| memory.table_exist(name))
        {
            return true;
        }
        block_on(self.warehouse.table_meta(&self.database, name))
            .ok()
            .flatten()
            .is_some()
    }
}

/// The in-memory database `name` of `memory`, created when missing (for temporary objects
/// of a database that is only in the warehouse).
fn memory_schema(memory: &MemoryCatalogProvider, name: &str) -> Arc<dyn SchemaProvider> {
    if let Some(schema) = memory.schema(name) {
        return schema;
    }
    let schema: Arc<dyn SchemaProvider> = Arc::new(MemorySchemaProvider::new());
    let _ = memory.register_schema(name, Arc::clone(&schema));
    schema
}

/// The file format reading (and writing) a table's files.
pub fn file_format(meta: &TableMeta) -> Result<Arc<dyn FileFormat>> {
    Ok(match meta.format.unwrap_or(StoredFormat::Parquet) {
        StoredFormat::Parquet => {
            let mut options = TableParquetOptions::default();
            read_int96_as_moments(&mut options.global);
            Arc::new(ParquetFormat::default().with_options(options))
        }
        StoredFormat::Csv | StoredFormat::Textfile => Arc::new(
            CsvFormat::default()
                .with_has_header(meta.has_header)
                .with_delimiter(meta.delimiter_byte()?),
        ),
        StoredFormat::Json => Arc::new(JsonFormat::default()),
        StoredFormat::Orc => Arc::new(super::orc::OrcTableFormat),
    })
}

/// How the engine reads Parquet files, the warehouse's and the configured tables': Spark's
/// INT96 timestamps (its default) as the moments they are, UTC's, to the microsecond, so
/// that they are shown and read in the session's zone ([`crate::time_zones`]) and their
/// years reach past 2262, as Spark reads them; DataFusion's defaults otherwise.
pub(crate) fn read_int96_as_moments(options: &mut ParquetOptions) {
    options.coerce_int96 = Some("us".to_owned());
    options.coerce_int96_tz = Some("UTC".to_owned());
}

/// The extension of a table's data files.
pub fn file_extension(meta: &TableMeta) -> String {
    match &meta.file_extension {
        Some(extension) => extension.clone(),
        None => match meta.format.unwrap_or(StoredFormat::Parquet) {
            StoredFormat::Parquet => ".parquet".to_owned(),
            StoredFormat::Csv | StoredFormat::Textfile => ".csv".to_owned(),
            StoredFormat::Json => ".json".to_owned(),
            // Every file but hidden ones, as Hive reads ORC tables ([`super::orc`]).
            StoredFormat::Orc => String::new(),
        },
    }
}

/// What reads a warehouse table: a listing of its files (partition directories included),
/// or a view's plan.
pub async fn table_provider(
    warehouse: &Warehouse,
    database: &str,
    name: &str,
    meta: &TableMeta,
) -> Result<Arc<dyn TableProvider>> {
    if meta.kind == TableKind::View {
        return view_provider(warehouse, database, name, meta).await;
    }
    let location = warehouse.data_location(database, name, meta)?;
    let url = ListingTableUrl::parse(location.as_str())?;
    let options = ListingOptions::new(file_format(meta)?)
        .with_file_extension(file_extension(meta))
        .with_table_partition_cols(meta.partition_types()?);
    let config = ListingTableConfig::new(url)
        .with_listing_options(options)
        .with_schema(meta.file_schema()?);
    let schema = meta.full_schema()?;
    let key: Vec<usize> = meta
        .primary_key
        .iter()
        .filter_map(|column| schema.index_of(column).ok())
        .collect();
    let table = ListingTable::try_new(config)?;
    Ok(Arc::new(if key.is_empty() {
        table
    } else {
        table.with_constraints(Constraints::new_unverified(vec![Constraint::PrimaryKey(
            key,
        )]))
    }))
}

/// A view: its SQL planned in its database.
async fn view_provider(
    warehouse: &Warehouse,
    database: &str,
    name: &str,
    meta: &TableMeta,
) -> Result<Arc<dyn TableProvider>> {
    let sql = meta.view_sql.as_deref().unwrap_or_default();
    let Some(state) = warehouse.planner() else {
        return Err(DataFusionError::Internal(format!(
            "view {database}.{name} cannot be planned yet"
        )));
    };
    let mut state = state.clone();
    state.config_mut().options_mut().catalog.default_schema = database.to_owned();
    let plan = Box::pin(super::ddl::plan_query(&state, sql)).await?;
    let plan = super::ddl::view_typed_as_its_rows(&state, plan)?;
    Ok(Arc::new(ViewTable::new(plan, Some(sql.to_owned()))))
}
