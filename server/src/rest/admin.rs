//! Kyuubi's admin API (`/api/v1/admin`): every user's sessions and operations, and the engines of a cluster's registry, for super-users.
//!
//! An administrator here is a super-user of a cluster (its config's `super-users`, who may
//! also impersonate there); anyone else gets 403. An administrator sees and closes the
//! sessions and operations of the clusters they are a super-user of, and lists and stops
//! those clusters' engines. (Kyuubi has one list of administrators per server; its
//! `GET /admin/engine` also lets users see their own engines, which here is an
//! administrator's call only.)
//!
//! | call | answer |
//! |---|---|
//! | `GET /admin/sessions?users=&sessionType=` | `[SessionData]` |
//! | `DELETE /admin/sessions/{id}` | closed; its client's next call is told an administrator closed it |
//! | `GET /admin/operations?users=&sessionHandle=&sessionType=` | `[OperationData]` |
//! | `DELETE /admin/operations/{id}` | closed here and in its engine |
//! | `GET /admin/engine?type=&sharelevel=&subdomain=&hive.server2.proxy.user=&cluster=` | `[Engine]` |
//! | `DELETE /admin/engine?...` (same parameters) | the engine's registration removed and its process stopped |
//! | `GET /admin/server` | `[ServerData]`: the gateways registered in the HA namespace, else this one |
//! | `POST /admin/refresh/{hadoop_conf,user_defaults_conf,kubernetes_conf,unlimited_users,deny_users,deny_ips}` | the cluster configs reread |
//!
//! Engines are named as sessions name them: `type` and `sharelevel` default to the cluster's,
//! the user is `hive.server2.proxy.user` (or `proxyUser`) or the administrator, `cluster` (or
//! `kyuubi.session.cluster`) is the gateway's default cluster unless given. Listing without
//! `subdomain` lists every subdomain of the user; stopping without one stops the `default`
//! subdomain's engine, as in Kyuubi.
//!
//! Stopping an engine removes its registration, so that the next session launches a new one,
//! and stops its process (SIGTERM, SIGKILL after [`STOP_GRACE`]): the process this gateway
//! launched, or the one listening on the engine's port on this host. Kyuubi's `kill`
//! parameter is accepted; the engine is stopped either way. An engine on another host (a
//! ZooKeeper registry shared by gateways on several hosts) loses its registration only, and
//! stops once idle for its idle timeout.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Response, StatusCode};
use kumiho_engine_launcher::{stop_engine, EngineRegistration, EngineType, ShareLevel, Stopped};
use kumiho_thrift::cli::TOperationState;
use kumiho_thrift::server::text_response;
use uuid::Uuid;

use super::refresh::Refresh;
use super::results::{state_name, Engine, OperationData, SessionData};
use super::sessions::SessionsApi;
use super::{json, Query};
use crate::cluster::{Cluster, ClusterUnavailable};
use crate::errors::GatewayError;
use crate::operation::launch_engine::LaunchState;
use crate::operation::observed::{Observed, ObservedState};
use crate::routing::keys;
use crate::session::{GatewaySession, OperationEntry, OperationKind, SessionManager};

/// How long a stopped engine gets to exit after SIGTERM before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// Kyuubi's session type of sessions that run statements: every session here.
const INTERACTIVE: &str = "INTERACTIVE";

/// The admin calls, on the gateway's sessions and its clusters' registries.
pub struct Admin<'a> {
    pub api: &'a SessionsApi,
    pub sessions: &'a SessionManager,
    /// The authenticated caller.
    pub user: &'a str,
}

