//! The gateway's own settings: a YAML file (`--config`) with every setting also a flag.
//!
//! Precedence: flag, then file, then default. Cluster settings (registries, engines, users)
//! live in the cluster-configs directory instead, where they can change without a restart.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use serde::Deserialize;

use kumiho_thrift::sasl::Qop;

use crate::cluster::Secret;
use crate::duration;

/// Settings of one `kumiho` process.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct ServerConfig {
    /// Address the frontends listen on.
    pub bind_host: String,
    /// Thrift binary port (SASL PLAIN and NOSASL); 0 picks a free port. Kyuubi's default.
    pub binary_port: u16,
    /// Thrift HTTP port; 0 picks a free port.
    pub http_port: u16,
    /// Path of the Thrift HTTP endpoint, without the leading slash.
    pub http_path: String,
    /// Whether Prometheus metrics are served (Kyuubi's `kyuubi.metrics.enabled`).
    pub metrics_enabled: bool,
    /// Port of the Prometheus endpoint (`GET /metrics`), on the bind host; 0 picks a free
    /// port. Kyuubi's default.
    pub metrics_port: u16,
    /// Whether the REST API is served (batches; Kyuubi's `kyuubi.frontend.protocols` with
    /// `REST`).
    pub rest_enabled: bool,
    /// Port of the REST API (`/api/v1`), on the bind host; 0 picks a free port. Kyuubi's
    /// default.
    pub rest_port: u16,
    /// How long a REST batch is kept after it ends: its record, log and working directory
    /// (Kyuubi's `kyuubi.metadata.max.age`).
    #[serde(with = "duration::serde_text")]
    pub batch_max_age: Duration,
    /// How clients prove who they are (Kyuubi's `kyuubi.authentication`): `NONE` takes any
    /// password (and NOSASL connections), `FILE` checks it against `password-file`, `LDAP`
    /// by binding to `ldap-url` as the user, `KERBEROS` takes Kerberos tickets for
    /// `kerberos-principal` (SASL GSSAPI, HTTP SPNEGO) and no passwords; `KERBEROS,FILE`
    /// and `KERBEROS,LDAP` (in any order, or a YAML list) take tickets and checked
    /// passwords both, each client choosing.
    #[serde(deserialize_with = "authentication_names")]
    pub authentication: Authentication,
    /// Users and bcrypt hashes, one `user:hash` per line as `htpasswd -B` writes them; read
    /// again when it changes. Required by `authentication: FILE`.
    pub password_file: Option<PathBuf>,
    /// LDAP servers, `ldap://` or `ldaps://`, separated by spaces and tried in order
    /// (`kyuubi.authentication.ldap.url`). Required by `authentication: LDAP`.
    pub ldap_url: Option<String>,
    /// Users bind as `uid=USER,` this DN when no `ldap-user-dn-pattern` is set
    /// (`kyuubi.authentication.ldap.baseDN`).
    pub ldap_base_dn: Option<String>,
    /// DNs users bind as, `%s` for the user name, several separated by `:`
    /// (`kyuubi.authentication.ldap.userDNPattern`), e.g. `uid=%s,ou=people,dc=example,dc=com`.
    pub ldap_user_dn_pattern: Option<String>,
    /// Users bind as `USER@` this domain, as Active Directory takes them
    /// (`kyuubi.authentication.ldap.domain`).
    pub ldap_domain: Option<String>,
    /// Service account the gateway binds as to search for the user's entry, which the user
    /// then binds as (`kyuubi.authentication.ldap.binddn`).
    pub ldap_bind_dn: Option<String>,
    /// Password of `ldap-bind-dn` (`kyuubi.authentication.ldap.bindpw`); best from the
    /// environment, `KUMIHO_LDAP_BIND_PASSWORD`. Never logged.
    pub ldap_bind_password: Option<Secret>,
    /// Attribute holding user (and, without `ldap-group-dn-pattern`, group) names, default
    /// `uid` (`kyuubi.authentication.ldap.guidKey`).
    pub ldap_guid_key: Option<String>,
    /// Users admitted, a list or comma-separated (`kyuubi.authentication.ldap.userFilter`).
    #[serde(deserialize_with = "crate::ldap::names")]
    pub ldap_user_filter: Option<Vec<String>>,
    /// Groups whose members are admitted, a list or comma-separated
    /// (`kyuubi.authentication.ldap.groupFilter`).
    #[serde(deserialize_with = "crate::ldap::names")]
    pub ldap_group_filter: Option<Vec<String>>,
    /// DNs of groups, `%s` for the name, several separated by `:`
    /// (`kyuubi.authentication.ldap.groupDNPattern`).
    pub ldap_group_dn_pattern: Option<String>,
    /// Attribute of a group listing its members, default `member`
    /// (`kyuubi.authentication.ldap.groupMembershipKey`).
    pub ldap_group_membership_key: Option<String>,
    /// Attribute of a user listing its groups, e.g. `memberOf`
    /// (`kyuubi.authentication.ldap.userMembershipKey`).
    pub ldap_user_membership_key: Option<String>,
    /// Object class of groups, default `groupOfNames`
    /// (`kyuubi.authentication.ldap.groupClassKey`).
    pub ldap_group_class_key: Option<String>,
    /// Search filter that must find the user, `%s` for the user name, instead of the user and
    /// group filters (`kyuubi.authentication.ldap.customLDAPQuery`).
    pub ldap_custom_query: Option<String>,
    /// Whether the gateway upgrades each `ldap://` connection to TLS (StartTLS, RFC 4511
    /// 4.14) before it binds, so that passwords never cross the network in clear; any
    /// failure to upgrade fails the check instead of going on in clear.
    pub ldap_start_tls: bool,
    /// CA certificates, PEM, that the LDAP servers' certificates must chain to (for
    /// `ldaps://` and StartTLS), in place of the system's trust store: a directory whose
    /// certificate an internal CA issued (Kyuubi reads them from the JVM's trust store).
    pub ldap_ca_file: Option<PathBuf>,
    /// The gateway's service principal, `service/host@REALM`, `_HOST` standing for the host
    /// name (`advertised-host`, else `bind-host` unless it is a wildcard, else the machine's
    /// name), e.g. `kumiho/_HOST@EXAMPLE.COM` (Kyuubi's `kyuubi.kinit.principal`). Required
    /// by `authentication: KERBEROS`; clients ask tickets for it (JDBC `principal=`).
    pub kerberos_principal: Option<String>,
    /// Keytab holding the key of `kerberos-principal` (Kyuubi's `kyuubi.kinit.keytab`).
    /// Required by `authentication: KERBEROS`; read at start, which fails if it cannot be.
    pub kerberos_keytab: Option<PathBuf>,
    /// A second principal the HTTP frontends (Thrift HTTP, REST) take tickets for, besides
    /// `kerberos-principal`: `HTTP/_HOST@REALM`, which curl, browsers and most HTTP
    /// clients ask for (HiveServer2's `hive.server2.authentication.spnego.principal`,
    /// Kyuubi's `kyuubi.spnego.principal`). Its key must be in `kerberos-keytab` too.
    pub kerberos_spnego_principal: Option<String>,
    /// The protection SASL GSSAPI clients of the binary port must give their data
    /// (HiveServer2's `hive.server2.thrift.sasl.qop`): `auth` (none: TLS protects the data,
    /// if anything), `auth-int` (every frame signed; clients asking for `auth-conf` get it)
    /// or `auth-conf` (every frame encrypted). JDBC clients ask with `;saslQop=`.
    #[serde(deserialize_with = "crate::cluster::by_name")]
    pub kerberos_sasl_qop: Qop,
    /// Hadoop's `hadoop.security.auth_to_local` rules mapping client principals to session
    /// users (`RULE:[2:$1@$0](.*@OTHER\.REALM)s/@.*//`, `DEFAULT`), a YAML list or one
    /// string; the default realm is `kerberos-principal`'s. None: every principal is its
    /// first component (`etl/host@ANY.REALM` is `etl`).
    #[serde(deserialize_with = "rule_lines")]
    pub kerberos_auth_to_local: Option<String>,
    /// Under KERBEROS, how often the gateway renews its own ticket (`kinit` from
    /// `kerberos-keytab` into `WORK/kerberos/krb5cc_gateway`), which engines and batches get
    /// in `KRB5CCNAME` to act on a secure Hadoop cluster (Kyuubi's `kyuubi.kinit.interval`).
    #[serde(with = "duration::serde_text")]
    pub kinit_interval: Duration,
    /// Directory with one YAML file per cluster; relative paths start at the working directory.
    pub cluster_configs: PathBuf,
    /// Where engine registries, launch locks and engine logs live (embedded registry).
    pub work_dir: PathBuf,
    /// Cluster used when a session names none (`kyuubi.session.cluster`).
    pub default_cluster: String,
    /// Largest engine pool a session may ask for (`kyuubi.engine.pool.size` is capped here).
    pub max_pool_size: u32,
    /// How long an RPC waits for its session's engine launch before failing.
    #[serde(with = "duration::serde_text")]
    pub launch_wait: Duration,
    /// How many engine sessions the gateway opens at once (connect, SASL, OpenSession); the
    /// others wait their turn in order, so that a storm of new sessions leaves CPU for the
    /// clients' own calls and does not storm the engine. Default: 4 per CPU.
    pub engine_session_opens: usize,
    /// How often the cluster-configs directory is rescanned in case a change was missed.
    #[serde(with = "duration::serde_text")]
    pub cluster_rescan_interval: Duration,
    /// A session no client has used for this long is closed (Kyuubi's
    /// `kyuubi.session.idle.timeout`); HTTP sessions have no connection whose end closes them.
    #[serde(with = "duration::serde_text")]
    pub session_idle_timeout: Duration,
    /// An operation its client has not touched for this long is closed, here and on the
    /// engine (Kyuubi's `kyuubi.operation.idle.timeout`): a client that never closes its
    /// statements (some BI tools) would otherwise keep their results on the engine for as
    /// long as its session lives.
    #[serde(with = "duration::serde_text")]
    pub operation_idle_timeout: Duration,
    /// Longest time to let open connections finish on SIGTERM before cutting them off.
    #[serde(with = "duration::serde_text")]
    pub shutdown_grace: Duration,
    /// The `kumiho-engine` executable; by default the one next to `kumiho` itself.
    pub engine_binary: Option<PathBuf>,
    /// Largest Thrift message accepted from a client, in bytes.
    pub max_message_size: usize,
    /// Log filter, in `tracing_subscriber::EnvFilter` syntax (`info`, `kumiho_server=debug`).
    pub log_level: String,
    /// ZooKeeper ensemble (`host:port,...`) this gateway registers in for Hive JDBC's
    /// ZooKeeper discovery (Kyuubi's `kyuubi.ha.addresses`); none: no registration.
    pub ha_addresses: Option<String>,
    /// Parent node of the registrations: clients use `zooKeeperNamespace=NS` (Kyuubi's
    /// `kyuubi.ha.namespace`).
    pub ha_namespace: String,
    /// Session timeout of the registration's ZooKeeper session: how long after this gateway
    /// vanishes its registration stays visible.
    #[serde(with = "duration::serde_text")]
    pub ha_session_timeout: Duration,
    /// How long to wait for the HA ensemble to answer before giving up (at start, and per
    /// attempt when registering again).
    #[serde(with = "duration::serde_text")]
    pub ha_connect_timeout: Duration,
    /// Which frontend the registration advertises: `binary` (Hive JDBC's default) or `http`.
    #[serde(deserialize_with = "crate::cluster::by_name")]
    pub ha_transport_mode: HaTransportMode,
    /// Host clients are told to connect to (in the registration); by default the bind host,
    /// or this machine's host name when binding every address.
    pub advertised_host: Option<String>,
    /// Secret the HTTP auth cookie's key is derived from; gateways behind one name need the
    /// same one. Default: with `ha-addresses`, a secret kept in the HA ensemble
    /// (`/{ha-namespace}_secret`); alone, a random key per process. Never logged.
    pub cookie_secret: Option<Secret>,
    /// TLS certificate chain, PEM: the gateway's certificate first, then its intermediates.
    /// With `ssl-key-file` the binary, HTTP and REST ports take TLS only (HiveServer2's
    /// `hive.server2.use.SSL`; Kyuubi's `kyuubi.frontend.ssl.keystore.path`, which takes a Java
    /// keystore: README says how to convert one); the metrics port stays plaintext. Both files
    /// are read again when they change (certificate rotation without a restart).
    pub ssl_cert_file: Option<PathBuf>,
    /// Private key of `ssl-cert-file`, PEM, unencrypted (PKCS#8, RSA or EC): Kyuubi's keystore
    /// and key passwords have no counterpart, so protect the file (mode 0600). Never logged.
    pub ssl_key_file: Option<PathBuf>,
    /// The HTTP header a proxy in front of the Thrift HTTP and REST ports writes each client's
    /// address into, e.g. `X-Real-IP` or `X-Forwarded-For` (its last entry): Kyuubi's
    /// `kyuubi.frontend.proxy.http.client.ip.header`. Sessions are then listed, counted
    /// (`limits.max-sessions-per-ip`) and denied (`deny-ips`) by that address. Set it only
    /// when every HTTP client comes through such a proxy: a client reaching the gateway
    /// directly could write any address there. Default: none, the TCP peer is the client.
    pub client_ip_header: Option<String>,
}

