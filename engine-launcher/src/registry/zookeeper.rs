//! The ZooKeeper registry: engine registrations, launch locks and POLLING counters in an ensemble.
//!
//! The tree is DESIGN.md's "Registry layout":
//!
//! - an engine registers one EPHEMERAL_SEQUENTIAL child of its engine space,
//!   `serviceUri=host:port;version=V;refId=ID;sequence=NNNNNNNNNN`, data `host:port`;
//! - the launch lock is ZooKeeper's lock recipe under the lock path (Curator's
//!   `_c_{uuid}-lock-NNNNNNNNNN` children, so Curator tools read it): each contender adds an
//!   ephemeral sequential child and waits for the one before it to go;
//! - a POLLING counter is the decimal text in the data of the node at its path, advanced by a
//!   versioned compare-and-set.
//!
//! One [`ZooKeeperRegistry`] holds one ZooKeeper session (module `session`) for everything it does:
//! a gateway's lookups and locks, an engine's own registration. Requests of one session reach
//! the ensemble in the order they were made, so a registration deleted by a guard is gone for
//! every later request of the same registry. When the session expires (the ensemble lost
//! sight of it for the session timeout), the registry opens a new one and registers its
//! engines again; locks held on the old session are lost with it, as ZooKeeper's recipe says.
//!
//! Every request is bounded by the connect timeout: an unreachable ensemble makes calls fail
//! with [`RegistryError::Unavailable`] instead of hanging.

mod session;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use zookeeper_client::{
    Acls, Client, CreateMode, Error as ZkError, EventType, LockOptions, LockPrefix,
    OwnedLockClient, SessionState,
};

use self::session::Session;
use super::{
    humanize, path_components, EngineEndpoint, EngineRegistration, Hold, LockGuard,
    RegistrationGuard, Registry, RegistryError, RegistryLocation,
};

/// Kyuubi's default ZooKeeper session timeout (`kyuubi.ha.zookeeper.session.timeout`).
pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(60);
/// Kyuubi's default ZooKeeper connection timeout (`kyuubi.ha.zookeeper.connection.timeout`).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Pause before setting a watch again after the ensemble failed to answer.
const WATCH_RETRY_PAUSE: Duration = Duration::from_millis(200);

/// Curator's lock name: contenders are `{lock path}/_c_{uuid}-lock-{sequence}`.
const LOCK_NAME: &str = "lock-";

/// A session connector with these timeouts. One attempt to reach a server waits a third of
/// the connect timeout for its answer, so that a session retries (the next server, or the
/// same one) within the time its callers wait for it: a server restarting accepts
/// connections before it answers them, and a reconnect that reached it then used to wait the
/// whole connect timeout, refusing every OpenSession of the cluster meanwhile though the
/// ensemble was back. (ZooKeeper's Java client likewise divides its session timeout among
/// the servers.)
///
/// The client also drops a connection that stays silent that long (its pings come every
/// 3/8 of it), so each attempt waits at least [`MIN_ATTEMPT`]: a server or a machine busy
/// for a second (a JVM's collection, cores shared with builds) must not cost every session
/// its connection.
pub fn connector(
    session_timeout: Duration,
    connect_timeout: Duration,
) -> zookeeper_client::Connector {
    Client::connector()
        .with_session_timeout(session_timeout)
        .with_connection_timeout((connect_timeout / 3).max(MIN_ATTEMPT))
}

/// The shortest wait of one connection attempt, and of a connection's silence.
pub const MIN_ATTEMPT: Duration = Duration::from_secs(2);

/// Where a ZooKeeper registry lives and how long its sessions last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZooKeeperLocation {
    /// The ensemble, as operators write it: `zk1:2181,zk2:2181`.
    pub addresses: String,
    /// How long the ensemble keeps a silent session (and its registrations and locks) alive.
    /// An engine that dies unannounced stays listed this long.
    pub session_timeout: Duration,
    /// How long to wait for a server to answer before calling the ensemble unreachable; also
    /// the bound on every single request.
    pub connect_timeout: Duration,
}

impl ZooKeeperLocation {
    /// The ensemble at `addresses` with Kyuubi's default timeouts.
    pub fn new(addresses: impl Into<String>) -> ZooKeeperLocation {
        ZooKeeperLocation {
            addresses: addresses.into(),
            session_timeout: DEFAULT_SESSION_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }

    /// The error for an ensemble that did not answer.
    fn unavailable(&self, reason: impl Into<String>) -> RegistryError {
        RegistryError::Unavailable {
            addresses: self.addresses.clone(),
            reason: reason.into(),
        }
    }
}

/// A registry in a ZooKeeper ensemble. Cheap to share behind an `Arc`; dropping the last
/// handle (and every guard from it) closes its session, which removes what it still held.
#[derive(Debug)]
pub struct ZooKeeperRegistry {
    session: Arc<Session>,
}

impl ZooKeeperRegistry {
    /// Connects; a [`RegistryError::Unavailable`] naming the addresses if no server answers
    /// within the location's connect timeout.
    pub async fn connect(location: ZooKeeperLocation) -> Result<ZooKeeperRegistry, RegistryError> {
        Ok(ZooKeeperRegistry {
            session: Session::open(location).await?,
        })
    }

