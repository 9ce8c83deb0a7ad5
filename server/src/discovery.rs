//! Gateway registration for Hive JDBC's ZooKeeper discovery: one EPHEMERAL_SEQUENTIAL node per gateway.
//!
//! A client with `jdbc:hive2://ZK/;serviceDiscoveryMode=zooKeeper;zooKeeperNamespace=NS` lists
//! `/NS`, picks a child at random and reads its data, `key=value` pairs separated by `;`
//! (Hive JDBC 2.3's `ZooKeeperHiveClientHelper`: it reads the bind host, the port, the
//! transport mode, the HTTP path and port, and NOSASL among the authentication values; we
//! write NONE, CUSTOM when passwords are checked, or KERBEROS with
//! `hive.server2.authentication.kerberos.principal`, which it copies to the URL's
//! `principal` unless the URL sets it (and then uses Kerberos), or for tickets and passwords
//! both `KERBEROS,CUSTOM` without the principal, as Kyuubi writes its list; and
//! `hive.server2.use.SSL`, which it copies to the URL's `ssl` unless the URL sets it: we
//! write `true` when the frontends serve TLS, so that a client finding the gateway this way
//! connects with TLS). The
//! node is `/NS/serverUri=host:port;version=V;sequence=NNNNNNNNNN`, Kyuubi's and HiveServer2's
//! name. It lives with the gateway's ZooKeeper session; when that session expires (the
//! ensemble lost it, or was wiped) a new session registers again, and a node deleted by
//! someone else while the session lives is created again. On shutdown the node is
//! deleted before the frontends close, so that no client is sent to a gateway on its way out.

use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use zookeeper_client as zk;

use crate::config::HaTransportMode;

/// Longest pause between attempts to register again after the session was lost.
const MAX_RETRY_PAUSE: Duration = Duration::from_secs(10);

/// Where and how long to talk to a ZooKeeper ensemble.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ensemble {
    /// `host:port,...` as configured.
    pub addresses: String,
    pub session_timeout: Duration,
    /// Bound on establishing a session.
    pub connect_timeout: Duration,
}

impl Ensemble {
    /// Opens a session, or says (for the operator) why the ensemble did not answer in time.
    pub async fn connect(&self) -> Result<zk::Client, String> {
        let connecting = kumiho_engine_launcher::registry::zookeeper::connector(
            self.session_timeout,
            self.connect_timeout,
        )
        .connect(&self.addresses);
        match tokio::time::timeout(self.connect_timeout, connecting).await {
            Ok(Ok(client)) => Ok(client),
            Ok(Err(e)) => Err(format!(
                "cannot open a session on the ZooKeeper ensemble {}: {e}; check that its servers are running and reachable",
                self.addresses
            )),
            Err(_) => Err(format!(
                "the ZooKeeper ensemble {} did not answer within {}; check that its servers are running and reachable",
                self.addresses,
                crate::duration::format(self.connect_timeout)
            )),
        }
    }
}

/// What a registration tells clients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Advertised {
    pub host: String,
    pub binary_port: u16,
    pub http_port: u16,
    /// Without slashes.
    pub http_path: String,
    pub transport: HaTransportMode,
    /// The gateway's version.
    pub version: String,
    /// Whether clients may send a password the gateway checks (authentication FILE, LDAP,
    /// alone or with KERBEROS).
    pub checks_passwords: bool,
    /// The service principal clients ask tickets for (authentication KERBEROS, alone or
    /// with a password check), `_HOST` already replaced.
    pub kerberos_principal: Option<String>,
    /// Whether the frontends serve TLS (`ssl-cert-file`).
    pub use_ssl: bool,
}

impl Advertised {
    /// The port of the advertised frontend.
    pub fn port(&self) -> u16 {
        match self.transport {
            HaTransportMode::Binary => self.binary_port,
            HaTransportMode::Http => self.http_port,
        }
    }

    /// The node name without the sequence number ZooKeeper appends:
    /// `serverUri=host:port;version=V;sequence=`.
    pub fn node_prefix(&self) -> String {
        format!(
            "serverUri={}:{};version={};sequence=",
            self.host,
            self.port(),
            self.version
        )
    }