/// How clients prove who they are: Kerberos tickets, passwords checked one way, or both
/// (Kyuubi's list `kyuubi.authentication=KERBEROS,LDAP`), each client choosing (SASL GSSAPI
/// or PLAIN; HTTP `Negotiate` or `Basic`). Every value is a working setting: without
/// Kerberos and without a password check it is NONE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Authentication {
    /// Kerberos tickets for `kerberos-principal` ([`crate::kerberos`]): SASL GSSAPI on the
    /// binary port, SPNEGO on HTTP; NOSASL connections are refused.
    pub kerberos: bool,
    /// How passwords (SASL PLAIN, HTTP Basic) are checked; none: with Kerberos no password
    /// is taken (KERBEROS), without it any password is (NONE, with NOSASL connections).
    pub passwords: Option<PasswordCheck>,
}

/// How a password is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PasswordCheck {
    /// Users and passwords from `password-file` ([`crate::password_file`]).
    File,
    /// A bind to the `ldap-url` directory as the user ([`crate::ldap`]).
    Ldap,
}

impl PasswordCheck {
    /// The name in settings.
    pub fn name(self) -> &'static str {
        match self {
            PasswordCheck::File => "FILE",
            PasswordCheck::Ldap => "LDAP",
        }
    }
}

impl Authentication {
    /// Any user with any password, and NOSASL connections (HiveServer2's NONE).
    pub const NONE: Self = Self::checked(None);
    /// Passwords checked against `password-file`.
    pub const FILE: Self = Self::checked(Some(PasswordCheck::File));
    /// Passwords checked by binding to `ldap-url` as the user.
    pub const LDAP: Self = Self::checked(Some(PasswordCheck::Ldap));
    /// Kerberos tickets only: PLAIN, Basic and NOSASL connections are refused.
    pub const KERBEROS: Self = Self {
        kerberos: true,
        passwords: None,
    };

    const fn checked(passwords: Option<PasswordCheck>) -> Self {
        Self {
            kerberos: false,
            passwords,
        }
    }

    /// Whether clients' passwords are checked (FILE, LDAP, alone or with KERBEROS).
    pub fn checks_passwords(self) -> bool {
        self.passwords.is_some()
    }

    /// Whether password clients (SASL PLAIN, HTTP Basic) are taken besides Kerberos ones
    /// (KERBEROS,FILE; KERBEROS,LDAP).
    pub fn passwords_with_kerberos(self) -> bool {
        self.kerberos && self.checks_passwords()
    }

    /// Whether NOSASL connections, which carry no credentials, are served (NONE only).
    pub fn accepts_nosasl(self) -> bool {
        self == Self::NONE
    }
}

/// The name in settings: `NONE`, `FILE`, `LDAP`, `KERBEROS`, or `KERBEROS,FILE` and
/// `KERBEROS,LDAP`.
impl std::fmt::Display for Authentication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.kerberos, self.passwords) {
            (false, None) => f.write_str("NONE"),
            (false, Some(check)) => f.write_str(check.name()),
            (true, None) => f.write_str("KERBEROS"),
            (true, Some(check)) => write!(f, "KERBEROS,{}", check.name()),
        }
    }
}

/// One name, or a comma-separated list in any order (`KERBEROS,LDAP`, `LDAP,KERBEROS`):
/// KERBEROS with at most one password check. A list that cannot mean what it says is
/// refused with why, where Kyuubi would quietly use its first password method.
impl std::str::FromStr for Authentication {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let mut authentication = Self::NONE;
        let mut none = false;
        for name in text.split(',').map(str::trim) {
            let check = match name.to_ascii_uppercase().as_str() {
                "NONE" if none => {
                    return Err(format!("authentication `{text}` names NONE twice; name it once"))
                }
                "NONE" => {
                    none = true;
                    None
                }
                "FILE" => Some(PasswordCheck::File),
                "LDAP" => Some(PasswordCheck::Ldap),
                "KERBEROS" if authentication.kerberos => {
                    return Err(format!("authentication `{text}` names KERBEROS twice; name it once"))
                }
                "KERBEROS" => {
                    authentication.kerberos = true;
                    None
                }
                "NOSASL" => return Err(format!(
                    "authentication `{text}`: NOSASL is not an authentication here; NONE serves NOSASL clients (and any password), and KERBEROS, FILE and LDAP refuse them, as they carry no credentials"
                )),
                _ => return Err(format!(
                    "authentication `{text}` is not supported; use NONE, FILE (with password-file), LDAP (with ldap-url) or KERBEROS (with kerberos-principal and kerberos-keytab), or KERBEROS with FILE or LDAP, e.g. KERBEROS,LDAP, for tickets and passwords both"
                )),
            };
            if let Some(check) = check {
                if let Some(first) = authentication.passwords {
                    return Err(format!(
                        "authentication `{text}` names two password checks, {} and {}; a password is checked one way: keep one (Kyuubi would use the first and ignore the other)",
                        first.name(),
                        check.name()
                    ));
                }
                authentication.passwords = Some(check);
            }
        }
        if none && authentication != Self::NONE {
            return Err(if authentication.kerberos {
                format!(
                    "authentication `{text}` pairs NONE, which takes any user with any password, with KERBEROS: anyone could connect as anyone without a ticket, which makes KERBEROS pointless; use KERBEROS alone, or KERBEROS,FILE or KERBEROS,LDAP to take checked passwords besides tickets"
                )
            } else {
                format!(
                    "authentication `{text}` pairs NONE, which takes any password, with a password check; use {} alone",
                    authentication
                )
            });
        }
        Ok(authentication)
    }
}

