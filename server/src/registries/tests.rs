use std::time::Duration;

use kumiho_engine_launcher::testing::ZooKeeperServer;

use super::*;
use crate::cluster::ClusterConfig;

fn zookeeper_cluster(name: &str, addresses: &str, session_timeout: &str) -> Cluster {
    let config = ClusterConfig::from_yaml(&format!(
        "registry:\n  zookeeper:\n    addresses: {addresses}\n    namespace: {name}\n    \
         session-timeout: {session_timeout}\n    connect-timeout: 10s\n"
    ))
    .unwrap();
    Cluster {
        name: name.to_owned(),
        source: PathBuf::from(format!("{name}.yaml")),
        config,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clusters_on_one_ensemble_share_a_registry_only_with_the_same_timeouts() {
    let zookeeper = ZooKeeperServer::start().await;
    let work = tempfile::tempdir().unwrap();
    let registries = Registries::new(work.path());
    let a = zookeeper_cluster("a", &zookeeper.address(), "20s");
    let b = zookeeper_cluster("b", &zookeeper.address(), "20s");
    let c = zookeeper_cluster("c", &zookeeper.address(), "6s");

    let a = registries.for_cluster(&a).await.unwrap().registry;
    let b = registries.for_cluster(&b).await.unwrap().registry;
    let c = registries.for_cluster(&c).await.unwrap().registry;
    assert!(
        Arc::ptr_eq(&a, &b),
        "clusters with the same ensemble and timeouts share one"
    );
    assert!(
        !Arc::ptr_eq(&a, &c),
        "cluster c's 6s session timeout was replaced by cluster a's 20s"
    );
    match c.location() {
        kumiho_engine_launcher::RegistryLocation::ZooKeeper(location) => {
            assert_eq!(location.session_timeout, Duration::from_secs(6))
        }
        other => panic!("cluster c's registry is not on ZooKeeper: {other:?}"),
    }
}