impl Admin<'_> {
    /// The clusters the caller is a super-user of; 403 if none.
    fn clusters(&self, what: &str) -> Result<BTreeSet<String>, GatewayError> {
        let clusters = &self.sessions.router.clusters;
        let mine: BTreeSet<String> = clusters
            .names()
            .into_iter()
            .filter(|name| {
                clusters
                    .get(name)
                    .is_ok_and(|cluster| cluster.config.is_super_user(self.user))
            })
            .collect();
        if mine.is_empty() {
            return Err(GatewayError::Refused(format!(
                "user `{}` may not {what}: the admin API is for the super-users of a cluster (`super-users` in its file in {}); ask an operator",
                self.user,
                clusters.dir().display()
            )));
        }
        Ok(mine)
    }

    /// Whether the caller is a super-user of `cluster` (as configured now).
    fn administers(&self, cluster: &str) -> bool {
        self.sessions
            .router
            .clusters
            .get(cluster)
            .is_ok_and(|c| c.config.is_super_user(self.user))
    }

    /// 403 unless the caller is a super-user of `cluster` (as configured now).
    fn check_super_user(&self, cluster: &str, what: &str) -> Result<(), GatewayError> {
        match self.administers(cluster) {
            true => Ok(()),
            false => Err(GatewayError::Refused(format!(
                "user `{}` may not {what}: only the super-users of cluster `{cluster}` may (`super-users` in its config); ask an operator",
                self.user
            ))),
        }
    }

    /// `GET /admin/sessions`: the sessions of the caller's clusters, oldest first.
    pub fn list_sessions(&self, query: &Query) -> Result<Response<Full<Bytes>>, GatewayError> {
        let clusters = self.clusters("list all sessions")?;
        let users = user_filter(query);
        let list: Vec<SessionData> = match session_type_matches(query) {
            false => Vec::new(),
            true => self.api.sessions_data(|live| {
                clusters.contains(&live.route.cluster.name)
                    && users
                        .as_ref()
                        .is_none_or(|users| users.contains(&live.route.user))
            }),
        };
        Ok(json(&list))
    }

    /// `DELETE /admin/sessions/{id}`.
    pub async fn close_session(&self, id: &str) -> Result<Response<Full<Bytes>>, GatewayError> {
        let session = self.open_session(id)?;
        self.check_super_user(
            &session.route.cluster.name,
            &format!("close session `{id}`"),
        )?;
        let reason = format!("by administrator `{}` through the REST API", self.user);
        tracing::info!(session = %session.id, admin = %self.user, "session closed by an administrator");
        self.sessions.close_for_operator(&session.id, reason).await;
        Ok(text_response(
            StatusCode::OK,
            format!("Session {id} is closed successfully.\n"),
        ))
    }

    fn open_session(&self, id: &str) -> Result<Arc<GatewaySession>, GatewayError> {
        let guid = parse_id(id, "session")?;
        self.sessions.find(&guid).ok_or_else(|| {
            GatewayError::NotFound(format!(
                "session `{id}` is not open on this gateway (closed, timed out, or opened on another gateway)"
            ))
        })
    }

    /// `GET /admin/operations`: the open operations of the caller's clusters, oldest first,
    /// each in the state the engine's replies forwarded so far tell
    /// ([`crate::operation::observed`]), with the SQL of each statement.
    pub fn list_operations(&self, query: &Query) -> Result<Response<Full<Bytes>>, GatewayError> {
        let clusters = self.clusters("list all operations")?;
        let users = user_filter(query);
        let session_filter = match query.get("sessionHandle") {
            None => None,
            Some(text) => Some(parse_id(text, "session").map_err(|_| {
                GatewayError::BadRequest(format!(
                    "sessionHandle `{text}` is not a session id (a UUID)"
                ))
            })?),
        };
        if !session_type_matches(query) {
            return Ok(json(&Vec::<OperationData>::new()));
        }
        let list: Vec<OperationData> = self
            .sessions
            .operations_snapshot()
            .into_iter()
            .filter(|(_, entry)| {
                let session = &entry.session;
                clusters.contains(&session.route.cluster.name)
                    && users
                        .as_ref()
                        .is_none_or(|users| users.contains(&session.route.user))
                    && session_filter.is_none_or(|guid| session.id.guid == guid)
            })
            .map(|(id, entry)| {
                let statement = match &entry.kind {
                    OperationKind::Engine {
                        statement: Some(statement),
                        ..
                    } => statement.to_string(),
                    OperationKind::Answered(answered) => answered.statement.clone(),
                    _ => self.api.statement_of(&id.guid).unwrap_or_default().0,
                };
                let observed = observed_state(&entry);
                OperationData {
                    identifier: id.guid.to_string(),
                    remote_id: id.guid.to_string(),
                    statement,
                    state: state_name(observed.state),
                    create_time: entry.created_ms,
                    start_time: observed.started_ms,
                    complete_time: observed.completed_ms,
                    exception: observed.error.unwrap_or_default(),
                    session_id: entry.session.id.guid.to_string(),
                    session_user: entry.session.route.user.clone(),
                    session_type: INTERACTIVE,
                    kyuubi_instance: self.api.instance().to_owned(),
                    metrics: BTreeMap::new(),
                }
            })
            .collect();
        Ok(json(&list))
    }

    /// `DELETE /admin/operations/{id}`.
    pub async fn close_operation(&self, id: &str) -> Result<Response<Full<Bytes>>, GatewayError> {
        let guid = parse_id(id, "operation")?;
        let Some((handle, entry)) = self
            .sessions
            .operations_snapshot()
            .into_iter()
            .find(|(handle, _)| handle.guid == guid)
        else {
            return Err(GatewayError::NotFound(format!(
                "operation `{id}` is not open on this gateway (closed, timed out, or run on another gateway)"
            )));
        };
        self.check_super_user(
            &entry.session.route.cluster.name,
            &format!("close operation `{id}`"),
        )?;
        let reason = format!("by administrator `{}` through the REST API", self.user);
        tracing::info!(operation = %handle, admin = %self.user, "operation closed by an administrator");
        self.sessions
            .close_operation_for_operator(&handle, reason)
            .await;
        Ok(text_response(
            StatusCode::OK,
            format!("Operation {id} is closed successfully.\n"),
        ))
    }

    /// `GET /admin/server`: the gateways registered in the HA namespace ([`super::servers`]).
    pub async fn list_servers(&self) -> Result<Response<Full<Bytes>>, GatewayError> {
        self.clusters("list the gateways")?;
        Ok(json(&self.api.directory()?.list().await?))
    }

    /// `POST /admin/refresh/{what}` ([`super::refresh`]): the cluster configs reread at once.
    pub async fn refresh(&self, what: Refresh) -> Result<Response<Full<Bytes>>, GatewayError> {
        self.clusters(&what.describe())?;
        tracing::info!(admin = %self.user, call = %what.describe(), "refresh asked by an administrator");
        let clusters = self.sessions.router.clusters.clone();
        super::refresh::refresh(what, clusters, |cluster| self.administers(cluster)).await
    }

    /// `GET /admin/engine`: the engines registered for the user, share level and type.
    pub async fn list_engines(&self, query: &Query) -> Result<Response<Full<Bytes>>, GatewayError> {
        let selection = self.selection(query, "list")?;
        let registry = self.registry(&selection.cluster).await?;
        let spaces = match &selection.subdomain {
            Some(subdomain) => vec![format!("{}/{subdomain}", selection.owner_path())],
            None => registry
                .children(&selection.owner_path())
                .await
                .map_err(|e| registry_error(&selection.cluster, e))?
                .into_iter()
                .map(|child| format!("{}/{child}", selection.owner_path()))
                .collect(),
        };
        let mut engines = Vec::new();
        for space in spaces {
            let registered = registry
                .get_engines(&space)
                .await
                .map_err(|e| registry_error(&selection.cluster, e))?;
            engines.extend(registered.iter().map(|r| selection.engine(r)));
        }
        Ok(json(&engines))
    }

    /// `DELETE /admin/engine`: removes the registrations of the selected engine space and
    /// stops their processes.
    pub async fn stop_engines(&self, query: &Query) -> Result<Response<Full<Bytes>>, GatewayError> {
        let mut selection = self.selection(query, "stop")?;
        let subdomain = selection
            .subdomain
            .get_or_insert_with(|| "default".to_owned())
            .clone();
        let space = format!("{}/{subdomain}", selection.owner_path());
        let registry = self.registry(&selection.cluster).await?;
        let registered = registry
            .get_engines(&space)
            .await
            .map_err(|e| registry_error(&selection.cluster, e))?;
        if registered.is_empty() {
            return Err(GatewayError::NotFound(format!(
                "no engine is registered in {space} of cluster `{}`; list them with GET /api/v1/admin/engine",
                selection.cluster.name
            )));
        }
        let mut report = Vec::new();
        for registration in registered {
            let pid = self.launched_here(&registration).or_else(|| {
                local_engine(&registration.host, registration.port, &registration.ref_id)
            });
            registry
                .remove_dead_engine(&registration)
                .await
                .map_err(|e| registry_error(&selection.cluster, e))?;
            let instance = registration.address();
            let stopped = match pid {
                Some(pid) => {
                    tracing::info!(%space, %instance, pid, admin = %self.user, "stopping engine for an administrator");
                    match stop_engine(pid, STOP_GRACE).await {
                        Stopped::NotRunning => format!("its process {pid} had exited"),
                        Stopped::Terminated => format!("its process {pid} stopped"),
                        Stopped::Killed => format!(
                            "its process {pid} ignored SIGTERM for {} and was killed",
                            crate::duration::format(STOP_GRACE)
                        ),
                    }
                }
                None if is_embedded(&selection.cluster) => {
                    return Err(GatewayError::Upstream(format!(
                        "engine {instance} (refId={}) is registered in {space} of the embedded registry, but no process this gateway can see (its user's, in its network namespace) listens at that address with that ref id; an operator must stop it on this host",
                        registration.ref_id
                    )))
                }
                None => {
                    tracing::info!(%space, %instance, admin = %self.user, "engine deregistered for an administrator; its process is not on this host");
                    format!(
                        "its process is not on this host: it serves its open sessions until they end and stops after its idle timeout (the cluster's default is {})",
                        crate::duration::format(selection.cluster.config.engine.idle_timeout)
                    )
                }
            };
            report.push(format!(
                "Engine {space} refId={} at {instance} is deleted successfully: {stopped}.",
                registration.ref_id
            ));
        }
        Ok(text_response(StatusCode::OK, report.join("\n") + "\n"))
    }

    /// The process of an engine this gateway launched and one of its sessions still uses.
    fn launched_here(&self, registration: &EngineRegistration) -> Option<u32> {
        self.sessions
            .snapshot()
            .iter()
            .find_map(|session| match session.launch.state() {
                LaunchState::Finished(engine)
                    if engine.registration.space == registration.space
                        && engine.registration.ref_id == registration.ref_id =>
                {
                    engine.registration.pid
                }
                _ => None,
            })
    }

    /// The engines a query names; 403 unless the caller is a super-user of the cluster.
    fn selection(&self, query: &Query, verb: &str) -> Result<Selection, GatewayError> {
        let router = &self.sessions.router;
        let name = query
            .get("cluster")
            .or_else(|| query.get(keys::CLUSTER))
            .unwrap_or(&router.default_cluster);
        let cluster = router.clusters.get(name).map_err(|e| match e {
            ClusterUnavailable::Unknown { .. } => GatewayError::BadRequest(e.to_string()),
            ClusterUnavailable::Broken { .. } => GatewayError::Config(e.to_string()),
        })?;
        self.check_super_user(
            &cluster.name,
            &format!("{verb} the engines of cluster `{name}`"),
        )?;
        let engine_type = match query.get("type") {
            None => cluster.config.engine.engine_type,
            Some(text) => text
                .parse::<EngineType>()
                .map_err(|e| GatewayError::BadRequest(format!("type: {e}")))?,
        };
        let share_level = match query.get("sharelevel") {
            None => cluster.config.engine.share_level,
            Some(text) => text
                .parse::<ShareLevel>()
                .map_err(|e| GatewayError::BadRequest(format!("sharelevel: {e}")))?,
        };
        let user = query.proxy_user().unwrap_or(self.user).to_owned();
        let owner = match share_level {
            ShareLevel::Connection | ShareLevel::User => user.clone(),
            ShareLevel::Group => router.groups.primary_group(&user),
            ShareLevel::Server => router.server_user.clone(),
        };
        let subdomain = query.get("subdomain").map(str::to_lowercase);
        let namespace = cluster.config.registry.namespace().to_owned();
        for (what, name) in [("user", Some(&owner)), ("subdomain", subdomain.as_ref())] {
            if let Some(name) = name {
                kumiho_engine_launcher::registry::validate_path_component(name).map_err(
                    |reason| {
                        GatewayError::BadRequest(format!(
                            "{what} `{name}` cannot name an engine: {reason}"
                        ))
                    },
                )?;
            }
        }
        Ok(Selection {
            root: format!(
                "/{namespace}_{}_{share_level}_{engine_type}",
                router.version
            ),
            cluster,
            user,
            owner,
            engine_type,
            share_level,
            subdomain,
        })
    }

    async fn registry(
        &self,
        cluster: &Cluster,
    ) -> Result<Arc<dyn kumiho_engine_launcher::Registry>, GatewayError> {
        Ok(self
            .sessions
            .router
            .registries
            .for_cluster(cluster)
            .await?
            .registry)
    }
}

