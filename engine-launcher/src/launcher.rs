//! Starting engines: one [`EngineBuilder`] per engine type makes the command, the [`Launcher`]
//! runs it detached and waits for the engine to register, and [`get_or_create`] is the whole
//! look-up-or-launch step a gateway runs for a session.
//!
//! The launcher does not care how an engine registers: it hands the builder the registry
//! flags ([`EngineRegistrationArgs`]) and waits for a registration carrying the launch's
//! reference id. A self-registering engine (DataFusion) takes the flags itself; an engine that
//! cannot register (Spark) is wrapped by its builder in something that registers for it.

pub mod datafusion;
pub mod spark;
#[cfg(test)]
mod test_fixtures;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;

use crate::engine_limit::{self, LaunchPlace, Reservation};
use crate::engine_ref::{EngineRef, EngineType};
use crate::error::LaunchError;
use crate::launch_log::LaunchLog;
use crate::process::signal_engine;
use crate::registry::{humanize, EngineEndpoint, EngineRegistration, Registry};
use crate::self_registration::EngineRegistrationArgs;

pub use datafusion::{DataFusionBuilder, DataFusionSettings};
pub use spark::{SparkBuilder, SparkSettings};

/// Environment variable carrying the engine's secret: never on the command line, where any
/// user of the host could read it in `ps`.
pub const SECRET_ENV: &str = "KUMIHO_ENGINE_SECRET";

/// How long a launch waits for the launch lock beyond the initialize timeout: the lock's
/// holder may be launching the same engine, which takes up to the initialize timeout.
pub const LOCK_WAIT_MARGIN: Duration = Duration::from_secs(30);

/// How often a launch checks for the engine's registration and copies its log.
const LAUNCH_POLL: Duration = Duration::from_millis(100);

/// Engine log lines quoted in an error.
const ERROR_TAIL_LINES: usize = 20;

/// Most bytes of the engine's log copied into the launch log per poll.
const TAIL_CHUNK: u64 = 64 * 1024;

/// Most bytes copied when the launch ends; the rest stays in the engine's log file.
const FINAL_TAIL_CHUNK: u64 = 1024 * 1024;

/// The internal secret engines accept the gateway with. Its `Debug` hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct EngineSecret(String);

impl EngineSecret {
    /// Wraps a secret.
    pub fn new(secret: impl Into<String>) -> EngineSecret {
        EngineSecret(secret.into())
    }

    /// The secret itself, for the engine's environment and the gateway's handshake only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for EngineSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EngineSecret(***)")
    }
}

/// Per-engine-type settings from the cluster config.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EngineSettings {
    /// Settings of `kumiho-engine`.
    DataFusion(DataFusionSettings),
    /// Settings of the Spark SQL engine (`kumiho-spark-engine` around `spark-submit`).
    Spark(SparkSettings),
}

/// Everything needed to launch one engine.
#[derive(Debug, Clone)]
pub struct EngineLaunchSpec {
    /// Which engine, and where it registers.
    pub engine_ref: EngineRef,
    /// The cluster the engine belongs to (for logs).
    pub cluster: String,
    /// Address the engine listens on and registers with.
    pub bind_host: String,
    /// The cluster's internal secret, passed in [`SECRET_ENV`].
    pub secret: EngineSecret,
    /// Environment variables from the cluster config.
    pub env: BTreeMap<String, String>,
    /// The cluster's cap on live engines (`limits.max-engines`), checked before a launch
    /// (reusing a registered engine is never refused); `None`: no cap.
    pub max_engines: Option<u32>,
    /// Engine-type settings from the cluster config.
    pub settings: EngineSettings,
    /// The engine stops itself after this long with no session.
    pub idle_timeout: Duration,
    /// A launch that has not registered after this long is killed and fails.
    pub initialize_timeout: Duration,
    /// The engine's stdout and stderr go here (appended), see [`Self::default_log_path`].
    pub log_path: PathBuf,
}

