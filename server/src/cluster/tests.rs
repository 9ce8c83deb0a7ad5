use super::*;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn design_example_parses() {
    let text = r#"
registry:
  zookeeper:
    addresses: zk1:2181,zk2:2181
    namespace: kumiho
    session-timeout: 60s
engine:
  type: DATAFUSION
  share-level: USER
  idle-timeout: 30m
  initialize-timeout: 3m
  bind-host: 127.0.0.1
  datafusion:
    tables:
      trips: {format: parquet, location: /data/trips/}
    warehouse: s3://lake/warehouse/
  spark:
    home: /opt/spark
    master: yarn
    conf: {spark.executor.memory: 4g, spark.dynamicAllocation.enabled: "true"}
env:
  HADOOP_CONF_DIR: /etc/hadoop/conf-prod-a
super-users: [etl_admin]
allowed-users: ["*"]
limits:
  max-engines: 50
"#;
    let config = ClusterConfig::from_yaml(text).unwrap();
    assert_eq!(config.registry.namespace(), "kumiho");
    assert_eq!(config.engine.idle_timeout, Duration::from_secs(1800));
    assert!(config.engine.datafusion.tables.contains_key("trips"));
    assert_eq!(
        config
            .engine
            .datafusion
            .to_launch_settings()
            .warehouse
            .as_deref(),
        Some("s3://lake/warehouse/")
    );
    assert_eq!(config.limits.max_engines, Some(50));
    assert!(config.is_super_user("etl_admin"));
    assert!(config.admits("anyone"));
}

#[test]
fn spark_runs_as_its_user_unless_the_cluster_says_otherwise() {
    let proxy = |yaml: &str, user: Option<&str>| {
        ClusterConfig::from_yaml(yaml)
            .unwrap()
            .engine
            .spark
            .to_launch_settings(&BTreeMap::new(), user)
            .proxy_user
    };
    assert_eq!(proxy("", Some("alice")).as_deref(), Some("alice"));
    assert_eq!(proxy("", None), None);
    assert_eq!(
        proxy("engine: {spark: {do-as: false}}\n", Some("alice")),
        None
    );
}

#[test]
fn shipped_configs_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cluster-configs");
    let default = std::fs::read_to_string(dir.join("default.yaml")).unwrap();
    let config = ClusterConfig::from_yaml(&default).unwrap();
    assert_eq!(config.engine.engine_type, EngineType::DataFusion);
    assert_eq!(config.engine.share_level, ShareLevel::User);
    assert!(matches!(config.registry, RegistryConfig::Embedded(_)));
    let example = std::fs::read_to_string(dir.join("example.yaml.sample")).unwrap();
    ClusterConfig::from_yaml(&example).unwrap();
}

#[test]
fn errors_name_the_line_and_the_choices() {
    let err = ClusterConfig::from_yaml("engine:\n  share-level: TEAM\n").unwrap_err();
    assert!(err.contains("line 2"), "{err}");
    assert!(err.contains("CONNECTION, USER, GROUP, SERVER"), "{err}");

    // Values checked while parsing are reported at the start of their section.
    let err = ClusterConfig::from_yaml("engine:\n  type: datafusion\n  idle-timeout: soon\n")
        .unwrap_err();
    assert!(err.contains("line 2") && err.contains("`soon`"), "{err}");

    let err = ClusterConfig::from_yaml("engin:\n  type: DATAFUSION\n").unwrap_err();
    assert!(err.contains("line 1") && err.contains("engin"), "{err}");
}

#[test]
fn iso_durations_and_lower_case_names_are_accepted() {
    let config =
        ClusterConfig::from_yaml("engine:\n  type: spark_sql\n  idle-timeout: PT5S\n").unwrap();
    assert_eq!(config.engine.engine_type, EngineType::SparkSql);
    assert_eq!(config.engine.idle_timeout, Duration::from_secs(5));
}

#[test]
fn allowed_users_restrict() {
    let config = ClusterConfig::from_yaml("allowed-users: [alice]\n").unwrap();
    assert!(config.admits("alice"));
    assert!(!config.admits("bob"));
}

