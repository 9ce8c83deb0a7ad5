//! The warehouse: databases and managed tables kept as files, so that they outlive the
//! engine and every engine of the cluster sees them, as Hive's and Spark's warehouse.
//!
//! Layout (Hive's): the `default` database is the warehouse root, database `d` is
//! `WAREHOUSE/d.db/`, table `t` of it `WAREHOUSE/d.db/t/`, a partition
//! `WAREHOUSE/d.db/t/dt=2024-01-01/`. Each table directory holds a hidden
//! [`meta::TABLE_FILE`] (schema, format, partition columns, managed or external, location,
//! comment, a view's SQL), each database directory a hidden [`meta::DATABASE_FILE`].
//!
//! Nothing is cached: a name is looked up in the warehouse when a statement resolves it, so
//! a table another engine (another user's) created is seen at the next statement. Queries
//! that name no warehouse table (`SELECT 1`, the `tpch` demo) do no I/O: names in the
//! engine's in-memory databases are found there first.
//!
//! - [`meta`]: the metadata files.
//! - [`catalog`]: the DataFusion catalog and schema providers over the warehouse.
//! - [`ddl`]: recognising the statements the warehouse answers.
//! - [`commands`]: running them; writes are staged and then made visible
//!   ([`commands`] says what is atomic).
//! - [`orc`]: ORC tables' reading and writing.
//! - [`load`]: `LOAD DATA`, files put into a table as they are.
//! - [`properties`]: a table's parameters (properties, comment, statistics) and `ANALYZE`.

pub mod catalog;
pub mod commands;
pub mod ddl;
pub mod load;
pub mod meta;
pub mod orc;
pub mod properties;

use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::object_store::ObjectStoreRegistry;
use datafusion::execution::SessionState;
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use url::Url;

use crate::catalog::DEFAULT_DATABASE;
use crate::object_stores::SchemeObjectStoreRegistry;
use meta::{DatabaseMeta, TableMeta, DATABASE_FILE, TABLE_FILE};

pub use catalog::{warehouse_of, WarehouseCatalog};

/// The suffix of a database's directory.
const DATABASE_SUFFIX: &str = ".db";

/// One warehouse: its root and the store holding it.
pub struct Warehouse {
    /// The root directory as a URL ending in `/` (`file:///srv/warehouse/`, `s3://b/w/`).
    root: Url,
    /// Stores by URL, opened from the engine's environment as table locations are.
    stores: SchemeObjectStoreRegistry,
    /// What views are planned with: the engine's session defaults, set once sessions exist.
    planner: std::sync::OnceLock<SessionState>,
}

impl std::fmt::Debug for Warehouse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Warehouse")
            .field("root", &self.root.as_str())
            .finish_non_exhaustive()
    }
}

impl Warehouse {
    /// Opens the warehouse at `location` (a local path, `file://` or an object-store URL);
    /// a local directory is created when missing.
    pub fn open(location: &str) -> Result<Arc<Self>> {
        let root = directory_url(location, true)?;
        let warehouse = Self {
            root,
            stores: SchemeObjectStoreRegistry::new(),
            planner: std::sync::OnceLock::new(),
        };
        warehouse.store(&warehouse.root)?;
        Ok(Arc::new(warehouse))
    }

    /// The root, as a URL ending in `/`.
    pub fn root(&self) -> &Url {
        &self.root
    }

    /// Gives the warehouse what it plans views with (the engine's session defaults).
    pub fn set_planner(&self, state: SessionState) {
        let _ = self.planner.set(state);
    }

    pub(crate) fn planner(&self) -> Option<&SessionState> {
        self.planner.get()
    }

