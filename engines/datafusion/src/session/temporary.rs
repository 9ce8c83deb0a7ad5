//! A session's temporary views, and the catalog through which its statements see them.
//!
//! `CREATE TEMPORARY VIEW v AS ...` keeps `v` for the session that made it, as Spark keeps a
//! temporary view for its SparkSession: no other session of the engine sees it (another
//! user's included, on a GROUP or SERVER engine), and it is gone when the session closes.
//! An unqualified name is looked up among the session's temporary views before the tables
//! of its current database, so a temporary view shadows a table of its name for that session
//! alone.
//!
//! The session's DataFusion context reads the engine's one catalog through a
//! [`SessionCatalogList`], which lays the views over the current database. While a session
//! has no temporary view, the list hands out the engine's catalog itself: lookups cost what
//! they did.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, CatalogProviderList, SchemaProvider, TableProvider};
use datafusion::datasource::TableType;
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::Tokenizer;

use crate::catalog::CATALOG;
use crate::words::Words;

/// A session's temporary views by name (as DataFusion normalises names: unquoted ones in
/// lower case). A std RwLock: never held across an await.
#[derive(Debug, Default)]
pub struct TemporaryViews {
    views: RwLock<BTreeMap<String, Arc<dyn TableProvider>>>,
}

impl TemporaryViews {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Arc<dyn TableProvider>>> {
        self.views
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Arc<dyn TableProvider>>> {
        self.views
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The view named `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn TableProvider>> {
        self.read().get(name).cloned()
    }

    /// Whether there is a view named `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.read().contains_key(name)
    }

    /// The views' names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.read().keys().cloned().collect()
    }

    /// Whether the session has no temporary view.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// Adds a view; one of its name must be replaced explicitly (`or_replace`).
    pub fn create(&self, name: &str, view: Arc<dyn TableProvider>, or_replace: bool) -> Result<()> {
        let mut views = self.write();
        if !or_replace && views.contains_key(name) {
            return Err(DataFusionError::Plan(format!(
                "cannot create the temporary view '{name}': it exists already; \
                 CREATE OR REPLACE TEMPORARY VIEW replaces it"
            )));
        }
        views.insert(name.to_owned(), view);
        Ok(())
    }

    /// Drops a view; false if there was none of that name.
    pub fn remove(&self, name: &str) -> bool {
        self.write().remove(name).is_some()
    }
}

/// The catalog list a session's statements resolve names in: the engine's, with the
/// session's temporary views over its current database `database`. Rebuilt when the
/// current database changes ([`super::Session::use_database`]).
#[derive(Debug)]
pub struct SessionCatalogList {
    engine: Arc<dyn CatalogProviderList>,
    views: Arc<TemporaryViews>,
    /// The session's current database: where DataFusion looks up an unqualified name.
    database: String,
}

impl SessionCatalogList {
    pub fn new(
        engine: Arc<dyn CatalogProviderList>,
        views: Arc<TemporaryViews>,
        database: String,
    ) -> Self {
        Self {
            engine,
            views,
            database,
        }
    }
}

impl CatalogProviderList for SessionCatalogList {
    fn register_catalog(
        &self,
        name: String,
        catalog: Arc<dyn CatalogProvider>,
    ) -> Option<Arc<dyn CatalogProvider>> {
        self.engine.register_catalog(name, catalog)
    }

    fn catalog_names(&self) -> Vec<String> {
        self.engine.catalog_names()
    }

    fn catalog(&self, name: &str) -> Option<Arc<dyn CatalogProvider>> {
        let catalog = self.engine.catalog(name)?;
        if name != CATALOG || self.views.is_empty() {
            return Some(catalog);
        }
        Some(Arc::new(SessionCatalog {
            engine: catalog,
            views: Arc::clone(&self.views),
            database: self.database.clone(),
        }))
    }
}

/// The engine's catalog with the session's temporary views over one database.
#[derive(Debug)]
struct SessionCatalog {
    engine: Arc<dyn CatalogProvider>,
    views: Arc<TemporaryViews>,
    database: String,
}

impl CatalogProvider for SessionCatalog {
    fn schema_names(&self) -> Vec<String> {
        self.engine.schema_names()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        let schema = self.engine.schema(name)?;
        if name != self.database {
            return Some(schema);
        }
        Some(Arc::new(SessionSchema {
            engine: schema,
            views: Arc::clone(&self.views),
        }))
    }

