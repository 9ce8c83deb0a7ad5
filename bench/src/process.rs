//! The processes a run measures: the DataFusion engine alone, the gateway (which launches its
//! own engines), and the Spark Thrift Server. Each runs in its own process group on free
//! loopback ports and is stopped by the run, or killed if the run is interrupted.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::error::{BenchError, Result};

pub const HOST: &str = "127.0.0.1";
/// A release binary binds in milliseconds; this bounds a broken start.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// The Spark Thrift Server needs about 10 s in local mode; more on a busy machine.
const SPARK_READY_TIMEOUT: Duration = Duration::from_secs(180);
const STOP_GRACE: Duration = Duration::from_secs(10);

/// A started server.
pub struct Service {
    pub name: String,
    /// `host:port` of its Thrift binary port.
    pub addr: String,
    child: Child,
    /// Its stderr (and, for Spark, stdout too).
    pub log: PathBuf,
    stopped: bool,
}

impl Service {
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Resident set size now (VmRSS).
    pub fn rss_bytes(&self) -> Result<u64> {
        let pid = self.pid().ok_or_else(|| self.gone())?;
        proc_status_kib(pid, "VmRSS:")
            .map(|kib| kib * 1024)
            .ok_or_else(|| self.gone())
    }

    /// The soft limit on open files (`Max open files` in /proc/PID/limits).
    pub fn open_files_limit(&self) -> Option<u64> {
        open_files_limit(&self.pid()?.to_string())
    }

    fn gone(&self) -> BenchError {
        BenchError::Setup(format!(
            "{} is not running; the end of its log {}:\n{}",
            self.name,
            self.log.display(),
            log_tail(&self.log)
        ))
    }

    /// Whether it is still running (a crash mid-run is reported with its log).
    pub fn check_alive(&mut self) -> Result<()> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            _ => Err(self.gone()),
        }
    }

    /// SIGTERM to its process group, SIGKILL after the grace.
    pub async fn stop(mut self) {
        self.stopped = true;
        let Some(pid) = self.pid() else { return };
        let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGTERM);
        if tokio::time::timeout(STOP_GRACE, self.child.wait())
            .await
            .is_err()
        {
            let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
            let _ = self.child.wait().await;
        }
    }
}

/// An interrupted run still leaves nothing behind.
impl Drop for Service {
    fn drop(&mut self) {
        if !self.stopped {
            if let Some(pid) = self.child.id() {
                let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
            }
        }
    }
}

/// Starts `kumiho-engine` alone, requiring `secret` from its clients, with TPC-H demo data of
/// this scale (generated on first use).
pub async fn start_engine(
    binary: &Path,
    secret: &str,
    tpch_scale: f64,
    logs: &Path,
) -> Result<Service> {
    let mut command = Command::new(binary);
    command
        .args(["--host", HOST, "--port", "0"])
        .arg("--tpch-scale")
        .arg(tpch_scale.to_string())
        .env("KUMIHO_ENGINE_SECRET", secret);
    spawn_announcing(command, "engine", logs, "listening on ").await
}

/// Starts `kumiho` on a free binary port with its own work and cluster-configs directories,
/// launching `engine_binary`, under `wrapper` if one is given (a profiler: `valgrind
/// --tool=callgrind`).
pub async fn start_gateway(
    binary: &Path,
    engine_binary: &Path,
    wrapper: &[String],
    work_dir: &Path,
    cluster_dir: &Path,
    logs: &Path,
) -> Result<Service> {
    let mut command = match wrapper.split_first() {
        Some((program, args)) => {
            let mut command = Command::new(program);
            command.args(args).arg(binary);
            command
        }
        None => Command::new(binary),
    };
    command
        .args([
            "--bind-host",
            HOST,
            "--binary-port",
            "0",
            "--http-port",
            "0",
            // Metrics on, as operators run it, on a free port of its own.
            "--metrics-port",
            "0",
            // The REST API likewise, off Kyuubi's 10099.
            "--rest-port",
            "0",
        ])
        .arg("--work-dir")
        .arg(work_dir)
        .arg("--cluster-configs")
        .arg(cluster_dir)
        // Named, not found beside `kumiho`: under a wrapper, kumiho's own path is the wrapper's.
        .arg("--engine-binary")
        .arg(engine_binary);
    spawn_announcing(command, "kumiho", logs, "binary listening on ").await
}

