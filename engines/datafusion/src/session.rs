//! Sessions: one DataFusion context per HiveServer2 session, all over the engine's one catalog.
//!
//! A session owns its current database, its `SET` values, its temporary views
//! ([`temporary`]), its user and its operations; the catalog (databases and tables) belongs
//! to the engine, so what one session creates the others see, as in one Spark application.

pub mod temporary;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use dashmap::DashMap;
use datafusion::catalog::CatalogProviderList;
use datafusion::config::ConfigOptions;
use datafusion::datasource::ViewTable;
use datafusion::error::DataFusionError;
use datafusion::execution::cache::cache_manager::CacheManagerConfig;
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::execution::{FunctionRegistry, SessionState, SessionStateBuilder};
use datafusion::logical_expr::CreateView;
use datafusion::prelude::{SessionConfig, SessionContext};
use kumiho_thrift::handle::HandleId;
use kumiho_thrift::session_conf::SessionConf;

use crate::catalog::{CATALOG, DEFAULT_DATABASE};
use crate::functions;
use crate::hive_functions;
use crate::hive_syntax;
use crate::object_stores::SchemeObjectStoreRegistry;
use crate::spark_aggregates;
use crate::spark_casts;
use crate::time_zones;
use crate::variables;
use temporary::{SessionCatalogList, TemporaryViews};

/// Prefix of the settings DataFusion itself understands; every other key is kept by the
/// session for `SET` to show, as HiveServer2 keeps keys it does not use.
pub const DATAFUSION_PREFIX: &str = "datafusion.";

/// One HiveServer2 session.
pub struct Session {
    pub id: HandleId,
    /// The user the session runs as (from the transport or `TOpenSessionReq.username`).
    pub user: String,
    /// The binary connection that opened the session, closed with it.
    pub connection_id: u64,
    /// The session's DataFusion context: its own settings and current database, the
    /// engine's catalog.
    ctx: SessionContext,
    /// Settings DataFusion does not know (`SET hive.x=y`, OpenSession confs).
    /// A std Mutex: never held across an await.
    settings: Mutex<BTreeMap<String, String>>,
    /// The session's open operations, closed with it. Never held across an await.
    operations: Mutex<HashSet<HandleId>>,
    /// The session's temporary views, which its context's catalog list lays over the
    /// engine's catalog.
    views: Arc<TemporaryViews>,
    /// The engine's catalog list, under the session's.
    engine_catalogs: Arc<dyn CatalogProviderList>,
    /// `ADD JAR|FILE|ARCHIVE` resources as `(kind, path)`, for `LIST JARS`: listed, never
    /// loaded ([`crate::statement`]). Never held across an await.
    resources: Mutex<Vec<(String, String)>>,
    /// DataFusion's settings as the session was opened (its configuration applied), which
    /// `RESET` returns to.
    opened_options: Arc<ConfigOptions>,
    /// The other settings as the session was opened.
    opened_settings: BTreeMap<String, String>,
    /// Each key `SET` since the session opened, with its last value, in the order last set:
    /// what `RESET key` replays after returning to the opened settings. As many entries as
    /// keys. Never held across an await.
    set_since_open: Mutex<Vec<(String, String)>>,
}

