//! Recognising the statements the warehouse answers: Hive's DDL and DML over its tables.
//!
//! `CREATE [EXTERNAL] TABLE` is read here clause by clause (Hive's `PARTITIONED BY`,
//! `ROW FORMAT DELIMITED`, `STORED AS`, `LOCATION`, `TBLPROPERTIES`, Spark's `USING` and
//! `OPTIONS`), because neither DataFusion's parser nor its planner takes Hive's forms; the
//! column lists and the query are still parsed and planned by DataFusion. `INSERT`,
//! `TRUNCATE`, `DROP TABLE|VIEW` and `ALTER TABLE` are the warehouse's when they name a
//! warehouse table; otherwise they stay DataFusion's (in-memory and configured tables).

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::{Column, Constraint};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionState;
use datafusion::logical_expr::{cast, DdlStatement, Expr, LogicalPlan, LogicalPlanBuilder};
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DfStatement;
use datafusion::sql::sqlparser::ast::{
    BinaryOperator, ColumnOption, DataType as SqlDataType, Expr as SqlExpr,
    Statement as SqlStatement, TableObject,
};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

use super::meta::{ColumnMeta, DatabaseMeta, StoredFormat, TableKind, TableMeta};
use super::{warehouse_of, Warehouse};
use crate::hive_syntax;
use crate::words::Words;

/// A table's database and name, the session's database filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableName {
    pub database: String,
    pub table: String,
}

impl std::fmt::Display for TableName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.database, self.table)
    }
}

/// A PARTITION clause: a value for a static partition column, None for a dynamic one.
pub type PartitionSpec = Vec<(String, Option<String>)>;

/// A statement the warehouse runs.
#[derive(Debug, PartialEq, Eq)]
pub enum WarehouseCommand {
    /// `CREATE DATABASE|SCHEMA [IF NOT EXISTS] d [COMMENT '...'] [LOCATION '...']`.
    CreateDatabase {
        name: String,
        if_not_exists: bool,
        meta: DatabaseMeta,
    },
    /// `DROP DATABASE|SCHEMA [IF EXISTS] d [RESTRICT|CASCADE]`.
    DropDatabase {
        name: String,
        if_exists: bool,
        cascade: bool,
    },
    /// `CREATE [EXTERNAL] TABLE ...`, CTAS, and `CREATE [OR REPLACE] VIEW`.
    Create {
        name: TableName,
        if_not_exists: bool,
        or_replace: bool,
        /// Boxed: the largest of the commands by far.
        meta: Box<TableMeta>,
        /// CTAS: the rows, already cast to the table's columns.
        query: Option<LogicalPlan>,
    },
    /// `INSERT INTO|OVERWRITE [TABLE] t [PARTITION (...)] query`.
    Insert {
        name: TableName,
        overwrite: bool,
        /// The PARTITION clause: a value for a static partition, None for a dynamic one.
        partition: PartitionSpec,
        /// The rows, cast to the columns they fill: the data columns then the dynamic
        /// partition columns.
        query: LogicalPlan,
    },
    /// `TRUNCATE TABLE t [PARTITION (c='v', ...)]`.
    Truncate {
        name: TableName,
        partition: Vec<(String, String)>,
    },
    /// `DROP TABLE|VIEW [IF EXISTS] t`.
    Drop { name: TableName, if_exists: bool },
    /// `ALTER TABLE|VIEW t RENAME TO u`.
    Rename { from: TableName, to: TableName },
    /// `ALTER TABLE t ADD|DROP PARTITION (c='v', ...), ...`: a partition's directory made
    /// or deleted with its files.
    AlterPartitions {
        name: TableName,
        add: bool,
        partitions: Vec<Vec<(String, String)>>,
    },
    /// `MSCK REPAIR TABLE t`: nothing to do (partitions are directories, listed at every
    /// query), accepted for Hive's ETL scripts.
    Repair { name: TableName },
    /// `ALTER TABLE t ADD COLUMNS (c type [COMMENT '...'], ...)`.
    AddColumns {
        name: TableName,
        columns: Vec<ColumnMeta>,
    },
    /// `LOAD DATA [LOCAL] INPATH 'path' [OVERWRITE] INTO TABLE t [PARTITION (...)]`
    /// ([`super::load`]).
    Load {
        name: TableName,
        /// LOCAL: the path is on the engine's host and its files are copied; otherwise it
        /// is in the warehouse's filesystem and they are moved.
        local: bool,
        path: String,
        overwrite: bool,
        partition: Vec<(String, String)>,
    },
    /// `ALTER TABLE|VIEW t SET TBLPROPERTIES ('k'='v', ...)`.
    SetProperties {
        name: TableName,
        properties: BTreeMap<String, String>,
    },
    /// `ALTER TABLE|VIEW t UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)`.
    UnsetProperties {
        name: TableName,
        keys: Vec<String>,
        if_exists: bool,
    },
    /// `ALTER TABLE t SET SERDEPROPERTIES ('field.delim'='x', ...)`: a text table's delimiter.
    SetSerdeProperties {
        name: TableName,
        properties: BTreeMap<String, String>,
    },
    /// `ALTER TABLE t SET FILEFORMAT f` of a table without files.
    SetFileFormat {
        name: TableName,
        format: StoredFormat,
    },
    /// `ALTER TABLE t SET LOCATION 'url'`: where its files are read and written from now
    /// on; none are moved, as in Hive.
    SetLocation { name: TableName, location: String },
}

