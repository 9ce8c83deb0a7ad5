//! Conversions Spark SQL (with `spark.sql.ansi.enabled=false`, as Hive) makes that
//! DataFusion refuses, made as Spark makes them.
//!
//! - `CAST(x AS STRING)` of an array, a map or a struct is Spark's text, `[1, 2]`,
//!   `{a -> 1}`, `{1, x}` ([`nested_to_string`]).
//! - A string beside a number in arithmetic or a comparison is read as a number: `1 + '2'`
//!   is 3.0, `'10' > 9` true ([`string_operands`]).

pub mod nested_to_string;
pub mod string_operands;

pub use nested_to_string::NestedToString;
pub use string_operands::StringOperands;

#[cfg(test)]
mod tests;
