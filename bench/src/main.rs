//! `kumiho-bench`: drives HiveServer2 RPCs through kumiho-thrift's client and reports figures.
//!
//! `scripts/bench.sh` builds the release binaries and runs this with their paths. It starts
//! what it measures on free loopback ports (the DataFusion engine alone; kumiho on the
//! embedded registry, which launches its own engine; with `--spark-home` the Spark Thrift
//! Server alone and kumiho's SPARK_SQL cluster), warms up, runs the cases of issue #5
//! ([`cases`]), prints the table with each figure beside its target, writes JSON, and stops
//! everything it started, also when interrupted.
//!
//! - [`hs2`]: sessions and statements as a JDBC client sends them.
//! - [`process`]: the servers under test, and stopping them.
//! - [`stats`]: latency samples and percentiles.
//! - [`report`]: figures, targets, the table and the JSON file.
#![forbid(unsafe_code)]

mod cases;
mod error;
mod hs2;
mod process;
mod report;
mod stats;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use crate::cases::{Sizes, Targets};
use crate::error::{BenchError, Result};
use crate::hs2::Target;
use crate::process::Service;
use crate::report::{Machine, Report};

/// Load generator for Kumiho: its cost beside direct engine access, and its scale.
#[derive(Parser, Debug)]
#[command(name = "kumiho-bench", version)]
struct Args {
    /// The `kumiho` binary.
    #[arg(long)]
    kumiho: PathBuf,
    /// The `kumiho-engine` binary (kumiho launches the one beside itself).
    #[arg(long)]
    engine: PathBuf,
    /// Scratch directory for work dirs, cluster configs, data and logs (created if missing).
    #[arg(long)]
    dir: PathBuf,
    /// Small sizes everywhere: a smoke run of every case in well under a minute.
    #[arg(long)]
    quick: bool,
    /// Measure the Spark cases too (case 7), with this Spark home (pyspark's directory).
    #[arg(long)]
    spark_home: Option<PathBuf>,
    /// Spark master of the Spark Thrift Servers.
    #[arg(long, default_value = "local[2]")]
    spark_master: String,
    /// Where the results go as JSON.
    #[arg(long, default_value = "bench-results.json")]
    json: PathBuf,
    /// Run only these cases, e.g. `--cases 1,2` (default: all; 7 needs --spark-home).
    #[arg(long, value_delimiter = ',')]
    cases: Vec<u32>,
    /// Override the number of idle sessions of case 4.
    #[arg(long)]
    idle_sessions: Option<usize>,
    /// Run kumiho under this command, e.g. `--gateway-wrapper 'valgrind --tool=callgrind'` to
    /// profile it (figures are then meaningless; the profile is the point).
    #[arg(long)]
    gateway_wrapper: Option<String>,
}

impl Args {
    fn wants(&self, case: u32) -> bool {
        self.cases.is_empty() || self.cases.contains(&case)
    }
}

/// The user every benchmark session logs in as.
const USER: &str = "bench";

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let dir = match prepare_dir(&args.dir) {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("kumiho-bench: {e}");
            return ExitCode::from(2);
        }
    };
    let mut report = Report {
        machine: Machine::describe(),
        ..Report::default()
    };
    let outcome = tokio::select! {
        outcome = run(&args, &dir, &mut report) => outcome,
        _ = interrupted() => Err(BenchError::Setup("interrupted; stopping what was started".to_owned())),
    };
    // Engines outlive the gateway that launched them; the run's end is theirs too.
    let leftovers = process::stop_engines_under(&dir).await;
    if leftovers > 0 {
        eprintln!("stopped {leftovers} engine process(es) launched during the run");
    }
    if let Err(e) = outcome {
        eprintln!("kumiho-bench: {e}");
        return ExitCode::FAILURE;
    }
    report
        .figures
        .sort_by_key(|figure| case_number(&figure.case));
    println!("{}", report.table());
    if let Err(e) = report.write_json(&args.json) {
        eprintln!("kumiho-bench: {e}");
        return ExitCode::FAILURE;
    }
    eprintln!("results written to {}", args.json.display());
    if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Sorts `7b. ...` after `7a. ...` and `10. ...` after `9. ...`.
fn case_number(case: &str) -> (u32, String) {
    let digits: String = case.chars().take_while(char::is_ascii_digit).collect();
    (digits.parse().unwrap_or(u32::MAX), case.to_owned())
}

