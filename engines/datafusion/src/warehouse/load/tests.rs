//! LOAD DATA through an engine: copies, moves, names, OVERWRITE, partitions, formats.

use std::collections::BTreeSet;

use super::{free_name, wildcard_matches};

use crate::warehouse::tests::{data_files, Client};

#[test]
fn a_name_taken_gets_hives_copy_suffix_before_its_extension() {
    let taken: BTreeSet<String> = ["a.csv", "a_copy_1.csv", "b"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(free_name("c.csv", &taken), "c.csv");
    assert_eq!(free_name("a.csv", &taken), "a_copy_2.csv");
    assert_eq!(free_name("b", &taken), "b_copy_1");
}

#[test]
fn wildcards_match_as_hadoops_globs() {
    assert!(wildcard_matches("*.csv", "a.csv"));
    assert!(wildcard_matches("part-?", "part-1"));
    assert!(!wildcard_matches("*.csv", "a.csv.crc"));
    assert!(!wildcard_matches("*.CSV", "a.csv"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_copies_local_files_and_moves_the_warehouses() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine.ok("CREATE TABLE sales (id INT, item STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ','",
    )
    .await;
    let landing = tempfile::tempdir().unwrap();
    let file = landing.path().join("sales.csv");
    std::fs::write(&file, "1,apple\n2,pear\n").unwrap();
    let load = |overwrite: &str, local: &str, path: &std::path::Path| {
        format!(
            "LOAD DATA {local} INPATH '{}' {overwrite} INTO TABLE sales",
            path.display()
        )
    };
    engine.ok(&load("", "LOCAL", &file)).await;
    engine.ok(&load("", "LOCAL", &file)).await;
    // LOCAL copies: the file stays; the second takes Hive's _copy_1.
    assert!(file.is_file());
    let table = dir.path().join("sales");
    assert_eq!(data_files(&table), ["sales.csv", "sales_copy_1.csv"]);
    let count = "SELECT count(*) AS n FROM sales";
    assert_eq!(engine.lines(count).await[3], "| 4 |");

    // Without LOCAL, the warehouse's files are moved; a directory's files all go.
    let batch = tempfile::tempdir().unwrap();
    std::fs::write(batch.path().join("a.csv"), "3,fig\n").unwrap();
    std::fs::write(batch.path().join("b.txt"), "4,kiwi\n").unwrap();
    std::fs::write(batch.path().join("_SUCCESS"), "").unwrap();
    engine.ok(&load("", "", batch.path())).await;
    assert!(!batch.path().join("a.csv").exists());
    // A text table's files are read by their extension, which a loaded name gets.
    assert_eq!(
        data_files(&table),
        ["a.csv", "b.txt.csv", "sales.csv", "sales_copy_1.csv"]
    );
    assert_eq!(engine.lines(count).await[3], "| 6 |");

    // A wildcard picks a directory's files.
    let more = tempfile::tempdir().unwrap();
    std::fs::write(more.path().join("c.csv"), "5,lime\n").unwrap();
    std::fs::write(more.path().join("c.json"), "{}\n").unwrap();
    engine
        .ok(&format!(
            "LOAD DATA LOCAL INPATH '{}/*.csv' INTO TABLE sales",
            more.path().display()
        ))
        .await;
    assert_eq!(engine.lines(count).await[3], "| 7 |");
    let refused = engine
        .error(&format!(
            "LOAD DATA LOCAL INPATH '{}/*.tsv' INTO TABLE sales",
            more.path().display()
        ))
        .await
        .to_string();
    assert!(refused.contains("matches no file"), "{refused}");

    // OVERWRITE replaces every file, the one of the same name included.
    engine.ok(&load("OVERWRITE", "LOCAL", &file)).await;
    assert_eq!(data_files(&table), ["sales.csv"]);
    assert_eq!(engine.lines(count).await[3], "| 2 |");

    let missing = landing.path().join("nothing.csv");
    let refused = engine.error(&load("", "LOCAL", &missing)).await.to_string();
    assert!(
        refused.contains(&missing.display().to_string()) && refused.contains("does not exist"),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_into_a_partition_checks_the_tables_format() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Client::at(dir.path()).await;
    engine
        .ok("CREATE TABLE events (id INT) PARTITIONED BY (dt STRING) STORED AS PARQUET")
        .await;
    // A Parquet file, as another job would have left it, under a name without extension.
    engine
        .ok("CREATE TABLE made STORED AS PARQUET AS SELECT 7 AS id")
        .await;
    let made = dir.path().join("made");
    let landing = tempfile::tempdir().unwrap();
    let parquet = landing.path().join("000000_0");
    std::fs::copy(made.join(&data_files(&made)[0]), &parquet).unwrap();
    let text = landing.path().join("rows.csv");
    std::fs::write(&text, "1\n").unwrap();

    let refused = engine
        .error(&format!(
            "LOAD DATA LOCAL INPATH '{}' INTO TABLE events",
            parquet.display()
        ))
        .await
        .to_string();
    assert!(refused.contains("PARTITION (dt='...')"), "{refused}");
    let refused = engine
        .error(&format!(
            "LOAD DATA LOCAL INPATH '{}' INTO TABLE events PARTITION (dt='2024-01-01')",
            text.display()
        ))
        .await
        .to_string();
    assert!(refused.contains("not a PARQUET file"), "{refused}");
    assert!(!dir.path().join("events/dt=2024-01-01").exists());

    engine
        .ok(&format!(
            "LOAD DATA LOCAL INPATH '{}' INTO TABLE events PARTITION (dt='2024-01-01')",
            parquet.display()
        ))
        .await;
    assert_eq!(
        data_files(&dir.path().join("events")),
        ["dt=2024-01-01/000000_0.parquet"]
    );
    assert_eq!(
        engine.lines("SELECT id, dt FROM events").await[3],
        "| 7  | 2024-01-01 |"
    );
}
