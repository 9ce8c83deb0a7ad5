//! The engine registry of each cluster, opened once per distinct location and shared, with the cluster's internal engine secret.
//!
//! Embedded registries are opened per root directory. ZooKeeper registries are opened per
//! ensemble (its `addresses`) and timeouts, lazily, on the first session of a cluster that
//! names them, and shared by every cluster naming the same. Beside the registry the gateway
//! keeps a session of its own on the ensemble, for the shared secret and to tell quickly
//! whether the ensemble answers: a session of a cluster whose ensemble is down fails within
//! the ensemble's connect timeout, and nothing else waits on it (each ensemble has its own
//! slot, and the accept loops never touch a registry). A registry that could not be opened,
//! and the gateway's session once it ended (expired, closed), are opened again by the next
//! session that needs them; the registry renews its own sessions.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dashmap::DashMap;
use kumiho_engine_launcher::registry::zookeeper::{ZooKeeperLocation, ZooKeeperRegistry};
use kumiho_engine_launcher::{EmbeddedRegistry, EngineSecret, Registry};
use zookeeper_client as zk;

use crate::cluster::{Cluster, RegistryConfig, ZookeeperConfig};
use crate::discovery::Ensemble;
use crate::errors::GatewayError;
use crate::secret;

/// A cluster's registry, where the gateway keeps files for it, and its engines' secret.
#[derive(Clone, Debug)]
pub struct ClusterBackend {
    pub registry: Arc<dyn Registry>,
    /// Where engine logs go (`DIR/engines`), and an embedded registry's tree and secret.
    pub dir: PathBuf,
    /// The password engines of the cluster require of the gateway.
    pub secret: EngineSecret,
}

/// Opens registries on first use; clusters naming the same location share one.
pub struct Registries {
    work_dir: PathBuf,
    embedded: DashMap<PathBuf, Arc<dyn Registry>>,
    /// The secret file of each embedded registry's directory, once read: every session asks
    /// for its cluster's secret, and a file once written is never rewritten (see [`secret`]).
    embedded_secrets: DashMap<PathBuf, EngineSecret>,
    /// One slot per ensemble and timeouts: clusters naming the same addresses with different
    /// timeouts each get the session they asked for.
    ensembles: DashMap<Ensemble, Arc<EnsembleSlot>>,
}

/// One ensemble: opened at most once at a time (the async mutex); the gateway's own session
/// is opened again when it ended.
#[derive(Default)]
struct EnsembleSlot {
    open: tokio::sync::Mutex<Option<OpenEnsemble>>,
    /// Secrets by namespace, once read: restored into ZooKeeper if the node is lost (a wiped
    /// ensemble), so that engines launched with it stay reachable.
    secrets: std::sync::Mutex<HashMap<String, String>>,
}

struct OpenEnsemble {
    registry: Arc<dyn Registry>,
    /// The gateway's own session: secrets and health.
    client: zk::Client,
}

impl Registries {
    pub fn new(work_dir: &Path) -> Self {
        Self {
            work_dir: work_dir.to_path_buf(),
            embedded: DashMap::new(),
            embedded_secrets: DashMap::new(),
            ensembles: DashMap::new(),
        }
    }

    /// The directory the gateway keeps `cluster`'s files in: an embedded registry's root
    /// (its tree under `DIR/registry`, logs under `DIR/engines`), or for a ZooKeeper cluster
    /// `WORK/clusters/NAME` (engine logs only).
    pub fn cluster_dir(&self, cluster: &Cluster) -> PathBuf {
        match &cluster.config.registry {
            RegistryConfig::Embedded(embedded) => embedded
                .root
                .clone()
                .unwrap_or_else(|| self.work_dir.clone()),
            RegistryConfig::Zookeeper(_) => self.work_dir.join("clusters").join(&cluster.name),
        }
    }

