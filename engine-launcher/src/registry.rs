//! The registry trait: where engines announce themselves, the launch lock, the POLLING counter.
//!
//! One trait serves every backend ([`embedded`] files under the work directory, [`zookeeper`]
//! an ensemble) and one test suite ([`suite`]) checks them all. Paths are ZooKeeper-style (`/a/b/c`); engine spaces and
//! lock paths come from [`EngineRef`](crate::EngineRef).

pub mod embedded;
pub mod suite;
pub mod zookeeper;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;

pub use zookeeper::ZooKeeperLocation;

/// Width of a registration's sequence number, as ZooKeeper writes sequential node names.
pub const SEQUENCE_DIGITS: usize = 10;

/// One live engine in an engine space.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EngineRegistration {
    /// The engine space it registered in.
    pub space: String,
    /// Host the engine's Thrift server listens on.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// The engine's version.
    pub version: String,
    /// The launch's reference id: tells the launcher that *its* engine came up.
    pub ref_id: String,
    /// The registry's sequence number for this registration; later registrations have larger ones.
    pub sequence: u64,
    /// The process holding the registration, where known: set in the engine this gateway
    /// launched (its process group leader, for [`stop_engine`](crate::stop_engine)) and in the
    /// guard of the registering process; `None` in listings, whose processes may be on other
    /// hosts.
    pub pid: Option<u32>,
}

impl EngineRegistration {
    /// The registration's node name:
    /// `serviceUri=host:port;version=V;refId=ID;sequence=NNNNNNNNNN`.
    pub fn node_name(&self) -> String {
        format!(
            "serviceUri={}:{};version={};refId={};sequence={:0width$}",
            self.host,
            self.port,
            self.version,
            self.ref_id,
            self.sequence,
            width = SEQUENCE_DIGITS
        )
    }

    /// Reads a node name back; `None` for a name that is not a registration (a foreign or
    /// half-written node is skipped rather than failing the whole listing).
    pub fn parse_node_name(space: &str, name: &str) -> Option<EngineRegistration> {
        let mut host_port = None;
        let mut version = None;
        let mut ref_id = None;
        let mut sequence = None;
        for field in name.split(';') {
            let (key, value) = field.split_once('=')?;
            match key {
                "serviceUri" => host_port = Some(value),
                "version" => version = Some(value),
                "refId" => ref_id = Some(value),
                "sequence" => sequence = Some(value),
                _ => {}
            }
        }
        let (host, port) = host_port?.rsplit_once(':')?;
        let sequence = sequence?;
        if sequence.len() != SEQUENCE_DIGITS {
            return None;
        }
        Some(EngineRegistration {
            space: space.to_owned(),
            host: host.to_owned(),
            port: port.parse().ok()?,
            version: version?.to_owned(),
            ref_id: ref_id?.to_owned(),
            sequence: sequence.parse().ok()?,
            pid: None,
        })
    }

    /// `host:port`, the address clients of the engine connect to.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The engine's local socket, for an engine on a loopback address (so on this host, in
    /// this network namespace): Kumiho's engines listen there too once they register (a
    /// connection refused means TCP).
    pub fn local_socket(&self) -> Option<String> {
        let loopback = self.host == "localhost"
            || self
                .host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        loopback.then(|| local_socket_name(&self.ref_id))
    }
}

/// The abstract-namespace name of the local socket of the engine launched as `ref_id`.
pub fn local_socket_name(ref_id: &str) -> String {
    format!("kumiho-engine/{ref_id}")
}

/// What an engine announces when it registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineEndpoint {
    /// Host the engine listens on.
    pub host: String,
    /// Port the engine listens on.
    pub port: u16,
    /// The engine's version.
    pub version: String,
    /// The launch's reference id.
    pub ref_id: String,
}

/// Where a registry lives, in the terms an engine process needs to register itself there.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryLocation {
    /// An embedded registry under this work directory.
    Embedded {
        /// The gateway's work directory (the registry is `WORK/registry`).
        work_dir: PathBuf,
    },
    /// A ZooKeeper ensemble.
    ZooKeeper(ZooKeeperLocation),
}

