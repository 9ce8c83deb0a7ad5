//! The cap on a cluster's engines (`limits.max-engines`): counting the live engines of a registry namespace.
//!
//! A cluster's engines are the live registrations in every engine space of its namespace
//! (`/{ns}_{version}_{SHARE}_{TYPE}/{user}/{subdomain}`): every share level, engine type,
//! user and subdomain, and every engine version, since an engine launched by a gateway of
//! another version runs on the cluster all the same. On ZooKeeper, an engine that died
//! without deregistering counts until its ZooKeeper session expires.
//!
//! The count is taken under the launch lock of the space about to launch (see
//! [`get_or_create`](crate::get_or_create)), so two sessions of one space never both pass
//! it. Launches of *different* spaces hold different locks: those that count at the same
//! moment all see the same number, and can exceed the cap by as many launches as run at
//! once. Closing that would need a cluster-wide lock held for a whole launch (minutes for
//! Spark), which would make every launch on the cluster wait for the others.

use crate::engine_ref::{EngineType, ShareLevel};
use crate::registry::{validate_path_component, Registry, RegistryError};

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
///
/// One registry listing per root, user and engine space: it runs only when a session is
/// about to launch an engine, which costs far more.
pub async fn count_live_engines(
    registry: &dyn Registry,
    namespace: &str,
) -> Result<usize, RegistryError> {
    let mut count = 0;
    for root in registry.children("/").await? {
        if !is_engine_root(namespace, &root) {
            continue;
        }
        let root = format!("/{root}");
        for user in valid_children(registry, &root).await? {
            let user_path = format!("{root}/{user}");
            for subdomain in valid_children(registry, &user_path).await? {
                let space = format!("{user_path}/{subdomain}");
                count += registry.get_engines(&space).await?.len();
            }
        }
    }
    Ok(count)
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
