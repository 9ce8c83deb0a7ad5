//! What an engine needs to register itself: its registry flags and the registration it holds.
//!
//! The launcher passes [`EngineRegistrationArgs`] on the engine's command line; the engine
//! takes them out of its arguments with [`EngineRegistrationArgs::extract`] (no clap needed,
//! the rest goes to its own parser) and, once its server listens, calls
//! [`EngineSelfRegistration::start`]. The engine process holds the registration, so it lives
//! exactly as long as the engine, whatever happens to the gateway.
//!
//! In an embedded registry (`--registry-dir`) the registration is a locked file. In ZooKeeper
//! (`--registry-zookeeper ADDRS`, with `--registry-zookeeper-session-timeout` and
//! `--registry-zookeeper-connect-timeout`) it is an ephemeral node of the engine's own session;
//! should that session expire, the registry registers the engine again on a new one (with a
//! new sequence number; [`EngineSelfRegistration::registration`] stays the first).
//!
//! ```no_run
//! # async fn engine_main() -> Result<(), Box<dyn std::error::Error>> {
//! use kumiho_engine_launcher::{EngineRegistrationArgs, EngineSelfRegistration};
//! let (registration_args, own_args) = EngineRegistrationArgs::extract(std::env::args())?;
//! // ... parse `own_args` with clap, bind the server, learn the port ...
//! # let (host, port) = ("127.0.0.1".to_owned(), 10000);
//! let _registration = match &registration_args {
//!     Some(args) => Some(EngineSelfRegistration::start(args, &host, port).await?),
//!     None => None, // started by hand: nothing to register with
//! };
//! // ... serve; dropping `_registration` on shutdown deregisters ...
//! # Ok(()) }
//! ```

use std::path::PathBuf;
use std::time::Duration;

use crate::registry::embedded::EmbeddedRegistry;
use crate::registry::zookeeper::{self, ZooKeeperLocation, ZooKeeperRegistry};
use crate::registry::{
    EngineEndpoint, EngineRegistration, RegistrationGuard, Registry, RegistryError,
    RegistryLocation,
};

/// The version engines register with: the workspace's, shared by gateway and engine.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where and how a launched engine registers, as command-line flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineRegistrationArgs {
    /// The registry to register in.
    pub registry: RegistryLocation,
    /// The engine space (`EngineRef::engine_space`).
    pub engine_space: String,
    /// The launch's reference id, so the launcher recognises its engine.
    pub ref_id: String,
    /// The engine stops itself after this long with no session.
    pub idle_timeout: Duration,
}

/// A flag the engine's registry arguments cannot be read from; the launcher's or operator's bug.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    /// A flag without its value.
    #[error("{flag} needs a value")]
    MissingValue {
        /// The flag.
        flag: &'static str,
    },
    /// Some registry flags were given but not this required one.
    #[error("{flag} is required with the other registry flags ({})", EngineRegistrationArgs::FLAGS.join(", "))]
    MissingFlag {
        /// The missing flag.
        flag: &'static str,
    },
    /// Registry flags without the registry itself.
    #[error("the registry flags need {REGISTRY_DIR} (embedded registry) or {REGISTRY_ZOOKEEPER} (ZooKeeper ensemble)")]
    MissingRegistry,
    /// Both registries were named.
    #[error("{REGISTRY_DIR} and {REGISTRY_ZOOKEEPER} name two registries; give one")]
    TwoRegistries,
    /// A duration flag that is not a duration.
    #[error("{flag} `{value}` is not a duration such as `30m` or `90s`")]
    BadDuration {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: String,
    },
}

const REGISTRY_DIR: &str = "--registry-dir";
const REGISTRY_ZOOKEEPER: &str = "--registry-zookeeper";
const ZOOKEEPER_SESSION_TIMEOUT: &str = "--registry-zookeeper-session-timeout";
const ZOOKEEPER_CONNECT_TIMEOUT: &str = "--registry-zookeeper-connect-timeout";
const ENGINE_SPACE: &str = "--engine-space";
const REF_ID: &str = "--ref-id";
const IDLE_TIMEOUT: &str = "--idle-timeout";

/// The default idle timeout when `--idle-timeout` is absent (Kyuubi's `PT30M`).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

fn format_duration(duration: Duration) -> String {
    humantime::format_duration(duration).to_string()
}

fn parse_duration(
    flag: &'static str,
    value: Option<String>,
    default: Duration,
) -> Result<Duration, ArgsError> {
    match value {
        None => Ok(default),
        Some(value) => {
            humantime::parse_duration(&value).map_err(|_| ArgsError::BadDuration { flag, value })
        }
    }
}

impl EngineRegistrationArgs {
    /// The flags this struct reads and writes.
    pub const FLAGS: [&'static str; 7] = [
        REGISTRY_DIR,
        REGISTRY_ZOOKEEPER,
        ZOOKEEPER_SESSION_TIMEOUT,
        ZOOKEEPER_CONNECT_TIMEOUT,
        ENGINE_SPACE,
        REF_ID,
        IDLE_TIMEOUT,
    ];

