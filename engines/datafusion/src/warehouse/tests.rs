//! The warehouse driven as a client drives it: statements through an engine, and a second
//! engine over the same directory standing for a restarted engine or another user's.

use std::path::Path as FsPath;
use std::sync::Arc;

use super::meta::TABLE_FILE;
use crate::config::EngineConfig;
use crate::engine::{Engine, EngineError};
use crate::session::Session;
use crate::test_util::{error, lines, open, run};

pub(crate) async fn engine_at(dir: &FsPath) -> Engine {
    let config = EngineConfig {
        tpch_scale: 0.01,
        warehouse: Some(dir.display().to_string()),
        ..EngineConfig::default()
    };
    Engine::start(&config).await.expect("the engine starts")
}

pub(crate) async fn ok(engine: &Engine, session: &crate::session::Session, sql: &str) {
    if let Err(e) = run(engine, session, sql).await {
        panic!("{sql} failed: {e}");
    }
}

/// Table `p (id INT, v STRING) PARTITIONED BY (dt STRING) STORED AS format` written as an
/// ETL script writes one: a static partition, a dynamic one, then the first overwritten, its
/// directories and rows checked at each step. The warehouse and its client go on to more.
pub(crate) async fn partitioned_table_in(format: &str) -> (tempfile::TempDir, Client) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine
        .ok(&format!(
            "CREATE TABLE p (id INT, v STRING) PARTITIONED BY (dt STRING) STORED AS {format}"
        ))
        .await;
    engine
        .ok("INSERT INTO p PARTITION (dt='2024-01-01') VALUES (1, 'a'), (2, 'b')")
        .await;
    engine
        .ok("INSERT INTO TABLE p PARTITION (dt) SELECT 3, 'c', '2024-01-02'")
        .await;
    assert_eq!(
        data_files(&dir.path().join("p"))
            .iter()
            .map(|f| f.split('/').next().unwrap().to_owned())
            .collect::<Vec<_>>(),
        ["dt=2024-01-01", "dt=2024-01-02"]
    );
    assert_eq!(
        engine.lines("SELECT dt, id, v FROM p ORDER BY id").await[3..6],
        [
            "| 2024-01-01 | 1  | a |",
            "| 2024-01-01 | 2  | b |",
            "| 2024-01-02 | 3  | c |",
        ]
    );
    engine
        .ok("INSERT OVERWRITE TABLE p PARTITION (dt='2024-01-01') SELECT 10, 'z'")
        .await;
    assert_eq!(
        engine.lines("SELECT id, dt FROM p ORDER BY id").await[3..5],
        ["| 3  | 2024-01-02 |", "| 10 | 2024-01-01 |"]
    );
    (dir, engine)
}

/// An engine over a warehouse directory with one session on it, as a client drives it.
pub(crate) struct Client {
    pub engine: Engine,
    pub session: Arc<Session>,
}

impl Client {
    /// A new engine over the warehouse `dir` (a restarted engine, or another user's, when
    /// one is already open there) and a session on it.
    pub async fn at(dir: &FsPath) -> Client {
        let engine = engine_at(dir).await;
        let session = open(&engine);
        Client { engine, session }
    }

    /// Runs `sql`, which must succeed.
    pub async fn ok(&self, sql: &str) {
        ok(&self.engine, &self.session, sql).await
    }

    /// The result of `sql` as the table beeline prints.
    pub async fn lines(&self, sql: &str) -> Vec<String> {
        lines(&self.engine, &self.session, sql).await
    }

    /// The error of `sql`, which must fail.
    pub async fn error(&self, sql: &str) -> EngineError {
        error(&self.engine, &self.session, sql).await
    }
}

