//! The kumiho-spark-engine command line: spark-submit from the settings, conf overlay, master,
//! Spark home, environment, and the secret kept off the command line.

use super::*;
use crate::launcher::test_fixtures::{self, SECRET};
use crate::launcher::SECRET_ENV;

/// A directory shaped like a Spark installation (`bin/spark-submit`).
fn spark_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join("bin")).unwrap();
    std::fs::write(home.path().join("bin/spark-submit"), "#!/bin/sh\n").unwrap();
    home
}

fn spec(work_dir: &Path, settings: SparkSettings) -> EngineLaunchSpec {
    test_fixtures::spec(work_dir, EngineSettings::Spark(settings))
}

fn registration(work_dir: &Path) -> EngineRegistrationArgs {
    test_fixtures::registration(work_dir, &spec(work_dir, SparkSettings::default()))
}

fn build(settings: SparkSettings) -> Result<(EngineCommand, tempfile::TempDir), LaunchError> {
    let work = tempfile::tempdir().unwrap();
    let command = SparkBuilder::new("/opt/kumiho/bin/kumiho-spark-engine")
        .build(&spec(work.path(), settings), &registration(work.path()))?;
    Ok((command, work))
}

/// The arguments after `--`: the spark-submit command.
fn spark_submit(command: &EngineCommand) -> Vec<String> {
    let dashes = command.args.iter().position(|arg| arg == "--").unwrap();
    command.args[dashes + 1..].to_vec()
}

/// The `--conf` pairs of a spark-submit command, in order.
fn confs(submit: &[String]) -> Vec<String> {
    submit
        .windows(2)
        .filter(|pair| pair[0] == "--conf")
        .map(|pair| pair[1].clone())
        .collect()
}

fn value_of(submit: &[String], flag: &str) -> String {
    let at = submit.iter().position(|arg| arg == flag).unwrap();
    submit[at + 1].clone()
}

#[test]
fn the_supervisor_gets_registry_flags_bind_host_work_dir_and_then_spark_submit() {
    let home = spark_home();
    let settings = SparkSettings {
        home: Some(home.path().to_owned()),
        master: Some("yarn".to_owned()),
        ..SparkSettings::default()
    };
    let (command, work) = build(settings).unwrap();
    assert_eq!(
        command.program,
        PathBuf::from("/opt/kumiho/bin/kumiho-spark-engine")
    );
    let mut expected = registration(work.path()).to_args();
    expected.extend([
        "--bind-host".to_owned(),
        "127.0.0.1".to_owned(),
        "--work-dir".to_owned(),
        work.path()
            .join("engines/USER-SPARK_SQL-alice-default")
            .display()
            .to_string(),
        "--".to_owned(),
        home.path().join("bin/spark-submit").display().to_string(),
        "--master".to_owned(),
        "yarn".to_owned(),
        "--deploy-mode".to_owned(),
        "client".to_owned(),
        "--name".to_owned(),
        "kumiho-USER-SPARK_SQL-alice-default".to_owned(),
        "--class".to_owned(),
        THRIFT_SERVER_CLASS.to_owned(),
        "spark-internal".to_owned(),
    ]);
    assert_eq!(command.args, expected);
}

#[test]
fn the_secret_is_only_in_the_environment_beside_spark_home_and_the_cluster_env() {
    let home = spark_home();
    let settings = SparkSettings {
        home: Some(home.path().to_owned()),
        ..SparkSettings::default()
    };
    let (command, _work) = build(settings).unwrap();
    assert!(command.args.iter().all(|arg| !arg.contains(SECRET)));
    assert!(!format!("{command} {command:?}").contains(SECRET));
    assert_eq!(command.env[SECRET_ENV], SECRET);
    assert_eq!(command.env["SPARK_HOME"], home.path().display().to_string());
    assert_eq!(command.env["HADOOP_CONF_DIR"], "/etc/hadoop");
}

