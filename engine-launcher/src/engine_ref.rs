//! Engine references: which shared engine a session belongs to, and where it lives in a registry.
//!
//! The share level decides whose engine a session uses (its own, its user's, its group's or the
//! server's); the subdomain and pool pick one engine among several of that owner. Everything
//! here follows Kyuubi's `EngineRef`, so that registry paths written by Kyuubi and Kumiho agree.

use std::fmt;

use rand::Rng;

use crate::registry::{validate_path_component, Registry, RegistryError};

/// Who shares one engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShareLevel {
    /// One engine per session; it stops when the session closes.
    Connection,
    /// All sessions of one user share an engine (Kyuubi's default).
    User,
    /// All users of one primary group share an engine.
    Group,
    /// Every session shares the server user's engine.
    Server,
}

/// The engine behind a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineType {
    /// `kumiho-engine`, Kumiho's HiveServer2 engine on Apache DataFusion.
    DataFusion,
    /// Spark Thrift Server, started with `spark-submit`.
    SparkSql,
}

/// How a session picks one engine of a pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PoolSelectPolicy {
    /// Any engine of the pool, at random.
    #[default]
    Random,
    /// Engines in turn, with a counter kept in the registry so that every gateway shares it.
    Polling,
}

/// Defines a case-insensitive `FromStr` and a `Display` with the wire names of a small enum;
/// the error lists the valid names so a user sees how to fix a bad setting. Exported for the
/// gateway's own settings of the same kind.
#[macro_export]
macro_rules! wire_names {
    ($ty:ident, $what:literal, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in the order the wire names are listed in errors.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            /// The name used in settings (and registry paths).
            pub fn as_str(self) -> &'static str {
                match self { $($ty::$variant => $name),+ }
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::UnknownValue;

            fn from_str(text: &str) -> Result<Self, $crate::UnknownValue> {
                let trimmed = text.trim();
                $ty::ALL
                    .iter()
                    .copied()
                    .find(|value| value.as_str().eq_ignore_ascii_case(trimmed))
                    .ok_or_else(|| $crate::UnknownValue {
                        what: $what,
                        given: text.to_owned(),
                        valid: $ty::ALL.iter().map(|value| value.as_str()).collect(),
                    })
            }
        }
    };
}

wire_names!(ShareLevel, "share level", {
    Connection => "CONNECTION",
    User => "USER",
    Group => "GROUP",
    Server => "SERVER",
});

wire_names!(EngineType, "engine type", {
    DataFusion => "DATAFUSION",
    SparkSql => "SPARK_SQL",
});

wire_names!(PoolSelectPolicy, "pool select policy", {
    Random => "RANDOM",
    Polling => "POLLING",
});

/// A setting whose value is not one of the names it accepts; the client's to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{given}` is not a valid {what}; use one of {}", valid.join(", "))]
pub struct UnknownValue {
    #[doc(hidden)]
    pub what: &'static str,
    #[doc(hidden)]
    pub given: String,
    #[doc(hidden)]
    pub valid: Vec<&'static str>,
}

/// Finds the group whose engine a user shares at share level GROUP.
pub trait GroupProvider: Send + Sync {
    /// The group of `user`; implementations fall back to the user's own name when the user
    /// has no known group, as Kyuubi does.
    fn primary_group(&self, user: &str) -> String;
}

/// The user's primary group as this host's user database (`/etc/passwd`, NSS) knows it,
/// else the user's own name: gateway users often exist only in LDAP or Kerberos, not on the
/// host, and a missing group must not stop their sessions.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostGroupProvider;

impl GroupProvider for HostGroupProvider {
    fn primary_group(&self, user: &str) -> String {
        use nix::unistd::{Group, User};
        User::from_name(user)
            .ok()
            .flatten()
            .and_then(|found| Group::from_gid(found.gid).ok().flatten())
            .map(|group| group.name)
            .unwrap_or_else(|| user.to_owned())
    }
}

/// Asks for a pool of engines instead of one (`kyuubi.engine.pool.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolRequest {
    /// Engines in the pool as the session asked; 0 or less means no pool.
    pub size: i64,
    /// Prefix of the pool's subdomains (`NAME-0`, `NAME-1`, …).
    pub name: String,
    /// How one engine of the pool is chosen.
    pub policy: PoolSelectPolicy,
}

impl PoolRequest {
    /// Kyuubi's default pool name.
    pub const DEFAULT_NAME: &'static str = "engine-pool";
}

/// Everything an engine reference is computed from; the gateway fills it from the session's
/// settings, its cluster's defaults and its own configuration.
#[derive(Debug, Clone)]
pub struct EngineRefRequest {
    /// Registry namespace (`kumiho`, or the cluster's ZooKeeper namespace).
    pub namespace: String,
    /// Engine version in registry paths; engines of another version are never shared.
    pub version: String,
    /// The session's effective user (after proxy-user rules).
    pub session_user: String,
    /// The OS user the gateway runs as; owner of SERVER-level engines.
    pub server_user: String,
    /// The gateway's session id; names the engine of a CONNECTION-level session.
    pub session_id: String,
    /// Who shares the engine.
    pub share_level: ShareLevel,
    /// Which engine.
    pub engine_type: EngineType,
    /// `kyuubi.engine.share.level.subdomain`, if the session set it.
    pub subdomain: Option<String>,
    /// `kyuubi.engine.pool.*`, if the session asked for a pool.
    pub pool: Option<PoolRequest>,
    /// The server's cap on pool sizes; larger requests are cut down to it.
    pub max_pool_size: usize,
}

