//! The Spark Thrift Server process: started with `spark-submit`, its output copied to ours,
//! watched until its port accepts connections, and stopped (SIGTERM, then SIGKILL).
//!
//! The server listens on loopback only, on a port picked here, and admits only the gate's
//! token ([`Lockdown`]); the supervisor's gate is the one address anyone else is told about.

use std::io::{self, Write};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio::task::JoinSet;

use crate::lockdown::Lockdown;

/// How often readiness is probed while Spark starts.
const READY_POLL: Duration = Duration::from_millis(250);

/// How long the copying of Spark's output may lag behind its exit before the summary line is
/// written anyway (a grandchild may hold the pipes open).
const OUTPUT_DRAIN: Duration = Duration::from_secs(2);

/// The address the Spark Thrift Server binds; only the supervisor connects to it.
pub const LOOPBACK: &str = "127.0.0.1";

/// spark-submit's primary resource for a class in Spark itself: the end of its options.
const PRIMARY_RESOURCE: &str = "spark-internal";

/// A running `spark-submit` of the Spark Thrift Server.
pub struct ThriftServer {
    child: Child,
    /// Its Thrift port on [`LOOPBACK`].
    port: u16,
    /// The first line of its output that states an error, for the one-line summary.
    first_error: Arc<Mutex<Option<String>>>,
    /// The tasks copying its stdout and stderr.
    output: JoinSet<()>,
}

/// Why the Spark Thrift Server did not come up, or went away.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// spark-submit could not be run.
    #[error("cannot run {program}: {source}; check `engine.spark.home` (SPARK_HOME) in the cluster config")]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },
    /// spark-submit ended; the summary names the first error it printed.
    #[error("spark-submit exited with {status} {when}{}", cause(.first_error))]
    Exited {
        status: ExitStatus,
        /// "before the Spark Thrift Server accepted connections", or "while serving".
        when: &'static str,
        first_error: Option<String>,
    },
    /// The OS could not say how the process is doing.
    #[error("cannot wait for spark-submit: {0}")]
    Wait(#[source] io::Error),
}

/// The end of an exit's message: the first error Spark printed, or where to look.
fn cause(first_error: &Option<String>) -> String {
    match first_error {
        Some(line) => format!(": {line}"),
        None => "; its output above says why".to_owned(),
    }
}

