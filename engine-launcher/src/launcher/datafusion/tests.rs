//! The kumiho-engine command line, its config file and the secret's path.

use super::*;
use crate::launcher::test_fixtures::{self, SECRET};
use crate::launcher::SECRET_ENV;

fn spec(work_dir: &Path, settings: DataFusionSettings) -> EngineLaunchSpec {
    test_fixtures::spec(work_dir, EngineSettings::DataFusion(settings))
}

fn registration(work_dir: &Path) -> EngineRegistrationArgs {
    test_fixtures::registration(work_dir, &spec(work_dir, DataFusionSettings::default()))
}

#[test]
fn the_command_carries_host_registry_flags_and_the_secret_only_in_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let builder = DataFusionBuilder::new("/opt/kumiho/bin/kumiho-engine");
    let command = builder
        .build(
            &spec(dir.path(), DataFusionSettings::default()),
            &registration(dir.path()),
        )
        .unwrap();
    let mut expected = vec!["--host", "127.0.0.1", "--port", "0"]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    expected.extend(registration(dir.path()).to_args());
    assert_eq!(command.args, expected);
    assert_eq!(
        command.env.get(SECRET_ENV).map(String::as_str),
        Some(SECRET)
    );
    assert_eq!(
        command.env.get("HADOOP_CONF_DIR").map(String::as_str),
        Some("/etc/hadoop")
    );
    let shown = format!("{command} {command:?}");
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(shown.contains("KUMIHO_ENGINE_SECRET"), "{shown}");
}

#[test]
fn declared_tables_are_written_to_a_yaml_config() {
    let dir = tempfile::tempdir().unwrap();
    let table: serde_yaml_ng::Value =
        serde_yaml_ng::from_str("{format: parquet, location: /data/trips/}").unwrap();
    let settings = DataFusionSettings {
        tables: BTreeMap::from([("trips".to_owned(), table.clone())]),
        log_level: Some("debug".to_owned()),
        time_zone: Some("America/Los_Angeles".to_owned()),
        ..DataFusionSettings::default()
    };
    let launch = spec(dir.path(), settings);
    let command = DataFusionBuilder::new("kumiho-engine")
        .build(&launch, &registration(dir.path()))
        .unwrap();
    let config_at = command.args.iter().position(|a| a == "--config").unwrap();
    let config_path = PathBuf::from(&command.args[config_at + 1]);
    assert_eq!(config_path, launch.log_path.with_extension("yaml"));
    let written: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    assert_eq!(written["tables"]["trips"], table);
    let level_at = command
        .args
        .iter()
        .position(|a| a == "--log-level")
        .unwrap();
    assert_eq!(command.args[level_at + 1], "debug");
    let zone_at = command
        .args
        .iter()
        .position(|a| a == "--time-zone")
        .unwrap();
    assert_eq!(command.args[zone_at + 1], "America/Los_Angeles");
}

#[test]
fn a_config_file_and_tables_together_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let settings = DataFusionSettings {
        config_file: Some(PathBuf::from("/etc/kumiho/engine.yaml")),
        tables: BTreeMap::from([("t".to_owned(), serde_yaml_ng::Value::Null)]),
        ..DataFusionSettings::default()
    };
    let error = DataFusionBuilder::new("kumiho-engine")
        .build(&spec(dir.path(), settings), &registration(dir.path()))
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("both `config-file` and `tables`"),
        "{error}"
    );
}

#[test]
fn the_warehouse_is_the_clusters_or_the_gateways_default() {
    let dir = tempfile::tempdir().unwrap();
    let flag = |builder: &DataFusionBuilder, settings: DataFusionSettings| {
        let command = builder
            .build(&spec(dir.path(), settings), &registration(dir.path()))
            .unwrap();
        let at = command.args.iter().position(|a| a.ends_with("warehouse"))?;
        Some((command.args[at].clone(), command.args[at + 1].clone()))
    };
    let plain = DataFusionBuilder::new("kumiho-engine");
    let defaulted = plain.clone().with_default_warehouse("/work/warehouse");
    assert_eq!(flag(&plain, DataFusionSettings::default()), None);
    assert_eq!(
        flag(&defaulted, DataFusionSettings::default()),
        Some(("--default-warehouse".into(), "/work/warehouse".into()))
    );
    let own = DataFusionSettings {
        warehouse: Some("s3://lake/warehouse".into()),
        ..DataFusionSettings::default()
    };
    assert_eq!(
        flag(&defaulted, own),
        Some(("--warehouse".into(), "s3://lake/warehouse".into()))
    );
}

#[test]
fn a_missing_engine_program_is_reported_with_its_path() {
    let error =
        DataFusionBuilder::locate(Some(Path::new("/nonexistent/kumiho-engine"))).unwrap_err();
    assert_eq!(
        error.to_string(),
        "engine program /nonexistent/kumiho-engine not found; install it next to the gateway or configure its path"
    );
}
