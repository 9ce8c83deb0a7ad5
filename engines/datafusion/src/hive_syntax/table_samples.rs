//! `TABLESAMPLE`, which DataFusion parses and then ignores (a sampled query read every row),
//! read as the rows Spark samples:
//!
//! - `t TABLESAMPLE (n ROWS)`: the first `n` rows of `t` (`LIMIT n`);
//! - `t TABLESAMPLE (p PERCENT)`: each row with the chance `p / 100` (Spark's Bernoulli
//!   sample, `rand() < p / 100`); `REPEATABLE (seed)` seeds it;
//! - `t TABLESAMPLE (BUCKET x OUT OF y)`: each row with the chance `x / y`, as Spark; with
//!   `ON column`, Hive's bucket of the column's hash, `pmod(hash(column), y) = x - 1` (Spark
//!   refuses `ON`).
//!
//! Each is `t` replaced by `(SELECT * FROM t WHERE ... | LIMIT n) AS t`, the table's own name
//! or alias kept so that the query's columns still find it. A sample of a size in bytes
//! (Hive's `TABLESAMPLE (100M)`) is refused.

use std::ops::ControlFlow;

use datafusion::common::{DataFusionError, Result};
use datafusion::sql::sqlparser::ast::{
    Ident, ObjectNamePart, TableAlias, TableFactor, TableSample, TableSampleKind, TableSampleUnit,
    VisitMut, VisitorMut,
};

/// Rewrites every sampled table of `statement`.
pub fn rewrite<V: VisitMut>(statement: &mut V) -> Result<()> {
    super::visit_refusing(statement, &mut Samples)
}

struct Samples;

impl VisitorMut for Samples {
    type Break = DataFusionError;

    fn post_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<Self::Break> {
        match sampled(factor) {
            Ok(Some(table)) => {
                *factor = table;
                ControlFlow::Continue(())
            }
            Ok(None) => ControlFlow::Continue(()),
            Err(error) => ControlFlow::Break(error),
        }
    }
}

/// The query that samples `factor`, if it has a `TABLESAMPLE`.
fn sampled(factor: &mut TableFactor) -> Result<Option<TableFactor>> {
    let (sample, alias, name) = match factor {
        TableFactor::Table {
            sample,
            alias,
            name,
            ..
        } => {
            let name = match name.0.last() {
                Some(ObjectNamePart::Identifier(name)) => Some(name.clone()),
                _ => None,
            };
            (sample, alias, name)
        }
        TableFactor::Derived { sample, alias, .. } => (sample, alias, None),
        _ => return Ok(None),
    };
    let Some(kind) = sample.take() else {
        return Ok(None);
    };
    let sample = match kind {
        TableSampleKind::BeforeTableAlias(sample) | TableSampleKind::AfterTableAlias(sample) => {
            sample
        }
    };
    let clause = clause(&sample)?;
    // The sampled table keeps the name the query knows it by.
    let alias = alias.take().or_else(|| {
        name.map(|name| TableAlias {
            explicit: true,
            name,
            columns: Vec::new(),
            at: None,
        })
    });
    let mut inner = factor.clone();
    if let TableFactor::Derived { alias, .. } = &mut inner {
        // A subquery needs a name of its own inside.
        *alias = Some(TableAlias {
            explicit: true,
            name: Ident::new("__sampled"),
            columns: Vec::new(),
            at: None,
        });
    }
    super::pivots::derived(&format!("SELECT * FROM {inner} {clause}"), alias).map(Some)
}

/// The `WHERE` or `LIMIT` clause that samples as `sample` says.
fn clause(sample: &TableSample) -> Result<String> {
    let rand = match &sample.seed {
        Some(seed) => format!("rand({})", seed.value),
        None => "rand()".to_owned(),
    };
    if let Some(bucket) = &sample.bucket {
        return Ok(match &bucket.on {
            Some(on) if !is_rand(on) => format!(
                "WHERE pmod(hash({on}), {total}) = {bucket} - 1",
                total = bucket.total,
                bucket = bucket.bucket
            ),
            _ => format!(
                "WHERE {rand} < CAST({} AS DOUBLE) / {}",
                bucket.bucket, bucket.total
            ),
        });
    }
    let Some(quantity) = &sample.quantity else {
        return Err(refused(sample));
    };
    match quantity.unit {
        Some(TableSampleUnit::Rows) => Ok(format!("LIMIT {}", quantity.value)),
        Some(TableSampleUnit::Percent) => Ok(format!(
            "WHERE {rand} < CAST({} AS DOUBLE) / 100",
            quantity.value
        )),
        None => Err(refused(sample)),
    }
}

fn is_rand(expr: &datafusion::sql::sqlparser::ast::Expr) -> bool {
    expr.to_string().to_ascii_lowercase().starts_with("rand(")
}

fn refused(sample: &TableSample) -> DataFusionError {
    DataFusionError::Plan(format!(
        "{sample} is not supported: sample by rows (TABLESAMPLE (10 ROWS)), by percent \
         (TABLESAMPLE (5 PERCENT)) or by bucket (TABLESAMPLE (BUCKET 1 OUT OF 4))"
    ))
}
