use std::fs;

use crate::test_util::{engine, error, lines, open};

/// A CSV table partitioned by year and month, with a directory for a NULL month.
fn partitioned_files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for partition in [
        "year=2024/month=2",
        "year=2023/month=12",
        "year=2024/month=1",
        "year=2024/month=__HIVE_DEFAULT_PARTITION__",
    ] {
        let path = dir.path().join(partition);
        fs::create_dir_all(&path).unwrap();
        fs::write(path.join("part-0.csv"), "a\n1\n2\n").unwrap();
    }
    dir
}

#[tokio::test]
async fn show_partitions_lists_a_partitioned_tables_directories_in_order() {
    let engine = engine().await;
    let session = open(&engine);
    let files = partitioned_files();
    let create = format!(
        "CREATE EXTERNAL TABLE sales (a INT, year VARCHAR, month VARCHAR) STORED AS CSV \
         PARTITIONED BY (year, month) LOCATION '{}/' OPTIONS ('format.has_header' 'true')",
        files.path().display()
    );
    lines(&engine, &session, &create).await;
    let partitions = lines(&engine, &session, "SHOW PARTITIONS sales").await;
    assert_eq!(
        partitions[1],
        "| partition                                  |"
    );
    let rows: Vec<&str> = partitions[3..partitions.len() - 1]
        .iter()
        .map(|row| row.trim_matches(|c| c == '|' || c == ' '))
        .collect();
    assert_eq!(
        rows,
        [
            "year=2023/month=12",
            "year=2024/month=1",
            "year=2024/month=2",
            "year=2024/month=__HIVE_DEFAULT_PARTITION__",
        ]
    );
    let filtered = lines(
        &engine,
        &session,
        "SHOW PARTITIONS default.sales PARTITION (year=2024, month='2')",
    )
    .await;
    assert_eq!(filtered.len(), 5, "{filtered:?}");
    assert!(filtered[3].contains("year=2024/month=2 "), "{filtered:?}");

    let not_a_column = error(&engine, &session, "SHOW PARTITIONS sales PARTITION (day=1)").await;
    assert!(
        not_a_column
            .to_string()
            .contains("'day' is not a partition column of default.sales; its partition columns are year, month"),
        "{not_a_column}"
    );
}

#[tokio::test]
async fn show_partitions_refuses_unpartitioned_and_missing_tables() {
    let engine = engine().await;
    let session = open(&engine);
    let unpartitioned = error(&engine, &session, "SHOW PARTITIONS tpch.nation").await;
    assert!(
        unpartitioned
            .to_string()
            .contains("table tpch.nation is not partitioned"),
        "{unpartitioned}"
    );
    let missing = error(&engine, &session, "SHOW PARTITIONS tpch.nope").await;
    assert!(missing.to_string().contains("No table named"), "{missing}");
}

#[tokio::test]
async fn show_tblproperties_answers_in_hives_columns() {
    let engine = engine().await;
    let session = open(&engine);
    let all = lines(&engine, &session, "SHOW TBLPROPERTIES tpch.nation").await;
    // Header only: the engine's tables have no properties.
    assert_eq!(all.len(), 4, "{all:?}");
    assert!(
        all[1].contains("prpt_name") && all[1].contains("prpt_value"),
        "{all:?}"
    );
    let one = lines(
        &engine,
        &session,
        "SHOW TBLPROPERTIES tpch.nation ('owner')",
    )
    .await;
    assert!(
        one[3].contains("| owner     | Table tpch.nation does not have property: owner |"),
        "{one:?}"
    );
    let missing = error(&engine, &session, "SHOW TBLPROPERTIES nope").await;
    assert!(missing.to_string().contains("No table named"), "{missing}");
}