/// The warehouse statement `sql` is, or None to leave it to DataFusion. Statements that
/// cannot be one (not starting with CREATE, INSERT, DROP, TRUNCATE, ALTER or MSCK) are passed
/// over without any work, and so is everything when the engine has no warehouse.
pub async fn recognise(context: &SessionContext, sql: &str) -> Result<Option<WarehouseCommand>> {
    let first = sql
        .trim_start()
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("");
    let candidate = [
        "create", "insert", "drop", "truncate", "alter", "msck", "load",
    ]
    .iter()
    .any(|w| first.eq_ignore_ascii_case(w));
    if !candidate {
        return Ok(None);
    }
    let Some(warehouse) = warehouse_of(context) else {
        if first.eq_ignore_ascii_case("load") {
            return Err(DataFusionError::Plan(
                "LOAD DATA loads files into the warehouse's tables, and this engine has no \
                 warehouse; start it with --warehouse DIR|URL"
                    .to_owned(),
            ));
        }
        return Ok(None);
    };
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, sql).tokenize() else {
        return Ok(None);
    };
    let state = context.state();
    let mut words = Words::new(tokens);
    let current = state.config().options().catalog.default_schema.clone();
    let name_of = |parts: Vec<String>| -> Result<TableName> { table_name(parts, &current) };
    let current = current.as_str();
    if words.eat("create") {
        let or_replace = words.eat("or") && words.eat("replace");
        if words.eat_any(&["database", "schema"]) {
            return create_database(&mut words).map(Some);
        }
        let temporary = words.eat_any(&["temporary", "temp"]);
        let external = words.eat("external");
        if words.eat("view") {
            if temporary {
                return Ok(None);
            }
            return create_view(&state, &mut words, or_replace, current)
                .await
                .map(Some);
        }
        if temporary || !words.eat("table") {
            return Ok(None);
        }
        return create_table(
            &state, &warehouse, &mut words, external, or_replace, current,
        )
        .await
        .map(Some);
    }
    if words.eat("drop") {
        if words.eat_any(&["database", "schema"]) {
            let if_exists = words.eat("if") && words.eat("exists");
            let Some(name) = words.identifier() else {
                return Ok(None);
            };
            let cascade = words.eat("cascade");
            words.eat("restrict");
            return Ok(words.done().then_some(WarehouseCommand::DropDatabase {
                name,
                if_exists,
                cascade,
            }));
        }
        if !words.eat_any(&["table", "view"]) {
            return Ok(None);
        }
        let if_exists = words.eat("if") && words.eat("exists");
        let Some(parts) = words.dotted_name() else {
            return Ok(None);
        };
        words.eat("purge");
        let name = name_of(parts)?;
        if !words.done() || !in_warehouse(&warehouse, context, &name).await? {
            return Ok(None);
        }
        return Ok(Some(WarehouseCommand::Drop { name, if_exists }));
    }
    if words.eat("truncate") {
        words.eat("table");
        let Some(parts) = words.dotted_name() else {
            return Ok(None);
        };
        let name = name_of(parts)?;
        let partition = match partition_spec(&mut words)? {
            Some(spec) => spec
                .into_iter()
                .map(|(column, value)| {
                    value.map(|v| (column.clone(), v)).ok_or_else(|| {
                        DataFusionError::Plan(format!(
                            "TRUNCATE's PARTITION clause needs a value for '{column}'"
                        ))
                    })
                })
                .collect::<Result<Vec<_>>>()?,
            None => Vec::new(),
        };
        if !words.done() || !in_warehouse(&warehouse, context, &name).await? {
            return Ok(None);
        }
        return Ok(Some(WarehouseCommand::Truncate { name, partition }));
    }
    if words.eat("alter") {
        if !words.eat_any(&["table", "view"]) {
            return Ok(None);
        }
        let Some(parts) = words.dotted_name() else {
            return Ok(None);
        };
        let name = name_of(parts)?;
        if !in_warehouse(&warehouse, context, &name).await? {
            return Ok(None);
        }
        if words.eat("rename") && words.eat("to") {
            let Some(to) = words.dotted_name() else {
                return Ok(None);
            };
            let to = if to.len() == 1 {
                TableName {
                    database: name.database.clone(),
                    table: to[0].clone(),
                }
            } else {
                name_of(to)?
            };
            return Ok(words
                .done()
                .then_some(WarehouseCommand::Rename { from: name, to }));
        }
        let add = words.eat("add");
        if add && words.eat("columns") {
            let Some(text) = words.parenthesised() else {
                return Ok(None);
            };
            words.eat_any(&["cascade", "restrict"]);
            if !words.done() {
                return Ok(None);
            }
            let columns = column_list(&state, &text).await?;
            return Ok(Some(WarehouseCommand::AddColumns { name, columns }));
        }
        if add || words.eat("drop") {
            // ALTER TABLE t ADD [IF NOT EXISTS] PARTITION (...) [PARTITION (...)] and
            // ALTER TABLE t DROP [IF EXISTS] PARTITION (...)[, PARTITION (...)] [PURGE].
            words.eat("if");
            words.eat("not");
            words.eat("exists");
            let mut partitions = Vec::new();
            while let Some(spec) = partition_spec(&mut words)? {
                let mut values = Vec::new();
                for (column, value) in spec {
                    let value = value.ok_or_else(|| {
                        DataFusionError::Plan(format!(
                            "PARTITION ({column}) needs a value: {column}='...'"
                        ))
                    })?;
                    values.push((column, value));
                }
                partitions.push(values);
                words.punct(&Token::Comma);
            }
            words.eat("purge");
            if partitions.is_empty() || !words.done() {
                return Ok(None);
            }
            return Ok(Some(WarehouseCommand::AlterPartitions {
                name,
                add,
                partitions,
            }));
        }
        return alter_set(&mut words, name);
    }
    if words.eat("load") {
        return load(&mut words, context, &warehouse, current)
            .await
            .map(Some);
    }
    if words.eat("msck") {
        // Partitions are the table's directories, read at every query: nothing to repair.
        words.eat("repair");
        words.eat("table");
        let Some(parts) = words.dotted_name() else {
            return Ok(None);
        };
        let name = name_of(parts)?;
        words.eat_any(&["add", "drop", "sync"]);
        words.eat("partitions");
        if !words.done() || !in_warehouse(&warehouse, context, &name).await? {
            return Ok(None);
        }
        return Ok(Some(WarehouseCommand::Repair { name }));
    }
    if words.eat("insert") {
        return insert(&state, &warehouse, context, sql).await;
    }
    Ok(None)
}

