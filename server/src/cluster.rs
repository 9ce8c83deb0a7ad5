//! Cluster configs: one YAML file per cluster, parsed, validated, and served from an atomic swap.
//!
//! The file stem is the cluster's name (`cluster-configs/prod-a.yaml` is `prod-a`). A cluster
//! names its registry, its default engine type and share level, engine settings, the
//! environment of engine processes, who may impersonate and who may connect. A file that
//! fails to parse is reported with its name and line and its last good version stays in
//! force; [`watcher`] re-reads the directory when it changes.

pub mod watcher;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use kumiho_engine_launcher::{EngineType, ShareLevel};
use kumiho_thrift::session_conf::SessionConf;
use serde::{Deserialize, Deserializer};

use crate::duration;

/// One cluster file.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct ClusterConfig {
    /// Where this cluster's engines register and are found.
    #[serde(with = "serde_yaml_ng::with::singleton_map")]
    pub registry: RegistryConfig,
    /// Defaults and settings for the engines of this cluster.
    pub engine: EngineSettings,
    /// Environment variables set in every engine process of this cluster.
    pub env: BTreeMap<String, String>,
    /// Users who may run sessions as another user (`hive.server2.proxy.user`).
    pub super_users: Vec<String>,
    /// Users who may open sessions here; `*` admits everyone. Empty admits everyone too.
    pub allowed_users: Vec<String>,
    /// Users refused here even when `allowed-users` admits them (Kyuubi's
    /// `kyuubi.server.limit.connections.user.deny.list`): matched against the login user and
    /// the user a session runs as.
    pub deny_users: Vec<String>,
    /// Client addresses refused here: an address (`10.1.2.3`) or a network (`10.1.0.0/16`)
    /// (Kyuubi's `kyuubi.server.limit.connections.ip.deny.list`, which takes addresses only).
    pub deny_ips: Vec<AddressRule>,
    /// Caps on what this cluster runs.
    pub limits: Limits,
    /// Session keys this cluster refuses or drops (Kyuubi's `kyuubi.session.conf.restrict.list`
    /// and `kyuubi.session.conf.ignore.list`, per cluster).
    pub session_conf: SessionConfRules,
    /// Password engines require of the gateway. When absent, the gateway keeps a random one
    /// in its work directory, which every gateway sharing that directory reads.
    pub internal_secret: Option<Secret>,
    /// Who names the server in GetInfo (Kyuubi's `kyuubi.server.info.provider`); a session
    /// may choose with that key.
    #[serde(deserialize_with = "by_name")]
    pub info_provider: InfoProvider,
}

/// Who answers GetInfo's server name, DBMS name and DBMS version, which beeline prints on
/// connecting and some BI tools and ODBC drivers read to choose their SQL dialect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InfoProvider {
    /// The gateway ("Kumiho" and its version), at once, before the engine is up: a client
    /// connects without waiting for the launch.
    #[default]
    Server,
    /// The session's engine ("Spark SQL" and Spark's version from a Spark engine), once its
    /// launch has finished: for tools that recognise the engine by its name.
    Engine,
}

kumiho_engine_launcher::wire_names!(InfoProvider, "server info provider", {
    Server => "SERVER",
    Engine => "ENGINE",
});

/// The registry of a cluster: `embedded: {}` (files under the work directory, the default)
/// or `zookeeper: {...}`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RegistryConfig {
    Embedded(EmbeddedRegistryConfig),
    Zookeeper(ZookeeperConfig),
}

impl Default for RegistryConfig {
    fn default() -> Self {
        RegistryConfig::Embedded(EmbeddedRegistryConfig::default())
    }
}

impl RegistryConfig {
    /// The namespace that prefixes every registry path of the cluster.
    pub fn namespace(&self) -> &str {
        match self {
            RegistryConfig::Embedded(embedded) => &embedded.namespace,
            RegistryConfig::Zookeeper(zk) => &zk.namespace,
        }
    }

