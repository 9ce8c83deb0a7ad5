//! Case 5: many clients open sessions at the same instant against a warm engine: the latency
//! each one sees (connect, SASL, OpenSession), and how many fail.
//!
//! As in every case, a warm-up run comes first and is not counted: a process's first storm
//! also grows its heap (and the load generator's) to hold that many connections, page faults
//! that later storms do not take. Its p99 is printed on a line of its own, and its errors count.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Barrier;
use tokio::task::JoinSet;

use crate::cases::{ms, Sizes, Targets, FETCH_SIZE};
use crate::error::Result;
use crate::hs2::{Session, Target};
use crate::report::{Goal, Report};
use crate::stats::Samples;

/// Issue #5: p99 of the storm through kumiho, in milliseconds, with no error.
pub const P99_TARGET_MS: f64 = 100.0;

pub async fn run(targets: &Targets, sizes: &Sizes, report: &mut Report) -> Result<()> {
    let clients = sizes.storm_clients;
    let case = format!("5. {clients} clients opening sessions at once, warm engine");
    for target in targets.both() {
        let mut latencies = Samples::with_capacity(clients * sizes.runs);
        let mut errors = 0;
        let mut first_error = None;
        let mut warm_up_p99 = None;
        for run in 0..=sizes.runs {
            let (run_latencies, run_errors, sessions) = storm(target, clients).await;
            if run == 0 {
                warm_up_p99 = Some(run_latencies.p99());
            } else {
                latencies.extend(run_latencies);
            }
            // Errors count in every run, the warm-up's too: a client refused is never noise.
            errors += run_errors.len();
            if first_error.is_none() {
                first_error = run_errors.into_iter().next();
            }
            close(sessions).await;
            settle(target).await?;
        }
        let through = &target.name;
        let is_kumiho = target.name == targets.kumiho.name;
        report.add(
            &case,
            &format!("p50, {through}"),
            ms(latencies.p50()),
            "ms",
            None,
        );
        report.add(
            &case,
            &format!("p99, {through}"),
            ms(latencies.p99()),
            "ms",
            is_kumiho.then_some(Goal::AtMost(P99_TARGET_MS)),
        );
        if let Some(p99) = warm_up_p99 {
            report.add(
                &case,
                &format!("p99 of the warm-up storm (not counted), {through}"),
                ms(p99),
                "ms",
                None,
            );
        }
        report.add_noted(
            &case,
            &format!("errors, {through}"),
            errors as f64,
            "errors",
            is_kumiho.then_some(Goal::AtMost(0.0)),
            first_error,
        );
    }
    Ok(())
}

/// `clients` tasks connect and open a session at once; returns their latencies, their
/// errors and the sessions opened.
async fn storm(target: &Target, clients: usize) -> (Samples, Vec<String>, Vec<Session>) {
    let start = Arc::new(Barrier::new(clients));
    let mut tasks = JoinSet::new();
    for _ in 0..clients {
        let target = target.clone();
        let start = start.clone();
        tasks.spawn(async move {
            start.wait().await;
            let started = Instant::now();
            let session = target.open_session().await;
            (started.elapsed(), session)
        });
    }
    let mut latencies = Samples::with_capacity(clients);
    let mut errors = Vec::new();
    let mut sessions = Vec::with_capacity(clients);
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((latency, Ok(session))) => {
                latencies.push(latency);
                sessions.push(session);
            }
            Ok((_, Err(e))) => errors.push(e.to_string()),
            Err(e) => errors.push(format!("client task failed: {e}")),
        }
    }
    (latencies, errors, sessions)
}

/// Waits until the target has done the storm's work: a gateway answers OpenSession before it
/// opens the engine session, and opens those in turn, so one more session's first statement
/// completes only after the storm's. Without this, that work would run into the next storm.
async fn settle(target: &Target) -> Result<()> {
    let mut session = target.open_session().await?;
    session.run("SELECT 1", FETCH_SIZE).await?;
    session.close().await
}

async fn close(sessions: Vec<Session>) {
    let mut tasks = JoinSet::new();
    for session in sessions {
        tasks.spawn(async move {
            let _ = session.close().await;
        });
    }
    while tasks.join_next().await.is_some() {}
}
