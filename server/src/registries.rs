//! The engine registry of each cluster, opened once per distinct location and shared.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dashmap::DashMap;
use kumiho_engine_launcher::{EmbeddedRegistry, Registry};

use crate::cluster::{Cluster, RegistryConfig};
use crate::errors::GatewayError;

/// Opens registries on first use; clusters naming the same location share one.
pub struct Registries {
    work_dir: PathBuf,
    embedded: DashMap<PathBuf, Arc<dyn Registry>>,
}

impl Registries {
    pub fn new(work_dir: &Path) -> Self {
        Self {
            work_dir: work_dir.to_path_buf(),
            embedded: DashMap::new(),
        }
    }

    /// The directory an embedded registry of `cluster` keeps its tree under (`DIR/registry`)
    /// and its engines' logs (`DIR/engines`).
    pub fn embedded_dir(&self, cluster: &Cluster) -> Option<PathBuf> {
        match &cluster.config.registry {
            RegistryConfig::Embedded(embedded) => Some(
                embedded
                    .root
                    .clone()
                    .unwrap_or_else(|| self.work_dir.clone()),
            ),
            RegistryConfig::Zookeeper(_) => None,
        }
    }

    /// The registry `cluster` names, and the directory its tree, secret and engine logs are
    /// kept under.
    pub fn for_cluster(
        &self,
        cluster: &Cluster,
    ) -> Result<(Arc<dyn Registry>, PathBuf), GatewayError> {
        let Some(dir) = self.embedded_dir(cluster) else {
            return Err(GatewayError::Config(format!(
                "cluster `{}` uses a ZooKeeper registry, which this gateway version does not support yet; use `registry: {{embedded: {{}}}}`",
                cluster.name
            )));
        };
        if let Some(registry) = self.embedded.get(&dir) {
            return Ok((registry.clone(), dir));
        }
        let registry: Arc<dyn Registry> = Arc::new(EmbeddedRegistry::open(&dir).map_err(|e| {
            GatewayError::Config(format!(
                "cannot open the embedded registry of cluster `{}` in {}: {e}",
                cluster.name,
                dir.display()
            ))
        })?);
        let registry = self.embedded.entry(dir.clone()).or_insert(registry).clone();
        Ok((registry, dir))
    }
}
