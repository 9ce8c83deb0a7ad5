//! JDBC metadata results (GetCatalogs, GetSchemas, GetTables, GetTableTypes, GetColumns,
//! GetTypeInfo, GetFunctions, GetPrimaryKeys, GetCrossReference) as Arrow batches, with exactly the columns, names and types
//! HiveServer2 returns, so that JDBC's `DatabaseMetaData` and BI tools read them as they
//! read Hive's.
//!
//! Everything is read from the session's `SessionContext`, whose catalog list all sessions
//! share, but for the session's own temporary views, which GetTables and GetColumns list
//! with a NULL catalog and schema, as the Spark Thrift Server does. Listings use catalog, schema and table names and `TableProvider::schema()`, never
//! a scan, so a lazily generated table stays ungenerated.
//!
//! Name arguments are JDBC search patterns: `%` matches any run of characters, `_` any one,
//! `\` makes the next character literal; `None` or an empty pattern matches everything.
//! HiveServer2 also takes its metastore's forms, which Hue and other Hive clients send:
//! `*` matches any run too, `|` separates alternatives (`orders|line*`), and `.` matches
//! any one character (the metastore matches the pattern as a regular expression, so
//! impyla's and Impala's `.*` means every name). Matching
//! ignores case, as Hive's metastore does (DataFusion folds unquoted names to lower case,
//! so a user typing `Orders` means `orders`). The catalog argument is a pattern too.
//! Functions belong to the session, not to a schema, so GetFunctions ignores the catalog
//! and schema arguments, as Hive does.
//!
//! GetPrimaryKeys and GetCrossReference take exact names, not patterns. Primary keys are
//! those DataFusion records for a table (`CREATE TABLE t (id INT PRIMARY KEY, ...)`);
//! DataFusion has no foreign keys, so GetCrossReference is always empty, as it is on a
//! Hive metastore without constraints.

use std::sync::Arc;

use datafusion::arrow::array::{
    new_null_array, Array, ArrayRef, BooleanArray, Int16Array, Int32Array, RecordBatch, Scalar,
    StringArray,
};
use datafusion::arrow::compute::kernels::comparison::ilike;
use datafusion::arrow::datatypes::DataType;
use datafusion::catalog::{SchemaProvider, TableProvider};
use datafusion::common::Constraint;
use datafusion::datasource::TableType;
use datafusion::error::Result;
use datafusion::prelude::SessionContext;
use kumiho_thrift::cli::TTypeId;

use crate::session::temporary::session_catalogs;
use crate::types;

#[cfg(test)]
mod tests;

/// GetCatalogs: `TABLE_CAT`, one row per DataFusion catalog.
pub fn catalogs(ctx: &SessionContext) -> Result<RecordBatch> {
    let mut names = ctx.catalog_names();
    names.sort();
    batch(vec![(
        "TABLE_CAT",
        strings(names.iter().map(|n| Some(n.as_str()))),
    )])
}

/// GetSchemas: `TABLE_SCHEM`, `TABLE_CATALOG`, ordered by catalog then schema.
pub fn schemas(
    ctx: &SessionContext,
    catalog: Option<&str>,
    schema_pattern: Option<&str>,
) -> Result<RecordBatch> {
    let found = matching_schemas(ctx, catalog, schema_pattern)?;
    batch(vec![
        (
            "TABLE_SCHEM",
            strings(found.iter().map(|s| Some(s.schema.as_str()))),
        ),
        (
            "TABLE_CATALOG",
            strings(found.iter().map(|s| Some(s.catalog.as_str()))),
        ),
    ])
}

