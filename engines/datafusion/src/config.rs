//! The engine's configuration file: tables to register at start and the demo data.
//!
//! ```yaml
//! tables:
//!   trips: {format: parquet, location: /data/trips/}
//!   sales.orders: {format: csv, location: /data/orders.csv, has-header: true}
//! demo-data: true
//! tpch-scale: 0.1
//! warehouse: /srv/kumiho/warehouse   # or s3://bucket/warehouse/
//! time-zone: America/Los_Angeles        # the zone sessions start in; UTC by default
//! ```
//!
//! A table's key is `name` (database `default`) or `database.name`; its database is
//! created when missing. The gateway writes this file from a cluster's
//! `engine.datafusion` section, so the names follow the cluster configs' kebab-case.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// Everything the configuration file can say. Every field has a default, so an empty file
/// (or none) is a valid configuration.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct EngineConfig {
    /// Tables registered at start, by `name` or `database.name`.
    pub tables: BTreeMap<String, TableConfig>,
    /// Whether the TPC-H demo database `tpch` exists (its tables are generated on use).
    pub demo_data: bool,
    /// TPC-H scale factor of the demo data; 0 turns the demo data off.
    pub tpch_scale: f64,
    /// The warehouse: where `CREATE DATABASE` and `CREATE TABLE` keep databases and tables
    /// (a local path or an object-store URL); None: such tables live in memory and die
    /// with the engine ([`crate::warehouse`]).
    pub warehouse: Option<String>,
    /// The time zone every session starts in (Spark's `spark.sql.session.timeZone` for the
    /// whole engine): a region, an offset or `LOCAL`; None: UTC ([`crate::time_zones`]).
    pub time_zone: Option<String>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            tables: BTreeMap::new(),
            demo_data: true,
            tpch_scale: DEFAULT_TPCH_SCALE,
            warehouse: None,
            time_zone: None,
        }
    }
}

/// The demo data's default scale: about 860,000 rows in all, generated in well under a second.
pub const DEFAULT_TPCH_SCALE: f64 = 0.1;

/// One table read from files.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct TableConfig {
    pub format: TableFormat,
    /// A local path (file or directory), `file://`, or an object store URL: `s3://`, `gs://`,
    /// `az://` (and `abfs(s)://`, `adl://`) or `http(s)://` (see `object_stores`).
    pub location: String,
    /// CSV only: whether the first line names the columns (default true).
    #[serde(default)]
    pub has_header: Option<bool>,
    /// CSV only: the field delimiter, one character (default `,`).
    #[serde(default)]
    pub delimiter: Option<char>,
    /// Only files with this extension are read from a directory (default: the format's).
    #[serde(default)]
    pub file_extension: Option<String>,
}

/// File formats a configured table may have.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TableFormat {
    Csv,
    Parquet,
    Json,
}

/// A configuration that cannot be used, with what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read engine config file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("engine config file {path} is invalid: {source}")]
    Parse {
        path: String,
        source: serde_yaml_ng::Error,
    },
    #[error("engine config file {path}: {message}")]
    Invalid { path: String, message: String },
}

impl EngineConfig {
    /// Reads and validates a YAML configuration file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: shown.clone(),
            source,
        })?;
        let config = Self::parse(&text).map_err(|source| ConfigError::Parse {
            path: shown.clone(),
            source,
        })?;
        config.validate().map_err(|message| ConfigError::Invalid {
            path: shown,
            message,
        })?;
        Ok(config)
    }

    /// Parses YAML text; an empty document is the default configuration.
    pub fn parse(text: &str) -> Result<Self, serde_yaml_ng::Error> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        serde_yaml_ng::from_str(text)
    }

    /// Checks what serde cannot: the scale, the table names and the time zone.
    pub fn validate(&self) -> Result<(), String> {
        if !self.tpch_scale.is_finite() || self.tpch_scale < 0.0 {
            return Err(format!(
                "tpch-scale must be 0 (no demo data) or a positive number, not {}",
                self.tpch_scale
            ));
        }
        for name in self.tables.keys() {
            split_table_name(name)?;
        }
        if let Some(zone) = &self.time_zone {
            crate::time_zones::session_setting(zone).map_err(|e| format!("time-zone: {e}"))?;
        }
        Ok(())
    }

    /// Whether the TPC-H demo database should exist.
    pub fn demo_enabled(&self) -> bool {
        self.demo_data && self.tpch_scale > 0.0
    }
}

/// Splits a configured table key into database and table: `t` is `default.t`.
pub fn split_table_name(name: &str) -> Result<(&str, &str), String> {
    let (database, table) = match name.split_once('.') {
        Some((database, table)) => (database, table),
        None => (crate::catalog::DEFAULT_DATABASE, name),
    };
    let valid = |part: &str| !part.is_empty() && !part.contains('.');
    if valid(database) && valid(table) {
        Ok((database, table))
    } else {
        Err(format!(
            "table name '{name}' must be 'table' or 'database.table'"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tables_and_demo_settings() {
        let config = EngineConfig::parse(
            "tables:\n  trips: {format: parquet, location: /data/trips/}\n  sales.orders: {format: csv, location: /o.csv, has-header: false, delimiter: '|'}\ndemo-data: false\ntpch-scale: 1\n",
        )
        .unwrap();
        assert!(!config.demo_enabled());
        assert_eq!(config.tpch_scale, 1.0);
        let orders = &config.tables["sales.orders"];
        assert_eq!(orders.format, TableFormat::Csv);
        assert_eq!(orders.has_header, Some(false));
        assert_eq!(orders.delimiter, Some('|'));
        assert_eq!(config.tables["trips"].format, TableFormat::Parquet);
        config.validate().unwrap();
    }

    #[test]
    fn empty_file_is_the_default() {
        let config = EngineConfig::parse("\n").unwrap();
        assert_eq!(config, EngineConfig::default());
        assert!(config.demo_enabled());
    }

    #[test]
    fn unknown_keys_and_formats_are_errors() {
        assert!(EngineConfig::parse("tabels: {}").is_err());
        assert!(EngineConfig::parse("tables: {t: {format: orc, location: /x}}").is_err());
    }

    #[test]
    fn bad_names_and_scales_are_refused() {
        let mut config =
            EngineConfig::parse("tables: {a.b.c: {format: json, location: /x}}").unwrap();
        assert!(config.validate().unwrap_err().contains("a.b.c"));
        config.tables.clear();
        config.tpch_scale = -1.0;
        assert!(config.validate().is_err());
        let config = EngineConfig::parse("time-zone: Mars/Olympus").unwrap();
        let error = config.validate().unwrap_err();
        assert!(
            error.starts_with("time-zone: 'Mars/Olympus' is not a time zone"),
            "{error}"
        );
        let config = EngineConfig::parse("time-zone: America/Los_Angeles").unwrap();
        assert_eq!(config.validate(), Ok(()));
    }

    #[test]
    fn table_names_default_to_the_default_database() {
        assert_eq!(split_table_name("t").unwrap(), ("default", "t"));
        assert_eq!(split_table_name("db.t").unwrap(), ("db", "t"));
        assert!(split_table_name(".t").is_err());
    }
}
