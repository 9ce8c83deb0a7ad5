//! Engine references, registries, launch locks and launchers: how Kumiho finds or starts an engine.
//!
//! A tour, in the order a gateway uses it for one session:
//!
//! - [`engine_ref`]: from the session's user, share level, subdomain and pool, the
//!   [`EngineRef`] naming the engine it shares, its engine space and its launch lock.
//! - [`engine_limit`]: the live engines of a cluster's namespace and the launches under way,
//!   counted against its `limits.max-engines` before a launch.
//! - [`registry`]: the [`Registry`] trait (engine registrations, launch lock, POLLING counter)
//!   and its backends: [`EmbeddedRegistry`] (files and `flock` under the work directory) and
//!   [`ZooKeeperRegistry`] (an ensemble, with sessions that re-register after expiry).
//!   [`registry::suite`] is the test suite every backend passes.
//! - [`launcher`]: [`get_or_create`] (look up, else lock, look again, launch), the
//!   [`Launcher`] that starts engines detached and waits for them to register, and one
//!   [`EngineBuilder`] per engine type ([`DataFusionBuilder`], [`SparkBuilder`]).
//! - [`launch_log`]: the [`LaunchLog`] a client follows while its engine starts.
//! - [`self_registration`]: the registry flags a launched engine receives and the
//!   registration it holds for its lifetime ([`EngineSelfRegistration`]).
//! - [`batch`]: batch jobs (Kyuubi's REST batches): the `spark-submit` command of a Spark or
//!   PySpark batch and its process.
//! - [`process`]: stopping engines and checking that they live.
//! - [`cpu_slice`]: the CPU slice an engine's threads ask Linux for (query work gives way).
//! - [`idle`]: the idle timeout every launched engine stops itself after.
//! - [`error`]: [`LaunchError`], worded for the user waiting on the launch.
//! - `testing` (with `cfg(test)` or the `testing` feature): a real ZooKeeper server for tests.
//!
//! The crate knows nothing of Thrift or sessions beyond what an engine reference needs.
#![deny(unsafe_code)]

pub mod batch;
pub mod cpu_slice;
pub mod engine_limit;
pub mod engine_main;
pub mod engine_ref;
pub mod error;
pub mod idle;
pub mod launch_log;
pub mod launcher;
pub mod process;
pub mod registry;
pub mod self_registration;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use engine_ref::{
    EngineRef, EngineRefError, EngineRefRequest, EngineType, GroupProvider, HostGroupProvider,
    PoolRequest, PoolSelectPolicy, ShareLevel, UnknownValue,
};
pub use error::LaunchError;
pub use launch_log::LaunchLog;
pub use launcher::{
    get_or_create, layered_env, DataFusionBuilder, DataFusionSettings, EngineBuilder,
    EngineCommand, EngineLaunchSpec, EngineSecret, EngineSettings, Launcher, SparkBuilder,
    SparkSettings,
};
pub use process::{is_alive, stop_engine, Stopped};
pub use registry::embedded::EmbeddedRegistry;
pub use registry::zookeeper::{ZooKeeperLocation, ZooKeeperRegistry};
pub use registry::{
    EngineEndpoint, EngineRegistration, LockGuard, RegistrationGuard, Registry, RegistryError,
    RegistryLocation,
};
pub use self_registration::{EngineRegistrationArgs, EngineSelfRegistration};