/// A registry failure. I/O and backend failures are the operator's to fix (disk, permissions,
/// ZooKeeper); a bad path is the caller's bug or a bad name from a client.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// A path that cannot name a registry node.
    #[error("`{path}` is not a valid registry path: {reason}")]
    BadPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The lock was held by someone else for the whole timeout.
    #[error(
        "could not take lock {path} within {}: another gateway or session holds it \
         (it may be launching the same engine); retry later",
        humanize(*timeout)
    )]
    LockTimeout {
        /// The lock's path.
        path: String,
        /// How long we waited.
        timeout: Duration,
    },
    /// The backend failed.
    #[error("registry {action} failed at {path}: {source}; check that the registry is reachable and writable")]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// No server of the registry's ZooKeeper ensemble answered in time (it is down, the
    /// addresses are wrong, or the network is cut). A retry may help once it is back.
    #[error(
        "the ZooKeeper ensemble {addresses} is unreachable ({reason}); check that its servers \
         are running and that this host can reach them, then retry"
    )]
    Unavailable {
        /// The ensemble's addresses, as configured.
        addresses: String,
        /// What happened (no answer within the timeout, connection lost during an operation).
        reason: String,
    },
    /// ZooKeeper refused or failed an operation for a reason other than reachability (no
    /// permission, quota): the operator's to fix in ZooKeeper.
    #[error("ZooKeeper {action} at {path} failed: {reason}; check the ensemble's ACLs and health")]
    ZooKeeper {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: String,
        /// ZooKeeper's error.
        reason: String,
    },
}

/// Writes a duration the way an operator writes it (`3m`, `500ms`, `1m 30s`).
pub(crate) fn humanize(duration: Duration) -> String {
    humantime::format_duration(duration).to_string()
}

/// A backend's hold on something (a registration, a lock) that ends when released.
pub trait Hold: Send + Sync {
    /// Gives the hold up; called once, from `deregister`/`release` or from `Drop`.
    fn release(&mut self) -> Result<(), RegistryError>;
}

/// Keeps an engine's registration alive; dropping it (or [`deregister`](Self::deregister))
/// removes the registration. Held by the engine process itself, or by whatever supervises an
/// engine that cannot register itself, so the registration lives exactly as long as the engine.
#[must_use = "the registration disappears when the guard is dropped"]
pub struct RegistrationGuard {
    registration: EngineRegistration,
    hold: Option<Box<dyn Hold>>,
}

impl RegistrationGuard {
    /// Wraps a backend's hold on a registration.
    pub fn new(registration: EngineRegistration, hold: Box<dyn Hold>) -> Self {
        RegistrationGuard {
            registration,
            hold: Some(hold),
        }
    }

    /// The registration this guard keeps alive.
    pub fn registration(&self) -> &EngineRegistration {
        &self.registration
    }

    /// Removes the registration now and reports failure (dropping also removes it, silently).
    pub fn deregister(mut self) -> Result<(), RegistryError> {
        self.hold.take().map_or(Ok(()), |mut hold| hold.release())
    }
}

impl Drop for RegistrationGuard {
    fn drop(&mut self) {
        if let Some(mut hold) = self.hold.take() {
            if let Err(error) = hold.release() {
                tracing::warn!(%error, space = %self.registration.space, "could not deregister engine");
            }
        }
    }
}

impl fmt::Debug for RegistrationGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistrationGuard")
            .field("registration", &self.registration)
            .finish_non_exhaustive()
    }
}

/// Holds a lock; dropping it releases the lock. A holder process that dies releases it too.
#[must_use = "the lock is released when the guard is dropped"]
pub struct LockGuard {
    path: String,
    hold: Option<Box<dyn Hold>>,
}

impl LockGuard {
    /// Wraps a backend's hold on a lock.
    pub fn new(path: String, hold: Box<dyn Hold>) -> Self {
        LockGuard {
            path,
            hold: Some(hold),
        }
    }