/// `authentication` in YAML: a name, a comma-separated list, or a YAML list of names.
fn authentication_names<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Authentication, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Names {
        One(String),
        List(Vec<String>),
    }
    let text = match Names::deserialize(deserializer)? {
        Names::One(text) => text,
        Names::List(names) => names.join(","),
    };
    text.parse().map_err(serde::de::Error::custom)
}

/// `kerberos-auth-to-local` in YAML: one string of rules, or a YAML list of them (joined by
/// newlines, as Hadoop writes them).
fn rule_lines<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Rules {
        One(String),
        List(Vec<String>),
    }
    Ok(Some(match Rules::deserialize(deserializer)? {
        Rules::One(text) => text,
        Rules::List(rules) => rules.join("\n"),
    }))
}

/// The frontend a ZooKeeper registration points clients at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HaTransportMode {
    #[default]
    Binary,
    Http,
}

impl std::str::FromStr for HaTransportMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.to_ascii_lowercase().as_str() {
            "binary" => Ok(HaTransportMode::Binary),
            "http" => Ok(HaTransportMode::Http),
            _ => Err(format!(
                "ha-transport-mode `{text}` is unknown; use `binary` or `http`"
            )),
        }
    }
}

impl std::fmt::Display for HaTransportMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HaTransportMode::Binary => "binary",
            HaTransportMode::Http => "http",
        })
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            bind_host: "0.0.0.0".to_owned(),
            binary_port: 10009,
            http_port: 10010,
            http_path: "cliservice".to_owned(),
            metrics_enabled: true,
            metrics_port: 10019,
            rest_enabled: true,
            rest_port: 10099,
            batch_max_age: Duration::from_secs(72 * 3600),
            authentication: Authentication::NONE,
            password_file: None,
            ldap_url: None,
            ldap_base_dn: None,
            ldap_user_dn_pattern: None,
            ldap_domain: None,
            ldap_bind_dn: None,
            ldap_bind_password: None,
            ldap_guid_key: None,
            ldap_user_filter: None,
            ldap_group_filter: None,
            ldap_group_dn_pattern: None,
            ldap_group_membership_key: None,
            ldap_user_membership_key: None,
            ldap_group_class_key: None,
            ldap_custom_query: None,
            ldap_start_tls: false,
            ldap_ca_file: None,
            kerberos_principal: None,
            kerberos_keytab: None,
            kerberos_spnego_principal: None,
            kerberos_sasl_qop: Qop::Auth,
            kerberos_auth_to_local: None,
            kinit_interval: Duration::from_secs(3600),
            cluster_configs: PathBuf::from("cluster-configs"),
            work_dir: PathBuf::from("work"),
            default_cluster: "default".to_owned(),
            max_pool_size: 9,
            launch_wait: Duration::from_secs(300),
            engine_session_opens: 4 * std::thread::available_parallelism().map_or(1, |n| n.get()),
            cluster_rescan_interval: Duration::from_secs(10),
            session_idle_timeout: Duration::from_secs(6 * 3600),
            operation_idle_timeout: Duration::from_secs(3 * 3600),
            shutdown_grace: Duration::from_secs(10),
            engine_binary: None,
            max_message_size: 100 * 1024 * 1024,
            log_level: "info".to_owned(),
            ha_addresses: None,
            ha_namespace: "kumiho".to_owned(),
            ha_session_timeout: Duration::from_secs(60),
            ha_connect_timeout: Duration::from_secs(15),
            ha_transport_mode: HaTransportMode::Binary,
            advertised_host: None,
            cookie_secret: None,
            ssl_cert_file: None,
            ssl_key_file: None,
            client_ip_header: None,
        }
    }
}