/// `ALTER TABLE t [PARTITION (...)] SET|UNSET ...`, None for forms left to DataFusion.
fn alter_set(words: &mut Words, name: TableName) -> Result<Option<WarehouseCommand>> {
    let partition = partition_spec(words)?;
    let set = words.eat("set");
    if !set && !words.eat("unset") {
        return Ok(None);
    }
    if partition.is_some() {
        return Err(DataFusionError::Plan(format!(
            "ALTER TABLE {name} PARTITION (...) {}: a partition keeps no properties, location \
             or format of its own in this engine; it is its directory col=value/ under the \
             table's location and is read as the table is",
            if set { "SET" } else { "UNSET" }
        )));
    }
    let command = if !set {
        if !words.eat("tblproperties") {
            return Err(DataFusionError::Plan(format!(
                "ALTER TABLE {name} UNSET {}: only TBLPROPERTIES can be unset",
                words.rest_text()
            )));
        }
        let if_exists = words.eat("if") && words.eat("exists");
        let text = words.parenthesised().ok_or_else(|| {
            DataFusionError::Plan("UNSET TBLPROPERTIES takes a list of keys: ('k1', 'k2')".into())
        })?;
        WarehouseCommand::UnsetProperties {
            name,
            keys: property_keys(&text)?,
            if_exists,
        }
    } else if words.eat("tblproperties") {
        let text = words.parenthesised().ok_or_else(|| {
            DataFusionError::Plan("SET TBLPROPERTIES takes a list: ('k1'='v1', 'k2'='v2')".into())
        })?;
        WarehouseCommand::SetProperties {
            name,
            properties: table_properties(&text)?,
        }
    } else if words.eat("serdeproperties") {
        let text = words.parenthesised().ok_or_else(|| {
            DataFusionError::Plan("SET SERDEPROPERTIES takes a list: ('field.delim'=',')".into())
        })?;
        WarehouseCommand::SetSerdeProperties {
            name,
            properties: table_properties(&text)?,
        }
    } else if words.eat("fileformat") {
        let format = words.identifier().ok_or_else(|| {
            DataFusionError::Plan("SET FILEFORMAT needs a format: PARQUET, ORC, TEXTFILE".into())
        })?;
        WarehouseCommand::SetFileFormat {
            name,
            format: StoredFormat::from_name(&format)?,
        }
    } else if words.eat("location") {
        let location = words.string().ok_or_else(|| {
            DataFusionError::Plan("SET LOCATION needs the location in quotes".into())
        })?;
        WarehouseCommand::SetLocation {
            location: super::directory_url(&location, false)?.to_string(),
            name,
        }
    } else if words.eat("serde") {
        return Err(DataFusionError::Plan(format!(
            "ALTER TABLE {name} SET SERDE: the DataFusion engine reads a table by its format \
             (PARQUET, ORC, TEXTFILE, CSV, JSON), not by a Java SerDe; SET FILEFORMAT changes \
             the format of a table without files"
        )));
    } else {
        return Ok(None);
    };
    Ok(words.done().then_some(command))
}

/// `LOAD DATA [LOCAL] INPATH 'path' [OVERWRITE] INTO TABLE t [PARTITION (c='v', ...)]`.
async fn load(
    words: &mut Words,
    context: &SessionContext,
    warehouse: &Warehouse,
    current: &str,
) -> Result<WarehouseCommand> {
    let malformed = || {
        DataFusionError::Plan(
            "LOAD DATA is written LOAD DATA [LOCAL] INPATH 'path' [OVERWRITE] INTO TABLE t \
             [PARTITION (col='value', ...)]"
                .to_owned(),
        )
    };
    if !words.eat("data") {
        return Err(malformed());
    }
    let local = words.eat("local");
    if !words.eat("inpath") {
        return Err(malformed());
    }
    let path = words.string().ok_or_else(malformed)?;
    let overwrite = words.eat("overwrite");
    if !(words.eat("into") && words.eat("table")) {
        return Err(malformed());
    }
    let parts = words.dotted_name().ok_or_else(malformed)?;
    let name = table_name(parts, current)?;
    let mut partition = Vec::new();
    for (column, value) in partition_spec(words)?.unwrap_or_default() {
        let value = value.ok_or_else(|| {
            DataFusionError::Plan(format!(
                "LOAD DATA's PARTITION clause needs a value for '{column}': files go into one \
                 partition"
            ))
        })?;
        partition.push((column, value));
    }
    if !words.done() {
        return Err(malformed());
    }
    if !in_warehouse(warehouse, context, &name).await? {
        let memory = crate::session::temporary::engine_catalog(context)
            .and_then(|c| c.schema(&name.database))
            .is_some_and(|s| s.table_exist(&name.table));
        return Err(DataFusionError::Plan(if memory {
            format!(
                "{name} is one of the engine's in-memory tables; LOAD DATA loads files into \
                 the warehouse's tables"
            )
        } else {
            format!("table {name} does not exist")
        }));
    }
    Ok(WarehouseCommand::Load {
        name,
        local,
        path,
        overwrite,
        partition,
    })
}

/// The user the statement runs as, the owner of what it creates.
fn session_user(state: &SessionState) -> Option<String> {
    state
        .config()
        .options()
        .extensions
        .get::<crate::functions::SessionUser>()
        .map(|user| user.name.clone())
        .filter(|name| !name.is_empty())
}

/// `'k'='v', ...` of TBLPROPERTIES (keys and values in quotes, or bare as Spark takes them).
fn table_properties(text: &str) -> Result<BTreeMap<String, String>> {
    let malformed = || {
        DataFusionError::Plan(format!(
            "cannot read the properties ({text}): write them 'key'='value', separated by commas"
        ))
    };
    let tokens = Tokenizer::new(&GenericDialect {}, text)
        .tokenize()
        .map_err(|_| malformed())?;
    let mut scanner = Words::new(tokens);
    let mut properties = BTreeMap::new();
    while !scanner.done() {
        let key = property_key(&mut scanner).ok_or_else(malformed)?;
        if !scanner.punct(&Token::Eq) {
            return Err(malformed());
        }
        let value = scanner.value_or_name().ok_or_else(malformed)?;
        properties.insert(key, value);
        if !scanner.punct(&Token::Comma) && !scanner.done() {
            return Err(malformed());
        }
    }
    Ok(properties)
}

/// `'k1', 'k2'` of UNSET TBLPROPERTIES.
fn property_keys(text: &str) -> Result<Vec<String>> {
    let malformed = || {
        DataFusionError::Plan(format!(
            "cannot read the keys ({text}): write them in quotes, separated by commas"
        ))
    };
    let tokens = Tokenizer::new(&GenericDialect {}, text)
        .tokenize()
        .map_err(|_| malformed())?;
    let mut scanner = Words::new(tokens);
    let mut keys = Vec::new();
    while !scanner.done() {
        keys.push(property_key(&mut scanner).ok_or_else(malformed)?);
        if !scanner.punct(&Token::Comma) && !scanner.done() {
            return Err(malformed());
        }
    }
    Ok(keys)
}

/// A property's key: quoted, or a bare dotted name (`orc.compress`), its case kept.
fn property_key(scanner: &mut Words) -> Option<String> {
    if let Some(key) = scanner.string() {
        return Some(key);
    }
    let word = |scanner: &mut Words| match scanner.peek() {
        Some(Token::Word(w)) => {
            let value = w.value.clone();
            scanner.skip();
            Some(value)
        }
        _ => None,
    };
    let mut parts = vec![word(scanner)?];
    while scanner.punct(&Token::Period) {
        parts.push(word(scanner)?);
    }
    Some(parts.join("."))
}

/// The database of global temporary views, as Spark's: in the engine's memory, seen by all
/// its sessions until it stops.
pub const GLOBAL_TEMP_DATABASE: &str = "global_temp";

