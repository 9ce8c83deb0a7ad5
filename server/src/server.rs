//! The gateway's services, started in order and stopped in reverse.
//!
//! Before anything starts, the authenticator and the TLS certificate and key (when
//! `ssl-cert-file` is set) are loaded: a bad password file or certificate stops the start.
//! Order: cluster configs (and their watcher), the HA ZooKeeper session (when configured: it
//! also holds the cookie secret), engine launcher, session manager, the frontends (binary,
//! HTTP, REST with its batches) and the metrics endpoint, then the registration for
//! ZooKeeper discovery, once there is something to discover. A failed start stops what
//! already started. On shutdown the registration goes first (no client is sent here any
//! more), then the frontends stop accepting, then sessions close (their CONNECTION engines
//! stop; shared engines keep running for the next gateway; batches run on, and the next
//! gateway on this work directory follows them), then the watcher and the metrics endpoint
//! stop: Prometheus sees the sessions drain.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use kumiho_engine_launcher::{DataFusionBuilder, HostGroupProvider, Launcher, SparkBuilder};
use kumiho_thrift::auth::{AnyPassword, Authenticator};
use kumiho_thrift::kerberos::KerberosAcceptor;
use kumiho_thrift::server::{serve_binary, serve_http, ServerOptions, ServerTls};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::batch::BatchManager;
use crate::cluster::{watcher, ClusterRegistry};
use crate::config::{PasswordCheck, ServerConfig};
use crate::discovery::{advertised_host, Advertised, Ensemble, GatewayRegistration};
use crate::kerberos::ticket::{TicketCache, CACHE_VARIABLE};
use crate::kerberos::{GssAcceptor, KerberosOnly};
use crate::ldap::{LdapAuthenticator, LdapSettings};
use crate::metrics::{Metered, Metrics};
use crate::password_file::PasswordFile;
use crate::proxy::Gateway;
use crate::registries::Registries;
use crate::rest::servers::GatewayDirectory;
use crate::rest::sessions::SessionsApi;
use crate::rest::RestApi;
use crate::routing::{server_user, Router};
use crate::session::SessionManager;