/// Starts a process that prints `PREFIX host:port` on stdout once it listens.
async fn spawn_announcing(
    mut command: Command,
    name: &str,
    logs: &Path,
    prefix: &str,
) -> Result<Service> {
    let log = logs.join(format!("{name}.log"));
    let log_file = std::fs::File::create(&log)
        .map_err(|e| BenchError::Setup(format!("cannot create {}: {e}", log.display())))?;
    let program = format!("{:?}", command.as_std().get_program());
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log_file)
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| BenchError::Setup(format!("cannot start {program}: {e}")))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut service = Service {
        name: name.to_owned(),
        addr: String::new(),
        child,
        log,
        stopped: false,
    };
    let mut lines = BufReader::new(stdout).lines();
    let deadline = Instant::now() + READY_TIMEOUT;
    while service.addr.is_empty() {
        let line = tokio::time::timeout_at(deadline.into(), lines.next_line()).await;
        match line {
            Ok(Ok(Some(line))) => {
                if let Some(addr) = line.strip_prefix(prefix) {
                    service.addr = addr.trim().to_owned();
                }
            }
            Ok(_) => return Err(service.gone()),
            Err(_) => {
                return Err(BenchError::Setup(format!(
                "{name} did not print `{prefix}HOST:PORT` within {READY_TIMEOUT:?}; its log:\n{}",
                log_tail(&service.log)
            )))
            }
        }
    }
    // Keep draining stdout so that the process never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(service)
}