/// GetTables: the ten JDBC `getTables` columns, ordered by type, catalog, schema, name.
/// `table_types` (`TABLE`, `VIEW`, `LOCAL TEMPORARY`; any case) narrows the listing;
/// `None` or an empty list means every type.
pub fn tables(
    ctx: &SessionContext,
    catalog: Option<&str>,
    schema_pattern: Option<&str>,
    table_pattern: Option<&str>,
    table_types: Option<&[String]>,
) -> Result<RecordBatch> {
    let wanted = |kind: &str| match table_types {
        None | Some([]) => true,
        Some(types) => types.iter().any(|t| t.eq_ignore_ascii_case(kind)),
    };
    let mut found: Vec<(&'static str, FoundTable)> =
        matching_tables(ctx, catalog, schema_pattern, table_pattern)?
            .into_iter()
            .chain(temporary_views(ctx, table_pattern)?)
            .map(|table| (jdbc_table_type(table.provider.table_type()), table))
            .filter(|(kind, _)| wanted(kind))
            .collect();
    found.sort_by(|(a_kind, a), (b_kind, b)| (a_kind, a.key()).cmp(&(b_kind, b.key())));
    let rows = found.len();
    batch(vec![
        ("TABLE_CAT", strings(found.iter().map(|(_, t)| t.catalog()))),
        (
            "TABLE_SCHEM",
            strings(found.iter().map(|(_, t)| t.schema())),
        ),
        (
            "TABLE_NAME",
            strings(found.iter().map(|(_, t)| Some(t.name.as_str()))),
        ),
        (
            "TABLE_TYPE",
            strings(found.iter().map(|(kind, _)| Some(*kind))),
        ),
        ("REMARKS", null_strings(rows)),
        ("TYPE_CAT", null_strings(rows)),
        ("TYPE_SCHEM", null_strings(rows)),
        ("TYPE_NAME", null_strings(rows)),
        ("SELF_REFERENCING_COL_NAME", null_strings(rows)),
        ("REF_GENERATION", null_strings(rows)),
    ])
}

/// The table types JDBC clients see, sorted as `getTableTypes` orders them.
const TABLE_TYPES: [&str; 3] = ["LOCAL TEMPORARY", "TABLE", "VIEW"];

/// GetTableTypes: `TABLE_TYPE`.
pub fn table_types() -> Result<RecordBatch> {
    batch(vec![("TABLE_TYPE", strings(TABLE_TYPES.map(Some)))])
}

fn jdbc_table_type(kind: TableType) -> &'static str {
    match kind {
        TableType::Base => "TABLE",
        TableType::View => "VIEW",
        TableType::Temporary => "LOCAL TEMPORARY",
    }
}