/// Why a session could not be opened or changed: the client's request was wrong.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("database '{0}' does not exist; SHOW DATABASES lists those that do")]
    NoSuchDatabase(String),
    #[error("invalid value for setting '{key}': {reason}")]
    BadSetting { key: String, reason: String },
    /// Hive variable substitution could not finish ([`crate::variables`]).
    #[error("{0}")]
    Substitution(String),
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("user", &self.user)
            .field("connection_id", &self.connection_id)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// The session's DataFusion context.
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// The database unqualified table names resolve in.
    pub fn current_database(&self) -> String {
        self.ctx
            .state_ref()
            .read()
            .config()
            .options()
            .catalog
            .default_schema
            .clone()
    }

    /// Makes `database` the current one; it must exist.
    pub fn use_database(&self, database: &str) -> Result<(), SessionError> {
        let catalog = self
            .ctx
            .catalog(CATALOG)
            .expect("the engine's catalog exists");
        if catalog.schema(database).is_none() {
            return Err(SessionError::NoSuchDatabase(database.to_owned()));
        }
        let state = self.ctx.state_ref();
        let mut state = state.write();
        state.config_mut().options_mut().catalog.default_schema = database.to_owned();
        self.bind_views(&mut state);
        Ok(())
    }

    /// Gives `state` the session's catalog list, its temporary views over the state's
    /// current database (where unqualified names resolve).
    fn bind_views(&self, state: &mut SessionState) {
        bind_views(state, &self.engine_catalogs, &self.views);
    }

    /// `CREATE [OR REPLACE] TEMPORARY VIEW`, planned: the view, the session's alone.
    pub fn create_temporary_view(&self, view: &CreateView) -> datafusion::error::Result<()> {
        let name = match &view.name {
            datafusion::common::TableReference::Bare { table } => table.to_string(),
            other => {
                return Err(DataFusionError::Plan(format!(
                    "a temporary view belongs to the session, not to a database: name it \
                     without one ('{}', not '{other}')",
                    other.table()
                )))
            }
        };
        let input = (*view.input).clone();
        let mut seen = HashSet::new();
        for field in input.schema().fields() {
            if !seen.insert(field.name().as_str()) {
                return Err(DataFusionError::Plan(format!(
                    "the temporary view '{name}' would have two columns named '{}'; \
                     give them different names (AS)",
                    field.name()
                )));
            }
        }
        let input = crate::warehouse::ddl::view_typed_as_its_rows(&self.ctx.state(), input)?;
        let table = Arc::new(ViewTable::new(input, view.definition.clone()));
        self.views.create(&name, table, view.or_replace)
    }

    /// `DROP VIEW v` of a temporary view; false if the session has none of that name.
    pub fn drop_temporary_view(&self, name: &str) -> bool {
        self.views.remove(name)
    }

    /// The session's temporary view `name`.
    pub fn temporary_view(
        &self,
        name: &str,
    ) -> Option<Arc<dyn datafusion::catalog::TableProvider>> {
        self.views.get(name)
    }

    /// The names of the session's temporary views, sorted.
    pub fn temporary_view_names(&self) -> Vec<String> {
        self.views.names()
    }

    /// `SET key=value`: [`Session::apply`]ed, and remembered for `RESET`.
    pub fn set(&self, key: &str, value: &str) -> Result<(), SessionError> {
        self.apply(key, value)?;
        let mut set = self.lock_set_since_open();
        set.retain(|(k, _)| k != key);
        set.push((key.to_owned(), value.to_owned()));
        Ok(())
    }

    /// `RESET` (every setting) or `RESET key`, as Spark's and Hive's: the settings go back to
    /// those the session was opened with (its client's configuration, a JDBC URL's or
    /// beeline's `--hiveconf`), those `SET` since replayed but for `key`. The current
    /// database stays.
    pub fn reset(&self, key: Option<&str>) -> Result<(), SessionError> {
        let replayed = {
            let mut set = self.lock_set_since_open();
            match key {
                Some(key) => set.retain(|(k, _)| k != key),
                None => set.clear(),
            }
            set.clone()
        };
        {
            let state = self.ctx.state_ref();
            let mut state = state.write();
            let database = state.config().options().catalog.default_schema.clone();
            *state.config_mut().options_mut() = ConfigOptions::clone(&self.opened_options);
            state.config_mut().options_mut().catalog.default_schema = database;
            remake_configured_functions(&mut state).map_err(|reason| SessionError::BadSetting {
                key: key.unwrap_or("RESET").to_owned(),
                reason,
            })?;
            self.bind_views(&mut state);
        }
        *self.lock_settings() = self.opened_settings.clone();
        for (key, value) in replayed {
            self.apply(&key, &value)?;
        }
        Ok(())
    }

    /// Sets a value: `datafusion.*` keys change DataFusion's settings (a bad value is an
    /// error), the session's time zone under any of its keys too
    /// ([`time_zones::SESSION_ZONE_KEYS`]); any other key is kept for `SET` to show.
    fn apply(&self, key: &str, value: &str) -> Result<(), SessionError> {
        if let Some((datafusion_key, datafusion_value)) = datafusion_setting(key, value)? {
            let state = self.ctx.state_ref();
            let mut state = state.write();
            set_datafusion(&mut state, key, &datafusion_key, &datafusion_value)?;
            remember_zone(&mut state, key, value, &datafusion_value);
            // `datafusion.catalog.default_schema` is the current database.
            self.bind_views(&mut state);
        }
        if !key.starts_with(DATAFUSION_PREFIX) {
            self.lock_settings()
                .insert(key.to_owned(), value.to_owned());
        }
        Ok(())
    }

    /// The context one statement runs in: the session's own, or with a statement's
    /// `confOverlay` a copy of it carrying the overlay's `datafusion.*` settings and time
    /// zone (a bad value is an error), for that statement only: it is planned, and a query
    /// run, in the copy, while DDL and `SET` still change the session itself. Other keys
    /// concern nothing the engine reads and are left out.
    pub fn statement_context(
        &self,
        overlay: &BTreeMap<String, String>,
    ) -> Result<SessionContext, SessionError> {
        let mut settings = Vec::new();
        for (key, value) in overlay {
            if let Some(setting) = datafusion_setting(key, value)? {
                settings.push((key, value, setting));
            }
        }
        if settings.is_empty() {
            return Ok(self.ctx.clone());
        }
        let mut state = self.ctx.state();
        for (key, value, (datafusion_key, datafusion_value)) in settings {
            set_datafusion(&mut state, key, &datafusion_key, &datafusion_value)?;
            remember_zone(&mut state, key, value, &datafusion_value);
        }
        self.bind_views(&mut state);
        Ok(SessionContext::new_with_state(state))
    }

    /// The statement with Hive's variable references resolved from the session's settings
    /// ([`crate::variables`]): `${name}` and `${hivevar:name}` from beeline's `--hivevar`, a
    /// JDBC URL's `#name=value` (both arrive as bare keys) or `SET hivevar:name=...`;
    /// `${hiveconf:key}` from any setting, DataFusion's included.
    pub fn substitute_variables<'a>(&self, sql: &'a str) -> Result<Cow<'a, str>, SessionError> {
        let off = || {
            self.get(variables::SUBSTITUTE_KEY)
                .is_some_and(|value| value.trim().eq_ignore_ascii_case("false"))
        };
        if !sql.contains("${") || off() {
            return Ok(Cow::Borrowed(sql));
        }
        variables::substitute(sql, |name| {
            if let Some(key) = name.strip_prefix("hivevar:") {
                self.get(name).or_else(|| self.get(key))
            } else if let Some(key) = name.strip_prefix("hiveconf:") {
                self.get(key).or_else(|| self.get(name))
            } else if name.starts_with("env:") || name.starts_with("system:") {
                None
            } else {
                self.get(&format!("hivevar:{name}"))
                    .or_else(|| self.get(name))
            }
        })
        .map_err(SessionError::Substitution)
    }

    /// The value of one setting, DataFusion's or the session's; the session's time zone under
    /// any of its keys.
    pub fn get(&self, key: &str) -> Option<String> {
        if key.starts_with(DATAFUSION_PREFIX) {
            self.datafusion_settings()
                .into_iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v)
        } else if let Some(value) = self.lock_settings().get(key) {
            Some(value.clone())
        } else if time_zones::is_session_zone_key(key) {
            // Set under another of its keys, or not at all: the zone in force.
            Some(
                self.get(TIME_ZONE_KEY)
                    .filter(|zone| !zone.is_empty())
                    .unwrap_or_else(|| "UTC".to_owned()),
            )
        } else {
            None
        }
    }

    /// Every setting: the session's, then DataFusion's, each sorted by key.
    pub fn all_settings(&self) -> Vec<(String, String)> {
        let mut all: Vec<(String, String)> = self
            .lock_settings()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        all.extend(self.datafusion_settings());
        all
    }

    fn datafusion_settings(&self) -> Vec<(String, String)> {
        let state = self.ctx.state_ref();
        let state = state.read();
        let mut entries: Vec<(String, String)> = state
            .config()
            .options()
            .entries()
            .into_iter()
            .filter(|entry| entry.key.starts_with(DATAFUSION_PREFIX))
            .map(|entry| (entry.key, entry.value.unwrap_or_default()))
            .collect();
        entries.sort();
        entries
    }

    fn lock_settings(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.settings
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn lock_set_since_open(&self) -> std::sync::MutexGuard<'_, Vec<(String, String)>> {
        self.set_since_open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn lock_operations(&self) -> std::sync::MutexGuard<'_, HashSet<HandleId>> {
        self.operations
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records an operation as the session's.
    pub fn add_operation(&self, id: HandleId) {
        self.lock_operations().insert(id);
    }

    /// Forgets a closed operation.
    pub fn remove_operation(&self, id: &HandleId) {
        self.lock_operations().remove(id);
    }

    /// The session's open operations.
    pub fn operation_ids(&self) -> Vec<HandleId> {
        self.lock_operations().iter().copied().collect()
    }

    /// Records an `ADD JAR|FILE|ARCHIVE` resource (`kind` `jar`, `file` or `archive`);
    /// false if it was added already.
    pub fn add_resource(&self, kind: &str, path: &str) -> bool {
        let mut resources = self.resources.lock().unwrap_or_else(|p| p.into_inner());
        let entry = (kind.to_owned(), path.to_owned());
        if resources.contains(&entry) {
            return false;
        }
        resources.push(entry);
        true
    }

    /// Forgets resources of `kind` (`DELETE JAR path`); every one of them with no paths.
    pub fn delete_resources(&self, kind: &str, paths: &[String]) {
        let mut resources = self.resources.lock().unwrap_or_else(|p| p.into_inner());
        resources.retain(|(k, p)| k != kind || !(paths.is_empty() || paths.contains(p)));
    }

    /// The resources of `kind` added, in order.
    pub fn resources(&self, kind: &str) -> Vec<String> {
        let resources = self.resources.lock().unwrap_or_else(|p| p.into_inner());
        resources
            .iter()
            .filter(|(k, _)| k == kind)
            .map(|(_, p)| p.clone())
            .collect()
    }
}

