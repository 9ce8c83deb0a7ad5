//! Statements: the Hive commands beeline users type, answered here, and everything else
//! planned by DataFusion.
//!
//! HiveServer2 users type `USE db`, `SHOW DATABASES`, `SHOW TABLES IN db`, `SET k=v`,
//! `CREATE DATABASE`, `DESCRIBE FORMATTED t`, `DESCRIBE FUNCTION f`, `SHOW VIEWS`,
//! `SHOW COLUMNS IN t`, `SHOW FUNCTIONS`, `SHOW CREATE TABLE t`, `SHOW TBLPROPERTIES t`,
//! `SHOW PARTITIONS t`, `SHOW TABLE EXTENDED LIKE 'p'`, `DESCRIBE t PARTITION (...)`; ETL
//! scripts run `ANALYZE TABLE t COMPUTE STATISTICS`, `ADD JAR x`, `LIST JARS`, `CREATE
//! FUNCTION f AS 'class'` ([`resources`]), and Spark's `CACHE TABLE`, `UNCACHE TABLE` and
//! `REFRESH TABLE` ([`caching`]). DataFusion knows some of them under other
//! names (a database is a schema), some not at all. [`plan`] recognises those from the
//! statement's first words, answers them itself or rewrites them for DataFusion, and
//! hands everything else to DataFusion's planner untouched.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionState;
use datafusion::logical_expr::{CreateView, DdlStatement, LogicalPlan};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

use crate::time_zones;
use crate::words::Words;

use datafusion::catalog::{SchemaProvider, TableProvider};
use datafusion::common::TableReference;
use datafusion::datasource::listing::ListingTable;
use datafusion::datasource::TableType;

use crate::catalog::{self, CATALOG};
use crate::hive_syntax;
use crate::session::{temporary, Session};
use crate::types;
use crate::warehouse::{self, ddl::WarehouseCommand};

/// A statement ready to execute: planning errors have already been reported.
#[derive(Debug)]
pub enum Planned {
    /// A Hive command Kumiho answers itself.
    Command(HiveCommand),
    /// A DataFusion logical plan (DDL and DML run when executed, not when planned).
    Plan(LogicalPlan),
}

/// The Hive commands answered without DataFusion's planner.
#[derive(Debug, PartialEq, Eq)]
pub enum HiveCommand {
    /// `USE db`.
    Use(String),
    /// `SHOW DATABASES|SCHEMAS [[LIKE] 'pattern']`.
    ShowDatabases(Option<String>),
    /// `SHOW CATALOGS [[LIKE] 'pattern']`: Spark's one column `catalog`, the engine's one
    /// catalog (as GetCatalogs lists it).
    ShowCatalogs(Option<String>),
    /// `SHOW TABLES [IN|FROM db] [[LIKE] 'pattern']`.
    ShowTables {
        database: Option<String>,
        pattern: Option<String>,
    },
    /// `SET` (every value), `SET k` (one value), `SET k=v`.
    Set(SetCommand),
    /// `RESET` (every setting) or `RESET k`: back to the settings the session was opened
    /// with ([`Session::reset`]).
    Reset(Option<String>),
    /// `CREATE DATABASE|SCHEMA [IF NOT EXISTS] db ...` (comments and locations ignored).
    CreateDatabase { name: String, if_not_exists: bool },
    /// `DESCRIBE|DESC [EXTENDED|FORMATTED] [TABLE] [[catalog.]db.]table`: Hive's columns
    /// `col_name`, `data_type` (Hive type names), `comment`; EXTENDED and FORMATTED add,
    /// as the Spark Thrift Server does, a blank row and `# Detailed Table Information`
    /// rows (catalog, database, table, type, and a view's text or the files' format and
    /// location).
    /// With a PARTITION clause (`DESCRIBE FORMATTED t PARTITION (dt='x')`), a warehouse
    /// table's partition: its columns, and when detailed its values, location and
    /// parameters instead of the table's details.
    Describe {
        table: Vec<String>,
        detailed: bool,
        partition: Vec<(String, String)>,
    },
    /// `DESCRIBE|DESC [EXTENDED|FORMATTED] [TABLE] table column`: the `DESCRIBE` row of one
    /// column.
    DescribeColumn { table: Vec<String>, column: String },
    /// `DESCRIBE|DESC DATABASE|SCHEMA [EXTENDED] db`: Hive's columns `db_name`, `comment`,
    /// `location`, `owner_name`, `owner_type`, `parameters`; a database of this engine has
    /// only its name.
    DescribeDatabase(String),
    /// `DESCRIBE|DESC FUNCTION [EXTENDED] name`: Hive's one column `tab_name`, the
    /// function's usage (`name(args) - what it does`), with its SQL example when EXTENDED.
    DescribeFunction { name: String, extended: bool },
    /// `SHOW CREATE TABLE [[catalog.]db.]table`: Hive's one column `createtab_stmt`, the
    /// statement one line per row: a view's own definition, a table's columns in Hive types
    /// and, for files, their format and location.
    ShowCreateTable(Vec<String>),
    /// `SHOW VIEWS [IN|FROM db] [[LIKE] 'pattern']`: Hive's one column `tab_name`, the views
    /// alone (Superset lists a database's views so).
    ShowViews {
        database: Option<String>,
        pattern: Option<String>,
    },
    /// `SHOW COLUMNS FROM|IN [[catalog.]db.]table [FROM|IN db] [LIKE 'pattern']`: Hive's one
    /// column `field`, the column names in table order.
    ShowColumns {
        table: Vec<String>,
        pattern: Option<String>,
    },
    /// `SHOW FUNCTIONS [[LIKE] 'pattern']`: Hive's one column `tab_name`, the names (aliases
    /// included) of the session's functions, sorted.
    ShowFunctions(Option<String>),
    /// `SHOW TBLPROPERTIES table [('key')]`: Hive's columns `prpt_name`, `prpt_value`
    /// ([`table_info`]).
    ShowTblProperties {
        table: Vec<String>,
        key: Option<String>,
    },
    /// `SHOW PARTITIONS table [PARTITION (col='value', ...)]`: Hive's one column
    /// `partition`, `col=value/col2=value2` per partition ([`table_info`]).
    ShowPartitions {
        table: Vec<String>,
        spec: Vec<(String, String)>,
    },
    /// `SHOW TABLE EXTENDED [IN|FROM db] LIKE 'pattern' [PARTITION (...)]`: Hive's one
    /// column `tab_name`, a block of `key:value` lines per table ([`table_info`]).
    ShowTableExtended {
        database: Option<String>,
        pattern: String,
        partition: Vec<(String, String)>,
    },
    /// `ANALYZE TABLE t [PARTITION (...)] COMPUTE STATISTICS [NOSCAN | FOR COLUMNS ...]`
    /// ([`warehouse::properties::analyze`]).
    Analyze {
        table: Vec<String>,
        partition: Option<warehouse::ddl::PartitionSpec>,
        mode: warehouse::properties::AnalyzeMode,
    },
    /// `ADD JAR|FILE|ARCHIVE path ...` ([`resources`]).
    AddResources { kind: String, paths: Vec<String> },
    /// `LIST JARS|FILES|ARCHIVES [path ...]`: Hive's one column `resource`.
    ListResources { kind: String, paths: Vec<String> },
    /// `DELETE JAR|FILE|ARCHIVE [path ...]`.
    DeleteResources { kind: String, paths: Vec<String> },
    /// `CREATE [TEMPORARY] FUNCTION f AS 'class' ...`: refused, a Java UDF.
    JavaFunction { name: String, class: String },
    /// `DROP [TEMPORARY] FUNCTION [IF EXISTS] f`.
    DropFunction(String),
    /// A statement over the engine's warehouse (`CREATE TABLE`, `INSERT`, ...;
    /// [`crate::warehouse`]).
    Warehouse(Box<WarehouseCommand>),
    /// `CREATE [OR REPLACE] TEMPORARY VIEW v AS ...`, planned: a view of the session alone
    /// ([`crate::session::temporary`]).
    CreateTemporaryView(CreateView),
    /// `DROP VIEW [IF EXISTS] v` of one of the session's temporary views.
    DropTemporaryView(String),
    /// Spark's `CACHE TABLE`, `UNCACHE TABLE`, `CLEAR CACHE` and `REFRESH`
    /// ([`caching`]).
    Cache(caching::CacheStatement),
}

