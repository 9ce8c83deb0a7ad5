//! Keeps the [`ClusterRegistry`] in step with its directory: file events plus a periodic rescan.
//!
//! The DIRECTORY is watched, not the files: Kubernetes updates a mounted ConfigMap by
//! writing a new hidden directory and renaming the `..data` symlink over the old one, so
//! the files' own inodes never change. A rescan at a fixed interval covers events that a
//! file system does not deliver (network mounts, overflowing event queues).

use std::sync::Arc;
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{ClusterRegistry, ReloadReport};

/// Starts watching at once (a change made after this returns is seen), then reloads on every
/// change notice and every `rescan` until `shutdown` fires.
pub fn spawn(
    registry: Arc<ClusterRegistry>,
    rescan: Duration,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    // One pending notice is enough: a reload reads the whole directory.
    let (notify_tx, notices) = mpsc::channel::<()>(1);
    let watcher = match watch_directory(&registry, notify_tx) {
        Ok(watcher) => Some(watcher),
        Err(e) => {
            tracing::warn!(
                dir = %registry.dir().display(),
                error = %e,
                rescan = %crate::duration::format(rescan),
                "cannot watch the cluster-configs directory; relying on the periodic rescan"
            );
            None
        }
    };
    tokio::spawn(run(registry, watcher, notices, rescan, shutdown))
}

async fn run(
    registry: Arc<ClusterRegistry>,
    // Held only to keep the watch alive while the loop runs.
    _watcher: Option<RecommendedWatcher>,
    mut notices: mpsc::Receiver<()>,
    rescan: Duration,
    shutdown: CancellationToken,
) {
    let mut ticks = tokio::time::interval(rescan);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await; // the first tick is immediate; the registry was just loaded
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            Some(()) = notices.recv() => {}
            _ = ticks.tick() => {}
        }
        let registry = registry.clone();
        match tokio::task::spawn_blocking(move || registry.reload()).await {
            Ok(Ok(report)) => log_report(&report),
            Ok(Err(e)) => {
                tracing::error!(error = %e, "cluster configs not reloaded; the clusters in force stay")
            }
            Err(e) => tracing::error!(error = %e, "cluster config reload task failed"),
        }
    }
    tracing::debug!("cluster config watcher stopped");
}

fn watch_directory(
    registry: &ClusterRegistry,
    notices: mpsc::Sender<()>,
) -> notify::Result<RecommendedWatcher> {
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.as_ref().is_ok_and(|event| event.kind.is_access()) {
            return;
        }
        // Full means a reload is already pending, which will see this change too.
        let _ = notices.try_send(());
    })?;
    watcher.watch(registry.dir(), RecursiveMode::NonRecursive)?;
    Ok(watcher)
}

/// Logs what a reload changed; a broken file is an error with its name and line.
pub fn log_report(report: &ReloadReport) {
    for name in &report.added {
        tracing::info!(cluster = %name, "cluster added");
    }
    for name in &report.changed {
        tracing::info!(cluster = %name, "cluster reloaded");
    }
    for name in &report.removed {
        tracing::info!(cluster = %name, "cluster removed");
    }
    for error in &report.errors {
        tracing::error!("{error}");
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    async fn wait_for_change(changes: &mut tokio::sync::watch::Receiver<u64>) {
        tokio::time::timeout(Duration::from_secs(20), changes.changed())
            .await
            .expect("the watcher saw no change within 20 s")
            .unwrap();
    }

    fn start(dir: &Path, rescan: Duration) -> (Arc<ClusterRegistry>, CancellationToken) {
        let (registry, _) = ClusterRegistry::load(dir).unwrap();
        let registry = Arc::new(registry);
        let shutdown = CancellationToken::new();
        spawn(registry.clone(), rescan, shutdown.clone());
        (registry, shutdown)
    }

    #[tokio::test]
    async fn an_edit_is_seen_without_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("default.yaml"),
            "engine: {share-level: USER}\n",
        )
        .unwrap();
        // A rescan interval far beyond the test: only the file event can trigger the reload.
        let (registry, shutdown) = start(dir.path(), Duration::from_secs(3600));
        let mut changes = registry.subscribe();
        std::fs::write(
            dir.path().join("second.yaml"),
            "engine: {share-level: SERVER}\n",
        )
        .unwrap();
        while registry.get("second").is_err() {
            wait_for_change(&mut changes).await;
        }
        assert_eq!(
            registry.get("second").unwrap().config.engine.share_level,
            kumiho_engine_launcher::ShareLevel::Server
        );
        shutdown.cancel();
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn kubernetes_symlink_swap_is_seen() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let publish = |version: &str, share_level: &str| {
            let data = root.join(version);
            std::fs::create_dir(&data).unwrap();
            std::fs::write(
                data.join("default.yaml"),
                format!("engine: {{share-level: {share_level}}}\n"),
            )
            .unwrap();
            symlink(version, root.join("..data_tmp")).unwrap();
            std::fs::rename(root.join("..data_tmp"), root.join("..data")).unwrap();
        };
        publish("..2026_01", "USER");
        symlink("..data/default.yaml", root.join("default.yaml")).unwrap();
        let (registry, shutdown) = start(root, Duration::from_secs(3600));
        assert_eq!(
            registry.get("default").unwrap().config.engine.share_level,
            kumiho_engine_launcher::ShareLevel::User
        );
        let mut changes = registry.subscribe();
        publish("..2026_02", "GROUP");
        while registry.get("default").unwrap().config.engine.share_level
            != kumiho_engine_launcher::ShareLevel::Group
        {
            wait_for_change(&mut changes).await;
        }
        shutdown.cancel();
    }
}