    /// The lock's path.
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if let Some(mut hold) = self.hold.take() {
            if let Err(error) = hold.release() {
                tracing::warn!(%error, path = %self.path, "could not release lock");
            }
        }
    }
}

impl fmt::Debug for LockGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockGuard")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Where engines register and are found, with the launch lock and the POLLING counter.
///
/// Object safe: a gateway keeps an `Arc<dyn Registry>` per cluster.
#[async_trait]
pub trait Registry: Send + Sync + fmt::Debug {
    /// Where this registry lives, as an engine process needs it to register itself.
    fn location(&self) -> RegistryLocation;

    /// The live registrations in `space`, oldest (smallest sequence) first.
    async fn get_engines(&self, space: &str) -> Result<Vec<EngineRegistration>, RegistryError>;

    /// The names of the nodes directly under `path` (`/` for the top of the tree), sorted;
    /// empty if `path` does not exist. Names are listed as they are: a registration among
    /// them may be dead (the embedded registry learns that only by probing it), so ask
    /// [`get_engines`](Self::get_engines) for live ones. Names starting with `.` (the
    /// embedded registry's bookkeeping) are left out.
    async fn children(&self, path: &str) -> Result<Vec<String>, RegistryError>;

    /// Registers an engine in `space`; the registration lives while the returned guard does
    /// and while the process holding it lives.
    async fn register_engine(
        &self,
        space: &str,
        endpoint: EngineEndpoint,
    ) -> Result<RegistrationGuard, RegistryError>;

    /// Takes the exclusive lock at `path`, waiting up to `timeout` for its holder (in any
    /// process, on any gateway sharing the registry) to release it.
    async fn lock(&self, path: &str, timeout: Duration) -> Result<LockGuard, RegistryError>;

    /// Removes the registration of an engine found dead (nothing listens at its address), so
    /// that no session is sent to it again. ZooKeeper keeps the ephemeral node of a killed
    /// engine until its session times out (a minute by default), and every session meanwhile
    /// would fail on it; the embedded registry never lists a dead engine (its lock went with
    /// the process), so there it removes nothing. A registration gone already is no error.
    async fn remove_dead_engine(
        &self,
        registration: &EngineRegistration,
    ) -> Result<(), RegistryError>;

    /// Resolves when `registration` is gone (deregistered, or its engine died).
    async fn watch_engine(&self, registration: &EngineRegistration) -> Result<(), RegistryError>;

    /// The POLLING counter at `path`, modulo `pool_size`, incremented for the next caller;
    /// shared by every gateway on the registry.
    async fn next_polling_index(
        &self,
        path: &str,
        pool_size: usize,
    ) -> Result<usize, RegistryError>;
}

/// Checks that `name` can be one component of a registry path (and a file name in the
/// embedded registry): not empty, no `/`, no NUL or control characters, not starting with `.`
/// (reserved for the registry's own bookkeeping), at most 255 bytes.
pub fn validate_path_component(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".to_owned());
    }
    if name.len() > 255 {
        return Err("it is longer than 255 bytes".to_owned());
    }
    if name.starts_with('.') {
        return Err("it starts with `.`".to_owned());
    }
    if let Some(bad) = name.chars().find(|c| *c == '/' || c.is_control()) {
        return Err(format!("it contains {bad:?}"));
    }
    Ok(())
}

/// Splits an absolute registry path into its components, each checked by
/// [`validate_path_component`].
pub fn path_components(path: &str) -> Result<Vec<&str>, RegistryError> {
    let bad = |reason: String| RegistryError::BadPath {
        path: path.to_owned(),
        reason,
    };
    let relative = path
        .strip_prefix('/')
        .ok_or_else(|| bad("it must start with `/`".to_owned()))?;
    relative
        .split('/')
        .map(|component| {
            validate_path_component(component)
                .map(|()| component)
                .map_err(|reason| bad(format!("component `{component}`: {reason}")))
        })
        .collect()
}

#[cfg(test)]
mod tests;
