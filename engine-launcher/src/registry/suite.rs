//! The conformance suite every [`Registry`] backend must pass; backends' tests call [`run_all`].
//!
//! Each check works in its own fresh namespace, so the suite can run against a shared
//! registry (a ZooKeeper ensemble) and checks can run concurrently. Failures panic with a
//! message saying what a gateway would have seen go wrong.

use std::sync::Arc;
use std::time::Duration;

use super::{EngineEndpoint, Registry, RegistryError};
use crate::engine_limit::{count_live_engines, reserve, Reservation};

/// Upper bound for things that must happen "soon" (a waiter getting a released lock, a watch
/// firing); it only keeps a broken backend from hanging the test run.
const EVENTUALLY: Duration = Duration::from_secs(30);

/// Runs every check against `registry`.
pub async fn run_all(registry: Arc<dyn Registry>) {
    register_list_deregister(registry.clone()).await;
    registrations_are_ephemeral(registry.clone()).await;
    sequences_increase(registry.clone()).await;
    lock_excludes_second_holder(registry.clone()).await;
    lock_passes_to_waiter_on_release(registry.clone()).await;
    watch_fires_when_engine_leaves(registry.clone()).await;
    polling_counter_cycles(registry.clone()).await;
    children_and_engine_counts(registry.clone()).await;
    launch_places_keep_to_the_cap(registry.clone()).await;
    bad_paths_are_refused(registry).await;
}

/// A path prefix no other check (or earlier run) uses.
fn fresh_root() -> String {
    format!("/suite_{}", uuid::Uuid::new_v4().simple())
}

/// An engine on 127.0.0.1:`port` registering with launch reference `ref_id`.
pub fn endpoint(port: u16, ref_id: &str) -> EngineEndpoint {
    EngineEndpoint {
        host: "127.0.0.1".to_owned(),
        port,
        version: "0.1.0".to_owned(),
        ref_id: ref_id.to_owned(),
    }
}

/// A registered engine is listed with what it registered; deregistered, it is not.
pub async fn register_list_deregister(registry: Arc<dyn Registry>) {
    let space = format!("{}/alice/default", fresh_root());
    assert!(registry.get_engines(&space).await.unwrap().is_empty());

    let guard = registry
        .register_engine(&space, endpoint(10001, "ref-a"))
        .await
        .unwrap();
    let listed = registry.get_engines(&space).await.unwrap();
    assert_eq!(listed.len(), 1, "one registration expected: {listed:?}");
    let found = &listed[0];
    assert_eq!(
        (
            found.host.as_str(),
            found.port,
            found.version.as_str(),
            found.ref_id.as_str()
        ),
        ("127.0.0.1", 10001, "0.1.0", "ref-a")
    );
    assert_eq!(found.space, space);
    assert_eq!(found.sequence, guard.registration().sequence);
    assert!(found
        .node_name()
        .starts_with("serviceUri=127.0.0.1:10001;version=0.1.0;refId=ref-a;sequence="));

    guard.deregister().unwrap();
    assert!(registry.get_engines(&space).await.unwrap().is_empty());
}

/// Dropping the guard (as a dying holder does) removes the registration; others stay.
pub async fn registrations_are_ephemeral(registry: Arc<dyn Registry>) {
    let space = format!("{}/bob/default", fresh_root());
    let kept = registry
        .register_engine(&space, endpoint(10002, "kept"))
        .await
        .unwrap();
    let dropped = registry
        .register_engine(&space, endpoint(10003, "dropped"))
        .await
        .unwrap();
    assert_eq!(registry.get_engines(&space).await.unwrap().len(), 2);

    drop(dropped);
    let listed = registry.get_engines(&space).await.unwrap();
    let refs: Vec<&str> = listed.iter().map(|r| r.ref_id.as_str()).collect();
    assert_eq!(refs, ["kept"]);
    drop(kept);
}

/// Later registrations get larger sequence numbers, and listings are in that order.
pub async fn sequences_increase(registry: Arc<dyn Registry>) {
    let space = format!("{}/carol/default", fresh_root());
    let mut guards = Vec::new();
    for (port, ref_id) in [(10004, "first"), (10005, "second"), (10006, "third")] {
        guards.push(
            registry
                .register_engine(&space, endpoint(port, ref_id))
                .await
                .unwrap(),
        );
    }
    let listed = registry.get_engines(&space).await.unwrap();
    let refs: Vec<&str> = listed.iter().map(|r| r.ref_id.as_str()).collect();
    assert_eq!(refs, ["first", "second", "third"]);
    assert!(listed.windows(2).all(|w| w[0].sequence < w[1].sequence));
}

