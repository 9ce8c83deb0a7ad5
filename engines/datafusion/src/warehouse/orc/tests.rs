//! ORC tables driven as a client drives them: statements through an engine, files checked on
//! disk, and files written as Hive writes them (no extension, unnamed columns, hidden files
//! beside them) read as an EXTERNAL table.

use std::path::Path as FsPath;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Int32Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{Field, Schema};

use super::super::tests::{data_files, partitioned_table_in, Client};

/// Writes `batch` as the ORC file `path`, as another engine (Hive, Spark) would.
fn write_orc_file(path: &FsPath, batch: &RecordBatch) {
    let file = std::fs::File::create(path).unwrap();
    let mut writer = orc_rust::ArrowWriterBuilder::new(file, batch.schema())
        .try_build()
        .unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let schema = Schema::new(
        columns
            .iter()
            .map(|(name, array)| Field::new(*name, array.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(
        Arc::new(schema),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_writable_type_round_trips_and_another_engine_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine
        .ok(
            "CREATE TABLE typed (s STRING, i INT, b BIGINT, d DOUBLE, f FLOAT, t TINYINT, \
         sm SMALLINT, flag BOOLEAN, dt DATE, ts TIMESTAMP, bin BINARY, v VARCHAR(5)) STORED AS ORC",
        )
        .await;
    engine
        .ok(
            "INSERT INTO typed VALUES ('héllo', 1, 10000000000, 1.5, 2.5, 7, 300, true, \
         DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05.123456', X'CAFE', 'vv'), \
         (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
        )
        .await;
    let files = data_files(&dir.path().join("typed"));
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].ends_with(".orc"), "{files:?}");
    let bytes = std::fs::read(dir.path().join("typed").join(&files[0])).unwrap();
    assert_eq!(&bytes[..3], b"ORC", "an ORC file starts with its magic");

    let other = Client::at(dir.path()).await;
    assert_eq!(
        other.lines("SELECT s, i, b, d, f, t, sm, flag, dt, ts, bin, v FROM typed ORDER BY i NULLS LAST"
        )
        .await[3..5],
        [
            "| héllo | 1 | 10000000000 | 1.5 | 2.5 | 7 | 300 | true | 2024-01-02 | 2024-01-02T03:04:05.123456 | cafe | vv |",
            "|       |   |             |     |     |   |     |      |            |                            |      |    |",
        ]
    );
    let create = other.lines("SHOW CREATE TABLE typed").await.join("\n");
    assert!(create.contains("STORED AS ORC"), "{create}");
    let described = other.lines("DESCRIBE FORMATTED typed").await.join("\n");
    assert!(
        described.contains("| Provider                     | orc"),
        "{described}"
    );
    // DataFusion's unsigned integers (row_number()'s), which ORC has not, as signed ones.
    engine
        .ok("CREATE TABLE ranked STORED AS ORC AS \
         SELECT row_number() OVER (ORDER BY r_regionkey) AS rn FROM tpch.region")
        .await;
    assert_eq!(
        other
            .lines("SELECT sum(rn) AS n, max(rn) AS top FROM ranked")
            .await[3],
        "| 15 | 5   |"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitions_ctas_and_overwrite() {
    let (dir, engine) = partitioned_table_in("ORC").await;
    // Partition columns alone, and no column at all.
    assert_eq!(
        engine
            .lines("SELECT count(*) AS n, count(DISTINCT dt) AS d FROM p")
            .await[3],
        "| 2 | 2 |"
    );
    engine
        .ok("CREATE TABLE pc PARTITIONED BY (r) STORED AS ORC AS \
         SELECT r_name AS name, r_regionkey AS r FROM tpch.region")
        .await;
    assert_eq!(data_files(&dir.path().join("pc")).len(), 5);
    assert_eq!(
        engine.lines("SELECT name FROM pc WHERE r = 0").await[3],
        "| AFRICA |"
    );
    engine.ok("TRUNCATE TABLE pc").await;
    assert_eq!(
        engine.lines("SELECT count(*) AS n FROM pc").await[3],
        "| 0 |"
    );
    // A column added later reads as NULL from the files written before it.
    engine.ok("ALTER TABLE p ADD COLUMNS (note STRING)").await;
    engine
        .ok("INSERT INTO p PARTITION (dt='2024-01-03') VALUES (4, 'd', 'new')")
        .await;
    assert_eq!(
        engine.lines("SELECT id, note FROM p ORDER BY id").await[3..6],
        ["| 3  |      |", "| 4  | new  |", "| 10 |      |"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_insert_into_many_dynamic_partitions_writes_them_all() {
    // 600 files open at once, each fed batch after batch: more than tokio's blocking pool
    // has threads (512), where the encoders first ran and this INSERT never ended.
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine
        .ok("CREATE TABLE daily (id BIGINT) PARTITIONED BY (day BIGINT) STORED AS ORC")
        .await;
    engine.ok("INSERT INTO daily PARTITION (day) SELECT value, value % 600 FROM generate_series(1, 60000)",
    )
    .await;
    assert_eq!(data_files(&dir.path().join("daily")).len(), 600);
    assert_eq!(
        engine
            .lines("SELECT count(*) AS n, count(DISTINCT day) AS days FROM daily")
            .await[3],
        "| 60000 | 600  |"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_split_between_partitions_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine
        .ok(
            "CREATE TABLE many STORED AS ORC AS SELECT value AS id, repeat('x', 50) AS pad \
         FROM generate_series(1, 20000)",
        )
        .await;
    // DataFusion splits a file larger than this into byte ranges, one per partition; each
    // stripe belongs to the range holding its start.
    engine
        .ok("SET datafusion.optimizer.repartition_file_min_size = 1")
        .await;
    engine
        .ok("SET datafusion.execution.target_partitions = 4")
        .await;
    let plan = engine
        .lines("EXPLAIN SELECT sum(id) FROM many")
        .await
        .join("\n");
    assert!(
        plan.contains(".orc:0.."),
        "files read in byte ranges: {plan}"
    );
    assert_eq!(
        engine
            .lines("SELECT count(*) AS n, sum(id) AS total FROM many")
            .await[3],
        "| 20000 | 200010000 |"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn types_orc_files_cannot_hold_are_refused_naming_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    let refused = engine
        .error("CREATE TABLE money (id INT, price DECIMAL(10,2)) STORED AS ORC")
        .await
        .to_string();
    assert!(
        refused.contains("'price'") && refused.contains("DECIMAL(10,2)"),
        "{refused}"
    );
    assert!(refused.contains("PARQUET"), "{refused}");
    assert!(!dir.path().join("money").exists());
    let refused = engine
        .error("CREATE TABLE tags STORED AS ORC AS SELECT 1 AS id, make_array('a', 'b') AS tags")
        .await
        .to_string();
    assert!(
        refused.contains("'tags'") && refused.to_uppercase().contains("ARRAY<STRING>"),
        "{refused}"
    );
    assert!(!dir.path().join("tags").exists());
    engine
        .ok("CREATE TABLE ok_orc (id INT) STORED AS ORC")
        .await;
    let refused = engine
        .error("ALTER TABLE ok_orc ADD COLUMNS (amount DECIMAL(5,1))")
        .await
        .to_string();
    assert!(refused.contains("'amount'"), "{refused}");
    // An EXTERNAL table may have them (Spark's files do): it is read, and writing to it is
    // refused.
    let data = tempfile::tempdir().unwrap();
    let sql = format!(
        "CREATE EXTERNAL TABLE ext_money (price DECIMAL(10,2)) STORED AS ORC LOCATION '{}'",
        data.path().display()
    );
    engine.ok(&sql).await;
    let refused = engine
        .error("INSERT INTO ext_money VALUES (1.25)")
        .await
        .to_string();
    assert!(refused.contains("'price'"), "{refused}");
    assert!(std::fs::read_dir(data.path()).unwrap().next().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hive_written_files_are_read_as_an_external_table() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    // As Hive 1.x writes them: no extension, columns named _col0, _col1; beside them a
    // _SUCCESS marker and a checksum, which are not data.
    let data = tempfile::tempdir().unwrap();
    let rows = batch(vec![
        ("_col0", Arc::new(Int32Array::from(vec![Some(1), None]))),
        (
            "_col1",
            Arc::new(StringArray::from(vec![Some("x"), Some("y")])),
        ),
    ]);
    write_orc_file(&data.path().join("000000_0"), &rows);
    std::fs::write(data.path().join("_SUCCESS"), b"").unwrap();
    std::fs::write(data.path().join(".000000_0.crc"), b"crc").unwrap();
    let sql = format!(
        "CREATE EXTERNAL TABLE hive_t (id BIGINT, name STRING, added STRING) \
         ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.orc.OrcSerde' \
         STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.orc.OrcInputFormat' \
         OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat' LOCATION '{}'",
        data.path().display()
    );
    engine.ok(&sql).await;
    assert_eq!(
        engine
            .lines("SELECT id, name, added FROM hive_t ORDER BY name")
            .await[3..5],
        ["| 1  | x    |       |", "|    | y    |       |"]
    );
    // Named columns, in another order than the table's, and the columns inferred; a column
    // of NULLs alone (its data stream is empty).
    let named = tempfile::tempdir().unwrap();
    let rows = batch(vec![
        ("name", Arc::new(StringArray::from(vec!["p", "q"]))),
        ("ID", Arc::new(Int32Array::from(vec![7, 8]))),
        (
            "gone",
            Arc::new(StringArray::from(vec![None::<&str>, None])),
        ),
    ]);
    write_orc_file(&named.path().join("part-00000.snappy.orc"), &rows);
    std::fs::write(named.path().join("_SUCCESS"), b"").unwrap();
    let sql = format!(
        "CREATE EXTERNAL TABLE inferred STORED AS ORC LOCATION '{}'",
        named.path().display()
    );
    engine.ok(&sql).await;
    let described = engine.lines("DESCRIBE inferred").await.join("\n");
    assert!(
        described.contains("name") && described.contains("ID") && described.contains("int"),
        "{described}"
    );
    let sql = format!(
        "CREATE EXTERNAL TABLE by_name (id INT, name STRING, gone STRING) STORED AS ORC \
         LOCATION '{}'",
        named.path().display()
    );
    engine.ok(&sql).await;
    assert_eq!(
        engine
            .lines("SELECT id, name, gone FROM by_name ORDER BY id")
            .await[3..5],
        ["| 7  | p    |      |", "| 8  | q    |      |"]
    );
    // What the engine appends sits beside the other engine's file, and both are read.
    engine.ok("INSERT INTO by_name VALUES (9, 'r', NULL)").await;
    assert_eq!(
        engine.lines("SELECT sum(id) AS n FROM by_name").await[3],
        "| 24 |"
    );
    // A directory of hidden files alone has no columns to give.
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join(".part-0.orc.crc"), b"crc").unwrap();
    let refused = engine
        .error(&format!(
            "CREATE EXTERNAL TABLE nothing STORED AS ORC LOCATION '{}'",
            empty.path().display()
        ))
        .await
        .to_string();
    assert!(refused.contains("no ORC files"), "{refused}");
    // Hive's DDL of a Parquet table takes the same form; other input formats are refused,
    // named.
    engine
        .ok("CREATE TABLE pq (a INT) \
         ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe' \
         STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat' \
         OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat'")
        .await;
    let create = engine.lines("SHOW CREATE TABLE pq").await.join("\n");
    assert!(create.contains("STORED AS PARQUET"), "{create}");
    let refused = engine
        .error(
            "CREATE TABLE seq (a INT) STORED AS \
         INPUTFORMAT 'org.apache.hadoop.mapred.SequenceFileInputFormat' \
         OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat'",
        )
        .await
        .to_string();
    assert!(
        refused.contains("SequenceFileInputFormat") && refused.contains("ORC"),
        "{refused}"
    );
    // A file that is not ORC is named when read.
    std::fs::write(data.path().join("notes.txt"), b"not orc").unwrap();
    let broken = engine
        .error("SELECT count(*) FROM hive_t")
        .await
        .to_string();
    assert!(broken.contains("notes.txt"), "{broken}");
}