#[derive(Debug, PartialEq, Eq)]
pub enum SetCommand {
    ShowAll,
    Show(String),
    Assign(String, String),
}

/// The outcome of executing a planned statement.
pub enum Executed {
    /// Rows computed already (Hive commands, DDL, DML counts); small by nature.
    Rows(SchemaRef, Vec<RecordBatch>),
    /// A statement with no result set.
    NoResult,
    /// A statement with no result set that wrote rows (a warehouse INSERT or CTAS): the
    /// operation's modified-row count.
    Written(u64),
    /// A statement with no result set, and lines for the operation log: what it did, or
    /// accepted without doing, that the client should hear of (beeline prints them).
    Noted(Vec<String>),
}

impl Planned {
    /// Whether the statement produces a result set for the client to fetch: queries and
    /// listings do; DDL, DML and session commands do not (HiveServer2 answers `INSERT` with
    /// no result set, beeline then prints "No rows affected").
    pub fn has_result_set(&self) -> bool {
        match self {
            Planned::Command(HiveCommand::Use(_))
            | Planned::Command(HiveCommand::CreateDatabase { .. })
            | Planned::Command(HiveCommand::Warehouse(_))
            | Planned::Command(HiveCommand::CreateTemporaryView(_))
            | Planned::Command(HiveCommand::DropTemporaryView(_))
            | Planned::Command(HiveCommand::Analyze { .. })
            | Planned::Command(HiveCommand::AddResources { .. })
            | Planned::Command(HiveCommand::DeleteResources { .. })
            | Planned::Command(HiveCommand::JavaFunction { .. })
            | Planned::Command(HiveCommand::DropFunction(_))
            | Planned::Command(HiveCommand::Cache(_))
            | Planned::Command(HiveCommand::Set(SetCommand::Assign(..)))
            | Planned::Command(HiveCommand::Reset(_)) => false,
            Planned::Command(_) => true,
            Planned::Plan(plan) => !is_side_effect(plan),
        }
    }
}

/// Whether a plan changes something when run (so it must run once, not once per
/// FETCH_FIRST) rather than only read.
pub fn is_side_effect(plan: &LogicalPlan) -> bool {
    matches!(
        plan,
        LogicalPlan::Ddl(_)
            | LogicalPlan::Dml(_)
            | LogicalPlan::Copy(_)
            | LogicalPlan::Statement(_)
    )
}

/// Plans a statement in the context it runs in ([`Session::statement_context`]): a Hive
/// command, or DataFusion's logical plan.
pub async fn plan(context: &SessionContext, sql: &str) -> Result<Planned> {
    let sql = trim_statement(sql);
    // SET's value is raw text in Hive; elsewhere `\'` is a quote in a string literal and
    // DIV an operator.
    let sql = if set_value(sql).is_some() {
        sql.into()
    } else {
        hive_syntax::rewrite_text(sql)
    };
    let sql = hive_syntax::trim_spaces::rewrite(sql);
    let sql = sql.as_ref();
    let cached_view;
    let sql = match caching::recognise(sql) {
        Some(caching::Recognised::Command(statement)) => {
            return Ok(Planned::Command(HiveCommand::Cache(statement)))
        }
        Some(caching::Recognised::TemporaryView(view)) => {
            cached_view = view;
            cached_view.as_str()
        }
        None => sql,
    };
    if let Some(name) = temporary::dropped_view(context, sql) {
        return Ok(Planned::Command(HiveCommand::DropTemporaryView(name)));
    }
    if let Some(error) = temporary::written_view(context, sql) {
        return Err(error);
    }
    if let Some(command) = warehouse::ddl::recognise(context, sql).await? {
        return Ok(Planned::Command(HiveCommand::Warehouse(Box::new(command))));
    }
    if let Some((sql, global)) = warehouse::ddl::temporary_view(sql) {
        if global {
            // Spark's global temporary views: DataFusion's views in the engine's memory.
            let catalogs = temporary::session_catalogs(context).0;
            catalog::ensure_database(&catalogs, warehouse::ddl::GLOBAL_TEMP_DATABASE)?;
            return Ok(Planned::Plan(logical_plan(context, &sql).await?));
        }
        return match logical_plan(context, &sql).await? {
            LogicalPlan::Ddl(DdlStatement::CreateView(view)) => {
                Ok(Planned::Command(HiveCommand::CreateTemporaryView(view)))
            }
            other => Err(DataFusionError::Internal(format!(
                "CREATE TEMPORARY VIEW planned as {}",
                other.display()
            ))),
        };
    }
    if let Some(command) = recognise(sql)? {
        return Ok(match command {
            Recognised::Command(command) => Planned::Command(command),
            Recognised::Rewritten(sql) => Planned::Plan(logical_plan(context, &sql).await?),
        });
    }
    Ok(Planned::Plan(logical_plan(context, sql).await?))
}