/// `CREATE [OR REPLACE] [GLOBAL] TEMPORARY|TEMP VIEW v AS ...` as DataFusion's `CREATE
/// [OR REPLACE] VIEW v AS ...`, for DataFusion to plan, and whether it is GLOBAL. A
/// temporary view is kept for the session alone ([`crate::session::temporary`]); a global
/// one is `global_temp.v`, DataFusion's view in the engine's memory, as Spark's. None for
/// any other statement.
pub fn temporary_view(sql: &str) -> Option<(String, bool)> {
    let first = sql.trim_start().get(..6)?;
    if !first.eq_ignore_ascii_case("create") {
        return None;
    }
    let tokens = Tokenizer::new(&GenericDialect {}, sql).tokenize().ok()?;
    let mut words = Words::new(tokens);
    words.eat("create");
    let or_replace = words.eat("or") && words.eat("replace");
    let global = words.eat("global");
    if !(words.eat_any(&["temporary", "temp"]) && words.eat("view")) {
        return None;
    }
    Some((
        format!(
            "CREATE {}VIEW {}{}",
            if or_replace { "OR REPLACE " } else { "" },
            if global {
                format!("{GLOBAL_TEMP_DATABASE}.")
            } else {
                String::new()
            },
            words.rest_text()
        ),
        global,
    ))
}

/// Whether `name` is a warehouse table (and not one of the engine's in-memory tables).
async fn in_warehouse(
    warehouse: &Warehouse,
    context: &SessionContext,
    name: &TableName,
) -> Result<bool> {
    let in_memory = crate::session::temporary::engine_catalog(context)
        .and_then(|c| {
            c.downcast_ref::<super::WarehouseCatalog>()
                .map(|w| w.in_memory(&name.database, &name.table))
        })
        .unwrap_or(false);
    if in_memory {
        return Ok(false);
    }
    Ok(warehouse
        .table_meta(&name.database, &name.table)
        .await?
        .is_some())
}

fn table_name(parts: Vec<String>, current: &str) -> Result<TableName> {
    match parts.as_slice() {
        [table] => Ok(TableName {
            database: current.to_owned(),
            table: table.clone(),
        }),
        [database, table] | [_, database, table] => Ok(TableName {
            database: database.clone(),
            table: table.clone(),
        }),
        _ => Err(DataFusionError::Plan(format!(
            "'{}' is not a table name: use table or database.table",
            parts.join(".")
        ))),
    }
}

fn create_database(words: &mut Words) -> Result<WarehouseCommand> {
    let if_not_exists = words.eat("if") && words.eat("not") && words.eat("exists");
    let name = words
        .identifier()
        .ok_or_else(|| DataFusionError::Plan("CREATE DATABASE needs a name".to_owned()))?;
    if !super::valid_name(&name) {
        return Err(DataFusionError::Plan(format!(
            "'{name}' cannot name a database"
        )));
    }
    let mut meta = DatabaseMeta::default();
    while !words.done() {
        if words.eat("comment") {
            meta.comment = words.string();
        } else if words.eat("location") || words.eat("managedlocation") {
            meta.location = words.string();
        } else if words.eat("with") && words.eat("dbproperties") {
            words.parenthesised();
        } else {
            return Err(DataFusionError::Plan(format!(
                "CREATE DATABASE {name}: unexpected '{}'",
                words.rest_text()
            )));
        }
    }
    Ok(WarehouseCommand::CreateDatabase {
        name,
        if_not_exists,
        meta,
    })
}

async fn create_view(
    state: &SessionState,
    words: &mut Words,
    or_replace: bool,
    current: &str,
) -> Result<WarehouseCommand> {
    let if_not_exists = words.eat("if") && words.eat("not") && words.eat("exists");
    let parts = words
        .dotted_name()
        .ok_or_else(|| DataFusionError::Plan("CREATE VIEW needs a name".to_owned()))?;
    let name = table_name(parts, current)?;
    let mut comment = None;
    let mut properties = BTreeMap::new();
    while !words.eat("as") {
        if words.eat("comment") {
            comment = words.string();
        } else if words.eat("tblproperties") {
            let text = words.parenthesised().unwrap_or_default();
            properties = table_properties(&text)?;
        } else {
            return Err(DataFusionError::Plan(format!(
                "CREATE VIEW {name}: expected AS and the view's query, found '{}'",
                words.rest_text()
            )));
        }
    }
    let sql = words.rest_text();
    // Planned now, so that a view that cannot work is refused when created.
    let plan = plan_query(state, &sql).await?;
    let columns = query_columns(state, &plan)?;
    Ok(WarehouseCommand::Create {
        name,
        if_not_exists,
        or_replace,
        meta: Box::new(TableMeta {
            comment,
            view_sql: Some(sql.trim().to_owned()),
            properties,
            owner: session_user(state),
            ..TableMeta::new(TableKind::View, None, columns)
        }),
        query: None,
    })
}

/// The table `CREATE TABLE ... LIKE source` copies: a warehouse table's metadata (columns,
/// partition columns, format), or the columns of any other table or view.
async fn like_table(
    state: &SessionState,
    warehouse: &Warehouse,
    source: TableName,
) -> Result<TableMeta> {
    let context = SessionContext::new_with_state(state.clone());
    let in_memory = crate::session::temporary::engine_catalog(&context)
        .and_then(|c| {
            c.downcast_ref::<super::WarehouseCatalog>()
                .map(|w| w.in_memory(&source.database, &source.table))
        })
        .unwrap_or(false);
    if !in_memory {
        if let Some(meta) = warehouse
            .table_meta(&source.database, &source.table)
            .await?
        {
            if meta.kind != TableKind::View {
                return Ok(meta);
            }
        }
    }
    let provider = SessionContext::new_with_state(state.clone())
        .table_provider(datafusion::common::TableReference::partial(
            source.database.as_str(),
            source.table.as_str(),
        ))
        .await?;
    Ok(TableMeta::new(
        TableKind::Managed,
        None,
        provider
            .schema()
            .fields()
            .iter()
            .map(|f| ColumnMeta::from_field(f))
            .collect(),
    ))
}

/// The Hive clauses of a CREATE TABLE, as read.
#[derive(Default)]
struct CreateClauses {
    columns: Option<String>,
    partitioned_by: Option<String>,
    format: Option<String>,
    delimiter: Option<char>,
    location: Option<String>,
    comment: Option<String>,
    has_header: Option<bool>,
    query: Option<String>,
    /// TBLPROPERTIES, but `comment`, which is the table's comment in Hive.
    properties: BTreeMap<String, String>,
}