    /// The node's data, in the keys Hive JDBC reads. An HTTP registration names only the
    /// HTTP port: Hive JDBC takes `hive.server2.thrift.port` over any port in the URL.
    pub fn node_data(&self) -> String {
        let mut pairs = vec![("hive.server2.thrift.bind.host", self.host.clone())];
        match self.transport {
            HaTransportMode::Binary => {
                pairs.push(("hive.server2.thrift.port", self.binary_port.to_string()));
                pairs.push(("hive.server2.transport.mode", "binary".to_owned()));
            }
            HaTransportMode::Http => {
                pairs.push(("hive.server2.thrift.http.port", self.http_port.to_string()));
                pairs.push(("hive.server2.thrift.http.path", self.http_path.clone()));
                pairs.push(("hive.server2.transport.mode", "http".to_owned()));
            }
        }
        // Hive's names: NONE takes any password (and NOSASL on the binary port); CUSTOM, a
        // checked password. Hive JDBC connects with SASL PLAIN either way. Tickets and
        // passwords both: the list, as Kyuubi writes its `kyuubi.authentication`, and no
        // principal, as Kyuubi writes it only for KERBEROS alone: Hive JDBC takes an
        // advertised principal as an order to use Kerberos, which would leave password
        // clients no way to connect through discovery; a Kerberos client sets `principal=`
        // in its URL instead.
        let authentication = match (&self.kerberos_principal, self.checks_passwords) {
            (Some(_), true) => "KERBEROS,CUSTOM",
            (Some(_), false) => "KERBEROS",
            (None, true) => "CUSTOM",
            (None, false) => "NONE",
        };
        pairs.push(("hive.server2.authentication", authentication.to_owned()));
        if let (Some(principal), false) = (&self.kerberos_principal, self.checks_passwords) {
            pairs.push((
                "hive.server2.authentication.kerberos.principal",
                principal.clone(),
            ));
        }
        // Hive JDBC sets the URL's `ssl` from it (unless the URL sets `ssl`); the trust store
        // still comes from the URL (`sslTrustStore`), else the JVM's default.
        if self.use_ssl {
            pairs.push(("hive.server2.use.SSL", "true".to_owned()));
        }
        pairs
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect::<Vec<_>>()
            .join(";")
    }
}

/// The host to advertise: the configured one, else the bind host unless it is a wildcard,
/// else this machine's host name.
pub fn advertised_host(configured: Option<&str>, bind_host: &str) -> String {
    if let Some(host) = configured {
        return host.to_owned();
    }
    if !matches!(bind_host, "0.0.0.0" | "::" | "[::]" | "") {
        return bind_host.to_owned();
    }
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty());
    hostname.unwrap_or_else(|| {
        tracing::warn!(
            "cannot tell this machine's host name; advertising localhost (set --advertised-host)"
        );
        "localhost".to_owned()
    })
}