/// DataFusion's plan of a statement, its Hive-only syntax rewritten first
/// ([`hive_syntax::rewrite`]).
async fn logical_plan(context: &SessionContext, sql: &str) -> Result<LogicalPlan> {
    let state = context.state();
    let statement = hive_syntax::parse_statement(&state, sql)?;
    plan_statement(&state, statement).await
}

/// DataFusion's plan of a parsed statement, its Hive-only syntax rewritten first
/// ([`hive_syntax::rewrite`]), and planned again where the first plan is not the answer:
/// `explode(x)` of a select list is planned as an array's and, should that fail, as a
/// map's ([`hive_syntax::rewrite_exploding_maps`]); `inline(x)` without an alias list is
/// named by its structs' fields, which the first plan finds ([`hive_syntax::inline_fields`]).
pub async fn plan_statement(
    state: &SessionState,
    statement: datafusion::sql::parser::Statement,
) -> Result<LogicalPlan> {
    let mut rewritten = statement.clone();
    hive_syntax::rewrite(&mut rewritten)?;
    let error = match state.statement_to_plan(rewritten).await {
        Ok(plan) => {
            let fields = hive_syntax::inline_fields(&plan)?;
            if fields.is_empty() {
                return Ok(plan);
            }
            let mut statement = statement;
            hive_syntax::rewrite_naming_inline_fields(&mut statement, fields)?;
            return state.statement_to_plan(statement).await;
        }
        Err(error) => error,
    };
    let mut statement = statement;
    if !hive_syntax::rewrite_exploding_maps(&mut statement)? {
        return Err(error);
    }
    state.statement_to_plan(statement).await.map_err(|_| error)
}

