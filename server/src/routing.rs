//! From an OpenSession request to an engine reference: user, cluster, engine type, share level, pool.
//!
//! Keys are Kyuubi's, so that existing JDBC URLs work unchanged; they arrive normalised by
//! [`kumiho_thrift::session_conf`]. The cluster's `session-conf` rules apply before anything
//! but the cluster choice reads them: a restricted key refuses the session, an ignored one is
//! dropped, and the [`Route`] carries what is left. Every refusal says which setting to change.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use kumiho_engine_launcher::{
    EngineRef, EngineRefRequest, EngineSecret, GroupProvider, PoolRequest, PoolSelectPolicy,
    Registry,
};
use kumiho_thrift::session_conf::SessionConf;

use crate::cluster::{
    Cluster, ClusterRegistry, ClusterUnavailable, InfoProvider, RuledSessionConf,
};
use crate::duration;
use crate::errors::GatewayError;
use crate::registries::Registries;

/// Session keys the gateway reads.
pub mod keys {
    pub const CLUSTER: &str = "kyuubi.session.cluster";
    pub const ENGINE_TYPE: &str = "kyuubi.engine.type";
    pub const SHARE_LEVEL: &str = "kyuubi.engine.share.level";
    pub const SUBDOMAIN: &str = "kyuubi.engine.share.level.subdomain";
    pub const POOL_SIZE: &str = "kyuubi.engine.pool.size";
    pub const POOL_NAME: &str = "kyuubi.engine.pool.name";
    pub const POOL_POLICY: &str = "kyuubi.engine.pool.selectPolicy";
    pub const IDLE_TIMEOUT: &str = "kyuubi.session.engine.idle.timeout";
    pub const INITIALIZE_TIMEOUT: &str = "kyuubi.session.engine.initialize.timeout";
    pub const LOGIN_TIMEOUT: &str = "kyuubi.session.engine.login.timeout";
    pub const LAUNCH_ASYNC: &str = "kyuubi.session.engine.launch.async";
    pub const INFO_PROVIDER: &str = "kyuubi.server.info.provider";
    pub const QUERY_TIMEOUT: &str = "kyuubi.operation.query.timeout";
    /// Proxy-user keys, in order of precedence.
    pub const PROXY_USER: [&str; 2] = ["hive.server2.proxy.user", "kyuubi.session.proxy.user"];
}

/// Where one session goes and how its engine is launched.
#[derive(Clone, Debug)]
pub struct Route {
    /// The user sessions run as (the proxy user when one is allowed).
    pub user: String,
    /// The user who authenticated.
    pub login_user: String,
    pub cluster: Arc<Cluster>,
    pub registry: Arc<dyn Registry>,
    /// Where the registry keeps its tree, and the gateway the engine logs.
    pub registry_dir: PathBuf,
    /// The password the cluster's engines require of the gateway.
    pub secret: EngineSecret,
    pub engine_ref: EngineRef,
    /// Whether OpenSession answers before the engine is up.
    pub launch_async: bool,
    /// Who answers GetInfo's names and version: the gateway or the engine.
    pub info_provider: InfoProvider,
    pub idle_timeout: Duration,
    pub initialize_timeout: Duration,
    /// How long connecting and authenticating to the engine may take.
    pub login_timeout: Duration,
    /// The session's settings after the cluster's `session-conf` rules: what launch settings
    /// and the engine session are made of.
    pub conf: SessionConf,
    /// Keys the cluster's `session-conf.ignore` dropped from the session's settings.
    pub ignored_keys: Vec<String>,
    /// Longest a statement runs before it ends as timed out: the cluster's cap or the
    /// session's `kyuubi.operation.query.timeout`, the shorter ([`Route::capped_query_timeout`]).
    pub query_timeout: Option<Duration>,
}

impl Route {
    /// An ExecuteStatement's `queryTimeout` (seconds, 0 for none) under the session's cap:
    /// the client's when shorter, else the cap in whole seconds (at least 1).
    pub fn capped_query_timeout(&self, client_seconds: Option<i64>) -> Option<i64> {
        let client = client_seconds.filter(|&seconds| seconds > 0);
        let Some(cap) = self.query_timeout else {
            return client_seconds;
        };
        let cap = i64::try_from(cap.as_secs() + u64::from(cap.subsec_nanos() > 0))
            .unwrap_or(i64::MAX)
            .max(1);
        Some(client.map_or(cap, |client| client.min(cap)))
    }
}