#[test]
fn secrets_never_print() {
    let config = ClusterConfig::from_yaml("internal-secret: hunter2\n").unwrap();
    assert!(!format!("{config:?}").contains("hunter2"));
    assert_eq!(config.internal_secret, Some(Secret("hunter2".to_owned())));
}

#[test]
fn unknown_cluster_lists_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "default.yaml", "");
    write(dir.path(), "second.yml", "engine: {share-level: SERVER}\n");
    let (registry, report) = ClusterRegistry::load(dir.path()).unwrap();
    assert_eq!(report.added, ["default", "second"]);
    assert_eq!(
        registry.get("second").unwrap().config.engine.share_level,
        ShareLevel::Server
    );
    let err = registry.get("third").unwrap_err().to_string();
    assert!(
        err.contains("`third`") && err.contains("default, second"),
        "{err}"
    );
}

#[test]
fn a_cluster_whose_file_never_loaded_is_broken_not_unknown_until_fixed_or_removed() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "default.yaml", "");
    write(dir.path(), "new.yaml", "engine: {share-level: [USER\n");
    let (registry, report) = ClusterRegistry::load(dir.path()).unwrap();
    assert_eq!(report.errors.len(), 1);
    let broken = |registry: &ClusterRegistry| registry.get("new").unwrap_err();
    let err = broken(&registry);
    assert!(matches!(err, ClusterUnavailable::Broken { .. }), "{err}");
    assert!(err.to_string().contains("new.yaml is broken"), "{err}");
    // A rescan that finds the file unchanged reports nothing and keeps it broken.
    assert!(registry.reload().unwrap().is_empty());
    assert!(matches!(
        broken(&registry),
        ClusterUnavailable::Broken { .. }
    ));
    write(dir.path(), "new.yaml", "engine: {share-level: SERVER}\n");
    assert_eq!(registry.reload().unwrap().added, ["new"]);
    assert!(registry.get("new").is_ok());
    std::fs::remove_file(dir.path().join("new.yaml")).unwrap();
    registry.reload().unwrap();
    assert!(matches!(
        broken(&registry),
        ClusterUnavailable::Unknown { .. }
    ));
    // Broken after a good version: the good version stays in force.
    write(dir.path(), "default.yaml", "engine: {share-level: [\n");
    registry.reload().unwrap();
    assert!(registry.get("default").is_ok());
}

#[test]
fn broken_edit_keeps_the_last_good_version() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "default.yaml", "engine: {share-level: USER}\n");
    let (registry, _) = ClusterRegistry::load(dir.path()).unwrap();

    write(
        dir.path(),
        "default.yaml",
        "engine:\n  share-level: [oops\n",
    );
    let report = registry.reload().unwrap();
    assert_eq!(report.errors.len(), 1);
    let shown = report.errors[0].to_string();
    assert!(
        shown.contains("default.yaml")
            && shown.contains("line")
            && shown.contains("stays in force"),
        "{shown}"
    );
    assert_eq!(
        registry.get("default").unwrap().config.engine.share_level,
        ShareLevel::User
    );

    // The same broken text is reported once, not on every rescan.
    assert!(registry.reload().unwrap().is_empty());

    write(dir.path(), "default.yaml", "engine: {share-level: GROUP}\n");
    let report = registry.reload().unwrap();
    assert_eq!(report.changed, ["default"]);
    assert_eq!(
        registry.get("default").unwrap().config.engine.share_level,
        ShareLevel::Group
    );
}

#[test]
fn removed_files_remove_clusters_and_hidden_entries_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "default.yaml", "");
    write(dir.path(), "gone.yaml", "");
    write(dir.path(), ".hidden.yaml", "");
    write(dir.path(), "notes.txt", "");
    let (registry, _) = ClusterRegistry::load(dir.path()).unwrap();
    assert_eq!(registry.names(), ["default", "gone"]);
    std::fs::remove_file(dir.path().join("gone.yaml")).unwrap();
    assert_eq!(registry.reload().unwrap().removed, ["gone"]);
    assert_eq!(registry.names(), ["default"]);
}

#[test]
fn missing_directory_says_what_to_do() {
    let err = ClusterRegistry::load(Path::new("/nonexistent/kumiho-clusters"))
        .err()
        .unwrap();
    assert!(err.contains("--cluster-configs"), "{err}");
}