/// The engines an admin call names.
struct Selection {
    cluster: Arc<Cluster>,
    /// The user asked about.
    user: String,
    /// The owner in registry paths: the user, their group, or the server's user.
    owner: String,
    engine_type: EngineType,
    share_level: ShareLevel,
    subdomain: Option<String>,
    /// `/{ns}_{version}_{SHARE}_{TYPE}`.
    root: String,
}

impl Selection {
    /// `/{ns}_{version}_{SHARE}_{TYPE}/{owner}`: the spaces of the owner's engines.
    fn owner_path(&self) -> String {
        format!("{}/{}", self.root, self.owner)
    }

    fn engine(&self, registration: &EngineRegistration) -> Engine {
        let subdomain = registration
            .space
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        Engine {
            version: registration.version.clone(),
            user: self.user.clone(),
            engine_type: self.engine_type.as_str(),
            sharelevel: self.share_level.as_str(),
            subdomain,
            instance: registration.address(),
            namespace: registration.space.clone(),
            attributes: BTreeMap::from([
                ("serviceUri".to_owned(), registration.address()),
                ("version".to_owned(), registration.version.clone()),
                ("refId".to_owned(), registration.ref_id.clone()),
                (
                    "sequence".to_owned(),
                    format!(
                        "{:0width$}",
                        registration.sequence,
                        width = kumiho_engine_launcher::registry::SEQUENCE_DIGITS
                    ),
                ),
            ]),
        }
    }
}