/// GetColumns: the 23 JDBC `getColumns` columns, ordered by catalog, schema, table and
/// position, with `DATA_TYPE` as `java.sql.Types` codes and Hive's type names and sizes.
pub fn columns(
    ctx: &SessionContext,
    catalog: Option<&str>,
    schema_pattern: Option<&str>,
    table_pattern: Option<&str>,
    column_pattern: Option<&str>,
) -> Result<RecordBatch> {
    let column_pattern = NamePattern::new(column_pattern);
    let mut found = Vec::new();
    let tables = matching_tables(ctx, catalog, schema_pattern, table_pattern)?;
    for table in tables
        .into_iter()
        .chain(temporary_views(ctx, table_pattern)?)
    {
        let schema = table.provider.schema();
        let names = schema.fields().iter().map(|f| f.name().clone()).collect();
        let wanted = column_pattern.matches(names)?;
        for ((field, position), wanted) in schema.fields().iter().zip(1..).zip(wanted) {
            if wanted {
                found.push((table.clone(), Arc::clone(field), position));
            }
        }
    }
    found.sort_by(|(a, _, a_pos), (b, _, b_pos)| (a.key(), a_pos).cmp(&(b.key(), b_pos)));

    let rows = found.len();
    let data_types: Vec<&DataType> = found.iter().map(|(_, f, _)| f.data_type()).collect();
    let type_names: Vec<String> = data_types.iter().map(|dt| types::type_name(dt)).collect();
    let text = |value: fn(&(FoundTable, Arc<_>, i32)) -> &str| {
        strings(found.iter().map(|row| Some(value(row))))
    };
    batch(vec![
        (
            "TABLE_CAT",
            strings(found.iter().map(|(t, _, _)| t.catalog())),
        ),
        (
            "TABLE_SCHEM",
            strings(found.iter().map(|(t, _, _)| t.schema())),
        ),
        ("TABLE_NAME", text(|(t, _, _)| &t.name)),
        ("COLUMN_NAME", text(|(_, f, _)| f.name())),
        (
            "DATA_TYPE",
            ints(
                data_types
                    .iter()
                    .map(|dt| Some(types::jdbc_type(types::type_id(dt)))),
            ),
        ),
        (
            "TYPE_NAME",
            strings(type_names.iter().map(|n| Some(n.as_str()))),
        ),
        (
            "COLUMN_SIZE",
            ints(data_types.iter().map(|dt| types::column_size(dt))),
        ),
        ("BUFFER_LENGTH", new_null_array(&DataType::Int8, rows)),
        (
            "DECIMAL_DIGITS",
            ints(data_types.iter().map(|dt| types::decimal_digits(dt))),
        ),
        (
            "NUM_PREC_RADIX",
            ints(
                data_types
                    .iter()
                    .map(|dt| types::num_prec_radix(types::type_id(dt))),
            ),
        ),
        (
            "NULLABLE",
            ints(found.iter().map(|(_, f, _)| {
                Some(if f.is_nullable() {
                    COLUMN_NULLABLE
                } else {
                    COLUMN_NO_NULLS
                })
            })),
        ),
        (
            "REMARKS",
            strings(
                found
                    .iter()
                    .map(|(_, f, _)| f.metadata().get("comment").map(String::as_str)),
            ),
        ),
        ("COLUMN_DEF", null_strings(rows)),
        ("SQL_DATA_TYPE", new_null_array(&DataType::Int32, rows)),
        ("SQL_DATETIME_SUB", new_null_array(&DataType::Int32, rows)),
        ("CHAR_OCTET_LENGTH", new_null_array(&DataType::Int32, rows)),
        (
            "ORDINAL_POSITION",
            ints(found.iter().map(|(_, _, position)| Some(*position))),
        ),
        (
            "IS_NULLABLE",
            strings(
                found
                    .iter()
                    .map(|(_, f, _)| Some(if f.is_nullable() { "YES" } else { "NO" })),
            ),
        ),
        ("SCOPE_CATALOG", null_strings(rows)),
        ("SCOPE_SCHEMA", null_strings(rows)),
        ("SCOPE_TABLE", null_strings(rows)),
        ("SOURCE_DATA_TYPE", new_null_array(&DataType::Int16, rows)),
        (
            "IS_AUTO_INCREMENT",
            strings(std::iter::repeat_n(Some("NO"), rows)),
        ),
    ])
}

/// `DatabaseMetaData.columnNoNulls` / `columnNullable`.
const COLUMN_NO_NULLS: i32 = 0;
const COLUMN_NULLABLE: i32 = 1;

/// The Hive types this engine presents or accepts in DDL and casts (CHAR and VARCHAR,
/// which DataFusion reads as strings), in Hive's `Type` order.
const TYPE_INFO_TYPES: [TTypeId; 21] = [
    TTypeId::NULL_TYPE,
    TTypeId::BOOLEAN_TYPE,
    TTypeId::TINYINT_TYPE,
    TTypeId::SMALLINT_TYPE,
    TTypeId::INT_TYPE,
    TTypeId::BIGINT_TYPE,
    TTypeId::FLOAT_TYPE,
    TTypeId::DOUBLE_TYPE,
    TTypeId::STRING_TYPE,
    TTypeId::CHAR_TYPE,
    TTypeId::VARCHAR_TYPE,
    TTypeId::DATE_TYPE,
    TTypeId::TIMESTAMP_TYPE,
    TTypeId::INTERVAL_YEAR_MONTH_TYPE,
    TTypeId::INTERVAL_DAY_TIME_TYPE,
    TTypeId::BINARY_TYPE,
    TTypeId::DECIMAL_TYPE,
    TTypeId::ARRAY_TYPE,
    TTypeId::MAP_TYPE,
    TTypeId::STRUCT_TYPE,
    TTypeId::UNION_TYPE,
];

/// `DatabaseMetaData.typeNullable`, `typeSearchable`, `typePredNone`.
const TYPE_NULLABLE: i16 = 1;
const TYPE_SEARCHABLE: i16 = 3;
const TYPE_PRED_NONE: i16 = 0;

