//! Batch jobs: the `spark-submit` command of a Spark or PySpark batch, and its process.
//!
//! ```text
//! SPARK_HOME/bin/spark-submit --master M --deploy-mode client --name NAME [--proxy-user USER] \
//!   --conf k=v ... [--class MAIN] RESOURCE ARGS...
//! ```
//!
//! The conf is the cluster's `spark.conf` with the batch's `spark.*` keys laid over it, and
//! `spark.master` / `spark.submit.deployMode` become `--master` / `--deploy-mode`, exactly as
//! for a Spark SQL engine ([`SparkSettings`]); so is `--proxy-user`, the batch's user unless
//! the cluster turns `do-as` off. `spark-submit` runs in a process group of its own so
//! that cancelling a batch stops the driver JVM and whatever it started, with stdout and
//! stderr in one log file and its working directory (Spark's `spark-warehouse`,
//! `metastore_db`) the batch's own.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::path::PathBuf;
use std::process::Stdio;

use crate::launcher::spark::{spark_installation, spark_submit_prefix};
use crate::launcher::{EngineCommand, SparkSettings};

/// What a batch runs: a jar's main class, or a Python file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BatchType {
    /// A jar (or a class on the classpath) run with `--class`.
    Spark,
    /// A Python file run by Spark's Python driver.
    PySpark,
}

crate::wire_names!(BatchType, "batch type", {
    Spark => "SPARK",
    PySpark => "PYSPARK",
});

/// Everything needed to start one batch.
#[derive(Clone, Debug)]
pub struct SparkBatchSpec {
    pub batch_type: BatchType,
    /// The application name (`--name`).
    pub name: String,
    /// The main class (`--class`); required for SPARK, ignored for PYSPARK.
    pub class_name: Option<String>,
    /// The jar or Python file, as `spark-submit` takes it (a path or a URL).
    pub resource: String,
    /// The application's own arguments, after the resource.
    pub args: Vec<String>,
    /// The cluster's Spark settings with the batch's `spark.*` keys as overrides.
    pub settings: SparkSettings,
    /// Environment variables from the cluster config.
    pub env: BTreeMap<String, String>,
    /// The cluster the batch runs on (for messages).
    pub cluster: String,
    /// The working directory of `spark-submit` (created).
    pub work_dir: PathBuf,
    /// Where stdout and stderr go (appended).
    pub log_path: PathBuf,
}

/// Why a batch could not be started.
#[derive(Debug, thiserror::Error)]
pub enum BatchLaunchError {
    /// The cluster's Spark settings cannot run a batch; the operator's to fix (or the batch
    /// names the wrong cluster).
    #[error("cluster `{cluster}` cannot run Spark batches: {reason}")]
    BadSettings { cluster: String, reason: String },

    /// The batch's request cannot be run as sent.
    #[error("{0}")]
    BadRequest(String),

