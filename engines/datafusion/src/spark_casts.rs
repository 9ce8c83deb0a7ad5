//! Conversions Spark SQL (with `spark.sql.ansi.enabled=false`, as Hive) makes that
//! DataFusion refuses or makes otherwise, made as Spark makes them.
//!
//! - `CAST(x AS STRING)` is Spark's text: of an array, a map or a struct `[1, 2]`,
//!   `{a -> 1}`, `{1, x}`; of a double `1.0E20`, of a timestamp `2024-01-02 03:04:05.1`
//!   ([`spark_text`]).
//! - A string beside a number in arithmetic or a comparison is read as a number: `1 + '2'`
//!   is 3.0, `'10' > 9` true, `'10' BETWEEN 9 AND 11` true, `5 IN ('5.0')` false (as strings)
//!   ([`string_operands`]); `-'5'` is -5.0 ([`signed_strings`]).
//! - `CAST(s AS DOUBLE)` of a string reads it as Java does: `'1d'` is 1.0
//!   ([`string_to_double`]).
//! - `CAST(x AS DECIMAL(p, s))` of a double reads its shortest decimal text, rounded half
//!   up: `CAST(1.005D AS DECIMAL(10,2))` is 1.01 ([`double_to_decimal`]); of a string with an
//!   exponent, its number: `CAST('-4e1' AS DECIMAL(5,1))` is -40.0 ([`string_to_decimal`]).
//! - `coalesce`, `if`, `CASE` ... of a string and numbers, dates or timestamps give a string:
//!   `coalesce(1, 'a')` is `'1'` ([`common_types`]).
//! - `sum(NULL)` and `avg(NULL)` are a NULL `DOUBLE` ([`null_numbers`]).
//! - `CAST(s AS TIMESTAMP)` and `CAST(s AS DATE)` read the forms Spark reads:
//!   `'2024-01-05 10:11'`, `'2024-1-5'`, `'2024-01-05 10:00:00'` as a date
//!   ([`datetime_strings`]).
//! - A string given to a function that takes numbers is a `DOUBLE`: `sum(s)`, `avg(s)`,
//!   `abs(s)`, `round(s, 1)` of a string column ([`argument_casts`]).
//! - `row_number()`, `rank()`, `dense_rank()` and `ntile(n)` are `INT`s ([`integer_ranks`]).

pub mod argument_casts;
pub mod common_types;
pub mod datetime_strings;
pub mod double_to_decimal;
pub mod epoch_seconds;
pub mod integer_ranks;
pub mod null_numbers;
pub mod signed_strings;
pub mod spark_text;
pub mod string_operands;
pub mod string_to_decimal;
pub mod string_to_double;

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::logical_expr::expr::{Cast, TryCast};
use datafusion::logical_expr::Expr;
use datafusion::optimizer::{Analyzer, AnalyzerRule};

pub use common_types::STRING_COMMON_TYPES;
pub use datetime_strings::SPARK_DATETIME_CASTS;
pub use double_to_decimal::SPARK_DECIMAL_CASTS;
pub use epoch_seconds::SPARK_EPOCH_CASTS;
pub use null_numbers::NULL_NUMBERS;
pub use spark_text::SPARK_TEXT_CASTS;
pub use string_operands::{StringOperands, STRING_RANGES_AND_LISTS};
pub use string_to_decimal::SPARK_STRING_DECIMAL_CASTS;
pub use string_to_double::SPARK_DOUBLE_CASTS;

/// DataFusion's analyzer rules with [`STRING_RANGES_AND_LISTS`], [`STRING_COMMON_TYPES`] and
/// [`NULL_NUMBERS`] before them, which must see the strings and NULLs before type coercion
/// casts them to the numbers' type (or refuses them).
pub fn analyzer_rules() -> Vec<Arc<dyn AnalyzerRule + Send + Sync>> {
    let mut rules = Analyzer::new().rules;
    rules.insert(0, Arc::new(NULL_NUMBERS));
    rules.insert(0, Arc::new(STRING_COMMON_TYPES));
    rules.insert(0, Arc::new(STRING_RANGES_AND_LISTS));
    rules
}

/// The value a `CAST` or `TRY_CAST` converts and the type it converts to; `None` for any
/// other expression.
fn cast_parts(expr: &Expr) -> Option<(&Expr, &DataType)> {
    match expr {
        Expr::Cast(Cast { expr, field }) | Expr::TryCast(TryCast { expr, field }) => {
            Some((expr, field.data_type()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
