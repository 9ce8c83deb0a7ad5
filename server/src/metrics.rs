//! The gateway's Prometheus metrics (`kumiho_...`) and the `/metrics` endpoint serving them.
//!
//! Cost on the proxy's path: every RPC adds one to a counter created at start for its method
//! (an array index, one atomic add), and one more if its reply says it failed; no lock, no
//! label lookup, no allocation. Series labelled with a cluster are touched only when a
//! session opens or an engine launch ends. What is open now (sessions, operations, engines
//! in use, binary connections) is counted from the session manager when Prometheus scrapes,
//! so those gauges cannot drift from what the gateway holds.
//!
//! Served in Prometheus' text format (0.0.4) by the official Rust client
//! (`prometheus-client`) on a port of its own (`metrics-port`, Kyuubi's 10019), with the
//! `process_*` series every Prometheus client exports (CPU, memory, file descriptors), read
//! from `/proc` at scrape.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use dashmap::DashSet;
use http_body_util::Full;
use hyper::header::{self, HeaderValue};
use hyper::{Method as HttpMethod, Request, Response, StatusCode};
use kumiho_engine_launcher::{EngineRegistration, EngineType, LaunchError};
use kumiho_thrift::cli::*;
use kumiho_thrift::server::{method_not_allowed, serve_http1, text_response, ConnectionObserver};
use kumiho_thrift::service::{CallContext, CliService, Reply, Transport};
use prometheus_client::encoding::prometheus_text;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::operation::launch_engine::LaunchState;
use crate::session::SessionManager;

/// The path metrics are served at (Kyuubi's `kyuubi.metrics.prometheus.path` default).
pub const METRICS_PATH: &str = "/metrics";

/// Bounds (seconds) of the launch-time histogram: a DataFusion engine is up in well under a
/// second, a Spark Thrift Server in ten seconds or more (minutes on a busy YARN).
const LAUNCH_BUCKETS: [f64; 13] = [
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0,
];

/// A HiveServer2 RPC: the `method` label, and the index of its counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    OpenSession,
    CloseSession,
    GetInfo,
    ExecuteStatement,
    GetTypeInfo,
    GetCatalogs,
    GetSchemas,
    GetTables,
    GetTableTypes,
    GetColumns,
    GetFunctions,
    GetPrimaryKeys,
    GetCrossReference,
    GetOperationStatus,
    CancelOperation,
    CloseOperation,
    GetResultSetMetadata,
    FetchResults,
    GetDelegationToken,
    CancelDelegationToken,
    RenewDelegationToken,
    GetQueryId,
    SetClientInfo,
}

impl Method {
    /// Every method, in the order of their counters.
    pub const ALL: [Method; 23] = [
        Method::OpenSession,
        Method::CloseSession,
        Method::GetInfo,
        Method::ExecuteStatement,
        Method::GetTypeInfo,
        Method::GetCatalogs,
        Method::GetSchemas,
        Method::GetTables,
        Method::GetTableTypes,
        Method::GetColumns,
        Method::GetFunctions,
        Method::GetPrimaryKeys,
        Method::GetCrossReference,
        Method::GetOperationStatus,
        Method::CancelOperation,
        Method::CloseOperation,
        Method::GetResultSetMetadata,
        Method::FetchResults,
        Method::GetDelegationToken,
        Method::CancelDelegationToken,
        Method::RenewDelegationToken,
        Method::GetQueryId,
        Method::SetClientInfo,
    ];

    /// The RPC's name in TCLIService.thrift, as clients' logs and Kyuubi's metrics show it.
    pub fn name(self) -> &'static str {
        match self {
            Method::OpenSession => "OpenSession",
            Method::CloseSession => "CloseSession",
            Method::GetInfo => "GetInfo",
            Method::ExecuteStatement => "ExecuteStatement",
            Method::GetTypeInfo => "GetTypeInfo",
            Method::GetCatalogs => "GetCatalogs",
            Method::GetSchemas => "GetSchemas",
            Method::GetTables => "GetTables",
            Method::GetTableTypes => "GetTableTypes",
            Method::GetColumns => "GetColumns",
            Method::GetFunctions => "GetFunctions",
            Method::GetPrimaryKeys => "GetPrimaryKeys",
            Method::GetCrossReference => "GetCrossReference",
            Method::GetOperationStatus => "GetOperationStatus",
            Method::CancelOperation => "CancelOperation",
            Method::CloseOperation => "CloseOperation",
            Method::GetResultSetMetadata => "GetResultSetMetadata",
            Method::FetchResults => "FetchResults",
            Method::GetDelegationToken => "GetDelegationToken",
            Method::CancelDelegationToken => "CancelDelegationToken",
            Method::RenewDelegationToken => "RenewDelegationToken",
            Method::GetQueryId => "GetQueryId",
            Method::SetClientInfo => "SetClientInfo",
        }
    }
}

