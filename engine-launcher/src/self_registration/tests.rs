//! Registry flags of a launched engine, and an engine registering itself.

use super::*;

fn args() -> EngineRegistrationArgs {
    EngineRegistrationArgs {
        registry: RegistryLocation::Embedded {
            work_dir: PathBuf::from("/var/lib/kumiho"),
        },
        engine_space: "/kumiho_0.1.0_USER_DATAFUSION/alice/default".to_owned(),
        ref_id: "r-1".to_owned(),
        idle_timeout: Duration::from_secs(90),
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn flags_round_trip_and_leave_the_engines_own_arguments() {
    let mut command_line = strings(&["kumiho-engine", "--host", "127.0.0.1"]);
    command_line.extend(args().to_args());
    command_line.extend(strings(&["--port", "0"]));
    let (parsed, rest) = EngineRegistrationArgs::extract(command_line).unwrap();
    assert_eq!(parsed, Some(args()));
    assert_eq!(
        rest,
        ["kumiho-engine", "--host", "127.0.0.1", "--port", "0"]
    );
}

#[test]
fn equals_form_and_default_idle_timeout_are_accepted() {
    let (parsed, rest) = EngineRegistrationArgs::extract(strings(&[
        "engine",
        "--registry-dir=/w",
        "--engine-space=/s/u/d",
        "--ref-id=r",
    ]))
    .unwrap();
    let parsed = parsed.unwrap();
    assert_eq!(parsed.idle_timeout, DEFAULT_IDLE_TIMEOUT);
    assert_eq!(parsed.engine_space, "/s/u/d");
    assert_eq!(rest, ["engine"]);
}

#[test]
fn no_registry_flags_means_no_registration() {
    let (parsed, rest) =
        EngineRegistrationArgs::extract(strings(&["engine", "--port", "0"])).unwrap();
    assert_eq!(parsed, None);
    assert_eq!(rest.len(), 3);
}

#[test]
fn incomplete_or_bad_flags_are_reported() {
    let missing = EngineRegistrationArgs::extract(strings(&["e", "--ref-id", "r"])).unwrap_err();
    assert_eq!(missing, ArgsError::MissingRegistry);
    let no_value = EngineRegistrationArgs::extract(strings(&["e", "--ref-id"])).unwrap_err();
    assert_eq!(no_value, ArgsError::MissingValue { flag: "--ref-id" });
    let bad = EngineRegistrationArgs::extract(strings(&[
        "e",
        "--registry-dir",
        "/w",
        "--engine-space",
        "/s",
        "--ref-id",
        "r",
        "--idle-timeout",
        "soon",
    ]))
    .unwrap_err();
    assert_eq!(
        bad.to_string(),
        "--idle-timeout `soon` is not a duration such as `30m` or `90s`"
    );
}

#[tokio::test]
async fn an_engine_registers_itself_and_deregisters_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let mut wanted = args();
    wanted.registry = RegistryLocation::Embedded {
        work_dir: dir.path().to_owned(),
    };
    let held = EngineSelfRegistration::start(&wanted, "127.0.0.1", 40123)
        .await
        .unwrap();
    let registry = EmbeddedRegistry::open(dir.path()).unwrap();
    let listed = registry.get_engines(&wanted.engine_space).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].address(), listed[0].ref_id.as_str()),
        ("127.0.0.1:40123".to_owned(), "r-1")
    );
    assert_eq!(listed[0].version, ENGINE_VERSION);
    assert_eq!(held.registration().sequence, listed[0].sequence);
    held.deregister().unwrap();
    assert!(registry
        .get_engines(&wanted.engine_space)
        .await
        .unwrap()
        .is_empty());
}

fn zookeeper_args(location: ZooKeeperLocation) -> EngineRegistrationArgs {
    EngineRegistrationArgs {
        registry: RegistryLocation::ZooKeeper(location),
        ..args()
    }
}

#[test]
fn zookeeper_flags_round_trip() {
    let wanted = zookeeper_args(ZooKeeperLocation {
        addresses: "zk1:2181,zk2:2181".to_owned(),
        session_timeout: Duration::from_secs(45),
        connect_timeout: Duration::from_secs(7),
    });
    let mut command_line = strings(&["kumiho-engine", "--port", "0"]);
    command_line.extend(wanted.to_args());
    assert!(command_line
        .windows(2)
        .any(|pair| pair == ["--registry-zookeeper", "zk1:2181,zk2:2181"]));
    let (parsed, rest) = EngineRegistrationArgs::extract(command_line).unwrap();
    assert_eq!(parsed, Some(wanted));
    assert_eq!(rest, ["kumiho-engine", "--port", "0"]);
}

#[test]
fn zookeeper_timeouts_default_to_kyuubis_and_two_registries_are_refused() {
    let (parsed, _) = EngineRegistrationArgs::extract(strings(&[
        "e",
        "--registry-zookeeper=zk:2181",
        "--engine-space=/s/u/d",
        "--ref-id=r",
    ]))
    .unwrap();
    assert_eq!(
        parsed.unwrap().registry,
        RegistryLocation::ZooKeeper(ZooKeeperLocation::new("zk:2181"))
    );
    let both = EngineRegistrationArgs::extract(strings(&[
        "e",
        "--registry-zookeeper=zk:2181",
        "--registry-dir=/w",
        "--engine-space=/s/u/d",
        "--ref-id=r",
    ]))
    .unwrap_err();
    assert_eq!(both, ArgsError::TwoRegistries);
    let bad = EngineRegistrationArgs::extract(strings(&[
        "e",
        "--registry-zookeeper=zk:2181",
        "--registry-zookeeper-session-timeout=long",
        "--engine-space=/s/u/d",
        "--ref-id=r",
    ]))
    .unwrap_err();
    assert_eq!(
        bad.to_string(),
        "--registry-zookeeper-session-timeout `long` is not a duration such as `30m` or `90s`"
    );
}

#[tokio::test]
async fn an_engine_registers_itself_in_zookeeper_and_deregisters_on_request() {
    let server = crate::testing::ZooKeeperServer::start().await;
    let wanted = zookeeper_args(server.location());
    let held = EngineSelfRegistration::start(&wanted, "127.0.0.1", 40124)
        .await
        .unwrap();
    let gateway = ZooKeeperRegistry::connect(server.location()).await.unwrap();
    let listed = gateway.get_engines(&wanted.engine_space).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].address(), listed[0].ref_id.as_str()),
        ("127.0.0.1:40124".to_owned(), "r-1")
    );
    assert_eq!(listed[0].version, ENGINE_VERSION);
    assert_eq!(held.registration().sequence, listed[0].sequence);
    held.deregister().unwrap();
    // The engine's own session deleted it; the gateway's watch sees it go.
    tokio::time::timeout(Duration::from_secs(30), gateway.watch_engine(&listed[0]))
        .await
        .expect("the deregistered engine stayed registered")
        .unwrap();
    assert!(gateway
        .get_engines(&wanted.engine_space)
        .await
        .unwrap()
        .is_empty());
}
