//! What the warehouse keeps about a table or database, in a hidden JSON file beside it.
//!
//! A table's file is `TABLE_DIR/.kumiho-table`; a database's `DB.db/.kumiho-database`.
//! Their names start with a dot, so Hive, Spark and DataFusion's listing (which reads
//! only files with the format's extension) never take them for data.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::error::{DataFusionError, Result};
use serde::{Deserialize, Serialize};

/// The file holding a table's [`TableMeta`], in the table's warehouse directory.
pub const TABLE_FILE: &str = ".kumiho-table";
/// The file marking a database directory, holding its [`DatabaseMeta`].
pub const DATABASE_FILE: &str = ".kumiho-database";

/// Who owns a table's files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TableKind {
    /// The warehouse owns the files: DROP TABLE deletes them.
    Managed,
    /// Files elsewhere (`CREATE EXTERNAL TABLE ... LOCATION`): DROP TABLE leaves them.
    External,
    /// A view: no files, its SQL.
    View,
}

/// The file formats of warehouse tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoredFormat {
    Parquet,
    /// Comma-separated text (`STORED AS CSV`, Spark's `USING csv`).
    Csv,
    /// Hive's delimited text: fields separated by Ctrl-A unless `ROW FORMAT DELIMITED`
    /// says otherwise, no header.
    Textfile,
    /// One JSON object per line.
    Json,
    /// Apache ORC, Hive's usual format ([`super::orc`]).
    Orc,
}

impl StoredFormat {
    /// The format named in `STORED AS` / `USING`; other formats are refused, saying which
    /// the engine has.
    pub fn from_name(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "parquet" => Ok(StoredFormat::Parquet),
            "csv" => Ok(StoredFormat::Csv),
            "textfile" | "text" => Ok(StoredFormat::Textfile),
            "json" | "jsonfile" => Ok(StoredFormat::Json),
            "orc" | "orcfile" => Ok(StoredFormat::Orc),
            other => Err(DataFusionError::Plan(format!(
                "STORED AS {}: the DataFusion engine does not read or write that format; \
                 use PARQUET (the default), ORC, TEXTFILE, CSV or JSON",
                other.to_uppercase()
            ))),
        }
    }

    /// The name `SHOW CREATE TABLE` writes after `STORED AS`.
    pub fn name(self) -> &'static str {
        match self {
            StoredFormat::Parquet => "PARQUET",
            StoredFormat::Csv => "CSV",
            StoredFormat::Textfile => "TEXTFILE",
            StoredFormat::Json => "JSON",
            StoredFormat::Orc => "ORC",
        }
    }

    /// The field delimiter of a text format when the table names none.
    pub fn default_delimiter(self) -> u8 {
        match self {
            StoredFormat::Textfile => 0x01,
            _ => b',',
        }
    }
}

/// One column as kept: its Arrow type in Arrow's own notation (`Int32`, `Utf8`,
/// `Decimal128(10, 2)`), which reads back exactly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnMeta {
    pub name: String,
    #[serde(rename = "type")]
    pub data_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

impl ColumnMeta {
    pub fn from_field(field: &Field) -> Self {
        Self {
            name: field.name().clone(),
            data_type: field.data_type().to_string(),
            comment: field.metadata().get("comment").cloned(),
        }
    }

    pub fn data_type(&self) -> Result<DataType> {
        DataType::from_str(&self.data_type).map_err(|e| {
            DataFusionError::Internal(format!(
                "column '{}' has type '{}' in the warehouse's metadata, which does not read \
                 back: {e}",
                self.name, self.data_type
            ))
        })
    }

    pub fn to_field(&self) -> Result<Field> {
        let field = Field::new(&self.name, self.data_type()?, true);
        Ok(match &self.comment {
            Some(comment) => field.with_metadata(
                [("comment".to_owned(), comment.clone())]
                    .into_iter()
                    .collect(),
            ),
            None => field,
        })
    }
}