#[test]
fn zookeeper_timeouts_parse_and_default_to_kyuubis() {
    let config = ClusterConfig::from_yaml(
        "registry:\n  zookeeper:\n    addresses: zk1:2181\n    connect-timeout: 3s\n",
    )
    .unwrap();
    let RegistryConfig::Zookeeper(zk) = &config.registry else {
        panic!("not a ZooKeeper registry: {:?}", config.registry);
    };
    assert_eq!(zk.connect_timeout, Duration::from_secs(3));
    assert_eq!(zk.session_timeout, Duration::from_secs(60));
    assert_eq!(zk.namespace, "kumiho");
    let err = ClusterConfig::from_yaml(
        "registry:\n  zookeeper:\n    addresses: zk1:2181\n    connect-timeout: 0s\n",
    )
    .unwrap_err();
    assert!(err.contains("connect-timeout"), "{err}");
}

fn session_conf(pairs: &[(&str, &str)]) -> SessionConf {
    SessionConf {
        settings: pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        database: Some("sales".to_owned()),
    }
}

#[test]
fn session_conf_rules_default_to_empty_and_keep_every_key() {
    let config = ClusterConfig::from_yaml("").unwrap();
    assert_eq!(config.session_conf, SessionConfRules::default());
    let conf = session_conf(&[("spark.jars", "/tmp/x.jar")]);
    let ruled = config.session_conf.apply(&conf).unwrap();
    assert_eq!(ruled.conf, conf);
    assert!(ruled.ignored.is_empty());
}

#[test]
fn session_conf_rules_match_exact_keys_and_star_prefixes() {
    let config = ClusterConfig::from_yaml(
        "session-conf:\n  restrict: [spark.jars, spark.driver.*]\n  ignore: [spark.ui.enabled, 'spark.sql.abc*']\n",
    )
    .unwrap();
    let rules = &config.session_conf;
    assert_eq!(
        rules.restrict,
        [
            KeyPattern::Exact("spark.jars".to_owned()),
            KeyPattern::Prefix("spark.driver.".to_owned())
        ]
    );
    assert_eq!(rules.ignore[1].to_string(), "spark.sql.abc*");

    // Exact entries match only themselves; prefixes match what begins with them.
    let restricted = rules
        .apply(&session_conf(&[("spark.driver.extraJavaOptions", "-X")]))
        .unwrap_err();
    assert_eq!(restricted.key, "spark.driver.extraJavaOptions");
    assert_eq!(restricted.rule.to_string(), "spark.driver.*");
    assert!(rules
        .apply(&session_conf(&[("spark.jars", "/tmp/x.jar")]))
        .is_err());
    let ruled = rules
        .apply(&session_conf(&[
            ("spark.jars.ivy", "/tmp/ivy"),
            ("spark.driver", "x"),
            ("spark.ui.enabled", "false"),
            ("spark.ui.enabled.extra", "1"),
            ("spark.sql.abcdef", "1"),
            ("SPARK.JARS", "case differs"),
        ]))
        .unwrap();
    assert_eq!(ruled.ignored, ["spark.sql.abcdef", "spark.ui.enabled"]);
    let kept: Vec<&str> = ruled.conf.settings.keys().map(String::as_str).collect();
    assert_eq!(
        kept,
        [
            "SPARK.JARS",
            "spark.driver",
            "spark.jars.ivy",
            "spark.ui.enabled.extra"
        ]
    );
    assert_eq!(ruled.conf.database.as_deref(), Some("sales"));
}

#[test]
fn a_key_both_restricted_and_ignored_is_restricted() {
    let config =
        ClusterConfig::from_yaml("session-conf: {restrict: [spark.files], ignore: ['spark.*']}\n")
            .unwrap();
    let restricted = config
        .session_conf
        .apply(&session_conf(&[
            ("spark.app.name", "a"),
            ("spark.files", "/f"),
        ]))
        .unwrap_err();
    assert_eq!(restricted.key, "spark.files");
}

