//! Engine references: wire names, registry paths per share level, subdomains and pools.

use super::*;
use crate::registry::embedded::EmbeddedRegistry;

struct FixedGroup;

impl GroupProvider for FixedGroup {
    fn primary_group(&self, _user: &str) -> String {
        "analysts".to_owned()
    }
}

fn request(share_level: ShareLevel) -> EngineRefRequest {
    EngineRefRequest {
        namespace: "kumiho".to_owned(),
        version: "0.1.0".to_owned(),
        session_user: "alice".to_owned(),
        server_user: "kumiho".to_owned(),
        session_id: "3f2a".to_owned(),
        share_level,
        engine_type: EngineType::DataFusion,
        subdomain: None,
        pool: None,
        max_pool_size: 9,
    }
}

async fn resolve(request: &EngineRefRequest) -> Result<EngineRef, EngineRefError> {
    let dir = tempfile::tempdir().unwrap();
    let registry = EmbeddedRegistry::open(dir.path()).unwrap();
    EngineRef::resolve(request, &FixedGroup, &registry).await
}

#[test]
fn wire_names_parse_case_insensitively_and_errors_list_valid_values() {
    assert_eq!(
        "connection".parse::<ShareLevel>(),
        Ok(ShareLevel::Connection)
    );
    assert_eq!(" Group ".parse::<ShareLevel>(), Ok(ShareLevel::Group));
    assert_eq!("spark_sql".parse::<EngineType>(), Ok(EngineType::SparkSql));
    assert_eq!(
        "DATAFUSION".parse::<EngineType>(),
        Ok(EngineType::DataFusion)
    );
    assert_eq!(
        "polling".parse::<PoolSelectPolicy>(),
        Ok(PoolSelectPolicy::Polling)
    );
    let error = "TEAM".parse::<ShareLevel>().unwrap_err().to_string();
    assert_eq!(
        error,
        "`TEAM` is not a valid share level; use one of CONNECTION, USER, GROUP, SERVER"
    );
    assert_eq!(EngineType::SparkSql.to_string(), "SPARK_SQL");
}

#[tokio::test]
async fn user_level_paths_follow_kyuubi() {
    let engine = resolve(&request(ShareLevel::User)).await.unwrap();
    assert_eq!(
        engine.engine_space(),
        "/kumiho_0.1.0_USER_DATAFUSION/alice/default"
    );
    assert_eq!(
        engine.lock_path(),
        "/kumiho_0.1.0_USER_DATAFUSION_lock/alice/default"
    );
    assert_eq!(engine.id(), "USER-DATAFUSION-alice-default");
}

#[tokio::test]
async fn routing_user_depends_on_share_level() {
    let connection = resolve(&request(ShareLevel::Connection)).await.unwrap();
    assert_eq!(
        connection.engine_space(),
        "/kumiho_0.1.0_CONNECTION_DATAFUSION/alice/3f2a"
    );
    let group = resolve(&request(ShareLevel::Group)).await.unwrap();
    assert_eq!(
        group.engine_space(),
        "/kumiho_0.1.0_GROUP_DATAFUSION/analysts/default"
    );
    assert_eq!(group.session_user, "alice");
    let server = resolve(&request(ShareLevel::Server)).await.unwrap();
    assert_eq!(
        server.engine_space(),
        "/kumiho_0.1.0_SERVER_DATAFUSION/kumiho/default"
    );
}

#[tokio::test]
async fn subdomain_is_lower_cased_and_beats_the_pool() {
    let mut asked = request(ShareLevel::User);
    asked.subdomain = Some("ETL".to_owned());
    asked.pool = Some(PoolRequest {
        size: 3,
        name: PoolRequest::DEFAULT_NAME.to_owned(),
        policy: PoolSelectPolicy::Random,
    });
    assert_eq!(resolve(&asked).await.unwrap().subdomain, "etl");
}

#[tokio::test]
async fn connection_level_ignores_the_subdomain() {
    let mut asked = request(ShareLevel::Connection);
    asked.subdomain = Some("etl".to_owned());
    assert_eq!(resolve(&asked).await.unwrap().subdomain, "3f2a");
}

#[tokio::test]
async fn random_pool_members_stay_within_the_capped_size() {
    let mut asked = request(ShareLevel::User);
    asked.max_pool_size = 2;
    asked.pool = Some(PoolRequest {
        size: 50,
        name: "Pool".to_owned(),
        policy: PoolSelectPolicy::Random,
    });
    for _ in 0..20 {
        let subdomain = resolve(&asked).await.unwrap().subdomain;
        assert!(
            ["pool-0", "pool-1"].contains(&subdomain.as_str()),
            "{subdomain}"
        );
    }
}

#[tokio::test]
async fn polling_pool_members_take_turns_through_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let registry = EmbeddedRegistry::open(dir.path()).unwrap();
    let mut asked = request(ShareLevel::User);
    asked.pool = Some(PoolRequest {
        size: 2,
        name: PoolRequest::DEFAULT_NAME.to_owned(),
        policy: PoolSelectPolicy::Polling,
    });
    let mut seen = Vec::new();
    for _ in 0..3 {
        let engine = EngineRef::resolve(&asked, &FixedGroup, &registry)
            .await
            .unwrap();
        seen.push(engine.subdomain);
    }
    assert_eq!(seen, ["engine-pool-0", "engine-pool-1", "engine-pool-0"]);
}

#[tokio::test]
async fn a_pool_of_zero_or_less_is_no_pool() {
    let mut asked = request(ShareLevel::User);
    asked.pool = Some(PoolRequest {
        size: -1,
        name: PoolRequest::DEFAULT_NAME.to_owned(),
        policy: PoolSelectPolicy::Random,
    });
    assert_eq!(resolve(&asked).await.unwrap().subdomain, "default");
}

#[tokio::test]
async fn names_that_would_escape_the_registry_are_refused() {
    let mut asked = request(ShareLevel::User);
    asked.subdomain = Some("../../etc".to_owned());
    let error = resolve(&asked).await.unwrap_err().to_string();
    assert!(
        error.starts_with("engine subdomain `../../etc` cannot be used"),
        "{error}"
    );

    let mut asked = request(ShareLevel::User);
    asked.session_user = "a/b".to_owned();
    assert!(matches!(
        resolve(&asked).await,
        Err(EngineRefError::BadName { what: "user", .. })
    ));
}

#[test]
fn host_groups_fall_back_to_the_user_itself() {
    assert_eq!(HostGroupProvider.primary_group("root"), "root");
    assert_eq!(
        HostGroupProvider.primary_group("no-such-user-kumiho"),
        "no-such-user-kumiho"
    );
}