/// All open sessions of the engine, and what they share.
pub struct SessionManager {
    /// What every session starts from: the engine's catalogs and defaults, DataFusion's
    /// functions and Hive's. Built once: registering some 400 functions and their aliases
    /// for each OpenSession cost more than the rest of opening a session.
    template: SessionState,
    sessions: DashMap<HandleId, Arc<Session>>,
}

impl SessionManager {
    /// A manager whose sessions share `catalogs` and start in `time_zone` (DataFusion's
    /// setting, [`time_zones::session_setting`]; None: UTC).
    pub fn new(catalogs: Arc<dyn CatalogProviderList>, time_zone: Option<&str>) -> Self {
        // No cache of directory listings: files another engine writes into a table (a
        // warehouse table, a configured location) are seen at the next statement.
        let runtime = RuntimeEnvBuilder::new()
            .with_cache_manager(CacheManagerConfig::default().with_list_files_cache_limit(0))
            .with_object_store_registry(Arc::new(SchemeObjectStoreRegistry::new()))
            .build_arc()
            .expect("a runtime with default pools and disk manager builds");
        Self {
            template: session_template(catalogs, runtime, time_zone),
            sessions: DashMap::new(),
        }
    }

    /// The engine's catalog list.
    pub fn catalogs(&self) -> &Arc<dyn CatalogProviderList> {
        self.template.catalog_list()
    }