/// Everything the warehouse keeps about one table or view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableMeta {
    pub kind: TableKind,
    /// None for a view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StoredFormat>,
    /// The columns held in the files (a view's result columns), in order.
    pub columns: Vec<ColumnMeta>,
    /// Hive's partition columns: directories `col=value/`, after the others in the schema.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partition_columns: Vec<ColumnMeta>,
    /// Where the files are, as a URL; None: the table's warehouse directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// CSV and TEXTFILE: the field delimiter (default: the format's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<char>,
    /// CSV and TEXTFILE: whether the first line names the columns (files the warehouse
    /// writes have none).
    #[serde(default)]
    pub has_header: bool,
    /// Only files with this extension are data (default: the format's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_extension: Option<String>,
    /// A view's query, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_sql: Option<String>,
    /// The primary key's columns, in key order (`PRIMARY KEY (a, b)`): informational, as
    /// in Hive (not enforced); JDBC's getPrimaryKeys reports them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub primary_key: Vec<String>,
    /// Hive's table properties (`TBLPROPERTIES (...)`, `ALTER TABLE ... SET
    /// TBLPROPERTIES`), as given; the comment is [`Self::comment`], and the file counts and
    /// sizes are read from the files when shown ([`super::properties`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, String>,
    /// The user who created the table (its session's), Hive's owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// What `ANALYZE TABLE ... COMPUTE STATISTICS` counted, by partition directory
    /// (`dt=2024-01-01/hr=1`; `""` the whole table). Shown only while the files are those
    /// counted ([`FileStatistics::describes`]), so that a later write never leaves a stale
    /// row count on show.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub statistics: BTreeMap<String, RowStatistics>,
}

/// What a directory's data files add up to, read from a listing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStatistics {
    /// Hive's `numFiles`.
    pub files: u64,
    /// Hive's `totalSize`, in bytes.
    pub bytes: u64,
    /// The smallest and largest file, in bytes (0 without files).
    pub min_bytes: u64,
    pub max_bytes: u64,
    /// The latest modification of a file, in milliseconds since the epoch (0 without files).
    pub last_modified_ms: i64,
}

/// A row count `ANALYZE TABLE` took, with the files it was taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowStatistics {
    /// Hive's `numRows`.
    pub rows: u64,
    /// The files counted: the count holds while the directory's files still add up to these.
    pub files: FileStatistics,
}

impl RowStatistics {
    /// Whether the count still describes a directory whose files are now `current`: no file
    /// was added, removed or rewritten since.
    pub fn describes(&self, current: &FileStatistics) -> bool {
        self.files == *current
    }
}

impl TableMeta {
    /// Refuses a view for what only a table has: `name is a view; {why}`.
    pub fn table_only(&self, name: &impl std::fmt::Display, why: &str) -> Result<()> {
        match self.kind {
            TableKind::View => Err(DataFusionError::Plan(format!("{name} is a view; {why}"))),
            _ => Ok(()),
        }
    }

    /// A new table's or view's metadata: no location, comment, properties or statistics.
    pub fn new(kind: TableKind, format: Option<StoredFormat>, columns: Vec<ColumnMeta>) -> Self {
        Self {
            kind,
            format,
            columns,
            partition_columns: Vec::new(),
            location: None,
            comment: None,
            delimiter: None,
            has_header: false,
            file_extension: None,
            view_sql: None,
            primary_key: Vec::new(),
            properties: BTreeMap::new(),
            owner: None,
            statistics: BTreeMap::new(),
        }
    }

    /// The columns in the files, as an Arrow schema.
    pub fn file_schema(&self) -> Result<SchemaRef> {
        let fields = self
            .columns
            .iter()
            .map(ColumnMeta::to_field)
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(Schema::new(fields)))
    }

    /// The partition columns and their types.
    pub fn partition_types(&self) -> Result<Vec<(String, DataType)>> {
        self.partition_columns
            .iter()
            .map(|c| Ok((c.name.clone(), c.data_type()?)))
            .collect()
    }

    /// Every column: the files' then the partition columns, as readers see the table.
    pub fn full_schema(&self) -> Result<SchemaRef> {
        let fields = self
            .columns
            .iter()
            .chain(&self.partition_columns)
            .map(ColumnMeta::to_field)
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(Schema::new(fields)))
    }

    /// The field delimiter of a text table, as a byte.
    pub fn delimiter_byte(&self) -> Result<u8> {
        let format = self.format.unwrap_or(StoredFormat::Csv);
        match self.delimiter {
            None => Ok(format.default_delimiter()),
            Some(c) => u8::try_from(c).ok().filter(u8::is_ascii).ok_or_else(|| {
                DataFusionError::Plan(format!("field delimiter '{c}' is not one ASCII character"))
            }),
        }
    }

    pub fn to_json(&self) -> Result<Vec<u8>> {
        serde_json::to_vec_pretty(self)
            .map_err(|e| DataFusionError::Internal(format!("table metadata as JSON: {e}")))
    }

    pub fn from_json(bytes: &[u8], what: &str) -> Result<Self> {
        serde_json::from_slice(bytes).map_err(|e| {
            DataFusionError::Execution(format!(
                "the warehouse's metadata of {what} is unreadable: {e}"
            ))
        })
    }
}

/// What the warehouse keeps about a database.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatabaseMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Where its managed tables' files go (`CREATE DATABASE ... LOCATION`); None: `DB.db/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}
