//! The cases of issue #5, one file each, and what they share: the targets and the run sizes.
//!
//! Every case measures through kumiho and directly on the same engine binary in one run, so
//! that the figures that matter are ratios taken minutes apart on the same machine.

pub mod cold_start;
pub mod idle_sessions;
pub mod large_fetch;
pub mod select_one;
pub mod session_cycle;
pub mod session_storm;
pub mod spark;

use std::time::Duration;

use crate::hs2::Target;

/// Rows per FetchResults, as Hive JDBC and beeline ask by default (and as kumiho and the
/// engine advertise in `hive.server2.thrift.resultset.default.fetch.size`).
pub const FETCH_SIZE: i64 = 1000;

/// How much work each case does; `--quick` shrinks everything for a smoke run.
#[derive(Clone, Debug)]
pub struct Sizes {
    /// Measured runs of each case (after a warm-up that is not measured).
    pub runs: usize,
    /// Iterations per run of the per-session and per-statement cycles (cases 1, 2).
    pub cycles: usize,
    /// Rows of the large result (case 3).
    pub large_rows: u64,
    /// Runs of the large result, per target (case 3).
    pub large_runs: usize,
    /// Idle sessions held at once (case 4).
    pub idle_sessions: usize,
    /// Clients opening sessions at once (case 5).
    pub storm_clients: usize,
    /// Cold starts (case 6).
    pub cold_starts: usize,
    /// Rows of the Spark fetch (case 7).
    pub spark_rows: u64,
    /// `SELECT 1` cycles per run on Spark (case 7); Spark's cycle is milliseconds.
    pub spark_cycles: usize,
    /// TPC-H scale factor of case 7.
    pub tpch_scale: f64,
}

impl Sizes {
    pub fn full() -> Sizes {
        Sizes {
            runs: 5,
            cycles: 400,
            large_rows: 10_000_000,
            large_runs: 3,
            idle_sessions: 10_000,
            storm_clients: 1_000,
            cold_starts: 10,
            spark_rows: 1_000_000,
            spark_cycles: 100,
            tpch_scale: 1.0,
        }
    }

    pub fn quick() -> Sizes {
        Sizes {
            runs: 2,
            cycles: 100,
            large_rows: 1_000_000,
            large_runs: 1,
            idle_sessions: 1_000,
            storm_clients: 200,
            cold_starts: 3,
            spark_rows: 100_000,
            spark_cycles: 20,
            tpch_scale: 0.1,
        }
    }
}

/// The two ways to reach the DataFusion engine.
pub struct Targets {
    /// Through the gateway (USER share level: every session of the run shares one warm engine).
    pub kumiho: Target,
    /// The engine alone, with its secret as the password.
    pub engine: Target,
}

impl Targets {
    /// Through kumiho first, then direct: the order every case reports them in.
    pub fn both(&self) -> [&Target; 2] {
        [&self.kumiho, &self.engine]
    }
}

/// Milliseconds, as the report prints latencies.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Microseconds.
pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
