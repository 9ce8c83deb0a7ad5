//! A registry's ZooKeeper session: opened, watched, replaced when it expires, its registrations made again.
//!
//! ZooKeeper ends a session it has not heard from for the session timeout, and with it every
//! ephemeral node the session owned. A client cannot revive an expired session: it needs a new
//! one, and whatever it registered must be registered again. [`Session`] keeps the current
//! client behind a watch channel; a supervisor task waits for the client's session to end,
//! opens a new session (retrying while the ensemble is unreachable), swaps it in, and creates
//! a fresh node for every registration still held. Its watch on the new session is set anew
//! each time, so a second expiry is handled like the first (Kyuubi's bug 7556 is a watcher
//! that was not re-armed after a reconnect).
//!
//! A wiped or replaced ensemble does not end the session by itself: it refuses the client's
//! reconnections (the client has seen newer transactions) until the client gives up after 1.4
//! session timeouts. So while the session is disconnected, the supervisor asks every second,
//! with a detached probe presenting the session, whether the ensemble still knows it, and
//! replaces it as soon as the answer is "expired".
//!
//! A registration is never listed twice: a new node is made only once the old session is
//! over, and should the old session still be alive at the server (the client gave up on it
//! first), its node is deleted before the new one is created.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use tokio::sync::{oneshot, watch};
use zookeeper_client::{Acls, Client, CreateMode, Error as ZkError, SessionInfo, SessionState};

use super::{
    answer, bounded, child_path, make_dirs, map_error, registration_prefix, ZooKeeperLocation,
};
use crate::registry::{humanize, EngineEndpoint, Hold, RegistryError};

/// First pause between two attempts to open a new session or re-register; doubled each time.
const RETRY_PAUSE_MIN: Duration = Duration::from_millis(100);
/// Longest pause between two attempts. Short: once the ensemble is back, an engine must be
/// registered again before a gateway looks for it, or that gateway launches a second engine.
/// An attempt on an ensemble that is down is itself bounded by the connect timeout.
const RETRY_PAUSE_MAX: Duration = Duration::from_secs(1);
/// How long a session stays disconnected before the supervisor asks the ensemble whether it
/// still knows it, and how often it asks again.
const PROBE_PAUSE: Duration = Duration::from_secs(1);
/// Attempts at creating a registration node when the connection drops during the request.
const CREATE_ATTEMPTS: usize = 3;

/// The session a [`ZooKeeperRegistry`](super::ZooKeeperRegistry) works on, and what it holds.
pub(super) struct Session {
    /// The ensemble and timeouts.
    pub(super) location: ZooKeeperLocation,
    /// The client of the current session; replaced when a session ends.
    current: watch::Sender<Client>,
    /// Registrations held on this registry, to be made again on a new session. A std mutex:
    /// never held across an `.await`.
    registrations: Mutex<Vec<Arc<Mutex<Registered>>>>,
    /// Dropped with the session, which stops the supervisor.
    _stop: oneshot::Sender<()>,
}

/// One registration held on the registry.
#[derive(Debug)]
struct Registered {
    space: String,
    endpoint: EngineEndpoint,
    /// Its node now; `None` once released.
    node: Option<String>,
    /// The session that owns `node`.
    owner: i64,
    /// Released by its guard: a re-registration in flight must undo itself.
    released: bool,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere while holding the lock leaves the data consistent (single writes).
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Opens a session with `location`'s timeouts; unavailable if no server answers in time.
async fn connect(location: &ZooKeeperLocation) -> Result<Client, RegistryError> {
    let connecting = super::connector(location.session_timeout, location.connect_timeout)
        .connect(&location.addresses);
    match tokio::time::timeout(location.connect_timeout, connecting).await {
        Err(_) => Err(location.unavailable(format!(
            "no server answered within {}",
            humanize(location.connect_timeout)
        ))),
        Ok(Err(error)) => Err(location.unavailable(format!("cannot open a session: {error}"))),
        Ok(Ok(client)) => Ok(client),
    }
}

impl Session {
    /// Opens the first session and starts its supervisor.
    pub(super) async fn open(location: ZooKeeperLocation) -> Result<Arc<Session>, RegistryError> {
        let client = connect(&location).await?;
        tracing::debug!(addresses = %location.addresses, session = %client.session_id(), "ZooKeeper session opened");
        let (current, _) = watch::channel(client);
        let (stop, stopped) = oneshot::channel();
        let session = Arc::new(Session {
            location,
            current,
            registrations: Mutex::new(Vec::new()),
            _stop: stop,
        });
        tokio::spawn(supervise(Arc::downgrade(&session), stopped));
        Ok(session)
    }

