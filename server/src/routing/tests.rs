use std::collections::BTreeMap;

use kumiho_engine_launcher::{EngineType, ShareLevel};

use super::*;

/// alice and carol are in `analysts`; everyone else is their own group.
struct Groups;

impl GroupProvider for Groups {
    fn primary_group(&self, user: &str) -> String {
        match user {
            "alice" | "carol" => "analysts".to_owned(),
            other => other.to_owned(),
        }
    }
}

struct Fixture {
    router: Router,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

fn fixture() -> Fixture {
    let clusters = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(clusters.path().join("default.yaml"), "super-users: [etl]\n").unwrap();
    std::fs::write(
        clusters.path().join("second.yaml"),
        "registry: {embedded: {namespace: second}}\nengine: {share-level: SERVER, idle-timeout: 5s}\nallowed-users: [alice]\nlimits: {query-timeout: 10m}\n",
    )
    .unwrap();
    let (registry, _) = ClusterRegistry::load(clusters.path()).unwrap();
    let router = Router {
        clusters: Arc::new(registry),
        registries: Arc::new(Registries::new(work.path())),
        groups: Arc::new(Groups),
        default_cluster: "default".to_owned(),
        max_pool_size: 3,
        server_user: "kumiho".to_owned(),
        version: "0.1.0".to_owned(),
    };
    Fixture {
        router,
        _dirs: (clusters, work),
    }
}

fn conf(pairs: &[(&str, &str)]) -> SessionConf {
    let raw: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    kumiho_thrift::session_conf::normalize(&raw).unwrap()
}

async fn space(f: &Fixture, user: &str, pairs: &[(&str, &str)]) -> String {
    f.router
        .route(user, &conf(pairs), "session-1")
        .await
        .unwrap()
        .engine_ref
        .engine_space()
}

#[tokio::test]
async fn share_levels_pick_the_engine_space() {
    let f = fixture();
    assert_eq!(
        space(&f, "alice", &[]).await,
        "/kumiho_0.1.0_USER_DATAFUSION/alice/default"
    );
    assert_eq!(
        space(
            &f,
            "alice",
            &[("set:hiveconf:kyuubi.engine.share.level", "CONNECTION")]
        )
        .await,
        "/kumiho_0.1.0_CONNECTION_DATAFUSION/alice/session-1"
    );
    assert_eq!(
        space(&f, "carol", &[("kyuubi.engine.share.level", "group")]).await,
        "/kumiho_0.1.0_GROUP_DATAFUSION/analysts/default"
    );
    assert_eq!(
        space(&f, "bob", &[("kyuubi.engine.share.level", "SERVER")]).await,
        "/kumiho_0.1.0_SERVER_DATAFUSION/kumiho/default"
    );
    assert_eq!(
        space(&f, "bob", &[("kyuubi.engine.share.level.subdomain", "A")]).await,
        "/kumiho_0.1.0_USER_DATAFUSION/bob/a"
    );
}

#[tokio::test]
async fn polling_pools_take_turns_and_are_capped() {
    let f = fixture();
    let pool = [
        ("kyuubi.engine.pool.size", "10"),
        ("kyuubi.engine.pool.selectPolicy", "POLLING"),
    ];
    let mut spaces = Vec::new();
    for _ in 0..4 {
        spaces.push(space(&f, "alice", &pool).await);
    }
    // Capped at max-pool-size 3: the fourth session is back at the first engine.
    assert_eq!(spaces[0], spaces[3]);
    spaces.truncate(3);
    spaces.sort();
    spaces.dedup();
    assert_eq!(spaces.len(), 3, "{spaces:?}");
    assert!(spaces
        .iter()
        .all(|s| s.starts_with("/kumiho_0.1.0_USER_DATAFUSION/alice/engine-pool-")));
}

#[tokio::test]
async fn the_session_cluster_brings_its_own_settings() {
    let f = fixture();
    let route = f
        .router
        .route(
            "alice",
            &conf(&[("set:hiveconf:kyuubi.session.cluster", "second")]),
            "s",
        )
        .await
        .unwrap();
    assert_eq!(route.cluster.name, "second");
    assert_eq!(route.engine_ref.share_level, ShareLevel::Server);
    assert_eq!(route.engine_ref.engine_type, EngineType::DataFusion);
    assert_eq!(route.idle_timeout, Duration::from_secs(5));
    assert!(route.engine_ref.engine_space().starts_with("/second_"));
}

#[tokio::test]
async fn refusals_say_what_to_change() {
    let f = fixture();
    let err = f
        .router
        .route("alice", &conf(&[("kyuubi.session.cluster", "nope")]), "s")
        .await
        .unwrap_err();
    assert!(matches!(err, GatewayError::BadRequest(_)));
    assert!(err.to_string().contains("default, second"), "{err}");

    let err = f
        .router
        .route("bob", &conf(&[("kyuubi.session.cluster", "second")]), "s")
        .await
        .unwrap_err();
    assert!(
        matches!(err, GatewayError::Refused(_)) && err.to_string().contains("allowed-users"),
        "{err}"
    );

    let err = f
        .router
        .route("bob", &conf(&[("hive.server2.proxy.user", "alice")]), "s")
        .await
        .unwrap_err();
    assert!(
        matches!(err, GatewayError::Refused(_)) && err.to_string().contains("super-users"),
        "{err}"
    );

    let err = f
        .router
        .route("bob", &conf(&[("kyuubi.engine.share.level", "TEAM")]), "s")
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("CONNECTION, USER, GROUP, SERVER"),
        "{err}"
    );