    /// A DataFusion context over the engine's catalog with the engine's defaults, for a
    /// session or for the engine's own work at start.
    pub fn new_context(&self) -> SessionContext {
        SessionContext::new_with_state(self.template.clone())
    }

    /// Opens a session with the client's normalised configuration: `datafusion.*` keys
    /// change DataFusion's settings, others are kept; the database must exist.
    pub fn open(
        &self,
        user: String,
        connection_id: u64,
        conf: &SessionConf,
    ) -> Result<Arc<Session>, SessionError> {
        let mut state = self.template.clone();
        if let Some(identity) = state
            .config_mut()
            .options_mut()
            .extensions
            .get_mut::<functions::SessionUser>()
        {
            identity.name = user.clone();
        }
        let views = Arc::new(TemporaryViews::default());
        let engine_catalogs = Arc::clone(self.template.catalog_list());
        bind_views(&mut state, &engine_catalogs, &views);
        let mut session = Session {
            id: HandleId::new(),
            user,
            connection_id,
            ctx: SessionContext::new_with_state(state),
            settings: Mutex::new(BTreeMap::new()),
            operations: Mutex::new(HashSet::new()),
            views,
            engine_catalogs,
            resources: Mutex::new(Vec::new()),
            opened_options: Arc::default(),
            opened_settings: BTreeMap::new(),
            set_since_open: Mutex::new(Vec::new()),
        };
        for (key, value) in &conf.settings {
            session.apply(key, value)?;
        }
        if let Some(database) = &conf.database {
            session.use_database(database)?;
        }
        session.opened_options = Arc::clone(session.ctx.state_ref().read().config().options());
        let opened_settings = session.lock_settings().clone();
        session.opened_settings = opened_settings;
        let session = Arc::new(session);
        self.sessions.insert(session.id, Arc::clone(&session));
        Ok(session)
    }

