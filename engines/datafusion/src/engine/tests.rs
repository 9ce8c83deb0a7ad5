use std::collections::BTreeMap;

use datafusion::arrow::util::pretty::pretty_format_batches;
use kumiho_thrift::cli::TStatusCode;

use super::*;
use crate::test_util::{engine, error, lines, open, run, run_with};

/// The cells of a table `lines` printed, header first, trimmed; borders left out.
fn cells(lines: &[String]) -> Vec<Vec<String>> {
    lines
        .iter()
        .filter(|line| line.starts_with('|'))
        .map(|line| {
            line.trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().to_owned())
                .collect()
        })
        .collect()
}

fn conf(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[tokio::test]
async fn sessions_share_the_catalog_but_not_their_state() {
    let engine = engine().await;
    let a = open(&engine);
    let b = open(&engine);
    run(&engine, &a, "CREATE DATABASE sales").await.unwrap();
    run(&engine, &a, "USE sales").await.unwrap();
    run(&engine, &a, "CREATE TABLE t AS SELECT 1 AS x")
        .await
        .unwrap();
    run(&engine, &a, "SET my.key=a-value").await.unwrap();

    // b sees a's database and table, but is still in `default` with its own settings.
    assert_eq!(b.current_database(), "default");
    assert_eq!(a.current_database(), "sales");
    assert_eq!(
        lines(&engine, &b, "SELECT x FROM sales.t").await,
        ["+---+", "| x |", "+---+", "| 1 |", "+---+"]
    );
    assert_eq!(
        lines(&engine, &b, "SET my.key").await[3],
        "| my.key is undefined |"
    );
    assert_eq!(
        lines(&engine, &a, "SET my.key").await[3],
        "| my.key=a-value |"
    );
    let unqualified = error(&engine, &b, "SELECT x FROM t").await;
    assert!(
        unqualified.to_string().contains("not found"),
        "{unqualified}"
    );
}

#[tokio::test]
async fn a_statements_overlay_sets_datafusion_settings_for_that_statement_only() {
    let engine = engine().await;
    let session = open(&engine);
    let show = "SHOW datafusion.execution.batch_size";
    let table = |batches: Vec<RecordBatch>| pretty_format_batches(&batches).unwrap().to_string();

    let overlay = conf(&[
        ("datafusion.execution.batch_size", "7"),
        ("hive.exec.some.setting", "not the engine's"),
    ]);
    let overlaid = table(run_with(&engine, &session, show, &overlay).await.unwrap());
    assert!(overlaid.contains("| 7 "), "{overlaid}");
    let after = lines(&engine, &session, show).await.join("\n");
    assert!(
        after.contains("| 8192 "),
        "the overlay outlived its statement: {after}"
    );

    // A statement that changes the session changes the session, overlay or not.
    run_with(
        &engine,
        &session,
        "SET datafusion.execution.batch_size TO 9",
        &overlay,
    )
    .await
    .unwrap();
    let set = lines(&engine, &session, show).await.join("\n");
    assert!(
        set.contains("| 9 "),
        "a SET sent with an overlay was lost: {set}"
    );

    let bad = conf(&[("datafusion.execution.batch_size", "many")]);
    let refused = run_with(&engine, &session, "SELECT 1", &bad)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("datafusion.execution.batch_size"),
        "{refused}"
    );
}

#[tokio::test]
async fn open_session_normalises_jdbc_configuration() {
    let engine = engine().await;
    let session = engine
        .open_session(
            "bob".into(),
            7,
            &conf(&[
                ("use:database", "tpch"),
                (
                    "set:hiveconf:hive.server2.thrift.resultset.default.fetch.size",
                    "500",
                ),
                ("set:hiveconf:datafusion.execution.batch_size", "77"),
                ("set:hivevar:region", "emea"),
            ]),
        )
        .unwrap();
    assert_eq!(session.current_database(), "tpch");
    assert_eq!(session.get("region").as_deref(), Some("emea"));
    assert_eq!(
        session.get("datafusion.execution.batch_size").as_deref(),
        Some("77")
    );
    assert_eq!(
        lines(&engine, &session, "SELECT count(*) AS n FROM nation").await[3],
        "| 25 |"
    );
}