    let err = f
        .router
        .route(
            "bob",
            &conf(&[("kyuubi.session.engine.idle.timeout", "soon")]),
            "s",
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains(keys::IDLE_TIMEOUT), "{err}");
}

#[tokio::test]
async fn super_users_may_impersonate() {
    let f = fixture();
    let route = f
        .router
        .route("etl", &conf(&[("kyuubi.session.proxy.user", "alice")]), "s")
        .await
        .unwrap();
    assert_eq!(
        (route.user.as_str(), route.login_user.as_str()),
        ("alice", "etl")
    );
    assert_eq!(route.engine_ref.routing_user, "alice");
}

/// A cluster `locked` whose rules restrict code-running keys and ignore the UI switch.
fn with_locked_cluster(f: &Fixture) {
    let dir = f._dirs.0.path();
    std::fs::write(
        dir.join("locked.yaml"),
        "super-users: [etl]\nsession-conf:\n  restrict: [spark.jars, spark.driver.*]\n  ignore: [spark.ui.enabled, kyuubi.engine.share.level]\n",
    )
    .unwrap();
    f.router.clusters.reload().unwrap();
}

#[tokio::test]
async fn restricted_keys_refuse_the_session_naming_key_and_cluster() {
    let f = fixture();
    with_locked_cluster(&f);
    for (user, key) in [
        ("alice", "set:hiveconf:spark.jars"),
        ("alice", "set:hivevar:spark.driver.extraJavaOptions"),
        // Super users are not exempt, as in Kyuubi.
        ("etl", "spark.jars"),
    ] {
        let err = f
            .router
            .route(
                user,
                &conf(&[("kyuubi.session.cluster", "locked"), (key, "x")]),
                "s",
            )
            .await
            .unwrap_err();
        let bare = key.rsplit(':').next().unwrap();
        assert!(matches!(err, GatewayError::Refused(_)), "{err:?}");
        let message = err.to_string();
        assert!(
            message.contains(&format!("`{bare}`")) && message.contains("`locked`"),
            "{message}"
        );
    }
    // Other clusters have no rules.
    let route = f
        .router
        .route("alice", &conf(&[("spark.jars", "/tmp/x.jar")]), "s")
        .await
        .unwrap();
    assert_eq!(route.conf.settings["spark.jars"], "/tmp/x.jar");
}

#[tokio::test]
async fn ignored_keys_are_dropped_before_routing_reads_them() {
    let f = fixture();
    with_locked_cluster(&f);
    let route = f
        .router
        .route(
            "alice",
            &conf(&[
                ("kyuubi.session.cluster", "locked"),
                ("set:hiveconf:spark.ui.enabled", "true"),
                ("kyuubi.engine.share.level", "SERVER"),
                ("spark.sql.shuffle.partitions", "3"),
            ]),
            "s",
        )
        .await
        .unwrap();
    assert_eq!(
        route.ignored_keys,
        ["kyuubi.engine.share.level", "spark.ui.enabled"]
    );
    // The ignored share level never applied: the cluster's default (USER) did.
    assert_eq!(route.engine_ref.share_level, ShareLevel::User);
    assert!(!route.conf.settings.contains_key("spark.ui.enabled"));
    assert_eq!(route.conf.settings["spark.sql.shuffle.partitions"], "3");
}

#[tokio::test]
async fn a_statements_query_timeout_is_capped_by_the_cluster_and_the_session() {
    let f = fixture();
    let route = |pairs: &'static [(&'static str, &'static str)]| {
        let mut pairs = pairs.to_vec();
        pairs.push(("kyuubi.session.cluster", "second"));
        let router = &f.router;
        async move { router.route("alice", &conf(&pairs), "s").await }
    };
    // The cluster's cap: a client's longer timeout, or none, is cut to it.
    let capped = route(&[]).await.unwrap();
    assert_eq!(capped.query_timeout, Some(Duration::from_secs(600)));
    assert_eq!(capped.capped_query_timeout(None), Some(600));
    assert_eq!(capped.capped_query_timeout(Some(0)), Some(600));
    assert_eq!(capped.capped_query_timeout(Some(3600)), Some(600));
    assert_eq!(capped.capped_query_timeout(Some(5)), Some(5));
    // A session shortens it (to at least a second), and cannot lengthen it.
    let shorter = route(&[(keys::QUERY_TIMEOUT, "PT0.5S")]).await.unwrap();
    assert_eq!(shorter.capped_query_timeout(Some(30)), Some(1));
    let longer = route(&[(keys::QUERY_TIMEOUT, "2h")]).await.unwrap();
    assert_eq!(longer.query_timeout, Some(Duration::from_secs(600)));
    // Without a cap, the client's own timeout stands.
    let free = f.router.route("bob", &conf(&[]), "s").await.unwrap();
    assert_eq!(free.query_timeout, None);
    assert_eq!(free.capped_query_timeout(Some(7)), Some(7));
    assert_eq!(free.capped_query_timeout(None), None);
    let bad = route(&[(keys::QUERY_TIMEOUT, "soon")]).await.unwrap_err();
    assert!(bad.to_string().contains(keys::QUERY_TIMEOUT), "{bad}");
}
