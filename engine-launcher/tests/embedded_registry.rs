//! The embedded registry: the shared registry suite, and what only real processes can show
//! (a lock or registration held by another process, and released when that process dies).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::Helper;
use kumiho_engine_launcher::registry::suite;
use kumiho_engine_launcher::{EmbeddedRegistry, Registry, RegistryError};

#[tokio::test]
async fn passes_the_registry_suite() {
    let dir = tempfile::tempdir().unwrap();
    let registry: Arc<dyn Registry> = Arc::new(EmbeddedRegistry::open(dir.path()).unwrap());
    suite::run_all(registry).await;
}

#[tokio::test]
async fn a_lock_held_by_another_process_excludes_us_until_that_process_dies() {
    let dir = tempfile::tempdir().unwrap();
    let registry = EmbeddedRegistry::open(dir.path()).unwrap();
    let path = "/kumiho_0.1.0_USER_DATAFUSION_lock/alice/default";
    let holder = Helper::start("hold-lock", dir.path(), path);

    let refused = registry.lock(path, Duration::from_millis(300)).await;
    let message = refused.as_ref().unwrap_err().to_string();
    assert!(
        matches!(refused, Err(RegistryError::LockTimeout { .. })),
        "{message}"
    );
    assert_eq!(
        message,
        "could not take lock /kumiho_0.1.0_USER_DATAFUSION_lock/alice/default within 300ms: \
         another gateway or session holds it (it may be launching the same engine); retry later"
    );

    holder.kill();
    let taken = registry.lock(path, Duration::from_secs(30)).await;
    assert!(
        taken.is_ok(),
        "the dead holder's lock was not released: {taken:?}"
    );
}

#[tokio::test]
async fn a_registration_lives_with_the_process_holding_it() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Arc::new(EmbeddedRegistry::open(dir.path()).unwrap());
    let space = "/kumiho_0.1.0_USER_DATAFUSION/alice/default";
    let engine = Helper::start("register", dir.path(), space);

    let listed = registry.get_engines(space).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].ref_id, "other-process");
    let watch = {
        let registry = registry.clone();
        let registration = listed[0].clone();
        tokio::spawn(async move { registry.watch_engine(&registration).await })
    };

    engine.kill();
    tokio::time::timeout(Duration::from_secs(30), watch)
        .await
        .expect("the watch did not notice the engine die")
        .unwrap()
        .unwrap();
    assert!(registry.get_engines(space).await.unwrap().is_empty());
    // The dead registration's file was cleaned up, not just skipped.
    let space_dir = dir
        .path()
        .join("registry/kumiho_0.1.0_USER_DATAFUSION/alice/default");
    let left: Vec<_> = std::fs::read_dir(space_dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| !name.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "dead registrations left behind: {left:?}");
}