/// The files under `dir`, relative, sorted; hidden ones left out.
pub(crate) fn data_files(dir: &FsPath) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    found.sort();
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_outlive_the_engine_and_other_engines_see_them() {
    let dir = tempfile::tempdir().unwrap();
    let first = Client::at(dir.path()).await;
    first
        .ok("CREATE TABLE orders (id INT, c STRING COMMENT 'the customer')")
        .await;
    first
        .ok("INSERT INTO orders VALUES (1, 'a'), (2, 'b')")
        .await;
    first.ok("INSERT INTO TABLE orders SELECT 3, 'c'").await;
    assert!(dir.path().join("orders").join(TABLE_FILE).is_file());
    assert_eq!(data_files(&dir.path().join("orders")).len(), 2);

    // Another engine over the same warehouse: a restart, or another user's engine.
    let second = Client::at(dir.path()).await;
    assert_eq!(
        second.lines("SELECT id, c FROM orders ORDER BY id").await,
        [
            "+----+---+",
            "| id | c |",
            "+----+---+",
            "| 1  | a |",
            "| 2  | b |",
            "| 3  | c |",
            "+----+---+",
        ]
    );
    let tables = second.lines("SHOW TABLES").await;
    assert!(tables.iter().any(|l| l.contains("orders")), "{tables:?}");
    let described = second.lines("DESCRIBE FORMATTED orders").await.join("\n");
    assert!(described.contains("the customer"), "{described}");
    assert!(described.contains("MANAGED"), "{described}");
    // And what the second writes, the first sees at its next statement.
    second.ok("INSERT INTO orders VALUES (4, 'd')").await;
    assert_eq!(
        first.lines("SELECT count(*) AS n FROM orders").await[3],
        "| 4 |"
    );
    second.ok("DROP TABLE orders").await;
    assert!(!dir.path().join("orders").exists());
    let gone = first.error("SELECT * FROM orders").await.to_string();
    assert!(gone.contains("orders"), "{gone}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn databases_are_directories() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine.ok("CREATE DATABASE sales COMMENT 'money'").await;
    assert!(dir.path().join("sales.db").is_dir());
    let described = engine.lines("DESCRIBE DATABASE sales").await.join("\n");
    assert!(
        described.contains("money") && described.contains("sales.db"),
        "{described}"
    );
    engine
        .ok("CREATE TABLE sales.t STORED AS PARQUET AS SELECT 1 AS x")
        .await;
    assert!(dir.path().join("sales.db/t").join(TABLE_FILE).is_file());
    let again = Client::at(dir.path()).await;
    let databases = again.lines("SHOW DATABASES").await.join("\n");
    assert!(databases.contains("sales"), "{databases}");
    assert!(databases.contains("tpch"), "{databases}");
    again.ok("USE sales").await;
    assert_eq!(again.lines("SELECT x FROM t").await[3], "| 1 |");
    let refused = again.error("DROP DATABASE sales").await.to_string();
    assert!(refused.contains("not empty"), "{refused}");
    again.ok("DROP DATABASE sales CASCADE").await;
    assert!(!dir.path().join("sales.db").exists());
    let databases = engine.lines("SHOW DATABASES").await.join("\n");
    assert!(!databases.contains("sales"), "{databases}");
    engine.ok("DROP DATABASE IF EXISTS sales").await;
    engine.ok("CREATE DATABASE IF NOT EXISTS tpch").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overwrite_truncate_and_partitions() {
    let (dir, engine) = partitioned_table_in("PARQUET").await;
    assert_eq!(
        engine.lines("SHOW PARTITIONS p").await[3..5],
        ["| dt=2024-01-01 |", "| dt=2024-01-02 |"]
    );
    assert_eq!(
        engine
            .lines("SELECT sum(id) AS n FROM p WHERE dt = '2024-01-01'")
            .await[3],
        "| 10 |"
    );
    engine
        .ok("TRUNCATE TABLE p PARTITION (dt='2024-01-02')")
        .await;
    engine.ok("MSCK REPAIR TABLE p").await;
    engine
        .ok("ALTER TABLE p ADD IF NOT EXISTS PARTITION (dt='2024-02-01')")
        .await;
    assert!(dir.path().join("p/dt=2024-02-01").is_dir());
    engine
        .ok("ALTER TABLE p DROP IF EXISTS PARTITION (dt='2024-02-01')")
        .await;
    assert!(!dir.path().join("p/dt=2024-02-01").exists());
    assert_eq!(
        engine.lines("SELECT count(*) AS n FROM p").await[3],
        "| 1 |"
    );
    let described = engine.lines("DESCRIBE p").await.join("\n");
    assert!(described.contains("# Partition Information"), "{described}");
    let create = engine.lines("SHOW CREATE TABLE p").await.join("\n");
    assert!(create.contains("PARTITIONED BY"), "{create}");
    assert!(create.contains("STORED AS PARQUET"), "{create}");

    engine
        .ok("CREATE TABLE u AS SELECT 1 AS a UNION ALL SELECT 2")
        .await;
    engine.ok("INSERT OVERWRITE TABLE u VALUES (7)").await;
    assert_eq!(engine.lines("SELECT a FROM u").await[3..4], ["| 7 |"]);
    engine.ok("TRUNCATE TABLE u").await;
    assert_eq!(
        engine.lines("SELECT count(*) AS n FROM u").await[3],
        "| 0 |"
    );
    assert!(data_files(&dir.path().join("u")).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_formats_external_tables_and_alter() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine.ok("CREATE TABLE t (a INT, b STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE",
    )
    .await;
    engine.ok("INSERT INTO t VALUES (1, 'x')").await;
    let file = data_files(&dir.path().join("t")).pop().unwrap();
    let text = std::fs::read_to_string(dir.path().join("t").join(file)).unwrap();
    assert_eq!(text, "1,x\n");
    engine.ok("ALTER TABLE t RENAME TO t2").await;
    for (delimiter, byte) in [("\\001", 1u8), ("\\t", b'\t'), ("|", b'|')] {
        let sql = format!(
            "CREATE TABLE d{byte} (a INT, b STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY '{delimiter}'"
        );
        engine.ok(&sql).await;
        engine
            .ok(&format!("INSERT INTO d{byte} VALUES (1, 'x')"))
            .await;
        let dir = dir.path().join(format!("d{byte}"));
        let file = data_files(&dir).pop().unwrap();
        let text = std::fs::read(dir.join(file)).unwrap();
        assert_eq!(text, [b'1', byte, b'x', b'\n'], "{sql}");
    }
    assert!(!dir.path().join("t").exists());
    assert_eq!(engine.lines("SELECT b FROM t2").await[3], "| x |");

    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("a.csv"), "k,n\nx,1\ny,2\n").unwrap();
    let sql = format!(
        "CREATE EXTERNAL TABLE ext (k STRING, n INT) STORED AS CSV LOCATION '{}' TBLPROPERTIES ('skip.header.line.count'='1') ",
        data.path().display()
    );
    engine.ok(&sql).await;
    // Hive's skip.header.line.count: the header line is not a row.
    assert_eq!(
        engine.lines("SELECT sum(n) AS n FROM ext").await[3],
        "| 3 |"
    );
    // DataFusion's own syntax keeps working, and persists.
    let sql = format!(
        "CREATE EXTERNAL TABLE ext2 STORED AS CSV LOCATION '{}' OPTIONS ('has_header' 'true')",
        data.path().display()
    );
    engine.ok(&sql).await;
    let other = Client::at(dir.path()).await;
    assert_eq!(
        other.lines("SELECT sum(n) AS n FROM ext2").await[3],
        "| 3 |"
    );
    other.ok("DROP TABLE ext2").await;
    assert!(
        data.path().join("a.csv").is_file(),
        "an external table's files stay"
    );

    engine.ok("CREATE TABLE w (a INT)").await;
    engine.ok("INSERT INTO w VALUES (1)").await;
    engine
        .ok("ALTER TABLE w ADD COLUMNS (b STRING COMMENT 'new')")
        .await;
    engine.ok("INSERT INTO w VALUES (2, 'two')").await;
    assert_eq!(
        engine.lines("SELECT a, b FROM w ORDER BY a").await[3..5],
        ["| 1 |     |", "| 2 | two |"]
    );
    let refused = engine
        .error("CREATE TABLE o (a INT) STORED AS AVRO")
        .await
        .to_string();
    assert!(refused.contains("AVRO"), "{refused}");
    let refused = engine.error("CREATE TABLE w (a INT)").await.to_string();
    assert!(refused.contains("already exists"), "{refused}");
    engine.ok("CREATE TABLE IF NOT EXISTS w (a INT)").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_persist_and_demo_data_stays() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine
        .ok("CREATE TABLE n AS SELECT n_name FROM tpch.nation")
        .await;
    engine
        .ok("CREATE VIEW v AS SELECT count(*) AS c FROM n")
        .await;
    let other = Client::at(dir.path()).await;
    assert_eq!(other.lines("SELECT c FROM v").await[3], "| 25 |");
    engine.ok("CREATE OR REPLACE VIEW v AS SELECT 1 AS c").await;
    assert_eq!(other.lines("SELECT c FROM v").await[3], "| 1 |");
    let views = other.lines("SHOW VIEWS").await.join("\n");
    assert!(views.contains('v'), "{views}");
    other.ok("DROP VIEW v").await;
    // A temporary view is its session's: no other session sees it, nor another engine;
    // it shadows a warehouse table of its name in its session alone.
    engine.ok("CREATE TEMPORARY VIEW tv AS SELECT 2 AS c").await;
    let s2 = open(&engine.engine);
    assert_eq!(engine.lines("SELECT c FROM tv").await[3], "| 2 |");
    assert!(error(&engine.engine, &s2, "SELECT c FROM tv")
        .await
        .to_string()
        .contains("tv"));
    assert!(other
        .error("SELECT c FROM tv")
        .await
        .to_string()
        .contains("tv"));
    engine
        .ok("CREATE OR REPLACE TEMPORARY VIEW n AS SELECT 'x' AS n_name")
        .await;
    assert_eq!(
        engine.lines("SELECT count(*) AS c FROM n").await[3],
        "| 1 |"
    );
    assert_eq!(
        lines(&engine.engine, &s2, "SELECT count(*) AS c FROM n").await[3],
        "| 25 |"
    );
    // It cannot be written; the table it shadows is, by its full name.
    assert!(engine
        .error("INSERT INTO n SELECT 'y'")
        .await
        .to_string()
        .contains("temporary view"));
    assert!(engine
        .error("TRUNCATE TABLE n")
        .await
        .to_string()
        .contains("temporary view"));
    engine.ok("INSERT INTO default.n SELECT 'y'").await;
    assert_eq!(
        lines(&engine.engine, &s2, "SELECT count(*) AS c FROM n").await[3],
        "| 26 |"
    );
    engine.ok("DROP VIEW n").await;
    assert_eq!(
        engine.lines("SELECT count(*) AS c FROM n").await[3],
        "| 26 |"
    );
    // A global temporary view is the engine's, in Spark's global_temp.
    engine
        .ok("CREATE GLOBAL TEMP VIEW g AS SELECT 7 AS c")
        .await;
    assert_eq!(
        lines(&engine.engine, &s2, "SELECT c FROM global_temp.g").await[3],
        "| 7 |"
    );
    assert!(other
        .error("SELECT c FROM global_temp.g")
        .await
        .to_string()
        .contains('g'));
    assert_eq!(
        engine.lines("SELECT count(*) AS c FROM tpch.region").await[3],
        "| 5 |"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hive_types_round_trip_through_the_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine
        .ok(
            "CREATE TABLE typed (a TINYINT, b SMALLINT, c INT, d BIGINT, e FLOAT, f DOUBLE, \
         g DECIMAL(10,2), h STRING, i VARCHAR(10), j BOOLEAN, k DATE, l TIMESTAMP, \
         m BINARY, n ARRAY<STRING>, o STRUCT<x: INT, y: STRING>, p MAP<STRING, INT>) \
         COMMENT 'all of them'",
        )
        .await;
    engine.ok("INSERT INTO typed SELECT 1, 2, 3, 4, 1.5, 2.5, 3.25, 's', 'v', true, DATE '2024-01-02', \
         TIMESTAMP '2024-01-02 03:04:05', X'AB', make_array('p', 'q'), named_struct('x', 1, 'y', 'z'), \
         map('k', 7)",
    )
    .await;
    let other = Client::at(dir.path()).await;
    let described = other.lines("DESCRIBE typed").await.join("\n");
    for hive in [
        "tinyint",
        "decimal(10,2)",
        "array<string>",
        "timestamp",
        "struct<",
        "map<string,int>",
    ] {
        assert!(
            described.to_lowercase().contains(hive),
            "{hive}: {described}"
        );
    }
    let row = other
        .lines("SELECT g, n, k, p['k'] FROM typed")
        .await
        .join("\n");
    assert!(row.contains("3.25") && row.contains("2024-01-02"), "{row}");
    // A MAP column, which DataFusion's planner has no SQL type for, reads back its entries.
    assert_eq!(
        other.lines("SELECT p['k'] AS v FROM typed").await[3],
        "| 7 |"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statement_variants() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine
        .ok("CREATE TABLE c (a INT, b STRING) STORED AS CSV")
        .await;
    engine.ok("INSERT INTO c (b, a) VALUES ('one', 1)").await;
    engine.ok("INSERT INTO c (a) VALUES (2)").await;
    assert_eq!(
        engine.lines("SELECT a, b FROM c ORDER BY a").await[3..5],
        ["| 1 | one |", "| 2 |     |"]
    );
    engine
        .ok("CREATE TABLE IF NOT EXISTS j USING json AS SELECT * FROM c")
        .await;
    engine
        .ok("INSERT OVERWRITE TABLE j SELECT a + 10, b FROM c")
        .await;
    assert_eq!(engine.lines("SELECT sum(a) AS n FROM j").await[3], "| 23 |");
    assert!(data_files(&dir.path().join("j"))
        .iter()
        .all(|f| f.ends_with(".json")));
    engine.ok("CREATE TABLE pc PARTITIONED BY (r) AS SELECT r_name AS name, r_regionkey AS r FROM tpch.region",
    )
    .await;
    assert_eq!(data_files(&dir.path().join("pc")).len(), 5);
    assert_eq!(
        engine.lines("SELECT name FROM pc WHERE r = 0").await[3],
        "| AFRICA |"
    );
    let wrong = engine
        .error("INSERT INTO c VALUES (1, 'a', 'b')")
        .await
        .to_string();
    assert!(
        wrong.contains("3 columns") && wrong.contains("takes 2"),
        "{wrong}"
    );
    let wrong = engine
        .error("INSERT INTO c PARTITION (x='1') VALUES (1, 'a')")
        .await
        .to_string();
    assert!(wrong.contains("not partitioned"), "{wrong}");
    let wrong = engine
        .error("CREATE TABLE q (a INT) PARTITIONED BY (a STRING)")
        .await
        .to_string();
    assert!(
        wrong.contains("both a column and a partition column"),
        "{wrong}"
    );
    engine.ok("CREATE TABLE pc2 LIKE pc").await;
    engine
        .ok("INSERT INTO pc2 PARTITION (r=7) VALUES ('x')")
        .await;
    assert_eq!(
        engine.lines("SELECT name, r FROM pc2").await[3],
        "| x    | 7 |"
    );
    engine
        .ok("CREATE TABLE n2 LIKE tpch.nation STORED AS JSON")
        .await;
    let create = engine.lines("SHOW CREATE TABLE n2").await.join("\n");
    assert!(
        create.contains("n_name") && create.contains("STORED AS JSON"),
        "{create}"
    );
    // A failed CTAS leaves nothing behind.
    assert!(engine
        .error("CREATE TABLE bad AS SELECT CAST(x AS INT) FROM c")
        .await
        .to_string()
        .contains('x'));
    assert!(!dir.path().join("bad").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrent_reader_never_reads_a_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Client::at(dir.path()).await;
    writer
        .ok("CREATE TABLE growing (id BIGINT, pad STRING)")
        .await;
    let reader = Client::at(dir.path()).await;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop = std::sync::Arc::clone(&done);
    let reads = tokio::spawn(async move {
        let mut last = 0i64;
        let mut reads = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let line = reader.lines("SELECT count(*) AS n FROM growing").await[3].clone();
            let count: i64 = line.trim_matches(|c| c == '|' || c == ' ').parse().unwrap();
            assert!(count >= last && count % 1000 == 0, "{count} after {last}");
            last = count;
            reads += 1;
        }
        reads
    });
    for _ in 0..10 {
        writer
            .ok("INSERT INTO growing SELECT value, repeat('x', 100) FROM generate_series(1, 1000)")
            .await;
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reads.await.unwrap() > 0);
    assert_eq!(
        writer.lines("SELECT count(*) AS n FROM growing").await[3],
        "| 10000 |"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_insert_reports_the_rows_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine.ok("CREATE TABLE counted (a INT)").await;
    let op = engine
        .engine
        .execute(
            &engine.session.id,
            "INSERT INTO counted VALUES (1), (2), (3)",
            false,
            None,
        )
        .await
        .unwrap();
    assert_eq!(op.status().modified_rows, Some(3));
    assert!(!op.has_result_set());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generators_that_take_two_plans_fill_warehouse_tables() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    // inline without an alias list is named by its structs' fields, explode of a map gives
    // its entries: each is planned twice, in a CTAS and an INSERT too.
    engine
        .ok("CREATE TABLE items AS SELECT inline(array(named_struct('sku', 'a', 'qty', 2)))")
        .await;
    engine
        .ok("INSERT INTO items SELECT inline(array(named_struct('s', 'b', 'q', 3)))")
        .await;
    engine.ok("CREATE TABLE pairs (k STRING, v INT)").await;
    engine
        .ok("INSERT INTO pairs SELECT explode(map('x', 1, 'y', 2))")
        .await;
    let items = engine
        .lines("SELECT sku, qty FROM items ORDER BY sku")
        .await;
    assert_eq!(items[1].replace(' ', ""), "|sku|qty|");
    assert_eq!(items[3].replace(' ', ""), "|a|2|");
    assert_eq!(items[4].replace(' ', ""), "|b|3|");
    let pairs = engine.lines("SELECT k, v FROM pairs ORDER BY k").await;
    assert_eq!(pairs[3].replace(' ', ""), "|x|1|");
    assert_eq!(pairs[4].replace(' ', ""), "|y|2|");
}
