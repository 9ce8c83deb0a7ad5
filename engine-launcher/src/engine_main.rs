//! The start every engine program shares: registry flags split off, logging to stderr.
//!
//! The launcher runs engine programs (`kumiho-engine`, `kumiho-spark-engine`) with its
//! registry flags among their own, and copies their stderr into the launch log; both
//! programs begin the same way, so they begin here.

use std::io::IsTerminal;
use std::process::ExitCode;

use crate::self_registration::EngineRegistrationArgs;

/// The exit code of an engine program started with flags it cannot use.
pub const USAGE_EXIT: u8 = 2;

/// The process's registry flags (if the launcher gave any) and the remaining arguments for
/// the program's own parser; bad registry flags are printed as `PROGRAM: error` and give
/// the exit code to return.
pub fn split_process_args(
    program: &str,
) -> Result<(Option<EngineRegistrationArgs>, Vec<String>), ExitCode> {
    EngineRegistrationArgs::extract(std::env::args()).map_err(|e| {
        eprintln!("{program}: {e}");
        ExitCode::from(USAGE_EXIT)
    })
}

/// Logs to stderr, which the launcher keeps as the engine's log, at `filter` (`info`,
/// `kumiho=debug`, ...); a bad filter is printed as `PROGRAM: error`.
pub fn init_logging(program: &str, filter: &str) -> Result<(), ExitCode> {
    let env_filter = tracing_subscriber::EnvFilter::try_new(filter).map_err(|e| {
        eprintln!("{program}: invalid --log-level '{filter}': {e}");
        ExitCode::from(USAGE_EXIT)
    })?;
    tracing_subscriber::fmt()
        .with_env_filter(env_filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    Ok(())
}
