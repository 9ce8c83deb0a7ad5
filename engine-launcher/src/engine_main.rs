//! The start every engine program shares: registry flags split off, logging to stderr, the
//! local socket a gateway on this host connects to.
//!
//! The launcher runs engine programs (`kumiho-engine`, `kumiho-spark-engine`) with its
//! registry flags among their own, and copies their stderr into the launch log; both
//! programs begin the same way, so they begin here.

use std::io::IsTerminal;
use std::os::linux::net::SocketAddrExt;
use std::process::ExitCode;

use tokio::net::UnixListener;

use crate::registry::local_socket_name;
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

/// The engine's local socket, `@`[`local_socket_name`] in Linux's abstract namespace, where a
/// gateway on this host connects instead of over TCP; `None` (logged) if the name is taken,
/// and gateways then use TCP (one that finds the name held by another user's process does
/// not use it).
pub fn bind_local_socket(registration: &EngineRegistrationArgs) -> Option<UnixListener> {
    let name = local_socket_name(&registration.ref_id);
    let bind = || -> std::io::Result<UnixListener> {
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
        let listener = std::os::unix::net::UnixListener::bind_addr(&addr)?;
        listener.set_nonblocking(true)?;
        UnixListener::from_std(listener)
    };
    bind()
        .inspect_err(|e| tracing::warn!("no local socket {name} ({e}); gateways connect over TCP"))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::RegistryLocation;

    fn registration(ref_id: &str) -> EngineRegistrationArgs {
        EngineRegistrationArgs {
            registry: RegistryLocation::Embedded {
                work_dir: std::env::temp_dir(),
            },
            engine_space: "/kumiho/space".to_owned(),
            ref_id: ref_id.to_owned(),
            idle_timeout: std::time::Duration::from_secs(60),
        }
    }

    #[tokio::test]
    async fn a_local_socket_name_already_taken_leaves_the_engine_on_tcp_alone() {
        let args = registration(&format!("test-{}", uuid::Uuid::new_v4()));
        let first = bind_local_socket(&args).expect("a fresh name binds");
        assert!(bind_local_socket(&args).is_none(), "the name is held");
        drop(first);
        assert!(
            bind_local_socket(&args).is_some(),
            "an abstract name is free again once its socket closes"
        );
    }
}