impl EngineLaunchSpec {
    /// The engine process's extra environment: the cluster's, and the secret in
    /// [`SECRET_ENV`] (never on the command line, which `ps` shows).
    pub fn engine_env(&self) -> BTreeMap<String, String> {
        let mut env = self.env.clone();
        env.insert(SECRET_ENV.to_owned(), self.secret.expose().to_owned());
        env
    }

    /// `WORK/engines/{engine id}.log`.
    pub fn default_log_path(work_dir: &Path, engine_ref: &EngineRef) -> PathBuf {
        work_dir
            .join("engines")
            .join(format!("{}.log", engine_ref.id()))
    }
}

/// A command that starts an engine.
#[derive(Clone)]
pub struct EngineCommand {
    /// The program.
    pub program: PathBuf,
    /// Its arguments; never secrets, they are logged and visible in `ps`.
    pub args: Vec<String>,
    /// Its extra environment; values are never logged.
    pub env: BTreeMap<String, String>,
}

impl fmt::Debug for EngineCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EngineCommand")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl fmt::Display for EngineCommand {
    /// The command line and the names (not values) of the environment variables set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.program.display())?;
        for arg in &self.args {
            write!(f, " {arg}")?;
        }
        if !self.env.is_empty() {
            let names: Vec<&str> = self.env.keys().map(String::as_str).collect();
            write!(f, " (environment: {})", names.join(", "))?;
        }
        Ok(())
    }
}

/// The engine program `configured`, else the one called `name` next to the running
/// executable (where the gateway and its engines are installed together).
pub fn installed_program(configured: Option<&Path>, name: &str) -> PathBuf {
    match configured {
        Some(path) => path.to_owned(),
        None => std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(|dir| dir.join(name)))
            .unwrap_or_else(|| PathBuf::from(name)),
    }
}

/// Makes the command for one engine type.
pub trait EngineBuilder: Send + Sync {
    /// The engine type built.
    fn engine_type(&self) -> EngineType;

    /// The command that starts the engine of `spec` and gets it registered as `registration`
    /// says. May write files the engine reads (its config).
    fn build(
        &self,
        spec: &EngineLaunchSpec,
        registration: &EngineRegistrationArgs,
    ) -> Result<EngineCommand, LaunchError>;
}

/// The gateway's own environment for an engine or batch (`gateway`) with a cluster's `env`
/// laid over it: a key both set is the cluster's.
pub fn layered_env(
    gateway: &BTreeMap<String, String>,
    cluster: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut env = gateway.clone();
    env.extend(cluster.iter().map(|(k, v)| (k.clone(), v.clone())));
    env
}

/// Launches engines of every type it has a builder for.
#[derive(Clone, Default)]
pub struct Launcher {
    builders: HashMap<EngineType, Arc<dyn EngineBuilder>>,
    /// Environment every engine gets from the gateway itself (its Kerberos ticket cache);
    /// a cluster's `env` wins over it.
    env: BTreeMap<String, String>,
}

