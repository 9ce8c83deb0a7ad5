//! `kumiho-engine`: a HiveServer2 server on Apache DataFusion, started by the gateway or by hand.
//!
//! Prints `listening on HOST:PORT` (and `http listening on HOST:PORT`) on stdout once bound,
//! which is how a launcher learns the port; logs go to stderr.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, ValueEnum};
use kumiho_engine::config::EngineConfig;
use kumiho_engine::engine::Engine;
use kumiho_engine::idle::idle_for;
use kumiho_engine::service::EngineService;
use kumiho_engine_launcher::{
    cpu_slice, engine_main, EngineRegistrationArgs, EngineSelfRegistration,
};
use kumiho_thrift::auth::{AnyPassword, Authenticator, SharedSecret};
use kumiho_thrift::server::{serve_binary, serve_http, serve_local, ServerOptions};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// How clients authenticate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum AuthMode {
    /// SASL PLAIN with any password, and raw (NOSASL) clients.
    None,
    /// Raw (NOSASL) clients only.
    Nosasl,
}

/// A HiveServer2-compatible SQL engine on Apache DataFusion.
#[derive(Parser)]
#[command(name = "kumiho-engine", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Thrift binary port; 0 picks a free one (printed as `listening on HOST:PORT`).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Also serve Thrift over HTTP on this port (0 picks one).
    #[arg(long)]
    http_port: Option<u16>,
    /// Client authentication when no secret is set.
    #[arg(long, value_enum, default_value_t = AuthMode::None)]
    auth: AuthMode,
    /// A secret every client must send as its SASL PLAIN password (NOSASL is then refused).
    #[arg(long, env = "KUMIHO_ENGINE_SECRET", hide_env_values = true)]
    secret: Option<String>,
    /// YAML file: tables to register, demo data settings.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Log filter (`info`, `debug`, `kumiho_engine=debug,datafusion=info`, ...).
    #[arg(long, default_value = "info")]
    log_level: String,
    /// TPC-H demo data scale factor (default 0.1, or the config file's); 0 disables it.
    #[arg(long)]
    tpch_scale: Option<f64>,
    /// The warehouse (a directory or an object-store URL) where databases and tables created
    /// with CREATE DATABASE and CREATE TABLE are kept; over the config file's `warehouse`.
    #[arg(long)]
    warehouse: Option<String>,
    /// The warehouse when neither `--warehouse` nor the config file names one (the gateway
    /// passes its own default).
    #[arg(long)]
    default_warehouse: Option<String>,
    /// The time zone sessions start in (`America/Los_Angeles`, `+09:00`, `LOCAL`: the
    /// machine's), over the config file's `time-zone`; UTC when neither names one.
    #[arg(long)]
    time_zone: Option<String>,
    /// CPU slice the engine's threads ask Linux (6.12 or later) for: longer than the
    /// kernel's default (at most 3 ms), so that a gateway, client or shell waking up on a CPU
    /// where a query runs takes it at once instead of queueing behind it; `0` leaves the
    /// kernel's default.
    #[arg(long, default_value = "5ms", value_parser = cpu_slice::parse_flag)]
    cpu_slice: std::time::Duration,
}