/// While one guard holds a lock, a second taker times out with `LockTimeout`; once the guard
/// is dropped, the lock can be taken again.
pub async fn lock_excludes_second_holder(registry: Arc<dyn Registry>) {
    let path = format!("{}_lock/dave/default", fresh_root());
    let held = registry.lock(&path, EVENTUALLY).await.unwrap();
    let second = registry.lock(&path, Duration::from_millis(300)).await;
    assert!(
        matches!(second, Err(RegistryError::LockTimeout { .. })),
        "a held lock was taken twice: {second:?}"
    );
    drop(held);
    let again = registry.lock(&path, EVENTUALLY).await;
    assert!(
        again.is_ok(),
        "a released lock could not be taken: {again:?}"
    );
}

/// A waiter blocked on a lock gets it when the holder releases it.
pub async fn lock_passes_to_waiter_on_release(registry: Arc<dyn Registry>) {
    let path = format!("{}_lock/erin/default", fresh_root());
    let held = registry.lock(&path, EVENTUALLY).await.unwrap();
    let waiter = {
        let registry = registry.clone();
        let path = path.clone();
        tokio::spawn(async move { registry.lock(&path, EVENTUALLY).await.map(drop) })
    };
    // The waiter cannot finish while the lock is held; a registry round trip gives it the
    // chance to get it wrongly.
    registry.get_engines("/suite_any/x/y").await.unwrap();
    assert!(!waiter.is_finished(), "the waiter took a held lock");
    drop(held);
    waiter
        .await
        .unwrap()
        .expect("the waiter should get the released lock");
}

/// `watch_engine` stays pending while the engine is registered and resolves when it leaves.
pub async fn watch_fires_when_engine_leaves(registry: Arc<dyn Registry>) {
    let space = format!("{}/frank/default", fresh_root());
    let guard = registry
        .register_engine(&space, endpoint(10007, "watched"))
        .await
        .unwrap();
    let registration = registry.get_engines(&space).await.unwrap().remove(0);
    let watch = {
        let registry = registry.clone();
        tokio::spawn(async move { registry.watch_engine(&registration).await })
    };
    registry.get_engines(&space).await.unwrap();
    assert!(!watch.is_finished(), "the watch fired for a live engine");
    drop(guard);
    tokio::time::timeout(EVENTUALLY, watch)
        .await
        .expect("the watch did not fire after the engine left")
        .unwrap()
        .unwrap();
}

/// The POLLING counter hands out 0, 1, …, size-1, 0, … and is shared by all callers.
pub async fn polling_counter_cycles(registry: Arc<dyn Registry>) {
    let path = format!("{}_pool/grace/engine-pool", fresh_root());
    let mut seen = Vec::new();
    for _ in 0..7 {
        seen.push(registry.next_polling_index(&path, 3).await.unwrap());
    }
    assert_eq!(seen, [0, 1, 2, 0, 1, 2, 0]);
}