/// A gateway's live registration, kept up by a background task until [`Self::deregister`].
pub struct GatewayRegistration {
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl GatewayRegistration {
    /// Registers with `client` (a session on `ensemble`) and keeps the registration up. The
    /// first registration must succeed; later ones are retried until they do.
    pub async fn start(
        client: zk::Client,
        ensemble: Ensemble,
        namespace: String,
        advertised: Advertised,
    ) -> Result<Self, String> {
        let node = register(&client, &namespace, &advertised, ensemble.connect_timeout).await?;
        tracing::info!(%node, addresses = %ensemble.addresses, "registered for ZooKeeper discovery");
        let stop = CancellationToken::new();
        let keeper = Keeper {
            ensemble,
            namespace,
            advertised,
            stop: stop.clone(),
        };
        let task = tokio::spawn(keeper.run(client, node));
        Ok(Self { stop, task })
    }

    /// Deletes the registration and closes its session; returns once clients can no longer
    /// discover this gateway (or the ensemble failed to answer in time, when the session's
    /// end removes the node later).
    pub async fn deregister(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// What the keeper of a registration acts on.
enum KeeperEvent {
    /// The gateway stops: deregister.
    Stop,
    /// Look at the node and session again (after a reconnection or another node event).
    Rearm,
    /// The node is gone while the session lives.
    NodeDeleted,
    /// The session ended in this state: a new session must register.
    SessionEnded(zk::SessionState),
}

/// The background task holding the registration.
struct Keeper {
    ensemble: Ensemble,
    namespace: String,
    advertised: Advertised,
    stop: CancellationToken,
}

impl Keeper {
    async fn run(self, mut client: zk::Client, mut node: String) {
        loop {
            match self.next_event(&client, &node).await {
                KeeperEvent::Stop => {
                    self.remove(&client, &node).await;
                    return;
                }
                KeeperEvent::Rearm => {}
                KeeperEvent::NodeDeleted => {
                    // Deleted by someone else while our session lives (an operator, a cleanup
                    // script): put it back, as Curator's PersistentNode does for HiveServer2.
                    tracing::warn!(%node, "the registration was deleted while the gateway runs; registering again");
                    let timeout = self.ensemble.connect_timeout;
                    match register(&client, &self.namespace, &self.advertised, timeout).await {
                        Ok(new_node) => {
                            node = new_node;
                            tracing::info!(%node, "registered again for ZooKeeper discovery");
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "registering again failed; retrying");
                            tokio::select! {
                                _ = self.stop.cancelled() => return,
                                _ = tokio::time::sleep(MAX_RETRY_PAUSE / 10) => {}
                            }
                        }
                    }
                }
                KeeperEvent::SessionEnded(lost) => {
                    tracing::warn!(?lost, %node, "the registration's ZooKeeper session ended; registering again");
                    match self.register_again().await {
                        Some((new_client, new_node)) => {
                            client = new_client;
                            node = new_node;
                            tracing::info!(%node, "registered again for ZooKeeper discovery");
                        }
                        None => return,
                    }
                }
            }
        }
    }

    /// Waits for what needs the keeper: the gateway stopping, the session ending, the node
    /// deleted, or a reconnection (after which the node's watch is set again).
    async fn next_event(&self, client: &zk::Client, node: &str) -> KeeperEvent {
        let mut states = client.state_watcher();
        let current = client.state();
        if current.is_terminated() {
            return KeeperEvent::SessionEnded(current);
        }
        let node_gone = async {
            match client.check_and_watch_stat(node).await {
                Ok((None, _)) => KeeperEvent::NodeDeleted,
                Ok((Some(_), watch)) => match watch.changed().await.event_type {
                    zk::EventType::NodeDeleted => KeeperEvent::NodeDeleted,
                    // Data changed, or the session ended: look again.
                    _ => KeeperEvent::Rearm,
                },
                // Not connected now: the watch is set again after the reconnection.
                Err(_) => std::future::pending().await,
            }
        };
        tokio::pin!(node_gone);
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => return KeeperEvent::Stop,
                event = &mut node_gone => return event,
                state = states.changed() => match state {
                    zk::SessionState::Disconnected => {
                        tracing::warn!(addresses = %self.ensemble.addresses, "lost the connection to the HA ZooKeeper ensemble; the registration stays while the session lives")
                    }
                    zk::SessionState::SyncConnected => {
                        tracing::info!(addresses = %self.ensemble.addresses, "reconnected to the HA ZooKeeper ensemble");
                        return KeeperEvent::Rearm;
                    }
                    state if state.is_terminated() => return KeeperEvent::SessionEnded(state),
                    _ => {}
                }
            }
        }
    }

    /// Opens a new session and registers, retrying with a growing pause until it works or
    /// the gateway stops (`None`).
    async fn register_again(&self) -> Option<(zk::Client, String)> {
        let mut pause = Duration::from_millis(200);
        loop {
            let attempt = async {
                let client = self.ensemble.connect().await?;
                let node = register(
                    &client,
                    &self.namespace,
                    &self.advertised,
                    self.ensemble.connect_timeout,
                )
                .await?;
                Ok::<_, String>((client, node))
            };
            tokio::select! {
                _ = self.stop.cancelled() => return None,
                result = attempt => match result {
                    Ok(registered) => return Some(registered),
                    Err(e) => tracing::warn!(error = %e, "registering again failed; retrying"),
                }
            }
            tokio::select! {
                _ = self.stop.cancelled() => return None,
                _ = tokio::time::sleep(pause) => {}
            }
            pause = (pause * 2).min(MAX_RETRY_PAUSE);
        }
    }

    /// Deletes the node (bounded); closing the session would remove it too, later.
    async fn remove(&self, client: &zk::Client, node: &str) {
        match tokio::time::timeout(self.ensemble.connect_timeout, client.delete(node, None)).await {
            Ok(Ok(())) | Ok(Err(zk::Error::NoNode)) => {
                tracing::info!(%node, "deregistered from ZooKeeper discovery")
            }
            Ok(Err(e)) => {
                tracing::warn!(%node, error = %e, "could not delete the registration; it goes when the session ends")
            }
            Err(_) => {
                tracing::warn!(%node, "the HA ensemble did not answer the deregistration in time; the registration goes when the session expires")
            }
        }
    }
}

