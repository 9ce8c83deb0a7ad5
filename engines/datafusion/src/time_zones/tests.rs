use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::NaiveDateTime;
use datafusion::arrow::array::{RecordBatch, TimestampMicrosecondArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use datafusion::datasource::MemTable;

use super::{session_setting, Zone};
use crate::engine::Engine;
use crate::hive_functions::tests::check;
use crate::session::Session;
use crate::test_util::{engine, open, run, run_with, value_rows};

/// Sets the session's zone as a user would.
async fn set_zone(engine: &Engine, s: &Session, zone: &str) {
    let statement = format!("SET spark.sql.session.timeZone={zone}");
    run(engine, s, &statement).await.unwrap();
}

fn at(text: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S").unwrap()
}

#[test]
fn settings_are_what_datafusion_reads() {
    assert_eq!(session_setting("PST").unwrap(), "America/Los_Angeles");
    assert_eq!(session_setting(" UTC+8 ").unwrap(), "+08:00");
    assert_eq!(session_setting("GMT-03:30").unwrap(), "-03:30");
    assert_eq!(session_setting("+5:45").unwrap(), "+05:45");
    assert_eq!(session_setting("Z").unwrap(), "UTC");
    assert_eq!(session_setting("+00:00").unwrap(), "+00:00");
    assert_eq!(session_setting("Asia/Seoul").unwrap(), "Asia/Seoul");
    for name in ["Mars/Olympus", "+19:00", "+05:30:15", "", "8"] {
        let error = session_setting(name).unwrap_err();
        assert!(error.contains("is not a time zone"), "{name}: {error}");
    }
}

#[test]
fn daylight_saving_gaps_move_forward_and_repeats_take_the_earlier_moment() {
    let la = Zone::java("America/Los_Angeles").unwrap();
    // 2024-03-10 02:30 does not exist in Los Angeles: Java reads 03:30 PDT.
    assert_eq!(
        la.to_utc(at("2024-03-10 02:30:00")),
        Some(at("2024-03-10 10:30:00"))
    );
    // 2024-11-03 01:30 happens twice: the first, PDT.
    assert_eq!(
        la.to_utc(at("2024-11-03 01:30:00")),
        Some(at("2024-11-03 08:30:00"))
    );
    assert_eq!(
        la.to_local(at("2024-07-01 12:00:00")),
        Some(at("2024-07-01 05:00:00"))
    );
    let offset = Zone::java("-08:00").unwrap();
    assert_eq!(
        offset.to_utc(at("2024-07-01 05:00:00")),
        Some(at("2024-07-01 13:00:00"))
    );
}

// Every expected value below is Spark 4.3's with the same session time zone.

#[tokio::test]
async fn conversions_between_moments_and_wall_clock_times_use_the_session_zone() {
    let engine = engine().await;
    let s = open(&engine);
    set_zone(&engine, &s, "America/Los_Angeles").await;
    check(
        &engine,
        &s,
        "SELECT from_unixtime(0), from_unixtime(1704164645, 'yyyy-MM-dd HH:mm'), \
         unix_timestamp('1970-01-01 00:00:00'), unix_timestamp('2024-07-01', 'yyyy-MM-dd'), \
         to_unix_timestamp('2024-03-10 02:30:00'), current_timezone()",
        &[
            "1969-12-31 16:00:00",
            "2024-01-01 19:04",
            "28800",
            "1719817200",
            // 02:30 does not exist that night: Java reads 03:30 PDT.
            "1710066600",
            "America/Los_Angeles",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT CAST(CAST(0 AS TIMESTAMP) AS STRING), \
         CAST(TIMESTAMP '1970-01-01 00:00:00' AS BIGINT), \
         CAST(TIMESTAMP '2024-07-01 12:00:00' AS DOUBLE), CAST(CAST(1.5 AS TIMESTAMP) AS STRING), \
         CAST(timestamp_millis(1704164645123) AS STRING), \
         unix_millis(TIMESTAMP '2024-07-02 03:04:05.5'), CAST(to_timestamp(1704164645) AS STRING)",
        &[
            "1969-12-31 16:00:00",
            "28800",
            "1719860400.0",
            "1969-12-31 16:00:01.5",
            "2024-01-01 19:04:05.123",
            "1719914645500",
            "2024-01-01 19:04:05",
        ],
    )
    .await;
    // A string with a zone is converted to the session's; one without is its wall-clock time.
    check(
        &engine,
        &s,
        "SELECT CAST(CAST('2024-01-01 00:00:00Z' AS TIMESTAMP) AS STRING), \
         CAST(CAST('2024-07-01 12:00:00 Asia/Seoul' AS TIMESTAMP) AS STRING), \
         CAST(CAST('2024-07-01 12:00:00' AS TIMESTAMP) AS STRING), \
         CAST(make_timestamp(2024, 1, 1, 0, 0, 0, 'UTC') AS STRING), \
         CAST(make_timestamp(2024, 3, 10, 2, 30, 0, 'America/Los_Angeles') AS STRING)",
        &[
            "2023-12-31 16:00:00",
            "2024-06-30 20:00:00",
            "2024-07-01 12:00:00",
            "2023-12-31 16:00:00",
            "2024-03-10 03:30:00",
        ],
    )
    .await;
    check(
        &engine,
        &s,
        "SELECT to_json(named_struct('t', TIMESTAMP '2024-07-01 12:00:00')), \
         to_json(array(CAST(0 AS TIMESTAMP))), \
         date_format(TIMESTAMP '2024-07-01 12:34:00', 'yyyy-MM-dd HH:mm XXX'), \
         date_format(TIMESTAMP '2024-01-01 12:34:00', 'HH:mm Z'), \
         date_format(TIMESTAMP '2024-07-01 12:34:00', 'HH:mm z'), \
         from_unixtime(0, 'yyyy-MM-dd HH:mm zzz'), \
         unix_timestamp(current_timestamp()) - unix_timestamp()",
        &[
            r#"{"t":"2024-07-01T12:00:00.000-07:00"}"#,
            r#"["1969-12-31T16:00:00.000-08:00"]"#,
            "2024-07-01 12:34 -07:00",
            "12:34 -0800",
            "12:34 PDT",
            "1969-12-31 16:00 PST",
            "0",
        ],
    )
    .await;
    // from_json reads a time with a zone as its moment, one without as the session's.
    check(
        &engine,
        &s,
        "SELECT CAST(from_json('{\"t\":\"2024-07-01T12:00:00.000Z\"}', 't TIMESTAMP').t AS STRING), \
         CAST(from_json('{\"t\":\"2024-07-01 12:00:00\"}', 't TIMESTAMP').t AS STRING), \
         CAST(from_json('{\"t\":\"2024-07-01T12:00:00+09:00\"}', 't TIMESTAMP').t AS STRING), \
         CAST(from_json('{\"t\":1719835200}', 't TIMESTAMP').t AS STRING)",
        &[
            "2024-07-01 05:00:00",
            "2024-07-01 12:00:00",
            "2024-06-30 20:00:00",
            "2024-07-01 05:00:00",
        ],
    )
    .await;
    // DataFusion's current_date() answers only once simplified, so not through `check`.
    assert_eq!(
        value_rows(
            &engine,
            &s,
            "SELECT CAST(current_timestamp() AS DATE) = current_date()"
        )
        .await,
        [["true"]]
    );
}

#[tokio::test]
async fn the_zone_comes_from_open_session_set_time_zone_or_a_statement_overlay() {
    let engine = engine().await;
    let conf = BTreeMap::from([("hive.local.time.zone".to_owned(), "Asia/Seoul".to_owned())]);
    let s = engine.open_session("alice".into(), 1, &conf).unwrap();
    let zone_and_epoch = "SELECT current_timezone(), from_unixtime(0)";
    assert_eq!(
        value_rows(&engine, &s, zone_and_epoch).await,
        [["Asia/Seoul", "1970-01-01 09:00:00"]]
    );
    for (statement, zone, epoch) in [
        (
            "SET TIME ZONE INTERVAL 8 HOURS",
            "+08:00",
            "1970-01-01 08:00:00",
        ),
        (
            "SET TIME ZONE INTERVAL '-03:30' HOUR TO MINUTE",
            "-03:30",
            "1969-12-31 20:30:00",
        ),
        // current_timezone() repeats a zone as it was written, as Spark's.
        ("set time zone 'PST'", "PST", "1969-12-31 16:00:00"),
        ("SET TIME ZONE 'GMT+8'", "GMT+8", "1970-01-01 08:00:00"),
        // DataFusion's `timezone` key, in either form, is read as the others are.
        (
            "SET timezone = 'Asia/Kolkata'",
            "Asia/Kolkata",
            "1970-01-01 05:30:00",
        ),
        ("SET TIMEZONE TO 'PST'", "PST", "1969-12-31 16:00:00"),
        (
            "SET spark.sql.session.timeZone=UTC",
            "UTC",
            "1970-01-01 00:00:00",
        ),
    ] {
        run(&engine, &s, statement).await.unwrap();
        assert_eq!(
            value_rows(&engine, &s, zone_and_epoch).await,
            [[zone, epoch]],
            "{statement}"
        );
    }
    // LOCAL is the machine's zone (`TZ`, else the system's), whatever it is here.
    run(&engine, &s, "SET TIME ZONE LOCAL").await.unwrap();
    let machine = session_setting("LOCAL").unwrap();
    assert_eq!(
        value_rows(&engine, &s, "SELECT current_timezone()").await,
        [[machine.as_str()]]
    );
    set_zone(&engine, &s, "UTC").await;
    // A statement's overlay holds for that statement alone.
    let overlay = BTreeMap::from([(
        "spark.sql.session.timeZone".to_owned(),
        "Asia/Kolkata".to_owned(),
    )]);
    let batches = run_with(&engine, &s, zone_and_epoch, &overlay)
        .await
        .unwrap();
    assert_eq!(
        crate::test_util::formatted_rows(&batches),
        [["Asia/Kolkata", "1970-01-01 05:30:00"]]
    );
    assert_eq!(
        value_rows(&engine, &s, zone_and_epoch).await,
        [["UTC", "1970-01-01 00:00:00"]]
    );
}

#[tokio::test]
async fn a_zone_that_is_none_is_refused_and_the_session_keeps_its_own() {
    let engine = engine().await;
    let conf = BTreeMap::from([(
        "spark.sql.session.timeZone".to_owned(),
        "Mars/Olympus".to_owned(),
    )]);
    let error = engine
        .open_session("alice".into(), 1, &conf)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("'Mars/Olympus' is not a time zone")
            && error.contains("spark.sql.session.timeZone"),
        "{error}"
    );
    let s = open(&engine);
    run(&engine, &s, "SET TIME ZONE 'Asia/Seoul'")
        .await
        .unwrap();
    let error = run(&engine, &s, "SET hive.local.time.zone=+25:00")
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("'+25:00' is not a time zone"), "{error}");
    // DataFusion's own form, which took any text before.
    let error = run(&engine, &s, "SET timezone TO 'Mars/Olympus'")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("'Mars/Olympus' is not a time zone"),
        "{error}"
    );
    assert_eq!(
        value_rows(&engine, &s, "SELECT current_timezone()").await,
        [["Asia/Seoul"]]
    );
}