fn is_embedded(cluster: &Cluster) -> bool {
    matches!(
        cluster.config.registry,
        crate::cluster::RegistryConfig::Embedded(_)
    )
}

fn registry_error(cluster: &Cluster, error: kumiho_engine_launcher::RegistryError) -> GatewayError {
    GatewayError::RegistryUnavailable {
        cluster: cluster.name.clone(),
        reason: error.to_string(),
    }
}

/// An operation's state as the gateway knows it: an engine's as its replies told it; a
/// statement failed by its engine's launch (and a LaunchEngine) as the launch stands, which
/// the gateway answers for itself.
fn observed_state(entry: &OperationEntry) -> Observed {
    match &entry.kind {
        OperationKind::Engine { state, .. } => state.get(),
        OperationKind::Answered(answered) => {
            let finished = ObservedState::new(TOperationState::PENDING_STATE);
            finished.note_status(&answered.status());
            finished.get()
        }
        OperationKind::Launch | OperationKind::LaunchFailed { .. } => {
            let mut status = entry.session.launch.status();
            // A statement failed by its launch ended as it was made.
            status.operation_completed = Some(entry.created_ms as i64);
            let launch = ObservedState::new(TOperationState::PENDING_STATE);
            launch.note_status(&status);
            launch.get()
        }
    }
}

