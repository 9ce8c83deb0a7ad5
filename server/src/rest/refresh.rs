//! Kyuubi's `POST /api/v1/admin/refresh/{what}` calls (`kyuubi-admin refresh config ...`), mapped onto what Kumiho reloads: its cluster configs.
//!
//! Kyuubi rereads its server's Hadoop configuration, its `___user___.` defaults, its
//! Kubernetes contexts and its lists of unlimited users, denied users and denied IPs; in
//! Kumiho all of these live in the cluster files of `cluster-configs/` (a cluster's `env` with
//! `HADOOP_CONF_DIR`, its engine and session settings, its `deny-users`, `deny-ips` and
//! `limits.unlimited-users`), which the gateway watches. Each call rereads the directory at
//! once, as the watcher would, and says what changed; a broken file keeps its last good
//! version and the answer names it (503: the operator's configuration does not take effect).

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Response, StatusCode};
use kumiho_thrift::server::text_response;

use crate::cluster::{ClusterRegistry, LoadError, ReloadReport};
use crate::errors::GatewayError;

/// What a refresh call names, in Kyuubi's words ("deny users"); every one rereads the
/// cluster configs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refresh(&'static str);

impl Refresh {
    /// The refresh of a path's last part (Kyuubi's names), or `None` (404).
    pub fn parse(what: &str) -> Option<Refresh> {
        Some(Refresh(match what {
            "hadoop_conf" => "hadoop conf",
            "user_defaults_conf" => "user defaults conf",
            "kubernetes_conf" => "kubernetes conf",
            "unlimited_users" => "unlimited users",
            "deny_users" => "deny users",
            "deny_ips" => "deny ips",
            _ => return None,
        }))
    }

    /// What the call does in words of Kyuubi's ("refresh the deny users").
    pub fn describe(self) -> String {
        format!("refresh the {}", self.0)
    }
}

/// Answers a refresh call of an administrator (`may_read`: whether they may read the
/// parser's message about a cluster's file, which may quote its values).
pub async fn refresh(
    what: Refresh,
    clusters: Arc<ClusterRegistry>,
    may_read: impl Fn(&str) -> bool,
) -> Result<Response<Full<Bytes>>, GatewayError> {
    let name = what.0;
    // File reads, off the runtime's threads (as the watcher's rereads).
    let rereading = clusters.clone();
    let reloaded = tokio::task::spawn_blocking(move || reload(&rereading))
        .await
        .map_err(|e| GatewayError::Internal(format!("the cluster config reread failed: {e}")))?
        .map_err(GatewayError::Config)?;
    let clusters = &*clusters;
    let summary = reloaded.summary(clusters);
    if reloaded.broken.is_empty() {
        tracing::info!(%summary, "cluster configs reread for an administrator");
        return Ok(text_response(
            StatusCode::OK,
            format!("Refresh the {name} successfully: {summary}.\n"),
        ));
    }
    let broken: Vec<String> = reloaded
        .broken
        .iter()
        .map(|error| describe_error(error, clusters, &may_read))
        .collect();
    Err(GatewayError::Config(format!(
        "{}; {summary}",
        broken.join("; ")
    )))
}

/// What a reread found.
struct Reloaded {
    report: ReloadReport,
    /// Every cluster file broken now, whether this reread or an earlier one found it.
    broken: Vec<LoadError>,
}

/// Rereads the directory into `clusters` (as the watcher does), and finds every file broken
/// now: the reread reports only files changed since the last read, so a file the watcher
/// already found broken is found again by loading the directory afresh, apart (which changes
/// nothing in force).
fn reload(clusters: &ClusterRegistry) -> Result<Reloaded, String> {
    let report = clusters.reload()?;
    crate::cluster::watcher::log_report(&report);
    let (_, fresh) = ClusterRegistry::load(clusters.dir())?;
    let mut broken = report.errors.clone();
    for error in fresh.errors {
        if broken.iter().all(|known| known.file != error.file) {
            broken.push(LoadError {
                kept_previous: clusters.get(&cluster_name(&error.file)).is_ok(),
                ..error
            });
        }
    }
    broken.sort_by(|a, b| a.file.cmp(&b.file));
    Ok(Reloaded { report, broken })
}

