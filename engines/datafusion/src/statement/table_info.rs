//! `SHOW TBLPROPERTIES` and `SHOW PARTITIONS`, in Hive's result shapes.
//!
//! DataFusion parses both as `SHOW <variable>` and answers "is not a variable", which tells
//! a Hive user nothing; BI tools send them while browsing a table.

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::datasource::listing::ListingTable;
use datafusion::error::{DataFusionError, Result};

use super::{qualified, quote_identifier, string_columns, string_rows, table_provider, Executed};
use crate::catalog::CATALOG;
use crate::session::Session;

/// Hive's name for the directory of rows whose partition value is NULL.
const DEFAULT_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// `SHOW TBLPROPERTIES t [('key')]`: the engine keeps no table properties (DataFusion's
/// tables have none; `CREATE EXTERNAL TABLE ... OPTIONS` configure the reader and are not
/// kept as properties), so the list is empty, as for a Hive table created without
/// TBLPROPERTIES. A key asked for answers Hive's and Spark's "does not have property" row.
/// The table must exist.
pub(super) async fn show_tblproperties(
    session: &Session,
    table: &[String],
    key: Option<&str>,
) -> Result<Executed> {
    table_provider(session, table).await?;
    let (names, values) = match key {
        None => (Vec::new(), Vec::new()),
        Some(key) => {
            let name = qualified(session, table).join(".");
            (
                vec![key.to_owned()],
                vec![format!("Table {name} does not have property: {key}")],
            )
        }
    };
    string_columns(vec![("prpt_name", names), ("prpt_value", values)])
}

/// `SHOW PARTITIONS t [PARTITION (col='v', ...)]`: the partitions of a table declared with
/// `PARTITIONED BY` over Hive-style directories (`col=value/`), read from the table's files
/// (`SELECT DISTINCT` of the partition columns, which reads no data columns), sorted, as
/// `col=value/col2=value2`; a spec keeps those that match it. Any other table has none,
/// and is refused as Hive refuses it.
pub(super) async fn show_partitions(
    session: &Session,
    table: &[String],
    spec: &[(String, String)],
) -> Result<Executed> {
    let provider = table_provider(session, table).await?;
    let name = qualified(session, table);
    let columns: Vec<String> = provider
        .downcast_ref::<ListingTable>()
        .map(|listing| {
            listing
                .options()
                .table_partition_cols
                .iter()
                .map(|(column, _)| column.clone())
                .collect()
        })
        .unwrap_or_default();
    if columns.is_empty() {
        return Err(DataFusionError::Plan(format!(
            "table {} is not partitioned, so it has no partitions to show; only tables \
             created with PARTITIONED BY over directories named column=value have them",
            name.join(".")
        )));
    }
    let mut filters = Vec::new();
    for (column, value) in spec {
        let Some(column) = columns.iter().find(|c| c.eq_ignore_ascii_case(column)) else {
            return Err(DataFusionError::Plan(format!(
                "'{column}' is not a partition column of {}; its partition columns are {}",
                name.join("."),
                columns.join(", ")
            )));
        };
        filters.push(format!(
            "CAST({} AS VARCHAR) = '{}'",
            quote_identifier(column),
            value.replace('\'', "''")
        ));
    }
    let select: Vec<String> = columns
        .iter()
        .map(|c| format!("CAST({} AS VARCHAR)", quote_identifier(c)))
        .collect();
    let from = [CATALOG, &name[0], &name[1]]
        .iter()
        .map(|part| quote_identifier(part))
        .collect::<Vec<_>>()
        .join(".");
    let mut sql = format!("SELECT DISTINCT {} FROM {from}", select.join(", "));
    if !filters.is_empty() {
        sql.push_str(&format!(" WHERE {}", filters.join(" AND ")));
    }
    let order: Vec<String> = (1..=columns.len()).map(|i| i.to_string()).collect();
    sql.push_str(&format!(" ORDER BY {}", order.join(", ")));
    let batches = session.context().sql(&sql).await?.collect().await?;
    let mut partitions = Vec::new();
    for batch in &batches {
        // Utf8 or Utf8View, as DataFusion casts to VARCHAR; read as Utf8 either way.
        let values = batch
            .columns()
            .iter()
            .map(|values| cast(values, &DataType::Utf8))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        for row in 0..batch.num_rows() {
            let parts: Vec<String> = columns
                .iter()
                .zip(&values)
                .map(|(column, values)| {
                    let values = values.as_string::<i32>();
                    let value = if values.is_null(row) {
                        DEFAULT_PARTITION
                    } else {
                        values.value(row)
                    };
                    format!("{column}={value}")
                })
                .collect();
            partitions.push(parts.join("/"));
        }
    }
    string_rows("partition", partitions)
}

#[cfg(test)]
mod tests;