/// Runs a Hive command against the session and the engine's catalog.
pub async fn run_command(session: &Session, command: &HiveCommand) -> Result<Executed> {
    match command {
        HiveCommand::Use(database) => {
            session
                .use_database(database)
                .map_err(|e| DataFusionError::Plan(e.to_string()))?;
            Ok(Executed::NoResult)
        }
        HiveCommand::ShowCatalogs(pattern) => {
            let mut names = session.context().catalog_names();
            names.sort();
            string_rows("catalog", matching(names, pattern))
        }
        HiveCommand::ShowDatabases(pattern) => {
            let catalogs = session.context().state().catalog_list().clone();
            let names = matching(catalog::database_names(catalogs.as_ref()), pattern);
            string_rows("database_name", names)
        }
        // The session's temporary views are listed in every database, as Spark lists them
        // (Spark marks them `isTemporary`; Hive's one column cannot).
        HiveCommand::ShowTables { database, pattern } => {
            let schema = database_schema(session, database.as_deref())?;
            let mut names = matching(schema.table_names(), pattern);
            names.extend(matching(session.temporary_view_names(), pattern));
            names.sort();
            names.dedup();
            string_rows("tab_name", names)
        }
        HiveCommand::ShowViews { database, pattern } => {
            let schema = database_schema(session, database.as_deref())?;
            let mut views = Vec::new();
            for name in matching(schema.table_names(), pattern) {
                if schema.table_type(&name).await? == Some(TableType::View) {
                    views.push(name);
                }
            }
            views.extend(matching(session.temporary_view_names(), pattern));
            views.sort();
            views.dedup();
            string_rows("tab_name", views)
        }
        HiveCommand::CreateTemporaryView(view) => {
            session.create_temporary_view(view)?;
            Ok(Executed::NoResult)
        }
        HiveCommand::DropTemporaryView(name) => {
            session.drop_temporary_view(name);
            Ok(Executed::NoResult)
        }
        HiveCommand::Set(SetCommand::ShowAll) => {
            let lines = session
                .all_settings()
                .into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            string_rows("set", lines)
        }
        HiveCommand::Set(SetCommand::Show(key)) => {
            let line = match session.get(key) {
                Some(value) => format!("{key}={value}"),
                None => format!("{key} is undefined"),
            };
            string_rows("set", vec![line])
        }
        HiveCommand::Set(SetCommand::Assign(key, value)) => {
            session
                .set(key, value)
                .map_err(|e| DataFusionError::Plan(e.to_string()))?;
            Ok(Executed::NoResult)
        }
        HiveCommand::Reset(key) => {
            session
                .reset(key.as_deref())
                .map_err(|e| DataFusionError::Plan(e.to_string()))?;
            Ok(Executed::NoResult)
        }
        HiveCommand::CreateDatabase {
            name,
            if_not_exists,
        } => {
            let catalogs = session.context().state().catalog_list().clone();
            let exists = catalog::database_names(catalogs.as_ref()).contains(name);
            if exists && !if_not_exists {
                return Err(DataFusionError::Plan(format!(
                    "database '{name}' already exists"
                )));
            }
            catalog::ensure_database(&catalogs, name)?;
            Ok(Executed::NoResult)
        }
        HiveCommand::Describe {
            table,
            detailed,
            partition,
        } => {
            let provider = table_provider(session, table).await?;
            // A partition's details replace the table's; the partition must exist.
            let partition_rows = match partition.is_empty() {
                true => None,
                false => Some(table_info::partition_details(session, table, partition).await?),
            };
            let schema = provider.schema();
            let mut rows: Vec<[String; 3]> = schema
                .fields()
                .iter()
                .map(|f| {
                    [
                        f.name().clone(),
                        types::type_string(f.data_type()),
                        column_comment(f),
                    ]
                })
                .collect();
            // Spark's section of a partitioned table's partition columns.
            if let Some(listing) = provider.downcast_ref::<ListingTable>() {
                let partitions = &listing.options().table_partition_cols;
                if !partitions.is_empty() {
                    let row = |a: &str, b: &str| [a.to_owned(), b.to_owned(), String::new()];
                    rows.push(row("# Partition Information", ""));
                    rows.push([
                        "# col_name".to_owned(),
                        "data_type".to_owned(),
                        "comment".to_owned(),
                    ]);
                    for (column, data_type) in partitions {
                        rows.push(row(column, &types::type_string(data_type)));
                    }
                }
            }
            if let Some(details) = partition_rows {
                if *detailed {
                    rows.extend(details);
                }
            } else if *detailed {
                let name = qualified(session, table);
                let detail =
                    |key: &str, value: &str| [key.to_owned(), value.to_owned(), String::new()];
                rows.push(detail("", ""));
                rows.push(detail("# Detailed Table Information", ""));
                rows.push(detail("Catalog", CATALOG));
                rows.push(detail("Database", &name[0]));
                rows.push(detail("Table", &name[1]));
                let listing = provider.downcast_ref::<ListingTable>();
                let stored = match is_temporary_view(session, table) {
                    true => None,
                    false => {
                        warehouse::commands::table_meta(session.context(), &name[0], &name[1]).await
                    }
                };
                let kind = match (provider.table_type(), listing, &stored) {
                    (TableType::View, _, _) => "VIEW",
                    (_, _, Some((_, meta))) if meta.kind == warehouse::meta::TableKind::Managed => {
                        "MANAGED"
                    }
                    (_, Some(_), _) => "EXTERNAL",
                    _ => "MANAGED",
                };
                rows.push(detail("Type", kind));
                if let Some(comment) = stored.as_ref().and_then(|(_, meta)| meta.comment.clone()) {
                    rows.push(detail("Comment", &comment));
                }
                if let Some(text) = provider.get_table_definition() {
                    rows.push(detail("View Text", text));
                }
                if let Some(listing) = listing {
                    rows.push(detail("Provider", &listing.options().format.get_ext()));
                    let paths: Vec<&str> =
                        listing.table_paths().iter().map(|p| p.as_str()).collect();
                    rows.push(detail("Location", &paths.join(",")));
                }
                if let Some((warehouse, meta)) = &stored {
                    let name = warehouse::ddl::TableName {
                        database: name[0].clone(),
                        table: name[1].clone(),
                    };
                    let parameters =
                        warehouse::properties::parameters(warehouse, &name, meta, &[]).await?;
                    rows.extend(table_info::parameter_rows("Table Parameters:", parameters));
                }
            }
            let column = |i: usize| rows.iter().map(|row| row[i].clone()).collect();
            string_columns(vec![
                ("col_name", column(0)),
                ("data_type", column(1)),
                ("comment", column(2)),
            ])
        }
        HiveCommand::DescribeColumn { table, column } => {
            let provider = table_provider(session, table).await?;
            let schema = provider.schema();
            let field = schema
                .fields()
                .iter()
                .find(|f| f.name().eq_ignore_ascii_case(column))
                .ok_or_else(|| {
                    DataFusionError::Plan(format!(
                        "column '{column}' does not exist in '{}'; DESCRIBE {} lists its columns",
                        table.join("."),
                        table.join(".")
                    ))
                })?;
            string_columns(vec![
                ("col_name", vec![field.name().clone()]),
                ("data_type", vec![types::type_string(field.data_type())]),
                ("comment", vec![column_comment(field)]),
            ])
        }
        HiveCommand::DescribeDatabase(name) => {
            database_schema(session, Some(name))?;
            let empty = || vec![String::new()];
            let (comment, location) =
                warehouse::commands::database_details(session.context(), name)
                    .await
                    .unwrap_or_default();
            string_columns(vec![
                ("db_name", vec![name.clone()]),
                ("comment", vec![comment]),
                ("location", vec![location]),
                ("owner_name", empty()),
                ("owner_type", empty()),
                ("parameters", empty()),
            ])
        }
        HiveCommand::DescribeFunction { name, extended } => string_rows(
            "tab_name",
            function_usage(session.context(), name, *extended),
        ),
        HiveCommand::ShowCreateTable(parts) => {
            let provider = table_provider(session, parts).await?;
            // Qualified, so that the statement means the same table in any session.
            let name = qualified(session, parts);
            let stored = match is_temporary_view(session, parts) {
                true => None,
                false => {
                    warehouse::commands::table_meta(session.context(), &name[0], &name[1]).await
                }
            };
            if let Some((warehouse, meta)) = stored {
                let name = warehouse::ddl::TableName {
                    database: name[0].clone(),
                    table: name[1].clone(),
                };
                return string_rows(
                    "createtab_stmt",
                    warehouse::commands::create_statement(&name, &warehouse, &meta),
                );
            }
            string_rows("createtab_stmt", create_statement(&name, provider.as_ref()))
        }
        HiveCommand::ShowColumns { table, pattern } => {
            let table = table_provider(session, table).await?;
            let names = table
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            string_rows("field", matching(names, pattern))
        }
        HiveCommand::ShowFunctions(pattern) => {
            let mut names = function_names(session.context());
            names.sort();
            names.dedup();
            string_rows("tab_name", matching(names, pattern))
        }
        HiveCommand::ShowTblProperties { table, key } => {
            table_info::show_tblproperties(session, table, key.as_deref()).await
        }
        HiveCommand::ShowPartitions { table, spec } => {
            table_info::show_partitions(session, table, spec).await
        }
        HiveCommand::ShowTableExtended {
            database,
            pattern,
            partition,
        } => {
            let database = database
                .clone()
                .unwrap_or_else(|| session.current_database());
            table_info::show_table_extended(session, &database, pattern, partition).await
        }
        HiveCommand::Analyze {
            table,
            partition,
            mode,
        } => table_info::analyze(session, table, partition.as_deref(), mode).await,
        HiveCommand::AddResources { kind, paths } => resources::add(session, kind, paths),
        HiveCommand::ListResources { kind, paths } => resources::list(session, kind, paths),
        HiveCommand::DeleteResources { kind, paths } => resources::delete(session, kind, paths),
        HiveCommand::JavaFunction { name, class } => resources::create_function(name, class),
        HiveCommand::DropFunction(name) => resources::drop_function(session, name),
        HiveCommand::Cache(statement) => caching::run(session, statement).await,
        HiveCommand::Warehouse(command) => {
            let outcome = warehouse::commands::run(session.context(), command).await?;
            Ok(match outcome.rows {
                Some(rows) => Executed::Written(rows),
                None if outcome.notes.is_empty() => Executed::NoResult,
                None => Executed::Noted(outcome.notes),
            })
        }
    }
}

