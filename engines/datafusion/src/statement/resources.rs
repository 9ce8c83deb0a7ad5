//! `ADD JAR|FILE|ARCHIVE`, `LIST JARS|FILES|ARCHIVES`, `DELETE JAR ...`, and `CREATE|DROP
//! [TEMPORARY] FUNCTION`: what Hive scripts say about Java code, in an engine without a JVM.
//!
//! Scripts add jars they never use (a team's standard header), so `ADD JAR` succeeds, with a
//! warning in the operation log, and `LIST JARS` lists what was added. A function from a
//! jar cannot run here: `CREATE FUNCTION` is refused, naming the class and the engine that
//! runs it (Spark). `ADD FILE` and `ADD ARCHIVE` serve `TRANSFORM` scripts and Java UDFs,
//! neither of which runs here, and are refused likewise. `DROP FUNCTION` of a function that
//! does not exist succeeds, as in Hive (`hive.exec.drop.ignorenonexistent`).

use datafusion::error::{DataFusionError, Result};

use super::{function_names, string_rows, Executed, HiveCommand};
use crate::session::Session;

/// What to tell a user whose script needs the JVM.
const USE_SPARK: &str = "run it on the Spark engine: kyuubi.engine.type=SPARK_SQL in the \
     session's configuration (jdbc:hive2://host:10009/;#kyuubi.engine.type=SPARK_SQL), or a \
     cluster whose engine type is SPARK_SQL";

/// `ADD|LIST|DELETE JAR[S]|FILE[S]|ARCHIVE[S] [path ...]`, read as Hive reads it: the words
/// after the kind are paths, separated by spaces, quotes taken off. None for another
/// statement.
pub(super) fn recognise(sql: &str) -> Option<HiveCommand> {
    let mut words = sql.split_whitespace();
    let verb = words.next()?.to_ascii_lowercase();
    if !matches!(verb.as_str(), "add" | "list" | "delete") {
        return None;
    }
    let kind = match words.next()?.to_ascii_lowercase().as_str() {
        "jar" | "jars" => "jar",
        "file" | "files" => "file",
        "archive" | "archives" => "archive",
        _ => return None,
    }
    .to_owned();
    let paths: Vec<String> = words
        .map(|p| p.trim_matches(|c| c == '\'' || c == '"').to_owned())
        .filter(|p| !p.is_empty())
        .collect();
    match verb.as_str() {
        "add" if !paths.is_empty() => Some(HiveCommand::AddResources { kind, paths }),
        "list" => Some(HiveCommand::ListResources { kind, paths }),
        "delete" => Some(HiveCommand::DeleteResources { kind, paths }),
        _ => None,
    }
}

/// `ADD JAR` records the jars and warns that nothing is loaded; `ADD FILE|ARCHIVE` is
/// refused.
pub(super) fn add(session: &Session, kind: &str, paths: &[String]) -> Result<Executed> {
    if kind != "jar" {
        return Err(DataFusionError::Plan(format!(
            "ADD {} {}: added files and archives serve TRANSFORM scripts and Java UDFs, which \
             need a JVM that the DataFusion engine does not have; {USE_SPARK}",
            kind.to_uppercase(),
            paths.join(" ")
        )));
    }
    let mut notes = Vec::new();
    for path in paths {
        session.add_resource(kind, path);
        notes.push(format!("Added [{path}] to the session's resources"));
    }
    notes.push(format!(
        "Warning: the DataFusion engine runs no Java, so {} listed (LIST JARS) but not \
         loaded; CREATE FUNCTION from {} is refused. To call its functions, {USE_SPARK}",
        if paths.len() == 1 {
            "the jar is"
        } else {
            "the jars are"
        },
        if paths.len() == 1 { "it" } else { "them" }
    ));
    Ok(Executed::Noted(notes))
}

/// `LIST JARS [path ...]`: Hive's one column `resource`, the session's added resources of
/// the kind (those of the paths given, when some are).
pub(super) fn list(session: &Session, kind: &str, paths: &[String]) -> Result<Executed> {
    let mut listed = session.resources(kind);
    if !paths.is_empty() {
        listed.retain(|p| paths.contains(p));
    }
    string_rows("resource", listed)
}

/// `DELETE JAR [path ...]`: forgets them (all of the kind without paths).
pub(super) fn delete(session: &Session, kind: &str, paths: &[String]) -> Result<Executed> {
    session.delete_resources(kind, paths);
    Ok(Executed::NoResult)
}

/// `CREATE [TEMPORARY] FUNCTION f AS 'class'`: refused, naming the class.
pub(super) fn create_function(name: &str, class: &str) -> Result<Executed> {
    Err(DataFusionError::Plan(format!(
        "CREATE FUNCTION {name} AS '{class}': {class} is a Java class, and the DataFusion engine \
         runs no Java; to call it, {USE_SPARK}. Hive's built-in functions are here already \
         (SHOW FUNCTIONS lists them)"
    )))
}

/// `DROP [TEMPORARY] FUNCTION [IF EXISTS] f`: nothing to drop, since no function is ever
/// created here; a built-in function is refused, as Hive refuses it.
pub(super) fn drop_function(session: &Session, name: &str) -> Result<Executed> {
    let builtin = function_names(session.context())
        .iter()
        .any(|f| f.eq_ignore_ascii_case(name));
    if builtin {
        return Err(DataFusionError::Plan(format!(
            "{name} is a built-in function and cannot be dropped"
        )));
    }
    Ok(Executed::Noted(vec![format!(
        "Function {name} does not exist; nothing was dropped (the DataFusion engine creates no \
         functions)"
    )]))
}