/// Computes routes; shared by every session.
pub struct Router {
    pub clusters: Arc<ClusterRegistry>,
    pub registries: Arc<Registries>,
    pub groups: Arc<dyn GroupProvider>,
    pub default_cluster: String,
    pub max_pool_size: u32,
    /// Owner of SERVER-level engines: the OS user the gateway runs as.
    pub server_user: String,
    /// Engine version in registry paths.
    pub version: String,
}

impl Router {
    /// The route of a session opened by `login_user` with settings `conf`; `session_id`
    /// names its engine at share level CONNECTION.
    pub async fn route(
        &self,
        login_user: &str,
        conf: &SessionConf,
        session_id: &str,
    ) -> Result<Route, GatewayError> {
        let cluster_name = setting(&conf.settings, keys::CLUSTER).unwrap_or(&self.default_cluster);
        let cluster = self.clusters.get(cluster_name).map_err(|e| match e {
            ClusterUnavailable::Unknown { .. } => GatewayError::BadRequest(e.to_string()),
            ClusterUnavailable::Broken { .. } => GatewayError::Config(e.to_string()),
        })?;
        let config = &cluster.config;
        // Everything below reads the settings the cluster's rules leave.
        let ruled = apply_session_conf_rules(&cluster, conf)?;
        let get = |key: &str| setting(&ruled.conf.settings, key);

        let user = effective_user(
            &cluster,
            login_user,
            keys::PROXY_USER.iter().find_map(|key| get(key)),
        )?;

        let engine_type = parse_or(
            get(keys::ENGINE_TYPE),
            keys::ENGINE_TYPE,
            config.engine.engine_type,
        )?;
        let share_level = parse_or(
            get(keys::SHARE_LEVEL),
            keys::SHARE_LEVEL,
            config.engine.share_level,
        )?;
        let idle_timeout = duration_or(
            get(keys::IDLE_TIMEOUT),
            keys::IDLE_TIMEOUT,
            config.engine.idle_timeout,
        )?;
        let initialize_timeout = duration_or(
            get(keys::INITIALIZE_TIMEOUT),
            keys::INITIALIZE_TIMEOUT,
            config.engine.initialize_timeout,
        )?;
        let login_timeout = duration_or(
            get(keys::LOGIN_TIMEOUT),
            keys::LOGIN_TIMEOUT,
            config.engine.login_timeout,
        )?;
        let launch_async = parse_bool(get(keys::LAUNCH_ASYNC), keys::LAUNCH_ASYNC, true)?;
        // A session may shorten the cluster's cap, never lengthen it.
        let asked = duration_or(
            get(keys::QUERY_TIMEOUT),
            keys::QUERY_TIMEOUT,
            Duration::ZERO,
        )?;
        let query_timeout = (!asked.is_zero())
            .then_some(asked)
            .into_iter()
            .chain(config.limits.query_timeout)
            .min();
        let info_provider = parse_or(
            get(keys::INFO_PROVIDER),
            keys::INFO_PROVIDER,
            config.info_provider,
        )?;
        let pool = match get(keys::POOL_SIZE) {
            None => None,
            Some(size) => Some(PoolRequest {
                size: size.parse().map_err(|_| {
                    GatewayError::BadRequest(format!(
                        "{} `{size}` is not a whole number",
                        keys::POOL_SIZE
                    ))
                })?,
                name: get(keys::POOL_NAME)
                    .unwrap_or(PoolRequest::DEFAULT_NAME)
                    .to_owned(),
                policy: parse_or(
                    get(keys::POOL_POLICY),
                    keys::POOL_POLICY,
                    PoolSelectPolicy::default(),
                )?,
            }),
        };

        let backend = self.registries.for_cluster(&cluster).await?;
        let registry = backend.registry;
        let request = EngineRefRequest {
            namespace: config.registry.namespace().to_owned(),
            version: self.version.clone(),
            session_user: user.clone(),
            server_user: self.server_user.clone(),
            session_id: session_id.to_owned(),
            share_level,
            engine_type,
            subdomain: get(keys::SUBDOMAIN).map(str::to_owned),
            pool,
            max_pool_size: self.max_pool_size as usize,
        };
        let engine_ref = EngineRef::resolve(&request, self.groups.as_ref(), registry.as_ref())
            .await
            .map_err(|e| GatewayError::BadRequest(e.to_string()))?;
        Ok(Route {
            user,
            login_user: login_user.to_owned(),
            cluster,
            registry,
            registry_dir: backend.dir,
            secret: backend.secret,
            engine_ref,
            launch_async,
            info_provider,
            idle_timeout,
            initialize_timeout,
            login_timeout,
            conf: ruled.conf,
            ignored_keys: ruled.ignored,
            query_timeout,
        })
    }
}