#[test]
fn session_spark_keys_overlay_the_cluster_conf_and_other_keys_stay_out() {
    let home = spark_home();
    let session = BTreeMap::from([
        ("spark.executor.memory".to_owned(), "8g".to_owned()),
        ("spark.sql.shuffle.partitions".to_owned(), "4".to_owned()),
        ("kyuubi.engine.type".to_owned(), "SPARK_SQL".to_owned()),
        ("hive.server2.proxy.user".to_owned(), "bob".to_owned()),
    ]);
    let settings = SparkSettings {
        home: Some(home.path().to_owned()),
        master: Some("local[2]".to_owned()),
        conf: BTreeMap::from([
            ("spark.executor.memory".to_owned(), "4g".to_owned()),
            (
                "spark.dynamicAllocation.enabled".to_owned(),
                "true".to_owned(),
            ),
        ]),
        ..SparkSettings::default()
    }
    .with_session_conf(&session);
    assert_eq!(settings.session_conf.len(), 2);
    let (command, _work) = build(settings).unwrap();
    let submit = spark_submit(&command);
    assert_eq!(
        confs(&submit),
        [
            "spark.dynamicAllocation.enabled=true",
            "spark.executor.memory=8g",
            "spark.sql.shuffle.partitions=4",
        ]
    );
    assert_eq!(value_of(&submit, "--master"), "local[2]");
}

#[test]
fn the_master_comes_from_the_session_then_the_cluster_then_its_conf_then_the_default() {
    let home = spark_home();
    let base = SparkSettings {
        home: Some(home.path().to_owned()),
        ..SparkSettings::default()
    };
    let master_of = |settings: SparkSettings| {
        let (command, _work) = build(settings).unwrap();
        let submit = spark_submit(&command);
        assert!(
            confs(&submit)
                .iter()
                .all(|conf| !conf.starts_with("spark.master=")),
            "{submit:?}"
        );
        value_of(&submit, "--master")
    };
    assert_eq!(master_of(base.clone()), DEFAULT_MASTER);
    let with_conf = SparkSettings {
        conf: BTreeMap::from([("spark.master".to_owned(), "spark://m:7077".to_owned())]),
        ..base.clone()
    };
    assert_eq!(master_of(with_conf.clone()), "spark://m:7077");
    let with_master = SparkSettings {
        master: Some("yarn".to_owned()),
        ..with_conf
    };
    assert_eq!(master_of(with_master.clone()), "yarn");
    let session = BTreeMap::from([("spark.master".to_owned(), "bogus://x".to_owned())]);
    assert_eq!(
        master_of(with_master.with_session_conf(&session)),
        "bogus://x"
    );
}

#[test]
fn cluster_deploy_mode_is_refused_with_the_reason() {
    let home = spark_home();
    let settings = SparkSettings {
        home: Some(home.path().to_owned()),
        deploy_mode: Some("cluster".to_owned()),
        ..SparkSettings::default()
    };
    let error = build(settings).unwrap_err().to_string();
    assert!(
        error.contains("deploy mode `cluster`") && error.contains("deploy-mode: client"),
        "{error}"
    );
}

#[test]
fn a_spark_home_without_spark_submit_names_the_setting_to_fix() {
    let not_spark = tempfile::tempdir().unwrap();
    let settings = SparkSettings {
        home: Some(not_spark.path().to_owned()),
        ..SparkSettings::default()
    };
    let error = build(settings).unwrap_err().to_string();
    assert!(
        error.contains("bin/spark-submit does not exist")
            && error.contains("engine.spark.home")
            && error.contains("prod-a"),
        "{error}"
    );
}

#[test]
fn spark_home_falls_back_to_the_cluster_environment() {
    let home = spark_home();
    let settings = SparkSettings::default();
    let (home_found, spark_submit) = resolve_spark_home(
        &settings,
        &BTreeMap::from([("SPARK_HOME".to_owned(), home.path().display().to_string())]),
        "prod-a",
    )
    .unwrap();
    assert_eq!(home_found, home.path());
    assert_eq!(spark_submit, home.path().join("bin/spark-submit"));
}

#[test]
fn a_proxy_user_comes_before_the_conf_and_the_thrift_server_class() {
    let home = spark_home();
    let settings = SparkSettings {
        home: Some(home.path().to_owned()),
        proxy_user: Some("alice".to_owned()),
        conf: BTreeMap::from([("spark.ui.enabled".to_owned(), "false".to_owned())]),
        ..SparkSettings::default()
    };
    let (command, _work) = build(settings).unwrap();
    let submit = &command.args[command.args.iter().position(|arg| arg == "--").unwrap() + 1..];
    assert_eq!(value_of(submit, "--proxy-user"), "alice");
    let at = |flag: &str| submit.iter().position(|arg| arg == flag).unwrap();
    assert!(at("--proxy-user") < at("--conf") && at("--conf") < at("--class"));
}