/// Creates `/{namespace}` if missing and this gateway's EPHEMERAL_SEQUENTIAL node under it;
/// returns the node's path.
async fn register(
    client: &zk::Client,
    namespace: &str,
    advertised: &Advertised,
    timeout: Duration,
) -> Result<String, String> {
    let parent = format!("/{namespace}");
    let prefix = format!("{parent}/{}", advertised.node_prefix());
    let data = advertised.node_data();
    let creating = async {
        client
            .mkdir(
                &parent,
                &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all()),
            )
            .await?;
        let (_, sequence) = client
            .create(
                &prefix,
                data.as_bytes(),
                &zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all()),
            )
            .await?;
        Ok::<_, zk::Error>(format!("{prefix}{sequence}"))
    };
    match tokio::time::timeout(timeout, creating).await {
        Ok(Ok(node)) => Ok(node),
        Ok(Err(e)) => Err(format!(
            "cannot register under {parent} in ZooKeeper: {e}; check the ensemble's ACLs and health"
        )),
        Err(_) => Err(format!(
            "ZooKeeper did not confirm the registration under {parent} within {}",
            crate::duration::format(timeout)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn advertised(transport: HaTransportMode) -> Advertised {
        Advertised {
            host: "gw1.example.com".to_owned(),
            binary_port: 10009,
            http_port: 10010,
            http_path: "cliservice".to_owned(),
            transport,
            version: "0.1.0".to_owned(),
            checks_passwords: false,
            kerberos_principal: None,
            use_ssl: false,
        }
    }

    #[test]
    fn binary_registrations_carry_what_hive_jdbc_reads() {
        let binary = advertised(HaTransportMode::Binary);
        assert_eq!(
            binary.node_prefix(),
            "serverUri=gw1.example.com:10009;version=0.1.0;sequence="
        );
        assert_eq!(
            binary.node_data(),
            "hive.server2.thrift.bind.host=gw1.example.com;hive.server2.thrift.port=10009;\
             hive.server2.transport.mode=binary;hive.server2.authentication=NONE"
        );
        let checked = Advertised {
            checks_passwords: true,
            ..binary
        };
        assert!(checked
            .node_data()
            .ends_with(";hive.server2.authentication=CUSTOM"));
    }

    #[test]
    fn kerberos_registrations_name_the_principal_for_hive_jdbc() {
        let kerberos = Advertised {
            kerberos_principal: Some("kumiho/gw1.example.com@EXAMPLE.COM".to_owned()),
            ..advertised(HaTransportMode::Binary)
        };
        assert!(
            kerberos.node_data().ends_with(
                ";hive.server2.authentication=KERBEROS;\
                 hive.server2.authentication.kerberos.principal=kumiho/gw1.example.com@EXAMPLE.COM"
            ),
            "{}",
            kerberos.node_data()
        );
    }

    #[test]
    fn kerberos_with_passwords_is_advertised_as_kyuubi_does_without_the_principal() {
        let both = Advertised {
            kerberos_principal: Some("kumiho/gw1.example.com@EXAMPLE.COM".to_owned()),
            checks_passwords: true,
            ..advertised(HaTransportMode::Binary)
        };
        let data = both.node_data();
        assert!(
            data.ends_with(";hive.server2.authentication=KERBEROS,CUSTOM"),
            "{data}"
        );
        assert!(!data.contains("principal"), "{data}");
    }

    #[test]
    fn tls_registrations_tell_hive_jdbc_to_use_ssl() {
        for transport in [HaTransportMode::Binary, HaTransportMode::Http] {
            let plain = advertised(transport);
            assert!(!plain.node_data().contains("use.SSL"));
            let tls = Advertised {
                use_ssl: true,
                ..plain
            };
            assert!(
                tls.node_data().ends_with(";hive.server2.use.SSL=true"),
                "{}",
                tls.node_data()
            );
        }
    }

    #[test]
    fn http_registrations_name_the_http_port_and_path() {
        let http = advertised(HaTransportMode::Http);
        assert_eq!(
            http.node_prefix(),
            "serverUri=gw1.example.com:10010;version=0.1.0;sequence="
        );
        let data = http.node_data();
        assert!(
            data.contains("hive.server2.thrift.http.port=10010")
                && data.contains("hive.server2.thrift.http.path=cliservice")
                && data.contains("hive.server2.transport.mode=http"),
            "{data}"
        );
        assert!(!data.contains("hive.server2.thrift.port="), "{data}");
    }

    #[test]
    fn the_advertised_host_is_never_a_wildcard() {
        assert_eq!(advertised_host(Some("gw"), "0.0.0.0"), "gw");
        assert_eq!(advertised_host(None, "10.0.0.5"), "10.0.0.5");
        let host = advertised_host(None, "0.0.0.0");
        assert!(!host.is_empty() && host != "0.0.0.0");
    }
}