#[tokio::test]
async fn hive_variables_are_substituted_before_planning() {
    let engine = engine().await;
    // As beeline sends `--hivevar dt=...`, `--hiveconf k=v` and a URL's `#region=emea`.
    let session = engine
        .open_session(
            "bob".into(),
            7,
            &conf(&[
                ("set:hivevar:dt", "2024-01-31"),
                ("set:hiveconf:etl.queue", "nightly"),
                ("region", "emea"),
            ]),
        )
        .unwrap();
    assert_eq!(
        lines(
            &engine,
            &session,
            "SELECT '${dt}' AS d, '${hivevar:region}' AS r, '${hiveconf:etl.queue}' AS q"
        )
        .await[3],
        "| 2024-01-31 | emea | nightly |"
    );
    run(&engine, &session, "SET hivevar:n=41").await.unwrap();
    run(&engine, &session, "SET hivevar:m=${n}").await.unwrap();
    assert_eq!(
        lines(
            &engine,
            &session,
            "SELECT ${m} + 1 AS answer, '${nope}' AS kept"
        )
        .await[3],
        "| 42     | ${nope} |"
    );
    // The engine's environment (object-store credentials) is never readable.
    assert_eq!(
        lines(&engine, &session, "SELECT '${env:HOME}' AS home").await[3],
        "| ${env:HOME} |"
    );
    run(&engine, &session, "SET hivevar:loop=${loop}x")
        .await
        .unwrap();
    let deep = error(&engine, &session, "SELECT '${loop}'").await;
    assert!(deep.to_string().contains("deeper than"), "{deep}");
    run(&engine, &session, "SET hive.variable.substitute=false")
        .await
        .unwrap();
    assert_eq!(
        lines(&engine, &session, "SELECT '${dt}' AS d").await[3],
        "| ${dt} |"
    );
}

#[tokio::test]
async fn bad_session_configuration_is_the_clients_error() {
    let engine = engine().await;
    let refused = engine
        .open_session("bob".into(), 1, &conf(&[("set:env:PATH", "/tmp")]))
        .unwrap_err();
    assert!(refused.to_string().contains("set:env:"), "{refused}");
    let missing = engine
        .open_session("bob".into(), 1, &conf(&[("use:database", "nope")]))
        .unwrap_err();
    assert!(
        missing.to_string().contains("'nope' does not exist"),
        "{missing}"
    );
    let bad_value = engine
        .open_session(
            "bob".into(),
            1,
            &conf(&[("datafusion.execution.batch_size", "many")]),
        )
        .unwrap_err();
    assert!(bad_value.to_string().contains("batch_size"), "{bad_value}");
    assert_eq!(bad_value.to_status().status_code, TStatusCode::ERROR_STATUS);
    assert!(engine.sessions().is_empty());
}

#[tokio::test]
async fn closed_or_unknown_handles_are_invalid() {
    let engine = engine().await;
    let session = open(&engine);
    let op = engine
        .execute(&session.id, "SELECT 1", true, None)
        .await
        .unwrap();
    engine.close_session(&session.id).unwrap();

    let err = engine
        .execute(&session.id, "SELECT 1", true, None)
        .await
        .unwrap_err();
    assert!(matches!(err, EngineError::UnknownSession));
    assert_eq!(
        err.to_status().status_code,
        TStatusCode::INVALID_HANDLE_STATUS
    );
    assert!(err.to_string().contains("open a new session"));
    // Closing the session closed its operation.
    assert!(matches!(
        engine.operation(&op.id),
        Err(EngineError::UnknownOperation)
    ));
    assert_eq!(op.status().state, OpState::Closed);
    assert!(engine.operations().is_empty());
    assert!(matches!(
        engine.close_session(&session.id),
        Err(EngineError::UnknownSession)
    ));
}