/// A started gateway.
pub struct RunningGateway {
    /// Where the binary frontend listens (the real port when 0 was configured).
    pub binary_addr: SocketAddr,
    /// Where the HTTP frontend listens.
    pub http_addr: SocketAddr,
    /// Where the metrics endpoint listens, unless `metrics-enabled` is false.
    pub metrics_addr: Option<SocketAddr>,
    /// Where the REST API listens, unless `rest-enabled` is false.
    pub rest_addr: Option<SocketAddr>,
    /// The batches submitted over REST, when it is enabled.
    pub batches: Option<Arc<BatchManager>>,
    pub sessions: Arc<SessionManager>,
    pub clusters: Arc<ClusterRegistry>,
    frontends: CancellationToken,
    background: CancellationToken,
    tasks: Vec<(&'static str, JoinHandle<()>)>,
    watcher: JoinHandle<()>,
    reaper: JoinHandle<()>,
    /// The metrics endpoint, stopped with the background services.
    metrics_endpoint: Option<JoinHandle<()>>,
    /// The registration for ZooKeeper discovery, when `ha-addresses` is set.
    registration: Option<GatewayRegistration>,
    config: ServerConfig,
}

/// Starts every service; the error says what to fix.
pub async fn start(mut config: ServerConfig) -> Result<RunningGateway, String> {
    std::fs::create_dir_all(&config.work_dir).map_err(|e| {
        format!(
            "cannot create the work directory {}: {e}",
            config.work_dir.display()
        )
    })?;

    // Engines receive paths under the work directory and may not share our working directory.
    config.work_dir = config.work_dir.canonicalize().map_err(|e| {
        format!(
            "cannot resolve the work directory {}: {e}",
            config.work_dir.display()
        )
    })?;
    // Kerberos: the keytab is read and the acceptor credentials acquired now, so that a
    // missing or wrong keytab stops the start.
    // The HTTP frontends have an acceptor of their own when they take a SPNEGO principal too.
    // Under KERBEROS the gateway also keeps a ticket of its principal for the engines and
    // batches it launches (spark-submit --proxy-user on a secure Hadoop cluster), renewed on
    // a schedule; they get its cache in KRB5CCNAME.
    let (kerberos, http_kerberos, ticket) = match config.kerberos() {
        Some(settings) => {
            // Every frontend maps principals to users by the same rules.
            let rules = settings.auth_to_local()?.map(Arc::new);
            let acceptor = Arc::new(
                GssAcceptor::open(&settings.principal, &settings.keytab)?
                    .with_auth_to_local(rules.clone()),
            );
            let http = match &settings.spnego_principal {
                Some(_) => Some(Arc::new(
                    GssAcceptor::open_any(&settings.http_principals(), &settings.keytab)?
                        .with_auth_to_local(rules.clone()),
                )),
                None => None,
            };
            let auth_to_local = rules.map_or_else(
                || "none (principals' first components)".to_owned(),
                |rules| rules.to_string().replace('\n', " "),
            );
            tracing::info!(principal = %settings.principal, spnego_principal = settings.spnego_principal.as_deref().unwrap_or("none"), keytab = %settings.keytab.display(), authentication = %config.authentication, sasl_qop = %settings.sasl_qop, %auth_to_local, "accepting Kerberos clients");
            let ticket = TicketCache::new(&settings.principal, &settings.keytab, &config.work_dir)?;
            ticket.renew_logged().await;
            (Some(acceptor), http, Some(ticket))
        }
        None => (None, None, None),
    };
    let engine_env: BTreeMap<String, String> = ticket
        .iter()
        .map(|ticket| (CACHE_VARIABLE.to_owned(), ticket.variable_value()))
        .collect();
    // One authenticator for every frontend: Thrift (SASL PLAIN, HTTP Basic) and REST; under
    // KERBEROS alone one that refuses every password, should a password reach it.
    let authenticator: Arc<dyn Authenticator> = match (config.authentication.passwords, &kerberos) {
        (Some(PasswordCheck::File), _) => match &config.password_file {
            Some(path) => Arc::new(PasswordFile::open(path)?),
            None => return Err("authentication FILE needs password-file".into()),
        },
        (Some(PasswordCheck::Ldap), _) => {
            Arc::new(LdapAuthenticator::new(LdapSettings::from_config(&config)?))
        }
        (None, Some(acceptor)) => Arc::new(KerberosOnly::new(acceptor)),
        (None, None) if config.authentication.kerberos => {
            return Err(
                "authentication KERBEROS needs kerberos-principal and kerberos-keytab".into(),
            )
        }
        (None, None) => Arc::new(AnyPassword),
    };
    // TLS for the binary, HTTP and REST frontends: a bad certificate or key stops the start.
    let tls = match (&config.ssl_cert_file, &config.ssl_key_file) {
        (Some(cert_file), Some(key_file)) => {
            let tls = ServerTls::load(cert_file, key_file)
                .map_err(|e| format!("{e} (ssl-cert-file, ssl-key-file)"))?;
            Some(Arc::new(tls))
        }
        _ => None,
    };
    let (clusters, report) = ClusterRegistry::load(&config.cluster_configs)?;
    watcher::log_report(&report);
    let clusters = Arc::new(clusters);
    if clusters.get(&config.default_cluster).is_err() {
        tracing::warn!(
            cluster = %config.default_cluster,
            dir = %config.cluster_configs.display(),
            "the default cluster has no config file; sessions naming no cluster will be refused"
        );
    }
    let background = CancellationToken::new();
    if let Some(ticket) = ticket {
        tokio::spawn(ticket.keep_fresh(config.kinit_interval, background.clone()));
    }
    let watcher = watcher::spawn(
        clusters.clone(),
        config.cluster_rescan_interval,
        background.clone(),
    );

    let ha = match connect_ha(&config).await {
        Ok(ha) => ha,
        Err(e) => {
            stop_watcher(background, watcher).await;
            return Err(e);
        }
    };
    let cookie_secret = match cookie_secret(&config, ha.as_ref()).await {
        Ok(secret) => secret,
        Err(e) => {
            stop_watcher(background, watcher).await;
            return Err(e);
        }
    };

    let started = start_frontends(&config, clusters.clone(), engine_env.clone()).await;
    let (sessions, binary, http, metrics_listener, rest_listener) = match started {
        Ok(started) => started,
        Err(e) => {
            stop_watcher(background, watcher).await;
            return Err(e);
        }
    };

    let frontends = CancellationToken::new();
    let binary_addr = binary.local_addr().map_err(|e| e.to_string())?;
    let http_addr = http.local_addr().map_err(|e| e.to_string())?;
    let metrics_addr = match &metrics_listener {
        Some(listener) => Some(listener.local_addr().map_err(|e| e.to_string())?),
        None => None,
    };
    let rest_addr = match &rest_listener {
        Some(listener) => Some(listener.local_addr().map_err(|e| e.to_string())?),
        None => None,
    };
    // Kyuubi's `kyuubiInstance` of REST batches and sessions.
    let rest_instance = rest_addr.map(|addr| {
        format!(
            "{}:{}",
            advertised_host(config.advertised_host.as_deref(), &config.bind_host),
            addr.port()
        )
    });
    let batches = match &rest_instance {
        None => None,
        Some(instance) => {
            match BatchManager::open(
                &config.work_dir,
                clusters.clone(),
                config.default_cluster.clone(),
                instance.clone(),
            ) {
                Ok(batches) => {
                    batches.keep_for(config.batch_max_age);
                    batches.give_env(engine_env.clone());
                    Some(batches)
                }
                Err(e) => {
                    stop_watcher(background, watcher).await;
                    return Err(e);
                }
            }
        }
    };
    let gateway = Arc::new(Metered::new(
        Gateway::new(sessions.clone()),
        sessions.metrics.clone(),
    ));
    let options = Arc::new(ServerOptions {
        authenticator: authenticator.clone(),
        kerberos: kerberos
            .clone()
            .map(|acceptor| acceptor as Arc<dyn KerberosAcceptor>),
        http_kerberos: http_kerberos.map(|acceptor| acceptor as Arc<dyn KerberosAcceptor>),
        passwords_with_kerberos: config.authentication.passwords_with_kerberos(),
        sasl_qop: config.kerberos_sasl_qop,
        allow_sasl: true,
        // NOSASL carries no credentials.
        allow_nosasl: config.authentication.accepts_nosasl(),
        max_message_size: config.max_message_size,
        http_path: config.http_path.trim_matches('/').to_owned(),
        cookie_secret,
        http_connections: Some(sessions.metrics.http_connections()),
        tls: tls.clone(),
        client_ip_header: config.client_ip_header(),
    });
    let mut tasks = vec![
        (
            "binary frontend",
            spawn_frontend(
                "binary",
                serve_binary(binary, gateway.clone(), options.clone(), frontends.clone()),
            ),
        ),
        (
            "http frontend",
            spawn_frontend(
                "http",
                serve_http(http, gateway.clone(), options.clone(), frontends.clone()),
            ),
        ),
    ];
    // What this gateway registers for discovery (with `ha-addresses`), and lists as itself.
    let advertised = Advertised {
        host: advertised_host(config.advertised_host.as_deref(), &config.bind_host),
        binary_port: binary_addr.port(),
        http_port: http_addr.port(),
        http_path: config.http_path.trim_matches('/').to_owned(),
        transport: config.ha_transport_mode,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        checks_passwords: config.authentication.checks_passwords(),
        kerberos_principal: kerberos.as_ref().map(|k| k.principal().to_owned()),
        use_ssl: tls.is_some(),
    };
    if let (Some(listener), Some(batches)) = (rest_listener, &batches) {
        let api = Arc::new(RestApi {
            batches: batches.clone(),
            authenticator,
            kerberos: options
                .http_kerberos
                .clone()
                .or_else(|| options.kerberos.clone()),
            passwords_with_kerberos: options.passwords_with_kerberos,
            client_ip_header: options.client_ip_header.clone(),
        });
        // REST sessions are calls on the same service the Thrift frontends serve.
        let directory = GatewayDirectory {
            advertised: advertised.clone(),
            ha: ha
                .as_ref()
                .map(|(_, ensemble)| (ensemble.clone(), config.ha_namespace.clone())),
        };
        let statements = Arc::new(
            SessionsApi::new(
                gateway.clone(),
                sessions.clone(),
                rest_instance.clone().unwrap_or_default(),
            )
            .with_directory(directory),
        );
        let shutdown = frontends.clone();
        let tls = tls.clone();
        tasks.push((
            "rest frontend",
            spawn_frontend("rest", async move {
                crate::rest::serve(listener, api, Some(statements), tls, shutdown).await;
                Ok(())
            }),
        ));
    }
    let reaper = spawn_idle_reaper(
        sessions.clone(),
        config.session_idle_timeout,
        config.operation_idle_timeout,
        background.clone(),
    );
    let metrics_endpoint = metrics_listener.map(|listener| {
        spawn_frontend(
            "metrics",
            serve_metrics(listener, sessions.clone(), background.clone()),
        )
    });
    let registration = match ha {
        None => None,
        Some((client, ensemble)) => {
            let registering = GatewayRegistration::start(
                client,
                ensemble,
                config.ha_namespace.clone(),
                advertised,
            );
            match registering.await {
                Ok(registration) => Some(registration),
                Err(e) => {
                    frontends.cancel();
                    for (_, task) in tasks {
                        let _ = task.await;
                    }
                    reaper.abort();
                    if let Some(endpoint) = metrics_endpoint {
                        endpoint.abort();
                    }
                    stop_watcher(background, watcher).await;
                    return Err(format!("{e} (ha-addresses)"));
                }
            }
        }
    };
    let metrics = metrics_addr.map(crate::metrics::describe);
    let rest = rest_addr.map(crate::rest::describe).map(|rest| match &tls {
        Some(_) => rest.replacen("http://", "https://", 1),
        None => rest,
    });
    let tls_status = match &tls {
        Some(tls) => format!(
            "on (binary, http{}; {})",
            if rest_addr.is_some() { ", rest" } else { "" },
            tls.cert_file().display()
        ),
        None => "off".to_owned(),
    };
    tracing::info!(%binary_addr, %http_addr, http_path = %config.http_path, metrics = metrics.as_deref().unwrap_or("off"), rest = rest.as_deref().unwrap_or("off"), tls = %tls_status, work_dir = %config.work_dir.display(), "kumiho gateway started");
    Ok(RunningGateway {
        binary_addr,
        http_addr,
        metrics_addr,
        rest_addr,
        batches,
        sessions,
        clusters,
        frontends,
        background,
        tasks,
        watcher,
        reaper,
        metrics_endpoint,
        registration,
        config,
    })
}

/// Stops the cluster-config watcher of a start that failed.
async fn stop_watcher(background: CancellationToken, watcher: JoinHandle<()>) {
    background.cancel();
    let _ = watcher.await;
}

/// The session on the HA ensemble, when `ha-addresses` is set; the gateway does not start
/// without it, since clients could not find it.
async fn connect_ha(
    config: &ServerConfig,
) -> Result<Option<(zookeeper_client::Client, Ensemble)>, String> {
    let Some(addresses) = &config.ha_addresses else {
        return Ok(None);
    };
    let ensemble = Ensemble {
        addresses: addresses.trim().to_owned(),
        session_timeout: config.ha_session_timeout,
        connect_timeout: config.ha_connect_timeout,
    };
    let client = ensemble.connect().await.map_err(|e| {
        format!("{e} (ha-addresses; the gateway registers there for ZooKeeper discovery)")
    })?;
    Ok(Some((client, ensemble)))
}

/// The HTTP cookie secret: the configured one, else the HA namespace's shared secret (so that
/// every gateway discovered together accepts the others' cookies), else none (a random key).
async fn cookie_secret(
    config: &ServerConfig,
    ha: Option<&(zookeeper_client::Client, Ensemble)>,
) -> Result<Option<String>, String> {
    if let Some(secret) = &config.cookie_secret {
        return Ok(Some(secret.0.clone()));
    }
    let Some((client, ensemble)) = ha else {
        return Ok(None);
    };
    crate::secret::zookeeper_secret(client, &config.ha_namespace, ensemble.connect_timeout, None)
        .await
        .map(Some)
        .map_err(|e| {
            format!(
                "{e} (the HTTP cookie secret of ha-namespace `{}`; or set cookie-secret)",
                config.ha_namespace
            )
        })
}

/// The session manager and the listeners of the frontends and (when enabled) the metrics
/// endpoint and the REST API.
type Started = (
    Arc<SessionManager>,
    TcpListener,
    TcpListener,
    Option<TcpListener>,
    Option<TcpListener>,
);

async fn start_frontends(
    config: &ServerConfig,
    clusters: Arc<ClusterRegistry>,
    engine_env: BTreeMap<String, String>,
) -> Result<Started, String> {
    let engine = DataFusionBuilder::locate(config.engine_binary.as_deref()).map_err(|e| {
        format!("{e} (set --engine-binary; from a checkout, `cargo build --workspace` builds it beside kumiho)")
    })?;
    // Clusters that name no warehouse keep their tables under the work directory, so that
    // they outlive engines out of the box.
    let engine =
        engine.with_default_warehouse(config.work_dir.join("warehouse").display().to_string());
    // The Spark SQL engine's supervisor is looked for beside the gateway; a missing one fails
    // only Spark launches, naming the path.
    let launcher = Arc::new(
        Launcher::new()
            .with_builder(Arc::new(engine))
            .with_builder(Arc::new(SparkBuilder::locate(None)))
            .with_env(engine_env),
    );
    let router = Router {
        clusters,
        registries: Arc::new(Registries::new(&config.work_dir)),
        groups: Arc::new(HostGroupProvider),
        default_cluster: config.default_cluster.clone(),
        max_pool_size: config.max_pool_size,
        server_user: server_user(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    };
    let sessions = Arc::new(SessionManager::new(
        router,
        launcher,
        config.launch_wait,
        config.engine_session_opens,
        Arc::new(Metrics::new()),
    ));
    let binary = bind(&config.bind_host, config.binary_port, "binary-port").await?;
    let http = bind(&config.bind_host, config.http_port, "http-port").await?;
    let metrics = match config.metrics_enabled {
        true => Some(bind(&config.bind_host, config.metrics_port, "metrics-port").await?),
        false => None,
    };
    let rest = match config.rest_enabled {
        true => Some(bind(&config.bind_host, config.rest_port, "rest-port").await?),
        false => None,
    };
    Ok((sessions, binary, http, metrics, rest))
}

/// The metrics endpoint as a service: serves until `shutdown`.
async fn serve_metrics(
    listener: TcpListener,
    sessions: Arc<SessionManager>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let metrics = sessions.metrics.clone();
    crate::metrics::serve(listener, metrics, sessions, shutdown).await;
    Ok(())
}

/// Closes sessions and operations idle past their timeouts, checking a few times per timeout
/// (at most every minute).
fn spawn_idle_reaper(
    sessions: Arc<SessionManager>,
    session_timeout: Duration,
    operation_timeout: Duration,
    shutdown: CancellationToken,
) -> JoinHandle<()> {
    let every = (session_timeout.min(operation_timeout) / 4)
        .clamp(Duration::from_secs(1), Duration::from_secs(60));
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = ticks.tick() => {
                    sessions.close_idle(session_timeout).await;
                    sessions.close_idle_operations(operation_timeout).await;
                }
            }
        }
    })
}

