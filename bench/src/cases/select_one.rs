//! Case 2: the `SELECT 1` cycle as beeline runs it (ExecuteStatement, GetOperationStatus,
//! GetResultSetMetadata, FetchResults until empty, CloseOperation) on one warm session:
//! latency through kumiho and direct, their ratio, and what the gateway adds per RPC.

use std::time::Instant;

use crate::cases::{ms, us, Sizes, Targets, FETCH_SIZE};
use crate::error::Result;
use crate::hs2::{Session, Target};
use crate::process;
use crate::report::{Goal, Report};
use crate::stats::Samples;

const CASE: &str = "2. SELECT 1 cycle";
const WARM_UP: usize = 50;

/// Issue #5: the cycle through kumiho takes at most this many times the direct one.
pub const RATIO_TARGET: f64 = 1.15;

pub async fn run(
    targets: &Targets,
    gateway_pid: Option<u32>,
    sizes: &Sizes,
    report: &mut Report,
) -> Result<()> {
    let gateway_cpu = || gateway_pid.and_then(process::cpu_ticks_of);
    let before = gateway_cpu();
    let (kumiho, direct) =
        compare(&targets.kumiho, &targets.engine, sizes.runs, sizes.cycles).await?;
    let after = gateway_cpu();
    record(
        report,
        CASE,
        &targets.kumiho.name,
        &targets.engine.name,
        &kumiho,
        &direct,
    );
    // What the relay costs the machine, beside what it costs the client's latency.
    if let (Some(before), Some(after)) = (before, after) {
        let rpcs = (WARM_UP + sizes.runs * sizes.cycles) as u32 * kumiho.rpcs;
        let cpu = process::CPU_TICK * (after.saturating_sub(before)) as u32;
        report.add_noted(
            CASE,
            "gateway CPU per RPC",
            us(cpu / rpcs.max(1)),
            "us",
            None,
            Some(format!(
                "{:.0} ms of CPU (in 10 ms ticks) over {rpcs} RPCs",
                ms(cpu)
            )),
        );
    }
    Ok(())
}

/// The cycle's latencies on one target, whole and per RPC.
#[derive(Default)]
pub struct CycleSamples {
    pub whole: Samples,
    /// Each RPC of the cycle in order ("FetchResults #2" for a second call of one method).
    pub per_rpc: Vec<(String, Samples)>,
    /// RPCs in the last cycle.
    pub rpcs: u32,
}

impl CycleSamples {
    fn rpc(&mut self, label: String) -> &mut Samples {
        let at = match self.per_rpc.iter().position(|(known, _)| *known == label) {
            Some(at) => at,
            None => {
                self.per_rpc.push((label, Samples::default()));
                self.per_rpc.len() - 1
            }
        };
        &mut self.per_rpc[at].1
    }
}

/// Runs the cycle on one warm session of each target, alternating `runs` times between them
/// (so that drift of the machine hits both): `(through, direct)`.
pub async fn compare(
    through: &Target,
    direct: &Target,
    runs: usize,
    cycles_per_run: usize,
) -> Result<(CycleSamples, CycleSamples)> {
    let mut sessions = Vec::new();
    // The first session through kumiho may wait for its engine's launch.
    for target in [through, direct] {
        let mut session = target.open_session().await?;
        cycles(&mut session, WARM_UP, &mut CycleSamples::default()).await?;
        session.connection.time_rpcs();
        sessions.push(session);
    }
    let mut samples = [CycleSamples::default(), CycleSamples::default()];
    for _ in 0..runs {
        for (session, into) in sessions.iter_mut().zip(samples.iter_mut()) {
            cycles(session, cycles_per_run, into).await?;
        }
    }
    for session in sessions {
        session.close().await?;
    }
    let [through, direct] = samples;
    Ok((through, direct))
}

/// Reports p50/p99 of both, the p50 ratio against [`RATIO_TARGET`], the added time per RPC,
/// and what the gateway adds to each RPC of the cycle (shared with case 7, which runs the same
/// cycle on Spark).
pub fn record(
    report: &mut Report,
    case: &str,
    through: &str,
    direct_name: &str,
    through_samples: &CycleSamples,
    direct_samples: &CycleSamples,
) {
    let (whole, direct_whole) = (&through_samples.whole, &direct_samples.whole);
    report.add(
        case,
        &format!("p50, {through}"),
        ms(whole.p50()),
        "ms",
        None,
    );
    report.add(
        case,
        &format!("p99, {through}"),
        ms(whole.p99()),
        "ms",
        None,
    );
    let p50_direct = direct_whole.p50();
    report.add(
        case,
        &format!("p50, {direct_name}"),
        ms(p50_direct),
        "ms",
        None,
    );
    report.add(
        case,
        &format!("p99, {direct_name}"),
        ms(direct_whole.p99()),
        "ms",
        None,
    );
    let ratio = whole.p50().as_secs_f64() / p50_direct.as_secs_f64();
    report.add(
        case,
        &format!("p50 ratio {through} / {direct_name}"),
        ratio,
        "x",
        Some(Goal::AtMost(RATIO_TARGET)),
    );
    let rpcs = through_samples.rpcs;
    let added = whole.p50().saturating_sub(p50_direct);
    report.add_noted(
        case,
        "added per RPC (p50 difference / RPCs per cycle)",
        us(added / rpcs.max(1)),
        "us",
        None,
        Some(format!("{rpcs} RPCs per cycle")),
    );
    for (rpc, samples) in &through_samples.per_rpc {
        let Some((_, direct)) = direct_samples.per_rpc.iter().find(|(name, _)| name == rpc) else {
            continue;
        };
        let (p50, p50_direct) = (samples.p50(), direct.p50());
        report.add_noted(
            case,
            &format!("{rpc}: p50 {through} - {direct_name}"),
            (p50.as_secs_f64() - p50_direct.as_secs_f64()) * 1e6,
            "us",
            None,
            Some(format!(
                "p50 {:.1} us through {through}, {:.1} us direct",
                us(p50),
                us(p50_direct)
            )),
        );
    }
}

/// `n` cycles on one session, their latencies (and, when the connection times its RPCs,
/// each RPC's) added to `into`.
pub async fn cycles(session: &mut Session, n: usize, into: &mut CycleSamples) -> Result<()> {
    for _ in 0..n {
        let started = Instant::now();
        into.rpcs = cycle(session).await?;
        into.whole.push(started.elapsed());
        let mut seen: Vec<&str> = Vec::new();
        for (rpc, took) in session.connection.take_rpc_times() {
            seen.push(rpc);
            let label = match seen.iter().filter(|&&name| name == rpc).count() {
                1 => rpc.to_owned(),
                nth => format!("{rpc} #{nth}"),
            };
            into.rpc(label).push(took);
        }
    }
    Ok(())
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
