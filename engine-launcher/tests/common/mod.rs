//! Helper processes for the integration tests: the test binary runs itself again in a role
//! (hold a lock, hold a registration, act as an engine), so that cross-process behaviour is
//! tested with real processes and real file locks.

#![allow(dead_code)] // each test binary uses some of the helpers

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use kumiho_engine_launcher::{
    EmbeddedRegistry, EngineEndpoint, EngineRegistrationArgs, EngineSelfRegistration, Registry,
};

const ROLE_ENV: &str = "KUMIHO_TEST_HELPER_ROLE";
const DIR_ENV: &str = "KUMIHO_TEST_HELPER_DIR";
const PATH_ENV: &str = "KUMIHO_TEST_HELPER_PATH";
/// The fake engine's registry flags, one per line.
pub const ENGINE_ARGS_ENV: &str = "KUMIHO_TEST_ENGINE_ARGS";
/// What a helper prints once it holds what it was asked to hold.
const READY: &str = "HELPER READY";
/// Longest a fake engine lives if nobody stops it, so a failed test leaves no process behind.
const FAKE_ENGINE_LIFETIME: Duration = Duration::from_secs(300);

/// Not a test: the entry point of helper processes (a no-op in a normal test run).
#[test]
fn helper_process() {
    let Ok(role) = std::env::var(ROLE_ENV) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    match role.as_str() {
        "hold-lock" => runtime.block_on(async {
            let registry = EmbeddedRegistry::open(std::env::var(DIR_ENV).unwrap()).unwrap();
            let path = std::env::var(PATH_ENV).unwrap();
            let _lock = registry.lock(&path, Duration::from_secs(30)).await.unwrap();
            hold_until_parent_goes();
        }),
        "register" => runtime.block_on(async {
            let registry = EmbeddedRegistry::open(std::env::var(DIR_ENV).unwrap()).unwrap();
            let space = std::env::var(PATH_ENV).unwrap();
            let endpoint = EngineEndpoint {
                host: "127.0.0.1".to_owned(),
                port: 40999,
                version: "0.1.0".to_owned(),
                ref_id: "other-process".to_owned(),
            };
            let _guard = registry.register_engine(&space, endpoint).await.unwrap();
            hold_until_parent_goes();
        }),
        "fake-engine" => runtime.block_on(fake_engine()),
        other => panic!("unknown helper role {other}"),
    }
}

/// Says it is ready, then keeps what it holds until its parent closes its stdin (or dies).
fn hold_until_parent_goes() {
    println!("{READY}");
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}

/// An engine as the launcher sees one: prints a little, registers itself as a real engine
/// does, and runs until it is stopped.
async fn fake_engine() {
    println!("fake engine starting");
    if std::env::var("KUMIHO_ENGINE_SECRET").is_ok_and(|s| !s.is_empty()) {
        println!("secret received");
    }
    let flags: Vec<String> = std::env::var(ENGINE_ARGS_ENV)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let (args, _) = EngineRegistrationArgs::extract(flags).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    println!("listening on 127.0.0.1:{port}");
    let _registration = EngineSelfRegistration::start(&args.unwrap(), "127.0.0.1", port)
        .await
        .unwrap();
    tokio::time::sleep(FAKE_ENGINE_LIFETIME).await;
}

/// The command that runs this test binary as a helper in `role`.
pub fn helper_command(role: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "common::helper_process",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE_ENV, role);
    command
}

/// A helper process holding something; killed (and reaped) when dropped.
pub struct Helper(Child);

impl Helper {
    /// Starts a helper in `role` on the registry in `dir` and waits until it holds `path`.
    pub fn start(role: &str, dir: &Path, path: &str) -> Helper {
        let mut child = helper_command(role)
            .env(DIR_ENV, dir)
            .env(PATH_ENV, path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        for line in stdout.lines() {
            if line.unwrap().ends_with(READY) {
                return Helper(child);
            }
        }
        panic!(
            "helper {role} ended before it was ready: {:?}",
            child.wait()
        );
    }

    /// Kills the helper as a crash would: no cleanup runs, the kernel drops its locks.
    pub fn kill(mut self) {
        self.0.kill().unwrap();
        self.0.wait().unwrap();
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
