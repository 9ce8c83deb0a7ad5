//! The command line of a Spark SQL engine: `kumiho-spark-engine` wrapped around `spark-submit`.
//!
//! The Spark Thrift Server cannot register itself, admit only the gateway, or stop when idle,
//! so the launcher starts Kumiho's supervisor, which does these for it and runs the
//! `spark-submit` command built here:
//!
//! ```text
//! kumiho-spark-engine <registry flags> --bind-host H --work-dir WORK/engines/ID [--remove-work-dir] \
//!   -- SPARK_HOME/bin/spark-submit --master M --deploy-mode client --name kumiho-ID \
//!      [--proxy-user USER] --conf k=v ... --class org.apache.spark.sql.hive.thriftserver.HiveThriftServer2 spark-internal
//! ```
//!
//! The supervisor adds the Thrift Server's own port and bind host (`--hiveconf ...`) and its
//! authentication settings, placed so that no `--conf` here overrides them (they must come
//! before `spark-internal`, which therefore ends the command). The
//! secret travels in `KUMIHO_ENGINE_SECRET` as for every engine, `SPARK_HOME` is set to the
//! installation used, and the cluster's environment is passed on.
//!
//! Conf is the cluster's `spark.conf` with the session's `spark.*` keys laid over it;
//! `spark.master` and `spark.submit.deployMode` become `--master` and `--deploy-mode`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{installed_program, EngineBuilder, EngineCommand, EngineLaunchSpec, EngineSettings};
use crate::engine_ref::{EngineType, ShareLevel};
use crate::error::LaunchError;
use crate::self_registration::EngineRegistrationArgs;

/// The Spark Thrift Server's main class.
pub const THRIFT_SERVER_CLASS: &str = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2";

/// The master used when neither the cluster nor the session names one (as `spark-submit`).
pub const DEFAULT_MASTER: &str = "local[*]";

const MASTER_KEY: &str = "spark.master";
const DEPLOY_MODE_KEY: &str = "spark.submit.deployMode";

/// Spark SQL engine settings: the cluster's, and the session's `spark.*` keys over them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SparkSettings {
    /// `SPARK_HOME`; when absent, `SPARK_HOME` from the cluster's environment, then the
    /// gateway's.
    pub home: Option<PathBuf>,
    /// `--master` (`local[*]`, `spark://...`, `yarn`, `k8s://...`).
    pub master: Option<String>,
    /// `--deploy-mode`; only `client` works (the supervisor must reach the Thrift Server).
    pub deploy_mode: Option<String>,
    /// The cluster's `--conf` pairs.
    pub conf: BTreeMap<String, String>,
    /// The session's `spark.*` keys, which win over the cluster's (see
    /// [`SparkSettings::with_session_conf`]).
    pub session_conf: BTreeMap<String, String>,
    /// `--proxy-user`: the user Spark runs as, impersonated by the gateway's OS user (and,
    /// on a secure Hadoop cluster, its Kerberos ticket), as Kyuubi's
    /// `kyuubi.engine.doAs.enabled` launches engines. `None`: Spark runs as the gateway.
    pub proxy_user: Option<String>,
}

impl SparkSettings {
    /// Keeps the `spark.*` keys of a session's (normalised) settings as its overrides; other
    /// keys are for the engine session, not for the launch.
    pub fn with_session_conf(mut self, session: &BTreeMap<String, String>) -> SparkSettings {
        self.session_conf = session
            .iter()
            .filter(|(key, _)| key.starts_with("spark."))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        self
    }

    /// The conf in force: the cluster's, then the session's over it.
    fn effective_conf(&self) -> BTreeMap<String, String> {
        let mut conf = self.conf.clone();
        conf.extend(self.session_conf.clone());
        conf
    }
}

/// Builds `kumiho-spark-engine` command lines.
#[derive(Debug, Clone)]
pub struct SparkBuilder {
    program: PathBuf,
}

impl SparkBuilder {
    /// The supervisor program's file name.
    pub const PROGRAM_NAME: &'static str = "kumiho-spark-engine";

    /// A builder running `program`.
    pub fn new(program: impl Into<PathBuf>) -> SparkBuilder {
        SparkBuilder {
            program: program.into(),
        }
    }

    /// A builder running the configured program, else `kumiho-spark-engine` next to the
    /// running executable. Unlike the DataFusion engine it is not required to exist: a
    /// gateway without it serves DataFusion, and a Spark launch then fails naming the path.
    pub fn locate(configured: Option<&Path>) -> SparkBuilder {
        let program = installed_program(configured, Self::PROGRAM_NAME);
        SparkBuilder::new(program)
    }

    /// The program run.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The `spark-submit` command (program first) for `settings`, with `spark_submit` the
    /// resolved program and `name` the application name.
    fn spark_submit_command(
        settings: &SparkSettings,
        spark_submit: &Path,
        name: &str,
    ) -> Result<Vec<String>, LaunchError> {
        let mut command = spark_submit_prefix(
            settings,
            spark_submit,
            name,
            "the Spark Thrift Server must run beside Kumiho's supervisor, so use \
             `deploy-mode: client` (executors still run on the master's resources)",
        )
        .map_err(|reason| LaunchError::BadSettings {
            engine_type: EngineType::SparkSql,
            reason,
        })?;
        command.push("--class".to_owned());
        command.push(THRIFT_SERVER_CLASS.to_owned());
        command.push("spark-internal".to_owned());
        Ok(command)
    }
}