/// `users=a,b`: the users to keep; `None` keeps all.
fn user_filter(query: &Query) -> Option<BTreeSet<String>> {
    query.get("users").map(|users| {
        users
            .split(',')
            .map(str::trim)
            .filter(|user| !user.is_empty())
            .map(str::to_owned)
            .collect()
    })
}

/// `sessionType`: every session here is `INTERACTIVE` (batches are not sessions).
fn session_type_matches(query: &Query) -> bool {
    query
        .get("sessionType")
        .is_none_or(|kind| kind.eq_ignore_ascii_case(INTERACTIVE))
}

/// An identifier of the path: one that is no UUID is unknown (404), as in Kyuubi.
fn parse_id(id: &str, what: &str) -> Result<Uuid, GatewayError> {
    Uuid::parse_str(id).map_err(|_| {
        GatewayError::NotFound(format!("invalid {what} id `{id}`: {what} ids are UUIDs"))
    })
}

/// The engine process launched as `ref_id` that listens on `host:port`, when `host` is an
/// address of this host: an engine launched by another gateway on the host, or by this one
/// before it restarted. The launcher names the reference id on every engine's command line,
/// so a process that took the port of an engine gone meanwhile (a ZooKeeper registration
/// outlives its engine for the session timeout) is never taken for it.
fn local_engine(host: &str, port: u16, ref_id: &str) -> Option<u32> {
    let pid = local_listener(host, port)?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    cmdline
        .split(|byte| *byte == 0)
        .any(|arg| arg == ref_id.as_bytes())
        .then_some(pid)
}