impl Reloaded {
    /// `added: a; changed: b; removed: c; in force: a, b, d` (what is empty left out).
    fn summary(&self, clusters: &ClusterRegistry) -> String {
        let report = &self.report;
        let mut parts = Vec::new();
        for (what, names) in [
            ("added", &report.added),
            ("changed", &report.changed),
            ("removed", &report.removed),
        ] {
            if !names.is_empty() {
                parts.push(format!("{what}: {}", names.join(", ")));
            }
        }
        if parts.is_empty() {
            parts.push("no cluster changed".to_owned());
        }
        parts.push(format!(
            "clusters in force: {}",
            clusters.names().join(", ")
        ));
        format!(
            "the cluster configs in {} were reread; {}",
            clusters.dir().display(),
            parts.join("; ")
        )
    }
}

/// A broken file, with the parser's message for an administrator of its cluster (it may quote
/// a value of the file); others are sent to the gateway's log.
fn describe_error(
    error: &LoadError,
    clusters: &ClusterRegistry,
    may_read: impl Fn(&str) -> bool,
) -> String {
    let name = cluster_name(&error.file);
    let kept = match error.kept_previous {
        true => "its last good version stays in force".to_owned(),
        false => format!("cluster `{name}` has no working version"),
    };
    let readable = clusters.get(&name).is_ok_and(|_| may_read(&name));
    match readable {
        true => format!(
            "cluster config {} is broken: {} ({kept})",
            error.file.display(),
            error.message
        ),
        false => format!(
            "cluster config {} is broken ({kept}); the gateway's log says where",
            error.file.display()
        ),
    }
}

/// The cluster a file defines: its name without the extension.
fn cluster_name(file: &Path) -> String {
    file.file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kyuubis_refresh_names_are_described_in_kyuubis_words() {
        let described = |what| Refresh::parse(what).map(Refresh::describe);
        assert_eq!(
            described("user_defaults_conf").as_deref(),
            Some("refresh the user defaults conf")
        );
        assert_eq!(
            described("deny_ips").as_deref(),
            Some("refresh the deny ips")
        );
        assert_eq!(described("everything"), None);
    }

    /// `refresh/hadoop_conf` by an administrator who may read the parser's messages, or not.
    async fn reread(
        clusters: &Arc<ClusterRegistry>,
        may_read: bool,
    ) -> Result<Response<Full<Bytes>>, GatewayError> {
        refresh(
            Refresh::parse("hadoop_conf").unwrap(),
            clusters.clone(),
            move |_| may_read,
        )
        .await
    }

    #[tokio::test]
    async fn a_file_broken_before_the_refresh_is_named_and_its_good_version_stays() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("prod.yaml");
        std::fs::write(&file, "super-users: [ops]\n").unwrap();
        let clusters = Arc::new(ClusterRegistry::load(dir.path()).unwrap().0);
        std::fs::write(&file, "super-users: [ops\n").unwrap();
        // The watcher's reread finds it broken first; the refresh must still say so.
        assert_eq!(clusters.reload().unwrap().errors.len(), 1);
        let refused = reread(&clusters, true).await.unwrap_err();
        let message = refused.to_string();
        assert!(
            message.contains("prod.yaml is broken: ")
                && message.contains("its last good version stays in force"),
            "{message}"
        );
        assert!(clusters.get("prod").unwrap().config.is_super_user("ops"));
        let hidden = reread(&clusters, false).await.unwrap_err();
        assert!(
            hidden.to_string().contains("the gateway's log says where"),
            "{hidden}"
        );

        std::fs::write(&file, "super-users: [ops, dev]\n").unwrap();
        let answer = reread(&clusters, true).await.unwrap();
        assert_eq!(answer.status(), StatusCode::OK);
        assert!(clusters.get("prod").unwrap().config.is_super_user("dev"));
    }
}
