//! Case 2: the `SELECT 1` cycle as beeline runs it (ExecuteStatement, GetOperationStatus,
//! GetResultSetMetadata, FetchResults until empty, CloseOperation) on one warm session:
//! latency through kumiho and direct, their ratio, and what the gateway adds per RPC.

use std::time::Instant;

use crate::cases::{ms, us, Sizes, Targets, FETCH_SIZE};
use crate::error::Result;
use crate::hs2::Session;
use crate::report::{Goal, Report};
use crate::stats::Samples;

const CASE: &str = "2. SELECT 1 cycle";
const WARM_UP: usize = 50;

/// Issue #5: the cycle through kumiho takes at most this many times the direct one.
pub const RATIO_TARGET: f64 = 1.15;

pub async fn run(targets: &Targets, sizes: &Sizes, report: &mut Report) -> Result<()> {
    let mut sessions = Vec::new();
    for target in targets.both() {
        let mut session = target.open_session().await?;
        cycles(&mut session, WARM_UP).await?;
        sessions.push(session);
    }
    let mut samples = [Samples::default(), Samples::default()];
    let mut rpcs = 0;
    for _ in 0..sizes.runs {
        for (session, into) in sessions.iter_mut().zip(samples.iter_mut()) {
            let (measured, calls) = cycles(session, sizes.cycles).await?;
            into.extend(measured);
            rpcs = calls;
        }
    }
    for session in sessions {
        session.close().await?;
    }
    let [kumiho, direct] = samples;
    record(
        report,
        CASE,
        &targets.kumiho.name,
        &targets.engine.name,
        &kumiho,
        &direct,
        rpcs,
    );
    Ok(())
}

/// Reports p50/p99 of both, the p50 ratio against [`RATIO_TARGET`] and the added time per RPC
/// (shared with case 7, which runs the same cycle on Spark).
pub fn record(
    report: &mut Report,
    case: &str,
    through: &str,
    direct_name: &str,
    through_samples: &Samples,
    direct_samples: &Samples,
    rpcs: u32,
) {
    report.add(
        case,
        &format!("p50, {through}"),
        ms(through_samples.p50()),
        "ms",
        None,
    );
    report.add(
        case,
        &format!("p99, {through}"),
        ms(through_samples.p99()),
        "ms",
        None,
    );
    report.add(
        case,
        &format!("p50, {direct_name}"),
        ms(direct_samples.p50()),
        "ms",
        None,
    );
    report.add(
        case,
        &format!("p99, {direct_name}"),
        ms(direct_samples.p99()),
        "ms",
        None,
    );
    let ratio = through_samples.p50().as_secs_f64() / direct_samples.p50().as_secs_f64();
    report.add(
        case,
        &format!("p50 ratio {through} / {direct_name}"),
        ratio,
        "x",
        Some(Goal::AtMost(RATIO_TARGET)),
    );
    let added = through_samples.p50().saturating_sub(direct_samples.p50());
    report.add_noted(
        case,
        "added per RPC (p50 difference / RPCs per cycle)",
        us(added / rpcs.max(1)),
        "us",
        None,
        Some(format!("{rpcs} RPCs per cycle")),
    );
}

/// `n` cycles on one session: their latencies and the RPCs the last one took.
pub async fn cycles(session: &mut Session, n: usize) -> Result<(Samples, u32)> {
    let mut samples = Samples::with_capacity(n);
    let mut rpcs = 0;
    for _ in 0..n {
        let started = Instant::now();
        rpcs = cycle(session).await?;
        samples.push(started.elapsed());
    }
    Ok((samples, rpcs))
}

/// One `SELECT 1`, start to CloseOperation; returns the number of RPCs it took.
async fn cycle(session: &mut Session) -> Result<u32> {
    let connection = &mut session.connection;
    let (operation, polls) = connection.execute(&session.handle, "SELECT 1").await?;
    connection.result_metadata(&operation).await?;
    let mut fetches = 0;
    loop {
        fetches += 1;
        if connection.fetch(&operation, FETCH_SIZE).await?.rows == 0 {
            break;
        }
    }
    connection.close_operation(&operation).await?;
    Ok(1 + polls + 1 + fetches + 1)
}