/// mimalloc instead of glibc's malloc: after thousands of sessions have come and gone, glibc's
/// free lists are fragmented and every batch's allocations walk them (BENCHMARKS.md, case 3
/// after case 4: a third of the engine's time in `_int_malloc`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // A launcher adds registry flags (`--registry-dir`, `--engine-space`, `--ref-id`,
    // `--idle-timeout`); they are taken out before clap sees the engine's own flags.
    let (registration, own_args) = match engine_main::split_process_args("kumiho-engine") {
        Ok(split) => split,
        Err(code) => return code,
    };
    let args = Args::parse_from(own_args);
    if let Err(code) = engine_main::init_logging("kumiho-engine", &args.log_level) {
        return code;
    }
    let runtime = match cpu_slice::runtime(args.cpu_slice) {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("kumiho-engine: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args, registration)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!("{message}");
            eprintln!("kumiho-engine: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Which clients the transports accept.
fn server_options(args: &Args) -> Result<ServerOptions, String> {
    let (authenticator, allow_sasl, allow_nosasl): (Arc<dyn Authenticator>, bool, bool) =
        match (&args.secret, args.auth) {
            (Some(_), AuthMode::Nosasl) => return Err(
                "--secret needs SASL PLAIN to carry it; it cannot be combined with --auth nosasl"
                    .into(),
            ),
            (Some(secret), AuthMode::None) => {
                (Arc::new(SharedSecret::new(secret.clone())), true, false)
            }
            (None, AuthMode::None) => (Arc::new(AnyPassword), true, true),
            (None, AuthMode::Nosasl) => (Arc::new(AnyPassword), false, true),
        };
    Ok(ServerOptions {
        authenticator,
        allow_sasl,
        allow_nosasl,
        ..ServerOptions::default()
    })
}

async fn run(args: Args, registration: Option<EngineRegistrationArgs>) -> Result<(), String> {
    let options = Arc::new(server_options(&args)?);
    let mut config = match &args.config {
        Some(path) => EngineConfig::load(path).map_err(|e| e.to_string())?,
        None => EngineConfig::default(),
    };
    if let Some(scale) = args.tpch_scale {
        config.tpch_scale = scale;
        config
            .validate()
            .map_err(|e| format!("--tpch-scale: {e}"))?;
    }
    if let Some(warehouse) = &args.warehouse {
        config.warehouse = Some(warehouse.clone());
    }
    if let Some(zone) = &args.time_zone {
        config.time_zone = Some(zone.clone());
        config.validate().map_err(|e| format!("--{e}"))?;
    }
    if config.warehouse.is_none() {
        config.warehouse = args.default_warehouse.clone();
    }
    let engine = Engine::start(&config).await.map_err(|e| e.to_string())?;
    let service = Arc::new(EngineService::new(engine));
    let shutdown = CancellationToken::new();

    let listener = bind(&args.host, args.port).await?;
    announce("listening on", &listener)?;
    let bound_port = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?
        .port();
    let mut servers = tokio::task::JoinSet::new();
    servers.spawn(serve_binary(
        listener,
        Arc::clone(&service),
        Arc::clone(&options),
        shutdown.clone(),
    ));
    if let Some(port) = args.http_port {
        let listener = bind(&args.host, port).await?;
        announce("http listening on", &listener)?;
        servers.spawn(serve_http(
            listener,
            Arc::clone(&service),
            Arc::clone(&options),
            shutdown.clone(),
        ));
    }
    // A gateway on this host connects to the engine it launched over its local socket
    // (cheaper per message than loopback TCP); same protocol, same authentication.
    if let Some(listener) = registration
        .as_ref()
        .and_then(engine_main::bind_local_socket)
    {
        servers.spawn(serve_local(
            listener,
            Arc::clone(&service),
            Arc::clone(&options),
            shutdown.clone(),
        ));
    }
    // Registered only once every listener is bound: a gateway that finds the registration
    // can connect at once. The guard is held for the life of the process.
    let registered = match &registration {
        Some(registration) => Some(
            EngineSelfRegistration::start(registration, &args.host, bound_port)
                .await
                .map_err(|e| format!("cannot register in the engine registry: {e}"))?,
        ),
        None => None,
    };
    let idle_timeout = registration.as_ref().map(|r| r.idle_timeout);
    let idle = async {
        match idle_timeout {
            Some(timeout) => idle_for(service.engine().sessions(), timeout).await,
            None => std::future::pending().await,
        }
    };
    tracing::info!(
        demo = config.demo_enabled(),
        tables = config.tables.len(),
        warehouse = config.warehouse.as_deref().unwrap_or("none"),
        "kumiho-engine {} ready",
        env!("CARGO_PKG_VERSION")
    );

    tokio::select! {
        signal = shutdown_signal() => {
            tracing::info!("{signal} received, shutting down");
            shutdown.cancel();
        }
        () = idle => {
            tracing::info!(timeout = ?idle_timeout, "no session for the idle timeout, stopping");
            shutdown.cancel();
        }
        Some(ended) = servers.join_next() => {
            shutdown.cancel();
            match ended {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(format!("the server stopped: {e}")),
                Err(e) => return Err(format!("the server failed: {e}")),
            }
        }
    }
    // Deregister before draining, so that no gateway picks an engine that is going away.
    if let Some(registered) = registered {
        if let Err(e) = registered.deregister() {
            tracing::warn!("could not deregister: {e}");
        }
    }
    while let Some(ended) = servers.join_next().await {
        if let Ok(Err(e)) = ended {
            tracing::warn!("server ended with an error while stopping: {e}");
        }
    }
    Ok(())
}

async fn bind(host: &str, port: u16) -> Result<TcpListener, String> {
    kumiho_thrift::server::bind(host, port)
        .await
        .map_err(|e| format!("cannot listen on {host}:{port}: {e}"))
}

/// Prints `PREFIX HOST:PORT` on stdout and flushes it: launchers wait for this line.
fn announce(prefix: &str, listener: &TcpListener) -> Result<(), String> {
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{prefix} {addr}")
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write to stdout: {e}"))
}

/// Resolves on SIGINT or SIGTERM, naming the signal.
async fn shutdown_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return "SIGINT";
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => "SIGINT",
            _ = term.recv() => "SIGTERM",
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "SIGINT"
    }
}