/// Starts the Spark Thrift Server of a Spark distribution (pyspark's) in local mode on a free
/// port, in `dir` (its metastore and warehouse go there), and waits until it accepts
/// connections.
pub async fn start_spark_thrift_server(
    spark_home: &Path,
    master: &str,
    dir: &Path,
    logs: &Path,
) -> Result<Service> {
    let port = free_port()?;
    let log = logs.join("spark-thrift-server.log");
    let log_file = std::fs::File::create(&log)
        .map_err(|e| BenchError::Setup(format!("cannot create {}: {e}", log.display())))?;
    let err_file = log_file
        .try_clone()
        .map_err(|e| BenchError::Setup(format!("cannot open {}: {e}", log.display())))?;
    let child = Command::new(spark_home.join("bin/spark-submit"))
        .current_dir(dir)
        .env("SPARK_HOME", spark_home)
        .args([
            "--master",
            master,
            "--class",
            "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
        ])
        .arg(format!(
            "spark.sql.warehouse.dir={}",
            dir.join("warehouse").display()
        ))
        .args(["--hiveconf", &format!("hive.server2.thrift.port={port}")])
        .args([
            "--hiveconf",
            &format!("hive.server2.thrift.bind.host={HOST}"),
        ])
        .arg("spark-internal")
        .stdin(Stdio::null())
        .stdout(log_file)
        .stderr(err_file)
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            BenchError::Setup(format!(
                "cannot run {}/bin/spark-submit: {e}",
                spark_home.display()
            ))
        })?;
    let mut service = Service {
        name: "spark thrift server".to_owned(),
        addr: format!("{HOST}:{port}"),
        child,
        log,
        stopped: false,
    };
    let deadline = Instant::now() + SPARK_READY_TIMEOUT;
    loop {
        service.check_alive()?;
        let ready = std::fs::read_to_string(&service.log)
            .is_ok_and(|text| text.contains("HiveThriftServer2 started"));
        if ready && tokio::net::TcpStream::connect(&service.addr).await.is_ok() {
            return Ok(service);
        }
        if Instant::now() > deadline {
            return Err(BenchError::Setup(format!(
                "the Spark Thrift Server did not start within {SPARK_READY_TIMEOUT:?}; its log:\n{}",
                log_tail(&service.log)
            )));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A port free right now on the loopback address (for servers that cannot be given port 0).
fn free_port() -> Result<u16> {
    std::net::TcpListener::bind((HOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(|e| BenchError::Setup(format!("cannot find a free port: {e}")))
}

/// Engines outlive the gateway that launched them (by design); at the end of a run, stop
/// every process whose command line names the run's work directory. Returns how many.
pub async fn stop_engines_under(work_dir: &Path) -> usize {
    let pids = processes_naming(work_dir);
    for pid in &pids {
        let _ = killpg(Pid::from_raw(*pid), Signal::SIGTERM);
        let _ = nix::sys::signal::kill(Pid::from_raw(*pid), Signal::SIGTERM);
    }
    let deadline = Instant::now() + STOP_GRACE;
    while Instant::now() < deadline && !processes_naming(work_dir).is_empty() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for pid in processes_naming(work_dir) {
        let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    pids.len()
}

/// Waits until the processes of the run (the gateway, its engines, the engine alone) are
/// idle: their CPU time grew by at most [`IDLE_TICKS`] clock ticks over the last
/// [`IDLE_WINDOW`]. A gateway answers OpenSession and CloseSession before the engine
/// sessions behind them are opened and closed; the work one case leaves behind this way must
/// not be measured in the next. Gives up after [`IDLE_WAIT_LIMIT`]; returns how long it waited.
pub async fn wait_until_idle(dir: &Path) -> Duration {
    let started = Instant::now();
    let mut window = std::collections::VecDeque::from([cpu_ticks(dir)]);
    let samples = (IDLE_WINDOW.as_millis() / IDLE_POLL.as_millis()) as usize;
    while started.elapsed() < IDLE_WAIT_LIMIT {
        tokio::time::sleep(IDLE_POLL).await;
        window.push_back(cpu_ticks(dir));
        if window.len() > samples {
            window.pop_front();
            let grown = window
                .back()
                .zip(window.front())
                .map_or(0, |(b, f)| b.saturating_sub(*f));
            if grown <= IDLE_TICKS {
                break;
            }
        }
    }
    started.elapsed()
}

const IDLE_POLL: Duration = Duration::from_millis(100);
const IDLE_WINDOW: Duration = Duration::from_millis(500);
/// 5 ticks (50 ms at Linux's 100 Hz) in half a second: under 5 % of two cores.
const IDLE_TICKS: u64 = 5;
const IDLE_WAIT_LIMIT: Duration = Duration::from_secs(60);

/// User and system CPU time, in clock ticks, of every process naming `dir`.
fn cpu_ticks(dir: &Path) -> u64 {
    processes_naming(dir)
        .into_iter()
        .filter_map(|pid| cpu_ticks_of(pid as u32))
        .sum()
}

/// Length of a clock tick of `/proc/PID/stat`'s CPU times (`sysconf(_SC_CLK_TCK)`, 100 Hz
/// on Linux).
pub const CPU_TICK: Duration = Duration::from_millis(10);

/// User and system CPU time of one process, in clock ticks.
pub fn cpu_ticks_of(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command (which may hold spaces) in parentheses.
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after ')'.
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// Processes whose command line holds `dir` (except ourselves).
pub fn processes_naming(dir: &Path) -> Vec<i32> {
    let needle = dir.as_os_str().as_encoded_bytes();
    let own = std::process::id() as i32;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != own)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                cmdline
                    .split(|&b| b == 0)
                    .any(|arg| arg.windows(needle.len()).any(|w| w == needle))
            })
        })
        .collect()
}

fn proc_status_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(key))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The last lines of a log, for error messages.
pub fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// The soft limit on open files of a process (`self`, or a pid), from /proc/PROCESS/limits.
pub fn open_files_limit(process: &str) -> Option<u64> {
    let limits = std::fs::read_to_string(format!("/proc/{process}/limits")).ok()?;
    limits
        .lines()
        .find_map(|line| line.strip_prefix("Max open files"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