/// `children` names the nodes under a path (`/` included), and a cluster's engine count
/// (`limits.max-engines`) takes the live engines of every engine space of its namespace:
/// each share level, type, version, user and subdomain, but no lock, no POLLING counter,
/// and no other namespace's engines, even one whose name starts with it.
pub async fn children_and_engine_counts(registry: Arc<dyn Registry>) {
    let ns = format!("suite{}", uuid::Uuid::new_v4().simple());
    let user_root = format!("/{ns}_0.1.0_USER_DATAFUSION");
    let counted = [
        format!("{user_root}/alice/default"),
        format!("{user_root}/alice/engine-pool-1"),
        format!("/{ns}_0.1.0_CONNECTION_SPARK_SQL/bob/6f1c0d4e"),
        format!("/{ns}_0.2.0_GROUP_DATAFUSION/staff/default"),
    ];
    let not_counted = [
        format!("/{ns}_b_0.1.0_USER_DATAFUSION/alice/default"),
        format!("/{ns}x_0.1.0_USER_DATAFUSION/alice/default"),
        format!("/{ns}_0.1.0_USER_DATAFUSION_lock/alice/default"),
    ];
    assert_eq!(count_live_engines(registry.as_ref(), &ns).await.unwrap(), 0);

    let mut guards = Vec::new();
    for (port, space) in (10010..).zip(counted.iter().chain(&not_counted)) {
        let guard = registry
            .register_engine(space, endpoint(port, &format!("ref-{port}")))
            .await
            .unwrap();
        guards.push(guard);
    }
    let _lock = registry
        .lock(&format!("{user_root}_lock/carol/default"), EVENTUALLY)
        .await
        .unwrap();
    registry
        .next_polling_index(&format!("{user_root}_pool/alice/engine-pool"), 2)
        .await
        .unwrap();

    let top = registry.children("/").await.unwrap();
    for root in [
        format!("{ns}_0.1.0_USER_DATAFUSION"),
        format!("{ns}_0.1.0_USER_DATAFUSION_lock"),
        format!("{ns}_0.1.0_USER_DATAFUSION_pool"),
    ] {
        assert!(top.contains(&root), "`/` does not list {root}: {top:?}");
    }
    assert_eq!(
        registry
            .children(&format!("{user_root}/alice"))
            .await
            .unwrap(),
        ["default", "engine-pool-1"]
    );
    assert!(registry
        .children(&format!("{user_root}/nobody"))
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        count_live_engines(registry.as_ref(), &ns).await.unwrap(),
        counted.len(),
        "the engines of namespace {ns} were miscounted"
    );

    // Engines that leave (deregistered, or their holder gone) leave the count; the spaces
    // they leave empty count nothing.
    guards.remove(0).deregister().unwrap();
    drop(guards.remove(0));
    assert_eq!(
        count_live_engines(registry.as_ref(), &ns).await.unwrap(),
        counted.len() - 2
    );
}

/// `limits.max-engines`: a launch's place counts like an engine until it is given up, and the
/// places of concurrent launches never add up to more than the cap.
pub async fn launch_places_keep_to_the_cap(registry: Arc<dyn Registry>) {
    let ns = fresh_root().trim_start_matches('/').to_owned();
    let _engine = registry
        .register_engine(
            &format!("/{ns}_0.1.0_USER_DATAFUSION/alice/default"),
            endpoint(10030, "running"),
        )
        .await
        .unwrap();
    let place = match reserve(registry.as_ref(), &ns, 2, endpoint(0, "a"), EVENTUALLY)
        .await
        .unwrap()
    {
        Reservation {
            place: Some(place),
            running: 1,
            launching: 0,
        } => place,
        other => panic!("one engine of two running, yet no place for a launch: {other:?}"),
    };
    let full = reserve(registry.as_ref(), &ns, 2, endpoint(0, "b"), EVENTUALLY)
        .await
        .unwrap();
    assert!(
        matches!(
            full,
            Reservation {
                place: None,
                running: 1,
                launching: 1
            }
        ),
        "a second launch took the place the first holds: {full:?}"
    );
    // Places hold no engine: the cluster's engine count is the engines'.
    assert_eq!(count_live_engines(registry.as_ref(), &ns).await.unwrap(), 1);
    drop(place);
    let again = reserve(registry.as_ref(), &ns, 2, endpoint(0, "c"), EVENTUALLY)
        .await
        .unwrap();
    assert!(
        matches!(
            again,
            Reservation {
                place: Some(_),
                launching: 0,
                ..
            }
        ),
        "a place given up is still held: {again:?}"
    );
    drop(again);

    // Ten launches at once for the last place: one gets it.
    let attempts: Vec<_> = (0..10)
        .map(|i| {
            let registry = registry.clone();
            let ns = ns.clone();
            tokio::spawn(async move {
                reserve(
                    registry.as_ref(),
                    &ns,
                    2,
                    endpoint(0, &format!("r{i}")),
                    EVENTUALLY,
                )
                .await
                .unwrap()
            })
        })
        .collect();
    // Every outcome is kept (a place lives as long as it is held) until all have been counted.
    let mut outcomes = Vec::new();
    for attempt in attempts {
        outcomes.push(attempt.await.unwrap());
    }
    let reserved = outcomes
        .iter()
        .filter(|outcome| matches!(outcome, Reservation { place: Some(_), .. }))
        .count();
    assert_eq!(reserved, 1, "{outcomes:?}");
}

/// Paths that could escape the registry or collide with its bookkeeping are refused.
pub async fn bad_paths_are_refused(registry: Arc<dyn Registry>) {
    for bad in ["relative/path", "/a/../b", "/a//b", "/a/.hidden"] {
        let result = registry.get_engines(bad).await;
        assert!(
            matches!(result, Err(RegistryError::BadPath { .. })),
            "`{bad}` was accepted: {result:?}"
        );
    }
}