    /// The open session with this handle.
    pub fn get(&self, id: &HandleId) -> Option<Arc<Session>> {
        self.sessions.get(id).map(|entry| Arc::clone(entry.value()))
    }

    /// Removes a session; its operations are the caller's to close.
    pub fn remove(&self, id: &HandleId) -> Option<Arc<Session>> {
        self.sessions.remove(id).map(|(_, session)| session)
    }

    /// The sessions opened on one binary connection.
    pub fn opened_on(&self, connection_id: u64) -> Vec<HandleId> {
        self.sessions
            .iter()
            .filter(|entry| entry.value().connection_id == connection_id)
            .map(|entry| *entry.key())
            .collect()
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether no session is open.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }
}

/// Gives `state` a session's catalog list: the engine's `catalogs` with the session's
/// temporary `views` over the state's current database (where unqualified names resolve).
fn bind_views(
    state: &mut SessionState,
    catalogs: &Arc<dyn CatalogProviderList>,
    views: &Arc<TemporaryViews>,
) {
    let database = state.config().options().catalog.default_schema.clone();
    state.register_catalog_list(Arc::new(SessionCatalogList::new(
        Arc::clone(catalogs),
        Arc::clone(views),
        database,
    )));
}

/// The DataFusion setting a session key changes, if any: a `datafusion.*` key itself, and
/// the session's time zone under any of its keys as DataFusion's `execution.time_zone`,
/// written as DataFusion reads it (a zone that is none is an error).
fn datafusion_setting(key: &str, value: &str) -> Result<Option<(String, String)>, SessionError> {
    if time_zones::is_session_zone_key(key) {
        let zone =
            time_zones::session_setting(value).map_err(|reason| SessionError::BadSetting {
                key: key.to_owned(),
                reason,
            })?;
        return Ok(Some((TIME_ZONE_KEY.to_owned(), zone)));
    }
    Ok(key
        .starts_with(DATAFUSION_PREFIX)
        .then(|| (key.to_owned(), value.to_owned())))
}

/// After `key` set the session's zone to `setting`: the zone as written, which
/// `current_timezone()` repeats ([`time_zones::ZoneAsWritten`]).
fn remember_zone(state: &mut SessionState, key: &str, written: &str, setting: &str) {
    if !time_zones::is_session_zone_key(key) {
        return;
    }
    let extensions = &mut state.config_mut().options_mut().extensions;
    if let Some(zone) = extensions.get_mut::<time_zones::ZoneAsWritten>() {
        zone.written = written.trim().to_owned();
        zone.setting = setting.to_owned();
    }
}

/// DataFusion's key for the session's time zone.
const TIME_ZONE_KEY: &str = "datafusion.execution.time_zone";

/// Sets one of DataFusion's settings in `state`, as DataFusion's own `SET` does: the
/// functions that read a setting when they are made (`to_timestamp_seconds`'s zone) are
/// made again. `key` is the one the user gave, for the error.
fn set_datafusion(
    state: &mut SessionState,
    key: &str,
    datafusion_key: &str,
    value: &str,
) -> Result<(), SessionError> {
    let bad = |reason: String| SessionError::BadSetting {
        key: key.to_owned(),
        reason,
    };
    state
        .config_mut()
        .options_mut()
        .set(datafusion_key, value)
        .map_err(|e| bad(e.strip_backtrace()))?;
    remake_configured_functions(state).map_err(bad)
}