    fn namespace_mut(&mut self) -> &mut String {
        match self {
            RegistryConfig::Embedded(embedded) => &mut embedded.namespace,
            RegistryConfig::Zookeeper(zk) => &mut zk.namespace,
        }
    }
}

/// Whether a cluster file's text (one that parses) names its registry's namespace.
fn names_a_namespace(text: &str) -> bool {
    let Ok(file) = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(text) else {
        return false;
    };
    let registry = file.get("registry");
    ["embedded", "zookeeper"].iter().any(|kind| {
        registry
            .and_then(|r| r.get(kind))
            .and_then(|r| r.get("namespace"))
            .is_some()
    })
}

/// The namespace of the cluster `name` when its file names none: `kumiho` for the cluster
/// `default`, `kumiho-NAME` for another (a character a namespace cannot hold written `-`).
/// Clusters on one registry root or one ensemble then never share engines: a session of
/// one cluster never lands on an engine launched with another's settings.
pub fn default_namespace(cluster: &str) -> String {
    if cluster == "default" {
        return "kumiho".to_owned();
    }
    let name: String = cluster
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("kumiho-{name}")
}

/// The embedded registry: the ZooKeeper tree kept as files on this host.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct EmbeddedRegistryConfig {
    /// Root directory of the tree; by default `WORK_DIR/registry` (shared by the clusters,
    /// which stay apart through their namespaces).
    pub root: Option<PathBuf>,
    /// First segment of every path (`/{namespace}_{version}_{SHARE}_{TYPE}/...`); by
    /// default the cluster's ([`default_namespace`]).
    pub namespace: String,
}

impl Default for EmbeddedRegistryConfig {
    fn default() -> Self {
        Self {
            root: None,
            namespace: "kumiho".to_owned(),
        }
    }
}

/// A ZooKeeper ensemble: engines register there and every gateway naming it shares them.
/// Clusters on the same ensemble with the same timeouts share one connection; each distinct
/// pair of timeouts gets a session of its own.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct ZookeeperConfig {
    /// `host:port` list separated by commas.
    pub addresses: String,
    /// First segment of every path (`/{namespace}_{version}_{SHARE}_{TYPE}/...`), by
    /// default the cluster's ([`default_namespace`]); the internal secret, unless the
    /// cluster sets one, is kept at `/{namespace}_secret`.
    pub namespace: String,
    /// How long the ensemble keeps a silent session (and its registrations) alive.
    #[serde(with = "duration::serde_text")]
    pub session_timeout: Duration,
    /// How long a session of this cluster waits for the ensemble to answer before it fails
    /// with "registry unavailable".
    #[serde(with = "duration::serde_text")]
    pub connect_timeout: Duration,
}

impl Default for ZookeeperConfig {
    fn default() -> Self {
        Self {
            addresses: String::new(),
            namespace: "kumiho".to_owned(),
            // Kyuubi's kyuubi.ha.zookeeper.session.timeout and .connection.timeout.
            session_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(15),
        }
    }
}

/// Engine defaults of a cluster; sessions may override type, share level and timeouts.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct EngineSettings {
    /// `DATAFUSION` or `SPARK_SQL`.
    #[serde(rename = "type", deserialize_with = "by_name")]
    pub engine_type: EngineType,
    /// `CONNECTION`, `USER`, `GROUP` or `SERVER`.
    #[serde(deserialize_with = "by_name")]
    pub share_level: ShareLevel,
    /// An engine with no session for this long stops itself.
    #[serde(with = "duration::serde_text")]
    pub idle_timeout: Duration,
    /// A launch not registered within this long is killed and reported.
    #[serde(with = "duration::serde_text")]
    pub initialize_timeout: Duration,
    /// How long connecting and authenticating to an engine may take (also a cancel's whole
    /// call): an engine that accepts connections but answers nothing fails the session.
    #[serde(with = "duration::serde_text")]
    pub login_timeout: Duration,
    /// Address engines listen on; the gateway connects there.
    pub bind_host: String,
    /// Settings of `kumiho-engine` (DataFusion).
    pub datafusion: DataFusionSettings,
    /// Settings of the Spark Thrift Server engine.
    pub spark: SparkSettings,
}