/// How a client reached the gateway: the `frontend` label.
fn frontend(transport: Transport) -> &'static str {
    match transport {
        Transport::Sasl | Transport::NoSasl => "binary",
        Transport::Http => "http",
        Transport::Rest => "rest",
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabels {
    method: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FrontendLabels {
    frontend: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SessionLabels {
    cluster: String,
    frontend: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClusterLabels {
    cluster: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RefusalLabels {
    cluster: String,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EngineLabels {
    cluster: String,
    engine_type: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LaunchLabels {
    cluster: String,
    engine_type: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EngineTypeLabels {
    engine_type: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: &'static str,
}

fn launch_histogram() -> Histogram {
    Histogram::new(LAUNCH_BUCKETS)
}

/// The `http` series of `connections` and `connections_open`. An HTTP client's calls come
/// on any of its connections (keep-alive or not), so every connection counts, where a
/// binary connection counts from its first session.
struct HttpConnections {
    opened: Counter,
    open: Gauge,
}

impl ConnectionObserver for HttpConnections {
    fn opened(&self) {
        self.opened.inc();
        self.open.inc();
    }

    fn closed(&self) {
        self.open.dec();
    }
}

/// The gateway's metrics: the registry Prometheus reads, and handles on its series.
pub struct Metrics {
    registry: Registry,
    /// RPCs received, indexed by [`Method`] (created at start: no lookup per call).
    rpcs: Vec<Counter>,
    /// RPCs whose reply carried an error status, indexed by [`Method`].
    rpc_errors: Vec<Counter>,
    binary_connections: Counter,
    connections_open: Family<FrontendLabels, Gauge>,
    /// The Thrift HTTP port's connections, told by its server as they open and close.
    http_connections: Arc<HttpConnections>,
    /// Binary connections that opened a session and have not closed yet.
    open_binary_connections: DashSet<u64>,
    sessions_opened: Family<SessionLabels, Counter>,
    sessions_open: Family<ClusterLabels, Gauge>,
    sessions_refused: Family<RefusalLabels, Counter>,
    operations: Counter,
    operations_open: Gauge,
    engine_launches: Family<LaunchLabels, Counter>,
    engine_launch_seconds: Family<EngineTypeLabels, Histogram, fn() -> Histogram>,
    engines_in_use: Family<EngineLabels, Gauge>,
    /// Scrapes one at a time (std Mutex, never held across an await): each sets the gauges
    /// counted at scrape time, then encodes. Holds the label sets set last time, so that a
    /// cluster whose last session closed reads 0 instead of its old count.
    scrape: Mutex<Scraped>,
    /// The `process_*` series, under their standard names (no `kumiho_` prefix), so that
    /// the dashboards made for every Prometheus client read them.
    process_registry: Registry,
    process: ProcessMetrics,
}

/// The process' resources, as Prometheus' clients name them.
struct ProcessMetrics {
    cpu_seconds: Counter<f64, AtomicU64>,
    resident_memory_bytes: Gauge,
    open_fds: Gauge,
    max_fds: Gauge,
}

#[derive(Default)]
struct Scraped {
    sessions_open: HashSet<ClusterLabels>,
    engines_in_use: HashSet<EngineLabels>,
    /// CPU seconds read at the last scrape: the counter grows by the difference.
    cpu_seconds: f64,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("kumiho");
        registry.register(
            "build",
            "The gateway's version",
            Info::new(BuildLabels {
                version: env!("CARGO_PKG_VERSION"),
            }),
        );
        let rpc_family = Family::<MethodLabels, Counter>::default();
        let rpc_error_family = Family::<MethodLabels, Counter>::default();
        // Handles kept per method: the family's lookup (a lock and a hash) runs once here.
        let rpcs = Method::ALL
            .iter()
            .map(|m| rpc_family.get_or_create_owned(&MethodLabels { method: m.name() }))
            .collect();
        let rpc_errors = Method::ALL
            .iter()
            .map(|m| rpc_error_family.get_or_create_owned(&MethodLabels { method: m.name() }))
            .collect();
        registry.register(
            "rpcs",
            "HiveServer2 RPCs received from clients, by method",
            rpc_family,
        );
        registry.register(
            "rpc_errors",
            "HiveServer2 RPCs answered with an error status, by method",
            rpc_error_family,
        );
        let connections = Family::<FrontendLabels, Counter>::default();
        let binary_connections =
            connections.get_or_create_owned(&FrontendLabels { frontend: "binary" });
        registry.register(
            "connections",
            "Client connections opened (binary: TCP connections that opened a session; \
             http: TCP connections to the Thrift HTTP port)",
            connections.clone(),
        );
        let connections_open = Family::<FrontendLabels, Gauge>::default();
        let http_connections = Arc::new(HttpConnections {
            opened: connections.get_or_create_owned(&FrontendLabels { frontend: "http" }),
            open: connections_open.get_or_create_owned(&FrontendLabels { frontend: "http" }),
        });
        registry.register(
            "connections_open",
            "Client connections open now (binary: TCP connections that opened a session; \
             http: TCP connections to the Thrift HTTP port)",
            connections_open.clone(),
        );
        let sessions_opened = Family::<SessionLabels, Counter>::default();
        registry.register(
            "sessions_opened",
            "Sessions opened, by cluster and frontend",
            sessions_opened.clone(),
        );
        let sessions_open = Family::<ClusterLabels, Gauge>::default();
        registry.register(
            "sessions_open",
            "Sessions open now, by cluster",
            sessions_open.clone(),
        );
        let sessions_refused = Family::<RefusalLabels, Counter>::default();
        registry.register(
            "sessions_refused",
            "Sessions refused by a cluster's deny lists (reason deny_user, deny_ip) or session caps \
             (max_sessions_per_user, max_sessions_per_ip, max_sessions_per_user_ip)",
            sessions_refused.clone(),
        );
        let operations = Counter::default();
        registry.register(
            "operations",
            "Operations (statements and metadata calls) created by clients",
            operations.clone(),
        );
        let operations_open = Gauge::default();
        registry.register(
            "operations_open",
            "Client operations open now (not counting sessions' LaunchEngine operations)",
            operations_open.clone(),
        );
        let engine_launches = Family::<LaunchLabels, Counter>::default();
        registry.register(
            "engine_launches",
            "Engines this gateway started or tried to start, by cluster, engine type and outcome (success, failure, refused: the cluster's max-engines)",
            engine_launches.clone(),
        );
        let engine_launch_seconds =
            Family::<EngineTypeLabels, Histogram, fn() -> Histogram>::new_with_constructor(
                launch_histogram,
            );
        registry.register_with_unit(
            "engine_launch_duration",
            "Time from looking up an engine to its registration, for the engines this gateway launched",
            Unit::Seconds,
            engine_launch_seconds.clone(),
        );
        let engines_in_use = Family::<EngineLabels, Gauge>::default();
        registry.register(
            "engines_in_use",
            "Engines serving at least one open session of this gateway, by cluster and engine type",
            engines_in_use.clone(),
        );
        let mut process_registry = Registry::default();
        let process = ProcessMetrics {
            cpu_seconds: Counter::default(),
            resident_memory_bytes: Gauge::default(),
            open_fds: Gauge::default(),
            max_fds: Gauge::default(),
        };
        process_registry.register(
            "process_cpu_seconds",
            "User and system CPU time spent in seconds",
            process.cpu_seconds.clone(),
        );
        process_registry.register(
            "process_resident_memory_bytes",
            "Resident memory size in bytes",
            process.resident_memory_bytes.clone(),
        );
        process_registry.register(
            "process_open_fds",
            "Number of open file descriptors",
            process.open_fds.clone(),
        );
        process_registry.register(
            "process_max_fds",
            "Maximum number of open file descriptors",
            process.max_fds.clone(),
        );
        Self {
            registry,
            process_registry,
            process,
            rpcs,
            rpc_errors,
            binary_connections,
            connections_open,
            http_connections,
            open_binary_connections: DashSet::new(),
            sessions_opened,
            sessions_open,
            sessions_refused,
            operations,
            operations_open,
            engine_launches,
            engine_launch_seconds,
            engines_in_use,
            scrape: Mutex::new(Scraped::default()),
        }
    }

    /// An RPC arrived (the proxy's path: one atomic add).
    #[inline]
    pub fn rpc(&self, method: Method) {
        self.rpcs[method as usize].inc();
    }

    /// An RPC was answered with an error status.
    #[inline]
    pub fn rpc_failed(&self, method: Method) {
        self.rpc_errors[method as usize].inc();
    }

    /// A session was opened; over a binary connection, that connection counts from its
    /// first session (the service sees no connection before its first call).
    pub fn session_opened(&self, ctx: &CallContext, cluster: &str) {
        self.sessions_opened
            .get_or_create(&SessionLabels {
                cluster: cluster.to_owned(),
                frontend: frontend(ctx.transport),
            })
            .inc();
        if ctx.transport.is_binary() && self.open_binary_connections.insert(ctx.connection_id) {
            self.binary_connections.inc();
        }
    }

    /// A session was refused by its cluster's deny lists or session caps.
    pub fn session_refused(&self, cluster: &str, reason: &'static str) {
        self.sessions_refused
            .get_or_create(&RefusalLabels {
                cluster: cluster.to_owned(),
                reason,
            })
            .inc();
    }

    /// A binary connection ended.
    pub fn connection_closed(&self, connection_id: u64) {
        self.open_binary_connections.remove(&connection_id);
    }

    /// What the Thrift HTTP server tells of its connections.
    pub fn http_connections(&self) -> Arc<dyn ConnectionObserver> {
        self.http_connections.clone()
    }

    /// A client operation was created.
    #[inline]
    pub fn operation_created(&self) {
        self.operations.inc();
    }

    /// An engine lookup (`get_or_create`) ended after `took`: counted as a launch if it
    /// started an engine (its registration has the pid of the process this gateway started)
    /// or failed to; an engine found running is no launch, and a registry that could not be
    /// read is the registry's failure, not a launch's.
    pub fn engine_lookup_ended(
        &self,
        cluster: &str,
        engine_type: EngineType,
        result: &Result<EngineRegistration, LaunchError>,
        took: Duration,
    ) {
        let outcome = match result {
            Ok(registration) if registration.pid.is_some() => "success",
            Ok(_) => return,
            Err(LaunchError::Registry(_) | LaunchError::EngineRef(_)) => return,
            Err(LaunchError::EngineLimit { .. }) => "refused",
            Err(_) => "failure",
        };
        self.engine_launches
            .get_or_create(&LaunchLabels {
                cluster: cluster.to_owned(),
                engine_type: engine_type.as_str(),
                outcome,
            })
            .inc();
        if outcome == "success" {
            self.engine_launch_seconds
                .get_or_create(&EngineTypeLabels {
                    engine_type: engine_type.as_str(),
                })
                .observe(took.as_secs_f64());
        }
    }

    /// The text Prometheus reads, with the gauges counted from `sessions` now.
    pub fn scrape(&self, sessions: &SessionManager) -> String {
        let mut scraped = self.scrape.lock().unwrap_or_else(|p| p.into_inner());
        let mut open: HashMap<ClusterLabels, i64> = HashMap::new();
        let mut engines: HashMap<EngineLabels, HashSet<String>> = HashMap::new();
        for session in sessions.snapshot() {
            let cluster = session.route.cluster.name.clone();
            if let LaunchState::Finished(engine) = session.launch.state() {
                engines
                    .entry(EngineLabels {
                        cluster: cluster.clone(),
                        engine_type: session.route.engine_ref.engine_type.as_str(),
                    })
                    .or_default()
                    .insert(engine.registration.ref_id.clone());
            }
            *open.entry(ClusterLabels { cluster }).or_default() += 1;
        }
        let engines = engines
            .into_iter()
            .map(|(labels, ids)| (labels, ids.len() as i64))
            .collect();
        set_gauges(&self.sessions_open, &mut scraped.sessions_open, open);
        set_gauges(&self.engines_in_use, &mut scraped.engines_in_use, engines);
        self.operations_open
            .set(sessions.client_operations() as i64);
        self.connections_open
            .get_or_create(&FrontendLabels { frontend: "binary" })
            .set(self.open_binary_connections.len() as i64);
        self.read_process(&mut scraped);
        self.encode()
    }

    /// The registry in Prometheus' text format.
    fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_text::encode(&mut text, &self.registry);
        let _ = prometheus_text::encode(&mut text, &self.process_registry);
        text
    }

    /// Sets the `process_*` series from `/proc/self`; one that cannot be read keeps its
    /// last value (never on Linux, where the gateway runs).
    fn read_process(&self, scraped: &mut Scraped) {
        let process = &self.process;
        if let Some(cpu) = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|stat| cpu_seconds(&stat))
        {
            if cpu > scraped.cpu_seconds {
                process.cpu_seconds.inc_by(cpu - scraped.cpu_seconds);
                scraped.cpu_seconds = cpu;
            }
        }
        if let Some(rss) = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|status| resident_bytes(&status))
        {
            process.resident_memory_bytes.set(rss);
        }
        if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
            process.open_fds.set(fds.count() as i64);
        }
        if let Some(max) = std::fs::read_to_string("/proc/self/limits")
            .ok()
            .and_then(|limits| max_open_files(&limits))
        {
            process.max_fds.set(max);
        }
    }
}

/// Clock ticks per second of `/proc/*/stat`'s times: USER_HZ, 100 on every Linux ABI.
const USER_HZ: f64 = 100.0;

/// utime + stime of `/proc/self/stat`, in seconds. The command name (field 2) may hold
/// spaces and parentheses, so fields are counted after its last `)`.
fn cpu_seconds(stat: &str) -> Option<f64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some((user + system) as f64 / USER_HZ)
}

/// `VmRSS:  1234 kB` of `/proc/self/status`, in bytes.
fn resident_bytes(status: &str) -> Option<i64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: i64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The soft limit of `Max open files` in `/proc/self/limits`.
fn max_open_files(limits: &str) -> Option<i64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Sets each gauge of `family` to its value in `now`, and to 0 those set last time that
/// `now` lacks.
fn set_gauges<S: Clone + Hash + Eq + EncodeLabelSet + std::fmt::Debug>(
    family: &Family<S, Gauge>,
    seen: &mut HashSet<S>,
    now: HashMap<S, i64>,
) {
    for gone in seen.iter().filter(|labels| !now.contains_key(*labels)) {
        family.get_or_create(gone).set(0);
    }
    for (labels, value) in now {
        family.get_or_create(&labels).set(value);
        seen.insert(labels);
    }
}

/// Whether a reply forwarded as bytes carries an error status. The bytes are the `_result`
/// struct: field 0 (the response, a struct), whose field 1 is `status`, whose field 1 is
/// `statusCode` (i32); Thrift writes fields in order, so they are the first 13 bytes. A reply
/// of another shape is not counted as an error.
fn encoded_failed(reply: &[u8]) -> bool {
    const PREFIX: [u8; 9] = [12, 0, 0, 12, 0, 1, 8, 0, 1];
    match reply.get(..13) {
        Some(head) if head[..9] == PREFIX => {
            let code = i32::from_be_bytes([head[9], head[10], head[11], head[12]]);
            is_error(code)
        }
        _ => false,
    }
}

/// ERROR_STATUS or INVALID_HANDLE_STATUS.
fn is_error(code: i32) -> bool {
    code == TStatusCode::ERROR_STATUS.0 || code == TStatusCode::INVALID_HANDLE_STATUS.0
}

/// A [`CliService`] counted in [`Metrics`]: each RPC by method, its error replies, and the
/// end of binary connections; the calls themselves go to `inner` unchanged.
pub struct Metered<S> {
    inner: S,
    metrics: Arc<Metrics>,
}

impl<S> Metered<S> {
    pub fn new(inner: S, metrics: Arc<Metrics>) -> Self {
        Self { inner, metrics }
    }
}

impl<S: CliService> Metered<S> {
    #[inline]
    fn done<T>(&self, method: Method, reply: &Reply<T>, status: impl Fn(&T) -> Option<&TStatus>) {
        let failed = match reply {
            Reply::Typed(resp) => status(resp).is_some_and(|s| is_error(s.status_code.0)),
            Reply::Encoded(bytes) => encoded_failed(bytes),
        };
        if failed {
            self.metrics.rpc_failed(method);
        }
    }
}

macro_rules! metered {
    ($($name:ident: $method:ident($req:ty) -> $resp:ty, $status:expr;)*) => {
        impl<S: CliService> CliService for Metered<S> {
            $(
                async fn $name(&self, ctx: &CallContext, req: $req) -> Reply<$resp> {
                    self.metrics.rpc(Method::$method);
                    let reply = self.inner.$name(ctx, req).await;
                    self.done(Method::$method, &reply, $status);
                    reply
                }
            )*

            async fn connection_closed(&self, ctx: &CallContext) {
                self.inner.connection_closed(ctx).await;
                self.metrics.connection_closed(ctx.connection_id);
            }
        }
    };
}

metered! {
    open_session: OpenSession(TOpenSessionReq) -> TOpenSessionResp, |r: &TOpenSessionResp| Some(&r.status);
    close_session: CloseSession(TCloseSessionReq) -> TCloseSessionResp, |r: &TCloseSessionResp| Some(&r.status);
    get_info: GetInfo(TGetInfoReq) -> TGetInfoResp, |r: &TGetInfoResp| Some(&r.status);
    execute_statement: ExecuteStatement(TExecuteStatementReq) -> TExecuteStatementResp, |r: &TExecuteStatementResp| Some(&r.status);
    get_type_info: GetTypeInfo(TGetTypeInfoReq) -> TGetTypeInfoResp, |r: &TGetTypeInfoResp| Some(&r.status);
    get_catalogs: GetCatalogs(TGetCatalogsReq) -> TGetCatalogsResp, |r: &TGetCatalogsResp| Some(&r.status);
    get_schemas: GetSchemas(TGetSchemasReq) -> TGetSchemasResp, |r: &TGetSchemasResp| Some(&r.status);
    get_tables: GetTables(TGetTablesReq) -> TGetTablesResp, |r: &TGetTablesResp| Some(&r.status);
    get_table_types: GetTableTypes(TGetTableTypesReq) -> TGetTableTypesResp, |r: &TGetTableTypesResp| Some(&r.status);
    get_columns: GetColumns(TGetColumnsReq) -> TGetColumnsResp, |r: &TGetColumnsResp| Some(&r.status);
    get_functions: GetFunctions(TGetFunctionsReq) -> TGetFunctionsResp, |r: &TGetFunctionsResp| Some(&r.status);
    get_primary_keys: GetPrimaryKeys(TGetPrimaryKeysReq) -> TGetPrimaryKeysResp, |r: &TGetPrimaryKeysResp| Some(&r.status);
    get_cross_reference: GetCrossReference(TGetCrossReferenceReq) -> TGetCrossReferenceResp, |r: &TGetCrossReferenceResp| Some(&r.status);
    get_operation_status: GetOperationStatus(TGetOperationStatusReq) -> TGetOperationStatusResp, |r: &TGetOperationStatusResp| Some(&r.status);
    cancel_operation: CancelOperation(TCancelOperationReq) -> TCancelOperationResp, |r: &TCancelOperationResp| Some(&r.status);
    close_operation: CloseOperation(TCloseOperationReq) -> TCloseOperationResp, |r: &TCloseOperationResp| Some(&r.status);
    get_result_set_metadata: GetResultSetMetadata(TGetResultSetMetadataReq) -> TGetResultSetMetadataResp, |r: &TGetResultSetMetadataResp| Some(&r.status);
    fetch_results: FetchResults(TFetchResultsReq) -> TFetchResultsResp, |r: &TFetchResultsResp| Some(&r.status);
    get_delegation_token: GetDelegationToken(TGetDelegationTokenReq) -> TGetDelegationTokenResp, |r: &TGetDelegationTokenResp| Some(&r.status);
    cancel_delegation_token: CancelDelegationToken(TCancelDelegationTokenReq) -> TCancelDelegationTokenResp, |r: &TCancelDelegationTokenResp| Some(&r.status);
    renew_delegation_token: RenewDelegationToken(TRenewDelegationTokenReq) -> TRenewDelegationTokenResp, |r: &TRenewDelegationTokenResp| Some(&r.status);
    // TGetQueryIdResp has no status: a failure is a Thrift exception, below the service.
    get_query_id: GetQueryId(TGetQueryIdReq) -> TGetQueryIdResp, |_: &TGetQueryIdResp| None;
    set_client_info: SetClientInfo(TSetClientInfoReq) -> TSetClientInfoResp, |r: &TSetClientInfoResp| Some(&r.status);
}

/// Serves `GET /metrics` until `shutdown` is cancelled, then lets scrapes in flight finish.
pub async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    sessions: Arc<SessionManager>,
    shutdown: CancellationToken,
) {
    serve_http1(listener, shutdown, "metrics", move |req, _peer| {
        let response = respond(&req, &metrics, &sessions);
        async move { response }
    })
    .await;
}

/// The answer to one request of the metrics endpoint.
fn respond<B>(
    req: &Request<B>,
    metrics: &Metrics,
    sessions: &SessionManager,
) -> Response<Full<Bytes>> {
    if req.uri().path() != METRICS_PATH {
        return text_response(
            StatusCode::NOT_FOUND,
            format!("no such endpoint; metrics are served at {METRICS_PATH}\n"),
        );
    }
    if req.method() != HttpMethod::GET && req.method() != HttpMethod::HEAD {
        return method_not_allowed("GET, HEAD", "metrics are read with GET\n".to_owned());
    }
    let mut response = Response::new(Full::new(Bytes::from(metrics.scrape(sessions))));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(prometheus_text::CONTENT_TYPE),
    );
    response
}