/// `spark-submit --master M --deploy-mode client --name NAME --conf k=v ...` (program first)
/// for `settings`: the Spark Thrift Server's launch and a batch's share it. The session's (or
/// batch's) `spark.master` wins over everything, the cluster's `master` over the cluster's own
/// `spark.master` conf; only the client deploy mode is taken (`why_client` says why, in the
/// error). `Err` is the reason, for the caller's error.
pub(crate) fn spark_submit_prefix(
    settings: &SparkSettings,
    spark_submit: &Path,
    name: &str,
    why_client: &str,
) -> Result<Vec<String>, String> {
    let mut conf = settings.effective_conf();
    let master = match (settings.session_conf.get(MASTER_KEY), &settings.master) {
        (Some(session), _) => session.clone(),
        (None, Some(cluster)) => cluster.clone(),
        (None, None) => conf
            .get(MASTER_KEY)
            .cloned()
            .unwrap_or_else(|| DEFAULT_MASTER.to_owned()),
    };
    conf.remove(MASTER_KEY);
    let deploy_mode = match (
        settings.session_conf.get(DEPLOY_MODE_KEY),
        &settings.deploy_mode,
    ) {
        (Some(session), _) => Some(session.clone()),
        (None, Some(cluster)) => Some(cluster.clone()),
        (None, None) => conf.get(DEPLOY_MODE_KEY).cloned(),
    };
    conf.remove(DEPLOY_MODE_KEY);
    if let Some(mode) = deploy_mode.as_deref() {
        if !mode.eq_ignore_ascii_case("client") {
            return Err(format!(
                "deploy mode `{mode}` is not supported: {why_client}"
            ));
        }
    }
    let mut command = vec![
        spark_submit.display().to_string(),
        "--master".to_owned(),
        master,
        "--deploy-mode".to_owned(),
        "client".to_owned(),
        "--name".to_owned(),
        name.to_owned(),
    ];
    if let Some(user) = &settings.proxy_user {
        command.push("--proxy-user".to_owned());
        command.push(user.clone());
    }
    for (key, value) in conf {
        command.push("--conf".to_owned());
        command.push(format!("{key}={value}"));
    }
    Ok(command)
}

/// The Spark installation of a launch: the cluster's `spark.home`, else `SPARK_HOME` of the
/// cluster's environment, else the gateway's; and its `bin/spark-submit`, which must exist.
fn resolve_spark_home(
    settings: &SparkSettings,
    env: &BTreeMap<String, String>,
    cluster: &str,
) -> Result<(PathBuf, PathBuf), LaunchError> {
    spark_installation(settings, env, cluster).map_err(|reason| LaunchError::BadSettings {
        engine_type: EngineType::SparkSql,
        reason,
    })
}

/// [`resolve_spark_home`] with the reason as the error, for batches too.
pub(crate) fn spark_installation(
    settings: &SparkSettings,
    env: &BTreeMap<String, String>,
    cluster: &str,
) -> Result<(PathBuf, PathBuf), String> {
    let home = settings
        .home
        .clone()
        .or_else(|| env.get("SPARK_HOME").map(PathBuf::from))
        .or_else(|| std::env::var_os("SPARK_HOME").map(PathBuf::from))
        .ok_or_else(|| {
            format!(
                "no Spark installation is configured: set `engine.spark.home` in cluster config \
                 `{cluster}` (or SPARK_HOME in its `env`, or in the gateway's environment)"
            )
        })?;
    let spark_submit = home.join("bin").join("spark-submit");
    if !spark_submit.is_file() {
        return Err(format!(
            "{} does not exist: the Spark home `{}` of cluster config `{cluster}` \
             (`engine.spark.home` or SPARK_HOME) must be a Spark installation",
            spark_submit.display(),
            home.display()
        ));
    }
    Ok((home, spark_submit))
}

impl EngineBuilder for SparkBuilder {
    fn engine_type(&self) -> EngineType {
        EngineType::SparkSql
    }

    fn build(
        &self,
        spec: &EngineLaunchSpec,
        registration: &EngineRegistrationArgs,
    ) -> Result<EngineCommand, LaunchError> {
        let EngineSettings::Spark(settings) = &spec.settings else {
            return Err(LaunchError::settings_of_another_type(EngineType::SparkSql));
        };
        let (home, spark_submit) = resolve_spark_home(settings, &spec.env, &spec.cluster)?;
        let name = format!("kumiho-{}", spec.engine_ref.id());
        let spark_submit = Self::spark_submit_command(settings, &spark_submit, &name)?;
        // Spark's files (Derby's metastore_db, spark-warehouse, derby.log) land in the
        // engine's own directory, never in the gateway's current directory.
        let work_dir = spec.log_path.with_extension("");
        let mut args = registration.to_args();
        args.extend([
            "--bind-host".to_owned(),
            spec.bind_host.clone(),
            "--work-dir".to_owned(),
            work_dir.display().to_string(),
        ]);
        // A CONNECTION engine's directory is named after its session and never used again.
        if spec.engine_ref.share_level == ShareLevel::Connection {
            args.push("--remove-work-dir".to_owned());
        }
        args.push("--".to_owned());
        args.extend(spark_submit);
        let mut env = spec.engine_env();
        env.insert("SPARK_HOME".to_owned(), home.display().to_string());
        Ok(EngineCommand {
            program: self.program.clone(),
            args,
            env,
        })
    }
}

#[cfg(test)]
mod tests;