async fn create_table(
    state: &SessionState,
    warehouse: &Warehouse,
    words: &mut Words,
    external: bool,
    or_replace: bool,
    current: &str,
) -> Result<WarehouseCommand> {
    let if_not_exists = words.eat("if") && words.eat("not") && words.eat("exists");
    let parts = words
        .dotted_name()
        .ok_or_else(|| DataFusionError::Plan("CREATE TABLE needs a name".to_owned()))?;
    let name = table_name(parts, current)?;
    if !super::valid_name(&name.table) {
        return Err(DataFusionError::Plan(format!(
            "'{}' cannot name a table",
            name.table
        )));
    }
    let like = if words.eat("like") {
        let source = words.dotted_name().ok_or_else(|| {
            DataFusionError::Plan("CREATE TABLE ... LIKE needs a table".to_owned())
        })?;
        Some(like_table(state, warehouse, table_name(source, current)?).await?)
    } else {
        None
    };
    let clauses = create_clauses(words, &name)?;
    let format = match &clauses.format {
        Some(format) => StoredFormat::from_name(format)?,
        None if clauses.delimiter.is_some() => StoredFormat::Textfile,
        None => like
            .as_ref()
            .and_then(|l| l.format)
            .unwrap_or(StoredFormat::Parquet),
    };
    if let Some(like) = like {
        if clauses.columns.is_some() || clauses.query.is_some() {
            return Err(DataFusionError::Plan(format!(
                "CREATE TABLE {name} LIKE takes the other table's columns; leave out columns and AS"
            )));
        }
        let location = match &clauses.location {
            Some(location) => Some(super::directory_url(location, false)?.to_string()),
            None => None,
        };
        return Ok(WarehouseCommand::Create {
            name,
            if_not_exists,
            or_replace,
            meta: Box::new(TableMeta {
                kind: if external {
                    TableKind::External
                } else {
                    TableKind::Managed
                },
                format: Some(format),
                location,
                comment: clauses.comment,
                delimiter: clauses.delimiter.or(like.delimiter),
                has_header: clauses.has_header.unwrap_or(false),
                file_extension: None,
                view_sql: None,
                properties: clauses.properties,
                owner: session_user(state),
                statistics: BTreeMap::new(),
                ..like
            }),
            query: None,
        });
    }
    if external && clauses.location.is_none() {
        return Err(DataFusionError::Plan(format!(
            "CREATE EXTERNAL TABLE {name} needs a LOCATION"
        )));
    }
    let location = match &clauses.location {
        Some(location) => Some(super::directory_url(location, false)?.to_string()),
        None => None,
    };
    let (mut columns, primary_key) = match &clauses.columns {
        Some(text) => columns_and_key(state, text).await?,
        None => (Vec::new(), Vec::new()),
    };
    // Partition columns with types are columns of their own; names alone pick columns of
    // the list or the query, which move to the end, as Spark's CTAS takes them.
    let (typed_partitions, partition_names) = match &clauses.partitioned_by {
        None => (Vec::new(), Vec::new()),
        Some(text) => match names_only(text) {
            Some(names) => (Vec::new(), names),
            None => (column_list(state, text).await?, Vec::new()),
        },
    };
    let mut query = match &clauses.query {
        Some(sql) => Some(plan_query(state, sql).await?),
        None => None,
    };
    if let Some(plan) = &query {
        if !columns.is_empty() {
            return Err(DataFusionError::Plan(format!(
                "CREATE TABLE {name} ... AS SELECT takes its columns from the query; \
                 leave out the column list"
            )));
        }
        columns = query_columns(state, plan)?;
    }
    if columns.is_empty() && query.is_none() {
        match (&location, external) {
            (Some(location), true) => {
                columns = infer_columns(state, location, format, &clauses).await?;
            }
            _ => {
                return Err(DataFusionError::Plan(format!(
                    "CREATE TABLE {name} needs its columns: (name type, ...) or AS SELECT"
                )))
            }
        }
    }
    let mut partition_columns = typed_partitions;
    for partition in &partition_names {
        let at = columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(partition));
        match at {
            Some(at) => partition_columns.push(columns.remove(at)),
            None if external && query.is_none() => partition_columns.push(ColumnMeta {
                name: partition.clone(),
                data_type: DataType::Utf8.to_string(),
                comment: None,
            }),
            None => {
                return Err(DataFusionError::Plan(format!(
                    "partition column '{partition}' is not a column of {name}"
                )))
            }
        }
    }
    if let Some(duplicate) = partition_columns
        .iter()
        .find(|p| columns.iter().any(|c| c.name.eq_ignore_ascii_case(&p.name)))
    {
        return Err(DataFusionError::Plan(format!(
            "'{}' is both a column and a partition column of {name}; Hive's partition \
             columns are not listed among the others",
            duplicate.name
        )));
    }
    let meta = TableMeta {
        kind: if external {
            TableKind::External
        } else {
            TableKind::Managed
        },
        format: Some(format),
        columns,
        partition_columns,
        location,
        comment: clauses.comment.clone(),
        delimiter: clauses.delimiter,
        has_header: clauses.has_header.unwrap_or(false),
        file_extension: (external && format == StoredFormat::Textfile).then(String::new),
        view_sql: None,
        primary_key,
        properties: clauses.properties.clone(),
        owner: session_user(state),
        statistics: BTreeMap::new(),
    };
    if let Some(plan) = query.take() {
        query = Some(cast_to(plan, meta.full_schema()?.fields())?);
    }
    Ok(WarehouseCommand::Create {
        name,
        if_not_exists,
        or_replace,
        meta: Box::new(meta),
        query,
    })
}

