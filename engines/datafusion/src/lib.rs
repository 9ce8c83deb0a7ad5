//! Kumiho's DataFusion engine: a HiveServer2 server over Apache DataFusion.
//!
//! A tour, from the outside in:
//!
//! - `main.rs`: the `kumiho-engine` binary: flags, logging, listening, shutdown.
//! - [`config`]: the YAML file naming the tables to register and the demo data's scale.
//! - [`catalog`]: the one catalog all sessions share (databases are DataFusion schemas);
//!   [`catalog::tpch`] generates the TPC-H demo tables as they are scanned.
//! - [`engine`]: sessions, operations and the flow of each HiveServer2 call.
//! - [`idle`]: when a launched engine has been without sessions long enough to stop.
//! - [`session`]: one DataFusion context per session over the shared catalog, with the
//!   session's own settings, user and temporary views ([`session::temporary`]).
//! - [`functions`]: Hive functions DataFusion lacks (`current_database()`,
//!   `current_user()`).
//! - [`hive_functions`]: Hive's everyday built-ins DataFusion lacks or names differently
//!   (`if`, `year`, `date_format` with Java patterns, `collect_list`, ...).
//! - [`hive_syntax`]: Hive's 0-based array subscripts, `RLIKE`, `LATERAL VIEW explode`, and
//!   result columns named by their SQL.
//! - [`spark_aggregates`]: every aggregate computed again over a sliding window frame where
//!   it cannot take rows back, and reading strings as numbers where Spark does.
//! - [`spark_casts`]: conversions Spark makes that DataFusion refuses or makes otherwise
//!   (a value cast to a string, a string in arithmetic).
//! - [`time_zones`]: the session's zone, in which timestamps are wall-clock times, and Java's
//!   zone names.
//! - [`statement`]: Hive commands (`USE`, `SHOW TABLES`, `SET`, ...) and DataFusion planning.
//! - [`variables`]: Hive's `${var}` substitution in statements.
//! - [`warehouse`]: databases and managed tables kept as files under the warehouse
//!   directory (Hive's layout), shared by every engine of a cluster.
//! - `words`: the token scanner both read their statements with.
//! - `wildcards`: the one matcher of `SHOW ... LIKE` patterns and LOAD DATA's file globs.
//! - [`operation`]: the state machine of an operation, its result cursor and its log.
//! - [`service`]: the HiveServer2 RPCs, translated to [`engine::Engine`] calls.
//! - [`types`]: Arrow types as HiveServer2 types.
//! - [`rowset`]: Arrow batches encoded as columnar Thrift row sets.
//! - [`metadata`]: the JDBC metadata results (GetTables, GetColumns, ...).
#![forbid(unsafe_code)]

pub mod catalog;
pub mod config;
pub mod engine;
pub mod functions;
pub mod hive_functions;
pub mod hive_syntax;
pub mod idle;
pub mod metadata;
pub mod object_stores;
pub mod operation;
pub mod rowset;
pub mod service;
pub mod session;
pub mod spark_aggregates;
pub mod spark_casts;
pub mod statement;
pub mod time_zones;
pub mod types;
pub mod variables;
pub mod warehouse;
mod wildcards;
mod words;

#[cfg(test)]
mod test_util;