fn prepare_dir(dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .and_then(|()| dir.canonicalize())
        .map_err(|e| {
            BenchError::Setup(format!(
                "cannot use {} as scratch directory: {e}",
                dir.display()
            ))
        })
}

async fn run(args: &Args, dir: &Path, report: &mut Report) -> Result<()> {
    let sizes = {
        let mut sizes = if args.quick {
            Sizes::quick()
        } else {
            Sizes::full()
        };
        if let Some(n) = args.idle_sessions {
            sizes.idle_sessions = n;
        }
        sizes
    };
    let work_dir = dir.join("work");
    let cluster_dir = dir.join("cluster-configs");
    let logs = dir.join("logs");
    for d in [&work_dir, &cluster_dir, &logs] {
        std::fs::create_dir_all(d)
            .map_err(|e| BenchError::Setup(format!("cannot create {}: {e}", d.display())))?;
    }
    write_clusters(&cluster_dir, args)?;

    eprintln!(
        "starting the engine alone and kumiho (logs in {})",
        logs.display()
    );
    let secret = random_secret()?;
    let mut engine = process::start_engine(&args.engine, &secret, sizes.tpch_scale, &logs).await?;
    let mut gateway = process::start_gateway(
        &args.kumiho,
        &args.engine,
        &args
            .gateway_wrapper
            .iter()
            .flat_map(|words| words.split_whitespace().map(str::to_owned))
            .collect::<Vec<_>>(),
        &work_dir,
        &cluster_dir,
        &logs,
    )
    .await?;
    let targets = Targets {
        kumiho: Target::plain("kumiho", gateway.addr.clone(), USER, "x"),
        engine: Target::plain("engine", engine.addr.clone(), USER, &secret),
    };
    // A warm engine: kumiho's first session launches it (the first statement waits for it).
    for target in targets.both() {
        let mut session = target.open_session().await?;
        session.run("SELECT 1", cases::FETCH_SIZE).await?;
        session.close().await?;
    }

    // Case 4 first, while the gateway's heap holds nothing freed by other cases that its
    // sessions could reuse (which would understate their memory).
    if args.wants(4) {
        eprintln!("case 4: {} idle sessions", sizes.idle_sessions);
        let outcome = cases::idle_sessions::run(&targets.kumiho, &gateway, &sizes, report).await;
        settle(report, "4", outcome, &mut [&mut gateway, &mut engine]);
        quiesce(dir).await;
    }
    if args.wants(1) {
        eprintln!("case 1: OpenSession + CloseSession");
        let outcome = cases::session_cycle::run(&targets, &sizes, report).await;
        settle(report, "1", outcome, &mut [&mut gateway, &mut engine]);
        quiesce(dir).await;
    }
    if args.wants(2) {
        eprintln!("case 2: SELECT 1 cycle");
        let outcome = cases::select_one::run(&targets, gateway.pid(), &sizes, report).await;
        settle(report, "2", outcome, &mut [&mut gateway, &mut engine]);
        quiesce(dir).await;
    }
    if args.wants(5) {
        eprintln!("case 5: {} clients at once", sizes.storm_clients);
        let outcome = cases::session_storm::run(&targets, &sizes, report).await;
        settle(report, "5", outcome, &mut [&mut gateway, &mut engine]);
        quiesce(dir).await;
    }
    if args.wants(6) {
        eprintln!("case 6: cold starts");
        let outcome = cases::cold_start::run(&targets.kumiho, &sizes, report).await;
        settle(report, "6", outcome, &mut [&mut gateway, &mut engine]);
        quiesce(dir).await;
    }
    if args.wants(3) {
        eprintln!("case 3: {} rows", sizes.large_rows);
        let outcome = cases::large_fetch::run(&targets, &sizes, report).await;
        settle(report, "3", outcome, &mut [&mut gateway, &mut engine]);
        quiesce(dir).await;
    }
    if let (Some(spark_home), true) = (&args.spark_home, args.wants(7)) {
        run_spark(args, spark_home, dir, &targets, &sizes, report).await?;
    }
    gateway.stop().await;
    engine.stop().await;
    Ok(())
}