impl Default for EngineSettings {
    fn default() -> Self {
        Self {
            engine_type: EngineType::DataFusion,
            share_level: ShareLevel::User,
            idle_timeout: Duration::from_secs(30 * 60),
            initialize_timeout: Duration::from_secs(3 * 60),
            // Kyuubi's kyuubi.session.engine.login.timeout.
            login_timeout: Duration::from_secs(15),
            bind_host: "127.0.0.1".to_owned(),
            datafusion: DataFusionSettings::default(),
            spark: SparkSettings::default(),
        }
    }
}

/// Settings of the DataFusion engine (`kumiho-engine`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct DataFusionSettings {
    /// An engine config file passed as is (`--config`); excludes `tables`.
    pub config_file: Option<PathBuf>,
    /// Tables every engine of the cluster registers at start, by name, e.g.
    /// `trips: {format: parquet, location: /data/trips/}`; the engine owns their meaning.
    pub tables: BTreeMap<String, serde_yaml_ng::Value>,
    /// The engine's `--log-level`.
    pub log_level: Option<String>,
    /// Where the engines keep databases and managed tables, shared by all of them (Spark's
    /// `spark.sql.warehouse.dir`): a local path or an object-store URL (`s3://b/warehouse/`).
    /// None: `warehouse/` under the gateway's work directory.
    pub warehouse: Option<String>,
    /// The time zone the engines' sessions start in (`America/Los_Angeles`, `+09:00`), as
    /// Spark's `spark.sql.session.timeZone` for a whole cluster; None: UTC. A session still
    /// sets its own.
    pub time_zone: Option<String>,
}

impl DataFusionSettings {
    /// The launcher's form of these settings.
    pub fn to_launch_settings(&self) -> kumiho_engine_launcher::DataFusionSettings {
        kumiho_engine_launcher::DataFusionSettings {
            config_file: self.config_file.clone(),
            tables: self.tables.clone(),
            log_level: self.log_level.clone(),
            warehouse: self.warehouse.clone(),
            time_zone: self.time_zone.clone(),
        }
    }
}

/// Settings of the Spark SQL engine (Spark Thrift Server through `spark-submit`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct SparkSettings {
    /// `SPARK_HOME`; by default `SPARK_HOME` of the cluster's `env`, then the gateway's.
    pub home: Option<PathBuf>,
    /// `--master`, e.g. `local[*]`, `yarn`, `k8s://...`; sessions may override it with
    /// `spark.master`.
    pub master: Option<String>,
    /// `--deploy-mode`; only `client` (the default) works: the Thrift Server runs beside the
    /// supervisor that admits the gateway, its executors on the master's resources.
    pub deploy_mode: Option<String>,
    /// `--conf` pairs; a session's `spark.*` keys are laid over them when it launches an engine.
    pub conf: BTreeMap<String, String>,
    /// Spark engines and batches run as their user (`spark-submit --proxy-user`), as Kyuubi's
    /// `kyuubi.engine.doAs.enabled` (default true): a USER or CONNECTION engine as its user, a
    /// GROUP engine as the group, a batch as its user; a SERVER engine runs as the gateway.
    /// `false`: everything runs as the gateway's OS user.
    pub do_as: bool,
}

impl Default for SparkSettings {
    fn default() -> Self {
        Self {
            home: None,
            master: None,
            deploy_mode: None,
            conf: BTreeMap::new(),
            do_as: true,
        }
    }
}