    /// The registry `cluster` names, its directory and its engines' secret. A ZooKeeper
    /// ensemble that does not answer fails this within its connect timeout.
    pub async fn for_cluster(&self, cluster: &Cluster) -> Result<ClusterBackend, GatewayError> {
        let dir = self.cluster_dir(cluster);
        match &cluster.config.registry {
            RegistryConfig::Embedded(_) => {
                let registry = self.embedded(cluster, &dir)?;
                let secret = self.embedded_secret(cluster, &dir)?;
                Ok(ClusterBackend {
                    registry,
                    dir,
                    secret,
                })
            }
            RegistryConfig::Zookeeper(zk_config) => {
                let (registry, secret) = self.zookeeper(cluster, zk_config).await?;
                Ok(ClusterBackend {
                    registry,
                    dir,
                    secret,
                })
            }
        }
    }

    /// The secret of an embedded registry's cluster: its configured one, or the one kept in
    /// `dir`, read from the file the first time only.
    fn embedded_secret(&self, cluster: &Cluster, dir: &Path) -> Result<EngineSecret, GatewayError> {
        if cluster.config.internal_secret.is_some() {
            return secret::engine_secret(cluster, dir);
        }
        if let Some(kept) = self.embedded_secrets.get(dir) {
            return Ok(kept.clone());
        }
        let read = secret::engine_secret(cluster, dir)?;
        Ok(self
            .embedded_secrets
            .entry(dir.to_path_buf())
            .or_insert(read)
            .clone())
    }

    fn embedded(&self, cluster: &Cluster, dir: &Path) -> Result<Arc<dyn Registry>, GatewayError> {
        if let Some(registry) = self.embedded.get(dir) {
            return Ok(registry.clone());
        }
        let registry: Arc<dyn Registry> = Arc::new(EmbeddedRegistry::open(dir).map_err(|e| {
            GatewayError::Config(format!(
                "cannot open the embedded registry of cluster `{}` in {}: {e}",
                cluster.name,
                dir.display()
            ))
        })?);
        Ok(self
            .embedded
            .entry(dir.to_path_buf())
            .or_insert(registry)
            .clone())
    }

    /// The ensemble's registry (opened or reopened as needed) and the cluster's secret, all
    /// within the ensemble's connect timeout.
    async fn zookeeper(
        &self,
        cluster: &Cluster,
        config: &ZookeeperConfig,
    ) -> Result<(Arc<dyn Registry>, EngineSecret), GatewayError> {
        let ensemble = ensemble_of(config);
        let slot = self.ensembles.entry(ensemble.clone()).or_default().clone();
        let bound = ensemble.connect_timeout;
        let resolving = async {
            let (registry, client) = slot.connected(&ensemble).await?;
            let secret = match &cluster.config.internal_secret {
                Some(secret) => secret.0.clone(),
                None => slot.secret(&client, &config.namespace, bound).await?,
            };
            Ok::<_, String>((registry, EngineSecret::new(secret)))
        };
        let unreachable = |reason: String| GatewayError::RegistryUnavailable {
            cluster: cluster.name.clone(),
            reason,
        };
        match tokio::time::timeout(bound, resolving).await {
            Ok(result) => result.map_err(unreachable),
            Err(_) => Err(unreachable(format!(
                "the ZooKeeper ensemble {} has not answered for {}; check that its servers are running and reachable",
                ensemble.addresses,
                crate::duration::format(bound)
            ))),
        }
    }
}

impl EnsembleSlot {
    /// The registry and the gateway's session, once that session is connected: opened when
    /// missing, opened again when the session ended (expired after an outage, or a wiped
    /// ensemble). Unbounded: the caller bounds it.
    async fn connected(
        &self,
        ensemble: &Ensemble,
    ) -> Result<(Arc<dyn Registry>, zk::Client), String> {
        // A session that ends while we wait for it (the ensemble came back without it) is
        // replaced once; a second one ending at once means something else is wrong.
        for _ in 0..2 {
            let (registry, client) = self.open(ensemble).await?;
            match wait_connected(&client).await {
                Ok(()) => return Ok((registry, client)),
                Err(state) => {
                    tracing::info!(addresses = %ensemble.addresses, ?state, "the gateway's ZooKeeper session ended; opening a new one")
                }
            }
        }
        Err(format!(
            "the ZooKeeper ensemble {} keeps ending new sessions",
            ensemble.addresses
        ))
    }