/// Makes again the functions that read a setting when they are made, after `state`'s
/// settings changed.
fn remake_configured_functions(state: &mut SessionState) -> Result<(), String> {
    let options = state.config().options();
    let remade: Vec<_> = state
        .scalar_functions()
        .values()
        .filter_map(|udf| udf.inner().with_updated_config(options))
        .collect();
    for udf in remade {
        state
            .register_udf(Arc::new(udf))
            .map_err(|e| e.strip_backtrace())?;
    }
    Ok(())
}

/// The state sessions start from: the engine's defaults over `catalogs`, with DataFusion's
/// functions and Hive's, and Hive's expression planners ahead of DataFusion's.
fn session_template(
    catalogs: Arc<dyn CatalogProviderList>,
    runtime: Arc<RuntimeEnv>,
    time_zone: Option<&str>,
) -> SessionState {
    let mut config = SessionConfig::new()
        .with_option_extension(functions::SessionUser::default())
        .with_option_extension(time_zones::ZoneAsWritten::default())
        .with_information_schema(true)
        .with_default_catalog_and_schema(CATALOG, DEFAULT_DATABASE)
        .with_create_default_catalog_and_schema(false)
        // Hive and Spark sort NULL as the smallest value: first in ascending order, last in
        // descending (DataFusion's default is Postgres's, the other way round).
        .set_str("datafusion.sql_parser.default_null_ordering", "nulls_min")
        // An ordered subquery keeps its order, for the query's rows and for the aggregates
        // that read rows in order (hive_syntax::OrderedSubqueries), as in Hive and Spark;
        // DataFusion dropped a subquery's ORDER BY without a LIMIT.
        .set_bool(
            "datafusion.sql_parser.enable_subquery_sort_elimination",
            false,
        );
    crate::warehouse::catalog::read_int96_as_moments(&mut config.options_mut().execution.parquet);
    if let Some(zone) = time_zone {
        config = config.set_str(TIME_ZONE_KEY, zone);
    }
    let mut analyzer_rules = spark_casts::analyzer_rules();
    // First: every later rule, type coercion's included, sees Spark's `INT` literals.
    analyzer_rules.insert(0, Arc::new(hive_syntax::IntegerLiterals));
    let mut builder = SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(runtime)
        .with_catalog_list(catalogs)
        .with_default_features()
        .with_analyzer_rules(analyzer_rules)
        .with_analyzer_rule(Arc::new(hive_syntax::HIVE_INTEGER_CASTS))
        .with_analyzer_rule(Arc::new(hive_syntax::MultisetOperations))
        .with_analyzer_rule(Arc::new(hive_syntax::OrderedSubqueries))
        .with_analyzer_rule(Arc::new(spark_casts::SPARK_DECIMAL_CASTS))
        .with_analyzer_rule(Arc::new(spark_casts::SPARK_STRING_DECIMAL_CASTS))
        .with_analyzer_rule(Arc::new(spark_casts::SPARK_TEXT_CASTS))
        .with_analyzer_rule(Arc::new(spark_casts::SPARK_DOUBLE_CASTS))
        .with_analyzer_rule(Arc::new(time_zones::SESSION_MOMENT_CASTS))
        .with_analyzer_rule(Arc::new(time_zones::SESSION_MOMENT_FIELDS))
        .with_analyzer_rule(Arc::new(spark_casts::SPARK_DATETIME_CASTS))
        .with_analyzer_rule(Arc::new(spark_casts::SPARK_EPOCH_CASTS))
        .with_analyzer_rule(Arc::new(hive_functions::nested_extremes::NESTED_EXTREMES))
        .with_type_planner(Arc::new(hive_syntax::map_types::MapTypes));
    // Hive's meanings first: the first planner that plans an expression wins.
    let planners = builder.expr_planners().get_or_insert_with(Vec::new);
    planners.splice(0..0, hive_syntax::expr_planners());
    planners.insert(0, Arc::new(spark_casts::StringOperands));
    let ctx = SessionContext::new_with_state(builder.build());
    functions::register(&ctx);
    hive_functions::register(&ctx);
    for udaf in spark_casts::null_numbers::aggregates() {
        ctx.register_udaf(udaf);
    }
    spark_casts::argument_casts::register(&ctx);
    spark_casts::integer_ranks::register(&ctx);
    spark_aggregates::register(&ctx);
    ctx.state()
}

#[cfg(test)]
mod tests;
