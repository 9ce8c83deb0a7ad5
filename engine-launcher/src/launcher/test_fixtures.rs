//! What the engine builders' tests share: a launch spec of alice's USER engine in cluster
//! `prod-a`, and the registry flags launched with it.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::{EngineLaunchSpec, EngineSecret, EngineSettings};
use crate::engine_ref::{EngineRef, EngineType, ShareLevel};
use crate::registry::RegistryLocation;
use crate::self_registration::EngineRegistrationArgs;

/// The cluster's internal secret in these specs.
pub const SECRET: &str = "s3cr3t-value";

/// alice's USER engine of the settings' engine type, its log under `work_dir`.
pub fn spec(work_dir: &Path, settings: EngineSettings) -> EngineLaunchSpec {
    let engine_type = match &settings {
        EngineSettings::DataFusion(_) => EngineType::DataFusion,
        EngineSettings::Spark(_) => EngineType::SparkSql,
    };
    let engine_ref = EngineRef {
        namespace: "kumiho".to_owned(),
        version: "0.1.0".to_owned(),
        share_level: ShareLevel::User,
        engine_type,
        routing_user: "alice".to_owned(),
        subdomain: "default".to_owned(),
        session_user: "alice".to_owned(),
    };
    EngineLaunchSpec {
        log_path: EngineLaunchSpec::default_log_path(work_dir, &engine_ref),
        engine_ref,
        cluster: "prod-a".to_owned(),
        bind_host: "127.0.0.1".to_owned(),
        secret: EngineSecret::new(SECRET),
        env: BTreeMap::from([("HADOOP_CONF_DIR".to_owned(), "/etc/hadoop".to_owned())]),
        max_engines: None,
        settings,
        idle_timeout: Duration::from_secs(1800),
        initialize_timeout: Duration::from_secs(180),
    }
}

/// The registry flags of `spec`'s launch in the embedded registry under `work_dir`.
pub fn registration(work_dir: &Path, spec: &EngineLaunchSpec) -> EngineRegistrationArgs {
    EngineRegistrationArgs {
        registry: RegistryLocation::Embedded {
            work_dir: work_dir.to_owned(),
        },
        engine_space: spec.engine_ref.engine_space(),
        ref_id: "r-1".to_owned(),
        idle_timeout: spec.idle_timeout,
    }
}
