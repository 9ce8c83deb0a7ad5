//! The cap on a cluster's engines (`limits.max-engines`): the live engines of a registry
//! namespace, and the launches that hold a place among them.
//!
//! A cluster's engines are the live registrations in every engine space of its namespace
//! (`/{ns}_{version}_{SHARE}_{TYPE}/{user}/{subdomain}`): every share level, engine type,
//! user and subdomain, and every engine version, since an engine launched by a gateway of
//! another version runs on the cluster all the same. On ZooKeeper, an engine that died
//! without deregistering counts until its ZooKeeper session expires.
//!
//! A launch takes its place before it starts ([`reserve`]): under a cluster-wide lock held
//! only for the count, it counts the live engines and the launches holding a place, and, if
//! there is room, registers a reservation of its own (`/{ns}_launching/places`), which lives
//! until the launch has ended (its engine registered, or the launch failed) or the gateway
//! holding it has died. So launches of different engine spaces, on any gateway sharing the
//! registry, never exceed the cap together, and none waits for another's launch (minutes for
//! Spark). A reservation names the launch's reference id, so an engine that has registered
//! before its launch gave its place up counts once.

use std::time::Duration;

use crate::engine_ref::{EngineType, ShareLevel};
use crate::registry::{
    validate_path_component, EngineEndpoint, EngineRegistration, RegistrationGuard, Registry,
    RegistryError,
};

/// A launch's place among its cluster's `max-engines`, held while the launch runs; dropping it
/// gives the place up.
#[derive(Debug)]
pub struct LaunchPlace {
    _reservation: RegistrationGuard,
}

/// What [`reserve`] found: the live engines, the other launches holding places, and this
/// launch's place if there was room (`None`: the cluster is at its cap).
#[derive(Debug)]
pub struct Reservation {
    pub place: Option<LaunchPlace>,
    pub running: usize,
    pub launching: usize,
}

/// The cluster-wide lock taken to count and reserve (never for a launch).
fn places_lock_path(namespace: &str) -> String {
    format!("/{namespace}_launching_lock")
}

/// Where launches register their places.
fn places_space(namespace: &str) -> String {
    format!("/{namespace}_launching/places")
}

/// Takes a place for a launch on the cluster of `namespace`, if its live engines and the
/// launches holding places are fewer than `max` (see the module doc). `launch` is the
/// reservation: its `ref_id` is the one the launch's engine registers with, so that an engine
/// up before its launch has given up its place counts once; `lock_timeout` bounds the wait
/// for another gateway's count.
pub async fn reserve(
    registry: &dyn Registry,
    namespace: &str,
    max: u32,
    launch: EngineEndpoint,
    lock_timeout: Duration,
) -> Result<Reservation, RegistryError> {
    let _counting = registry
        .lock(&places_lock_path(namespace), lock_timeout)
        .await?;
    let engines = live_engines(registry, namespace).await?;
    let running = engines.len();
    let launching = registry
        .get_engines(&places_space(namespace))
        .await?
        .iter()
        .filter(|place| !engines.iter().any(|engine| engine.ref_id == place.ref_id))
        .count();
    let place = if running + launching < max as usize {
        let reservation = registry
            .register_engine(&places_space(namespace), launch)
            .await?;
        Some(LaunchPlace {
            _reservation: reservation,
        })
    } else {
        None
    };
    Ok(Reservation {
        place,
        running,
        launching,
    })
}

/// Whether the top-level registry node `name` holds engine spaces of `namespace`:
/// `{namespace}_{version}_{SHARE}_{TYPE}`, with a version free of `_` (so that namespace
/// `kumiho` does not claim the engines of namespace `kumiho_b`). The roots of launch locks
/// (`…_lock`) and POLLING counters (`…_pool`) are not.
pub fn is_engine_root(namespace: &str, name: &str) -> bool {
    let Some(rest) = name
        .strip_prefix(namespace)
        .and_then(|rest| rest.strip_prefix('_'))
    else {
        return false;
    };
    ShareLevel::ALL.iter().any(|share| {
        EngineType::ALL.iter().any(|engine_type| {
            rest.strip_suffix(&format!("_{share}_{engine_type}"))
                .is_some_and(|version| !version.is_empty() && !version.contains('_'))
        })
    })
}

/// The number of live engines registered under `namespace`, in all its engine spaces.
pub async fn count_live_engines(
    registry: &dyn Registry,
    namespace: &str,
) -> Result<usize, RegistryError> {
    Ok(live_engines(registry, namespace).await?.len())
}

/// The live engines registered under `namespace`, in all its engine spaces.
///
/// One registry listing per root, user and engine space: it runs only when a session is
/// about to launch an engine, which costs far more.
async fn live_engines(
    registry: &dyn Registry,
    namespace: &str,
) -> Result<Vec<EngineRegistration>, RegistryError> {
    let mut engines = Vec::new();
    for root in registry.children("/").await? {
        if !is_engine_root(namespace, &root) {
            continue;
        }
        let root = format!("/{root}");
        for user in valid_children(registry, &root).await? {
            let user_path = format!("{root}/{user}");
            for subdomain in valid_children(registry, &user_path).await? {
                let space = format!("{user_path}/{subdomain}");
                engines.extend(registry.get_engines(&space).await?);
            }
        }
    }
    Ok(engines)
}

/// The children of `path` that can name a path component; a foreign node with a name no
/// engine space could have holds no engine, and must not fail the count.
async fn valid_children(registry: &dyn Registry, path: &str) -> Result<Vec<String>, RegistryError> {
    let mut children = registry.children(path).await?;
    children.retain(|name| validate_path_component(name).is_ok());
    Ok(children)
}

#[cfg(test)]
mod tests;