impl SparkSettings {
    /// The launcher's form of these settings, with the session's `spark.*` keys over the conf,
    /// for an engine or batch of `user` (`None`: one of the gateway's own, a SERVER engine).
    pub fn to_launch_settings(
        &self,
        session: &BTreeMap<String, String>,
        user: Option<&str>,
    ) -> kumiho_engine_launcher::SparkSettings {
        kumiho_engine_launcher::SparkSettings {
            home: self.home.clone(),
            master: self.master.clone(),
            deploy_mode: self.deploy_mode.clone(),
            conf: self.conf.clone(),
            session_conf: BTreeMap::new(),
            proxy_user: user.filter(|_| self.do_as).map(str::to_owned),
        }
        .with_session_conf(session)
    }
}

/// Caps on one cluster.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct Limits {
    /// Most engines the cluster runs or is starting at once, counted in its registry over
    /// every engine space of its namespace before a launch, launches under way included (see
    /// `kumiho_engine_launcher::engine_limit`); reusing a registered engine is never refused.
    /// None: no cap.
    pub max_engines: Option<u32>,
    /// Most sessions one user may have open on this gateway. None: no cap.
    pub max_sessions_per_user: Option<u32>,
    /// Most sessions open on this gateway from one client address. None: no cap.
    pub max_sessions_per_ip: Option<u32>,
    /// Most sessions one user may have open on this gateway from one client address.
    /// None: no cap.
    pub max_sessions_per_user_ip: Option<u32>,
    /// Users none of the three session caps applies to (service accounts, ETL schedulers).
    pub unlimited_users: Vec<String>,
    /// Longest a statement may run before it is cancelled as timed out (Kyuubi's
    /// `kyuubi.operation.query.timeout`): a cap on the client's own query timeout, which a
    /// session may lower with that key. None: no cap.
    #[serde(with = "duration::serde_optional_text")]
    pub query_timeout: Option<Duration>,
}

/// A client address or network of a cluster's `deny-ips`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressRule(ipnet::IpNet);

impl AddressRule {
    /// Whether `address` is this address, or lies in this network.
    pub fn matches(&self, address: std::net::IpAddr) -> bool {
        self.0.contains(&address.to_canonical())
    }
}

impl fmt::Display for AddressRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.prefix_len() == self.0.max_prefix_len() {
            true => write!(f, "{}", self.0.addr()),
            false => write!(f, "{}", self.0),
        }
    }
}

impl std::str::FromStr for AddressRule {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if let Ok(address) = text.parse::<std::net::IpAddr>() {
            return Ok(AddressRule(address.to_canonical().into()));
        }
        text.parse::<ipnet::IpNet>()
            .map(|network| AddressRule(network.trunc()))
            .map_err(|_| {
                format!(
                    "`{text}` is neither an IP address (10.1.2.3, ::1) nor a network (10.1.0.0/16)"
                )
            })
    }
}

impl<'de> Deserialize<'de> for AddressRule {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// Which session configuration keys a cluster refuses or drops, as Kyuubi's
/// `kyuubi.session.conf.restrict.list` and `kyuubi.session.conf.ignore.list` do server-wide.
///
/// They apply to the session's normalised keys (`set:hiveconf:spark.jars` is `spark.jars`) of
/// every session on the cluster, super users' too (Kyuubi exempts no one), before anything
/// reads them: routing, launch settings, and the engine session. They do not reach `SET`
/// statements run later in the session, which is Kyuubi's behaviour too.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SessionConfRules {
    /// A session setting one of these keys is refused at OpenSession, naming the key.
    pub restrict: Vec<KeyPattern>,
    /// These keys are dropped from the session's settings (noted in its launch log); a key
    /// both restricted and ignored is restricted.
    pub ignore: Vec<KeyPattern>,
}

/// The session's settings after a cluster's [`SessionConfRules`].
#[derive(Clone, Debug, PartialEq)]
pub struct RuledSessionConf {
    /// The settings without the ignored keys.
    pub conf: SessionConf,
    /// The keys dropped, in key order.
    pub ignored: Vec<String>,
}