/// The database SHOW TABLES and SHOW VIEWS list: the one named, or the current one (its
/// tables, without the session's temporary views).
fn database_schema(session: &Session, database: Option<&str>) -> Result<Arc<dyn SchemaProvider>> {
    let database = database.map_or_else(|| session.current_database(), str::to_owned);
    temporary::engine_catalog(session.context())
        .and_then(|catalog| catalog.schema(&database))
        .ok_or_else(|| {
            DataFusionError::Plan(format!(
                "database '{database}' does not exist; SHOW DATABASES lists those that do"
            ))
        })
}

/// A column's comment (its field's `comment` metadata, as GetColumns reports it), or "".
fn column_comment(field: &Field) -> String {
    field.metadata().get("comment").cloned().unwrap_or_default()
}

/// The lines of `DESCRIBE FUNCTION`: usage and description from the function's
/// documentation, Hive's sentences for a function without one or an unknown name.
fn function_usage(context: &SessionContext, name: &str, extended: bool) -> Vec<String> {
    let state = context.state_ref();
    let state = state.read();
    let documentation = if let Some(f) = state.scalar_functions().get(name) {
        Some(f.documentation())
    } else if let Some(f) = state.aggregate_functions().get(name) {
        Some(f.documentation())
    } else if let Some(f) = state.window_functions().get(name) {
        Some(f.documentation())
    } else if let Some(f) = state.higher_order_functions().get(name) {
        Some(f.documentation())
    } else if state.table_functions().contains_key(name) {
        Some(None)
    } else {
        None
    };
    match documentation {
        None => vec![format!("Function '{name}' does not exist.")],
        Some(None) => vec![format!("There is no documentation for function '{name}'")],
        Some(Some(doc)) => {
            let mut lines = vec![format!("{} - {}", doc.syntax_example, doc.description)];
            if extended {
                if let Some(example) = &doc.sql_example {
                    lines.push("Example:".to_owned());
                    lines.extend(example.lines().map(|line| format!("  {line}")));
                }
            }
            lines
        }
    }
}

/// The lines of `SHOW CREATE TABLE`: a view's definition as it was written; otherwise
/// `CREATE [EXTERNAL] TABLE` with the columns in Hive's types and, for a table over files,
/// their format and location.
fn create_statement(parts: &[String], table: &dyn TableProvider) -> Vec<String> {
    if let Some(definition) = table.get_table_definition() {
        return definition.lines().map(str::to_owned).collect();
    }
    let listing = table.downcast_ref::<ListingTable>();
    let name: Vec<String> = parts.iter().map(|p| format!("`{p}`")).collect();
    let mut lines = vec![format!(
        "CREATE {}TABLE {}(",
        if listing.is_some() { "EXTERNAL " } else { "" },
        name.join(".")
    )];
    let schema = table.schema();
    let count = schema.fields().len();
    for (i, field) in schema.fields().iter().enumerate() {
        let comment = field
            .metadata()
            .get("comment")
            .map(|c| format!(" COMMENT '{}'", c.replace('\'', "\\'")))
            .unwrap_or_default();
        lines.push(format!(
            "  `{}` {}{comment}{}",
            field.name(),
            types::type_string(field.data_type()),
            if i + 1 < count { "," } else { ")" }
        ));
    }
    if count == 0 {
        lines[0].push(')');
    }
    if let Some(listing) = listing {
        lines.push(format!(
            "STORED AS {}",
            listing.options().format.get_ext().to_uppercase()
        ));
        lines.push("LOCATION".to_owned());
        for path in listing.table_paths() {
            lines.push(format!("  '{}'", path.as_str()));
        }
    }
    lines
}

/// Whether `parts` name one of the session's temporary views (an unqualified name).
fn is_temporary_view(session: &Session, parts: &[String]) -> bool {
    matches!(parts, [name] if session.temporary_view(name).is_some())
}

/// A table's database and name: the current database for a bare name, the catalog
/// dropped from a full one.
fn qualified(session: &Session, parts: &[String]) -> Vec<String> {
    match parts {
        [table] => vec![session.current_database(), table.clone()],
        [.., database, table] => vec![database.clone(), table.clone()],
        [] => Vec::new(),
    }
}

/// The table named by one to three parts, as DESCRIBE and SHOW COLUMNS take it.
async fn table_provider(session: &Session, parts: &[String]) -> Result<Arc<dyn TableProvider>> {
    let reference = match parts {
        [table] => TableReference::bare(table.as_str()),
        [schema, table] => TableReference::partial(schema.as_str(), table.as_str()),
        [catalog, schema, table] => {
            TableReference::full(catalog.as_str(), schema.as_str(), table.as_str())
        }
        _ => {
            return Err(DataFusionError::Plan(format!(
                "'{}' is not a table name: use table, database.table or catalog.database.table",
                parts.join(".")
            )))
        }
    };
    session.context().table_provider(reference).await
}

