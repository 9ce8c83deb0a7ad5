//! `kumiho-spark-engine`: the process that runs one Spark Thrift Server for Kumiho.
//!
//! The Spark Thrift Server has no registry client, no idea of Kumiho's internal secret and no
//! idle timeout, so the launcher starts this supervisor instead, with the registry flags and
//! the `spark-submit` command after `--`. It:
//!
//! 1. runs `spark-submit` in its own work directory with the Thrift Server on a free loopback
//!    port, copying its output line by line to stdout (the launcher's engine log, which
//!    becomes the launch log a client reads); if `spark-submit` exits first, the supervisor
//!    exits at once with its first error line as the last line of output; the Thrift Server
//!    admits only a random token of this engine's ([`lockdown`]), which is checked first;
//! 2. once the Thrift port accepts connections, listens on `--bind-host` ([`gate`]), admitting
//!    only clients that present the secret (`KUMIHO_ENGINE_SECRET`) and relaying them, and
//!    registers THAT address;
//! 3. on SIGTERM or SIGINT, or after the idle timeout with no connection, deregisters first and
//!    then stops Spark (SIGTERM, then SIGKILL after `--stop-grace`); if Spark dies on its own,
//!    deregisters and exits non-zero.
#![deny(unsafe_code)]

mod gate;
mod lockdown;
mod thrift_server;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use kumiho_engine_launcher::idle::idle_for;
use kumiho_engine_launcher::{engine_main, EngineRegistrationArgs, EngineSelfRegistration};
use kumiho_thrift::auth::SharedSecret;
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, Signal, SignalKind};

use crate::gate::Gate;
use crate::lockdown::Lockdown;
use crate::thrift_server::{free_loopback_port, ThriftServer};

/// Runs a Spark Thrift Server that admits only the Kumiho gateway, registered while it lives.
#[derive(Parser)]
#[command(name = "kumiho-spark-engine", version)]
struct Args {
    /// Address the gateway connects to: the gate listens here and registers it.
    #[arg(long, default_value = "127.0.0.1")]
    bind_host: String,
    /// The gate's port; 0 picks a free one (printed as `listening on HOST:PORT`).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Directory spark-submit runs in (Derby's `metastore_db`, `spark-warehouse`, `derby.log`
    /// land here); created if missing.
    #[arg(long, default_value = ".")]
    work_dir: PathBuf,
    /// Remove the work directory once Spark has stopped (a CONNECTION engine's, which no
    /// later engine reuses).
    #[arg(long)]
    remove_work_dir: bool,
    /// How long Spark may take to stop after SIGTERM before it is killed.
    #[arg(long, default_value = "8s", value_parser = humantime::parse_duration)]
    stop_grace: Duration,
    /// The secret every client must send as its SASL PLAIN password.
    #[arg(long, env = "KUMIHO_ENGINE_SECRET", hide_env_values = true)]
    secret: String,
    /// Log filter (`info`, `debug`, ...).
    #[arg(long, default_value = "info")]
    log_level: String,
    /// The spark-submit command, ending with `spark-internal`; the Thrift Server's port and
    /// bind host are appended.
    #[arg(last = true, required = true)]
    spark_submit: Vec<String>,
}