/// A session set a key the cluster restricts.
#[derive(Clone, Debug, PartialEq)]
pub struct RestrictedKey {
    /// The key as normalised.
    pub key: String,
    /// The `restrict` entry it matched.
    pub rule: KeyPattern,
}

impl SessionConfRules {
    /// Applies the rules to a session's settings: refused at the first restricted key (in key
    /// order), else the settings without the ignored keys.
    pub fn apply(&self, conf: &SessionConf) -> Result<RuledSessionConf, RestrictedKey> {
        if let Some((key, rule)) = conf.settings.keys().find_map(|key| {
            self.restrict
                .iter()
                .find(|rule| rule.matches(key))
                .map(|rule| (key, rule))
        }) {
            return Err(RestrictedKey {
                key: key.clone(),
                rule: rule.clone(),
            });
        }
        let (ignored, kept): (BTreeMap<_, _>, BTreeMap<_, _>) = conf
            .settings
            .iter()
            .map(|(key, value)| (key.clone(), value.clone()))
            .partition(|(key, _)| self.ignore.iter().any(|rule| rule.matches(key)));
        Ok(RuledSessionConf {
            conf: SessionConf {
                settings: kept,
                database: conf.database.clone(),
            },
            ignored: ignored.into_keys().collect(),
        })
    }
}

/// An entry of a [`SessionConfRules`] list: an exact key (`spark.jars`), or a prefix ending
/// in `*` (`spark.driver.*` matches every key that begins with `spark.driver.`). Keys are
/// compared as they are written, case included, as Spark and Kyuubi compare them.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum KeyPattern {
    Exact(String),
    Prefix(String),
}

impl KeyPattern {
    /// Whether `key` is this key, or begins with this prefix.
    pub fn matches(&self, key: &str) -> bool {
        match self {
            KeyPattern::Exact(exact) => key == exact,
            KeyPattern::Prefix(prefix) => key.starts_with(prefix.as_str()),
        }
    }
}

impl TryFrom<String> for KeyPattern {
    type Error = String;

    fn try_from(entry: String) -> Result<Self, String> {
        let entry = entry.trim();
        if entry.is_empty() {
            return Err("an entry is empty; write a key such as `spark.jars` or a prefix such as `spark.driver.*`".to_owned());
        }
        if entry.contains(char::is_whitespace) {
            return Err(format!(
                "entry `{entry}` holds a space; write one key per entry"
            ));
        }
        let (body, is_prefix) = match entry.strip_suffix('*') {
            Some(prefix) => (prefix, true),
            None => (entry, false),
        };
        if body.contains('*') {
            return Err(format!(
                "entry `{entry}` has a `*` before its end; `*` may only end an entry, as in `spark.driver.*`"
            ));
        }
        if body.is_empty() {
            return Err("entry `*` would match every key, the gateway's own (kyuubi.*) too; list the keys or prefixes such as `spark.driver.*`".to_owned());
        }
        Ok(if is_prefix {
            KeyPattern::Prefix(body.to_owned())
        } else {
            KeyPattern::Exact(body.to_owned())
        })
    }
}

impl fmt::Display for KeyPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyPattern::Exact(key) => f.write_str(key),
            KeyPattern::Prefix(prefix) => write!(f, "{prefix}*"),
        }
    }
}

/// A secret that never prints.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Reads a name such as `USER` or `spark_sql` through the type's `FromStr`, whose error lists
/// the valid names; the YAML parser adds the line.
pub(crate) fn by_name<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: std::str::FromStr,
    T::Err: fmt::Display,
{
    String::deserialize(deserializer)?
        .parse()
        .map_err(serde::de::Error::custom)
}