impl ThriftServer {
    /// Runs `command` (spark-submit and its arguments, which end with `spark-internal`) with
    /// the Thrift Server's port and bind host appended, in `work_dir`, its output copied line
    /// by line to this process's stdout. `lockdown`'s settings go after the command's own
    /// `--conf`s (so they win) and into the JVM's environment.
    ///
    /// Call it from the main task: the child is made to receive SIGTERM when the *thread*
    /// that started it ends (`PR_SET_PDEATHSIG`), and the main thread lives as long as the
    /// process, so Spark cannot outlive a supervisor killed on its own. (A supervisor killed
    /// with its process group takes Spark with it anyway: they share the group.)
    pub fn start(
        command: &[String],
        port: u16,
        work_dir: &Path,
        lockdown: &Lockdown,
    ) -> Result<ThriftServer, ServerError> {
        let (program, args) = command.split_first().ok_or_else(|| ServerError::Spawn {
            program: String::new(),
            source: io::Error::new(
                io::ErrorKind::InvalidInput,
                "no spark-submit command given after `--`",
            ),
        })?;
        // spark-submit reads options up to the primary resource; the last `--conf` of a key
        // wins. Without a primary resource (a stand-in), everything is appended.
        let resource = args
            .iter()
            .rposition(|arg| arg == PRIMARY_RESOURCE)
            .unwrap_or(args.len());
        let mut spark = Command::new(program);
        spark
            .args(&args[..resource])
            .args(Lockdown::spark_submit_options())
            .args(&args[resource..])
            .arg("--hiveconf")
            .arg(format!("hive.server2.thrift.port={port}"))
            .arg("--hiveconf")
            .arg(format!("hive.server2.thrift.bind.host={LOOPBACK}"))
            .args(Lockdown::hiveconf_args())
            .current_dir(work_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        lockdown.configure(&mut spark);
        die_with_this_thread(&mut spark);
        let mut child = spark.spawn().map_err(|source| ServerError::Spawn {
            program: program.clone(),
            source,
        })?;
        let first_error = Arc::new(Mutex::new(None));
        let mut output = JoinSet::new();
        if let Some(stdout) = child.stdout.take() {
            output.spawn(copy_lines(stdout, Arc::clone(&first_error)));
        }
        if let Some(stderr) = child.stderr.take() {
            output.spawn(copy_lines(stderr, Arc::clone(&first_error)));
        }
        Ok(ThriftServer {
            child,
            port,
            first_error,
            output,
        })
    }

    /// The Thrift Server's address.
    pub fn address(&self) -> String {
        format!("{LOOPBACK}:{}", self.port)
    }

    /// spark-submit's process id (the JVM's: the script execs it).
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Waits until the Thrift port accepts connections; fails at once if spark-submit exits
    /// first (a bad master, a bad conf, a missing class), with its first error.
    pub async fn wait_ready(&mut self) -> Result<(), ServerError> {
        let address = self.address();
        let mut ticks = tokio::time::interval(READY_POLL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                status = self.child.wait() => {
                    let status = status.map_err(ServerError::Wait)?;
                    return Err(self.exited(status, "before the Spark Thrift Server accepted connections").await);
                }
                _ = ticks.tick() => {
                    // A bare connect and close: the server logs nothing for it.
                    if TcpStream::connect(&address).await.is_ok() {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Forgets the error lines printed so far (the startup check's expected refusal), so that
    /// the summary of a later exit quotes one printed while serving.
    pub fn forget_errors(&self) {
        *self.first_error.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Waits until spark-submit exits on its own, and says how.
    pub async fn wait_exit(&mut self) -> ServerError {
        match self.child.wait().await {
            Ok(status) => self.exited(status, "while serving").await,
            Err(e) => ServerError::Wait(e),
        }
    }

    /// Stops Spark: SIGTERM (its shutdown hooks stop the SparkContext and the metastore),
    /// then SIGKILL if it is still running after `grace`. Returns once it has exited.
    pub async fn stop(&mut self, grace: Duration) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        if let Some(pid) = self.child.id().and_then(|pid| i32::try_from(pid).ok()) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
        }
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(_) => tracing::info!("Spark stopped"),
            Err(_) => {
                tracing::warn!(grace = ?grace, "Spark ignored SIGTERM; killing it");
                let _ = self.child.kill().await;
            }
        }
        self.drain_output().await;
    }

    /// The error for an exit, once the output copied so far has been written (so that the
    /// summary comes last in the log, where a launcher quoting the log's tail finds it).
    async fn exited(&mut self, status: ExitStatus, when: &'static str) -> ServerError {
        self.drain_output().await;
        let first_error = self
            .first_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        ServerError::Exited {
            status,
            when,
            first_error,
        }
    }

    async fn drain_output(&mut self) {
        let drained = async { while self.output.join_next().await.is_some() {} };
        let _ = tokio::time::timeout(OUTPUT_DRAIN, drained).await;
    }
}

/// Makes the child receive SIGTERM when the thread that spawns it ends.
#[allow(unsafe_code)]
fn die_with_this_thread(command: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec; it only calls prctl(2), which
    // is async-signal-safe, and neither allocates nor touches locks.
    unsafe {
        command
            .pre_exec(|| nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(io::Error::from));
    }
}

/// Copies a stream's lines to stdout (whole lines, so that two streams do not interleave
/// within a line) and remembers the first that states an error.
async fn copy_lines(stream: impl AsyncRead + Unpin, first_error: Arc<Mutex<Option<String>>>) {
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if states_an_error(text) {
            let mut first = first_error.lock().unwrap_or_else(|e| e.into_inner());
            first.get_or_insert_with(|| text.to_owned());
        }
        let mut out = io::stdout().lock();
        let _ = writeln!(out, "{text}").and_then(|()| out.flush());
    }
}

/// Whether a line of spark-submit's output states an error: a Java exception's headline
/// (`Exception in thread "main" ...`, `org.apache.spark.SparkException: ...`), spark-submit's
/// own `Error: ...`, or a log line at ERROR level. Stack frames (indented) are not.
pub fn states_an_error(line: &str) -> bool {
    if line.is_empty() || line.starts_with(char::is_whitespace) {
        return false;
    }
    if line.starts_with("Exception in thread") || line.starts_with("Error: ") {
        return true;
    }
    if line.contains(" ERROR ") {
        return true;
    }
    // `some.package.SomeException: message` or `...Error: message`
    line.split_once(": ").is_some_and(|(head, _)| {
        !head.contains(' ') && (head.ends_with("Exception") || head.ends_with("Error"))
    })
}

/// A free port on loopback for the Thrift Server. Another process could take it before
/// Spark binds it; Spark then exits with "Address already in use" and the launch fails.
pub fn free_loopback_port() -> io::Result<u16> {
    let listener = std::net::TcpListener::bind((LOOPBACK, 0))?;
    Ok(listener.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_headlines_are_told_from_stack_frames_and_info_lines() {
        for error in [
            "Exception in thread \"main\" org.apache.spark.SparkException: Master must either be yarn or start with spark, k8s, or local",
            "org.apache.spark.SparkException: Could not parse Master URL: 'bogus://x'",
            "java.lang.OutOfMemoryError: Java heap space",
            "Error: Failed to load class org.example.Missing.",
            "26/11/30 11:06:35 ERROR SparkContext: Error initializing SparkContext.",
        ] {
            assert!(states_an_error(error), "{error}");
        }
        for other in [
            "\tat org.apache.spark.deploy.SparkSubmit.error(SparkSubmit.scala:1068)",
            "26/11/30 11:06:50 INFO HiveThriftServer2: HiveThriftServer2 started",
            "26/11/30 11:06:34 WARN Utils: Set SPARK_LOCAL_IP if you need to bind to another address",
            "",
        ] {
            assert!(!states_an_error(other), "{other}");
        }
    }

    #[tokio::test]
    async fn an_early_exit_fails_at_once_with_the_first_error_printed() {
        let dir = tempfile::tempdir().unwrap();
        let script =
            "echo starting; echo 'Exception in thread \"main\" x.SparkException: bad master' >&2; \
                      echo '\tat x.Y(Y.scala:1)' >&2; exit 3";
        let command = ["sh", "-c", script, "sh"].map(str::to_owned);
        let port = free_loopback_port().unwrap();
        let lockdown = Lockdown::install(dir.path()).unwrap();
        let mut server = ThriftServer::start(&command, port, dir.path(), &lockdown).unwrap();
        let error = server.wait_ready().await.unwrap_err().to_string();
        assert!(
            error.contains("exit status: 3")
                && error.contains("before the Spark Thrift Server accepted connections")
                && error.ends_with("x.SparkException: bad master"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn kumihos_hive_settings_come_last_and_the_jvm_gets_the_token_not_the_secret() {
        let dir = tempfile::tempdir().unwrap();
        let lockdown = Lockdown::install(dir.path()).unwrap();
        // Stands in for spark-submit: writes down its arguments and environment, and exits.
        let script = "printf '%s\\n' \"$@\" > args; \
                      printf '%s\\n' \"$KUMIHO_SPARK_GATE_SECRET\" \"${KUMIHO_ENGINE_SECRET-unset}\" \"$SPARK_DIST_CLASSPATH\" > env";
        let command = [
            "sh",
            "-c",
            script,
            "spark-submit",
            "--conf",
            "spark.hadoop.hive.server2.authentication=NONE",
            "--conf",
            "spark.hive.server2.authentication=NOSASL",
            "--class",
            "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
            "spark-internal",
        ]
        .map(str::to_owned);
        let port = free_loopback_port().unwrap();
        let mut server = ThriftServer::start(&command, port, dir.path(), &lockdown).unwrap();
        server.wait_ready().await.unwrap_err();
        let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
        let args: Vec<&str> = args.lines().collect();
        let at = |arg: &str| {
            args.iter()
                .position(|a| *a == arg)
                .unwrap_or_else(|| panic!("{arg} not in {args:?}"))
        };
        let resource = at("spark-internal");
        for ours in [
            "spark.hadoop.hive.server2.authentication=CUSTOM",
            "spark.hive.server2.authentication=CUSTOM",
        ] {
            assert!(
                at("spark.hive.server2.authentication=NOSASL") < at(ours) && at(ours) < resource,
                "{args:?}"
            );
        }
        assert!(resource < at(&format!("hive.server2.thrift.port={port}")));
        assert!(resource < at("hive.server2.authentication=CUSTOM"));
        let env = std::fs::read_to_string(dir.path().join("env")).unwrap();
        let env: Vec<&str> = env.lines().collect();
        assert_eq!(env[0], lockdown.token.expose());
        assert_eq!(env[1], "unset");
        assert!(
            env[2].ends_with(&lockdown.classes.display().to_string()),
            "{env:?}"
        );
    }

    #[tokio::test]
    async fn ready_once_the_port_accepts_and_stop_escalates_to_kill() {
        let dir = tempfile::tempdir().unwrap();
        let listener = std::net::TcpListener::bind((LOOPBACK, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        // Stands in for Spark: ignores SIGTERM, runs until killed; the port is already open.
        let command =
            ["sh", "-c", "trap '' TERM; while :; do sleep 1; done", "sh"].map(str::to_owned);
        let lockdown = Lockdown::install(dir.path()).unwrap();
        let mut server = ThriftServer::start(&command, port, dir.path(), &lockdown).unwrap();
        server.wait_ready().await.unwrap();
        let pid = server.pid().unwrap();
        server.stop(Duration::from_millis(300)).await;
        assert!(
            server.child.try_wait().unwrap().is_some(),
            "pid {pid} still running"
        );
    }
}