fn create_clauses(words: &mut Words, name: &TableName) -> Result<CreateClauses> {
    let mut clauses = CreateClauses {
        columns: words.parenthesised(),
        ..Default::default()
    };
    let unexpected = |words: &Words| {
        DataFusionError::Plan(format!(
            "CREATE TABLE {name}: unexpected '{}'",
            words.rest_text().chars().take(60).collect::<String>()
        ))
    };
    while !words.done() {
        if words.eat("as") {
            clauses.query = Some(words.rest_text());
            break;
        } else if words.eat("comment") {
            clauses.comment = words.string();
        } else if words.eat("partitioned") {
            if !words.eat("by") {
                return Err(unexpected(words));
            }
            clauses.partitioned_by = Some(words.parenthesised().ok_or_else(|| unexpected(words))?);
        } else if words.eat("clustered") || words.eat("sorted") || words.eat("skewed") {
            return Err(DataFusionError::Plan(format!(
                "CREATE TABLE {name}: bucketed and skewed tables (CLUSTERED BY, SORTED BY, \
                 SKEWED BY) are not supported by the DataFusion engine"
            )));
        } else if words.eat("row") {
            if !words.eat("format") {
                return Err(unexpected(words));
            }
            if words.eat("serde") {
                let class = words.string().unwrap_or_default();
                if class.to_ascii_lowercase().contains("opencsvserde") {
                    clauses.format.get_or_insert_with(|| "csv".to_owned());
                } else if class.to_ascii_lowercase().contains("json") {
                    clauses.format.get_or_insert_with(|| "json".to_owned());
                } else if let Some(format) = format_of_class(&class) {
                    clauses.format.get_or_insert_with(|| format.to_owned());
                } else if !class.to_ascii_lowercase().contains("lazysimpleserde") {
                    return Err(DataFusionError::Plan(format!(
                        "ROW FORMAT SERDE '{class}' is not supported by the DataFusion engine"
                    )));
                }
                if words.eat("with") && words.eat("serdeproperties") {
                    words.parenthesised();
                }
                continue;
            }
            if !words.eat("delimited") {
                return Err(unexpected(words));
            }
            loop {
                if words.eat("fields") {
                    if !(words.eat("terminated") && words.eat("by")) {
                        return Err(unexpected(words));
                    }
                    let text = words.string().ok_or_else(|| unexpected(words))?;
                    clauses.delimiter = Some(delimiter(&text)?);
                    if words.eat("escaped") && words.eat("by") {
                        words.string();
                    }
                } else if words.eat("collection") || words.eat("map") {
                    // Collection and map delimiters: text tables of scalars only.
                    while !words.eat("by") && !words.done() {
                        words.skip();
                    }
                    words.string();
                } else if words.eat("lines") {
                    if !(words.eat("terminated") && words.eat("by")) {
                        return Err(unexpected(words));
                    }
                    words.string();
                } else if words.eat("null") {
                    if !(words.eat("defined") && words.eat("as")) {
                        return Err(unexpected(words));
                    }
                    words.string();
                } else {
                    break;
                }
            }
        } else if words.eat("stored") {
            if !words.eat("as") {
                return Err(unexpected(words));
            }
            if words.eat("inputformat") {
                // Hive's SHOW CREATE TABLE writes its ORC and Parquet tables so.
                let class = words.string().unwrap_or_default();
                if words.eat("outputformat") {
                    words.string();
                }
                let format = format_of_class(&class).ok_or_else(|| {
                    DataFusionError::Plan(format!(
                        "CREATE TABLE {name}: STORED AS INPUTFORMAT '{class}' is not \
                         supported; use STORED AS PARQUET, ORC, TEXTFILE, CSV or JSON"
                    ))
                })?;
                clauses.format = Some(format.to_owned());
                continue;
            }
            clauses.format = Some(words.identifier().ok_or_else(|| unexpected(words))?);
        } else if words.eat("using") {
            clauses.format = Some(words.identifier().ok_or_else(|| unexpected(words))?);
        } else if words.eat("location") {
            clauses.location = Some(words.string().ok_or_else(|| unexpected(words))?);
        } else if words.eat("tblproperties") {
            let text = words.parenthesised().ok_or_else(|| unexpected(words))?;
            for (key, value) in table_properties(&text)? {
                if key == "comment" {
                    clauses.comment.get_or_insert(value);
                } else {
                    // Hive's way of saying that a text file's first line names the columns.
                    if key == "skip.header.line.count" {
                        clauses.has_header.get_or_insert(value.trim() == "1");
                    }
                    clauses.properties.insert(key, value);
                }
            }
        } else if words.eat("options") {
            let text = words.parenthesised().ok_or_else(|| unexpected(words))?;
            for (key, value) in options(&text) {
                let key = key.to_ascii_lowercase();
                let key = key.strip_prefix("format.").unwrap_or(&key);
                match key {
                    "has_header" | "header" => {
                        clauses.has_header = Some(value.eq_ignore_ascii_case("true"))
                    }
                    "delimiter" | "sep" => clauses.delimiter = Some(delimiter(&value)?),
                    "path" => clauses.location = Some(value),
                    _ => {}
                }
            }
        } else if words.eat("with") {
            if !(words.eat("header") && words.eat("row")) {
                return Err(unexpected(words));
            }
            clauses.has_header = Some(true);
        } else {
            return Err(unexpected(words));
        }
    }
    Ok(clauses)
}

/// The format of Hive's SerDe or input format class for ORC and Parquet
/// (`org.apache.hadoop.hive.ql.io.orc.OrcSerde`, `...OrcInputFormat`,
/// `...parquet.MapredParquetInputFormat`, `...ParquetHiveSerDe`).
fn format_of_class(class: &str) -> Option<&'static str> {
    let class = class.to_ascii_lowercase();
    let name = class.rsplit('.').next().unwrap_or_default();
    match name {
        "orcserde" | "orcinputformat" => Some("orc"),
        "parquethiveserde" | "mapredparquetinputformat" => Some("parquet"),
        _ => None,
    }
}

/// `'k' 'v', k = 'v', ...` of an OPTIONS clause.
fn options(text: &str) -> Vec<(String, String)> {
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, text).tokenize() else {
        return Vec::new();
    };
    let mut scanner = Words::new(tokens);
    let mut pairs = Vec::new();
    while !scanner.done() {
        let key = match scanner.string() {
            Some(key) => key,
            None => match scanner.dotted_name() {
                Some(parts) => parts.join("."),
                None => break,
            },
        };
        scanner.punct(&Token::Eq);
        let Some(value) = scanner.value_or_name() else {
            break;
        };
        pairs.push((key, value));
        scanner.punct(&Token::Comma);
    }
    pairs
}

/// A field delimiter as written: one character, or Hive's escapes (`'\t'`, `'\001'`, `'\u0001'`).
fn delimiter(text: &str) -> Result<char> {
    let unescaped = if let Some(rest) = text.strip_prefix('\\') {
        if let Some(hex) = rest.strip_prefix('u') {
            u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)
        } else if !rest.is_empty() && rest.chars().all(|c| c.is_digit(8)) {
            u32::from_str_radix(rest, 8).ok().and_then(char::from_u32)
        } else {
            match rest {
                "t" => Some('\t'),
                "n" => Some('\n'),
                "|" => Some('|'),
                "\\" => Some('\\'),
                _ => None,
            }
        }
    } else {
        let mut chars = text.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Some(c),
            _ => None,
        }
    };
    unescaped.filter(char::is_ascii).ok_or_else(|| {
        DataFusionError::Plan(format!(
            "field delimiter '{text}' is not one ASCII character"
        ))
    })
}

/// The names of a list holding names alone (`dt, hr`), None when it has types.
fn names_only(text: &str) -> Option<Vec<String>> {
    let tokens = Tokenizer::new(&GenericDialect {}, text).tokenize().ok()?;
    let mut scanner = Words::new(tokens);
    let mut names = Vec::new();
    loop {
        names.push(scanner.identifier()?);
        if scanner.done() {
            return Some(names);
        }
        if !scanner.punct(&Token::Comma) {
            return None;
        }
    }
}

/// The columns of a list `name type [COMMENT '...'], ...`, typed as DataFusion types them.
async fn column_list(state: &SessionState, text: &str) -> Result<Vec<ColumnMeta>> {
    Ok(columns_and_key(state, text).await?.0)
}