impl ClusterConfig {
    /// Parses the text of the cluster `default`'s file; errors carry the line and column.
    pub fn from_yaml(text: &str) -> Result<Self, String> {
        Self::of_cluster("default", text)
    }

    /// Parses the text of the file of the cluster `name`, whose registry namespace is
    /// [`default_namespace`] unless the file names one; errors carry the line and column.
    pub fn of_cluster(name: &str, text: &str) -> Result<Self, String> {
        let mut config: Self = if text.trim().is_empty() {
            Self::default()
        } else {
            serde_yaml_ng::from_str(text).map_err(|e| with_line(text, e.to_string()))?
        };
        if !names_a_namespace(text) {
            *config.registry.namespace_mut() = default_namespace(name);
        }
        config.validate()?;
        Ok(config)
    }

    /// Checks what parses but cannot work.
    pub fn validate(&self) -> Result<(), String> {
        if let RegistryConfig::Zookeeper(zk) = &self.registry {
            if zk.addresses.trim().is_empty() {
                return Err(
                    "registry.zookeeper.addresses is empty; write e.g. `zk1:2181,zk2:2181`"
                        .to_owned(),
                );
            }
            if zk.session_timeout.is_zero() || zk.connect_timeout.is_zero() {
                return Err("registry.zookeeper session-timeout and connect-timeout must be longer than zero, e.g. `60s` and `15s`".to_owned());
            }
        }
        if !valid_namespace(self.registry.namespace()) {
            return Err(format!(
                "registry namespace `{}` must be letters, digits, `-` or `_`",
                self.registry.namespace()
            ));
        }
        if self.engine.initialize_timeout.is_zero() {
            return Err("engine.initialize-timeout must be longer than zero, e.g. `3m`".to_owned());
        }
        if self.engine.idle_timeout.is_zero() {
            return Err("engine.idle-timeout must be longer than zero, e.g. `30m`".to_owned());
        }
        if self.engine.bind_host.trim().is_empty() {
            return Err("engine.bind-host is empty; the default is 127.0.0.1".to_owned());
        }
        if self.engine.datafusion.config_file.is_some() && !self.engine.datafusion.tables.is_empty()
        {
            return Err("engine.datafusion sets both config-file and tables; declare the tables in the config file".to_owned());
        }
        Ok(())
    }

    /// Whether `user` may open sessions on this cluster.
    pub fn admits(&self, user: &str) -> bool {
        self.allowed_users.is_empty()
            || self
                .allowed_users
                .iter()
                .any(|allowed| allowed == "*" || allowed == user)
    }

    /// Whether `user` may impersonate others.
    pub fn is_super_user(&self, user: &str) -> bool {
        self.super_users.iter().any(|su| su == user)
    }
}

/// Adds the line of an unknown key when the parser could not say where it was (it loses
/// track of positions for some errors of the top-level map).
fn with_line(text: &str, message: String) -> String {
    if message.contains(" line ") {
        return message;
    }
    let key = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(key, _)| key);
    let line = key.and_then(|key| {
        text.lines().position(|line| {
            line.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
    });
    match line {
        Some(index) => format!("{message} at line {}", index + 1),
        None => message,
    }
}

pub(crate) fn valid_namespace(namespace: &str) -> bool {
    !namespace.is_empty()
        && namespace
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A loaded cluster: its name and settings.
#[derive(Debug, PartialEq)]
pub struct Cluster {
    pub name: String,
    /// The file it came from (as listed in the directory; may be a symlink).
    pub source: PathBuf,
    pub config: ClusterConfig,
}

/// A cluster file that could not be loaded.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadError {
    pub file: PathBuf,
    /// Includes the line and column when the YAML parser knows them.
    pub message: String,
    /// Whether an older good version of this cluster stays in force.
    pub kept_previous: bool,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cluster config {}: {}",
            self.file.display(),
            self.message
        )?;
        if self.kept_previous {
            write!(f, " (its last good version stays in force)")?;
        }
        Ok(())
    }
}