/// The names of the session's scalar, aggregate, window, higher-order and table functions.
fn function_names(context: &SessionContext) -> Vec<String> {
    // The state's lock is held only while the names are copied out.
    let state = context.state_ref();
    let state = state.read();
    state
        .scalar_functions()
        .keys()
        .chain(state.aggregate_functions().keys())
        .chain(state.window_functions().keys())
        .chain(state.higher_order_functions().keys())
        .chain(state.table_functions().keys())
        .filter(|name| !crate::hive_functions::higher_order::is_internal(name))
        .cloned()
        .collect()
}

/// One string column of rows.
fn string_rows(column: &str, values: Vec<String>) -> Result<Executed> {
    string_columns(vec![(column, values)])
}

/// String columns of equal length.
fn string_columns(columns: Vec<(&str, Vec<String>)>) -> Result<Executed> {
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|(name, _)| Field::new(*name, DataType::Utf8, false))
            .collect::<Vec<_>>(),
    ));
    let arrays: Vec<ArrayRef> = columns
        .into_iter()
        .map(|(_, values)| Arc::new(StringArray::from(values)) as ArrayRef)
        .collect();
    let batch = RecordBatch::try_new(Arc::clone(&schema), arrays)?;
    Ok(Executed::Rows(schema, vec![batch]))
}

/// The names a `SHOW ... [LIKE] 'pattern'` lists: all of them without a pattern.
fn matching(names: Vec<String>, pattern: &Option<String>) -> Vec<String> {
    match pattern {
        Some(pattern) => names
            .into_iter()
            .filter(|name| hive_pattern_matches(pattern, name))
            .collect(),
        None => names,
    }
}

/// Hive's `SHOW ... LIKE` patterns: `*` any characters, `|` alternatives, case-insensitive.
/// SQL's `%` and `_` are accepted too, since users type them.
pub fn hive_pattern_matches(pattern: &str, name: &str) -> bool {
    pattern
        .split('|')
        .any(|alternative| crate::wildcards::NAMES.matches(alternative.trim(), name))
}

/// Removes surrounding whitespace and trailing semicolons (beeline strips them, other
/// clients send them).
fn trim_statement(sql: &str) -> &str {
    sql.trim().trim_end_matches(';').trim_end()
}

enum Recognised {
    Command(HiveCommand),
    /// Hive syntax DataFusion knows under another spelling.
    Rewritten(String),
}

/// Recognises the Hive commands; `None` hands the statement to DataFusion as it is.
fn recognise(sql: &str) -> Result<Option<Recognised>> {
    // SET's value is raw text in Hive (`SET a.b=x y z`), so it is not tokenised.
    if let Some(value) = set_value(sql) {
        return Ok(recognise_set(value.trim()).map(Recognised::Command));
    }
    if let Some(reset) = recognise_reset(sql) {
        return Ok(Some(Recognised::Command(reset)));
    }
    // So are ADD JAR's paths.
    if let Some(command) = resources::recognise(sql) {
        return Ok(Some(Recognised::Command(command)));
    }
    let tokens = match Tokenizer::new(&GenericDialect {}, sql).tokenize() {
        Ok(tokens) => tokens,
        // DataFusion's parser reports the error with its position.
        Err(_) => return Ok(None),
    };
    let words = Words::new(tokens);
    Ok(words.recognise())
}

/// What follows `SET` in a SET statement.
fn set_value(sql: &str) -> Option<&str> {
    let first_word = sql.split(|c: char| c.is_whitespace()).next().unwrap_or("");
    first_word
        .eq_ignore_ascii_case("set")
        .then(|| &sql[first_word.len()..])
}

/// `RESET` or `RESET key` (a key as `SET` takes it: one word of any characters).
fn recognise_reset(sql: &str) -> Option<HiveCommand> {
    let mut words = sql.split_whitespace();
    if !words.next()?.eq_ignore_ascii_case("reset") {
        return None;
    }
    match (words.next(), words.next()) {
        (None, _) => Some(HiveCommand::Reset(None)),
        (Some(key), None) => Some(HiveCommand::Reset(Some(key.to_owned()))),
        _ => None,
    }
}

fn recognise_set(rest: &str) -> Option<HiveCommand> {
    if rest.is_empty() || rest == "-v" {
        return Some(HiveCommand::Set(SetCommand::ShowAll));
    }
    match rest.split_once('=') {
        Some((key, value)) => {
            let key = key.trim();
            if key.is_empty() || key.contains(char::is_whitespace) {
                return None;
            }
            Some(HiveCommand::Set(SetCommand::Assign(
                key.to_owned(),
                unquote(value.trim()).to_owned(),
            )))
        }
        None if starts_with_words(rest, &["time", "zone"]) => {
            let zone = set_time_zone(rest)?;
            Some(HiveCommand::Set(SetCommand::Assign(
                time_zones::SESSION_ZONE_KEYS[0].to_owned(),
                zone,
            )))
        }
        // `SET timezone TO 'zone'`, DataFusion's form, read as the session's zone is.
        None if zone_set_to(rest).is_some() => {
            let (key, zone) = zone_set_to(rest)?;
            Some(HiveCommand::Set(SetCommand::Assign(key, zone)))
        }
        // Any other `SET k TO v` is DataFusion's.
        None if rest.contains(char::is_whitespace) => None,
        None => Some(HiveCommand::Set(SetCommand::Show(rest.to_owned()))),
    }
}

/// The key and the zone of `key TO 'zone'` when `key` names the session's zone.
fn zone_set_to(rest: &str) -> Option<(String, String)> {
    let mut parts = rest.trim().splitn(3, char::is_whitespace);
    let (key, to, value) = (parts.next()?, parts.next()?, parts.next()?);
    (time_zones::is_session_zone_key(key) && to.eq_ignore_ascii_case("to"))
        .then(|| (key.to_owned(), unquote(value.trim()).to_owned()))
}

