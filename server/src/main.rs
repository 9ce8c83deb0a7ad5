//! `kumiho`: the gateway binary. Reads settings, starts the services, stops on SIGTERM/SIGINT.
#![forbid(unsafe_code)]

use clap::Parser;
use kumiho_server::config::Cli;
use kumiho_server::server;

fn main() -> std::process::ExitCode {
    let config = match Cli::parse().into_config() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("kumiho: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    // MIT krb5 finds the keytab through the environment, which is safe to change only while
    // this is the one thread.
    if let Some(kerberos) = config.kerberos() {
        kumiho_server::kerberos::use_keytab(&kerberos.keytab);
    }
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(&config.log_level))
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        // stdout carries only the machine-readable `listening` lines.
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("kumiho: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        let gateway = match server::start(config).await {
            Ok(gateway) => gateway,
            Err(e) => {
                tracing::error!("{e}");
                return std::process::ExitCode::FAILURE;
            }
        };
        // Machine-readable lines for scripts and tests that start kumiho on port 0.
        println!("binary listening on {}", gateway.binary_addr);
        println!("http listening on {}", gateway.http_addr);
        if let Some(addr) = gateway.metrics_addr {
            println!("metrics listening on {addr}");
        }
        if let Some(addr) = gateway.rest_addr {
            println!("rest listening on {addr}");
        }
        wait_for_signal().await;
        gateway.stop().await;
        std::process::ExitCode::SUCCESS
    })
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = ctrl_c => tracing::info!("SIGINT received"),
                    _ = terminate.recv() => tracing::info!("SIGTERM received"),
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM; only SIGINT stops the gateway");
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
