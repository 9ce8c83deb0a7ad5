//! Conversions Spark SQL (with `spark.sql.ansi.enabled=false`, as Hive) makes that
//! DataFusion refuses, made as Spark makes them.
//!
//! - `CAST(x AS STRING)` of an array, a map or a struct is Spark's text, `[1, 2]`,
//!   `{a -> 1}`, `{1, x}` ([`nested_to_string`]).

pub mod nested_to_string;

pub use nested_to_string::NestedToString;

#[cfg(test)]
mod tests;