#[tokio::test]
async fn a_column_of_moments_is_shown_in_the_session_zone() {
    let engine = engine().await;
    let s = open(&engine);
    let schema = Arc::new(Schema::new(vec![Field::new(
        "ts",
        DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        true,
    )]));
    // 2024-07-01 12:00:00 UTC, as a Parquet column adjusted to UTC holds it.
    let moments = TimestampMicrosecondArray::from(vec![Some(1_719_835_200_000_000), None])
        .with_timezone("UTC");
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(moments)]).unwrap();
    let table = MemTable::try_new(schema, vec![vec![batch]]).unwrap();
    s.context()
        .register_table("moments", Arc::new(table))
        .unwrap();
    set_zone(&engine, &s, "America/New_York").await;
    assert_eq!(
        value_rows(
            &engine,
            &s,
            "SELECT ts, unix_timestamp(ts), CAST(ts AS BIGINT), hour(ts), to_date(ts), \
             date_format(ts, 'yyyy-MM-dd HH:mm z'), CAST(ts AS STRING) FROM moments"
        )
        .await,
        [
            [
                "2024-07-01T08:00:00",
                "1719835200",
                "1719835200",
                "8",
                "2024-07-01",
                "2024-07-01 08:00 EDT",
                "2024-07-01 08:00:00"
            ],
            ["NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"]
        ]
    );
    // Compared with a time the session writes, at the moment the session means.
    assert_eq!(
        value_rows(
            &engine,
            &s,
            "SELECT (SELECT count(*) FROM moments WHERE ts >= '2024-07-01 08:00:00'), \
             (SELECT count(*) FROM moments WHERE ts < '2024-07-01 08:00:00'), \
             (SELECT count(*) FROM moments WHERE ts = TIMESTAMP '2024-07-01 08:00:00'), \
             (SELECT count(*) FROM moments WHERE ts = CAST(1719835200 AS TIMESTAMP))"
        )
        .await,
        [["1", "0", "1", "1"]]
    );
}