    /// The log file or working directory could not be made.
    #[error("could not write {}: {source}; check the gateway's work directory", path.display())]
    WorkDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The OS could not start `spark-submit`.
    #[error("could not start {}: {source}", program.display())]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Why only the client deploy mode is accepted, for the error.
const WHY_CLIENT: &str = "the gateway follows each batch through its spark-submit process, so \
                          use `deploy-mode: client` (executors still run on the master's resources)";

/// The `spark-submit` command of `spec`: checks the Spark installation and the request.
pub fn build_command(spec: &SparkBatchSpec) -> Result<EngineCommand, BatchLaunchError> {
    let bad = |reason: String| BatchLaunchError::BadSettings {
        cluster: spec.cluster.clone(),
        reason,
    };
    let (home, spark_submit) =
        spark_installation(&spec.settings, &spec.env, &spec.cluster).map_err(&bad)?;
    if spec.resource.trim().is_empty() {
        return Err(BatchLaunchError::BadRequest(
            "`resource` is empty; name the jar or Python file to run".to_owned(),
        ));
    }
    // spark-submit would read a resource starting with `-` as one of its own options.
    if spec.resource.starts_with('-') {
        return Err(BatchLaunchError::BadRequest(format!(
            "`resource` `{}` starts with `-`; name the jar or Python file to run",
            spec.resource
        )));
    }
    let mut command =
        spark_submit_prefix(&spec.settings, &spark_submit, &spec.name, WHY_CLIENT).map_err(bad)?;
    if spec.batch_type == BatchType::Spark {
        let class = spec
            .class_name
            .as_deref()
            .map(str::trim)
            .filter(|class| !class.is_empty())
            .ok_or_else(|| {
                BatchLaunchError::BadRequest(
                    "`className` is required for a SPARK batch: the main class of its jar"
                        .to_owned(),
                )
            })?;
        command.push("--class".to_owned());
        command.push(class.to_owned());
    }
    command.push(spec.resource.clone());
    command.extend(spec.args.iter().cloned());
    let mut env = spec.env.clone();
    env.insert("SPARK_HOME".to_owned(), home.display().to_string());
    let mut args = command;
    let program = PathBuf::from(args.remove(0));
    Ok(EngineCommand { program, args, env })
}

/// Starts `command` for `spec`: its own process group, stdin closed, stdout and stderr
/// appended to `spec.log_path`, in `spec.work_dir`. The child is not killed when dropped: a
/// batch outlives a gateway that stops, and is found again by its pid.
pub fn spawn(
    spec: &SparkBatchSpec,
    command: &EngineCommand,
) -> Result<tokio::process::Child, BatchLaunchError> {
    let work_dir_error = |path: &PathBuf| {
        let path = path.clone();
        move |source| BatchLaunchError::WorkDir { path, source }
    };
    fs::create_dir_all(&spec.work_dir).map_err(work_dir_error(&spec.work_dir))?;
    if let Some(parent) = spec.log_path.parent() {
        fs::create_dir_all(parent).map_err(work_dir_error(&spec.log_path))?;
    }
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&spec.log_path)
        .map_err(work_dir_error(&spec.log_path))?;
    let stderr = log.try_clone().map_err(work_dir_error(&spec.log_path))?;
    tokio::process::Command::new(&command.program)
        .args(&command.args)
        .envs(&command.env)
        .current_dir(&spec.work_dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(stderr)
        .process_group(0)
        .spawn()
        .map_err(|source| BatchLaunchError::Spawn {
            program: command.program.clone(),
            source,
        })
}

/// Whether a `--conf` key's value must not be shown (Spark's default
/// `spark.redaction.regex`: secret, password, token, access key).
pub fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    [
        "secret",
        "password",
        "token",
        "access.key",
        "accesskey",
        "credential",
    ]
    .iter()
    .any(|word| key.contains(word))
}