    fn store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        self.stores.get_store(url)
    }

    /// The directory of database `db`'s tables' metadata: the root for `default`.
    pub fn database_dir(&self, db: &str) -> Url {
        if db == DEFAULT_DATABASE {
            self.root.clone()
        } else {
            child_dir(&self.root, &format!("{db}{DATABASE_SUFFIX}"))
        }
    }

    /// The directory of table `t` of `db`: its metadata, and a managed table's files.
    pub fn table_dir(&self, db: &str, table: &str) -> Url {
        child_dir(&self.database_dir(db), table)
    }

    /// The files' location of a table: its own, or its warehouse directory.
    pub fn data_location(&self, db: &str, table: &str, meta: &TableMeta) -> Result<Url> {
        match &meta.location {
            Some(location) => directory_url(location, false),
            None => Ok(self.table_dir(db, table)),
        }
    }

    /// The bytes at `url`, None when there is no such file.
    pub async fn read(&self, url: &Url) -> Result<Option<Bytes>> {
        let store = self.store(url)?;
        match store.get(&object_path(url)).await {
            Ok(result) => Ok(Some(result.bytes().await.map_err(store_error)?)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(store_error(e)),
        }
    }

    /// Writes `bytes` at `url`, replacing the file in one step (the store's put is atomic;
    /// locally a temporary file renamed); with `create_only`, false if it exists already.
    pub async fn write(&self, url: &Url, bytes: Vec<u8>, create_only: bool) -> Result<bool> {
        let store = self.store(url)?;
        let mode = if create_only {
            PutMode::Create
        } else {
            PutMode::Overwrite
        };
        let options = PutOptions {
            mode,
            ..Default::default()
        };
        let bytes_again = bytes.clone();
        match store
            .put_opts(&object_path(url), PutPayload::from(bytes), options)
            .await
        {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. }) if create_only => Ok(false),
            // A store without conditional writes: look, then write (two engines creating
            // the same name at the same moment may then both succeed, the last one winning).
            Err(object_store::Error::NotImplemented { .. }) if create_only => {
                if self.read(url).await?.is_some() {
                    return Ok(false);
                }
                Box::pin(self.write(url, bytes_again, false)).await
            }
            Err(e) => Err(store_error(e)),
        }
    }

    /// Every file under the directory `url`, at any depth.
    pub async fn list_files(&self, url: &Url) -> Result<Vec<ObjectMeta>> {
        let store = self.store(url)?;
        let prefix = object_path(url);
        store
            .list(Some(&prefix))
            .try_collect()
            .await
            .map_err(store_error)
    }

    /// The names of the directories directly under `url`.
    pub async fn list_dirs(&self, url: &Url) -> Result<Vec<String>> {
        let store = self.store(url)?;
        let prefix = object_path(url);
        let listing = match store.list_with_delimiter(Some(&prefix)).await {
            Ok(listing) => listing,
            Err(object_store::Error::NotFound { .. }) => return Ok(Vec::new()),
            Err(e) => return Err(store_error(e)),
        };
        Ok(listing
            .common_prefixes
            .iter()
            .filter_map(|p| p.filename().map(str::to_owned))
            .collect())
    }

    /// Deletes the directory `url` and everything under it.
    pub async fn delete_dir(&self, url: &Url) -> Result<()> {
        if let Some(path) = local_dir(url) {
            return match std::fs::remove_dir_all(&path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(DataFusionError::Execution(format!(
                    "cannot delete {}: {e}",
                    path.display()
                ))),
            };
        }
        let files = self.list_files(url).await?;
        self.delete_files(url, files.into_iter().map(|f| f.location))
            .await
    }

    /// Deletes files of the store holding `url`.
    pub async fn delete_files(&self, url: &Url, files: impl Iterator<Item = Path>) -> Result<()> {
        let store = self.store(url)?;
        for file in files {
            match store.delete(&file).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(store_error(e)),
            }
        }
        Ok(())
    }

    /// Moves a file within the store holding `url` (a rename locally, one step; a copy and
    /// a delete on object stores).
    pub async fn move_file(&self, url: &Url, from: &Path, to: &Path) -> Result<()> {
        let store = self.store(url)?;
        store.rename(from, to).await.map_err(store_error)
    }

    // Databases.

    /// Whether database `db` is in the warehouse (`default` always is).
    pub async fn database_exists(&self, db: &str) -> Result<bool> {
        if db == DEFAULT_DATABASE {
            return Ok(true);
        }
        let marker = self
            .database_dir(db)
            .join(DATABASE_FILE)
            .expect("a file name joins");
        Ok(self.read(&marker).await?.is_some())
    }

    /// The databases in the warehouse, `default` included.
    pub async fn database_names(&self) -> Result<Vec<String>> {
        let mut names = vec![DEFAULT_DATABASE.to_owned()];
        for dir in self.list_dirs(&self.root).await? {
            if let Some(name) = dir.strip_suffix(DATABASE_SUFFIX) {
                if !name.is_empty() && self.database_exists(name).await? {
                    names.push(name.to_owned());
                }
            }
        }
        Ok(names)
    }

    /// A database's metadata, None if it is not in the warehouse.
    pub async fn database_meta(&self, db: &str) -> Result<Option<DatabaseMeta>> {
        if db == DEFAULT_DATABASE {
            return Ok(Some(DatabaseMeta::default()));
        }
        let marker = self
            .database_dir(db)
            .join(DATABASE_FILE)
            .expect("a file name joins");
        match self.read(&marker).await? {
            None => Ok(None),
            Some(bytes) => Ok(Some(serde_json::from_slice(&bytes).unwrap_or_default())),
        }
    }

    /// Creates database `db`; false if it existed.
    pub async fn create_database(&self, db: &str, meta: &DatabaseMeta) -> Result<bool> {
        let marker = self
            .database_dir(db)
            .join(DATABASE_FILE)
            .expect("a file name joins");
        let bytes = serde_json::to_vec_pretty(meta)
            .map_err(|e| DataFusionError::Internal(format!("database metadata: {e}")))?;
        if let Some(location) = &meta.location {
            if let Some(path) = local_dir(&directory_url(location, true)?) {
                let _ = std::fs::create_dir_all(path);
            }
        }
        self.write(&marker, bytes, true).await
    }

    // Tables.

    /// The metadata of table `t` of `db`, None if the warehouse has no such table.
    pub async fn table_meta(&self, db: &str, table: &str) -> Result<Option<TableMeta>> {
        if !valid_name(table) {
            return Ok(None);
        }
        let file = self
            .table_dir(db, table)
            .join(TABLE_FILE)
            .expect("a file name joins");
        match self.read(&file).await? {
            None => Ok(None),
            Some(bytes) => TableMeta::from_json(&bytes, &format!("{db}.{table}")).map(Some),
        }
    }

    /// The tables (and views) of `db` in the warehouse.
    pub async fn table_names(&self, db: &str) -> Result<Vec<String>> {
        let dir = self.database_dir(db);
        let mut names = Vec::new();
        for name in self.list_dirs(&dir).await? {
            if name.ends_with(DATABASE_SUFFIX) || !valid_name(&name) {
                continue;
            }
            let file = child_dir(&dir, &name)
                .join(TABLE_FILE)
                .expect("a file name joins");
            if self.read(&file).await?.is_some() {
                names.push(name);
            }
        }
        Ok(names)
    }

    /// Writes a table's metadata: a new table's (false if one exists already), or replaces
    /// an existing one's.
    pub async fn write_table_meta(
        &self,
        db: &str,
        table: &str,
        meta: &TableMeta,
        create_only: bool,
    ) -> Result<bool> {
        let file = self
            .table_dir(db, table)
            .join(TABLE_FILE)
            .expect("a file name joins");
        self.write(&file, meta.to_json()?, create_only).await
    }
}