    /// The current client, whatever its state.
    pub(super) fn client(&self) -> Client {
        self.current.borrow().clone()
    }

    /// The current client once it is connected, waiting up to the connect timeout while it
    /// reconnects or while the supervisor replaces its session. A request is only sent on a
    /// connected session: one queued on a session about to be replaced (a wiped ensemble
    /// refuses it) would wait out its whole timeout.
    pub(super) async fn usable_client(&self) -> Result<Client, RegistryError> {
        let mut updates = self.current.subscribe();
        let deadline = tokio::time::Instant::now() + self.location.connect_timeout;
        loop {
            let client = updates.borrow_and_update().clone();
            // The watcher first: a change after it is reported, one before it is read here.
            let mut states = client.state_watcher();
            let state = client.state();
            if matches!(
                state,
                SessionState::SyncConnected | SessionState::ConnectedReadOnly
            ) {
                return Ok(client);
            }
            tokio::select! {
                _ = updates.changed() => {}
                // A terminal state never changes: only the replacement above ends the wait.
                _ = states.changed() => {}
                () = tokio::time::sleep_until(deadline) => {
                    return Err(self.location.unavailable(format!(
                        "no ZooKeeper server answered within {} (session {state})",
                        humanize(self.location.connect_timeout)
                    )));
                }
            }
        }
    }

    /// Resolves once `client` is no longer the current client (its session was replaced).
    pub(super) async fn replaced(&self, client: &Client) {
        let session = client.session_id();
        let mut updates = self.current.subscribe();
        // The sender lives as long as `self`: the wait ends only by a replacement.
        let _ = updates
            .wait_for(|current| current.session_id() != session)
            .await;
    }

    /// Creates an engine's registration node in `space` on `client`'s session and returns its
    /// path. A request cut off by a lost connection may have been carried out: the node is then
    /// looked for (this session's, with the endpoint's name) rather than created twice.
    pub(super) async fn create_registration(
        &self,
        client: &Client,
        space: &str,
        endpoint: &EngineEndpoint,
    ) -> Result<String, RegistryError> {
        let location = &self.location;
        let name_prefix = registration_prefix(endpoint);
        let prefix = child_path(space, &name_prefix);
        let data = format!("{}:{}", endpoint.host, endpoint.port);
        let options = CreateMode::EphemeralSequential.with_acls(Acls::anyone_all());
        let mut made_parents = false;
        for _ in 0..CREATE_ATTEMPTS {
            let create = client.create(&prefix, data.as_bytes(), &options);
            match answer(location, "register in", space, create).await? {
                Ok((_stat, sequence)) => return Ok(format!("{prefix}{sequence}")),
                Err(ZkError::NoNode) if !made_parents => {
                    make_dirs(location, client, space).await?;
                    made_parents = true;
                }
                Err(ZkError::ConnectionLoss) => {
                    if let Some(node) = self.find_own(client, space, &name_prefix).await? {
                        return Ok(node);
                    }
                }
                Err(error) => return Err(map_error(location, "register in", space, error)),
            }
        }
        Err(location.unavailable(format!(
            "the connection dropped during each of {CREATE_ATTEMPTS} attempts to register in {space}"
        )))
    }

    /// The node in `space` named with `name_prefix` that `client`'s session owns, if any.
    async fn find_own(
        &self,
        client: &Client,
        space: &str,
        name_prefix: &str,
    ) -> Result<Option<String>, RegistryError> {
        let location = &self.location;
        let children = match answer(location, "list", space, client.list_children(space)).await? {
            Ok(children) => children,
            Err(ZkError::NoNode) => return Ok(None),
            Err(error) => return Err(map_error(location, "list", space, error)),
        };
        for name in children.iter().filter(|name| name.starts_with(name_prefix)) {
            let node = child_path(space, name);
            let stat = bounded(location, "read", &node, client.check_stat(&node)).await?;
            if stat.is_some_and(|stat| stat.ephemeral_owner == client.session_id().0) {
                return Ok(Some(node));
            }
        }
        Ok(None)
    }