/// `command` as one line for logs, with the values of secret `--conf` keys replaced by
/// `*********(redacted)` (Spark's own marker) and the environment's values left out.
pub fn redacted(command: &EngineCommand) -> String {
    let mut line = command.program.display().to_string();
    let mut after_conf = false;
    for arg in &command.args {
        line.push(' ');
        match arg.split_once('=') {
            Some((key, _)) if after_conf && is_secret_key(key) => {
                line.push_str(key);
                line.push_str("=*********(redacted)");
            }
            _ => line.push_str(arg),
        }
        after_conf = arg == "--conf";
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spark_home() -> tempfile::TempDir {
        let home = tempfile::tempdir().unwrap();
        fs::create_dir_all(home.path().join("bin")).unwrap();
        fs::write(home.path().join("bin/spark-submit"), "#!/bin/sh\n").unwrap();
        home
    }

    fn spec(home: &std::path::Path, batch_type: BatchType) -> SparkBatchSpec {
        let mut conf = BTreeMap::new();
        conf.insert("spark.ui.enabled".to_owned(), "false".to_owned());
        conf.insert("spark.executor.memory".to_owned(), "1g".to_owned());
        let mut batch_conf = BTreeMap::new();
        batch_conf.insert("spark.executor.memory".to_owned(), "2g".to_owned());
        batch_conf.insert("kyuubi.session.cluster".to_owned(), "c".to_owned());
        SparkBatchSpec {
            batch_type,
            name: "etl".to_owned(),
            class_name: Some("org.example.Main".to_owned()),
            resource: "/jobs/etl.jar".to_owned(),
            args: vec!["--day".to_owned(), "2026-12-01".to_owned()],
            settings: SparkSettings {
                home: Some(home.to_owned()),
                master: Some("local[2]".to_owned()),
                conf,
                ..Default::default()
            }
            .with_session_conf(&batch_conf),
            env: BTreeMap::new(),
            cluster: "c".to_owned(),
            work_dir: home.join("w"),
            log_path: home.join("w.log"),
        }
    }

    #[test]
    fn a_spark_batch_runs_its_class_on_the_resource_with_the_batch_conf_over_the_cluster() {
        let home = spark_home();
        let command = build_command(&spec(home.path(), BatchType::Spark)).unwrap();
        assert!(command.program.ends_with("bin/spark-submit"));
        assert_eq!(
            command.args,
            [
                "--master",
                "local[2]",
                "--deploy-mode",
                "client",
                "--name",
                "etl",
                "--conf",
                "spark.executor.memory=2g",
                "--conf",
                "spark.ui.enabled=false",
                "--class",
                "org.example.Main",
                "/jobs/etl.jar",
                "--day",
                "2026-12-01",
            ]
        );
        assert_eq!(
            command.env.get("SPARK_HOME").map(PathBuf::from).as_deref(),
            Some(home.path())
        );
    }

    #[test]
    fn a_pyspark_batch_has_no_class_and_a_spark_batch_needs_one() {
        let home = spark_home();
        let mut python = spec(home.path(), BatchType::PySpark);
        python.resource = "/jobs/etl.py".to_owned();
        let command = build_command(&python).unwrap();
        assert!(!command.args.contains(&"--class".to_owned()));
        assert_eq!(command.args[command.args.len() - 3], "/jobs/etl.py");
        let mut classless = spec(home.path(), BatchType::Spark);
        classless.class_name = Some(" ".to_owned());
        let error = build_command(&classless).unwrap_err().to_string();
        assert!(error.contains("className"), "{error}");
    }

    #[test]
    fn a_cluster_without_spark_or_with_cluster_mode_is_refused_saying_what_to_set() {
        let home = spark_home();
        let mut missing = spec(home.path(), BatchType::Spark);
        missing.settings.home = Some(home.path().join("nope"));
        let error = build_command(&missing).unwrap_err().to_string();
        assert!(
            error.contains("cluster `c`") && error.contains("engine.spark.home"),
            "{error}"
        );
        let mut cluster_mode = spec(home.path(), BatchType::Spark);
        cluster_mode.settings.deploy_mode = Some("cluster".to_owned());
        let error = build_command(&cluster_mode).unwrap_err().to_string();
        assert!(error.contains("deploy-mode: client"), "{error}");
        let mut dash = spec(home.path(), BatchType::Spark);
        dash.resource = "--jars".to_owned();
        assert!(matches!(
            build_command(&dash),
            Err(BatchLaunchError::BadRequest(_))
        ));
    }

    #[test]
    fn secret_conf_values_are_redacted_in_the_logged_command() {
        let command = EngineCommand {
            program: PathBuf::from("spark-submit"),
            args: [
                "--conf",
                "spark.hadoop.fs.s3a.secret.key=hunter2",
                "--conf",
                "spark.ui.enabled=false",
                "app.py",
                "password=kept-as-an-app-argument",
            ]
            .map(str::to_owned)
            .to_vec(),
            env: BTreeMap::from([("TOKEN".to_owned(), "t0k3n".to_owned())]),
        };
        let line = redacted(&command);
        assert!(
            !line.contains("hunter2") && !line.contains("t0k3n"),
            "{line}"
        );
        assert!(line.contains("spark.hadoop.fs.s3a.secret.key=*********(redacted)"));
        assert!(line.contains("spark.ui.enabled=false"));
        assert_eq!(BatchType::PySpark.as_str(), "PYSPARK");
        assert_eq!("pyspark".parse::<BatchType>().unwrap(), BatchType::PySpark);
    }
}