/// GetTypeInfo: the 18 JDBC `getTypeInfo` columns, one row per type this engine
/// presents, with the values Hive's `Type` gives them.
pub fn type_info() -> Result<RecordBatch> {
    let ids = TYPE_INFO_TYPES;
    let rows = ids.len();
    let is_complex = |id: &TTypeId| {
        matches!(
            *id,
            TTypeId::ARRAY_TYPE | TTypeId::MAP_TYPE | TTypeId::STRUCT_TYPE | TTypeId::UNION_TYPE
        )
    };
    batch(vec![
        (
            "TYPE_NAME",
            strings(ids.iter().map(|id| Some(types::primitive_name(*id)))),
        ),
        (
            "DATA_TYPE",
            ints(ids.iter().map(|id| Some(types::jdbc_type(*id)))),
        ),
        (
            "PRECISION",
            ints(ids.iter().map(|id| types::max_precision(*id))),
        ),
        ("LITERAL_PREFIX", null_strings(rows)),
        ("LITERAL_SUFFIX", null_strings(rows)),
        ("CREATE_PARAMS", null_strings(rows)),
        (
            "NULLABLE",
            shorts(std::iter::repeat_n(Some(TYPE_NULLABLE), rows)),
        ),
        (
            "CASE_SENSITIVE",
            // Hive's `Type.isCaseSensitive`: STRING alone, not CHAR or VARCHAR.
            booleans(ids.iter().map(|id| Some(*id == TTypeId::STRING_TYPE))),
        ),
        (
            "SEARCHABLE",
            shorts(ids.iter().map(|id| {
                Some(if is_complex(id) {
                    TYPE_PRED_NONE
                } else {
                    TYPE_SEARCHABLE
                })
            })),
        ),
        (
            "UNSIGNED_ATTRIBUTE",
            booleans(ids.iter().map(|id| Some(!types::is_numeric(*id)))),
        ),
        (
            "FIXED_PREC_SCALE",
            booleans(std::iter::repeat_n(Some(false), rows)),
        ),
        (
            "AUTO_INCREMENT",
            booleans(std::iter::repeat_n(Some(false), rows)),
        ),
        ("LOCAL_TYPE_NAME", null_strings(rows)),
        ("MINIMUM_SCALE", shorts(std::iter::repeat_n(Some(0), rows))),
        ("MAXIMUM_SCALE", shorts(std::iter::repeat_n(Some(0), rows))),
        ("SQL_DATA_TYPE", new_null_array(&DataType::Int32, rows)),
        ("SQL_DATETIME_SUB", new_null_array(&DataType::Int32, rows)),
        (
            "NUM_PREC_RADIX",
            ints(ids.iter().map(|id| types::num_prec_radix(*id))),
        ),
    ])
}

/// `DatabaseMetaData.functionNoTable` / `functionReturnsTable`.
const FUNCTION_NO_TABLE: i32 = 1;
const FUNCTION_RETURNS_TABLE: i32 = 2;