    /// Keeps a registration made on session `owner`, to be made again after an expiry.
    pub(super) fn hold_registration(
        self: &Arc<Self>,
        space: &str,
        endpoint: EngineEndpoint,
        node: String,
        owner: i64,
    ) -> RegistrationHold {
        let entry = Arc::new(Mutex::new(Registered {
            space: space.to_owned(),
            endpoint,
            node: Some(node),
            owner,
            released: false,
        }));
        let current = {
            let mut registrations = locked(&self.registrations);
            registrations.push(Arc::clone(&entry));
            // Read under the same lock as `replace` swaps sessions: either this entry is in
            // the swap's round of re-registrations, or the swap came first and shows here.
            self.client()
        };
        if current.session_id().0 != owner {
            // The session ended between the node's creation and now, and its successor's
            // round has passed: register on the successor here.
            let session = Arc::clone(self);
            let entry = Arc::clone(&entry);
            tokio::spawn(async move { session.register_again(&current, &entry).await });
        }
        RegistrationHold {
            session: Arc::clone(self),
            entry,
        }
    }

    /// Swaps in a new session's client and registers every held registration on it.
    async fn replace(&self, client: Client) {
        let (ended, held) = {
            let registrations = locked(&self.registrations);
            (
                self.current.send_replace(client.clone()),
                registrations.clone(),
            )
        };
        tracing::info!(
            addresses = %self.location.addresses,
            ended = %ended.session_id(),
            session = %client.session_id(),
            "new ZooKeeper session"
        );
        drop(ended);
        for entry in held {
            self.register_again(&client, &entry).await;
        }
    }

    /// Makes `entry` again on `client`'s session, retrying while the ensemble is unreachable
    /// and the session lives (a session that ends meanwhile gets its own round).
    async fn register_again(&self, client: &Client, entry: &Mutex<Registered>) {
        let session_id = client.session_id().0;
        let (space, endpoint, old_node, old_owner) = {
            let held = locked(entry);
            // Released, or registered on this session already (after the swap).
            if held.released || held.owner == session_id {
                return;
            }
            (
                held.space.clone(),
                held.endpoint.clone(),
                held.node.clone(),
                held.owner,
            )
        };
        if let Some(old_node) = old_node {
            self.delete_if_owned(client, &old_node, old_owner).await;
        }
        let mut pause = RETRY_PAUSE_MIN;
        loop {
            match self.create_registration(client, &space, &endpoint).await {
                Ok(node) => {
                    let mut held = locked(entry);
                    if held.released {
                        // Released while being made: undo (sent now, in order).
                        drop(client.delete(&node, None));
                    } else {
                        tracing::info!(
                            space,
                            node,
                            "engine registered again on the new ZooKeeper session"
                        );
                        held.node = Some(node);
                        held.owner = session_id;
                    }
                    return;
                }
                Err(RegistryError::Unavailable { reason, .. })
                    if !client.state().is_terminated() && !locked(entry).released =>
                {
                    tracing::warn!(space, %reason, "could not register again yet; retrying in {}", humanize(pause));
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(RETRY_PAUSE_MAX);
                }
                Err(error) => {
                    tracing::error!(space, %error, "could not register the engine again; it stays unregistered");
                    return;
                }
            }
        }
    }

