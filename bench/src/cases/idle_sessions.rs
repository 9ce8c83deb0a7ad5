//! Case 4: many idle sessions held by one gateway: its resident memory per session, and that
//! every session still answers a statement afterwards.
//!
//! Each gateway session holds two sockets (the client's, and its own to the engine). When the
//! gateway's open-file limit cannot hold one client connection per session, clients open
//! several sessions per connection (the protocol allows it), and the report says so.

use std::sync::Arc;
use std::time::Instant;

use kumiho_thrift::cli::TSessionHandle;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::cases::{Sizes, FETCH_SIZE};
use crate::error::{BenchError, Result};
use crate::hs2::{Connection, Target};
use crate::process::Service;
use crate::report::{Goal, Report};

/// Issue #5: the gateway's memory per idle session.
pub const BYTES_PER_SESSION_TARGET: f64 = 64.0 * 1024.0;
/// Connections being opened (or sessions being checked) at once.
const CONCURRENCY: usize = 64;
/// File descriptors kept free for listeners, logs, registry files and the engines' launches.
const SPARE_FILES: u64 = 512;

/// One client connection and the sessions it opened.
struct Held {
    connection: Connection,
    sessions: Vec<TSessionHandle>,
}

pub async fn run(
    kumiho: &Target,
    gateway: &Service,
    sizes: &Sizes,
    report: &mut Report,
) -> Result<()> {
    let sessions = sizes.idle_sessions;
    let case = format!("4. {sessions} idle sessions on one gateway");
    let per_connection = sessions_per_connection(gateway, sessions)?;
    let connections = sessions.div_ceil(per_connection);
    let rss_before = gateway.rss_bytes()?;

    let started = Instant::now();
    let mut held = open_all(kumiho, connections, per_connection, sessions).await?;
    let opened = started.elapsed();
    let answered = check_all(&mut held).await;
    let rss_after = gateway.rss_bytes()?;
    let held_sessions: usize = held.iter().map(|h| h.sessions.len()).sum();

    let note = (per_connection > 1).then(|| {
        format!(
            "{connections} client connections, {per_connection} sessions each: the gateway's \
             open-file limit ({}) cannot hold a client socket and an engine socket per session",
            gateway.open_files_limit().unwrap_or(0)
        )
    });
    report.add_noted(
        &case,
        "sessions held",
        held_sessions as f64,
        "sessions",
        None,
        note,
    );
    report.add(
        &case,
        "sessions opened per second (64 clients at a time)",
        held_sessions as f64 / opened.as_secs_f64(),
        "1/s",
        None,
    );
    report.add(
        &case,
        "gateway RSS per session",
        (rss_after.saturating_sub(rss_before)) as f64 / held_sessions as f64 / 1024.0,
        "KiB",
        Some(Goal::AtMost(BYTES_PER_SESSION_TARGET / 1024.0)),
    );
    report.add(
        &case,
        "sessions answering SELECT 1 afterwards",
        answered as f64,
        "sessions",
        Some(Goal::AtLeast(sessions as f64)),
    );
    close_all(held).await;
    Ok(())
}

/// How many sessions each client connection must carry so that the gateway (two sockets per
/// session) and this process (one per connection) stay within their open-file limits.
fn sessions_per_connection(gateway: &Service, sessions: usize) -> Result<usize> {
    let gateway_limit = gateway.open_files_limit().unwrap_or(u64::MAX);
    let own_limit = crate::process::open_files_limit("self").unwrap_or(1024);
    let sessions = sessions as u64;
    // The engine sockets alone must fit.
    if sessions + SPARE_FILES >= gateway_limit {
        return Err(BenchError::Setup(format!(
            "the gateway may open {gateway_limit} files, too few for {sessions} engine sockets; \
             raise `ulimit -n` (scripts/bench.sh does, up to the hard limit)"
        )));
    }
    let client_sockets = (gateway_limit - sessions - SPARE_FILES).min(own_limit - SPARE_FILES);
    Ok(sessions.div_ceil(client_sockets.max(1)).max(1) as usize)
}

/// Opens `total` sessions over `connections` connections, `CONCURRENCY` connections at a time.
async fn open_all(
    target: &Target,
    connections: usize,
    per_connection: usize,
    total: usize,
) -> Result<Vec<Held>> {
    let permits = Arc::new(Semaphore::new(CONCURRENCY));
    let mut tasks = JoinSet::new();
    for i in 0..connections {
        let count = per_connection.min(total - i * per_connection);
        let target = target.clone();
        let permits = permits.clone();
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await;
            let mut connection = target.connect().await?;
            let mut sessions = Vec::with_capacity(count);
            for _ in 0..count {
                sessions.push(connection.open_session(&target).await?.0);
            }
            Ok::<_, BenchError>(Held {
                connection,
                sessions,
            })
        });
    }
    let mut held = Vec::with_capacity(connections);
    let mut first_error = None;
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(Ok(h)) => held.push(h),
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(e) => {
                first_error.get_or_insert(BenchError::Setup(format!("a client task failed: {e}")));
            }
        }
    }
    match first_error {
        // Sessions opened so far close when `held` drops (their connections end).
        Some(e) => Err(e),
        None => Ok(held),
    }
}

/// Runs `SELECT 1` on every session; returns how many answered with its row.
async fn check_all(held: &mut Vec<Held>) -> usize {
    let permits = Arc::new(Semaphore::new(CONCURRENCY));
    let mut tasks = JoinSet::new();
    for mut h in held.drain(..) {
        let permits = permits.clone();
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await;
            let mut answered = 0;
            for session in &h.sessions {
                if let Ok(batch) = h
                    .connection
                    .run_statement(session, "SELECT 1", FETCH_SIZE)
                    .await
                {
                    answered += usize::from(batch.rows == 1);
                }
            }
            (h, answered)
        });
    }
    let mut answered = 0;
    while let Some(joined) = tasks.join_next().await {
        if let Ok((h, n)) = joined {
            answered += n;
            held.push(h);
        }
    }
    answered
}

/// CloseSession on every session, then the connections end.
async fn close_all(held: Vec<Held>) {
    let permits = Arc::new(Semaphore::new(CONCURRENCY));
    let mut tasks = JoinSet::new();
    for mut h in held {
        let permits = permits.clone();
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await;
            for session in &h.sessions {
                let _ = h.connection.close_session(session).await;
            }
        });
    }
    while tasks.join_next().await.is_some() {}
}