/// GetFunctions: `FUNCTION_CAT`, `FUNCTION_SCHEM`, `FUNCTION_NAME`, `REMARKS`,
/// `FUNCTION_TYPE`, `SPECIFIC_NAME`, one row per name (aliases included) of the session's
/// scalar, aggregate, window and table functions, ordered by name. `REMARKS` is the
/// function's documented description; `SPECIFIC_NAME` its canonical name.
pub fn functions(
    ctx: &SessionContext,
    _catalog: Option<&str>,
    _schema_pattern: Option<&str>,
    function_pattern: &str,
) -> Result<RecordBatch> {
    struct Function {
        name: String,
        remarks: Option<String>,
        kind: i32,
        specific_name: String,
    }
    let mut all = Vec::new();
    {
        // The session state's lock is held only while names are copied out.
        let state = ctx.state_ref();
        let state = state.read();
        let described = |name: &String,
                         doc: Option<&datafusion::logical_expr::Documentation>,
                         canonical: &str,
                         kind| Function {
            name: name.clone(),
            remarks: doc.map(|d| d.description.clone()),
            kind,
            specific_name: canonical.to_owned(),
        };
        for (name, f) in state.scalar_functions() {
            all.push(described(
                name,
                f.documentation(),
                f.name(),
                FUNCTION_NO_TABLE,
            ));
        }
        for (name, f) in state.aggregate_functions() {
            all.push(described(
                name,
                f.documentation(),
                f.name(),
                FUNCTION_NO_TABLE,
            ));
        }
        for (name, f) in state.window_functions() {
            all.push(described(
                name,
                f.documentation(),
                f.name(),
                FUNCTION_NO_TABLE,
            ));
        }
        for (name, f) in state.higher_order_functions() {
            if crate::hive_functions::higher_order::is_internal(name) {
                continue;
            }
            all.push(described(
                name,
                f.documentation(),
                f.name(),
                FUNCTION_NO_TABLE,
            ));
        }
        for (name, f) in state.table_functions() {
            all.push(described(name, None, f.name(), FUNCTION_RETURNS_TABLE));
        }
    }
    let wanted = NamePattern::new(Some(function_pattern))
        .matches(all.iter().map(|f| f.name.clone()).collect())?;
    let mut found: Vec<Function> = all
        .into_iter()
        .zip(wanted)
        .filter_map(|(f, wanted)| wanted.then_some(f))
        .collect();
    found.sort_by(|a, b| (&a.name, &a.specific_name).cmp(&(&b.name, &b.specific_name)));
    let rows = found.len();
    batch(vec![
        ("FUNCTION_CAT", null_strings(rows)),
        ("FUNCTION_SCHEM", null_strings(rows)),
        (
            "FUNCTION_NAME",
            strings(found.iter().map(|f| Some(f.name.as_str()))),
        ),
        (
            "REMARKS",
            strings(found.iter().map(|f| f.remarks.as_deref())),
        ),
        ("FUNCTION_TYPE", ints(found.iter().map(|f| Some(f.kind)))),
        (
            "SPECIFIC_NAME",
            strings(found.iter().map(|f| Some(f.specific_name.as_str()))),
        ),
    ])
}

/// GetPrimaryKeys: `TABLE_CAT`, `TABLE_SCHEM`, `TABLE_NAME`, `COLUMN_NAME`, `KEQ_SEQ`,
/// `PK_NAME`, one row per column of each named table's primary key, ordered by table and
/// position in the key. `KEQ_SEQ` is Hive's own spelling of JDBC's `KEY_SEQ`, kept because
/// Hive JDBC reads the column by its position. The names are exact (not patterns); `None`
/// means any. DataFusion's keys have no names, so `PK_NAME` is NULL.
pub fn primary_keys(
    ctx: &SessionContext,
    catalog: Option<&str>,
    schema: Option<&str>,
    table: Option<&str>,
) -> Result<RecordBatch> {
    // Exact names are patterns that match only themselves; Hive JDBC sends its
    // connection's catalog, "", for "any", as beeline's `!primarykeys` does, and an empty
    // pattern matches everything.
    let (catalog, schema, table) = (
        catalog.map(literal_pattern),
        schema.map(literal_pattern),
        table.map(literal_pattern),
    );
    let mut keys: Vec<(FoundTable, String, i32)> = Vec::new();
    for found in matching_tables(ctx, catalog.as_deref(), schema.as_deref(), table.as_deref())? {
        let Some(constraints) = found.provider.constraints() else {
            continue;
        };
        let columns = found.provider.schema();
        for constraint in constraints.iter() {
            let Constraint::PrimaryKey(indices) = constraint else {
                continue;
            };
            for (index, seq) in indices.iter().zip(1..) {
                if let Some(field) = columns.fields().get(*index) {
                    keys.push((found.clone(), field.name().clone(), seq));
                }
            }
        }
    }
    let rows = keys.len();
    let text = |value: fn(&(FoundTable, String, i32)) -> &str| {
        strings(keys.iter().map(|key| Some(value(key))))
    };
    batch(vec![
        ("TABLE_CAT", text(|(t, _, _)| &t.catalog)),
        ("TABLE_SCHEM", text(|(t, _, _)| &t.schema)),
        ("TABLE_NAME", text(|(t, _, _)| &t.name)),
        ("COLUMN_NAME", text(|(_, column, _)| column)),
        ("KEQ_SEQ", ints(keys.iter().map(|(_, _, seq)| Some(*seq)))),
        ("PK_NAME", null_strings(rows)),
    ])
}