/// Runs a future to completion from synchronous code (DataFusion's catalog listing calls
/// are synchronous): on a multi-threaded runtime in place, else on a helper thread.
pub(crate) fn block_on<F>(future: F) -> F::Output
where
    F: Future + Send,
    F::Output: Send,
{
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| handle.block_on(future))
        }
        Ok(handle) => std::thread::scope(|scope| {
            scope
                .spawn(|| handle.block_on(future))
                .join()
                .expect("a warehouse lookup does not panic")
        }),
        Err(_) => futures::executor::block_on(future),
    }
}

/// A name the warehouse keeps: no path separators, no leading dot.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\\']) && name != ".."
}

/// `location` as a directory URL ending in `/`: a local path made absolute (and created
/// with `create`), a URL as it is.
pub fn directory_url(location: &str, create: bool) -> Result<Url> {
    let is_url = location.contains("://");
    if !is_url {
        let path = std::path::Path::new(location);
        if create {
            std::fs::create_dir_all(path).map_err(|e| {
                DataFusionError::Execution(format!("cannot create directory {location}: {e}"))
            })?;
        }
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir()
                .map_err(|e| DataFusionError::Execution(e.to_string()))?
                .join(path)
        };
        let absolute = absolute.canonicalize().unwrap_or(absolute);
        return Url::from_directory_path(&absolute).map_err(|()| {
            DataFusionError::Plan(format!("'{location}' is not a usable directory path"))
        });
    }
    let text = if location.ends_with('/') {
        location.to_owned()
    } else {
        format!("{location}/")
    };
    let url = Url::parse(&text)
        .map_err(|e| DataFusionError::Plan(format!("'{location}' is not a URL: {e}")))?;
    if create {
        if let Some(path) = local_dir(&url) {
            let _ = std::fs::create_dir_all(path);
        }
    }
    // ListingTableUrl accepts what DataFusion can read.
    ListingTableUrl::parse(url.as_str())?;
    Ok(url)
}

/// The directory `name` under the directory URL `dir`.
pub fn child_dir(dir: &Url, name: &str) -> Url {
    let mut url = dir.clone();
    url.path_segments_mut()
        .expect("warehouse URLs have paths")
        .pop_if_empty()
        .push(name)
        .push("");
    url
}

/// The object-store path of a URL.
pub fn object_path(url: &Url) -> Path {
    Path::from_url_path(url.path()).unwrap_or_else(|_| Path::from(url.path()))
}

/// The local directory of a `file://` URL.
pub fn local_dir(url: &Url) -> Option<std::path::PathBuf> {
    (url.scheme() == "file")
        .then(|| url.to_file_path().ok())
        .flatten()
}

fn store_error(e: object_store::Error) -> DataFusionError {
    DataFusionError::ObjectStore(Box::new(e))
}

#[cfg(test)]
pub(crate) mod tests;
