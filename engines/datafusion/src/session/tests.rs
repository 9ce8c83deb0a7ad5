//! What belongs to one session and no other: temporary views, settings, variables, the
//! current database and the user, with two users' sessions on one engine (a GROUP or
//! SERVER engine's case).

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};

use crate::engine::Engine;
use crate::metadata;
use crate::session::Session;
use crate::test_util::{engine, error, lines, run};

fn open_as(engine: &Engine, user: &str) -> Arc<Session> {
    engine
        .open_session(user.into(), 1, &BTreeMap::new())
        .expect("the session opens")
}

async fn ok(engine: &Engine, session: &Session, sql: &str) {
    if let Err(e) = run(engine, session, sql).await {
        panic!("{sql} failed: {e}");
    }
}

/// The one value of a one-row, one-column answer, as text.
async fn value(engine: &Engine, session: &Session, sql: &str) -> String {
    let rows = lines(engine, session, sql).await;
    assert_eq!(rows.len(), 5, "{sql}: {rows:?}");
    rows[3].trim_matches(|c| c == '|' || c == ' ').to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_temporary_view_is_its_sessions_alone() {
    let engine = engine().await;
    let alice = open_as(&engine, "alice");
    let alice_again = open_as(&engine, "alice");
    let bob = open_as(&engine, "bob");
    ok(&engine, &alice, "CREATE TABLE t AS SELECT 1 AS c").await;
    ok(&engine, &alice, "CREATE TEMPORARY VIEW tv AS SELECT 2 AS c").await;
    ok(&engine, &alice, "CREATE TEMPORARY VIEW t AS SELECT 3 AS c").await;
    assert_eq!(value(&engine, &alice, "SELECT c FROM tv").await, "2");
    // It shadows the table of its name in its own session only.
    assert_eq!(value(&engine, &alice, "SELECT c FROM t").await, "3");
    assert_eq!(value(&engine, &bob, "SELECT c FROM t").await, "1");
    assert_eq!(value(&engine, &alice_again, "SELECT c FROM t").await, "1");
    for other in [&bob, &alice_again] {
        let message = error(&engine, other, "SELECT c FROM tv").await.to_string();
        assert!(message.contains("tv"), "{message}");
        let tables = lines(&engine, other, "SHOW TABLES").await.join("\n");
        assert!(!tables.contains("tv"), "{tables}");
    }
    // Listed by its session, in any database, as Spark lists them.
    let tables = lines(&engine, &alice, "SHOW TABLES IN tpch")
        .await
        .join("\n");
    assert!(
        tables.contains("tv") && tables.contains("nation"),
        "{tables}"
    );
    let views = lines(&engine, &alice, "SHOW VIEWS").await.join("\n");
    assert!(views.contains("tv"), "{views}");
    // Described and shown as a view; a CTE of its name still wins.
    let described = lines(&engine, &alice, "DESCRIBE FORMATTED tv")
        .await
        .join("\n");
    assert!(described.contains("VIEW"), "{described}");
    assert_eq!(value(&engine, &alice, "SHOW COLUMNS IN tv").await, "c");
    assert!(error(&engine, &bob, "DESCRIBE tv")
        .await
        .to_string()
        .contains("tv"));
    assert_eq!(
        value(
            &engine,
            &alice,
            "WITH tv AS (SELECT 9 AS c) SELECT c FROM tv"
        )
        .await,
        "9"
    );
    // Found from any current database.
    ok(&engine, &alice, "USE tpch").await;
    assert_eq!(value(&engine, &alice, "SELECT c FROM tv").await, "2");
    ok(&engine, &alice, "USE default").await;
    // A second CREATE must say OR REPLACE; a database in the name is refused.
    let message = error(&engine, &alice, "CREATE TEMPORARY VIEW tv AS SELECT 9 AS c")
        .await
        .to_string();
    assert!(message.contains("exists already"), "{message}");
    ok(
        &engine,
        &alice,
        "CREATE OR REPLACE TEMPORARY VIEW tv AS SELECT 4 AS c",
    )
    .await;
    assert_eq!(value(&engine, &alice, "SELECT c FROM tv").await, "4");
    let message = error(&engine, &alice, "CREATE TEMPORARY VIEW tpch.x AS SELECT 1")
        .await
        .to_string();
    assert!(message.contains("not to a database"), "{message}");
    // DROP VIEW drops the session's temporary view first; the table stays.
    ok(&engine, &alice, "DROP VIEW t").await;
    assert_eq!(value(&engine, &alice, "SELECT c FROM t").await, "1");
    ok(&engine, &alice, "DROP TABLE tv").await;
    ok(&engine, &alice, "DROP VIEW IF EXISTS tv").await;
    assert!(error(&engine, &alice, "SELECT c FROM tv")
        .await
        .to_string()
        .contains("tv"));
    // A global one is Spark's: global_temp.g, for every session of the engine.
    ok(
        &engine,
        &alice,
        "CREATE GLOBAL TEMPORARY VIEW g AS SELECT 5 AS c",
    )
    .await;
    assert_eq!(
        value(&engine, &bob, "SELECT c FROM global_temp.g").await,
        "5"
    );
    assert!(error(&engine, &bob, "SELECT c FROM g")
        .await
        .to_string()
        .contains('g'));
    ok(&engine, &bob, "DROP VIEW global_temp.g").await;
    assert!(error(&engine, &alice, "SELECT c FROM global_temp.g")
        .await
        .to_string()
        .contains('g'));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_tables_and_columns_list_the_sessions_temporary_views() {
    let engine = engine().await;
    let alice = open_as(&engine, "alice");
    let bob = open_as(&engine, "bob");
    ok(&engine, &alice, "CREATE TEMPORARY VIEW tv AS SELECT 2 AS c").await;
    let names =
        |batch: &datafusion::arrow::array::RecordBatch, column: &str| -> Vec<Option<String>> {
            let column = batch.column_by_name(column).unwrap().as_string::<i32>();
            (0..column.len())
                .map(|i| column.is_valid(i).then(|| column.value(i).to_owned()))
                .collect()
        };
    let tables = metadata::tables(alice.context(), None, None, Some("tv"), None).unwrap();
    assert_eq!(names(&tables, "TABLE_NAME"), vec![Some("tv".to_owned())]);
    assert_eq!(names(&tables, "TABLE_SCHEM"), vec![None]);
    assert_eq!(names(&tables, "TABLE_TYPE"), vec![Some("VIEW".to_owned())]);
    // Whatever the schema pattern, as the Spark Thrift Server.
    let tables = metadata::tables(alice.context(), None, Some("tpch"), Some("%"), None).unwrap();
    assert!(names(&tables, "TABLE_NAME").contains(&Some("tv".to_owned())));
    let columns = metadata::columns(alice.context(), None, None, Some("tv"), None).unwrap();
    assert_eq!(names(&columns, "COLUMN_NAME"), vec![Some("c".to_owned())]);
    let tables = metadata::tables(bob.context(), None, None, Some("tv"), None).unwrap();
    assert_eq!(tables.num_rows(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_variables_and_the_database_stay_in_their_session() {
    let engine = engine().await;
    let alice = open_as(&engine, "alice");
    let bob = open_as(&engine, "bob");
    ok(&engine, &alice, "USE tpch").await;
    ok(&engine, &alice, "SET hivevar:region=ASIA").await;
    ok(&engine, &alice, "SET hive.exec.x=1").await;
    ok(&engine, &alice, "SET datafusion.execution.batch_size=1234").await;
    assert_eq!(
        value(&engine, &alice, "SELECT current_database() AS d").await,
        "tpch"
    );
    assert_eq!(
        value(&engine, &alice, "SELECT '${region}' AS r").await,
        "ASIA"
    );
    assert_eq!(
        value(&engine, &bob, "SELECT current_database() AS d").await,
        "default"
    );
    assert_eq!(
        value(&engine, &bob, "SELECT '${region}' AS r").await,
        "${region}"
    );
    assert_eq!(
        value(&engine, &bob, "SET hive.exec.x").await,
        "hive.exec.x is undefined"
    );
    assert_eq!(
        value(&engine, &bob, "SET datafusion.execution.batch_size").await,
        "datafusion.execution.batch_size=8192"
    );
    // The session's user is not a setting anyone can change or list.
    let all = lines(&engine, &bob, "SET").await.join("\n");
    assert!(!all.contains("kumiho_session_user"), "{all}");
    ok(&engine, &bob, "SET kumiho_session_user.name=alice").await;
    assert_eq!(
        value(&engine, &bob, "SELECT current_user() AS u").await,
        "bob"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn current_user_is_the_sessions_user() {
    let engine = engine().await;
    let alice = open_as(&engine, "alice");
    let bob = open_as(&engine, "bob");
    assert_eq!(
        value(&engine, &alice, "SELECT current_user() AS u").await,
        "alice"
    );
    assert_eq!(
        value(&engine, &bob, "SELECT CURRENT_USER ( ) AS u").await,
        "bob"
    );
    assert_eq!(
        value(&engine, &bob, "SELECT current_user AS u").await,
        "bob"
    );
    assert_eq!(
        value(&engine, &bob, "SELECT logged_in_user() AS u").await,
        "bob"
    );
    // In a table created by another user, the reader's.
    ok(
        &engine,
        &alice,
        "CREATE VIEW who AS SELECT current_user() AS u",
    )
    .await;
    assert_eq!(value(&engine, &bob, "SELECT u FROM who").await, "bob");
}

#[tokio::test]
async fn nulls_sort_first_ascending_and_last_descending_as_in_hive_and_spark() {
    let engine = engine().await;
    let session = open_as(&engine, "alice");
    let data = "(VALUES (1, 20), (2, NULL), (3, 10)) t(id, v)";
    let ids = |order: &'static str| {
        let (engine, session) = (&engine, &session);
        async move {
            let rows = lines(
                engine,
                session,
                &format!("SELECT id FROM {data} ORDER BY {order}"),
            )
            .await;
            rows[3..rows.len() - 1]
                .iter()
                .map(|row| row.trim_matches(|c| c == '|' || c == ' ').to_owned())
                .collect::<Vec<_>>()
                .join(",")
        }
    };
    assert_eq!(ids("v").await, "2,3,1");
    assert_eq!(ids("v DESC").await, "1,3,2");
    // NULLS FIRST and NULLS LAST still say where they go.
    assert_eq!(ids("v NULLS LAST").await, "3,1,2");
    assert_eq!(ids("v DESC NULLS FIRST").await, "2,1,3");
    // Ranking orders the same way: the NULL ranks first.
    assert_eq!(
        value(
            &engine,
            &session,
            &format!(
                "SELECT r FROM (SELECT id, rank() OVER (ORDER BY v) r FROM {data}) WHERE id = 2"
            )
        )
        .await,
        "1"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_returns_to_the_settings_the_session_was_opened_with() {
    let engine = engine().await;
    let opened_with = BTreeMap::from([
        ("set:hiveconf:hive.opened".to_owned(), "yes".to_owned()),
        (
            "set:hiveconf:spark.sql.session.timeZone".to_owned(),
            "Asia/Seoul".to_owned(),
        ),
    ]);
    let session = engine
        .open_session("alice".into(), 1, &opened_with)
        .expect("the session opens");
    ok(&engine, &session, "USE tpch").await;
    ok(&engine, &session, "SET hive.opened=changed").await;
    ok(&engine, &session, "SET hive.mine=1").await;
    ok(&engine, &session, "SET spark.sql.session.timeZone=PST").await;
    ok(
        &engine,
        &session,
        "SET datafusion.execution.batch_size=1234",
    )
    .await;

    // One key: the others SET since stay.
    ok(&engine, &session, "RESET datafusion.execution.batch_size").await;
    assert_eq!(
        value(&engine, &session, "SET datafusion.execution.batch_size").await,
        "datafusion.execution.batch_size=8192"
    );
    assert_eq!(
        value(&engine, &session, "SET hive.mine").await,
        "hive.mine=1"
    );
    assert_eq!(
        value(&engine, &session, "SELECT current_timezone() AS z").await,
        "PST"
    );
    ok(&engine, &session, "RESET spark.sql.session.timeZone").await;
    assert_eq!(
        value(&engine, &session, "SELECT current_timezone() AS z").await,
        "Asia/Seoul"
    );

    // Every key: back to the opened settings; the database stays.
    ok(&engine, &session, "reset").await;
    assert_eq!(
        value(&engine, &session, "SET hive.opened").await,
        "hive.opened=yes"
    );
    assert_eq!(
        value(&engine, &session, "SET hive.mine").await,
        "hive.mine is undefined"
    );
    assert_eq!(
        value(&engine, &session, "SELECT current_database() AS d").await,
        "tpch"
    );
    assert_eq!(
        value(&engine, &session, "SELECT current_user() AS u").await,
        "alice"
    );
    // Nothing to reset is not an error, as in Spark.
    ok(&engine, &session, "RESET hive.never.set").await;
}