    /// The id of the ZooKeeper session in use now (it changes when a session expires).
    pub fn session_id(&self) -> i64 {
        self.session.client().session_id().0
    }

    /// Runs one request with the connect timeout, mapping ZooKeeper's errors.
    async fn request<T>(
        &self,
        action: &'static str,
        path: &str,
        request: impl Future<Output = Result<T, ZkError>>,
    ) -> Result<T, RegistryError> {
        bounded(&self.session.location, action, path, request).await
    }

    /// Runs one request with the connect timeout and returns ZooKeeper's answer, errors
    /// included, for the caller to act on some (no node, bad version); no answer in time is
    /// an unavailable ensemble.
    async fn answer<T>(
        &self,
        action: &'static str,
        path: &str,
        request: impl Future<Output = Result<T, ZkError>>,
    ) -> Result<Result<T, ZkError>, RegistryError> {
        answer(&self.session.location, action, path, request).await
    }

    /// ZooKeeper's error about `path` as a registry error.
    fn error(&self, action: &'static str, path: &str, error: ZkError) -> RegistryError {
        map_error(&self.session.location, action, path, error)
    }
}

/// Creates `path` and its missing parents as persistent nodes, open to all (the registry's
/// tree is as readable as the ensemble; restrict it with ZooKeeper's own ACLs on a parent).
async fn make_dirs(
    location: &ZooKeeperLocation,
    client: &Client,
    path: &str,
) -> Result<(), RegistryError> {
    let options = CreateMode::Persistent.with_acls(Acls::anyone_all());
    bounded(location, "create", path, client.mkdir(path, &options)).await
}

/// Runs `request` within `location`'s connect timeout and maps ZooKeeper's errors: loss of
/// the connection or session makes the ensemble unavailable, anything else is ZooKeeper's
/// answer about `path`.
async fn bounded<T>(
    location: &ZooKeeperLocation,
    action: &'static str,
    path: &str,
    request: impl Future<Output = Result<T, ZkError>>,
) -> Result<T, RegistryError> {
    answer(location, action, path, request)
        .await?
        .map_err(|error| map_error(location, action, path, error))
}

/// ZooKeeper's answer to `request`, or an unavailable ensemble if none came within
/// `location`'s connect timeout.
async fn answer<T>(
    location: &ZooKeeperLocation,
    action: &'static str,
    path: &str,
    request: impl Future<Output = Result<T, ZkError>>,
) -> Result<Result<T, ZkError>, RegistryError> {
    tokio::time::timeout(location.connect_timeout, request)
        .await
        .map_err(|_| {
            location.unavailable(format!(
                "no answer to {action} {path} within {}",
                humanize(location.connect_timeout)
            ))
        })
}

/// A ZooKeeper error as a registry error.
fn map_error(
    location: &ZooKeeperLocation,
    action: &'static str,
    path: &str,
    error: ZkError,
) -> RegistryError {
    match error {
        ZkError::ConnectionLoss
        | ZkError::SessionExpired
        | ZkError::SessionMoved
        | ZkError::ClientClosed
        | ZkError::NoHosts
        | ZkError::Timeout => {
            location.unavailable(format!("{action} {path} failed: {error}; retry"))
        }
        other => RegistryError::ZooKeeper {
            action,
            path: path.to_owned(),
            reason: other.to_string(),
        },
    }
}

/// Resolves with a reason once `client` can no longer serve: its session ended, or no server
/// has answered it for the connect timeout.
async fn lost(client: &Client, connect_timeout: Duration) -> String {
    let mut states = client.state_watcher();
    let mut state = client.state();
    loop {
        match state {
            SessionState::SyncConnected | SessionState::ConnectedReadOnly => {
                state = states.changed().await;
            }
            SessionState::Disconnected => {
                tokio::select! {
                    next = states.changed() => state = next,
                    () = tokio::time::sleep(connect_timeout) => {
                        return format!("no server answered for {}", humanize(connect_timeout));
                    }
                }
            }
            terminal => return format!("the ZooKeeper session ended ({terminal})"),
        }
    }
}

/// The node-name prefix of an endpoint's registration; ZooKeeper appends the sequence.
fn registration_prefix(endpoint: &EngineEndpoint) -> String {
    format!(
        "serviceUri={}:{};version={};refId={};sequence=",
        endpoint.host, endpoint.port, endpoint.version, endpoint.ref_id
    )
}

/// Joins a registry path and a child name.
fn child_path(parent: &str, name: &str) -> String {
    format!("{parent}/{name}")
}

#[async_trait]
impl Registry for ZooKeeperRegistry {
    fn location(&self) -> RegistryLocation {
        RegistryLocation::ZooKeeper(self.session.location.clone())
    }

