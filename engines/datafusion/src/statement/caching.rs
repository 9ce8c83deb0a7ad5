//! Spark's cache statements, which Spark SQL scripts and notebooks run between queries:
//! `CACHE [LAZY] TABLE t [OPTIONS (...)]`, `UNCACHE TABLE [IF EXISTS] t`, `CLEAR CACHE`,
//! `REFRESH TABLE t`, `REFRESH FUNCTION f` and `REFRESH 'path'`.
//!
//! This engine keeps no copy of a table's rows and no list of its files between queries:
//! each query lists and reads the files as they are then. So there is nothing to fill, drop
//! or refresh, and a script written for Spark runs unchanged: each statement checks the
//! table it names (a missing one fails, as in Spark, unless `IF EXISTS`) and answers with a
//! line in the operation log saying what it did. `CACHE TABLE t AS query` creates the
//! session's temporary view `t` of the query, as Spark does.

use datafusion::error::{DataFusionError, Result};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::Tokenizer;

use super::{table_provider, Executed};
use crate::session::Session;
use crate::words::Words;

/// A cache statement, as read.
#[derive(Debug, PartialEq, Eq)]
pub enum CacheStatement {
    /// `CACHE [LAZY] TABLE t`, `UNCACHE TABLE [IF EXISTS] t` or `REFRESH [TABLE] t`.
    Table {
        verb: Verb,
        table: Vec<String>,
        if_exists: bool,
    },
    /// `CLEAR CACHE`, `REFRESH FUNCTION f`, `REFRESH 'path'`: nothing to check.
    Other(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Cache,
    Uncache,
    Refresh,
}

/// What a cache statement is: one answered here, or the `CREATE TEMPORARY VIEW` that
/// `CACHE TABLE t AS query` means.
pub enum Recognised {
    Command(CacheStatement),
    TemporaryView(String),
}

/// Reads a cache statement; `None` for any other statement (or a malformed one, which
/// DataFusion's parser then reports).
pub fn recognise(sql: &str) -> Option<Recognised> {
    let first = sql.split_whitespace().next()?;
    if !["cache", "uncache", "clear", "refresh"]
        .iter()
        .any(|verb| first.eq_ignore_ascii_case(verb))
    {
        return None;
    }
    let mut words = Words::new(Tokenizer::new(&GenericDialect {}, sql).tokenize().ok()?);
    let table = |words: &mut Words, verb, if_exists| {
        let table = words.dotted_name()?;
        Some(CacheStatement::Table {
            verb,
            table,
            if_exists,
        })
    };
    let statement = if words.eat("cache") {
        words.eat("lazy");
        if !words.eat("table") {
            return None;
        }
        let name = words.dotted_name()?;
        if words.eat("options") {
            words.parenthesised()?;
        }
        // `CACHE TABLE t [AS] SELECT ...`: the rest is the view's query.
        words.eat("as");
        if !words.done() {
            let query = words.rest_text();
            return Some(Recognised::TemporaryView(format!(
                "CREATE OR REPLACE TEMPORARY VIEW {} AS {query}",
                name.join(".")
            )));
        }
        CacheStatement::Table {
            verb: Verb::Cache,
            table: name,
            if_exists: false,
        }
    } else if words.eat("uncache") {
        if !words.eat("table") {
            return None;
        }
        let if_exists = words.eat("if") && words.eat("exists");
        table(&mut words, Verb::Uncache, if_exists)?
    } else if words.eat("clear") {
        if !words.eat("cache") {
            return None;
        }
        CacheStatement::Other("CLEAR CACHE")
    } else if words.eat("refresh") {
        if words.eat("function") {
            words.dotted_name()?;
            CacheStatement::Other("REFRESH FUNCTION")
        } else if words.string().is_some() {
            CacheStatement::Other("REFRESH")
        } else {
            words.eat("table");
            table(&mut words, Verb::Refresh, false)?
        }
    } else {
        return None;
    };
    words.done().then_some(Recognised::Command(statement))
}

/// Checks the table a statement names and says, in the operation log, that there was
/// nothing to cache, drop or refresh.
pub async fn run(session: &Session, statement: &CacheStatement) -> Result<Executed> {
    let note = match statement {
        CacheStatement::Table {
            verb,
            table,
            if_exists,
        } => {
            let name = table.join(".");
            if let Err(error) = table_provider(session, table).await {
                if *if_exists {
                    return Ok(Executed::NoResult);
                }
                return Err(DataFusionError::Plan(format!(
                    "{}: {error}",
                    match verb {
                        Verb::Cache => "CACHE TABLE",
                        Verb::Uncache => "UNCACHE TABLE",
                        Verb::Refresh => "REFRESH TABLE",
                    }
                )));
            }
            match verb {
                Verb::Cache => format!(
                    "{name} is not cached: this engine keeps no copy of a table's rows; each \
                     query reads its files as they are then"
                ),
                Verb::Uncache => format!("{name} was not cached: this engine caches no table"),
                Verb::Refresh => format!(
                    "{name} needs no refresh: each query lists and reads its files as they are \
                     then"
                ),
            }
        }
        CacheStatement::Other(what) => {
            format!("{what}: nothing to do, this engine keeps no cache between queries")
        }
    };
    Ok(Executed::Noted(vec![note]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(sql: &str) -> Option<CacheStatement> {
        match recognise(sql)? {
            Recognised::Command(statement) => Some(statement),
            Recognised::TemporaryView(_) => None,
        }
    }

    #[test]
    fn cache_statements_are_read_with_their_table() {
        let table = |verb, parts: &[&str], if_exists| CacheStatement::Table {
            verb,
            table: parts.iter().map(|p| (*p).to_owned()).collect(),
            if_exists,
        };
        assert_eq!(
            command("CACHE LAZY TABLE db.Sales OPTIONS ('storageLevel' 'DISK_ONLY')"),
            Some(table(Verb::Cache, &["db", "sales"], false))
        );
        assert_eq!(
            command("uncache table if exists t"),
            Some(table(Verb::Uncache, &["t"], true))
        );
        assert_eq!(
            command("REFRESH TABLE t"),
            Some(table(Verb::Refresh, &["t"], false))
        );
        assert_eq!(
            command("REFRESH t"),
            Some(table(Verb::Refresh, &["t"], false))
        );
        assert_eq!(
            command("CLEAR CACHE"),
            Some(CacheStatement::Other("CLEAR CACHE"))
        );
        assert_eq!(
            command("REFRESH '/data/sales'"),
            Some(CacheStatement::Other("REFRESH"))
        );
        assert!(recognise("CACHE t").is_none());
        assert!(recognise("SELECT 1").is_none());
        match recognise("CACHE TABLE recent AS SELECT * FROM t WHERE d > '2024'") {
            Some(Recognised::TemporaryView(sql)) => assert_eq!(
                sql,
                "CREATE OR REPLACE TEMPORARY VIEW recent AS SELECT * FROM t WHERE d > '2024'"
            ),
            _ => panic!("CACHE TABLE ... AS is a temporary view"),
        }
    }
}
