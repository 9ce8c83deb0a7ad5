//! A standalone ZooKeeper from Debian's `zookeeper` package, for tests: free port, own data, stop and restart.
//!
//! ```no_run
//! # async fn test() {
//! use kumiho_engine_launcher::testing::ZooKeeperServer;
//! let mut server = ZooKeeperServer::start().await; // answers requests when this returns
//! let location = server.location();                // short timeouts, for tests
//! server.stop();                                   // the ensemble is unreachable
//! server.restart().await;                          // same port, same data: sessions survive
//! server.wipe_and_restart().await;                 // same port, no data: every session expired
//! # }
//! ```
//!
//! The server is stopped when dropped; its directory (config, data, log) is removed.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use zookeeper_client::Client;

use crate::registry::zookeeper::ZooKeeperLocation;

/// The server's jar; its manifest's class path names its dependencies in `/usr/share/java`.
pub const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";
const MAIN_CLASS: &str = "org.apache.zookeeper.server.quorum.QuorumPeerMain";
/// A cold JVM starts ZooKeeper in about a second; this bounds a broken start.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a stopping server gets after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// Short ticks keep test sessions short: ZooKeeper allows sessions of 2 to 20 ticks unless told
/// otherwise; `maxSessionTimeout` raises the ceiling for the tests that want long sessions.
const TICK_MS: u64 = 200;
const MAX_SESSION_TIMEOUT_MS: u64 = 120_000;

/// One standalone ZooKeeper server on 127.0.0.1.
#[derive(Debug)]
pub struct ZooKeeperServer {
    directory: PathBuf,
    port: u16,
    process: Option<Child>,
}

impl ZooKeeperServer {
    /// Starts a server on a free port in a new directory and waits until it answers a request.
    pub async fn start() -> ZooKeeperServer {
        let directory = std::env::temp_dir().join(format!(
            "kumiho-zookeeper-{}",
            uuid::Uuid::new_v4().simple()
        ));
        fs::create_dir_all(&directory).expect("create the ZooKeeper test directory");
        let port = free_port();
        let mut server = ZooKeeperServer {
            directory,
            port,
            process: None,
        };
        server.restart().await;
        server
    }

    /// `127.0.0.1:PORT`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// A location with short timeouts, so that tests of outages finish quickly.
    pub fn location(&self) -> ZooKeeperLocation {
        ZooKeeperLocation {
            addresses: self.address(),
            session_timeout: Duration::from_secs(6),
            connect_timeout: Duration::from_secs(5),
        }
    }

    /// The server's own log, for failure messages.
    pub fn log(&self) -> String {
        fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    fn data_dir(&self) -> PathBuf {
        self.directory.join("data")
    }

    fn log_path(&self) -> PathBuf {
        self.directory.join("zookeeper.log")
    }

    /// Starts the server again on its port and data (no-op while it runs); returns once it
    /// answers a request.
    pub async fn restart(&mut self) {
        if self.process.is_some() {
            return;
        }
        assert!(
            Path::new(ZOOKEEPER_JAR).is_file(),
            "{ZOOKEEPER_JAR} is missing: install Debian's `zookeeper` (scripts/setup.sh)"
        );
        let config = self.directory.join("zoo.cfg");
        fs::create_dir_all(self.data_dir()).expect("create the ZooKeeper data directory");
        fs::write(
            &config,
            format!(
                "tickTime={TICK_MS}\ninitLimit=10\nsyncLimit=5\ndataDir={}\nclientPort={}\n\
                 clientPortAddress=127.0.0.1\nmaxSessionTimeout={MAX_SESSION_TIMEOUT_MS}\n\
                 admin.enableServer=false\n",
                self.data_dir().display(),
                self.port
            ),
        )
        .expect("write zoo.cfg");
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("open the ZooKeeper log");
        let child = Command::new("java")
            .args(["-Xmx256m", "-cp", ZOOKEEPER_JAR, MAIN_CLASS])
            .arg(&config)
            .current_dir(&self.directory)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("share the ZooKeeper log"))
            .stderr(log)
            .spawn()
            .expect("start java (ZooKeeper needs a Java runtime)");
        self.process = Some(child);
        self.wait_ready().await;
    }

    /// Waits until a client can open a session and list `/`.
    async fn wait_ready(&mut self) {
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut last_error = String::new();
        while Instant::now() < deadline {
            if let Some(status) = self
                .process
                .as_mut()
                .and_then(|child| child.try_wait().ok().flatten())
            {
                self.process = None;
                panic!("ZooKeeper exited with {status}; its log:\n{}", self.log());
            }
            let attempt = tokio::time::timeout(Duration::from_secs(2), async {
                let client = Client::connector()
                    .with_session_timeout(Duration::from_secs(4))
                    .connect(&self.address())
                    .await?;
                client.list_children("/").await.map(drop)
            })
            .await;
            match attempt {
                Ok(Ok(())) => return,
                Ok(Err(error)) => last_error = error.to_string(),
                Err(_) => last_error = "no answer within 2s".to_owned(),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.stop();
        panic!(
            "ZooKeeper did not answer within {READY_TIMEOUT:?} ({last_error}); its log:\n{}",
            self.log()
        );
    }

    /// Stops the server (SIGTERM, then SIGKILL); its data stays for [`restart`](Self::restart).
    pub fn stop(&mut self) {
        let Some(mut child) = self.process.take() else {
            return;
        };
        if let Ok(pid) = i32::try_from(child.id()) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
        }
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Stops the server, deletes all its data (every node, every session) and starts it again
    /// on the same port: clients reconnecting with their old sessions find them expired.
    pub async fn wipe_and_restart(&mut self) {
        self.stop();
        let _ = fs::remove_dir_all(self.data_dir());
        self.restart().await;
    }
}

impl Drop for ZooKeeperServer {
    fn drop(&mut self) {
        self.stop();
        let _ = fs::remove_dir_all(&self.directory);
    }
}

/// A port nothing listens on now (the kernel's pick for port 0).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("find a free port")
}