/// A session setting's value, trimmed; `None` when absent or blank.
pub(crate) fn setting<'a>(settings: &'a BTreeMap<String, String>, key: &str) -> Option<&'a str> {
    settings
        .get(key)
        .map(|value| value.trim())
        .filter(|value| !value.is_empty())
}

/// The session's settings under its cluster's `session-conf` rules; a restricted key refuses
/// the session, naming the key and the cluster.
pub(crate) fn apply_session_conf_rules(
    cluster: &Cluster,
    conf: &SessionConf,
) -> Result<RuledSessionConf, GatewayError> {
    let ruled = cluster
        .config
        .session_conf
        .apply(conf)
        .map_err(|restricted| {
            GatewayError::Refused(format!(
                "session configuration key `{}` is restricted on cluster `{}` (its session-conf.restrict lists `{}`); remove it from the connection URL or session settings, or ask an operator",
                restricted.key, cluster.name, restricted.rule
            ))
        })?;
    if !ruled.ignored.is_empty() {
        tracing::debug!(cluster = %cluster.name, keys = ?ruled.ignored, "session settings dropped by session-conf.ignore");
    }
    Ok(ruled)
}

/// The user a session or batch runs as: the login user, or the proxy user when the login user
/// is one of the cluster's super users; refused unless the cluster's allowed-users admit it.
pub(crate) fn effective_user(
    cluster: &Cluster,
    login_user: &str,
    proxy_user: Option<&str>,
) -> Result<String, GatewayError> {
    let user = match proxy_user {
        None => login_user,
        Some(proxy) if proxy == login_user => login_user,
        Some(proxy) if cluster.config.is_super_user(login_user) => proxy,
        Some(proxy) => {
            return Err(GatewayError::Refused(format!(
                "user `{login_user}` may not impersonate `{proxy}` on cluster `{}`: only its super-users may set hive.server2.proxy.user",
                cluster.name
            )))
        }
    };
    if !cluster.config.admits(user) {
        return Err(GatewayError::Refused(format!(
            "user `{user}` may not use cluster `{}`; ask an operator to add them to its allowed-users",
            cluster.name
        )));
    }
    Ok(user.to_owned())
}

fn parse_or<T: FromStr>(value: Option<&str>, key: &str, default: T) -> Result<T, GatewayError>
where
    T::Err: std::fmt::Display,
{
    match value {
        None => Ok(default),
        Some(value) => value
            .parse()
            .map_err(|e| GatewayError::BadRequest(format!("{key}: {e}"))),
    }
}

fn duration_or(
    value: Option<&str>,
    key: &str,
    default: Duration,
) -> Result<Duration, GatewayError> {
    match value {
        None => Ok(default),
        Some(value) => {
            duration::parse(value).map_err(|e| GatewayError::BadRequest(format!("{key}: {e}")))
        }
    }
}

fn parse_bool(value: Option<&str>, key: &str, default: bool) -> Result<bool, GatewayError> {
    match value.map(str::to_ascii_lowercase).as_deref() {
        None => Ok(default),
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(other) => Err(GatewayError::BadRequest(format!(
            "{key} `{other}` must be true or false"
        ))),
    }
}

/// The OS user this process runs as, for SERVER-level engines.
pub fn server_user() -> String {
    std::env::var("USER")
        .ok()
        .filter(|user| !user.is_empty())
        .unwrap_or_else(|| "kumiho".to_owned())
}

#[cfg(test)]
mod tests;