/// The process of this host listening on TCP `port`, when `host` is an address of this host
/// (one it can bind). Found through `/proc` (the socket's inode, then the process holding
/// it); `None` if the host is another, or the process is another user's.
fn local_listener(host: &str, port: u16) -> Option<u32> {
    let local = std::net::TcpListener::bind((host, 0)).is_ok();
    if !local {
        return None;
    }
    let inodes: BTreeSet<u64> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .flat_map(|text| listening_inodes(&text, port))
        .collect();
    if inodes.is_empty() {
        return None;
    }
    let own = std::process::id();
    let processes = std::fs::read_dir("/proc").ok()?;
    for process in processes.flatten() {
        let Some(pid) = process
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == own {
            continue;
        }
        if holds_socket(&process.path(), &inodes) {
            return Some(pid);
        }
    }
    None
}

/// The inodes of the sockets listening on `port` in a `/proc/net/tcp` table.
fn listening_inodes(table: &str, port: u16) -> Vec<u64> {
    const LISTEN: &str = "0A";
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let local = fields.get(1)?;
            let state = fields.get(3)?;
            let inode = fields.get(9)?.parse::<u64>().ok()?;
            let (_, hex_port) = local.rsplit_once(':')?;
            let listening = *state == LISTEN && u16::from_str_radix(hex_port, 16).ok()? == port;
            (listening && inode != 0).then_some(inode)
        })
        .collect()
}

/// Whether the process at `/proc/PID` has one of `inodes` among its open sockets.
fn holds_socket(process: &Path, inodes: &BTreeSet<u64>) -> bool {
    let Ok(fds) = std::fs::read_dir(process.join("fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).ok().is_some_and(|target| {
            target
                .to_str()
                .and_then(|t| t.strip_prefix("socket:["))
                .and_then(|t| t.strip_suffix(']'))
                .and_then(|t| t.parse::<u64>().ok())
                .is_some_and(|inode| inodes.contains(&inode))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_sockets_are_read_from_the_tcp_table() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
            0: 0100007F:2719 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0\n\
            1: 0100007F:2719 0100007F:A2B4 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1 0000000000000000 20 4 30 10 -1\n\
            2: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4444 1 0000000000000000 100 0 0 10 0\n";
        assert_eq!(
            listening_inodes(table, 10009),
            vec![4242],
            "an established connection on the port is no listener"
        );
        assert_eq!(listening_inodes(table, 8080), vec![4444]);
        assert!(listening_inodes(table, 1).is_empty());
    }

    #[tokio::test]
    async fn a_listener_of_this_host_is_found_by_its_port_but_not_in_this_process() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert_eq!(
            local_listener("127.0.0.1", port),
            None,
            "the gateway never stops itself"
        );
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "import socket,sys,time\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen()\nprint(s.getsockname()[1],flush=True)\ntime.sleep(30)",
                "ref-1",
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let child_port: u16 = line.trim().parse().unwrap();
        assert_eq!(local_listener("127.0.0.1", child_port), Some(child.id()));
        assert_eq!(
            local_listener("192.0.2.1", child_port),
            None,
            "not an address of this host"
        );
        assert_eq!(
            local_engine("127.0.0.1", child_port, "ref-1"),
            Some(child.id())
        );
        assert_eq!(
            local_engine("127.0.0.1", child_port, "ref-2"),
            None,
            "another engine's port"
        );
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