#[tokio::test]
async fn a_closed_connection_closes_its_sessions_only() {
    let engine = engine().await;
    let mine = engine
        .open_session("a".into(), 1, &BTreeMap::new())
        .unwrap();
    let other = engine
        .open_session("b".into(), 2, &BTreeMap::new())
        .unwrap();
    engine.close_connection(1);
    assert!(engine.session(&mine.id).is_err());
    assert!(engine.session(&other.id).is_ok());
}

#[tokio::test]
async fn hive_commands_work_end_to_end() {
    let engine = engine().await;
    let s = open(&engine);
    assert_eq!(
        lines(&engine, &s, "SHOW DATABASES").await,
        [
            "+---------------+",
            "| database_name |",
            "+---------------+",
            "| default       |",
            "| tpch          |",
            "+---------------+"
        ]
    );
    assert_eq!(
        lines(&engine, &s, "SHOW CATALOGS").await,
        [
            "+------------+",
            "| catalog    |",
            "+------------+",
            "| datafusion |",
            "+------------+"
        ]
    );
    assert_eq!(
        lines(&engine, &s, "show tables in tpch like 'n*|r*'").await,
        [
            "+----------+",
            "| tab_name |",
            "+----------+",
            "| nation   |",
            "| region   |",
            "+----------+"
        ]
    );
    assert_eq!(
        lines(&engine, &s, "SELECT current_database() AS db").await[3],
        "| default |"
    );
    run(&engine, &s, "use tpch").await.unwrap();
    assert_eq!(
        lines(&engine, &s, "SELECT current_schema() AS db").await[3],
        "| tpch |"
    );
    assert_eq!(lines(&engine, &s, "SHOW TABLES").await.len(), 8 + 4);
    let described = lines(&engine, &s, "DESCRIBE region").await;
    assert_eq!(described[1], "| col_name    | data_type | comment |");
    assert_eq!(described[3], "| r_regionkey | bigint    |         |");
    assert_eq!(described[4], "| r_name      | string    |         |");
    assert_eq!(described.len(), 3 + 3 + 1);
    // FORMATTED and EXTENDED go on after the columns with the table's details.
    let formatted = cells(&lines(&engine, &s, "DESC FORMATTED region").await);
    assert_eq!(formatted[..4], cells(&described)[..]);
    assert_eq!(
        formatted[4..],
        [
            ["", "", ""],
            ["# Detailed Table Information", "", ""],
            ["Catalog", "datafusion", ""],
            ["Database", "tpch", ""],
            ["Table", "region", ""],
            ["Type", "MANAGED", ""],
        ]
    );
    assert_eq!(
        cells(&lines(&engine, &s, "DESCRIBE EXTENDED tpch.region").await),
        formatted
    );
    assert_eq!(
        lines(&engine, &s, "DESCRIBE region R_NAME").await[3],
        "| r_name   | string    |         |"
    );
    let missing = error(&engine, &s, "DESCRIBE region r_nope").await;
    assert!(missing.to_string().contains("'r_nope'"), "{missing}");
    assert_eq!(
        lines(&engine, &s, "DESCRIBE DATABASE tpch").await[1],
        "| db_name | comment | location | owner_name | owner_type | parameters |"
    );
    assert_eq!(
        lines(&engine, &s, "DESCRIBE DATABASE tpch").await[3],
        "| tpch    |         |          |            |            |            |"
    );
    let missing = error(&engine, &s, "DESCRIBE SCHEMA nope").await;
    assert!(
        missing.to_string().contains("'nope' does not exist"),
        "{missing}"
    );
    let usage = lines(&engine, &s, "DESCRIBE FUNCTION upper").await;
    assert!(
        usage[3].starts_with("| upper(str) - Converts a string to upper-case."),
        "{usage:?}"
    );
    let extended = lines(&engine, &s, "DESC FUNCTION EXTENDED upper").await;
    assert!(extended.len() > usage.len(), "{extended:?}");
    assert_eq!(
        lines(&engine, &s, "DESCRIBE FUNCTION nope").await[3],
        "| Function 'nope' does not exist. |"
    );
    let created = lines(&engine, &s, "SHOW CREATE TABLE region").await;
    assert_eq!(created[1].trim_matches('|').trim(), "createtab_stmt");
    let statement: Vec<&str> = created[3..created.len() - 1]
        .iter()
        .map(|line| line.trim_matches('|').trim_end())
        .collect();
    assert_eq!(
        statement,
        [
            " CREATE TABLE `tpch`.`region`(",
            "   `r_regionkey` bigint,",
            "   `r_name` string,",
            "   `r_comment` string)"
        ]
    );
    assert_eq!(
        lines(&engine, &s, "SHOW COLUMNS IN region").await,
        [
            "+-------------+",
            "| field       |",
            "+-------------+",
            "| r_regionkey |",
            "| r_name      |",
            "| r_comment   |",
            "+-------------+"
        ]
    );
    assert_eq!(
        lines(&engine, &s, "SHOW COLUMNS FROM nation IN tpch LIKE '*key'").await,
        [
            "+-------------+",
            "| field       |",
            "+-------------+",
            "| n_nationkey |",
            "| n_regionkey |",
            "+-------------+"
        ]
    );
    run(
        &engine,
        &s,
        "CREATE VIEW big_regions AS SELECT * FROM region WHERE r_regionkey > 2",
    )
    .await
    .unwrap();
    let view = lines(&engine, &s, "DESCRIBE EXTENDED big_regions").await;
    assert!(
        view.iter()
            .any(|l| l.contains("| Type ") && l.contains("VIEW")),
        "{view:?}"
    );
    assert!(
        view.iter()
            .any(|l| l.contains("| View Text ") && l.contains("CREATE VIEW big_regions")),
        "{view:?}"
    );
    assert_eq!(
        lines(&engine, &s, "SHOW CREATE TABLE big_regions").await[3],
        "| CREATE VIEW big_regions AS SELECT * FROM region WHERE r_regionkey > 2 |"
    );
    assert_eq!(
        lines(&engine, &s, "SHOW VIEWS").await,
        [
            "+-------------+",
            "| tab_name    |",
            "+-------------+",
            "| big_regions |",
            "+-------------+"
        ]
    );
    // The view went to the current database (tpch); a pattern narrows, another database
    // has none.
    assert_eq!(
        lines(&engine, &s, "SHOW VIEWS FROM tpch LIKE 'big*|x'").await[3],
        "| big_regions |"
    );
    assert_eq!(lines(&engine, &s, "SHOW VIEWS IN default").await.len(), 4);
    assert_eq!(
        lines(&engine, &s, "SHOW FUNCTIONS LIKE 'upp*|lower'").await,
        [
            "+----------+",
            "| tab_name |",
            "+----------+",
            "| lower    |",
            "| upper    |",
            "+----------+"
        ]
    );

    run(&engine, &s, "CREATE DATABASE IF NOT EXISTS scratch")
        .await
        .unwrap();
    run(&engine, &s, "CREATE DATABASE IF NOT EXISTS scratch")
        .await
        .unwrap();
    let again = error(&engine, &s, "CREATE DATABASE scratch").await;
    assert!(again.to_string().contains("already exists"), "{again}");
    run(&engine, &s, "CREATE TABLE scratch.t (x INT)")
        .await
        .unwrap();
    run(&engine, &s, "INSERT INTO scratch.t VALUES (1), (2)")
        .await
        .unwrap();
    assert_eq!(
        lines(&engine, &s, "SELECT sum(x) AS s FROM scratch.t").await[3],
        "| 3 |"
    );
    run(&engine, &s, "DROP DATABASE scratch CASCADE")
        .await
        .unwrap();
    let gone = error(&engine, &s, "USE scratch").await;
    assert!(gone.to_string().contains("does not exist"), "{gone}");

    run(&engine, &s, "SET datafusion.execution.batch_size = 5")
        .await
        .unwrap();
    assert_eq!(
        lines(&engine, &s, "SET datafusion.execution.batch_size").await[3],
        "| datafusion.execution.batch_size=5 |"
    );
    let all = lines(&engine, &s, "SET").await;
    assert!(all
        .iter()
        .any(|l| l.contains("datafusion.execution.batch_size=5")));
    let bad = error(&engine, &s, "SET datafusion.execution.batch_size=lots").await;
    assert!(bad.to_string().contains("batch_size"), "{bad}");
}