impl fmt::Debug for Launcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Launcher")
            .field("engine_types", &self.builders.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Launcher {
    /// A launcher with no builders.
    pub fn new() -> Launcher {
        Launcher::default()
    }

    /// Adds (or replaces) the builder for its engine type.
    pub fn with_builder(mut self, builder: Arc<dyn EngineBuilder>) -> Launcher {
        self.builders.insert(builder.engine_type(), builder);
        self
    }

    /// Gives every engine these environment variables, under its cluster's `env`.
    pub fn with_env(mut self, env: BTreeMap<String, String>) -> Launcher {
        self.env = env;
        self
    }

    /// Starts the engine of `spec` detached (it outlives the gateway), to register as `ref_id`,
    /// copies its log into `log`, and returns its registration once it appears in `registry`. Fails at once if the
    /// engine exits first; kills it and fails if it has not registered within the initialize
    /// timeout. Callers normally hold the launch lock ([`get_or_create`] does).
    pub async fn launch(
        &self,
        registry: &dyn Registry,
        spec: &EngineLaunchSpec,
        ref_id: &str,
        log: &LaunchLog,
    ) -> Result<EngineRegistration, LaunchError> {
        let engine_type = spec.engine_ref.engine_type;
        let builder = self
            .builders
            .get(&engine_type)
            .ok_or(LaunchError::NoBuilder { engine_type })?;
        let space = spec.engine_ref.engine_space();
        let registration_args = EngineRegistrationArgs {
            registry: registry.location(),
            engine_space: space.clone(),
            ref_id: ref_id.to_owned(),
            idle_timeout: spec.idle_timeout,
        };
        let merged;
        let spec = match self.env.is_empty() {
            true => spec,
            false => {
                merged = EngineLaunchSpec {
                    env: layered_env(&self.env, &spec.env),
                    ..spec.clone()
                };
                &merged
            }
        };
        let command = builder.build(spec, &registration_args)?;

        let (log_file, log_start) = open_engine_log(&spec.log_path)?;
        let stderr = log_file
            .try_clone()
            .map_err(|source| LaunchError::WorkDir {
                path: spec.log_path.clone(),
                source,
            })?;
        log.push(format!("starting {command}"));
        log.push(format!("engine log: {}", spec.log_path.display()));
        let mut child = tokio::process::Command::new(&command.program)
            .args(&command.args)
            .envs(&command.env)
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(stderr)
            // Its own process group: the engine outlives the gateway, ignores the terminal's
            // Ctrl-C meant for the gateway, and can be stopped with all its children.
            .process_group(0)
            .spawn()
            .map_err(|source| match source.kind() {
                io::ErrorKind::NotFound => LaunchError::ProgramNotFound {
                    program: command.program.clone(),
                },
                _ => LaunchError::Spawn {
                    program: command.program.clone(),
                    source,
                },
            })?;
        // A spawned child always has an id until it is waited for.
        let pid = child.id().unwrap_or_default();
        let mut starting = KillUnlessStarted { pid: Some(pid) };
        tracing::info!(engine = %spec.engine_ref.id(), cluster = %spec.cluster, pid, "engine starting");

        let mut tail = LogTail::new(spec.log_path.clone(), log_start);
        let outcome = wait_for_registration(
            registry,
            &space,
            &registration_args.ref_id,
            &mut child,
            spec.initialize_timeout,
            &mut tail,
            log,
        )
        .await;
        tail.copy_into(log, FINAL_TAIL_CHUNK);
        match outcome {
            Ok(Wait::Registered(mut registration)) => {
                starting.disarm();
                registration.pid = Some(pid);
                log.push(format!(
                    "engine registered at {} (pid {pid})",
                    registration.address()
                ));
                Ok(registration)
            }
            Ok(Wait::Exited(status)) => {
                // Reaped already: its pid may be reused, so it must not be signalled.
                starting.disarm();
                log.push(format!("engine exited with {status} during launch"));
                Err(LaunchError::Exited {
                    status,
                    last_lines: tail.last_lines(ERROR_TAIL_LINES),
                    log_path: spec.log_path.clone(),
                })
            }
            Ok(Wait::TimedOut) => {
                log.push(format!(
                    "engine did not register within {}; killing it",
                    humanize(spec.initialize_timeout)
                ));
                starting.kill();
                // Reap it, so no zombie is left behind.
                let _ = child.wait().await;
                Err(LaunchError::Timeout {
                    timeout: spec.initialize_timeout,
                    last_lines: tail.last_lines(ERROR_TAIL_LINES),
                    log_path: spec.log_path.clone(),
                })
            }
            Ok(Wait::Unwaitable(source)) => {
                starting.kill();
                Err(LaunchError::Spawn {
                    program: command.program.clone(),
                    source,
                })
            }
            Err(error) => {
                // The registry failed: the engine may be fine, but nobody would find it.
                starting.kill();
                let _ = child.wait().await;
                Err(error)
            }
        }
    }
}

/// Kills a starting engine's process group unless the launch saw it register (or exit). A
/// launch whose future is dropped half-way (the session closed, the gateway is shutting
/// down) thereby leaves no engine behind that nobody waits for.
struct KillUnlessStarted {
    pid: Option<u32>,
}

impl KillUnlessStarted {
    /// The engine is up (or gone): leave it alone.
    fn disarm(&mut self) {
        self.pid = None;
    }

    /// Kills the engine now.
    fn kill(&mut self) {
        if let Some(pid) = self.pid.take() {
            let _ = signal_engine(pid, Signal::SIGKILL);
        }
    }
}

impl Drop for KillUnlessStarted {
    fn drop(&mut self) {
        if let Some(pid) = self.pid {
            tracing::info!(pid, "launch abandoned; killing the starting engine");
        }
        self.kill();
    }
}

/// How a launch's wait ended.
enum Wait {
    Registered(EngineRegistration),
    Exited(ExitStatus),
    /// The OS could not tell how the engine is doing (it should never happen).
    Unwaitable(io::Error),
    TimedOut,
}

/// Polls the registry for the launch's registration while copying the engine's log, until it
/// registers, exits, or the timeout passes.
async fn wait_for_registration(
    registry: &dyn Registry,
    space: &str,
    ref_id: &str,
    child: &mut tokio::process::Child,
    timeout: Duration,
    tail: &mut LogTail,
    log: &LaunchLog,
) -> Result<Wait, LaunchError> {
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut ticks = tokio::time::interval(LAUNCH_POLL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            status = child.wait() => {
                return Ok(status.map_or_else(Wait::Unwaitable, Wait::Exited));
            }
            () = &mut deadline => return Ok(Wait::TimedOut),
            _ = ticks.tick() => {
                tail.copy_into(log, TAIL_CHUNK);
                let engines = registry.get_engines(space).await?;
                if let Some(found) = engines.into_iter().find(|engine| engine.ref_id == ref_id) {
                    return Ok(Wait::Registered(found));
                }
            }
        }
    }
}