/// Command-line flags: `--config FILE`, and one flag per [`ServerConfig`] setting that
/// overrides the file.
#[derive(Debug, Default, Parser)]
#[command(name = "kumiho", version, about = "HiveServer2-compatible SQL gateway")]
pub struct Cli {
    /// YAML file with server settings (keys as the flags without `--`).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Address the frontends listen on [default: 0.0.0.0].
    #[arg(long)]
    pub bind_host: Option<String>,
    /// Thrift binary port (SASL PLAIN, NOSASL); 0 picks a free one [default: 10009].
    #[arg(long)]
    pub binary_port: Option<u16>,
    /// Thrift HTTP port; 0 picks a free one [default: 10010].
    #[arg(long)]
    pub http_port: Option<u16>,
    /// Path of the Thrift HTTP endpoint [default: cliservice].
    #[arg(long)]
    pub http_path: Option<String>,
    /// `false` serves no metrics [default: true].
    #[arg(long)]
    pub metrics_enabled: Option<bool>,
    /// Port of the Prometheus endpoint, `GET /metrics` [default: 10019].
    #[arg(long)]
    pub metrics_port: Option<u16>,
    /// `false` serves no REST API [default: true].
    #[arg(long)]
    pub rest_enabled: Option<bool>,
    /// Port of the REST API, `/api/v1` [default: 10099].
    #[arg(long)]
    pub rest_port: Option<u16>,
    /// `NONE` (any password), `FILE` (checked against `--password-file`), `LDAP` (a bind
    /// to `--ldap-url` as the user) or `KERBEROS` (tickets for `--kerberos-principal`);
    /// `KERBEROS,FILE` or `KERBEROS,LDAP` take tickets and passwords both [default: NONE].
    #[arg(long)]
    pub authentication: Option<Authentication>,
    /// Users and bcrypt hashes as `htpasswd -B` writes them (authentication FILE).
    #[arg(long)]
    pub password_file: Option<PathBuf>,
    /// LDAP servers, e.g. `ldaps://ldap.example.com:636`; several separated by spaces.
    #[arg(long)]
    pub ldap_url: Option<String>,
    /// Users bind as `uid=USER,` this DN when no `--ldap-user-dn-pattern` is set.
    #[arg(long)]
    pub ldap_base_dn: Option<String>,
    /// DNs users bind as, e.g. `uid=%s,ou=people,dc=example,dc=com`; several separated by `:`.
    #[arg(long)]
    pub ldap_user_dn_pattern: Option<String>,
    /// Users bind as `USER@` this domain (Active Directory).
    #[arg(long)]
    pub ldap_domain: Option<String>,
    /// Service account to search for users as, e.g. `cn=kumiho,ou=services,dc=example,dc=com`.
    #[arg(long)]
    pub ldap_bind_dn: Option<String>,
    /// Password of `--ldap-bind-dn` (use the environment: flags show in `ps`).
    #[arg(long, env = "KUMIHO_LDAP_BIND_PASSWORD", hide_env_values = true)]
    pub ldap_bind_password: Option<String>,
    /// Attribute naming users (`sAMAccountName` for Active Directory) [default: uid].
    #[arg(long)]
    pub ldap_guid_key: Option<String>,
    /// Users admitted, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub ldap_user_filter: Option<Vec<String>>,
    /// Groups whose members are admitted, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub ldap_group_filter: Option<Vec<String>>,
    /// DNs of groups, e.g. `cn=%s,ou=groups,dc=example,dc=com`; several separated by `:`.
    #[arg(long)]
    pub ldap_group_dn_pattern: Option<String>,
    /// Attribute of a group listing its members [default: member].
    #[arg(long)]
    pub ldap_group_membership_key: Option<String>,
    /// Attribute of a user listing its groups, e.g. `memberOf`.
    #[arg(long)]
    pub ldap_user_membership_key: Option<String>,
    /// Object class of groups [default: groupOfNames].
    #[arg(long)]
    pub ldap_group_class_key: Option<String>,
    /// A search filter that must find the user, `%s` for the user name.
    #[arg(long)]
    pub ldap_custom_query: Option<String>,
    /// Upgrade `ldap://` connections to TLS (StartTLS) before binding [default: false].
    #[arg(long)]
    pub ldap_start_tls: Option<bool>,
    /// PEM file of the CAs the LDAP servers' certificates must chain to, in place of the
    /// system's trust store.
    #[arg(long)]
    pub ldap_ca_file: Option<PathBuf>,
    /// Service principal for KERBEROS, e.g. `kumiho/_HOST@EXAMPLE.COM` (`_HOST`: this
    /// host's name) [default: none].
    #[arg(long)]
    pub kerberos_principal: Option<String>,
    /// Keytab with the key of `--kerberos-principal` [default: none].
    #[arg(long)]
    pub kerberos_keytab: Option<PathBuf>,
    /// A principal the HTTP ports also take, e.g. `HTTP/_HOST@EXAMPLE.COM`, its key in
    /// `--kerberos-keytab` [default: none, the HTTP ports take `--kerberos-principal` only].
    #[arg(long)]
    pub kerberos_spnego_principal: Option<String>,
    /// `auth`, `auth-int` or `auth-conf`: the protection SASL GSSAPI clients must give their
    /// data (HiveServer2's `hive.server2.thrift.sasl.qop`) [default: auth].
    #[arg(long)]
    pub kerberos_sasl_qop: Option<Qop>,
    /// Hadoop's auth_to_local rules, e.g. `RULE:[2:$1@$0](.*@OTHER\.REALM)s/@.*// DEFAULT`
    /// [default: none, the principal's first component].
    #[arg(long)]
    pub kerberos_auth_to_local: Option<String>,
    /// Under KERBEROS, how often the gateway's ticket for its engines is renewed (kinit)
    /// [default: 1h].
    #[arg(long, value_parser = duration::parse)]
    pub kinit_interval: Option<Duration>,
    /// How long an ended REST batch is kept, e.g. `72h` or `P3D` [default: 72h].
    #[arg(long, value_parser = duration::parse)]
    pub batch_max_age: Option<Duration>,
    /// Directory of cluster files, one YAML file per cluster [default: cluster-configs].
    #[arg(long)]
    pub cluster_configs: Option<PathBuf>,
    /// Embedded registry, launch locks, engine logs, batches [default: work].
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Cluster of sessions that name none [default: default].
    #[arg(long)]
    pub default_cluster: Option<String>,
    /// Largest engine pool a session may ask for [default: 9].
    #[arg(long)]
    pub max_pool_size: Option<u32>,
    /// How long a call waits for its engine's launch, e.g. `5m` or `PT5M` [default: 5m].
    #[arg(long, value_parser = duration::parse)]
    pub launch_wait: Option<Duration>,
    /// Engine sessions opened at once; others wait in order [default: 4 per CPU].
    #[arg(long)]
    pub engine_session_opens: Option<usize>,
    /// How often cluster files are rescanned in case a change was missed [default: 10s].
    #[arg(long, value_parser = duration::parse)]
    pub cluster_rescan_interval: Option<Duration>,
    /// Close sessions unused for this long [default: 6h].
    #[arg(long, value_parser = duration::parse)]
    pub session_idle_timeout: Option<Duration>,
    /// Close operations untouched for this long [default: 3h].
    #[arg(long, value_parser = duration::parse)]
    pub operation_idle_timeout: Option<Duration>,
    /// Time open connections get to finish on SIGTERM [default: 10s].
    #[arg(long, value_parser = duration::parse)]
    pub shutdown_grace: Option<Duration>,
    /// The `kumiho-engine` executable [default: the one next to `kumiho`].
    #[arg(long)]
    pub engine_binary: Option<PathBuf>,
    /// Largest Thrift message accepted from a client, in bytes [default: 104857600].
    #[arg(long)]
    pub max_message_size: Option<usize>,
    /// Log filter, e.g. `info` or `kumiho_server=debug` [default: info].
    #[arg(long)]
    pub log_level: Option<String>,
    /// ZooKeeper ensemble to register in for Hive JDBC's discovery, e.g. `zk1:2181,zk2:2181`.
    #[arg(long, env = "KUMIHO_HA_ADDRESSES")]
    pub ha_addresses: Option<String>,
    /// Namespace of the registrations (`zooKeeperNamespace=` in JDBC URLs) [default: kumiho].
    #[arg(long, env = "KUMIHO_HA_NAMESPACE")]
    pub ha_namespace: Option<String>,
    /// How long the registration outlives a vanished gateway [default: 60s].
    #[arg(long, value_parser = duration::parse)]
    pub ha_session_timeout: Option<Duration>,
    /// How long to wait for the HA ensemble to answer [default: 15s].
    #[arg(long, value_parser = duration::parse)]
    pub ha_connect_timeout: Option<Duration>,
    /// `binary` or `http`: the frontend the registration advertises [default: binary].
    #[arg(long)]
    pub ha_transport_mode: Option<HaTransportMode>,
    /// Host name or address written in the registration for clients to connect to.
    #[arg(long, env = "KUMIHO_ADVERTISED_HOST")]
    pub advertised_host: Option<String>,
    /// Shared secret for the HTTP auth cookie (use the environment: flags show in `ps`).
    #[arg(long, env = "KUMIHO_COOKIE_SECRET", hide_env_values = true)]
    pub cookie_secret: Option<String>,
    /// TLS certificate chain (PEM) for the binary, HTTP and REST ports [default: none, plaintext].
    #[arg(long)]
    pub ssl_cert_file: Option<PathBuf>,
    /// Private key (PEM, unencrypted) of `--ssl-cert-file` [default: none, plaintext].
    #[arg(long)]
    pub ssl_key_file: Option<PathBuf>,
    /// HTTP header a proxy in front writes client addresses into, e.g. `X-Real-IP`
    /// [default: none, the TCP peer is the client].
    #[arg(long)]
    pub client_ip_header: Option<String>,
}

impl Cli {
    /// Reads the file named by `--config` (if any), applies the flags and validates.
    pub fn into_config(self) -> Result<ServerConfig, String> {
        let mut config = match &self.config {
            Some(path) => ServerConfig::from_file(path)?,
            None => ServerConfig::default(),
        };
        macro_rules! apply {
            ($($field:ident),*) => { $( if let Some(value) = self.$field { config.$field = value; } )* };
        }
        apply!(
            bind_host,
            binary_port,
            http_port,
            http_path,
            metrics_enabled,
            metrics_port,
            rest_enabled,
            rest_port,
            batch_max_age,
            authentication,
            ldap_start_tls,
            cluster_configs,
            work_dir,
            default_cluster,
            max_pool_size,
            launch_wait,
            engine_session_opens,
            cluster_rescan_interval,
            session_idle_timeout,
            operation_idle_timeout,
            shutdown_grace,
            max_message_size,
            log_level,
            ha_namespace,
            ha_session_timeout,
            ha_connect_timeout,
            ha_transport_mode,
            kerberos_sasl_qop,
            kinit_interval
        );
        if self.engine_binary.is_some() {
            config.engine_binary = self.engine_binary;
        }
        if self.password_file.is_some() {
            config.password_file = self.password_file;
        }
        if self.ldap_ca_file.is_some() {
            config.ldap_ca_file = self.ldap_ca_file;
        }
        if self.kerberos_principal.is_some() {
            config.kerberos_principal = self.kerberos_principal;
        }
        if self.kerberos_keytab.is_some() {
            config.kerberos_keytab = self.kerberos_keytab;
        }
        if self.kerberos_spnego_principal.is_some() {
            config.kerberos_spnego_principal = self.kerberos_spnego_principal;
        }
        if self.kerberos_auth_to_local.is_some() {
            config.kerberos_auth_to_local = self.kerberos_auth_to_local;
        }
        for (flag, setting) in [
            (self.ldap_url, &mut config.ldap_url),
            (self.ldap_base_dn, &mut config.ldap_base_dn),
            (self.ldap_user_dn_pattern, &mut config.ldap_user_dn_pattern),
            (self.ldap_domain, &mut config.ldap_domain),
            (self.ldap_bind_dn, &mut config.ldap_bind_dn),
            (self.ldap_guid_key, &mut config.ldap_guid_key),
            (
                self.ldap_group_dn_pattern,
                &mut config.ldap_group_dn_pattern,
            ),
            (
                self.ldap_group_membership_key,
                &mut config.ldap_group_membership_key,
            ),
            (
                self.ldap_user_membership_key,
                &mut config.ldap_user_membership_key,
            ),
            (self.ldap_group_class_key, &mut config.ldap_group_class_key),
            (self.ldap_custom_query, &mut config.ldap_custom_query),
        ] {
            if flag.is_some() {
                *setting = flag;
            }
        }
        if let Some(password) = self.ldap_bind_password {
            config.ldap_bind_password = Some(Secret(password));
        }
        for (flag, setting) in [
            (self.ldap_user_filter, &mut config.ldap_user_filter),
            (self.ldap_group_filter, &mut config.ldap_group_filter),
        ] {
            if flag.is_some() {
                *setting = flag;
            }
        }
        if self.ha_addresses.is_some() {
            config.ha_addresses = self.ha_addresses;
        }
        if self.advertised_host.is_some() {
            config.advertised_host = self.advertised_host;
        }
        if let Some(secret) = self.cookie_secret {
            config.cookie_secret = Some(Secret(secret));
        }
        if self.ssl_cert_file.is_some() {
            config.ssl_cert_file = self.ssl_cert_file;
        }
        if self.ssl_key_file.is_some() {
            config.ssl_key_file = self.ssl_key_file;
        }
        if self.client_ip_header.is_some() {
            config.client_ip_header = self.client_ip_header;
        }
        config.validate()?;
        Ok(config)
    }
}