    /// Deletes `node` if session `owner` still owns it: the server has not expired that session
    /// yet although the client gave up on it, and the engine must not be listed twice.
    async fn delete_if_owned(&self, client: &Client, node: &str, owner: i64) {
        let location = &self.location;
        let Ok(Some(stat)) = bounded(location, "read", node, client.check_stat(node)).await else {
            return;
        };
        if stat.ephemeral_owner == owner {
            tracing::info!(node, "deleting the registration of the ended session");
            if let Err(error) = bounded(location, "delete", node, client.delete(node, None)).await {
                tracing::warn!(node, %error, "could not delete the ended session's registration");
            }
        }
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let client = self.client();
        f.debug_struct("Session")
            .field("addresses", &self.location.addresses)
            .field("session", &client.session_id())
            .field("state", &client.state())
            .finish_non_exhaustive()
    }
}

/// Waits for each session to end and replaces it, until the registry is dropped.
async fn supervise(session: Weak<Session>, mut stop: oneshot::Receiver<()>) {
    loop {
        let (mut states, mut state, info, location) = {
            let Some(session) = session.upgrade() else {
                return;
            };
            let client = session.client();
            // Only the state watcher and the session's id are kept: a client clone here would
            // keep the session open after the registry is gone.
            let info = client.session().clone();
            (
                client.state_watcher(),
                client.state(),
                info,
                session.location.clone(),
            )
        };
        while !state.is_terminated() {
            if state == SessionState::Disconnected {
                tokio::select! {
                    next = states.changed() => state = next,
                    () = tokio::time::sleep(PROBE_PAUSE) => {
                        if is_forgotten(&location, &info).await {
                            state = SessionState::Expired;
                        }
                    }
                    _ = &mut stop => return,
                }
            } else {
                tokio::select! {
                    next = states.changed() => state = next,
                    _ = &mut stop => return,
                }
            }
        }
        let mut pause = RETRY_PAUSE_MIN;
        loop {
            let Some(location) = session.upgrade().map(|s| s.location.clone()) else {
                return;
            };
            tracing::warn!(addresses = %location.addresses, %state, "ZooKeeper session ended; opening a new one");
            let connected = tokio::select! {
                connected = connect(&location) => connected,
                _ = &mut stop => return,
            };
            match connected {
                Ok(client) => {
                    let Some(session) = session.upgrade() else {
                        return;
                    };
                    session.replace(client).await;
                    break;
                }
                Err(error) => {
                    tracing::warn!(%error, "retrying in {}", humanize(pause));
                    tokio::select! {
                        () = tokio::time::sleep(pause) => {}
                        _ = &mut stop => return,
                    }
                    pause = (pause * 2).min(RETRY_PAUSE_MAX);
                }
            }
        }
    }
}

/// Whether the ensemble answers that it no longer knows the session `info`, as a wiped or
/// replaced ensemble does. The client itself cannot tell: such an ensemble refuses its
/// reconnections (it has seen newer transactions than the ensemble has) until the client gives
/// up after 1.4 session timeouts. A probe that presents the session without its last
/// transaction gets the answer at once. The probe is detached, so that closing it leaves a
/// session that is still alive alone.
async fn is_forgotten(location: &ZooKeeperLocation, info: &SessionInfo) -> bool {
    let probe = Client::connector()
        .with_session(info.clone())
        .with_session_timeout(location.session_timeout)
        .with_detached()
        .with_fail_eagerly()
        .connect(&location.addresses);
    let answer = tokio::time::timeout(location.connect_timeout, probe).await;
    matches!(answer, Ok(Err(ZkError::SessionExpired)))
}

/// A held registration; releasing it deletes its node.
pub(super) struct RegistrationHold {
    session: Arc<Session>,
    entry: Arc<Mutex<Registered>>,
}

impl Hold for RegistrationHold {
    fn release(&mut self) -> Result<(), RegistryError> {
        let node = {
            let mut held = locked(&self.entry);
            held.released = true;
            held.node.take()
        };
        locked(&self.session.registrations).retain(|held| !Arc::ptr_eq(held, &self.entry));
        let Some(node) = node else {
            return Ok(());
        };
        // Sent now, so it reaches the ensemble before any later request of this registry (a
        // session's requests keep their order).
        let deleting = self.session.client().delete(&node, None);
        match wait_where_allowed(deleting, self.session.location.connect_timeout) {
            Some(Ok(()) | Err(ZkError::NoNode)) | None => Ok(()),
            Some(Err(error)) => Err(map_error(
                &self.session.location,
                "deregister",
                &node,
                error,
            )),
        }
    }
}

/// Waits up to `timeout` for `request`'s answer where the caller's runtime allows blocking (a
/// multi-threaded one, as engines run): an engine deregisters and then exits, and a request
/// still queued at exit would leave the engine listed until its session times out. Elsewhere
/// (a current-thread runtime, no runtime) returns `None` at once: the request was sent, and
/// later requests of the session come after it.
fn wait_where_allowed<T>(
    request: impl std::future::Future<Output = Result<T, ZkError>>,
    timeout: Duration,
) -> Option<Result<T, ZkError>> {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    if runtime.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
        return None;
    }
    tokio::task::block_in_place(|| {
        runtime.block_on(async { tokio::time::timeout(timeout, request).await.ok() })
    })
}
