//! The ZooKeeper registry against a real ZooKeeper: the shared suite, expiry, outages, locks.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::registry::suite::{self, endpoint};
use crate::testing::{PartitionProxy, ZooKeeperServer};

/// Bounds things that must happen "soon" (re-registration, a watch firing), so that a broken
/// registry fails the test instead of hanging it.
const EVENTUALLY: Duration = Duration::from_secs(30);

fn space(name: &str) -> String {
    format!(
        "/kumiho_test_{}/alice/{name}",
        uuid::Uuid::new_v4().simple()
    )
}

/// Retries `attempt` until it returns `Some`, failing after [`EVENTUALLY`] with `what`.
async fn eventually<T, F: Future<Output = Option<T>>>(
    what: &str,
    mut attempt: impl FnMut() -> F,
) -> T {
    let deadline = tokio::time::Instant::now() + EVENTUALLY;
    loop {
        if let Some(value) = attempt().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} did not happen within {EVENTUALLY:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A registry that reaches `server` through a proxy the test can cut.
async fn behind_proxy(server: &ZooKeeperServer) -> (ZooKeeperRegistry, PartitionProxy) {
    let proxy = PartitionProxy::start(server.address()).await;
    let location = ZooKeeperLocation {
        addresses: proxy.address(),
        ..server.location()
    };
    (ZooKeeperRegistry::connect(location).await.unwrap(), proxy)
}

#[tokio::test]
async fn the_shared_registry_suite_passes_on_zookeeper() {
    let server = ZooKeeperServer::start().await;
    let registry = ZooKeeperRegistry::connect(server.location()).await.unwrap();
    suite::run_all(Arc::new(registry)).await;
}

#[tokio::test]
async fn registrations_are_ephemeral_sequential_nodes_in_the_design_layout() {
    let server = ZooKeeperServer::start().await;
    let registry = ZooKeeperRegistry::connect(server.location()).await.unwrap();
    let space = space("default");
    let guard = registry
        .register_engine(&space, endpoint(10010, "layout"))
        .await
        .unwrap();
    let reader = Client::connect(&server.address()).await.unwrap();
    let children = reader.list_children(&space).await.unwrap();
    assert_eq!(
        children,
        ["serviceUri=127.0.0.1:10010;version=0.1.0;refId=layout;sequence=0000000000"]
    );
    let node = child_path(&space, &children[0]);
    let (data, stat) = reader.get_data(&node).await.unwrap();
    assert_eq!(data, b"127.0.0.1:10010");
    assert_eq!(stat.ephemeral_owner, registry.session_id());
    assert_eq!(guard.registration().pid, Some(std::process::id()));
}

#[tokio::test]
async fn an_unreachable_ensemble_is_named_in_the_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let location = ZooKeeperLocation {
        addresses: format!("127.0.0.1:{port}"),
        session_timeout: Duration::from_secs(4),
        connect_timeout: Duration::from_secs(1),
    };
    let error = tokio::time::timeout(EVENTUALLY, ZooKeeperRegistry::connect(location))
        .await
        .expect("connect must give up within its connect timeout")
        .unwrap_err();
    assert!(
        matches!(error, RegistryError::Unavailable { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains(&format!(
            "ZooKeeper ensemble 127.0.0.1:{port} is unreachable"
        )),
        "{message}"
    );
}

#[tokio::test]
async fn calls_fail_while_zookeeper_is_down_and_work_once_it_is_back() {
    let mut server = ZooKeeperServer::start().await;
    let registry = ZooKeeperRegistry::connect(server.location()).await.unwrap();
    let space = space("outage");
    registry.get_engines(&space).await.unwrap();

    server.stop();
    // Each call gives up within the timeouts with an error naming the ensemble.
    let listed = tokio::time::timeout(EVENTUALLY, registry.get_engines(&space)).await;
    let registered = tokio::time::timeout(
        EVENTUALLY,
        registry.register_engine(&space, endpoint(10011, "down")),
    )
    .await;
    let locked = tokio::time::timeout(
        EVENTUALLY,
        registry.lock(&format!("{space}_lock"), Duration::from_secs(600)),
    )
    .await;
    for (call, outcome) in [
        ("get_engines", listed.map(|r| r.map(drop))),
        ("register_engine", registered.map(|r| r.map(drop))),
        ("lock", locked.map(|r| r.map(drop))),
    ] {
        let error = outcome
            .unwrap_or_else(|_| panic!("{call} hung while ZooKeeper was down"))
            .expect_err(call);
        assert!(
            matches!(&error, RegistryError::Unavailable { addresses, .. } if *addresses == server.address()),
            "{call}: {error:?}"
        );
    }

    server.restart().await;
    eventually("a registration after ZooKeeper came back", || async {
        registry
            .register_engine(&space, endpoint(10011, "back"))
            .await
            .ok()
    })
    .await
    .deregister()
    .unwrap();
    assert!(registry.get_engines(&space).await.unwrap().is_empty());
}

#[tokio::test]
async fn an_expired_session_registers_again_once_and_fires_the_watch_for_the_old_node() {
    let server = ZooKeeperServer::start().await;
    let (engine_side, link) = behind_proxy(&server).await;
    let gateway = Arc::new(ZooKeeperRegistry::connect(server.location()).await.unwrap());
    let space = space("expiry");
    let _held = engine_side
        .register_engine(&space, endpoint(10012, "expiring"))
        .await
        .unwrap();
    let mut previous = gateway.get_engines(&space).await.unwrap();
    assert_eq!(previous.len(), 1);

    // Twice: the session watch must be armed again on the new session.
    for round in 1..=2 {
        let watch = {
            let gateway = Arc::clone(&gateway);
            let old = previous[0].clone();
            tokio::spawn(async move { gateway.watch_engine(&old).await })
        };
        let old_session = engine_side.session_id();
        // Cut off for longer than the session timeout, the engine's session expires.
        link.cut();
        tokio::time::timeout(EVENTUALLY, watch)
            .await
            .unwrap_or_else(|_| {
                panic!("round {round}: the watch did not fire when the session expired")
            })
            .unwrap()
            .unwrap();
        assert!(gateway.get_engines(&space).await.unwrap().is_empty());
        link.heal();
        let listed = eventually("the engine registering again", || async {
            let listed = gateway.get_engines(&space).await.ok()?;
            (!listed.is_empty()).then_some(listed)
        })
        .await;
        assert_eq!(
            listed.len(),
            1,
            "round {round}: registered more than once: {listed:?}"
        );
        assert_eq!(listed[0].address(), "127.0.0.1:10012");
        assert!(listed[0].sequence > previous[0].sequence);
        assert_ne!(engine_side.session_id(), old_session);
        previous = listed;
    }
}

#[tokio::test]
async fn a_wiped_zookeeper_gets_every_registration_back_exactly_once() {
    let mut server = ZooKeeperServer::start().await;
    // Sessions far longer than the test may wait: the registrations must come back as soon as
    // the wiped ensemble answers, not when the client would give its session up by itself.
    let location = ZooKeeperLocation {
        session_timeout: Duration::from_secs(100),
        ..server.location()
    };
    let engine_side = ZooKeeperRegistry::connect(location.clone()).await.unwrap();
    let gateway = ZooKeeperRegistry::connect(location).await.unwrap();
    let space = space("wiped");
    let held = engine_side
        .register_engine(&space, endpoint(10013, "survivor"))
        .await
        .unwrap();

    server.wipe_and_restart().await;

    let listed = eventually("the engine registering in the wiped ZooKeeper", || async {
        let listed = gateway.get_engines(&space).await.ok()?;
        (!listed.is_empty()).then_some(listed)
    })
    .await;
    assert_eq!(listed.len(), 1, "registered more than once: {listed:?}");
    assert_eq!(listed[0].address(), "127.0.0.1:10013");
    // Releasing the guard removes the new node, not only the old one.
    held.deregister().unwrap();
    tokio::time::timeout(EVENTUALLY, gateway.watch_engine(&listed[0]))
        .await
        .expect("the re-registered engine was not removed by its guard")
        .unwrap();
}

#[tokio::test]
async fn a_watch_resolves_when_a_wiped_zookeeper_lost_the_engine() {
    let mut server = ZooKeeperServer::start().await;
    // Long sessions: the gateway must not wait for its old session to time out.
    let location = ZooKeeperLocation {
        session_timeout: Duration::from_secs(100),
        ..server.location()
    };
    let (engine_side, link) = behind_proxy(&server).await;
    let gateway = Arc::new(ZooKeeperRegistry::connect(location).await.unwrap());
    let space = space("lost");
    let _held = engine_side
        .register_engine(&space, endpoint(10016, "lost"))
        .await
        .unwrap();
    let registration = gateway.get_engines(&space).await.unwrap().remove(0);
    let watch = {
        let gateway = Arc::clone(&gateway);
        tokio::spawn(async move { gateway.watch_engine(&registration).await })
    };
    // The engine cannot register again (cut off); the ensemble forgets everything.
    link.cut();
    server.wipe_and_restart().await;
    tokio::time::timeout(EVENTUALLY, watch)
        .await
        .expect("the watch did not resolve for an engine the wiped ensemble lost")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_lock_is_freed_when_its_holders_session_ends() {
    let server = ZooKeeperServer::start().await;
    let (holder, link) = behind_proxy(&server).await;
    let waiter = Arc::new(ZooKeeperRegistry::connect(server.location()).await.unwrap());
    let path = format!(
        "/kumiho_test_{}_lock/alice/default",
        uuid::Uuid::new_v4().simple()
    );
    let _held = holder.lock(&path, EVENTUALLY).await.unwrap();
    let refused = waiter.lock(&path, Duration::from_millis(300)).await;
    assert!(
        matches!(refused, Err(RegistryError::LockTimeout { .. })),
        "{refused:?}"
    );

    let waiting = {
        let waiter = Arc::clone(&waiter);
        let path = path.clone();
        tokio::spawn(async move { waiter.lock(&path, EVENTUALLY).await.map(drop) })
    };
    // The holder vanishes from the network; the ensemble expires its session.
    link.cut();
    tokio::time::timeout(EVENTUALLY, waiting)
        .await
        .expect("the lock stayed taken after its holder's session ended")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn dropping_the_registry_and_its_guards_closes_the_session() {
    let server = ZooKeeperServer::start().await;
    let gateway = ZooKeeperRegistry::connect(server.location()).await.unwrap();
    let space = space("closed");
    let engine_side = ZooKeeperRegistry::connect(server.location()).await.unwrap();
    let guard = engine_side
        .register_engine(&space, endpoint(10014, "closing"))
        .await
        .unwrap();
    drop(engine_side);
    let listed = gateway.get_engines(&space).await.unwrap();
    assert_eq!(listed.len(), 1, "the guard alone keeps the registration");
    // The guard was the session's last handle: dropping it deregisters and closes the session.
    drop(guard);
    tokio::time::timeout(EVENTUALLY, gateway.watch_engine(&listed[0]))
        .await
        .expect("the registration outlived its registry")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_deregistered_an_engine_is_gone_for_every_gateway() {
    let server = ZooKeeperServer::start().await;
    let engine_side = ZooKeeperRegistry::connect(server.location()).await.unwrap();
    let gateway = ZooKeeperRegistry::connect(server.location()).await.unwrap();
    let space = space("leaving");
    for round in 0..5 {
        let guard = engine_side
            .register_engine(&space, endpoint(10015, "leaving"))
            .await
            .unwrap();
        assert_eq!(gateway.get_engines(&space).await.unwrap().len(), 1);
        // As an engine does before it exits: the deletion is confirmed when this returns.
        guard.deregister().unwrap();
        let listed = gateway.get_engines(&space).await.unwrap();
        assert!(
            listed.is_empty(),
            "round {round}: still listed after deregister: {listed:?}"
        );
    }
}

/// Where the helper process below finds its ensemble, space and lock (`ADDRESS SPACE LOCK`).
const HOLDER_ENV: &str = "KUMIHO_TEST_ZOOKEEPER_HOLDER";
const HOLDER_READY: &str = "HOLDER READY";

/// Not a test: the entry point of a helper process (a no-op in a normal run) that takes a lock
/// and registers an engine, then holds both until it is killed or its parent goes.
#[tokio::test]
async fn zookeeper_holder_process() {
    let Ok(spec) = std::env::var(HOLDER_ENV) else {
        return;
    };
    let [addresses, space, lock] = [0, 1, 2].map(|i| spec.split(' ').nth(i).unwrap().to_owned());
    let location = ZooKeeperLocation {
        addresses,
        session_timeout: Duration::from_secs(4),
        connect_timeout: Duration::from_secs(3),
    };
    let registry = ZooKeeperRegistry::connect(location).await.unwrap();
    let _lock = registry.lock(&lock, EVENTUALLY).await.unwrap();
    let _registration = registry
        .register_engine(&space, endpoint(10017, "holder"))
        .await
        .unwrap();
    println!("{HOLDER_READY}");
    let _ = tokio::io::AsyncReadExt::read_to_end(&mut tokio::io::stdin(), &mut Vec::new()).await;
}

#[tokio::test]
async fn a_killed_process_frees_its_lock_and_registration() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};

    let server = ZooKeeperServer::start().await;
    let gateway = ZooKeeperRegistry::connect(server.location()).await.unwrap();
    let space = space("killed");
    let lock = format!("{space}_lock");
    let mut holder = Command::new(std::env::current_exe().unwrap())
        .args([
            "registry::zookeeper::tests::zookeeper_holder_process",
            "--exact",
            "--nocapture",
        ])
        .env(HOLDER_ENV, format!("{} {space} {lock}", server.address()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let ready = std::io::BufReader::new(holder.stdout.take().unwrap())
        .lines()
        .any(|line| line.is_ok_and(|line| line.ends_with(HOLDER_READY)));
    assert!(
        ready,
        "the holder process ended before it held: {:?}",
        holder.wait()
    );
    let registered = gateway.get_engines(&space).await.unwrap();
    assert_eq!(registered.len(), 1);
    let refused = gateway.lock(&lock, Duration::from_millis(300)).await;
    assert!(
        matches!(refused, Err(RegistryError::LockTimeout { .. })),
        "{refused:?}"
    );

    // SIGKILL: no deregistration, no session close; the ensemble expires the session.
    holder.kill().unwrap();
    holder.wait().unwrap();
    tokio::time::timeout(EVENTUALLY, gateway.watch_engine(&registered[0]))
        .await
        .expect("the killed process's registration stayed")
        .unwrap();
    let taken = gateway.lock(&lock, EVENTUALLY).await;
    assert!(
        taken.is_ok(),
        "the killed process's lock stayed taken: {taken:?}"
    );
}

#[tokio::test]
async fn a_dead_engines_registration_is_removed_at_once_for_every_gateway() {
    let server = ZooKeeperServer::start().await;
    // The engine's session outlives the engine (killed: the ensemble waits for the session
    // timeout); a gateway that found nothing listening removes the registration.
    let engine_side = ZooKeeperRegistry::connect(server.location()).await.unwrap();
    let gateway = ZooKeeperRegistry::connect(server.location()).await.unwrap();
    let other_gateway = ZooKeeperRegistry::connect(server.location()).await.unwrap();
    let space = space("dead");
    let _dead = engine_side
        .register_engine(&space, endpoint(10019, "dead"))
        .await
        .unwrap();
    let _live = engine_side
        .register_engine(&space, endpoint(10021, "live"))
        .await
        .unwrap();
    let listed = gateway.get_engines(&space).await.unwrap();
    assert_eq!(listed.len(), 2);
    gateway.remove_dead_engine(&listed[0]).await.unwrap();
    let left = other_gateway.get_engines(&space).await.unwrap();
    assert_eq!(
        left.iter().map(|r| r.port).collect::<Vec<_>>(),
        vec![10021],
        "{left:?}"
    );
    // Removed already (by another gateway): no error.
    other_gateway.remove_dead_engine(&listed[0]).await.unwrap();
}