/// Case 7: starts the Spark Thrift Server alone, compares it with itself through kumiho, then
/// with the DataFusion engine on TPC-H.
async fn run_spark(
    args: &Args,
    spark_home: &Path,
    dir: &Path,
    targets: &Targets,
    sizes: &Sizes,
    report: &mut Report,
) -> Result<()> {
    let spark_dir = dir.join("spark");
    let data_dir = dir.join("data");
    for d in [&spark_dir, &data_dir] {
        std::fs::create_dir_all(d)
            .map_err(|e| BenchError::Setup(format!("cannot create {}: {e}", d.display())))?;
    }
    eprintln!("case 7: starting the Spark Thrift Server");
    let mut sts = process::start_spark_thrift_server(
        spark_home,
        &args.spark_master,
        &spark_dir,
        &dir.join("logs"),
    )
    .await?;
    let spark = Target::plain("spark", sts.addr.clone(), USER, "x");
    eprintln!("case 7: Spark through kumiho (the first session launches kumiho's Spark engine)");
    let kumiho_spark = targets
        .kumiho
        .clone()
        .with_conf("kyuubi.session.cluster", SPARK_CLUSTER);
    let kumiho_spark = Target {
        name: "kumiho+spark".to_owned(),
        ..kumiho_spark
    };
    let outcome = cases::spark::through_kumiho(&kumiho_spark, &spark, sizes, report).await;
    settle(report, "7 (through kumiho)", outcome, &mut [&mut sts]);
    // After the comparison through kumiho, so that the two Thrift Servers compared there have
    // done the same work before it (TPC-H's scans warm a JVM's JIT far beyond what a fetch does).
    eprintln!("case 7: TPC-H Q1, Q6 at scale {}", sizes.tpch_scale);
    let outcome = cases::spark::tpch(&targets.engine, &spark, &data_dir, sizes, report).await;
    settle(report, "7 (TPC-H)", outcome, &mut [&mut sts]);
    sts.stop().await;
    Ok(())
}

/// Records a case that could not run, and whether a server died under it.
/// Lets what a case left running (engine sessions the gateway closes after the client's
/// CloseSession) finish before the next case measures.
async fn quiesce(dir: &Path) {
    let waited = process::wait_until_idle(dir).await;
    if waited > Duration::from_secs(1) {
        eprintln!(
            "  (waited {:.1} s for the gateway and engines to go idle)",
            waited.as_secs_f64()
        );
    }
}

fn settle(report: &mut Report, case: &str, outcome: Result<()>, services: &mut [&mut Service]) {
    if let Err(e) = outcome {
        report.fail(&format!("case {case}"), e);
    }
    for service in services.iter_mut() {
        if let Err(e) = service.check_alive() {
            report.fail(&format!("case {case}"), e);
        }
    }
}

/// Name of the Spark cluster file kumiho serves in case 7.
const SPARK_CLUSTER: &str = "spark";

/// The default cluster (DataFusion, USER level) and, with Spark, the `spark` cluster.
fn write_clusters(cluster_dir: &Path, args: &Args) -> Result<()> {
    let write = |name: &str, text: String| {
        let path = cluster_dir.join(format!("{name}.yaml"));
        std::fs::write(&path, text)
            .map_err(|e| BenchError::Setup(format!("cannot write {}: {e}", path.display())))
    };
    write(
        "default",
        "registry:\n  embedded: {}\nengine:\n  type: DATAFUSION\n  share-level: USER\n  \
         idle-timeout: 30m\n  initialize-timeout: 2m\n"
            .to_owned(),
    )?;
    if let Some(spark_home) = &args.spark_home {
        write(
            SPARK_CLUSTER,
            format!(
                "registry:\n  embedded: {{}}\nengine:\n  type: SPARK_SQL\n  share-level: USER\n  \
                 idle-timeout: 30m\n  initialize-timeout: 3m\n  spark:\n    home: {}\n    \
                 master: \"{}\"\n    conf: {{spark.ui.enabled: \"false\"}}\n",
                serde_json::to_string(&spark_home.display().to_string()).unwrap_or_default(),
                args.spark_master
            ),
        )?;
    }
    Ok(())
}

/// A fresh internal secret for the engine run alone.
fn random_secret() -> Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| BenchError::Setup(format!("cannot read /dev/urandom: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Resolves on SIGINT or SIGTERM.
async fn interrupted() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut terminate) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
