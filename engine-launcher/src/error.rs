//! `LaunchError`: why an engine could not be found or started, worded for the user who waits on it.
//!
//! Messages name what failed and what to do, and carry the engine log's last lines when the
//! engine itself failed, so a client sees the cause instead of a bare timeout.

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use crate::engine_ref::{EngineRefError, EngineType};
use crate::registry::{humanize, RegistryError};

/// Why getting or launching an engine failed.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The engine reference could not be computed (a bad name in the session's settings).
    #[error(transparent)]
    EngineRef(#[from] EngineRefError),

    /// The registry failed, or its launch lock stayed taken (the message says which).
    #[error(transparent)]
    Registry(#[from] RegistryError),

    /// This gateway has no builder for the engine type the session asked for.
    #[error("this gateway cannot launch {engine_type} engines; ask an operator to configure them or pick another `kyuubi.engine.type`")]
    NoBuilder {
        /// The engine type asked for.
        engine_type: EngineType,
    },

    /// The cluster already runs as many engines as its `limits.max-engines` allows. Nobody's
    /// fault: a launch after one of its engines stops (idle) succeeds.
    #[error(
        "cluster `{cluster}` runs its maximum of {max} engine{} (limits.max-engines): wait for \
         an idle engine to stop, or ask the operator to raise the limit",
        if *max == 1 { "" } else { "s" }
    )]
    EngineLimit {
        /// The cluster.
        cluster: String,
        /// Its `limits.max-engines`.
        max: u32,
        /// The live engines counted, and the launches holding a place.
        running: usize,
    },

    /// The engine's settings (from the cluster config) cannot be used; the operator's to fix.
    #[error("cannot prepare the {engine_type} engine: {reason}")]
    BadSettings {
        /// The engine type.
        engine_type: EngineType,
        /// What is wrong.
        reason: String,
    },

    /// The engine program is missing.
    #[error("engine program {} not found; install it next to the gateway or configure its path", program.display())]
    ProgramNotFound {
        /// Where it was looked for.
        program: PathBuf,
    },

    /// A file the launch needs (engine log, engine config) could not be written.
    #[error("could not write {}: {source}; check the gateway's work directory", path.display())]
    WorkDir {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },

    /// The engine process could not be started.
    #[error("could not start engine program {}: {source}", program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },

    /// The engine process ended before it registered.
    #[error(
        "engine exited with {status} during launch. {}",
        last_lines_text(last_lines, log_path)
    )]
    Exited {
        /// Its exit status.
        status: ExitStatus,
        /// The last lines of its log.
        last_lines: Vec<String>,
        /// Its log file.
        log_path: PathBuf,
    },

    /// The engine did not register within the initialize timeout and was killed.
    #[error("engine did not register within {}; killed it. Raise `kyuubi.session.engine.initialize.timeout` if it is just slow. {}", humanize(*timeout), last_lines_text(last_lines, log_path))]
    Timeout {
        /// The initialize timeout.
        timeout: Duration,
        /// The last lines of its log.
        last_lines: Vec<String>,
        /// Its log file.
        log_path: PathBuf,
    },
}

impl LaunchError {
    /// A builder handed another engine type's settings: the gateway's bug, not the operator's.
    pub fn settings_of_another_type(engine_type: EngineType) -> LaunchError {
        LaunchError::BadSettings {
            engine_type,
            reason: "the launch carries another engine type's settings (a gateway bug)".to_owned(),
        }
    }
}

fn last_lines_text(lines: &[String], log_path: &std::path::Path) -> String {
    if lines.is_empty() {
        format!("Its log {} is empty.", log_path.display())
    } else {
        format!(
            "Last lines of its log {}:\n{}",
            log_path.display(),
            lines.join("\n")
        )
    }
}