/// GetCrossReference: the 14 columns Hive returns (`PKTABLE_CAT` ... `DEFERRABILITY`, with
/// Hive's `KEQ_SEQ`), and no rows: DataFusion tables have no foreign keys.
pub fn cross_reference() -> Result<RecordBatch> {
    let text = |name| (name, null_strings(0));
    let int = |name| (name, new_null_array(&DataType::Int32, 0));
    batch(vec![
        text("PKTABLE_CAT"),
        text("PKTABLE_SCHEM"),
        text("PKTABLE_NAME"),
        text("PKCOLUMN_NAME"),
        text("FKTABLE_CAT"),
        text("FKTABLE_SCHEM"),
        text("FKTABLE_NAME"),
        text("FKCOLUMN_NAME"),
        int("KEQ_SEQ"),
        int("UPDATE_RULE"),
        int("DELETE_RULE"),
        text("FK_NAME"),
        text("PK_NAME"),
        int("DEFERRABILITY"),
    ])
}

/// A pattern that matches `name` alone: every character special to [`NamePattern`]
/// escaped.
fn literal_pattern(name: &str) -> String {
    let mut pattern = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '%' | '_' | '\\' | '*' | '|' | '.') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}

/// A JDBC search pattern with Hive's metastore extensions (`*`, `|`), matched without
/// regard to case by Arrow's ILIKE kernel (which implements `%`, `_` and `\` exactly as
/// JDBC defines them).
struct NamePattern {
    /// The ILIKE patterns of the alternatives; `None` when the pattern matches every name.
    alternatives: Option<Vec<String>>,
}

impl NamePattern {
    fn new(pattern: Option<&str>) -> Self {
        let pattern = pattern.filter(|p| !p.is_empty() && *p != "%" && *p != "*");
        Self {
            alternatives: pattern.map(like_alternatives),
        }
    }

    /// Whether each name matches, in order.
    fn matches(&self, names: Vec<String>) -> Result<Vec<bool>> {
        let Some(alternatives) = &self.alternatives else {
            return Ok(vec![true; names.len()]);
        };
        let names = StringArray::from(names);
        let mut wanted = vec![false; names.len()];
        for alternative in alternatives {
            let pattern = Scalar::new(StringArray::from(vec![alternative.as_str()]));
            let mask = ilike(&names, &pattern)?;
            for (wanted, matched) in wanted.iter_mut().zip(mask.iter()) {
                *wanted |= matched.unwrap_or(false);
            }
        }
        Ok(wanted)
    }

    /// The names that match, in order.
    fn filter(&self, names: Vec<String>) -> Result<Vec<String>> {
        let wanted = self.matches(names.clone())?;
        Ok(names
            .into_iter()
            .zip(wanted)
            .filter_map(|(name, wanted)| wanted.then_some(name))
            .collect())
    }
}

/// A pattern as ILIKE patterns, one per `|`-separated alternative, with each unescaped `*`
/// as `%` and `.` as `_`: Hive's metastore turns `*` into the regular expression `.*` and
/// matches with it, so `.` is any one character and `.*` any non-empty run. `\*`, `\|`
/// and `\.` stay literal.
fn like_alternatives(pattern: &str) -> Vec<String> {
    let mut alternatives = vec![String::new()];
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        let current = alternatives.last_mut().expect("never empty");
        match c {
            '\\' => {
                current.push('\\');
                current.extend(chars.next());
            }
            '*' => current.push('%'),
            '.' => current.push('_'),
            '|' => alternatives.push(String::new()),
            c => current.push(c),
        }
    }
    alternatives
}

/// A schema found by name.
struct FoundSchema {
    catalog: String,
    schema: String,
    provider: Arc<dyn SchemaProvider>,
}

/// The schemas whose catalog and schema names match, ordered by catalog then schema.
fn matching_schemas(
    ctx: &SessionContext,
    catalog: Option<&str>,
    schema_pattern: Option<&str>,
) -> Result<Vec<FoundSchema>> {
    let schema_pattern = NamePattern::new(schema_pattern);
    // The engine's catalogs: a session's temporary views are listed apart.
    let engine = session_catalogs(ctx).0;
    let mut catalogs = NamePattern::new(catalog).filter(engine.catalog_names())?;
    catalogs.sort();
    let mut found = Vec::new();
    for catalog_name in catalogs {
        let Some(catalog) = engine.catalog(&catalog_name) else {
            continue; // dropped since the names were read
        };
        let mut schemas = schema_pattern.filter(catalog.schema_names())?;
        schemas.sort();
        for schema in schemas {
            if let Some(provider) = catalog.schema(&schema) {
                found.push(FoundSchema {
                    catalog: catalog_name.clone(),
                    schema,
                    provider,
                });
            }
        }
    }
    Ok(found)
}