#[tokio::test]
async fn times_a_daylight_saving_change_skips_or_repeats_read_as_java_reads_them() {
    let engine = engine().await;
    let s = open(&engine);
    // In a UTC session: Hive's shift between UTC and a zone; 01:40 happens twice that night
    // in New York (the first, EDT), 02:30 not at all (read as 03:30 EDT). The repeated hour
    // failed the query ("Cannot cast timezone to different timezone").
    check(
        &engine,
        &s,
        "SELECT CAST(to_utc_timestamp(TIMESTAMP '2024-11-03 01:40:00', 'America/New_York') \
         AS STRING), CAST(to_utc_timestamp(TIMESTAMP '2024-03-10 02:30:00', 'EST') AS STRING), \
         CAST(from_utc_timestamp(TIMESTAMP '2024-11-03 05:40:00', 'America/New_York') AS STRING)",
        &[
            "2024-11-03 05:40:00",
            "2024-03-10 07:30:00",
            "2024-11-03 01:40:00",
        ],
    )
    .await;
    // In a New York session (Spark 4.3's answers): a time the change skips is shown after it.
    set_zone(&engine, &s, "America/New_York").await;
    check(
        &engine,
        &s,
        "SELECT CAST(make_timestamp(2024, 3, 10, 2, 30, 0) AS STRING), \
         CAST(CAST('2024-03-10 02:30:00' AS TIMESTAMP) AS STRING), \
         unix_timestamp('2024-11-03 01:30:00'), \
         CAST(from_utc_timestamp(CAST(1730612400 AS TIMESTAMP), 'Asia/Tokyo') AS STRING)",
        &[
            "2024-03-10 03:30:00",
            "2024-03-10 03:30:00",
            "1730611800",
            "2024-11-03 09:40:00",
        ],
    )
    .await;
    let error = run(
        &engine,
        &s,
        "SELECT from_utc_timestamp(TIMESTAMP '2024-01-01 00:00:00', 'Mars')",
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("from_utc_timestamp: 'Mars' is not a time zone"),
        "{error}"
    );
}