    async fn get_engines(&self, space: &str) -> Result<Vec<EngineRegistration>, RegistryError> {
        path_components(space)?;
        let client = self.session.usable_client().await?;
        let children = match self
            .answer("list", space, client.list_children(space))
            .await?
        {
            Ok(children) => children,
            Err(ZkError::NoNode) => return Ok(Vec::new()),
            Err(error) => return Err(self.error("list", space, error)),
        };
        let mut engines: Vec<EngineRegistration> = children
            .iter()
            .filter_map(|name| EngineRegistration::parse_node_name(space, name))
            .collect();
        engines.sort_by_key(|engine| engine.sequence);
        Ok(engines)
    }

    async fn remove_dead_engine(
        &self,
        registration: &EngineRegistration,
    ) -> Result<(), RegistryError> {
        let node = format!("{}/{}", registration.space, registration.node_name());
        path_components(&node)?;
        let client = self.session.usable_client().await?;
        match self
            .answer("delete", &node, client.delete(&node, None))
            .await?
        {
            Ok(()) | Err(ZkError::NoNode) => Ok(()),
            Err(error) => Err(self.error("delete", &node, error)),
        }
    }

    async fn children(&self, path: &str) -> Result<Vec<String>, RegistryError> {
        if path != "/" {
            path_components(path)?;
        }
        let client = self.session.usable_client().await?;
        let mut children = match self
            .answer("list", path, client.list_children(path))
            .await?
        {
            Ok(children) => children,
            Err(ZkError::NoNode) => return Ok(Vec::new()),
            Err(error) => return Err(self.error("list", path, error)),
        };
        children.retain(|name| !name.starts_with('.'));
        children.sort();
        Ok(children)
    }

    async fn register_engine(
        &self,
        space: &str,
        endpoint: EngineEndpoint,
    ) -> Result<RegistrationGuard, RegistryError> {
        path_components(space)?;
        let client = self.session.usable_client().await?;
        let node = self
            .session
            .create_registration(&client, space, &endpoint)
            .await?;
        let name = node.rsplit('/').next().unwrap_or_default();
        let Some(mut registration) = EngineRegistration::parse_node_name(space, name) else {
            drop(client.delete(&node, None)); // sent now; nobody could find it anyway
            return Err(RegistryError::ZooKeeper {
                action: "register",
                path: node,
                reason: "ZooKeeper named the registration in a way it cannot be read back \
                         (a sequence past 10 digits?)"
                    .to_owned(),
            });
        };
        registration.pid = Some(std::process::id());
        let hold = self
            .session
            .hold_registration(space, endpoint, node, client.session_id().0);
        tracing::debug!(space, node = %registration.node_name(), "registered in ZooKeeper");
        Ok(RegistrationGuard::new(registration, Box::new(hold)))
    }

    async fn lock(&self, path: &str, timeout: Duration) -> Result<LockGuard, RegistryError> {
        path_components(path)?;
        let location = &self.session.location;
        let client = self.session.usable_client().await?;
        let prefix = LockPrefix::new_curator(path, LOCK_NAME)
            .map_err(|error| map_error(location, "lock", path, error))?;
        let options = LockOptions::new(Acls::anyone_all())
            .with_ancestor_options(CreateMode::Persistent.with_acls(Acls::anyone_all()))
            .map_err(|error| map_error(location, "lock", path, error))?;
        // Who holds it, for an operator reading the tree.
        let holder = format!("pid {}", std::process::id());
        // `Client::lock` is cancellation safe: a contender dropped by the timeout or by a lost
        // session removes its node in the background.
        let taken = tokio::select! {
            taken = client.lock(prefix, holder.as_bytes(), options) => taken,
            () = tokio::time::sleep(timeout) => {
                return Err(RegistryError::LockTimeout { path: path.to_owned(), timeout });
            }
            reason = lost(&client, location.connect_timeout) => {
                return Err(location.unavailable(format!("while waiting for lock {path}: {reason}")));
            }
        };
        let owned = taken
            .map_err(|error| map_error(location, "lock", path, error))?
            .into_owned();
        Ok(LockGuard::new(
            path.to_owned(),
            Box::new(LockHold {
                lock: Some(owned),
                runtime: tokio::runtime::Handle::current(),
            }),
        ))
    }