impl ServerConfig {
    /// `client-ip-header` as a header name (checked by [`ServerConfig::validate`]).
    pub fn client_ip_header(&self) -> Option<hyper::header::HeaderName> {
        let header = self.client_ip_header.as_deref()?;
        hyper::header::HeaderName::from_bytes(header.trim().as_bytes()).ok()
    }

    /// Each authentication has its own settings, and takes none of the others'.
    fn validate_authentication(&self) -> Result<(), String> {
        let ldap_keys = [
            ("ldap-url", &self.ldap_url),
            ("ldap-base-dn", &self.ldap_base_dn),
            ("ldap-user-dn-pattern", &self.ldap_user_dn_pattern),
            ("ldap-domain", &self.ldap_domain),
            ("ldap-bind-dn", &self.ldap_bind_dn),
            ("ldap-guid-key", &self.ldap_guid_key),
            ("ldap-group-dn-pattern", &self.ldap_group_dn_pattern),
            ("ldap-group-membership-key", &self.ldap_group_membership_key),
            ("ldap-user-membership-key", &self.ldap_user_membership_key),
            ("ldap-group-class-key", &self.ldap_group_class_key),
            ("ldap-custom-query", &self.ldap_custom_query),
        ];
        let ldap_key = ldap_keys
            .iter()
            .find(|(_, value)| value.is_some())
            .map(|(key, _)| *key)
            .or_else(|| {
                [
                    ("ldap-bind-password", self.ldap_bind_password.is_some()),
                    ("ldap-user-filter", self.ldap_user_filter.is_some()),
                    ("ldap-group-filter", self.ldap_group_filter.is_some()),
                    ("ldap-start-tls", self.ldap_start_tls),
                    ("ldap-ca-file", self.ldap_ca_file.is_some()),
                ]
                .into_iter()
                .find_map(|(key, set)| set.then_some(key))
            });
        let kerberos_key = [
            ("kerberos-principal", self.kerberos_principal.is_some()),
            ("kerberos-keytab", self.kerberos_keytab.is_some()),
            (
                "kerberos-spnego-principal",
                self.kerberos_spnego_principal.is_some(),
            ),
            ("kerberos-sasl-qop", self.kerberos_sasl_qop != Qop::Auth),
            (
                "kerberos-auth-to-local",
                self.kerberos_auth_to_local.is_some(),
            ),
        ]
        .into_iter()
        .find_map(|(key, set)| set.then_some(key));
        let authentication = self.authentication;
        if authentication.kerberos {
            self.validate_kerberos()?;
        } else if let Some(key) = kerberos_key {
            let with_passwords = match authentication.passwords {
                Some(check) => format!(" (KERBEROS,{} to take passwords too)", check.name()),
                None => String::new(),
            };
            return Err(format!(
                "{key} is set but authentication is {authentication}; set authentication to KERBEROS{with_passwords}, or remove the kerberos-* settings"
            ));
        }
        match authentication.passwords {
            Some(PasswordCheck::File) if self.password_file.is_none() => Err(format!(
                "authentication {authentication} needs password-file: a file of `user:bcrypt-hash` lines (htpasswd -B)"
            )),
            Some(PasswordCheck::Ldap) if self.password_file.is_some() => Err(format!(
                "password-file is set but authentication is {authentication}, where the directory checks passwords; remove password-file, or use FILE in place of LDAP"
            )),
            Some(PasswordCheck::Ldap) => crate::ldap::LdapSettings::from_config(self).map(drop),
            None if authentication.kerberos => {
                match ldap_key.or(self.password_file.as_ref().map(|_| "password-file")) {
                    Some(key) => Err(format!(
                        "{key} is set but authentication is KERBEROS, which takes no passwords; remove it, or set authentication to KERBEROS,FILE or KERBEROS,LDAP to take passwords besides tickets"
                    )),
                    None => Ok(()),
                }
            }
            None if self.password_file.is_some() => Err(
                "password-file is set but authentication is NONE, which takes any password; set authentication to FILE"
                    .to_owned(),
            ),
            _ => match ldap_key {
                Some(key) => Err(format!(
                    "{key} is set but authentication is {authentication}; set authentication to {}, or remove the ldap-* settings",
                    Authentication {
                        passwords: Some(PasswordCheck::Ldap),
                        ..authentication
                    }
                )),
                None => Ok(()),
            },
        }
    }

    /// KERBEROS needs a principal of the form clients take and a keytab (read at start).
    fn validate_kerberos(&self) -> Result<(), String> {
        let Some(principal) = &self.kerberos_principal else {
            return Err(format!(
                "authentication {} needs kerberos-principal, the gateway's service principal, e.g. kumiho/_HOST@EXAMPLE.COM",
                self.authentication
            ));
        };
        crate::kerberos::check_principal_form("kerberos-principal", principal)?;
        if let Some(spnego) = &self.kerberos_spnego_principal {
            crate::kerberos::check_principal_form("kerberos-spnego-principal", spnego)?;
        }
        if self.kerberos_keytab.is_none() {
            return Err(format!(
                "authentication {} needs kerberos-keytab, a keytab holding the key of {principal}",
                self.authentication
            ));
        }
        if let Some(settings) = self.kerberos() {
            settings.auth_to_local()?;
        }
        Ok(())
    }

    /// The service principal with `_HOST` replaced, and the keytab, under KERBEROS.
    pub fn kerberos(&self) -> Option<crate::kerberos::KerberosSettings> {
        if !self.authentication.kerberos {
            return None;
        }
        let host =
            crate::discovery::advertised_host(self.advertised_host.as_deref(), &self.bind_host);
        Some(crate::kerberos::KerberosSettings {
            principal: crate::kerberos::service_principal(
                self.kerberos_principal.as_deref()?,
                &host,
            ),
            spnego_principal: self
                .kerberos_spnego_principal
                .as_deref()
                .map(|spnego| crate::kerberos::service_principal(spnego, &host)),
            keytab: self.kerberos_keytab.clone()?,
            sasl_qop: self.kerberos_sasl_qop,
            auth_to_local: self.kerberos_auth_to_local.clone(),
        })
    }

    /// Parses a YAML settings file; errors name the file and line.
    pub fn from_file(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read server config {}: {e}", path.display()))?;
        Self::from_yaml(&text).map_err(|e| format!("server config {}: {e}", path.display()))
    }