#[tokio::test]
async fn a_pattern_writes_the_sessions_zone_as_java_writes_it() {
    // Spark 4.3's answers in each zone.
    let engine = engine().await;
    let s = open(&engine);
    let format = "SELECT date_format(TIMESTAMP '2024-07-01 12:34:00', 'HH:mm z XXX Z')";
    for (zone, written) in [
        ("UTC", "12:34 UTC Z +0000"),
        ("+05:30", "12:34 +05:30 +05:30 +0530"),
        ("Europe/London", "12:34 BST +01:00 +0100"),
    ] {
        run(&engine, &s, &format!("SET TIME ZONE '{zone}'"))
            .await
            .unwrap();
        assert_eq!(value_rows(&engine, &s, format).await, [[written]], "{zone}");
    }
}

#[tokio::test]
async fn windows_start_at_the_moments_sparks_start_in_the_sessions_zone() {
    // Answers from Spark 4.3 in the same zones: days from midnight UTC, so 17:00 in Los
    // Angeles in summer and 16:00 in winter; hours at half past in India.
    let engine = engine().await;
    let s = open(&engine);
    set_zone(&engine, &s, "America/Los_Angeles").await;
    assert_eq!(
        value_rows(
            &engine,
            &s,
            "SELECT CAST(w.start AS STRING), CAST(w.end AS STRING) FROM (VALUES \
             (window(TIMESTAMP '2024-07-01 12:34:00', '1 day')), \
             (window(TIMESTAMP '2024-01-01 15:59:59', '1 day'))) AS t(w)"
        )
        .await,
        [
            ["2024-06-30 17:00:00", "2024-07-01 17:00:00"],
            ["2023-12-31 16:00:00", "2024-01-01 16:00:00"]
        ]
    );
    set_zone(&engine, &s, "+05:30").await;
    assert_eq!(
        value_rows(
            &engine,
            &s,
            "SELECT CAST(window(TIMESTAMP '2024-07-01 12:34:00', '1 hour').start AS STRING)"
        )
        .await,
        [["2024-07-01 12:30:00"]]
    );
}