/// What ended the engine's service.
enum Ending {
    Signal(&'static str),
    Idle(Duration),
    SparkDied(thrift_server::ServerError),
}

#[tokio::main]
async fn main() -> ExitCode {
    // The launcher's registry flags are taken out before clap sees the supervisor's own.
    let (registration, own_args) = match engine_main::split_process_args("kumiho-spark-engine") {
        Ok(split) => split,
        Err(code) => return code,
    };
    let args = Args::parse_from(own_args);
    if let Err(code) = engine_main::init_logging("kumiho-spark-engine", &args.log_level) {
        return code;
    }
    // `run` is awaited here, on the main thread, never spawned: Spark is tied to the thread
    // that starts it (see `ThriftServer::start`).
    let work_dir = args.remove_work_dir.then(|| args.work_dir.clone());
    let outcome = run(args, registration).await;
    if let Some(work_dir) = work_dir {
        // Spark has stopped (or never started) by now: nothing writes here any more.
        if let Err(e) = std::fs::remove_dir_all(&work_dir) {
            tracing::warn!(
                "could not remove the work directory {}: {e}",
                work_dir.display()
            );
        }
    }
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            // On stdout (the engine log when launched), plain, and last: the launcher quotes
            // the log's last lines to the user.
            announce(&format!("kumiho-spark-engine: {message}"));
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args, registration: Option<EngineRegistrationArgs>) -> Result<(), String> {
    let mut signals = ShutdownSignals::listen()?;
    std::fs::create_dir_all(&args.work_dir).map_err(|e| {
        format!(
            "cannot create the work directory {}: {e}",
            args.work_dir.display()
        )
    })?;
    // The gate's port is bound before Spark starts: a bind failure then costs no Spark launch.
    // Nobody connects before the address is registered.
    let listener = TcpListener::bind((args.bind_host.as_str(), args.port))
        .await
        .map_err(|e| format!("cannot listen on {}:{}: {e}", args.bind_host, args.port))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    // A gateway on this host connects to the engine it launched over the local socket.
    let local_listener = registration
        .as_ref()
        .and_then(kumiho_engine_launcher::engine_main::bind_local_socket);
    let spark_port = free_loopback_port()
        .map_err(|e| format!("cannot find a free loopback port for Spark: {e}"))?;
    let lockdown = Lockdown::install(&args.work_dir).map_err(|e| {
        format!(
            "cannot write the Spark Thrift Server's authentication class under {}: {e}",
            args.work_dir.display()
        )
    })?;
    tracing::info!(work_dir = %args.work_dir.display(), spark_port, "starting the Spark Thrift Server");
    let mut spark = ThriftServer::start(&args.spark_submit, spark_port, &args.work_dir, &lockdown)
        .map_err(|e| e.to_string())?;

    let started = tokio::select! {
        ready = spark.wait_ready() => Ok(ready),
        signal = signals.recv() => Err(signal),
    };
    match started {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(e.to_string()),
        Err(signal) => {
            tracing::info!("{signal} received while Spark was starting; stopping it");
            spark.stop(args.stop_grace).await;
            return Ok(());
        }
    }
    // Nobody is told about an engine whose Thrift Server the gate cannot close off.
    if let Err(e) = lockdown::check(&spark.address(), &lockdown.token).await {
        spark.stop(args.stop_grace).await;
        return Err(e.to_string());
    }
    // The check's refusal is logged by Spark as an ERROR: once it has had time to be printed
    // (best effort), it is forgotten as the cause to quote if Spark dies later.
    tokio::time::sleep(Duration::from_millis(500)).await;
    spark.forget_errors();

    let gate = Gate::new(
        spark.address(),
        SharedSecret::new(args.secret.clone()),
        lockdown.token.clone(),
    );
    tokio::spawn(std::sync::Arc::clone(&gate).serve(listener));
    if let Some(local_listener) = local_listener {
        tokio::spawn(std::sync::Arc::clone(&gate).serve_local(local_listener));
    }

    let registered = match &registration {
        Some(registration) => {
            match EngineSelfRegistration::start(registration, &args.bind_host, bound.port()).await {
                Ok(registered) => Some(registered),
                Err(e) => {
                    spark.stop(args.stop_grace).await;
                    return Err(format!("cannot register in the engine registry: {e}"));
                }
            }
        }
        None => None,
    };
    // Announced once registered: whoever reads it can find the engine in the registry.
    announce(&format!(
        "listening on {bound} (Spark Thrift Server at {}, pid {})",
        spark.address(),
        spark.pid().unwrap_or_default()
    ));
    let idle_timeout = registration.as_ref().map(|r| r.idle_timeout);
    let idle = async {
        match idle_timeout {
            Some(timeout) => idle_for(|| gate.open_connections() > 0, timeout).await,
            None => std::future::pending().await,
        }
    };
    tracing::info!("Spark SQL engine ready");

    let ending = tokio::select! {
        signal = signals.recv() => Ending::Signal(signal),
        () = idle => Ending::Idle(idle_timeout.unwrap_or_default()),
        died = spark.wait_exit() => Ending::SparkDied(died),
    };
    // Deregister before stopping, so that no gateway picks an engine that is going away.
    if let Some(registered) = registered {
        if let Err(e) = registered.deregister() {
            tracing::warn!("could not deregister: {e}");
        }
    }
    match ending {
        Ending::Signal(signal) => tracing::info!("{signal} received; stopping Spark"),
        Ending::Idle(timeout) => tracing::info!(
            "no connection for the idle timeout ({}); stopping Spark",
            humantime::format_duration(timeout)
        ),
        Ending::SparkDied(e) => return Err(e.to_string()),
    }
    spark.stop(args.stop_grace).await;
    Ok(())
}

/// Prints a line on stdout and flushes it (stdout is the engine's log). Unlike `println!` it
/// does not panic when stdout is gone: the engine's work matters more than its log.
fn announce(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// SIGTERM and SIGINT, listened for from the start: a signal that arrives while Spark starts
/// or between two waits is kept, not lost (nor does it kill the supervisor with Spark left
/// running).
struct ShutdownSignals {
    term: Signal,
    interrupt: Signal,
}

impl ShutdownSignals {
    fn listen() -> Result<ShutdownSignals, String> {
        let listen = |kind| signal(kind).map_err(|e| format!("cannot listen for signals: {e}"));
        Ok(ShutdownSignals {
            term: listen(SignalKind::terminate())?,
            interrupt: listen(SignalKind::interrupt())?,
        })
    }

    /// The next signal's name.
    async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.interrupt.recv() => "SIGINT",
        }
    }
}