/// [`column_list`], and the names of the primary key's columns (`PRIMARY KEY (a, b)`, or
/// a column's `PRIMARY KEY`) in key order.
async fn columns_and_key(
    state: &SessionState,
    text: &str,
) -> Result<(Vec<ColumnMeta>, Vec<String>)> {
    let sql = format!("CREATE TABLE kumiho_columns ({text})");
    // The engine's dialect: Hive's `MAP<K, V>` among the types.
    let statement = Parser::new(&crate::hive_syntax::lambdas::LambdaDialect)
        .try_with_sql(&sql)
        .and_then(|mut parser| parser.parse_statement())
        .map_err(|e| DataFusionError::Plan(format!("cannot read the columns ({text}): {e}")))?;
    let SqlStatement::CreateTable(mut create) = statement else {
        return Err(DataFusionError::Plan(format!(
            "cannot read the columns ({text})"
        )));
    };
    let mut comments = Vec::new();
    for column in &mut create.columns {
        // Hive's BINARY has no length; DataFusion takes BYTEA.
        if matches!(column.data_type, SqlDataType::Binary(None)) {
            column.data_type = SqlDataType::Bytea;
        }
        let mut comment = None;
        column.options.retain(|option| match &option.option {
            ColumnOption::Comment(text) => {
                comment = Some(text.clone());
                false
            }
            _ => true,
        });
        comments.push(comment);
    }
    let plan = state
        .statement_to_plan(DfStatement::Statement(Box::new(SqlStatement::CreateTable(
            create,
        ))))
        .await?;
    let LogicalPlan::Ddl(DdlStatement::CreateMemoryTable(table)) = plan else {
        return Err(DataFusionError::Internal(
            "a column list did not plan as a table".to_owned(),
        ));
    };
    let fields = table.input.schema().fields();
    let key = table
        .constraints
        .iter()
        .find_map(|constraint| match constraint {
            Constraint::PrimaryKey(indices) => Some(
                indices
                    .iter()
                    .filter_map(|&i| fields.get(i).map(|f| f.name().clone()))
                    .collect(),
            ),
            Constraint::Unique(_) => None,
        })
        .unwrap_or_default();
    let columns = fields
        .iter()
        .zip(comments)
        .map(|(field, comment)| ColumnMeta {
            name: field.name().clone(),
            data_type: field.data_type().to_string(),
            comment,
        })
        .collect();
    Ok((columns, key))
}

/// The columns of an external table's files, as DataFusion infers them.
async fn infer_columns(
    state: &SessionState,
    location: &str,
    format: StoredFormat,
    clauses: &CreateClauses,
) -> Result<Vec<ColumnMeta>> {
    use datafusion::datasource::listing::{ListingOptions, ListingTableUrl};
    let probe = TableMeta {
        location: Some(location.to_owned()),
        delimiter: clauses.delimiter,
        has_header: clauses.has_header.unwrap_or(format == StoredFormat::Csv),
        ..TableMeta::new(TableKind::External, Some(format), Vec::new())
    };
    let options = ListingOptions::new(super::catalog::file_format(&probe)?)
        .with_file_extension(super::catalog::file_extension(&probe));
    let schema = options
        .infer_schema(state, &ListingTableUrl::parse(location)?)
        .await?;
    Ok(schema
        .fields()
        .iter()
        .map(|f| ColumnMeta::from_field(f))
        .collect())
}

/// DataFusion's plan of a query, with Hive's syntax rewritten as for any statement.
pub async fn plan_query(state: &SessionState, sql: &str) -> Result<LogicalPlan> {
    let statement = hive_syntax::parse_statement(state, sql)?;
    crate::statement::plan_statement(state, statement).await
}

/// The columns `plan` gives, typed as its rows will be ([`analyzed_schema`]).
fn query_columns(state: &SessionState, plan: &LogicalPlan) -> Result<Vec<ColumnMeta>> {
    Ok(analyzed_schema(state, plan)?
        .fields()
        .iter()
        .map(|f| ColumnMeta::from_field(f))
        .collect())
}

/// The schema of `plan`'s rows: the planner's, as the analyzer's rules then change it
/// (`SELECT 1 AS a` is planned a `BIGINT` and runs an `INT`,
/// `hive_syntax::integer_literals`).
fn analyzed_schema(
    state: &SessionState,
    plan: &LogicalPlan,
) -> Result<datafusion::common::DFSchemaRef> {
    let analyzed =
        state
            .analyzer()
            .execute_and_check(plan.clone(), state.config_options(), |_, _| {})?;
    Ok(Arc::clone(analyzed.schema()))
}

/// A view's `plan` with its columns cast to the types its rows will have
/// ([`analyzed_schema`]), so that the table it stands for (what DESCRIBE and GetColumns
/// list) is typed as its rows. The plan stays unanalyzed, as a view's plan is analyzed with
/// the query that reads it; a cast to the type a column already has then costs nothing.
pub fn view_typed_as_its_rows(state: &SessionState, plan: LogicalPlan) -> Result<LogicalPlan> {
    let analyzed = analyzed_schema(state, &plan)?;
    let planned = plan.schema().fields().iter().map(|f| f.data_type());
    if planned.eq(analyzed.fields().iter().map(|f| f.data_type())) {
        return Ok(plan);
    }
    cast_to(plan, analyzed.fields())
}