#[tokio::test]
async fn information_schema_is_enabled() {
    let engine = engine().await;
    let s = open(&engine);
    assert_eq!(
        lines(
            &engine,
            &s,
            "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'tpch'"
        )
        .await[3],
        "| 8 |"
    );
}

#[tokio::test]
async fn configured_tables_are_registered_and_missing_paths_stop_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("people.csv");
    std::fs::write(&csv, "name,age\nann,31\nbo,42\n").unwrap();
    let config = EngineConfig::parse(&format!(
        "tables:\n  hr.people: {{format: csv, location: '{}'}}\ndemo-data: false\n",
        csv.display()
    ))
    .unwrap();
    let engine = Engine::start(&config).await.unwrap();
    let s = open(&engine);
    assert_eq!(
        lines(&engine, &s, "SELECT name FROM hr.people WHERE age > 40").await[3],
        "| bo   |"
    );
    assert!(error(&engine, &s, "SELECT * FROM tpch.nation")
        .await
        .to_string()
        .contains("not found"));
    let formatted = cells(&lines(&engine, &s, "DESCRIBE FORMATTED hr.people").await);
    assert_eq!(
        formatted[formatted.len() - 4..],
        [
            ["Table", "people", ""],
            ["Type", "EXTERNAL", ""],
            ["Provider", "csv", ""],
            ["Location", &format!("file://{}", csv.display()), ""],
        ]
    );
    // Hive's SHOW CREATE TABLE: a table over files shows its format and location.
    let created = lines(&engine, &s, "SHOW CREATE TABLE hr.people").await;
    let statement: Vec<&str> = created[3..created.len() - 1]
        .iter()
        .map(|line| line.trim_matches('|').trim())
        .collect();
    assert_eq!(
        statement,
        [
            "CREATE EXTERNAL TABLE `hr`.`people`(",
            "`name` string,",
            "`age` bigint)",
            "STORED AS CSV",
            "LOCATION",
            &format!("'file://{}'", csv.display()),
        ]
    );

    let missing =
        EngineConfig::parse("tables:\n  gone: {format: parquet, location: /no/such/dir/}\n")
            .unwrap();
    let failure = Engine::start(&missing).await.err().unwrap().to_string();
    assert!(
        failure.contains("'gone'") && failure.contains("/no/such/dir/"),
        "{failure}"
    );
}

#[tokio::test]
async fn a_statement_whose_work_panics_fails_alone_and_the_engine_goes_on() {
    use datafusion::arrow::datatypes::DataType;
    use datafusion::logical_expr::{create_udf, ColumnarValue, Volatility};
    let engine = engine().await;
    let s = open(&engine);
    let boom = create_udf(
        "boom",
        vec![],
        DataType::Int64,
        Volatility::Volatile,
        std::sync::Arc::new(
            |_: &[ColumnarValue]| -> datafusion::error::Result<ColumnarValue> {
                panic!("a bug in a function")
            },
        ),
    );
    s.context().register_udf(boom);
    let failure = error(&engine, &s, "SELECT boom()").await.to_string();
    assert!(
        failure.contains("the engine failed on this statement (a bug in a function)"),
        "{failure}"
    );
    assert_eq!(lines(&engine, &s, "SELECT 1 AS one").await[3], "| 1   |");
}