#[test]
fn bad_session_conf_entries_name_the_line_and_the_fix() {
    let cases = [
        ("  restrict: [spark.jars, '']\n", "empty"),
        (
            "  restrict: [spark.jars, 'spark.*.options']\n",
            "may only end",
        ),
        ("  ignore: ['*']\n", "every key"),
        (
            "  ignore: ['spark.jars spark.files']\n",
            "one key per entry",
        ),
    ];
    for (section, says) in cases {
        let text = format!("engine: {{type: DATAFUSION}}\nsession-conf:\n{section}");
        let err = ClusterConfig::from_yaml(&text).unwrap_err();
        assert!(err.contains("line 3") && err.contains(says), "{err}");
    }
    let err = ClusterConfig::from_yaml("session-conf:\n  restricted: [spark.jars]\n").unwrap_err();
    assert!(
        err.contains("restricted") && err.contains("line 2"),
        "{err}"
    );
}

#[test]
fn the_example_restricts_code_running_spark_keys_and_passes_everyday_ones() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cluster-configs");
    let example = std::fs::read_to_string(dir.join("example.yaml.sample")).unwrap();
    let rules = ClusterConfig::from_yaml(&example).unwrap().session_conf;
    for key in [
        "spark.jars",
        "spark.jars.packages",
        "spark.driver.extraJavaOptions",
        "spark.executor.extraJavaOptions",
        "spark.driver.extraClassPath",
        "spark.files",
        "spark.submit.pyFiles",
        "spark.executorEnv.LD_PRELOAD",
        "spark.sql.extensions",
    ] {
        assert!(
            rules.apply(&session_conf(&[(key, "x")])).is_err(),
            "{key} passes"
        );
    }
    for key in [
        "spark.sql.shuffle.partitions",
        "spark.executor.memory",
        "spark.driver.memory",
        "kyuubi.engine.share.level",
    ] {
        assert!(
            rules.apply(&session_conf(&[(key, "1")])).is_ok(),
            "{key} is refused"
        );
    }
}

#[test]
fn an_emptied_file_keeps_its_cluster_until_written_again() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "prod.yaml", "engine: {share-level: SERVER}\n");
    let (registry, _) = ClusterRegistry::load(dir.path()).unwrap();
    // Truncated by a save in progress: not a cluster of defaults.
    write(dir.path(), "prod.yaml", "");
    let report = registry.reload().unwrap();
    assert_eq!(report.errors.len(), 1, "{report:?}");
    assert!(report.errors[0].kept_previous);
    assert!(report.errors[0].message.contains("empty"), "{report:?}");
    let share_level =
        |registry: &ClusterRegistry| registry.get("prod").unwrap().config.engine.share_level;
    assert_eq!(share_level(&registry), ShareLevel::Server);
    write(dir.path(), "prod.yaml", "engine: {share-level: GROUP}\n");
    assert_eq!(registry.reload().unwrap().changed, ["prod"]);
    assert_eq!(share_level(&registry), ShareLevel::Group);
    // `{}` asks for the defaults.
    write(dir.path(), "prod.yaml", "{}\n");
    assert_eq!(registry.reload().unwrap().changed, ["prod"]);
    assert_eq!(share_level(&registry), ShareLevel::User);
}

#[test]
fn a_cluster_that_names_no_namespace_takes_its_own() {
    // Two clusters on the default embedded root never share an engine.
    for (cluster, text, namespace) in [
        ("default", "", "kumiho"),
        ("default", "registry: {embedded: {}}\n", "kumiho"),
        ("prod-a", "", "kumiho-prod-a"),
        ("prod-a", "engine: {share-level: SERVER}\n", "kumiho-prod-a"),
        ("prod-a", "registry: {embedded: {}}\n", "kumiho-prod-a"),
        (
            "team.b",
            "registry: {embedded: {root: /tmp/r}}\n",
            "kumiho-team-b",
        ),
        (
            "prod-a",
            "registry: {zookeeper: {addresses: 'zk:2181'}}\n",
            "kumiho-prod-a",
        ),
        // A namespace the file names is kept, the cluster `default`'s too.
        (
            "prod-a",
            "registry: {embedded: {namespace: shared}}\n",
            "shared",
        ),
        (
            "prod-a",
            "registry: {zookeeper: {addresses: 'zk:2181', namespace: kumiho}}\n",
            "kumiho",
        ),
    ] {
        let config = ClusterConfig::of_cluster(cluster, text).unwrap();
        assert_eq!(config.registry.namespace(), namespace, "{cluster}: {text}");
    }
}