/// Where the endpoint listens, for logs.
pub fn describe(addr: SocketAddr) -> String {
    format!("http://{addr}{METRICS_PATH}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
        text.lines().find(|l| l.starts_with(prefix))
    }

    #[test]
    fn rpc_counters_exist_for_every_method_and_count_by_index() {
        let metrics = Metrics::new();
        metrics.rpc(Method::FetchResults);
        metrics.rpc(Method::FetchResults);
        metrics.rpc_failed(Method::ExecuteStatement);
        let text = metrics.encode();
        assert_eq!(
            line(&text, "kumiho_rpcs_total{method=\"FetchResults\"}"),
            Some("kumiho_rpcs_total{method=\"FetchResults\"} 2")
        );
        assert_eq!(
            line(
                &text,
                "kumiho_rpc_errors_total{method=\"ExecuteStatement\"}"
            ),
            Some("kumiho_rpc_errors_total{method=\"ExecuteStatement\"} 1")
        );
        for method in Method::ALL {
            assert!(
                text.contains(&format!(
                    "kumiho_rpcs_total{{method=\"{}\"}}",
                    method.name()
                )),
                "{method:?} has no counter"
            );
        }
        assert!(text.contains("# TYPE kumiho_rpcs_total counter"), "{text}");
        assert!(text.contains(&format!(
            "kumiho_build_info{{version=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION")
        )));
    }

    #[test]
    fn launches_count_by_outcome_and_only_successes_are_timed() {
        let metrics = Metrics::new();
        let registration = |pid| EngineRegistration {
            space: "/kumiho_0.1.0_USER_DATAFUSION/alice/default".to_owned(),
            host: "127.0.0.1".to_owned(),
            port: 1,
            version: "0.1.0".to_owned(),
            ref_id: "r".to_owned(),
            sequence: 0,
            pid,
        };
        let ty = EngineType::DataFusion;
        let took = Duration::from_millis(300);
        metrics.engine_lookup_ended("prod", ty, &Ok(registration(Some(7))), took);
        // Found running: no launch.
        metrics.engine_lookup_ended("prod", ty, &Ok(registration(None)), took);
        let missing = LaunchError::ProgramNotFound {
            program: "/nonexistent".into(),
        };
        metrics.engine_lookup_ended("prod", ty, &Err(missing), took);
        let text = metrics.encode();
        assert!(text.contains(
            "kumiho_engine_launches_total{cluster=\"prod\",engine_type=\"DATAFUSION\",outcome=\"success\"} 1"
        ), "{text}");
        assert!(text.contains(
            "kumiho_engine_launches_total{cluster=\"prod\",engine_type=\"DATAFUSION\",outcome=\"failure\"} 1"
        ), "{text}");
        assert!(
            text.contains(
                "kumiho_engine_launch_duration_seconds_count{engine_type=\"DATAFUSION\"} 1"
            ),
            "{text}"
        );
        // 0.3 s falls in the 0.5 s bucket, not in the 0.25 s one.
        let bucket = |le: &str| {
            text.lines()
                .find(|l| {
                    l.starts_with("kumiho_engine_launch_duration_seconds_bucket{")
                        && l.contains("engine_type=\"DATAFUSION\"")
                        && l.contains(&format!("le=\"{le}\""))
                })
                .and_then(|l| l.rsplit(' ').next())
                .map(str::to_owned)
        };
        assert_eq!(bucket("0.25").as_deref(), Some("0"), "{text}");
        assert_eq!(bucket("0.5").as_deref(), Some("1"), "{text}");
    }

    #[test]
    fn forwarded_replies_are_read_for_their_status_code() {
        let reply = |code: i32| {
            let mut bytes = vec![12, 0, 0, 12, 0, 1, 8, 0, 1];
            bytes.extend_from_slice(&code.to_be_bytes());
            bytes.push(0);
            bytes
        };
        assert!(!encoded_failed(&reply(0)));
        assert!(!encoded_failed(&reply(2)));
        assert!(encoded_failed(&reply(3)));
        assert!(encoded_failed(&reply(4)));
        assert!(!encoded_failed(&[12, 0, 0]));
        assert!(!encoded_failed(&[]));
    }

    #[test]
    fn process_figures_are_read_from_procfs_text() {
        let stat =
            "4242 (kumiho (gw) x) S 1 4242 4242 0 -1 4194560 1500 0 0 0 250 130 0 0 20 0 9 0";
        assert_eq!(cpu_seconds(stat), Some(3.8));
        assert_eq!(cpu_seconds("garbage"), None);
        let status = "Name:\tkumiho\nVmPeak:\t 9000 kB\nVmRSS:\t   2048 kB\nThreads:\t9\n";
        assert_eq!(resident_bytes(status), Some(2048 * 1024));
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max processes             63396                63396                processes\n\
                      Max open files            1024                 524288               files\n";
        assert_eq!(max_open_files(limits), Some(1024));
        // This process, as the endpoint reads it.
        let metrics = Metrics::new();
        metrics.read_process(&mut Scraped::default());
        let text = metrics.encode();
        assert!(
            text.contains("# TYPE process_cpu_seconds_total counter"),
            "{text}"
        );
        let value = |name: &str| -> f64 {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("{name} ")))
                .unwrap();
            line.rsplit(' ').next().unwrap().parse().unwrap()
        };
        assert!(value("process_resident_memory_bytes") > 0.0, "{text}");
        assert!(value("process_open_fds") > 0.0, "{text}");
        assert!(
            value("process_max_fds") >= value("process_open_fds"),
            "{text}"
        );
    }

    #[test]
    fn gauges_of_a_label_set_gone_read_zero() {
        let family = Family::<ClusterLabels, Gauge>::default();
        let mut seen = HashSet::new();
        let prod = ClusterLabels {
            cluster: "prod".to_owned(),
        };
        set_gauges(&family, &mut seen, HashMap::from([(prod.clone(), 3)]));
        assert_eq!(family.get_or_create(&prod).get(), 3);
        set_gauges(&family, &mut seen, HashMap::new());
        assert_eq!(family.get_or_create(&prod).get(), 0);
    }
}
