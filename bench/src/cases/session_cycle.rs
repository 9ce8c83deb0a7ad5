//! Case 1: OpenSession + CloseSession against a warm engine, one client after another, each on
//! a new connection as JDBC clients do: OpenSession and the whole cycle's latency, sessions/s.

use std::time::Instant;

use crate::cases::{ms, Sizes, Targets};
use crate::error::Result;
use crate::hs2::Target;
use crate::report::{Goal, Report};
use crate::stats::{median, Samples};

const CASE: &str = "1. OpenSession + CloseSession, warm engine";
/// Cycles before measuring: connections, allocator and caches warm.
const WARM_UP: usize = 50;

/// What one target's runs measured.
#[derive(Default)]
struct Measured {
    open: Samples,
    cycle: Samples,
    sessions_per_second: Vec<f64>,
}

pub async fn run(targets: &Targets, sizes: &Sizes, report: &mut Report) -> Result<()> {
    let mut measured: [Measured; 2] = Default::default();
    for (target, _) in targets.both().iter().zip(&measured) {
        cycles(target, WARM_UP).await?;
    }
    // Runs alternate between the targets so that drift in the machine hits both alike.
    for _ in 0..sizes.runs {
        for (target, into) in targets.both().iter().zip(measured.iter_mut()) {
            let started = Instant::now();
            let (open, cycle) = cycles(target, sizes.cycles).await?;
            into.sessions_per_second
                .push(sizes.cycles as f64 / started.elapsed().as_secs_f64());
            into.open.extend(open);
            into.cycle.extend(cycle);
        }
    }
    for (target, m) in targets.both().iter().zip(measured) {
        let through = &target.name;
        let goal = (target.name == targets.kumiho.name).then_some(Goal::AtMost(1.0));
        report.add(
            CASE,
            &format!("OpenSession p50, {through}"),
            ms(m.open.p50()),
            "ms",
            goal,
        );
        report.add(
            CASE,
            &format!("OpenSession p99, {through}"),
            ms(m.open.p99()),
            "ms",
            None,
        );
        report.add(
            CASE,
            &format!("connect+open+close p50, {through}"),
            ms(m.cycle.p50()),
            "ms",
            None,
        );
        report.add(
            CASE,
            &format!("connect+open+close p99, {through}"),
            ms(m.cycle.p99()),
            "ms",
            None,
        );
        report.add(
            CASE,
            &format!("sessions/s (one client), {through}"),
            median(m.sessions_per_second),
            "1/s",
            None,
        );
    }
    Ok(())
}

/// `n` cycles of connect, OpenSession, CloseSession, disconnect: the OpenSession latencies
/// and the whole cycles'.
async fn cycles(target: &Target, n: usize) -> Result<(Samples, Samples)> {
    let mut open = Samples::with_capacity(n);
    let mut cycle = Samples::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let mut connection = target.connect().await?;
        let before_open = Instant::now();
        let (handle, _) = connection.open_session(target).await?;
        open.push(before_open.elapsed());
        connection.close_session(&handle).await?;
        drop(connection);
        cycle.push(started.elapsed());
    }
    Ok((open, cycle))
}