    fn register_schema(
        &self,
        name: &str,
        schema: Arc<dyn SchemaProvider>,
    ) -> Result<Option<Arc<dyn SchemaProvider>>> {
        self.engine.register_schema(name, schema)
    }

    fn deregister_schema(
        &self,
        name: &str,
        cascade: bool,
    ) -> Result<Option<Arc<dyn SchemaProvider>>> {
        self.engine.deregister_schema(name, cascade)
    }
}

/// The current database with the session's temporary views found first. The views are
/// not the database's: its table list, and what is registered in it, stay the engine's.
#[derive(Debug)]
struct SessionSchema {
    engine: Arc<dyn SchemaProvider>,
    views: Arc<TemporaryViews>,
}

#[async_trait]
impl SchemaProvider for SessionSchema {
    fn table_names(&self) -> Vec<String> {
        self.engine.table_names()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(view) = self.views.get(name) {
            return Ok(Some(view));
        }
        self.engine.table(name).await
    }

    async fn table_type(&self, name: &str) -> Result<Option<TableType>> {
        if self.views.contains(name) {
            return Ok(Some(TableType::View));
        }
        self.engine.table_type(name).await
    }

    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        self.engine.register_table(name, table)
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        self.engine.deregister_table(name)
    }

    fn table_exist(&self, name: &str) -> bool {
        self.views.contains(name) || self.engine.table_exist(name)
    }
}

/// The engine's catalog list under a session's context (what every session shares), and
/// the session's temporary views, if `context` is a session's.
pub fn session_catalogs(
    context: &SessionContext,
) -> (Arc<dyn CatalogProviderList>, Option<Arc<TemporaryViews>>) {
    let list = Arc::clone(context.state_ref().read().catalog_list());
    match list.downcast_ref::<SessionCatalogList>() {
        Some(session) => (
            Arc::clone(&session.engine),
            Some(Arc::clone(&session.views)),
        ),
        None => (list, None),
    }
}

/// The engine's catalog under a session's context, without the session's temporary views:
/// where the warehouse's statements and the listings of databases' tables look.
pub fn engine_catalog(context: &SessionContext) -> Option<Arc<dyn CatalogProvider>> {
    session_catalogs(context).0.catalog(CATALOG)
}

/// The words of `sql` and the session's temporary views, when `sql` starts with one of
/// `first_words` and the session has views; `None` otherwise, before tokenizing, since
/// most statements are neither.
fn statement_on_views(
    context: &SessionContext,
    sql: &str,
    first_words: &[&str],
) -> Option<(Words, Arc<TemporaryViews>)> {
    let first = sql
        .trim_start()
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()?;
    if !first_words.iter().any(|w| first.eq_ignore_ascii_case(w)) {
        return None;
    }
    let views = session_catalogs(context).1?;
    if views.is_empty() {
        return None;
    }
    let tokens = Tokenizer::new(&GenericDialect {}, sql).tokenize().ok()?;
    Some((Words::new(tokens), views))
}

/// `DROP VIEW|TABLE [IF EXISTS] v` naming one of the session's temporary views (by an
/// unqualified name): that name, as Spark drops it. None for any other statement, which
/// then drops what it names in the engine's catalog.
pub fn dropped_view(context: &SessionContext, sql: &str) -> Option<String> {
    let (mut words, views) = statement_on_views(context, sql, &["drop"])?;
    if !(words.eat("drop") && words.eat_any(&["view", "table"])) {
        return None;
    }
    let _ = words.eat("if") && words.eat("exists");
    let name = words.identifier()?;
    words.eat("purge");
    (words.done() && views.contains(&name)).then_some(name)
}

/// The error for `INSERT`, `TRUNCATE` or `ALTER` of one of the session's temporary views
/// (by an unqualified name), which are read only, as Spark's: the statement would
/// otherwise change the table the view shadows.
pub fn written_view(context: &SessionContext, sql: &str) -> Option<DataFusionError> {
    let (mut words, views) = statement_on_views(context, sql, &["insert", "truncate", "alter"])?;
    if words.eat("insert") {
        if !words.eat_any(&["into", "overwrite"]) {
            return None;
        }
        words.eat("table");
    } else if words.eat("truncate") {
        words.eat("table");
    } else if !(words.eat("alter") && words.eat_any(&["table", "view"])) {
        return None;
    }
    let name = words.dotted_name()?;
    match name.as_slice() {
        [name] if views.contains(name) => Some(DataFusionError::Plan(format!(
            "'{name}' is a temporary view of this session, which cannot be changed; \
             name the table it shadows with its database (database.{name})"
        ))),
        _ => None,
    }
}