/// Which engine a session uses, and the registry paths that engine and its launch lock live at.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EngineRef {
    /// Registry namespace.
    pub namespace: String,
    /// Engine version in registry paths.
    pub version: String,
    /// Who shares the engine.
    pub share_level: ShareLevel,
    /// Which engine.
    pub engine_type: EngineType,
    /// Owner of the engine in registry paths: the session user, their group or the server user.
    pub routing_user: String,
    /// The engine's name within its owner: lower-cased subdomain, pool member or session id.
    pub subdomain: String,
    /// The user the engine serves sessions for (the session user, kept for logs).
    pub session_user: String,
}

/// Why no engine reference could be made; the message says which setting to fix.
#[derive(Debug, thiserror::Error)]
pub enum EngineRefError {
    /// A name (user, group, subdomain, pool name, namespace) cannot appear in a registry path.
    #[error("{what} `{value}` cannot be used to name an engine: {reason}")]
    BadName {
        /// Which input it was.
        what: &'static str,
        /// The offending value.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The POLLING counter could not be read from the registry.
    #[error("could not pick an engine of pool `{pool}` by POLLING: {source}")]
    Polling {
        /// The pool's name.
        pool: String,
        /// The registry's error.
        #[source]
        source: RegistryError,
    },
}

impl EngineRef {
    /// Computes the engine reference for a session. The registry is asked only for a POLLING
    /// pool, whose counter it keeps.
    pub async fn resolve(
        request: &EngineRefRequest,
        groups: &dyn GroupProvider,
        registry: &dyn Registry,
    ) -> Result<EngineRef, EngineRefError> {
        let routing_user = match request.share_level {
            ShareLevel::Connection | ShareLevel::User => request.session_user.clone(),
            ShareLevel::Group => groups.primary_group(&request.session_user),
            ShareLevel::Server => request.server_user.clone(),
        };
        check_name("namespace", &request.namespace)?;
        check_name("engine version", &request.version)?;
        check_name("user", &routing_user)?;

        let subdomain = match request.share_level {
            ShareLevel::Connection => request.session_id.clone(),
            _ => Self::choose_subdomain(request, &routing_user, registry).await?,
        };
        check_name("engine subdomain", &subdomain)?;

        Ok(EngineRef {
            namespace: request.namespace.clone(),
            version: request.version.clone(),
            share_level: request.share_level,
            engine_type: request.engine_type,
            routing_user,
            subdomain,
            session_user: request.session_user.clone(),
        })
    }

    /// Kyuubi's order: an explicit subdomain wins; else a pool member; else `default`.
    async fn choose_subdomain(
        request: &EngineRefRequest,
        routing_user: &str,
        registry: &dyn Registry,
    ) -> Result<String, EngineRefError> {
        if let Some(subdomain) = request.subdomain.as_deref().map(str::trim) {
            if !subdomain.is_empty() {
                return Ok(subdomain.to_lowercase());
            }
        }
        let Some(pool) = request.pool.as_ref().filter(|pool| pool.size > 0) else {
            return Ok("default".to_owned());
        };
        let name = pool.name.trim().to_lowercase();
        check_name("engine pool name", &name)?;
        let requested = usize::try_from(pool.size).unwrap_or(usize::MAX);
        let size = requested.min(request.max_pool_size).max(1);
        let index = match pool.policy {
            PoolSelectPolicy::Random => rand::rng().random_range(0..size),
            PoolSelectPolicy::Polling => {
                let counter_path = format!(
                    "/{}_{}_{}_{}_pool/{}/{}",
                    request.namespace,
                    request.version,
                    request.share_level,
                    request.engine_type,
                    routing_user,
                    name
                );
                registry
                    .next_polling_index(&counter_path, size)
                    .await
                    .map_err(|source| EngineRefError::Polling {
                        pool: name.clone(),
                        source,
                    })?
            }
        };
        Ok(format!("{name}-{index}"))
    }

    /// The first component of every registry path of this engine.
    fn root(&self) -> String {
        format!(
            "{}_{}_{}_{}",
            self.namespace, self.version, self.share_level, self.engine_type
        )
    }

    /// Where engines of this reference register: `/{ns}_{version}_{SHARE}_{TYPE}/{user}/{subdomain}`.
    pub fn engine_space(&self) -> String {
        format!("/{}/{}/{}", self.root(), self.routing_user, self.subdomain)
    }

    /// The launch lock: `/{ns}_{version}_{SHARE}_{TYPE}_lock/{user}/{subdomain}`.
    pub fn lock_path(&self) -> String {
        format!(
            "/{}_lock/{}/{}",
            self.root(),
            self.routing_user,
            self.subdomain
        )
    }

    /// A short name for logs and file names: `{SHARE}-{TYPE}-{user}-{subdomain}`.
    pub fn id(&self) -> String {
        format!(
            "{}-{}-{}-{}",
            self.share_level, self.engine_type, self.routing_user, self.subdomain
        )
    }
}

impl fmt::Display for EngineRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.engine_space())
    }
}

fn check_name(what: &'static str, value: &str) -> Result<(), EngineRefError> {
    validate_path_component(value).map_err(|reason| EngineRefError::BadName {
        what,
        value: value.to_owned(),
        reason,
    })
}

#[cfg(test)]
mod tests;
