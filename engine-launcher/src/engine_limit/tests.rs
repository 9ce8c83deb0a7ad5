//! Which top-level registry nodes hold a namespace's engines.

use super::is_engine_root;

#[test]
fn every_share_level_type_and_version_of_the_namespace_is_an_engine_root() {
    for name in [
        "kumiho_0.1.0_USER_DATAFUSION",
        "kumiho_0.1.0_CONNECTION_SPARK_SQL",
        "kumiho_1.9.0_GROUP_DATAFUSION",
        "kumiho_0.2.0-rc1_SERVER_SPARK_SQL",
    ] {
        assert!(is_engine_root("kumiho", name), "{name} was not counted");
    }
}

#[test]
fn locks_pools_and_other_namespaces_are_not_engine_roots() {
    for name in [
        "kumiho_0.1.0_USER_DATAFUSION_lock",
        "kumiho_0.1.0_USER_DATAFUSION_pool",
        "kumiho_secret",
        "kumiho_launching",
        "kumiho_launching_lock",
        "kumiho",
        "kumiho__USER_DATAFUSION",
        "kumiho_b_0.1.0_USER_DATAFUSION",
        "kumihob_0.1.0_USER_DATAFUSION",
        "other_0.1.0_USER_DATAFUSION",
        "kumiho_0.1.0_USER_FLINK",
        "zookeeper",
    ] {
        assert!(!is_engine_root("kumiho", name), "{name} was counted");
    }
    assert!(is_engine_root("kumiho_b", "kumiho_b_0.1.0_USER_DATAFUSION"));
}
