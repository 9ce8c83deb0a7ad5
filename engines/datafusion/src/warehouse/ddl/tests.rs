use super::*;

#[test]
fn delimiters_take_hive_escapes() {
    assert_eq!(delimiter(",").unwrap(), ',');
    assert_eq!(delimiter("\\001").unwrap(), '\u{1}');
    assert_eq!(delimiter("\\t").unwrap(), '\t');
    assert_eq!(delimiter("\\u0002").unwrap(), '\u{2}');
    assert!(delimiter("ab").is_err());
}

#[test]
fn partition_lists_with_and_without_types() {
    assert_eq!(names_only("dt, hr").unwrap(), ["dt", "hr"]);
    assert!(names_only("dt STRING").is_none());
}

#[test]
fn options_pairs() {
    assert_eq!(
        options("'has_header' 'true', format.delimiter = '|'"),
        [
            ("has_header".to_owned(), "true".to_owned()),
            ("format.delimiter".to_owned(), "|".to_owned())
        ]
    );
}

#[tokio::test]
async fn statements_without_a_warehouse_are_left_alone() {
    let context = SessionContext::new();
    assert!(
        recognise(&context, "CREATE TABLE t (a INT) STORED AS PARQUET")
            .await
            .unwrap()
            .is_none()
    );
    assert!(recognise(&context, "SELECT 1").await.unwrap().is_none());
}

#[test]
fn temporary_views_become_datafusion_views() {
    assert_eq!(
        temporary_view("create or replace temporary view v as select 1"),
        Some(("CREATE OR REPLACE VIEW v as select 1".to_owned(), false))
    );
    assert_eq!(
        temporary_view("CREATE GLOBAL TEMP VIEW v AS SELECT 1"),
        Some(("CREATE VIEW global_temp.v AS SELECT 1".to_owned(), true))
    );
    assert!(temporary_view("CREATE VIEW v AS SELECT 1").is_none());
    assert!(temporary_view("SELECT 1").is_none());
}