    async fn watch_engine(&self, registration: &EngineRegistration) -> Result<(), RegistryError> {
        path_components(&registration.space)?;
        let node = child_path(&registration.space, &registration.node_name());
        let location = &self.session.location;
        // Since when setting the watch has failed: a session being replaced fails a request
        // or two, an unreachable ensemble fails them all for the connect timeout.
        let mut failing_since = None;
        loop {
            // A new session after an expiry: its watch is set afresh below (the watch of the
            // old session died with it), so a registration that left meanwhile is seen.
            let client = self.session.usable_client().await?;
            let watching = self.request("watch", &node, client.check_and_watch_stat(&node));
            let watched = tokio::select! {
                watched = watching => watched,
                // Its session was given up while the request waited: ask the new one.
                () = self.session.replaced(&client) => continue,
            };
            let (stat, watcher) = match watched {
                Ok(watched) => watched,
                Err(RegistryError::Unavailable { reason, .. }) => {
                    let since = *failing_since.get_or_insert_with(tokio::time::Instant::now);
                    if since.elapsed() >= location.connect_timeout {
                        return Err(location.unavailable(reason));
                    }
                    tokio::time::sleep(WATCH_RETRY_PAUSE).await;
                    continue;
                }
                Err(error) => return Err(error),
            };
            failing_since = None;
            if stat.is_none() {
                return Ok(());
            }
            // While disconnected, the client re-arms the watch on reconnection by itself
            // and reports what happened meanwhile; only an ended or replaced session (the
            // supervisor gave up on it) needs a new watch.
            tokio::select! {
                event = watcher.changed() => match event.event_type {
                    EventType::NodeDeleted => return Ok(()),
                    EventType::Session => {
                        tracing::debug!(node, state = %event.session_state, "watch lost its session; watching again");
                    }
                    _ => {}
                },
                () = self.session.replaced(&client) => {}
            }
        }
    }

    async fn next_polling_index(
        &self,
        path: &str,
        pool_size: usize,
    ) -> Result<usize, RegistryError> {
        path_components(path)?;
        let client = self.session.usable_client().await?;
        let value = loop {
            match self.answer("read", path, client.get_data(path)).await? {
                Ok((data, stat)) => {
                    let value = parse_counter(&data).ok_or_else(|| RegistryError::ZooKeeper {
                        action: "read",
                        path: path.to_owned(),
                        reason: format!(
                            "the POLLING counter holds {:?}, not a number; delete the node to reset it",
                            String::from_utf8_lossy(&data)
                        ),
                    })?;
                    let next = (value + 1).to_string();
                    // Versioned: a concurrent caller's increment makes this fail, and we retry.
                    let update = client.set_data(path, next.as_bytes(), Some(stat.version));
                    match self.answer("update", path, update).await? {
                        Ok(_) => break value,
                        Err(ZkError::BadVersion) => {}
                        Err(error) => return Err(self.error("update", path, error)),
                    }
                }
                Err(ZkError::NoNode) => {
                    if let Some((parent, _)) = path.rsplit_once('/').filter(|(p, _)| !p.is_empty())
                    {
                        make_dirs(&self.session.location, &client, parent).await?;
                    }
                    let options = CreateMode::Persistent.with_acls(Acls::anyone_all());
                    match self
                        .answer("create", path, client.create(path, b"1", &options))
                        .await?
                    {
                        Ok(_) => break 0,
                        // Another caller created it first: count on its node.
                        Err(ZkError::NodeExists) => {}
                        Err(error) => return Err(self.error("create", path, error)),
                    }
                }
                Err(error) => return Err(self.error("read", path, error)),
            }
        };
        let size = pool_size.max(1) as u64;
        // The remainder is below `size`, which came from a usize.
        Ok(usize::try_from(value % size).unwrap_or(0))
    }
}

/// The counter in a POLLING node's data (empty counts as 0).
fn parse_counter(data: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(data).ok()?.trim();
    if text.is_empty() {
        return Some(0);
    }
    text.parse().ok()
}

/// A held launch lock: the contender node of ZooKeeper's lock recipe.
struct LockHold {
    lock: Option<OwnedLockClient>,
    /// The runtime the lock was taken on: the client deletes the node from a task on it,
    /// and a guard may be dropped outside any runtime.
    runtime: tokio::runtime::Handle,
}

impl Hold for LockHold {
    fn release(&mut self) -> Result<(), RegistryError> {
        let Some(lock) = self.lock.take() else {
            return Ok(());
        };
        if lock.client().state().is_terminated() {
            // ZooKeeper's recipe: the lock went with the session, and another holder may
            // have had it since. Worth an operator's attention if it coincides with a
            // duplicate launch.
            tracing::warn!(
                lock = lock.lock_path(),
                "the lock was lost with its ZooKeeper session before it was released"
            );
        }
        let _entered = self.runtime.enter();
        // Dropping the lock client deletes its node in the background, retrying across
        // connection loss; a lost session has deleted it already.
        drop(lock);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