/// Opens (appending, creating) an engine's log file and returns it with its current length,
/// where this launch's output starts.
fn open_engine_log(path: &Path) -> Result<(File, u64), LaunchError> {
    let opened = (|| {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let start = file.metadata()?.len();
        Ok((file, start))
    })();
    opened.map_err(|source| LaunchError::WorkDir {
        path: path.to_owned(),
        source,
    })
}

/// Follows an engine's log file from an offset, copying whole lines into a launch log.
struct LogTail {
    path: PathBuf,
    start: u64,
    offset: u64,
    partial: Vec<u8>,
}

impl LogTail {
    fn new(path: PathBuf, start: u64) -> LogTail {
        LogTail {
            path,
            start,
            offset: start,
            partial: Vec::new(),
        }
    }

    /// Copies up to `budget` new bytes' worth of complete lines into `log`. A log that cannot
    /// be read just stays unread: the engine's own output must never fail its launch.
    fn copy_into(&mut self, log: &LaunchLog, budget: u64) {
        let Ok(mut file) = File::open(&self.path) else {
            return;
        };
        if file.seek(SeekFrom::Start(self.offset)).is_err() {
            return;
        }
        let mut chunk = Vec::new();
        let Ok(read) = file.take(budget).read_to_end(&mut chunk) else {
            return;
        };
        self.offset += read as u64;
        self.partial.extend_from_slice(&chunk);
        if let Some(end) = self.partial.iter().rposition(|byte| *byte == b'\n') {
            let complete: Vec<u8> = self.partial.drain(..=end).collect();
            for line in String::from_utf8_lossy(&complete).lines() {
                log.push(line);
            }
        }
        // A line longer than the launch log keeps is flushed in pieces, not buffered forever.
        if self.partial.len() > crate::launch_log::MAX_LINE_BYTES {
            log.push(String::from_utf8_lossy(&self.partial).into_owned());
            self.partial.clear();
        }
    }