/// `plan` with its columns cast to `fields` by position, named as they are; a column count
/// that differs is refused, as Hive refuses it.
pub fn cast_to(plan: LogicalPlan, fields: &[Arc<Field>]) -> Result<LogicalPlan> {
    let schema = Arc::clone(plan.schema());
    if schema.fields().len() != fields.len() {
        return Err(DataFusionError::Plan(format!(
            "the query gives {} columns where the table takes {} ({})",
            schema.fields().len(),
            fields.len(),
            fields
                .iter()
                .map(|f| f.name().as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let exprs: Vec<Expr> = schema
        .iter()
        .zip(fields)
        .map(|((qualifier, field), target)| {
            let column = Expr::Column(Column::from((qualifier, field)));
            let expr = if field.data_type() == target.data_type() {
                column
            } else {
                cast(column, target.data_type().clone())
            };
            expr.alias(target.name())
        })
        .collect();
    LogicalPlanBuilder::from(plan).project(exprs)?.build()
}

async fn insert(
    state: &SessionState,
    warehouse: &Warehouse,
    context: &SessionContext,
    sql: &str,
) -> Result<Option<WarehouseCommand>> {
    let mut statement = hive_syntax::parse_statement(state, sql)?;
    // The query as written: planned with its Hive syntax rewritten, and planned again
    // where that takes two plans ([`crate::statement::plan_statement`]).
    let written_source = match &statement {
        DfStatement::Statement(written) => match written.as_ref() {
            SqlStatement::Insert(insert) => insert.source.clone(),
            _ => None,
        },
        _ => None,
    };
    hive_syntax::rewrite(&mut statement)?;
    let DfStatement::Statement(statement) = statement else {
        return Ok(None);
    };
    let SqlStatement::Insert(insert) = *statement else {
        return Ok(None);
    };
    let TableObject::TableName(object) = &insert.table else {
        return Ok(None);
    };
    let parts: Vec<String> = object
        .0
        .iter()
        .filter_map(|part| part.as_ident())
        .map(|ident| match ident.quote_style {
            Some(_) => ident.value.clone(),
            None => ident.value.to_lowercase(),
        })
        .collect();
    let current = state.config().options().catalog.default_schema.clone();
    let name = table_name(parts, &current)?;
    if !in_warehouse(warehouse, context, &name).await? {
        return Ok(None);
    }
    let meta = super::commands::existing(warehouse, &name).await?;
    meta.table_only(&name, "INSERT writes to tables")?;
    let mut partition = Vec::new();
    for expr in insert.partitioned.iter().flatten() {
        partition.push(partition_item(expr)?);
    }
    let source = written_source.ok_or_else(|| {
        DataFusionError::Plan(format!("INSERT INTO {name} needs a query or VALUES"))
    })?;
    let plan = crate::statement::plan_statement(
        state,
        DfStatement::Statement(Box::new(SqlStatement::Query(source))),
    )
    .await?;
    // The columns the query fills: the data columns, or those listed, then the partition
    // columns without a static value, in the table's order.
    let schema = meta.full_schema()?;
    let mut static_columns = Vec::new();
    for (column, value) in &partition {
        let known = meta
            .partition_columns
            .iter()
            .any(|p| p.name.eq_ignore_ascii_case(column));
        if !known {
            return Err(DataFusionError::Plan(format!(
                "'{column}' is not a partition column of {name}{}",
                partition_list(&meta)
            )));
        }
        if value.is_some() {
            static_columns.push(column.to_ascii_lowercase());
        }
    }
    let targets: Vec<Arc<Field>> = schema
        .fields()
        .iter()
        .filter(|f| !static_columns.contains(&f.name().to_ascii_lowercase()))
        .cloned()
        .collect();
    let plan = if insert.columns.is_empty() {
        cast_to(plan, &targets)?
    } else {
        let listed: Vec<String> = insert
            .columns
            .iter()
            .map(|c| c.to_string().trim_matches('"').to_lowercase())
            .collect();
        fill_columns(plan, &listed, &targets, &name)?
    };
    Ok(Some(WarehouseCommand::Insert {
        name,
        overwrite: insert.overwrite,
        partition,
        query: plan,
    }))
}

/// `INSERT INTO t (b, a) ...`: the query's columns put in the table's order, NULL for those
/// not listed.
fn fill_columns(
    plan: LogicalPlan,
    listed: &[String],
    targets: &[Arc<Field>],
    name: &TableName,
) -> Result<LogicalPlan> {
    if listed.len() != plan.schema().fields().len() {
        return Err(DataFusionError::Plan(format!(
            "INSERT INTO {name} lists {} columns and gives {}",
            listed.len(),
            plan.schema().fields().len()
        )));
    }
    for column in listed {
        if !targets
            .iter()
            .any(|t| t.name().eq_ignore_ascii_case(column))
        {
            return Err(DataFusionError::Plan(format!(
                "'{column}' is not a column of {name}"
            )));
        }
    }
    let schema = Arc::clone(plan.schema());
    let exprs: Vec<Expr> = targets
        .iter()
        .map(|target| {
            let found = listed
                .iter()
                .position(|c| c.eq_ignore_ascii_case(target.name()));
            let expr = match found {
                Some(i) => {
                    let (qualifier, field) = schema.qualified_field(i);
                    Expr::Column(Column::from((qualifier, field)))
                }
                None => Expr::Literal(datafusion::scalar::ScalarValue::Null, None),
            };
            cast(expr, target.data_type().clone()).alias(target.name())
        })
        .collect();
    LogicalPlanBuilder::from(plan).project(exprs)?.build()
}

fn partition_list(meta: &TableMeta) -> String {
    if meta.partition_columns.is_empty() {
        "; it is not partitioned".to_owned()
    } else {
        format!(
            "; its partition columns are {}",
            meta.partition_columns
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// One item of a PARTITION clause: `c = 'v'` (static) or `c` (dynamic).
fn partition_item(expr: &SqlExpr) -> Result<(String, Option<String>)> {
    match expr {
        SqlExpr::Identifier(ident) => Ok((ident.value.to_lowercase(), None)),
        SqlExpr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        } => {
            let SqlExpr::Identifier(ident) = left.as_ref() else {
                return Err(bad_partition(expr));
            };
            let value = match right.as_ref() {
                SqlExpr::Value(value) => match &value.value {
                    datafusion::sql::sqlparser::ast::Value::Number(n, _) => n.clone(),
                    other => other
                        .clone()
                        .into_string()
                        .ok_or_else(|| bad_partition(expr))?,
                },
                _ => return Err(bad_partition(expr)),
            };
            Ok((ident.value.to_lowercase(), Some(value)))
        }
        _ => Err(bad_partition(expr)),
    }
}

fn bad_partition(expr: &SqlExpr) -> DataFusionError {
    DataFusionError::Plan(format!(
        "PARTITION clause: '{expr}' is not column = 'value' or a column name"
    ))
}

/// `PARTITION (c = 'v', d, ...)`, if next.
pub(crate) fn partition_spec(words: &mut Words) -> Result<Option<PartitionSpec>> {
    if !words.eat("partition") {
        return Ok(None);
    }
    if !words.punct(&Token::LParen) {
        return Err(DataFusionError::Plan(
            "PARTITION must be followed by its columns in parentheses, e.g. PARTITION (dt = '2024-01-01')"
                .to_owned(),
        ));
    }
    let mut spec = Vec::new();
    loop {
        let column = words.identifier().ok_or_else(|| {
            DataFusionError::Plan(
                "PARTITION (...) lists partition columns, each a name with an optional = 'value'"
                    .to_owned(),
            )
        })?;
        let value = if words.punct(&Token::Eq) {
            Some(words.value_or_name().ok_or_else(|| {
                DataFusionError::Plan(format!(
                    "PARTITION ({column} = ...) needs a value after =, e.g. {column} = 'x'"
                ))
            })?)
        } else {
            None
        };
        spec.push((column, value));
        if words.punct(&Token::RParen) {
            return Ok(Some(spec));
        }
        if !words.punct(&Token::Comma) {
            return Err(DataFusionError::Plan(
                "PARTITION (...): partition columns are separated by commas and closed by )"
                    .to_owned(),
            ));
        }
    }
}

#[cfg(test)]
mod tests;
