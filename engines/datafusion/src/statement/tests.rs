use super::*;

fn command(sql: &str) -> HiveCommand {
    match recognise(trim_statement(sql)).unwrap() {
        Some(Recognised::Command(command)) => command,
        Some(Recognised::Rewritten(sql)) => panic!("{sql} was rewritten, not answered"),
        None => panic!("{sql} was not recognised"),
    }
}

fn rewritten(sql: &str) -> String {
    match recognise(trim_statement(sql)).unwrap() {
        Some(Recognised::Rewritten(sql)) => sql,
        _ => panic!("{sql} was not rewritten"),
    }
}

fn passed_through(sql: &str) -> bool {
    recognise(trim_statement(sql)).unwrap().is_none()
}

#[test]
fn use_lowercases_unquoted_names_and_keeps_quoted_ones() {
    assert_eq!(command("use Sales;"), HiveCommand::Use("sales".into()));
    assert_eq!(command("USE `Sales`"), HiveCommand::Use("Sales".into()));
    assert!(passed_through("use a b"));
}

#[test]
fn show_databases_and_tables() {
    assert_eq!(command("SHOW DATABASES"), HiveCommand::ShowDatabases(None));
    assert_eq!(
        command("SHOW CATALOGS LIKE 'data*'"),
        HiveCommand::ShowCatalogs(Some("data*".into()))
    );
    assert_eq!(
        command("show schemas like 'tp*'"),
        HiveCommand::ShowDatabases(Some("tp*".into()))
    );
    assert_eq!(
        command("SHOW TABLES"),
        HiveCommand::ShowTables {
            database: None,
            pattern: None
        }
    );
    assert_eq!(
        command("show tables in tpch 'line*|orders'"),
        HiveCommand::ShowTables {
            database: Some("tpch".into()),
            pattern: Some("line*|orders".into())
        }
    );
    // Double quotes make a string, as in Hive.
    assert_eq!(
        command(r#"SHOW TABLES LIKE "n*""#),
        HiveCommand::ShowTables {
            database: None,
            pattern: Some("n*".into())
        }
    );
    assert_eq!(
        command("SHOW TABLES FROM tpch LIKE 'n%'"),
        HiveCommand::ShowTables {
            database: Some("tpch".into()),
            pattern: Some("n%".into())
        }
    );
    assert_eq!(
        command("SHOW VIEWS IN tpch LIKE 'v*'"),
        HiveCommand::ShowViews {
            database: Some("tpch".into()),
            pattern: Some("v*".into())
        }
    );
    // DataFusion's own SHOW statements stay DataFusion's.
    assert!(passed_through("SHOW FULL COLUMNS FROM t"));
    assert!(passed_through("SHOW ALL"));
}

#[test]
fn show_columns_and_functions_in_hive_form() {
    let columns = |table: &[&str], pattern: Option<&str>| HiveCommand::ShowColumns {
        table: table.iter().map(|p| p.to_string()).collect(),
        pattern: pattern.map(str::to_owned),
    };
    assert_eq!(
        command("SHOW COLUMNS IN Nation"),
        columns(&["nation"], None)
    );
    assert_eq!(
        command("show columns from nation in tpch"),
        columns(&["tpch", "nation"], None)
    );
    assert_eq!(
        command("SHOW COLUMNS FROM tpch.nation LIKE 'n_*'"),
        columns(&["tpch", "nation"], Some("n_*"))
    );
    assert!(passed_through("SHOW COLUMNS FROM tpch.nation IN tpch"));
    assert_eq!(command("SHOW FUNCTIONS"), HiveCommand::ShowFunctions(None));
    assert_eq!(
        command("show functions like 'upp*'"),
        HiveCommand::ShowFunctions(Some("upp*".into()))
    );
    assert_eq!(
        command("SHOW FUNCTIONS 'upp*|lower'"),
        HiveCommand::ShowFunctions(Some("upp*|lower".into()))
    );
}

#[test]
fn set_takes_raw_text_values() {
    assert_eq!(command("RESET"), HiveCommand::Reset(None));
    assert_eq!(
        command("reset spark.sql.shuffle.partitions"),
        HiveCommand::Reset(Some("spark.sql.shuffle.partitions".into()))
    );
    assert_eq!(command("set"), HiveCommand::Set(SetCommand::ShowAll));
    assert_eq!(command("SET -v"), HiveCommand::Set(SetCommand::ShowAll));
    assert_eq!(
        command("set hive.exec.mode"),
        HiveCommand::Set(SetCommand::Show("hive.exec.mode".into()))
    );
    assert_eq!(
        command("SET mapred.job.name = nightly load #3;"),
        HiveCommand::Set(SetCommand::Assign(
            "mapred.job.name".into(),
            "nightly load #3".into()
        ))
    );
    assert_eq!(
        command("set datafusion.execution.batch_size='100'"),
        HiveCommand::Set(SetCommand::Assign(
            "datafusion.execution.batch_size".into(),
            "100".into()
        ))
    );
    // Spark's SET TIME ZONE sets Spark's key, which the session reads as its zone.
    let zone = |value: &str| {
        HiveCommand::Set(SetCommand::Assign(
            "spark.sql.session.timeZone".into(),
            value.into(),
        ))
    };
    assert_eq!(command("SET TIME ZONE 'Asia/Seoul'"), zone("Asia/Seoul"));
    assert_eq!(command("set time zone local"), zone("LOCAL"));
    assert_eq!(
        command("SET TIME ZONE INTERVAL -5 HOURS 30 MINUTES"),
        zone("-05:30")
    );
    assert_eq!(
        command("SET TIME ZONE INTERVAL '+08:45' HOUR TO MINUTE"),
        zone("+08:45")
    );
    assert!(passed_through("SET TIME ZONE INTERVAL 1 DAY"));
}

#[test]
fn databases_are_schemas() {
    assert_eq!(
        command("CREATE DATABASE IF NOT EXISTS Sales COMMENT 'x' LOCATION '/tmp'"),
        HiveCommand::CreateDatabase {
            name: "sales".into(),
            if_not_exists: true
        }
    );
    assert_eq!(
        command("create schema s"),
        HiveCommand::CreateDatabase {
            name: "s".into(),
            if_not_exists: false
        }
    );
    assert_eq!(
        rewritten("DROP DATABASE IF EXISTS sales CASCADE"),
        "DROP SCHEMA IF EXISTS \"sales\" CASCADE"
    );
    assert_eq!(rewritten("drop database s"), "DROP SCHEMA \"s\"");
    assert!(passed_through("DROP SCHEMA s"));
    assert!(passed_through("DROP TABLE t"));
}

#[test]
fn describe_variants_are_answered_in_hive_columns() {
    let table = |parts: &[&str]| parts.iter().map(|p| p.to_string()).collect();
    let describe = |parts: &[&str]| HiveCommand::Describe {
        table: table(parts),
        detailed: false,
        partition: Vec::new(),
    };
    let detailed = |parts: &[&str]| HiveCommand::Describe {
        table: table(parts),
        detailed: true,
        partition: Vec::new(),
    };
    assert_eq!(
        command("DESCRIBE FORMATTED tpch.Nation"),
        detailed(&["tpch", "nation"])
    );
    assert_eq!(command("desc extended t"), detailed(&["t"]));
    assert_eq!(command("DESCRIBE TABLE `T`"), describe(&["T"]));
    assert_eq!(command("DESC t;"), describe(&["t"]));
    assert_eq!(
        command("describe datafusion.tpch.nation"),
        describe(&["datafusion", "tpch", "nation"])
    );
    assert_eq!(
        command("DESCRIBE tpch.nation N_Name"),
        HiveCommand::DescribeColumn {
            table: vec!["tpch".into(), "nation".into()],
            column: "n_name".into()
        }
    );
    assert_eq!(
        command("DESC FUNCTION EXTENDED Upper"),
        HiveCommand::DescribeFunction {
            name: "upper".into(),
            extended: true
        }
    );
    assert_eq!(
        command("DESCRIBE DATABASE EXTENDED TPCH"),
        HiveCommand::DescribeDatabase("tpch".into())
    );
    assert_eq!(
        command("desc schema tpch"),
        HiveCommand::DescribeDatabase("tpch".into())
    );
    // A table called `function` is still a table.
    assert_eq!(command("DESCRIBE function"), describe(&["function"]));
    assert_eq!(
        command("SHOW CREATE TABLE tpch.nation"),
        HiveCommand::ShowCreateTable(vec!["tpch".into(), "nation".into()])
    );
    assert!(passed_through("DESCRIBE SELECT 1"));
}

#[test]
fn queries_pass_through() {
    assert!(passed_through("SELECT 1"));
    assert!(passed_through("select 'use x'"));
    assert!(passed_through(
        "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '/x'"
    ));
    assert!(passed_through("CREATE TABLE t AS SELECT 1"));
}

#[test]
fn hive_patterns() {
    assert!(hive_pattern_matches("*", "anything"));
    assert!(hive_pattern_matches("line*", "LineItem"));
    assert!(hive_pattern_matches("orders|line*", "orders"));
    assert!(hive_pattern_matches("n%", "nation"));
    assert!(hive_pattern_matches("p_rt", "part"));
    assert!(!hive_pattern_matches("line*", "orders"));
    assert!(!hive_pattern_matches("part", "partsupp"));
    assert!(hive_pattern_matches("*supp", "partsupp"));
    assert!(!hive_pattern_matches("a*b*c", &"a".repeat(10_000)));
}

#[test]
fn show_tblproperties_and_partitions() {
    assert_eq!(
        command("SHOW TBLPROPERTIES tpch.nation"),
        HiveCommand::ShowTblProperties {
            table: vec!["tpch".into(), "nation".into()],
            key: None
        }
    );
    for sql in [
        "show tblproperties t ('created.by')",
        "SHOW TBLPROPERTIES t(created.by)",
    ] {
        assert_eq!(
            command(sql),
            HiveCommand::ShowTblProperties {
                table: vec!["t".into()],
                key: Some("created.by".into())
            },
            "{sql}"
        );
    }
    assert_eq!(
        command("SHOW PARTITIONS db.Sales"),
        HiveCommand::ShowPartitions {
            table: vec!["db".into(), "sales".into()],
            spec: vec![]
        }
    );
    assert_eq!(
        command("show partitions t partition (Year=2024, month='01')"),
        HiveCommand::ShowPartitions {
            table: vec!["t".into()],
            spec: vec![
                ("year".into(), "2024".into()),
                ("month".into(), "01".into())
            ]
        }
    );
    assert_eq!(
        command(r#"SHOW PARTITIONS t PARTITION (day="2024-01-01")"#),
        HiveCommand::ShowPartitions {
            table: vec!["t".into()],
            spec: vec![("day".into(), "2024-01-01".into())]
        }
    );
    assert!(passed_through("SHOW PARTITIONS t PARTITION (year)"));
    assert!(passed_through("SHOW TBLPROPERTIES t ('a' 'b')"));
}

#[test]
fn jars_functions_analyze_and_show_table_extended_are_recognised() {
    assert_eq!(
        command("ADD JAR /opt/udf/a.jar 'hdfs:///b.jar'"),
        HiveCommand::AddResources {
            kind: "jar".into(),
            paths: vec!["/opt/udf/a.jar".into(), "hdfs:///b.jar".into()],
        }
    );
    assert_eq!(
        command("list jars"),
        HiveCommand::ListResources {
            kind: "jar".into(),
            paths: Vec::new(),
        }
    );
    assert_eq!(
        command("CREATE TEMPORARY FUNCTION f AS 'com.example.F' USING JAR 'x.jar'"),
        HiveCommand::JavaFunction {
            name: "f".into(),
            class: "com.example.F".into(),
        }
    );
    assert_eq!(
        command("DROP FUNCTION IF EXISTS db.f"),
        HiveCommand::DropFunction("db.f".into())
    );
    assert_eq!(
        command("ANALYZE TABLE t PARTITION (dt='x') COMPUTE STATISTICS NOSCAN"),
        HiveCommand::Analyze {
            table: vec!["t".into()],
            partition: Some(vec![("dt".into(), Some("x".into()))]),
            mode: warehouse::properties::AnalyzeMode::NoScan,
        }
    );
    assert_eq!(
        command("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS a, b"),
        HiveCommand::Analyze {
            table: vec!["t".into()],
            partition: None,
            mode: warehouse::properties::AnalyzeMode::Columns(vec!["a".into(), "b".into()]),
        }
    );
    assert_eq!(
        command("SHOW TABLE EXTENDED IN sales LIKE 'ev*' PARTITION (dt='x')"),
        HiveCommand::ShowTableExtended {
            database: Some("sales".into()),
            pattern: "ev*".into(),
            partition: vec![("dt".into(), "x".into())],
        }
    );
    assert_eq!(
        command("DESCRIBE FORMATTED t PARTITION (dt='x')"),
        HiveCommand::Describe {
            table: vec!["t".into()],
            detailed: true,
            partition: vec![("dt".into(), "x".into())],
        }
    );
    assert_eq!(
        table_info::thrift_ddl(
            "columns",
            &[
                ("id".into(), "int".into()),
                ("tags".into(), "array<bigint>".into()),
                ("price".into(), "decimal(10,2)".into()),
            ]
        ),
        "struct columns { i32 id, list<i64> tags, decimal(10,2) price}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_jar_warns_list_jars_lists_and_java_functions_are_refused() {
    let engine = crate::test_util::engine().await;
    let session = crate::test_util::open(&engine);
    let log = crate::test_util::operation_log(&engine, &session, "ADD JAR /opt/udf/geo.jar").await;
    assert!(
        log.contains("not loaded") && log.contains("SPARK_SQL"),
        "{log}"
    );
    let listed = crate::test_util::lines(&engine, &session, "LIST JARS").await;
    assert_eq!(listed[1].replace(' ', ""), "|resource|");
    assert_eq!(listed[3].replace(' ', ""), "|/opt/udf/geo.jar|");
    let refused = crate::test_util::error(
        &engine,
        &session,
        "CREATE TEMPORARY FUNCTION geo AS 'com.example.Geo' USING JAR '/opt/udf/geo.jar'",
    )
    .await
    .to_string();
    assert!(
        refused.contains("com.example.Geo") && refused.contains("kyuubi.engine.type=SPARK_SQL"),
        "{refused}"
    );
    crate::test_util::run(&engine, &session, "DROP FUNCTION IF EXISTS geo")
        .await
        .unwrap();
    let refused = crate::test_util::error(&engine, &session, "DROP FUNCTION upper")
        .await
        .to_string();
    assert!(refused.contains("built-in"), "{refused}");
    let refused = crate::test_util::error(&engine, &session, "ADD FILE /tmp/map.py")
        .await
        .to_string();
    assert!(refused.contains("SPARK_SQL"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spark_cache_statements_check_their_table_and_say_nothing_is_cached() {
    let engine = crate::test_util::engine().await;
    let session = crate::test_util::open(&engine);
    crate::test_util::run(&engine, &session, "CREATE TABLE cached (x INT)")
        .await
        .unwrap();
    for (sql, said) in [
        ("CACHE TABLE cached", "not cached"),
        (
            "CACHE LAZY TABLE default.cached OPTIONS ('storageLevel' 'DISK_ONLY')",
            "not cached",
        ),
        ("REFRESH TABLE cached", "needs no refresh"),
        ("UNCACHE TABLE cached", "was not cached"),
        ("CLEAR CACHE", "nothing to do"),
    ] {
        let log = crate::test_util::operation_log(&engine, &session, sql).await;
        assert!(log.contains(said), "{sql}: {log}");
    }
    crate::test_util::run(&engine, &session, "UNCACHE TABLE IF EXISTS missing")
        .await
        .unwrap();
    let missing = crate::test_util::error(&engine, &session, "CACHE TABLE missing")
        .await
        .to_string();
    assert!(
        missing.contains("CACHE TABLE") && missing.contains("missing"),
        "{missing}"
    );
    // `CACHE TABLE t AS query` is the session's temporary view of the query.
    crate::test_util::run(&engine, &session, "INSERT INTO cached VALUES (1), (2)")
        .await
        .unwrap();
    crate::test_util::run(
        &engine,
        &session,
        "CACHE TABLE big AS SELECT x FROM cached WHERE x > 1",
    )
    .await
    .unwrap();
    assert_eq!(
        crate::test_util::value_rows(&engine, &session, "SELECT * FROM big").await,
        [["2"]]
    );
}