/// A table found by name.
#[derive(Clone)]
struct FoundTable {
    catalog: String,
    schema: String,
    name: String,
    provider: Arc<dyn TableProvider>,
    /// One of the session's temporary views: in no catalog or schema (NULL), as Spark
    /// lists them.
    temporary: bool,
}

impl FoundTable {
    /// The JDBC order: a NULL catalog and schema (temporary views) first.
    fn key(&self) -> (bool, &str, &str, &str) {
        (!self.temporary, &self.catalog, &self.schema, &self.name)
    }

    fn catalog(&self) -> Option<&str> {
        (!self.temporary).then_some(self.catalog.as_str())
    }

    fn schema(&self) -> Option<&str> {
        (!self.temporary).then_some(self.schema.as_str())
    }
}

/// The session's temporary views whose names match, listed by GetTables and GetColumns
/// whatever the catalog and schema patterns (they belong to neither), as the Spark Thrift
/// Server lists them.
fn temporary_views(ctx: &SessionContext, table_pattern: Option<&str>) -> Result<Vec<FoundTable>> {
    let Some(views) = session_catalogs(ctx).1 else {
        return Ok(Vec::new());
    };
    if views.is_empty() {
        return Ok(Vec::new());
    }
    let names = NamePattern::new(table_pattern).filter(views.names())?;
    Ok(names
        .into_iter()
        .filter_map(|name| {
            let provider = views.get(&name)?;
            Some(FoundTable {
                catalog: String::new(),
                schema: String::new(),
                name,
                provider,
                temporary: true,
            })
        })
        .collect())
}

/// The tables whose catalog, schema and table names match, ordered by those names.
///
/// `SchemaProvider::table` is async in DataFusion, because a provider may look a table up
/// remotely. The providers of this engine (memory, listing, the lazily generated TPC-H
/// tables) answer without waiting on I/O, so the lookup is driven to completion here,
/// which keeps these functions usable from the synchronous metadata operations.
fn matching_tables(
    ctx: &SessionContext,
    catalog: Option<&str>,
    schema_pattern: Option<&str>,
    table_pattern: Option<&str>,
) -> Result<Vec<FoundTable>> {
    let table_pattern = NamePattern::new(table_pattern);
    let mut found = Vec::new();
    for schema in matching_schemas(ctx, catalog, schema_pattern)? {
        let mut names = table_pattern.filter(schema.provider.table_names())?;
        names.sort();
        for name in names {
            let provider = futures::executor::block_on(schema.provider.table(&name))?;
            if let Some(provider) = provider {
                found.push(FoundTable {
                    catalog: schema.catalog.clone(),
                    schema: schema.schema.clone(),
                    name,
                    provider,
                    temporary: false,
                });
            }
        }
    }
    Ok(found)
}

/// A batch of nullable columns, as Hive's metadata result sets declare them.
fn batch(columns: Vec<(&str, ArrayRef)>) -> Result<RecordBatch> {
    Ok(RecordBatch::try_from_iter_with_nullable(
        columns.into_iter().map(|(name, array)| (name, array, true)),
    )?)
}

fn strings<'a>(values: impl IntoIterator<Item = Option<&'a str>>) -> ArrayRef {
    Arc::new(values.into_iter().collect::<StringArray>())
}

fn null_strings(rows: usize) -> ArrayRef {
    new_null_array(&DataType::Utf8, rows)
}

fn ints(values: impl IntoIterator<Item = Option<i32>>) -> ArrayRef {
    Arc::new(values.into_iter().collect::<Int32Array>())
}

fn shorts(values: impl IntoIterator<Item = Option<i16>>) -> ArrayRef {
    Arc::new(values.into_iter().collect::<Int16Array>())
}

fn booleans(values: impl IntoIterator<Item = Option<bool>>) -> ArrayRef {
    Arc::new(values.into_iter().collect::<BooleanArray>())
}