/// Whether `text` starts with `words`, in any case, apart.
fn starts_with_words(text: &str, words: &[&str]) -> bool {
    let mut parts = text.split_whitespace();
    words.iter().all(|word| {
        parts
            .next()
            .is_some_and(|part| part.eq_ignore_ascii_case(word))
    })
}

/// The zone of Spark's `SET TIME ZONE LOCAL | 'zone' | INTERVAL ...` (`rest` starts with
/// `TIME ZONE`): `LOCAL`, the zone's name, or an interval of hours and minutes as an
/// offset (`INTERVAL 8 HOURS`, `INTERVAL -5 HOURS 30 MINUTES`, `INTERVAL '08:30' HOUR TO
/// MINUTE`). `None` leaves anything else to DataFusion's parser, which reports it.
fn set_time_zone(rest: &str) -> Option<String> {
    let value = rest.split_whitespace().skip(2).collect::<Vec<_>>();
    match value.as_slice() {
        [local] if local.eq_ignore_ascii_case("local") => Some("LOCAL".to_owned()),
        [name] => Some(unquote(name).to_owned()),
        [interval, parts @ ..] if interval.eq_ignore_ascii_case("interval") => {
            interval_offset(parts)
        }
        _ => None,
    }
}

/// An interval of hours (and minutes) as an offset, `+hh:mm`.
fn interval_offset(parts: &[&str]) -> Option<String> {
    let unit = |word: &str, singular: &str| {
        word.eq_ignore_ascii_case(singular) || word.eq_ignore_ascii_case(&format!("{singular}s"))
    };
    let number = |text: &str| unquote(text).parse::<i32>().ok();
    let minutes = match parts {
        [text, h, to, m]
            if unit(h, "hour") && to.eq_ignore_ascii_case("to") && unit(m, "minute") =>
        {
            // An offset as written (`'08:30'`, `'-03:30'`), which the session reads as a zone
            // and refuses, saying so, when it is none.
            let text = unquote(text);
            return Some(if text.starts_with(['+', '-']) {
                text.to_owned()
            } else {
                format!("+{text}")
            });
        }
        [hours, h] if unit(h, "hour") => number(hours)? * 60,
        [hours, h, minutes, m] if unit(h, "hour") && unit(m, "minute") => {
            let hours = number(hours)?;
            let minutes = number(minutes)?;
            hours * 60 + if hours < 0 { -minutes } else { minutes }
        }
        _ => return None,
    };
    let sign = if minutes < 0 { '-' } else { '+' };
    let minutes = minutes.abs();
    Some(format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60))
}

fn unquote(value: &str) -> &str {
    for quote in ['\'', '"', '`'] {
        if value.len() >= 2 && value.starts_with(quote) && value.ends_with(quote) {
            return &value[1..value.len() - 1];
        }
    }
    value
}