    /// The flags as command-line arguments.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = match &self.registry {
            RegistryLocation::Embedded { work_dir } => {
                vec![REGISTRY_DIR.to_owned(), work_dir.display().to_string()]
            }
            RegistryLocation::ZooKeeper(zookeeper) => vec![
                REGISTRY_ZOOKEEPER.to_owned(),
                zookeeper.addresses.clone(),
                ZOOKEEPER_SESSION_TIMEOUT.to_owned(),
                format_duration(zookeeper.session_timeout),
                ZOOKEEPER_CONNECT_TIMEOUT.to_owned(),
                format_duration(zookeeper.connect_timeout),
            ],
        };
        args.extend([
            ENGINE_SPACE.to_owned(),
            self.engine_space.clone(),
            REF_ID.to_owned(),
            self.ref_id.clone(),
            IDLE_TIMEOUT.to_owned(),
            format_duration(self.idle_timeout),
        ]);
        args
    }

    /// Takes the registry flags (`--flag value` or `--flag=value`) out of `args` and returns
    /// them with the remaining arguments in order (the program name included), for the
    /// engine's own parser. `None` when no registry flag is present.
    pub fn extract(
        args: impl IntoIterator<Item = String>,
    ) -> Result<(Option<EngineRegistrationArgs>, Vec<String>), ArgsError> {
        let mut rest = Vec::new();
        let mut found: [Option<String>; 7] = Default::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (name, inline_value) = match arg.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (arg.as_str(), None),
            };
            let Some(index) = Self::FLAGS.iter().position(|flag| *flag == name) else {
                rest.push(arg);
                continue;
            };
            let flag = Self::FLAGS[index];
            let value = match inline_value {
                Some(value) => value,
                None => args.next().ok_or(ArgsError::MissingValue { flag })?,
            };
            found[index] = Some(value);
        }
        if found.iter().all(Option::is_none) {
            return Ok((None, rest));
        }
        let [registry_dir, zookeeper_addresses, session_timeout, connect_timeout, engine_space, ref_id, idle_timeout] =
            found;
        let required = |value: Option<String>, flag| value.ok_or(ArgsError::MissingFlag { flag });
        let registry = match (registry_dir, zookeeper_addresses) {
            (Some(work_dir), None) => RegistryLocation::Embedded {
                work_dir: PathBuf::from(work_dir),
            },
            (None, Some(addresses)) => RegistryLocation::ZooKeeper(ZooKeeperLocation {
                addresses,
                session_timeout: parse_duration(
                    ZOOKEEPER_SESSION_TIMEOUT,
                    session_timeout,
                    zookeeper::DEFAULT_SESSION_TIMEOUT,
                )?,
                connect_timeout: parse_duration(
                    ZOOKEEPER_CONNECT_TIMEOUT,
                    connect_timeout,
                    zookeeper::DEFAULT_CONNECT_TIMEOUT,
                )?,
            }),
            (None, None) => return Err(ArgsError::MissingRegistry),
            (Some(_), Some(_)) => return Err(ArgsError::TwoRegistries),
        };
        let parsed = EngineRegistrationArgs {
            registry,
            engine_space: required(engine_space, ENGINE_SPACE)?,
            ref_id: required(ref_id, REF_ID)?,
            idle_timeout: parse_duration(IDLE_TIMEOUT, idle_timeout, DEFAULT_IDLE_TIMEOUT)?,
        };
        Ok((Some(parsed), rest))
    }
}

/// An engine's hold on its own registration; dropping it deregisters the engine.
#[derive(Debug)]
#[must_use = "the engine is deregistered when this is dropped"]
pub struct EngineSelfRegistration {
    guard: RegistrationGuard,
}

impl EngineSelfRegistration {
    /// Registers the engine listening on `host:port` where `args` say. `host` must be an
    /// address the gateway can connect to (the bind host it was given, not `0.0.0.0`).
    pub async fn start(
        args: &EngineRegistrationArgs,
        host: &str,
        port: u16,
    ) -> Result<EngineSelfRegistration, RegistryError> {
        let endpoint = EngineEndpoint {
            host: host.to_owned(),
            port,
            version: ENGINE_VERSION.to_owned(),
            ref_id: args.ref_id.clone(),
        };
        let guard = match &args.registry {
            RegistryLocation::Embedded { work_dir } => {
                EmbeddedRegistry::open(work_dir.clone())?
                    .register_engine(&args.engine_space, endpoint)
                    .await?
            }
            // The guard keeps the registry's session: the registration lives on it.
            RegistryLocation::ZooKeeper(location) => {
                ZooKeeperRegistry::connect(location.clone())
                    .await?
                    .register_engine(&args.engine_space, endpoint)
                    .await?
            }
        };
        tracing::info!(space = %args.engine_space, node = %guard.registration().node_name(), "engine registered");
        Ok(EngineSelfRegistration { guard })
    }

    /// The registration held.
    pub fn registration(&self) -> &EngineRegistration {
        self.guard.registration()
    }

    /// Deregisters now, reporting failure (on shutdown, before draining sessions).
    pub fn deregister(self) -> Result<(), RegistryError> {
        self.guard.deregister()
    }
}

#[cfg(test)]
mod tests;
