//! Table properties, statistics and ANALYZE through an engine.

use crate::warehouse::tests::{data_files, Client};

/// The `prpt_name | prpt_value` rows of SHOW TBLPROPERTIES, spaces dropped.
async fn properties(client: &Client, sql: &str) -> String {
    client.lines(sql).await.join("\n").replace(' ', "")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn properties_are_kept_and_shown_as_hive_shows_them() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine.ok("CREATE TABLE t (a INT) COMMENT 'first' TBLPROPERTIES ('team'='etl', 'orc.compress'='ZLIB')",
    )
    .await;
    let shown = properties(&engine, "SHOW TBLPROPERTIES t").await;
    for row in [
        "|comment|first|",
        "|numFiles|0|",
        "|orc.compress|ZLIB|",
        "|team|etl|",
        "|totalSize|0|",
    ] {
        assert!(shown.contains(row), "{row} in {shown}");
    }
    engine
        .ok("ALTER TABLE t SET TBLPROPERTIES ('comment'='second', 'k'='v')")
        .await;
    assert_eq!(
        properties(&engine, "SHOW TBLPROPERTIES t('k')")
            .await
            .lines()
            .nth(3),
        Some("|k|v|")
    );
    let described = engine.lines("DESCRIBE FORMATTED t").await.join("\n");
    assert!(
        described.contains("Table Parameters:") && described.contains("second"),
        "{described}"
    );
    engine
        .ok("ALTER TABLE t UNSET TBLPROPERTIES ('k', 'comment')")
        .await;
    let refused = engine
        .error("ALTER TABLE t UNSET TBLPROPERTIES ('k')")
        .await
        .to_string();
    assert!(refused.contains("IF EXISTS"), "{refused}");
    engine
        .ok("ALTER TABLE t UNSET TBLPROPERTIES IF EXISTS ('k')")
        .await;
    let shown = properties(&engine, "SHOW TBLPROPERTIES t").await;
    assert!(
        !shown.contains("|k|") && !shown.contains("second"),
        "{shown}"
    );
    let refused = engine
        .error("ALTER TABLE t SET TBLPROPERTIES ('numRows'='5')")
        .await
        .to_string();
    assert!(refused.contains("ANALYZE"), "{refused}");

    // EXTERNAL, as in Hive: the files stay when the table is dropped.
    engine.ok("INSERT INTO t VALUES (1)").await;
    engine
        .ok("ALTER TABLE t SET TBLPROPERTIES ('EXTERNAL'='TRUE')")
        .await;
    assert!(properties(&engine, "SHOW TBLPROPERTIES t")
        .await
        .contains("|EXTERNAL|TRUE|"));
    engine.ok("DROP TABLE t").await;
    assert_eq!(data_files(&dir.path().join("t")).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_keeps_row_counts_while_the_files_are_those_counted() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine
        .ok("CREATE TABLE p (a INT) PARTITIONED BY (dt STRING)")
        .await;
    engine
        .ok("INSERT INTO p PARTITION (dt='x') VALUES (1), (2)")
        .await;
    engine
        .ok("INSERT INTO p PARTITION (dt='y') VALUES (3)")
        .await;
    engine.ok("ANALYZE TABLE p COMPUTE STATISTICS").await;
    engine
        .ok("ANALYZE TABLE p PARTITION (dt) COMPUTE STATISTICS")
        .await;
    let shown = properties(&engine, "SHOW TBLPROPERTIES p").await;
    assert!(
        shown.contains("|numRows|3|") && shown.contains("|numFiles|2|"),
        "{shown}"
    );
    let partition = engine
        .lines("DESCRIBE FORMATTED p PARTITION (dt='x')")
        .await
        .join("\n")
        .replace(' ', "");
    assert!(
        partition.contains("|PartitionValues|[dt=x]|") && partition.contains("|numRows|2|"),
        "{partition}"
    );
    // A write since: the count is no longer shown, the files are counted anew.
    engine
        .ok("INSERT INTO p PARTITION (dt='x') VALUES (4)")
        .await;
    let shown = properties(&engine, "SHOW TBLPROPERTIES p").await;
    assert!(
        !shown.contains("numRows") && shown.contains("|numFiles|3|"),
        "{shown}"
    );
    // The partition counted again: the table's rows are its partitions' added up, as Hive
    // adds them.
    engine
        .ok("ANALYZE TABLE p PARTITION (dt='x') COMPUTE STATISTICS")
        .await;
    let shown = properties(&engine, "SHOW TBLPROPERTIES p").await;
    assert!(shown.contains("|numRows|4|"), "{shown}");
    // NOSCAN and FOR COLUMNS are accepted; an unknown column or partition is not.
    engine.ok("ANALYZE TABLE p COMPUTE STATISTICS NOSCAN").await;
    engine
        .ok("ANALYZE TABLE p COMPUTE STATISTICS FOR COLUMNS a")
        .await;
    let refused = engine
        .error("ANALYZE TABLE p COMPUTE STATISTICS FOR COLUMNS zz")
        .await
        .to_string();
    assert!(refused.contains("zz"), "{refused}");
    let refused = engine
        .error("DESCRIBE p PARTITION (dt='nope')")
        .await
        .to_string();
    assert!(
        refused.contains("dt=nope") && refused.contains("does not exist"),
        "{refused}"
    );
    // The demo data's tables are analyzed too: nothing to keep.
    engine
        .ok("ANALYZE TABLE tpch.nation COMPUTE STATISTICS")
        .await;

    let extended = engine
        .lines("SHOW TABLE EXTENDED LIKE 'p*'")
        .await
        .join("\n");
    for line in [
        "tableName:p",
        "owner:alice",
        "inputformat:org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "columns:struct columns { i32 a}",
        "partitioned:true",
        "partitionColumns:struct partition_columns { string dt}",
        "totalNumberFiles:3",
    ] {
        assert!(extended.contains(line), "{line} in {extended}");
    }
    let one = engine
        .lines("SHOW TABLE EXTENDED LIKE 'p' PARTITION (dt='y')")
        .await
        .join("\n");
    assert!(
        one.contains("dt=y") && one.contains("totalNumberFiles:1"),
        "{one}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn location_format_and_serde_properties() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine
        .ok("CREATE TABLE t (a INT, b STRING) STORED AS TEXTFILE")
        .await;
    engine
        .ok("ALTER TABLE t SET SERDEPROPERTIES ('field.delim'='|')")
        .await;
    engine.ok("INSERT INTO t VALUES (1, 'x')").await;
    let file = data_files(&dir.path().join("t")).pop().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("t").join(file)).unwrap(),
        "1|x\n"
    );
    let refused = engine
        .error("ALTER TABLE t SET FILEFORMAT PARQUET")
        .await
        .to_string();
    assert!(refused.contains("not converted"), "{refused}");
    let refused = engine
        .error("ALTER TABLE t SET SERDEPROPERTIES ('quoteChar'='\"')")
        .await
        .to_string();
    assert!(refused.contains("quoteChar"), "{refused}");

    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("old.csv"), "7|y\n").unwrap();
    engine
        .ok(&format!(
            "ALTER TABLE t SET LOCATION '{}'",
            elsewhere.path().display()
        ))
        .await;
    assert_eq!(engine.lines("SELECT a, b FROM t").await[3], "| 7 | y |");
    engine.ok("CREATE TABLE e (a INT)").await;
    engine.ok("ALTER TABLE e SET FILEFORMAT ORC").await;
    let create = engine.lines("SHOW CREATE TABLE e").await.join("\n");
    assert!(create.contains("STORED AS ORC"), "{create}");
}