    /// Parses YAML text; an empty document gives the defaults.
    pub fn from_yaml(text: &str) -> Result<Self, String> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        serde_yaml_ng::from_str(text).map_err(|e| e.to_string())
    }

    /// Checks settings that parse but cannot work, with what to change.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(header) = &self.client_ip_header {
            if hyper::header::HeaderName::from_bytes(header.trim().as_bytes()).is_err() {
                return Err(format!(
                    "client-ip-header `{header}` is no HTTP header name; write e.g. X-Real-IP"
                ));
            }
        }
        if self.binary_port != 0 && self.binary_port == self.http_port {
            return Err(format!(
                "binary-port and http-port are both {}; give them different ports",
                self.binary_port
            ));
        }
        if self.metrics_enabled
            && self.metrics_port != 0
            && (self.metrics_port == self.binary_port || self.metrics_port == self.http_port)
        {
            return Err(format!(
                "metrics-port {} is also the binary-port or http-port; give it a port of its own, or set metrics-enabled to false",
                self.metrics_port
            ));
        }
        if self.rest_enabled
            && self.rest_port != 0
            && [self.binary_port, self.http_port]
                .into_iter()
                .chain(self.metrics_enabled.then_some(self.metrics_port))
                .any(|port| port == self.rest_port)
        {
            return Err(format!(
                "rest-port {} is also the binary-port, http-port or metrics-port; give it a port of its own, or set rest-enabled to false",
                self.rest_port
            ));
        }
        if self.http_path.trim_matches('/').is_empty() {
            return Err("http-path is empty; the default is `cliservice`".to_owned());
        }
        if self.default_cluster.is_empty() {
            return Err("default-cluster is empty; name a file stem in cluster-configs".to_owned());
        }
        if self.max_pool_size == 0 {
            return Err("max-pool-size must be at least 1".to_owned());
        }
        if self.engine_session_opens == 0 {
            return Err("engine-session-opens must be at least 1".to_owned());
        }
        if self.launch_wait.is_zero() {
            return Err("launch-wait must be longer than zero, e.g. `5m`".to_owned());
        }
        if self.session_idle_timeout.is_zero() {
            return Err("session-idle-timeout must be longer than zero, e.g. `6h`".to_owned());
        }
        if self.operation_idle_timeout.is_zero() {
            return Err("operation-idle-timeout must be longer than zero, e.g. `3h`".to_owned());
        }
        self.validate_authentication()?;
        if self.batch_max_age.is_zero() {
            return Err("batch-max-age must be longer than zero, e.g. `72h`".to_owned());
        }
        if self.cluster_rescan_interval.is_zero() {
            return Err("cluster-rescan-interval must be longer than zero, e.g. `10s`".to_owned());
        }
        if self.kinit_interval.is_zero() {
            return Err("kinit-interval must be longer than zero, e.g. `1h`".to_owned());
        }
        if self.max_message_size < 1024 {
            return Err(format!(
                "max-message-size {} is too small for any HiveServer2 message; use at least 1024",
                self.max_message_size
            ));
        }
        if let Some(addresses) = &self.ha_addresses {
            if addresses.trim().is_empty() {
                return Err("ha-addresses is empty; write e.g. `zk1:2181,zk2:2181`, or leave it out to skip ZooKeeper registration".to_owned());
            }
        }
        if !crate::cluster::valid_namespace(&self.ha_namespace) {
            return Err(format!(
                "ha-namespace `{}` must be letters, digits, `-` or `_`",
                self.ha_namespace
            ));
        }
        if self.ha_session_timeout.is_zero() || self.ha_connect_timeout.is_zero() {
            return Err(
                "ha-session-timeout and ha-connect-timeout must be longer than zero, e.g. `60s` and `15s`"
                    .to_owned(),
            );
        }
        if self
            .advertised_host
            .as_deref()
            .is_some_and(|host| host.trim().is_empty())
        {
            return Err(
                "advertised-host is empty; name the host clients should connect to".to_owned(),
            );
        }
        if self
            .cookie_secret
            .as_ref()
            .is_some_and(|secret| secret.0.len() < 16)
        {
            return Err(
                "cookie-secret is shorter than 16 characters; use a long random secret".to_owned(),
            );
        }
        match (&self.ssl_cert_file, &self.ssl_key_file) {
            (Some(_), None) => return Err(
                "ssl-cert-file is set without ssl-key-file; TLS needs both (PEM), plaintext neither"
                    .to_owned(),
            ),
            (None, Some(_)) => return Err(
                "ssl-key-file is set without ssl-cert-file; TLS needs both (PEM), plaintext neither"
                    .to_owned(),
            ),
            _ => {}
        }
        tracing_subscriber::EnvFilter::try_new(&self.log_level)
            .map_err(|e| format!("log-level `{}` is not a valid filter: {e}", self.log_level))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_named_in_the_flags_help_are_the_defaults() {
        use clap::CommandFactory;
        // Defaults the help states in words, or that the LDAP client applies when a key is
        // unset (the setting itself stays empty).
        let stated_in_words = [
            "engine-session-opens",
            "engine-binary",
            "ssl-cert-file",
            "ssl-key-file",
            "kerberos-principal",
            "kerberos-keytab",
            "kerberos-spnego-principal",
            "kerberos-auth-to-local",
            "client-ip-header",
        ];
        let applied_by_ldap = [
            "ldap-guid-key",
            "ldap-group-membership-key",
            "ldap-group-class-key",
        ];
        let mut checked = 0;
        for arg in Cli::command().get_arguments() {
            let long = arg.get_long().expect("every setting is a long flag");
            let help = arg
                .get_help()
                .map(|help| help.to_string())
                .unwrap_or_default();
            let Some((_, rest)) = help.split_once("[default: ") else {
                continue;
            };
            if stated_in_words.contains(&long) || applied_by_ldap.contains(&long) {
                continue;
            }
            let value = rest.split_once(']').expect("closed").0;
            let config = Cli::try_parse_from(["kumiho", &format!("--{long}"), value])
                .unwrap_or_else(|e| panic!("--{long} {value}: {e}"))
                .into_config();
            assert_eq!(
                config,
                Ok(ServerConfig::default()),
                "--{long}'s stated default {value}"
            );
            checked += 1;
        }
        assert!(checked >= 20, "only {checked} flags state a default");
    }

    #[test]
    fn a_client_ip_header_must_be_a_header_name() {
        let parse = |value: &str| {
            Cli::try_parse_from(["kumiho", "--client-ip-header", value])
                .unwrap()
                .into_config()
        };
        let config = parse("X-Real-IP").unwrap();
        assert_eq!(config.client_ip_header().unwrap().as_str(), "x-real-ip");
        let refused = parse("Real IP").unwrap_err();
        assert!(refused.contains("is no HTTP header name"), "{refused}");
    }

    #[test]
    fn defaults_are_kyuubis_ports_and_validate() {
        let config = ServerConfig::default();
        assert_eq!((config.binary_port, config.http_port), (10009, 10010));
        assert_eq!((config.metrics_enabled, config.metrics_port), (true, 10019));
        assert_eq!(config.http_path, "cliservice");
        assert_eq!(config.cluster_configs, PathBuf::from("cluster-configs"));
        assert_eq!(config.validate(), Ok(()));
        assert_eq!(ServerConfig::from_yaml("").unwrap(), config);
    }

    #[test]
    fn file_values_apply_and_flags_win() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kumiho.yaml");
        std::fs::write(
            &path,
            "binary-port: 20009\nhttp-port: 20010\nlaunch-wait: PT2M\n",
        )
        .unwrap();
        let cli = Cli::try_parse_from([
            "kumiho",
            "--config",
            path.to_str().unwrap(),
            "--http-port",
            "30010",
            "--work-dir",
            "/tmp/w",
        ])
        .unwrap();
        let config = cli.into_config().unwrap();
        assert_eq!(config.binary_port, 20009);
        assert_eq!(config.http_port, 30010);
        assert_eq!(config.launch_wait, Duration::from_secs(120));
        assert_eq!(config.work_dir, PathBuf::from("/tmp/w"));
        assert!(config.engine_session_opens >= 4, "4 per CPU by default");
        let config = ServerConfig::from_yaml("engine-session-opens: 2\n").unwrap();
        assert_eq!(config.engine_session_opens, 2);
    }

    #[test]
    fn ha_settings_come_from_file_and_flags() {
        let config = ServerConfig::from_yaml(
            "ha-addresses: zk1:2181,zk2:2181\nha-namespace: gw\nha-transport-mode: HTTP\ncookie-secret: 0123456789abcdef0123\n",
        )
        .unwrap();
        assert_eq!(config.ha_addresses.as_deref(), Some("zk1:2181,zk2:2181"));
        assert_eq!(config.ha_namespace, "gw");
        assert_eq!(config.ha_transport_mode, HaTransportMode::Http);
        assert_eq!(config.validate(), Ok(()));
        assert!(!format!("{config:?}").contains("0123456789abcdef"));
        let cli = Cli::try_parse_from([
            "kumiho",
            "--ha-addresses",
            "127.0.0.1:2181",
            "--advertised-host",
            "gw1.example.com",
        ])
        .unwrap();
        let config = cli.into_config().unwrap();
        assert_eq!(config.ha_namespace, "kumiho");
        assert_eq!(config.advertised_host.as_deref(), Some("gw1.example.com"));
        let bad = ServerConfig {
            ha_namespace: "a/b".to_owned(),
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().contains("ha-namespace"));
    }

    #[test]
    fn unknown_keys_are_reported_with_their_line() {
        let err = ServerConfig::from_yaml("binary-port: 1\nbinary_prot: 2\n").unwrap_err();
        assert!(err.contains("line 2"), "{err}");
        assert!(err.contains("binary_prot"), "{err}");
    }

    #[test]
    fn validate_explains_what_to_change() {
        let config = ServerConfig {
            binary_port: 7,
            http_port: 7,
            ..Default::default()
        };
        assert!(config.validate().unwrap_err().contains("different ports"));
        let config = ServerConfig {
            log_level: "[[".to_owned(),
            ..Default::default()
        };
        assert!(config.validate().unwrap_err().contains("log-level"));
        let config = ServerConfig {
            max_pool_size: 0,
            ..Default::default()
        };
        assert!(config.validate().is_err());
        let config = ServerConfig {
            engine_session_opens: 0,
            ..Default::default()
        };
        assert!(config
            .validate()
            .unwrap_err()
            .contains("engine-session-opens"));
        let config = ServerConfig {
            metrics_port: 10009,
            ..Default::default()
        };
        assert!(config.validate().unwrap_err().contains("metrics-port"));
        let config = ServerConfig {
            metrics_port: 10009,
            metrics_enabled: false,
            ..Default::default()
        };
        assert_eq!(config.validate(), Ok(()));
    }

    #[test]
    fn metrics_can_be_moved_or_turned_off() {
        let cli = Cli::try_parse_from([
            "kumiho",
            "--metrics-port",
            "0",
            "--metrics-enabled",
            "false",
        ])
        .unwrap();
        let config = cli.into_config().unwrap();
        assert_eq!((config.metrics_enabled, config.metrics_port), (false, 0));
        let config = ServerConfig::from_yaml("metrics-port: 20019\n").unwrap();
        assert_eq!(config.metrics_port, 20019);
    }

    #[test]
    fn rest_is_on_kyuubis_port_and_can_be_moved_or_turned_off() {
        let config = ServerConfig::default();
        assert_eq!((config.rest_enabled, config.rest_port), (true, 10099));
        let cli =
            Cli::try_parse_from(["kumiho", "--rest-port", "0", "--rest-enabled", "false"]).unwrap();
        let config = cli.into_config().unwrap();
        assert_eq!((config.rest_enabled, config.rest_port), (false, 0));
        let clash = ServerConfig {
            rest_port: 10019,
            ..Default::default()
        };
        assert!(clash.validate().unwrap_err().contains("rest-port"));
        let off = ServerConfig {
            rest_port: 10019,
            rest_enabled: false,
            ..Default::default()
        };
        assert_eq!(off.validate(), Ok(()));
    }

    #[test]
    fn authentication_file_needs_a_password_file_and_a_password_file_needs_it() {
        assert_eq!(ServerConfig::default().authentication, Authentication::NONE);
        let cli = Cli::try_parse_from([
            "kumiho",
            "--authentication",
            "file",
            "--password-file",
            "/etc/kumiho/passwords",
        ])
        .unwrap();
        let config = cli.into_config().unwrap();
        assert_eq!(config.authentication, Authentication::FILE);
        let alone = ServerConfig::from_yaml("authentication: FILE\n").unwrap();
        assert!(alone
            .validate()
            .unwrap_err()
            .contains("needs password-file"));
        let ignored = ServerConfig::from_yaml("password-file: /p\n").unwrap();
        assert!(ignored
            .validate()
            .unwrap_err()
            .contains("set authentication to FILE"));
        let unknown = ServerConfig::from_yaml("authentication: CUSTOM\n").unwrap_err();
        assert!(unknown.contains("use NONE, FILE"), "{unknown}");
        assert_eq!(Authentication::FILE.to_string(), "FILE");
        assert_eq!(Authentication::NONE.to_string(), "NONE");
    }

    #[test]
    fn kerberos_takes_a_sasl_qop_and_auth_to_local_rules_as_the_readme_writes_them() {
        let yaml = "authentication: KERBEROS\nkerberos-principal: kumiho/gw@EXAMPLE.COM\n\
                    kerberos-keytab: /k\nkerberos-sasl-qop: auth-conf\n\
                    kerberos-auth-to-local:\n\
                    \x20 - RULE:[2:$1@$0](etl@OTHER\\.REALM)s/@.*//        # etl/host@OTHER.REALM -> etl\n\
                    \x20 - RULE:[2:$1_$2@$0](svc_.*@EXAMPLE\\.COM)s/@.*//  # svc/batch1@EXAMPLE.COM -> svc_batch1\n\
                    \x20 - DEFAULT\n";
        let config = ServerConfig::from_yaml(yaml).unwrap();
        assert_eq!(config.validate(), Ok(()));
        let settings = config.kerberos().unwrap();
        assert_eq!(settings.sasl_qop, Qop::AuthConf);
        let rules = settings.auth_to_local().unwrap().unwrap();
        for (principal, user) in [
            ("etl/host@OTHER.REALM", "etl"),
            ("svc/batch1@EXAMPLE.COM", "svc_batch1"),
            ("alice/admin@EXAMPLE.COM", "alice"),
        ] {
            assert_eq!(rules.map(principal).as_deref(), Ok(user), "{principal}");
        }
        // The flags, and one string of rules.
        let flags = Cli::try_parse_from([
            "kumiho",
            "--authentication",
            "KERBEROS",
            "--kerberos-principal",
            "kumiho/gw@EXAMPLE.COM",
            "--kerberos-keytab",
            "/k",
            "--kerberos-sasl-qop",
            "auth-int",
            "--kerberos-auth-to-local",
            "RULE:[1:$1]/L DEFAULT",
        ])
        .unwrap()
        .into_config()
        .unwrap();
        assert_eq!(flags.kerberos_sasl_qop, Qop::AuthInt);
        assert_eq!(
            flags
                .kerberos()
                .unwrap()
                .auth_to_local()
                .unwrap()
                .unwrap()
                .map("Bob@X"),
            Ok("bob".to_owned())
        );

        let error = |yaml: &str| {
            ServerConfig::from_yaml(yaml)
                .and_then(|config| config.validate())
                .unwrap_err()
        };
        let kerberos =
            "authentication: KERBEROS\nkerberos-principal: kumiho/gw@R\nkerberos-keytab: /k\n";
        let bad_rule = error(&format!("{kerberos}kerberos-auth-to-local: RULE:[2:$3]\n"));
        assert!(
            bad_rule.starts_with("kerberos-auth-to-local: auth_to_local rule `RULE:[2:$3]`"),
            "{bad_rule}"
        );
        let bad_qop = error(&format!("{kerberos}kerberos-sasl-qop: privacy\n"));
        assert!(
            bad_qop.contains("SASL QOP `privacy` is unknown"),
            "{bad_qop}"
        );
        for key in [
            "kerberos-sasl-qop: auth-conf",
            "kerberos-auth-to-local: DEFAULT",
        ] {
            let without_kerberos = error(&format!("{key}\n"));
            let name = key.split(':').next().unwrap();
            assert!(
                without_kerberos.starts_with(&format!("{name} is set but authentication is NONE")),
                "{without_kerberos}"
            );
        }
    }

    #[test]
    fn authentication_kerberos_needs_a_principal_and_a_keytab_and_no_passwords() {
        let config = Cli::try_parse_from([
            "kumiho",
            "--authentication",
            "kerberos",
            "--kerberos-principal",
            "kumiho/_HOST@EXAMPLE.COM",
            "--kerberos-keytab",
            "/etc/kumiho/kumiho.keytab",
            "--advertised-host",
            "GW1.example.com",
        ])
        .unwrap()
        .into_config()
        .unwrap();
        assert_eq!(config.authentication, Authentication::KERBEROS);
        let settings = config.kerberos().unwrap();
        assert_eq!(settings.principal, "kumiho/gw1.example.com@EXAMPLE.COM");
        assert_eq!(settings.keytab, PathBuf::from("/etc/kumiho/kumiho.keytab"));
        assert_eq!(settings.spnego_principal, None);
        assert_eq!(
            settings.http_principals(),
            ["kumiho/gw1.example.com@EXAMPLE.COM"]
        );
        let with_spnego = ServerConfig {
            kerberos_spnego_principal: Some("HTTP/_HOST@EXAMPLE.COM".to_owned()),
            ..config.clone()
        };
        assert_eq!(with_spnego.validate(), Ok(()));
        assert_eq!(
            with_spnego.kerberos().unwrap().http_principals(),
            [
                "kumiho/gw1.example.com@EXAMPLE.COM",
                "HTTP/gw1.example.com@EXAMPLE.COM"
            ]
        );
        let bad_spnego = ServerConfig {
            kerberos_spnego_principal: Some("HTTP".to_owned()),
            ..config.clone()
        };
        assert!(bad_spnego
            .validate()
            .unwrap_err()
            .starts_with("kerberos-spnego-principal `HTTP` must be service/host@REALM"));
        assert!(
            !config.authentication.accepts_nosasl() && !config.authentication.checks_passwords()
        );

        let error = |yaml: &str| {
            ServerConfig::from_yaml(yaml)
                .unwrap()
                .validate()
                .unwrap_err()
        };
        let keytab = "kerberos-keytab: /k\n";
        assert!(error("authentication: KERBEROS\n").contains("needs kerberos-principal"));
        assert!(
            error("authentication: KERBEROS\nkerberos-principal: kumiho/h@R\n")
                .contains("needs kerberos-keytab")
        );
        let bad_form = error(&format!(
            "authentication: KERBEROS\nkerberos-principal: kumiho@R\n{keytab}"
        ));
        assert!(bad_form.contains("service/host@REALM"), "{bad_form}");
        let with_password_file = error(&format!(
            "authentication: KERBEROS\nkerberos-principal: kumiho/h@R\n{keytab}password-file: /p\n"
        ));
        assert!(
            with_password_file.contains("password-file is set but authentication is KERBEROS"),
            "{with_password_file}"
        );
        let with_ldap = error(&format!(
            "authentication: KERBEROS\nkerberos-principal: kumiho/h@R\n{keytab}ldap-url: ldap://l\n"
        ));
        assert!(
            with_ldap.contains("ldap-url is set but authentication is KERBEROS"),
            "{with_ldap}"
        );
        let stray = error(keytab);
        assert!(
            stray.contains("kerberos-keytab is set but authentication is NONE"),
            "{stray}"
        );
        assert!(error("kerberos-spnego-principal: HTTP/h@R\n")
            .contains("kerberos-spnego-principal is set but authentication is NONE"));
        assert_eq!(ServerConfig::default().kerberos(), None);
    }

    #[test]
    fn authentication_lists_take_kerberos_with_one_password_check_in_any_order() {
        let kerberos_ldap = Authentication {
            kerberos: true,
            passwords: Some(PasswordCheck::Ldap),
        };
        for text in ["KERBEROS,LDAP", "ldap, kerberos", " LDAP,KERBEROS "] {
            assert_eq!(text.parse(), Ok(kerberos_ldap), "{text}");
        }
        assert_eq!(kerberos_ldap.to_string(), "KERBEROS,LDAP");
        assert!(kerberos_ldap.passwords_with_kerberos() && !kerberos_ldap.accepts_nosasl());
        let kerberos_file: Authentication = "FILE,KERBEROS".parse().unwrap();
        assert_eq!(kerberos_file.to_string(), "KERBEROS,FILE");
        assert!(kerberos_file.checks_passwords());
        assert!(!Authentication::KERBEROS.passwords_with_kerberos());
        assert!(!Authentication::FILE.passwords_with_kerberos());

        let principal = "kerberos-principal: kumiho/h@R\nkerberos-keytab: /k\n";
        let yaml = |authentication: &str| {
            ServerConfig::from_yaml(&format!(
                "authentication: {authentication}\n{principal}password-file: /p\n"
            ))
        };
        for authentication in [
            "KERBEROS,FILE",
            "[FILE, KERBEROS]",
            "\n  - KERBEROS\n  - FILE",
        ] {
            let config = yaml(authentication).unwrap();
            assert_eq!(config.authentication, kerberos_file, "{authentication}");
            assert_eq!(config.validate(), Ok(()), "{authentication}");
            assert_eq!(
                config.kerberos().unwrap().principal,
                "kumiho/h@R",
                "{authentication}"
            );
        }
        let config = Cli::try_parse_from([
            "kumiho",
            "--authentication",
            "KERBEROS,FILE",
            "--password-file",
            "/p",
            "--kerberos-principal",
            "kumiho/_HOST@EXAMPLE.COM",
            "--kerberos-keytab",
            "/k",
        ])
        .unwrap()
        .into_config()
        .unwrap();
        assert_eq!(config.authentication, kerberos_file);

        // Each half still needs its settings.
        let error = |yaml: &str| {
            ServerConfig::from_yaml(yaml)
                .unwrap()
                .validate()
                .unwrap_err()
        };
        let no_file = error(&format!("authentication: KERBEROS,FILE\n{principal}"));
        assert!(
            no_file.contains("authentication KERBEROS,FILE needs password-file"),
            "{no_file}"
        );
        let no_principal =
            error("authentication: LDAP,KERBEROS\nldap-url: ldap://l\nldap-domain: d\n");
        assert!(
            no_principal.contains("authentication KERBEROS,LDAP needs kerberos-principal"),
            "{no_principal}"
        );
        let no_url = error(&format!("authentication: KERBEROS,LDAP\n{principal}"));
        assert!(no_url.contains("needs ldap-url"), "{no_url}");
        let ldap_on_file = error(&format!(
            "authentication: KERBEROS,FILE\n{principal}password-file: /p\nldap-domain: d\n"
        ));
        assert!(
            ldap_on_file.contains("set authentication to KERBEROS,LDAP"),
            "{ldap_on_file}"
        );
        let stray = error("authentication: FILE\npassword-file: /p\nkerberos-keytab: /k\n");
        assert!(
            stray.contains("set authentication to KERBEROS (KERBEROS,FILE to take passwords too)"),
            "{stray}"
        );
    }

    #[test]
    fn authentication_lists_that_cannot_mean_what_they_say_are_refused_with_why() {
        let refused = |text: &str| text.parse::<Authentication>().unwrap_err();
        for list in ["KERBEROS,NONE", "none,kerberos", "KERBEROS,NONE,LDAP"] {
            let message = refused(list);
            assert!(
                message.contains("makes KERBEROS pointless") && message.contains("KERBEROS,LDAP"),
                "{list}: {message}"
            );
        }
        let message = refused("NONE,FILE");
        assert!(message.contains("use FILE alone"), "{message}");
        for list in ["FILE,LDAP", "KERBEROS,LDAP,FILE"] {
            let message = refused(list);
            assert!(message.contains("two password checks"), "{list}: {message}");
        }
        assert!(refused("KERBEROS,KERBEROS").contains("KERBEROS twice"));
        assert!(refused("NONE,NONE").contains("NONE twice"));
        let nosasl = refused("KERBEROS,NOSASL");
        assert!(
            nosasl.contains("KERBEROS, FILE and LDAP refuse them"),
            "{nosasl}"
        );
        assert!(refused("KERBEROS,").contains("is not supported"));
        // The same messages from YAML (a list too) and from the flag.
        let yaml = ServerConfig::from_yaml("authentication: [KERBEROS, NONE]\n").unwrap_err();
        assert!(yaml.contains("makes KERBEROS pointless"), "{yaml}");
        let flag = Cli::try_parse_from(["kumiho", "--authentication", "LDAP,FILE"]).unwrap_err();
        assert!(flag.to_string().contains("two password checks"), "{flag}");
    }

    #[test]
    fn authentication_ldap_needs_a_url_and_a_way_to_name_users_and_no_other_modes_settings() {
        let cli = Cli::try_parse_from([
            "kumiho",
            "--authentication",
            "ldap",
            "--ldap-url",
            "ldap://a:389 ldaps://b",
            "--ldap-user-dn-pattern",
            "uid=%s,ou=people,dc=example,dc=com:cn=%s,ou=admins,dc=example,dc=com",
        ])
        .unwrap();
        let config = cli.into_config().unwrap();
        assert_eq!(config.authentication, Authentication::LDAP);
        assert!(config.authentication.checks_passwords());
        let settings = crate::ldap::LdapSettings::from_config(&config).unwrap();
        assert_eq!(settings.urls, ["ldap://a:389", "ldaps://b"]);
        let error = |yaml: &str| {
            ServerConfig::from_yaml(yaml)
                .unwrap()
                .validate()
                .unwrap_err()
        };
        let ldap = "authentication: LDAP\n";
        assert!(error(ldap).contains("needs ldap-url"));
        let url = "ldap-url: ldap://localhost:389\n";
        assert!(error(&format!("{ldap}{url}")).contains("needs ldap-user-dn-pattern"));
        for ok in [
            "ldap-base-dn: ou=people,dc=example,dc=com\n",
            "ldap-domain: example.com\n",
            "ldap-user-dn-pattern: uid=%s,dc=example,dc=com\n",
        ] {
            let config = ServerConfig::from_yaml(&format!("{ldap}{url}{ok}")).unwrap();
            assert_eq!(config.validate(), Ok(()), "{ok}");
        }
        assert!(
            error(&format!("{ldap}ldap-url: http://x\nldap-domain: d\n"))
                .contains("not an ldap:// or ldaps:// URL")
        );
        assert!(
            error(&format!("{ldap}ldap-url: ldap://\nldap-domain: d\n")).contains("names no host")
        );
        assert!(
            error(&format!("{ldap}{url}ldap-user-dn-pattern: ou=people\n"))
                .contains("not a DN with %s")
        );
        assert!(error(&format!(
            "{ldap}{url}ldap-domain: d\nldap-user-dn-pattern: uid=%s,dc=d\n"
        ))
        .contains("remove one"));
        assert!(
            error(&format!("{ldap}{url}ldap-domain: d\npassword-file: /p\n"))
                .contains("remove password-file")
        );
        assert!(error(url).contains("ldap-url is set but authentication is NONE"));
        assert!(
            error("authentication: FILE\npassword-file: /p\nldap-domain: d\n")
                .contains("ldap-domain is set but authentication is FILE")
        );
    }

    #[test]
    fn tls_takes_a_certificate_and_a_key_together() {
        assert_eq!(ServerConfig::default().ssl_cert_file, None);
        let cli = Cli::try_parse_from([
            "kumiho",
            "--ssl-cert-file",
            "/etc/kumiho/tls/chain.pem",
            "--ssl-key-file",
            "/etc/kumiho/tls/key.pem",
        ])
        .unwrap();
        let config = cli.into_config().unwrap();
        assert_eq!(
            config.ssl_cert_file.as_deref(),
            Some(Path::new("/etc/kumiho/tls/chain.pem"))
        );
        assert_eq!(
            config.ssl_key_file.as_deref(),
            Some(Path::new("/etc/kumiho/tls/key.pem"))
        );
        let file = ServerConfig::from_yaml("ssl-cert-file: c.pem\nssl-key-file: k.pem\n").unwrap();
        assert_eq!(file.validate(), Ok(()));
        let alone = ServerConfig::from_yaml("ssl-cert-file: c.pem\n").unwrap();
        assert!(alone
            .validate()
            .unwrap_err()
            .contains("without ssl-key-file"));
        let alone = ServerConfig::from_yaml("ssl-key-file: k.pem\n").unwrap();
        assert!(alone
            .validate()
            .unwrap_err()
            .contains("without ssl-cert-file"));
    }

    #[test]
    fn batches_are_kept_three_days_unless_told_otherwise() {
        assert_eq!(
            ServerConfig::default().batch_max_age,
            Duration::from_secs(72 * 3600)
        );
        let config = ServerConfig::from_yaml("batch-max-age: P1D\n").unwrap();
        assert_eq!(config.batch_max_age, Duration::from_secs(24 * 3600));
        let cli = Cli::try_parse_from(["kumiho", "--batch-max-age", "30m"]).unwrap();
        assert_eq!(
            cli.into_config().unwrap().batch_max_age,
            Duration::from_secs(1800)
        );
        let never = ServerConfig {
            batch_max_age: Duration::ZERO,
            ..Default::default()
        };
        assert!(never.validate().unwrap_err().contains("batch-max-age"));
    }
}