impl Words {
    fn recognise(mut self) -> Option<Recognised> {
        if self.eat("use") {
            let database = self.identifier()?;
            return self
                .done()
                .then_some(Recognised::Command(HiveCommand::Use(database)));
        }
        if self.eat("show") {
            if self.eat_any(&["databases", "schemas", "catalogs"]) {
                let catalogs = self.said("catalogs");
                self.eat("like");
                let pattern = self.string();
                let command = if catalogs {
                    HiveCommand::ShowCatalogs(pattern)
                } else {
                    HiveCommand::ShowDatabases(pattern)
                };
                return self.done().then_some(Recognised::Command(command));
            }
            if self.eat("table") {
                // SHOW TABLE EXTENDED [IN|FROM db] LIKE 'pattern' [PARTITION (...)].
                if !self.eat("extended") {
                    return None;
                }
                let database = if self.eat_any(&["in", "from"]) {
                    Some(self.identifier()?)
                } else {
                    None
                };
                if !self.eat("like") {
                    return None;
                }
                let pattern = self.string().or_else(|| self.identifier())?;
                let partition = self.partition_values()?;
                return self.done().then_some(Recognised::Command(
                    HiveCommand::ShowTableExtended {
                        database,
                        pattern,
                        partition,
                    },
                ));
            }
            if self.eat_any(&["tables", "views"]) {
                let views = self.said("views");
                let database = if self.eat_any(&["in", "from"]) {
                    Some(self.identifier()?)
                } else {
                    None
                };
                self.eat("like");
                let pattern = self.string();
                let command = if views {
                    HiveCommand::ShowViews { database, pattern }
                } else {
                    HiveCommand::ShowTables { database, pattern }
                };
                return self.done().then_some(Recognised::Command(command));
            }
            if self.eat("create") {
                if !self.eat("table") {
                    return None;
                }
                let parts = self.dotted_name()?;
                return self
                    .done()
                    .then_some(Recognised::Command(HiveCommand::ShowCreateTable(parts)));
            }
            if self.eat("columns") {
                // DataFusion's `SHOW [FULL|EXTENDED] COLUMNS` lists information_schema rows
                // with Arrow type names; Hive users expect the column names alone.
                if !self.eat_any(&["from", "in"]) {
                    return None;
                }
                let mut table = self.dotted_name()?;
                if self.eat_any(&["from", "in"]) {
                    let database = self.identifier()?;
                    if table.len() != 1 {
                        return None;
                    }
                    table.insert(0, database);
                }
                self.eat("like");
                let pattern = self.string();
                return self
                    .done()
                    .then_some(Recognised::Command(HiveCommand::ShowColumns {
                        table,
                        pattern,
                    }));
            }
            if self.eat("tblproperties") {
                let table = self.dotted_name()?;
                let key = if self.punct(&Token::LParen) {
                    // A quoted key, or a bare dotted one (`created.by.user`), as Spark takes.
                    let key = match self.string() {
                        Some(key) => key,
                        None => self.dotted_name()?.join("."),
                    };
                    if !self.punct(&Token::RParen) {
                        return None;
                    }
                    Some(key)
                } else {
                    None
                };
                return self.done().then_some(Recognised::Command(
                    HiveCommand::ShowTblProperties { table, key },
                ));
            }
            if self.eat("partitions") {
                let table = self.dotted_name()?;
                let spec = self.partition_values()?;
                return self
                    .done()
                    .then_some(Recognised::Command(HiveCommand::ShowPartitions {
                        table,
                        spec,
                    }));
            }
            if self.eat("functions") {
                // Hive's form: names only, filtered by a Hive pattern (`upp*`), where
                // DataFusion's lists every signature and filters with SQL's LIKE.
                self.eat("like");
                let pattern = self.string();
                return self
                    .done()
                    .then_some(Recognised::Command(HiveCommand::ShowFunctions(pattern)));
            }
            return None;
        }
        if self.eat("create") {
            let or_replace = self.eat("or") && self.eat("replace");
            let temporary = self.eat_any(&["temporary", "temp"]);
            if self.eat("function") {
                // CREATE [TEMPORARY] FUNCTION [IF NOT EXISTS] f AS 'class' [USING JAR ...].
                let _ = self.eat("if") && self.eat("not") && self.eat("exists");
                let name = self.dotted_name()?.join(".");
                if !self.eat("as") {
                    return None;
                }
                let class = self.string()?;
                return Some(Recognised::Command(HiveCommand::JavaFunction {
                    name,
                    class,
                }));
            }
            if or_replace || temporary || !self.eat_any(&["database", "schema"]) {
                return None;
            }
            let if_not_exists = self.eat("if") && self.eat("not") && self.eat("exists");
            let name = self.identifier()?;
            // Hive's COMMENT, LOCATION and WITH DBPROPERTIES mean nothing to an in-memory
            // catalog; they are accepted and ignored.
            return Some(Recognised::Command(HiveCommand::CreateDatabase {
                name,
                if_not_exists,
            }));
        }
        if self.eat("drop") {
            let temporary = self.eat_any(&["temporary", "temp"]);
            if self.eat("function") {
                let _ = self.eat("if") && self.eat("exists");
                let name = self.dotted_name()?.join(".");
                return self
                    .done()
                    .then_some(Recognised::Command(HiveCommand::DropFunction(name)));
            }
            // DataFusion's DATABASE is a catalog; Hive's is a schema.
            if temporary || !self.eat("database") {
                return None;
            }
            let if_exists = self.eat("if") && self.eat("exists");
            let name = self.identifier()?;
            if !self.rest_is(&["cascade", "restrict"]) {
                return None;
            }
            let cascade = self.eat("cascade");
            return Some(Recognised::Rewritten(format!(
                "DROP SCHEMA {}{}{}",
                if if_exists { "IF EXISTS " } else { "" },
                quote_identifier(&name),
                if cascade { " CASCADE" } else { "" }
            )));
        }
        if self.eat_any(&["describe", "desc"]) {
            // Hive's DESCRIBE [EXTENDED|FORMATTED] [TABLE] t, answered in Hive's columns;
            // anything else (DESCRIBE SELECT ...) stays DataFusion's.
            if self.remaining() > 1 && self.eat_any(&["database", "schema"]) {
                self.eat("extended");
                let name = self.identifier()?;
                return self
                    .done()
                    .then_some(Recognised::Command(HiveCommand::DescribeDatabase(name)));
            }
            // `DESCRIBE function` (or `database`) alone describes a table of that name.
            if self.remaining() > 1 && self.eat("function") {
                let extended = self.eat("extended");
                let name = self.identifier()?;
                return self
                    .done()
                    .then_some(Recognised::Command(HiveCommand::DescribeFunction {
                        name,
                        extended,
                    }));
            }
            let detailed = self.eat_any(&["extended", "formatted"]);
            self.eat("table");
            let parts = self.dotted_name()?;
            let partition = self.partition_values()?;
            if !partition.is_empty() {
                return self
                    .done()
                    .then_some(Recognised::Command(HiveCommand::Describe {
                        table: parts,
                        detailed,
                        partition,
                    }));
            }
            if let Some(column) = self.identifier() {
                return self
                    .done()
                    .then_some(Recognised::Command(HiveCommand::DescribeColumn {
                        table: parts,
                        column,
                    }));
            }
            return self
                .done()
                .then_some(Recognised::Command(HiveCommand::Describe {
                    table: parts,
                    detailed,
                    partition: Vec::new(),
                }));
        }
        if self.eat("analyze") {
            // ANALYZE TABLE t [PARTITION (...)] COMPUTE STATISTICS [NOSCAN | FOR COLUMNS ...].
            if !self.eat("table") {
                return None;
            }
            let table = self.dotted_name()?;
            let partition = warehouse::ddl::partition_spec(&mut self).ok()?;
            if !(self.eat("compute") && self.eat("statistics")) {
                return None;
            }
            let mode = if self.eat("noscan") {
                warehouse::properties::AnalyzeMode::NoScan
            } else if self.eat("for") {
                if !self.eat("columns") {
                    return None;
                }
                let mut columns = Vec::new();
                while let Some(column) = self.identifier() {
                    columns.push(column);
                    if !self.punct(&Token::Comma) {
                        break;
                    }
                }
                warehouse::properties::AnalyzeMode::Columns(columns)
            } else {
                warehouse::properties::AnalyzeMode::Scan
            };
            return self
                .done()
                .then_some(Recognised::Command(HiveCommand::Analyze {
                    table,
                    partition,
                    mode,
                }));
        }
        None
    }

    /// `PARTITION (col='value', ...)` if next, every column with a value; empty when there
    /// is none, None when it is malformed.
    fn partition_values(&mut self) -> Option<Vec<(String, String)>> {
        let spec = warehouse::ddl::partition_spec(self)
            .ok()?
            .unwrap_or_default();
        spec.into_iter()
            .map(|(column, value)| value.map(|v| (column, v)))
            .collect()
    }
}

/// Quotes an identifier for DataFusion, keeping its exact spelling.
fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

mod caching;
mod resources;
mod table_info;

#[cfg(test)]
mod tests;
