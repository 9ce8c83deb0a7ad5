//! The supervisor binary around a stand-in for spark-submit (a Python listener on the port
//! the supervisor appends), against a real embedded registry: registration while Spark
//! serves, and each way the engine ends (Spark dying, idle, SIGTERM) deregistering it and
//! leaving no Spark behind.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use kumiho_engine_launcher::{is_alive, EmbeddedRegistry, Registry};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

const SPACE: &str = "/kumiho_0.1.0_USER_SPARK_SQL/alice/default";

/// Listens where `--hiveconf hive.server2.thrift.port=P` says and answers SASL PLAIN as the
/// locked-down Thrift Server would once started: COMPLETE for the password in
/// `KUMIHO_SPARK_GATE_SECRET`, BAD for any other (a bare connect and close is fine too).
const FAKE_SPARK: &str = "\
import os, socket, struct, sys
port = int([a.split('=', 1)[1] for a in sys.argv if a.startswith('hive.server2.thrift.port=')][0])
token = os.environ['KUMIHO_SPARK_GATE_SECRET'].encode()
assert 'KUMIHO_ENGINE_SECRET' not in os.environ
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(('127.0.0.1', port))
server.listen()
print('fake Thrift Server started', flush=True)
def frame(stream):
    head = stream.read(5)
    if len(head) < 5:
        return None
    status, length = struct.unpack('>BI', head)
    return status, stream.read(length)
while True:
    conn = server.accept()[0]
    stream = conn.makefile('rb')
    if frame(stream) and (response := frame(stream)):
        password = response[1].split(b'\\0')[2]
        answer = (5, b'') if password == token else (3, b'wrong password')
        conn.sendall(struct.pack('>BI', answer[0], len(answer[1])) + answer[1])
    stream.close()
    conn.close()
";

/// A running supervisor, the Spark stand-in's pid, and the lines it printed up to readiness.
struct Supervisor {
    child: Child,
    spark_pid: u32,
    lines: Vec<String>,
}

/// Starts the supervisor with the registry flags and `idle` as the idle timeout, and reads
/// its stdout until it announces the gate (`listening on ... pid N)`).
fn start(registry: &Path, idle: &str) -> Supervisor {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kumiho-spark-engine"))
        .args(["--registry-dir", &registry.display().to_string()])
        .args([
            "--engine-space",
            SPACE,
            "--ref-id",
            "r-1",
            "--idle-timeout",
            idle,
        ])
        .args(["--work-dir", &registry.join("engine").display().to_string()])
        .args([
            "--stop-grace",
            "5s",
            "--",
            "python3",
            "-c",
            FAKE_SPARK,
            "spark-internal",
        ])
        .env("KUMIHO_ENGINE_SECRET", "the-secret")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the supervisor starts");
    let stdout = child.stdout.take().unwrap();
    let mut stdout = BufReader::new(stdout).lines();
    let mut lines = Vec::new();
    while let Some(line) = stdout.next() {
        let line = line.unwrap();
        let pid = line
            .strip_prefix("listening on ")
            .and_then(|rest| rest.rsplit_once("pid "))
            .map(|(_, pid)| pid.trim_end_matches(')').parse::<u32>().unwrap());
        lines.push(line);
        if let Some(spark_pid) = pid {
            // Keep reading, as the launcher's log file would: a closed pipe is not the test.
            std::thread::spawn(move || stdout.for_each(drop));
            return Supervisor {
                child,
                spark_pid,
                lines,
            };
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the supervisor never announced its gate: {lines:?}");
}

/// A test that fails half-way leaves no supervisor (and so no Spark stand-in) behind.
impl Drop for Supervisor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn registrations(registry: &Path) -> usize {
    EmbeddedRegistry::open(registry)
        .unwrap()
        .get_engines(SPACE)
        .await
        .unwrap()
        .len()
}

/// Waits (bounded) for the supervisor to exit.
fn exit_of(supervisor: &mut Supervisor) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = supervisor.child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "the supervisor did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(pid: u32, signal: Signal) {
    kill(Pid::from_raw(pid as i32), signal).unwrap();
}

#[tokio::test]
async fn spark_dying_deregisters_the_engine_and_fails_the_supervisor() {
    let registry = tempfile::tempdir().unwrap();
    let mut supervisor = start(registry.path(), "30m");
    assert!(supervisor
        .lines
        .iter()
        .any(|l| l == "fake Thrift Server started"));
    assert_eq!(registrations(registry.path()).await, 1);
    signal(supervisor.spark_pid, Signal::SIGKILL);
    let status = exit_of(&mut supervisor);
    assert_eq!(status.code(), Some(1));
    assert_eq!(registrations(registry.path()).await, 0);
}

#[tokio::test]
async fn an_idle_engine_deregisters_and_stops_spark() {
    let registry = tempfile::tempdir().unwrap();
    let mut supervisor = start(registry.path(), "1s");
    let status = exit_of(&mut supervisor);
    assert!(status.success(), "{status}");
    assert_eq!(registrations(registry.path()).await, 0);
    assert!(
        !is_alive(supervisor.spark_pid),
        "Spark outlived its supervisor"
    );
}

#[tokio::test]
async fn sigterm_deregisters_stops_spark_and_exits_cleanly() {
    let registry = tempfile::tempdir().unwrap();
    let mut supervisor = start(registry.path(), "30m");
    assert_eq!(registrations(registry.path()).await, 1);
    signal(supervisor.child.id(), Signal::SIGTERM);
    let status = exit_of(&mut supervisor);
    assert!(status.success(), "{status}");
    assert_eq!(registrations(registry.path()).await, 0);
    assert!(
        !is_alive(supervisor.spark_pid),
        "Spark outlived its supervisor"
    );
}