#[tokio::test]
async fn sparks_int96_timestamps_are_moments_read_in_the_sessions_zone() {
    // `spark_int96.parquet` is Spark 4.3's, written with its default INT96 timestamps from
    // `SELECT 1 AS id, TIMESTAMP '2024-07-01 12:00:00' AS ts UNION ALL SELECT 2,
    // TIMESTAMP '2024-01-01 00:30:00' UNION ALL SELECT 3, TIMESTAMP '2500-01-01 00:00:00'`
    // in a UTC session; the answers are that Spark's reading it in Los Angeles.
    let warehouse = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/time_zones/spark_int96.parquet"),
        files.path().join("part-0.parquet"),
    )
    .unwrap();
    let engine = crate::warehouse::tests::engine_at(warehouse.path()).await;
    let s = open(&engine);
    let location = files.path().display();
    run(
        &engine,
        &s,
        &format!("CREATE EXTERNAL TABLE spark_times STORED AS PARQUET LOCATION '{location}'"),
    )
    .await
    .unwrap();
    set_zone(&engine, &s, "America/Los_Angeles").await;
    assert_eq!(
        value_rows(
            &engine,
            &s,
            "SELECT id, CAST(ts AS STRING), hour(ts), unix_timestamp(ts), \
             (SELECT count(*) FROM spark_times WHERE ts >= '2024-07-01 05:00:00') \
             FROM spark_times ORDER BY id"
        )
        .await,
        [
            ["1", "2024-07-01 05:00:00", "5", "1719835200", "2"],
            ["2", "2023-12-31 16:30:00", "16", "1704069000", "2"],
            ["3", "2499-12-31 16:00:00", "16", "16725225600", "2"]
        ]
    );
    // DataFusion's functions of a moment's fields read it in the session's zone too.
    assert_eq!(
        value_rows(
            &engine,
            &s,
            "SELECT id, EXTRACT(HOUR FROM ts), date_part('day', ts), \
             CAST(date_trunc('DAY', ts) AS STRING), CAST(date_trunc('HOUR', ts) AS STRING), \
             EXTRACT(YEAR FROM ts) FROM spark_times ORDER BY id"
        )
        .await,
        [
            [
                "1",
                "5",
                "1",
                "2024-07-01 00:00:00",
                "2024-07-01 05:00:00",
                "2024"
            ],
            [
                "2",
                "16",
                "31",
                "2023-12-31 00:00:00",
                "2023-12-31 16:00:00",
                "2023"
            ],
            [
                "3",
                "16",
                "31",
                "2499-12-31 00:00:00",
                "2499-12-31 16:00:00",
                "2499"
            ]
        ]
    );
}