/// Why `get` has no cluster by that name for a session.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ClusterUnavailable {
    /// No file by that name: the client's to fix.
    #[error("cluster `{name}` is unknown; known clusters: {}; pick one with kyuubi.session.cluster", known.join(", "))]
    Unknown { name: String, known: Vec<String> },
    /// Its file is broken and no good version of it was ever loaded: the operator's to fix.
    /// The parser's message stays in the gateway's log (it may quote a value of the file).
    #[error("cluster `{name}` has no working configuration: its file {} is broken (the gateway's log says where)", file.display())]
    Broken { name: String, file: PathBuf },
}

/// What one reload changed, for logging and tests.
#[derive(Debug, Default, PartialEq)]
pub struct ReloadReport {
    pub added: Vec<String>,
    pub changed: Vec<String>,
    pub removed: Vec<String>,
    /// Files that failed this time (reported once per distinct content).
    pub errors: Vec<LoadError>,
}

impl ReloadReport {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.changed.is_empty()
            && self.removed.is_empty()
            && self.errors.is_empty()
    }
}

/// The clusters in force, read by every session and swapped whole on reload.
pub struct ClusterRegistry {
    dir: PathBuf,
    clusters: ArcSwap<BTreeMap<String, Arc<Cluster>>>,
    /// Files broken with no good version in force, by cluster name: a session naming one is
    /// told the file is broken, not that the cluster is unknown.
    broken: ArcSwap<BTreeMap<String, PathBuf>>,
    /// Text of each file as last read, so that a rescan that finds nothing new is silent;
    /// only the reloader touches it (std Mutex, never held across an await).
    seen: std::sync::Mutex<BTreeMap<String, String>>,
    /// Counts reloads that changed something, for whoever waits for a change.
    generation: tokio::sync::watch::Sender<u64>,
}

impl ClusterRegistry {
    /// Loads the directory once; a missing or unreadable directory is an error, broken files
    /// are reported in the returned report and skipped.
    pub fn load(dir: &Path) -> Result<(Self, ReloadReport), String> {
        let registry = Self {
            dir: dir.to_path_buf(),
            clusters: ArcSwap::from_pointee(BTreeMap::new()),
            broken: ArcSwap::from_pointee(BTreeMap::new()),
            seen: std::sync::Mutex::new(BTreeMap::new()),
            generation: tokio::sync::watch::Sender::new(0),
        };
        let report = registry.reload()?;
        Ok((registry, report))
    }

    /// The watched directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cluster named `name`, or why there is none: its file is broken, or it is unknown
    /// (the error lists the known ones).
    pub fn get(&self, name: &str) -> Result<Arc<Cluster>, ClusterUnavailable> {
        let clusters = self.clusters.load();
        if let Some(cluster) = clusters.get(name) {
            return Ok(cluster.clone());
        }
        Err(match self.broken.load().get(name) {
            Some(file) => ClusterUnavailable::Broken {
                name: name.to_owned(),
                file: file.clone(),
            },
            None => ClusterUnavailable::Unknown {
                name: name.to_owned(),
                known: clusters.keys().cloned().collect(),
            },
        })
    }