    /// The last `count` lines this launch wrote to the log file, read from its end.
    fn last_lines(&self, count: usize) -> Vec<String> {
        const WINDOW: u64 = 16 * 1024;
        let read = || -> io::Result<Vec<u8>> {
            let mut file = File::open(&self.path)?;
            let len = file.metadata()?.len();
            let from = len.saturating_sub(WINDOW).max(self.start);
            file.seek(SeekFrom::Start(from))?;
            let mut bytes = Vec::new();
            file.take(WINDOW).read_to_end(&mut bytes)?;
            Ok(bytes)
        };
        let Ok(bytes) = read() else {
            return Vec::new();
        };
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().collect();
        let first = lines.len().saturating_sub(count);
        lines[first..]
            .iter()
            .map(|line| (*line).to_owned())
            .collect()
    }
}

/// The step a gateway runs for a session's engine: look it up in the registry; if none,
/// take the launch lock, look again (another gateway may have launched it meanwhile), and
/// launch it, unless the cluster already runs or is starting its `max_engines` (see
/// [`engine_limit`](crate::engine_limit)). Every step is written
/// to `log`. Returns the engine to connect to.
pub async fn get_or_create(
    registry: &dyn Registry,
    launcher: &Launcher,
    spec: &EngineLaunchSpec,
    log: &LaunchLog,
) -> Result<EngineRegistration, LaunchError> {
    let space = spec.engine_ref.engine_space();
    log.push(format!("looking up engine in {space}"));
    if let Some(found) = first_engine(registry, &space, log).await? {
        return Ok(found);
    }
    let lock_path = spec.engine_ref.lock_path();
    log.push(format!(
        "no engine found; waiting for launch lock {lock_path}"
    ));
    let _lock = registry
        .lock(&lock_path, spec.initialize_timeout + LOCK_WAIT_MARGIN)
        .await?;
    log.push("acquired launch lock".to_owned());
    if let Some(found) = first_engine(registry, &space, log).await? {
        return Ok(found);
    }
    let ref_id = new_ref_id();
    // Held until the launch has ended: the engine has registered by then, or never will.
    let _place = match spec.max_engines {
        None => None,
        Some(max) => Some(take_place(registry, spec, max, &ref_id, log).await?),
    };
    launcher.launch(registry, spec, &ref_id, log).await
}

/// A launch's reference id, which its engine registers with.
fn new_ref_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A place among the cluster's `max` engines for this launch, or the refusal the session's
/// first statement reports.
async fn take_place(
    registry: &dyn Registry,
    spec: &EngineLaunchSpec,
    max: u32,
    ref_id: &str,
    log: &LaunchLog,
) -> Result<LaunchPlace, LaunchError> {
    let launch = EngineEndpoint {
        host: spec.bind_host.clone(),
        port: 0,
        version: spec.engine_ref.version.clone(),
        ref_id: ref_id.to_owned(),
    };
    let Reservation {
        place,
        running,
        launching,
    } = engine_limit::reserve(
        registry,
        &spec.engine_ref.namespace,
        max,
        launch,
        LOCK_WAIT_MARGIN,
    )
    .await?;
    let starting = match launching {
        0 => String::new(),
        n => format!(" ({n} more starting)"),
    };
    log.push(format!(
        "cluster {} runs {running} engines{starting} of at most {max}",
        spec.cluster
    ));
    place.ok_or_else(|| LaunchError::EngineLimit {
        cluster: spec.cluster.clone(),
        max,
        running: running + launching,
    })
}

/// The oldest live engine in `space`, as Kyuubi picks it.
async fn first_engine(
    registry: &dyn Registry,
    space: &str,
    log: &LaunchLog,
) -> Result<Option<EngineRegistration>, LaunchError> {
    let found = registry.get_engines(space).await?.into_iter().next();
    if let Some(engine) = &found {
        log.push(format!("found engine at {}", engine.address()));
    }
    Ok(found)
}