    /// The open registry and the gateway's session: the registry is opened once (it keeps
    /// its own sessions alive, re-registering after expiry); the gateway's session is opened
    /// again when it ended.
    async fn open(&self, ensemble: &Ensemble) -> Result<(Arc<dyn Registry>, zk::Client), String> {
        let mut open = self.open.lock().await;
        match open.as_mut() {
            Some(opened) if !opened.client.state().is_terminated() => {}
            Some(opened) => {
                opened.client = ensemble.connect().await?;
                self.restore_secrets(&opened.client, ensemble).await?;
            }
            None => {
                let opened = open_ensemble(ensemble).await?;
                self.restore_secrets(&opened.client, ensemble).await?;
                *open = Some(opened);
            }
        }
        let opened = open.as_ref().expect("opened above");
        Ok((opened.registry.clone(), opened.client.clone()))
    }

    /// A wiped ensemble lost the secrets engines were launched with: puts back the ones this
    /// gateway knows (a no-op for those still there).
    async fn restore_secrets(
        &self,
        client: &zk::Client,
        ensemble: &Ensemble,
    ) -> Result<(), String> {
        for (namespace, secret) in self.known_secrets() {
            secret::zookeeper_secret(client, &namespace, ensemble.connect_timeout, Some(&secret))
                .await?;
        }
        Ok(())
    }

    /// The secret of `namespace`: remembered, or read (or created) in ZooKeeper once.
    async fn secret(
        &self,
        client: &zk::Client,
        namespace: &str,
        timeout: std::time::Duration,
    ) -> Result<String, String> {
        if let Some(secret) = self.lock_secrets().get(namespace) {
            return Ok(secret.clone());
        }
        let secret = secret::zookeeper_secret(client, namespace, timeout, None).await?;
        self.lock_secrets()
            .insert(namespace.to_owned(), secret.clone());
        Ok(secret)
    }

    fn known_secrets(&self) -> Vec<(String, String)> {
        self.lock_secrets()
            .iter()
            .map(|(namespace, secret)| (namespace.clone(), secret.clone()))
            .collect()
    }

    /// std Mutex: held for a map access, never across an await.
    fn lock_secrets(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.secrets.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The connection settings of a cluster's ensemble.
fn ensemble_of(config: &ZookeeperConfig) -> Ensemble {
    Ensemble {
        addresses: config.addresses.trim().to_owned(),
        session_timeout: config.session_timeout,
        connect_timeout: config.connect_timeout,
    }
}

/// Opens the registry and the gateway's own session on `ensemble`.
async fn open_ensemble(ensemble: &Ensemble) -> Result<OpenEnsemble, String> {
    let client = ensemble.connect().await?;
    let location = ZooKeeperLocation {
        addresses: ensemble.addresses.clone(),
        session_timeout: ensemble.session_timeout,
        connect_timeout: ensemble.connect_timeout,
    };
    let registry = ZooKeeperRegistry::connect(location)
        .await
        .map_err(|e| e.to_string())?;
    tracing::info!(addresses = %ensemble.addresses, "opened the ZooKeeper registry");
    Ok(OpenEnsemble {
        registry: Arc::new(registry),
        client,
    })
}

/// Returns once `client` is connected; the state it ended in if its session ended instead.
/// Waits while the ensemble is unreachable: the caller bounds it.
async fn wait_connected(client: &zk::Client) -> Result<(), zk::SessionState> {
    let mut states = client.state_watcher();
    let mut state = states.state();
    loop {
        match state {
            zk::SessionState::SyncConnected | zk::SessionState::ConnectedReadOnly => return Ok(()),
            ended if ended.is_terminated() => return Err(ended),
            _ => state = states.changed().await,
        }
    }
}

#[cfg(test)]
mod tests;