    /// Notified after each reload that added, changed, removed or failed to load a file.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.generation.subscribe()
    }

    /// Names of the clusters in force.
    pub fn names(&self) -> Vec<String> {
        self.clusters.load().keys().cloned().collect()
    }

    /// Re-reads the directory: new and changed files replace their clusters, deleted files
    /// remove them, broken files keep their last good version.
    pub fn reload(&self) -> Result<ReloadReport, String> {
        // One reload at a time (the watcher's, a rescan's, an admin's refresh), each starting
        // from what the one before stored: the clusters in force are read under the lock, so
        // that a reload that waited for it cannot store an older set and lose a cluster the
        // other added.
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let files = list_cluster_files(&self.dir)?;
        let current = self.clusters.load_full();
        let broken = self.broken.load_full();
        let mut next_broken = BTreeMap::new();
        let mut next = BTreeMap::new();
        let mut report = ReloadReport::default();
        let mut next_seen = BTreeMap::new();
        for (name, path) in files {
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) => {
                    // A file vanishing between listing and reading is a swap in progress;
                    // the next event or rescan sees the final state.
                    if let Some(previous) = current.get(&name) {
                        next.insert(name.clone(), previous.clone());
                    }
                    if let Some(file) = broken.get(&name) {
                        next_broken.insert(name.clone(), file.clone());
                    }
                    if let Some(previous_text) = seen.get(&name) {
                        next_seen.insert(name, previous_text.clone());
                    }
                    tracing::debug!(file = %path.display(), error = %e, "cluster config unreadable for now");
                    continue;
                }
            };
            let unchanged = seen.get(&name) == Some(&text);
            // An empty file where a cluster had settings is most likely a save in progress
            // (an editor or `cat >` truncates, then writes): its defaults (an embedded
            // registry, say) must not replace the cluster meanwhile.
            let emptied = text.trim().is_empty()
                && current.contains_key(&name)
                && seen
                    .get(&name)
                    .is_some_and(|before| !before.trim().is_empty());
            next_seen.insert(name.clone(), text.clone());
            if unchanged {
                if let Some(previous) = current.get(&name) {
                    next.insert(name.clone(), previous.clone());
                }
                if let Some(file) = broken.get(&name) {
                    next_broken.insert(name, file.clone());
                }
                continue;
            }
            let parsed = match emptied {
                true => Err(
                    "the file is empty (a save in progress?); write `{}` for a cluster \
                     of defaults"
                        .to_owned(),
                ),
                false => ClusterConfig::of_cluster(&name, &text),
            };
            match parsed {
                Ok(config) => {
                    let cluster = Arc::new(Cluster {
                        name: name.clone(),
                        source: path,
                        config,
                    });
                    match current.get(&name) {
                        Some(previous) if previous.config == cluster.config => {}
                        Some(_) => report.changed.push(name.clone()),
                        None => report.added.push(name.clone()),
                    }
                    next.insert(name, cluster);
                }
                Err(message) => {
                    let previous = current.get(&name).cloned();
                    if previous.is_none() {
                        next_broken.insert(name.clone(), path.clone());
                    }
                    report.errors.push(LoadError {
                        file: path,
                        message,
                        kept_previous: previous.is_some(),
                    });
                    if let Some(previous) = previous {
                        next.insert(name, previous);
                    }
                }
            }
        }
        report.removed = current
            .keys()
            .filter(|name| !next_seen.contains_key(*name))
            .cloned()
            .collect();
        *seen = next_seen;
        self.broken.store(Arc::new(next_broken));
        self.clusters.store(Arc::new(next));
        drop(seen);
        if !report.is_empty() {
            self.generation.send_modify(|generation| *generation += 1);
        }
        Ok(report)
    }
}

/// The `*.yaml` / `*.yml` files of the directory by cluster name. Hidden entries are skipped:
/// Kubernetes keeps the real files under `..data` and `..TIMESTAMP` and links them in.
fn list_cluster_files(dir: &Path) -> Result<BTreeMap<String, PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        format!(
            "cannot read the cluster-configs directory {}: {e}; create it or pass --cluster-configs",
            dir.display()
        )
    })?;
    let mut files = BTreeMap::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if file_name.starts_with('.') {
            continue;
        }
        let Some((stem, ext)) = file_name.rsplit_once('.') else {
            continue;
        };
        if ext != "yaml" && ext != "yml" || stem.is_empty() {
            continue;
        }
        if path.is_dir() {
            continue;
        }
        files.insert(stem.to_owned(), path);
    }
    Ok(files)
}

#[cfg(test)]
mod tests;