async fn bind(host: &str, port: u16, flag: &str) -> Result<TcpListener, String> {
    kumiho_thrift::server::bind(host, port).await.map_err(|e| {
        format!("cannot listen on {host}:{port}: {e}; free the port or pick another with --{flag}")
    })
}

fn spawn_frontend(
    name: &'static str,
    serve: impl std::future::Future<Output = std::io::Result<()>> + Send + 'static,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        if let Err(e) = serve.await {
            tracing::error!(frontend = name, error = %e, "frontend stopped with an error");
        }
    })
}

impl RunningGateway {
    /// Stops in reverse order of start: registration, frontends, sessions, then the watcher
    /// and the metrics endpoint.
    pub async fn stop(self) {
        if let Some(registration) = self.registration {
            registration.deregister().await;
        }
        tracing::info!("stopping: no new connections");
        self.frontends.cancel();
        for (name, task) in self.tasks {
            if tokio::time::timeout(self.config.shutdown_grace, task)
                .await
                .is_err()
            {
                tracing::warn!(
                    service = name,
                    "did not stop within the shutdown grace; cut off"
                );
            }
        }
        tracing::info!(
            sessions = self.sessions.len(),
            "closing sessions; shared engines keep running"
        );
        self.sessions.shutdown(self.config.shutdown_grace).await;
        self.background.cancel();
        let _ = self.watcher.await;
        let _ = self.reaper.await;
        if let Some(endpoint) = self.metrics_endpoint {
            let _ = endpoint.await;
        }
        tracing::info!("kumiho gateway stopped");
    }

    /// The cluster-configs directory served.
    pub fn cluster_configs(&self) -> &Path {
        &self.config.cluster_configs
    }
}
