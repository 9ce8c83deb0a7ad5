use super::*;

fn record(id: u128, user: &str, created: u64, state: BatchState) -> BatchRecord {
    BatchRecord {
        id: Uuid::from_u128(id),
        user: user.to_owned(),
        real_user: user.to_owned(),
        batch_type: BatchType::PySpark,
        name: Some(format!("job-{id}")),
        cluster: "default".to_owned(),
        state,
        create_time: created,
        app_start_time: 0,
        end_time: if state.is_terminal() { created + 10 } else { 0 },
        app_id: None,
        app_url: None,
        app_state: None,
        app_diagnostic: None,
        kyuubi_instance: "127.0.0.1:10099".to_owned(),
        pid: None,
        pid_start: None,
    }
}

#[test]
fn requests_parse_as_kyuubi_sends_them_and_bad_ones_say_what_is_wrong() {
    let request = BatchRequest::from_json(
        br#"{"batchType":"pyspark","resource":"/jobs/a.py","name":"a","conf":{"spark.x":"1"},"args":["1"],"unknownField":true}"#,
    )
    .unwrap();
    assert_eq!(
        request.validate().unwrap(),
        (BatchType::PySpark, "/jobs/a.py".to_owned())
    );
    assert_eq!(request.args.as_deref(), Some(&["1".to_owned()][..]));
    let error = BatchRequest::from_json(b"{\"batchType\": ").unwrap_err();
    assert!(
        error.contains("not a valid BatchRequest") && error.contains("line 1"),
        "{error}"
    );
    let error = BatchRequest::from_json(br#"{"conf": {"a": 1}}"#).unwrap_err();
    assert!(error.contains("invalid type"), "{error}");

    let missing = |json: &str| {
        BatchRequest::from_json(json.as_bytes())
            .unwrap()
            .validate()
            .unwrap_err()
            .to_string()
    };
    assert!(missing(r#"{"resource":"/a.py"}"#).contains("`batchType` is required"));
    assert!(missing(r#"{"batchType":"FLINK","resource":"/a.py"}"#).contains("SPARK or PYSPARK"));
    assert!(missing(r#"{"batchType":"PYSPARK"}"#).contains("`resource` is required"));
    assert!(
        missing(r#"{"batchType":"SPARK","resource":"/a.jar"}"#).contains("`className` is required")
    );
}

#[test]
fn views_have_kyuubis_field_names_and_states() {
    let view = BatchView::from(&record(1, "alice", 5, BatchState::Pending));
    let json: serde_json::Value = serde_json::to_value(&view).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for key in [
        "id",
        "user",
        "batchType",
        "name",
        "appStartTime",
        "appId",
        "appUrl",
        "appState",
        "appDiagnostic",
        "kyuubiInstance",
        "state",
        "createTime",
        "endTime",
        "batchInfo",
    ] {
        assert!(keys.contains(&key), "{key} missing from {json}");
    }
    assert_eq!(json["state"], "PENDING");
    assert_eq!(json["batchType"], "PYSPARK");
    assert_eq!(json["id"], "00000000-0000-0000-0000-000000000001");
    assert_eq!(BatchState::parse("canceled").unwrap(), BatchState::Canceled);
    assert!(BatchState::parse("DONE")
        .unwrap_err()
        .contains("PENDING, RUNNING, FINISHED, ERROR, CANCELED"));
    let rows = serde_json::to_value(LogRows {
        log_row_set: vec!["a".into()],
        row_count: 1,
    })
    .unwrap();
    assert_eq!(rows, serde_json::json!({"logRowSet": ["a"], "rowCount": 1}));
    let closed = serde_json::to_value(CloseBatch {
        success: true,
        msg: "m".into(),
    })
    .unwrap();
    assert_eq!(closed, serde_json::json!({"success": true, "msg": "m"}));
    // Records round-trip through their file.
    let stored = record(2, "bob", 7, BatchState::Error);
    let text = serde_json::to_string(&stored).unwrap();
    assert_eq!(serde_json::from_str::<BatchRecord>(&text).unwrap(), stored);
}

#[test]
fn filters_and_pages_select_like_kyuubis_query_parameters() {
    let records = vec![
        record(3, "alice", 30, BatchState::Finished),
        record(1, "alice", 10, BatchState::Running),
        record(2, "bob", 20, BatchState::Error),
    ];
    let ids = |filter: BatchFilter| -> Vec<u128> {
        filter
            .page(records.clone())
            .iter()
            .map(|r| r.id.as_u128())
            .collect()
    };
    let all = BatchFilter {
        size: 100,
        ..Default::default()
    };
    assert_eq!(ids(all.clone()), [1, 2, 3]);
    assert_eq!(
        ids(BatchFilter {
            desc: true,
            ..all.clone()
        }),
        [3, 2, 1]
    );
    assert_eq!(
        ids(BatchFilter {
            from: 1,
            size: 1,
            ..all.clone()
        }),
        [2]
    );
    assert_eq!(
        ids(BatchFilter {
            user: Some("alice".into()),
            ..all.clone()
        }),
        [1, 3]
    );
    assert_eq!(
        ids(BatchFilter {
            state: Some(BatchState::Error),
            ..all.clone()
        }),
        [2]
    );
    assert_eq!(
        ids(BatchFilter {
            name: Some("job-3".into()),
            ..all.clone()
        }),
        [3]
    );
    assert_eq!(
        ids(BatchFilter {
            create_time: 20,
            ..all.clone()
        }),
        [2, 3]
    );
    // endTime keeps the batches that ended by then; running ones have not ended.
    assert_eq!(
        ids(BatchFilter {
            end_time: 35,
            ..all.clone()
        }),
        [2]
    );
    assert_eq!(
        ids(BatchFilter {
            batch_type: Some(BatchType::Spark),
            ..all
        }),
        Vec::<u128>::new()
    );
}

#[test]
fn application_ids_and_urls_are_found_in_spark_output() {
    assert_eq!(
        find_app_id("appId local-1764553060123 done").as_deref(),
        Some("local-1764553060123")
    );
    assert_eq!(
        find_app_id("INFO Client: Submitted application application_1700000000000_0042").as_deref(),
        Some("application_1700000000000_0042")
    );
    assert_eq!(
        find_app_id("Connected to app-20261201013740-0003").as_deref(),
        Some("app-20261201013740-0003")
    );
    assert_eq!(
        find_app_id("spark-app-selector spark-0123456789abcdef0123456789abcdef").as_deref(),
        Some("spark-0123456789abcdef0123456789abcdef")
    );
    assert_eq!(find_app_id("local-12 and spark-local-dir"), None);
    assert_eq!(
        find_app_url("\t tracking URL: http://rm:8088/proxy/application_1_2/").as_deref(),
        Some("http://rm:8088/proxy/application_1_2/")
    );
    assert_eq!(
        find_app_url("INFO SparkUI: Bound SparkUI to 0.0.0.0, and started at http://h:4040")
            .as_deref(),
        Some("http://h:4040")
    );
    assert_eq!(
        find_app_url("Successfully started service 'SparkUI' on port 4040."),
        None
    );
}

#[test]
fn diagnostics_keep_the_error_and_drop_sparks_chatter() {
    let log = "\
kumiho: starting /spark/bin/spark-submit --master local[1] x.py
WARNING: Using incubator modules: jdk.incubator.vector
26/12/01 01:37:40 INFO SparkContext: Running Spark version 4.3.0
26/12/01 01:37:40 WARN NativeCodeLoader: Unable to load native-hadoop library
Traceback (most recent call last):
  File \"/tmp/fail.py\", line 3, in <module>
    raise ValueError(\"kumiho-boom\")
ValueError: kumiho-boom
26/12/01 01:37:46 INFO ShutdownHookManager: Shutdown hook called
Exception in thread \"main\" java.lang.ClassNotFoundException: org.example.Nope
\tat java.base/java.net.URLClassLoader.findClass(URLClassLoader.java:445)
26/12/01 01:37:47 ERROR Utils: Uncaught exception
";
    let lines = meaningful_lines(log, 10);
    assert_eq!(
        lines,
        [
            "Traceback (most recent call last):",
            "  File \"/tmp/fail.py\", line 3, in <module>",
            "    raise ValueError(\"kumiho-boom\")",
            "ValueError: kumiho-boom",
            "Exception in thread \"main\" java.lang.ClassNotFoundException: org.example.Nope",
            "26/12/01 01:37:47 ERROR Utils: Uncaught exception",
        ]
    );
    assert_eq!(meaningful_lines(log, 2).len(), 2);
}

#[test]
fn log_lines_are_read_by_page_and_a_partial_last_line_waits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.log");
    assert_eq!(read_lines(&path, 0, 10).unwrap(), Vec::<String>::new());
    std::fs::write(&path, "one\ntwo\r\nthree\nfour").unwrap();
    assert_eq!(read_lines(&path, 0, 10).unwrap(), ["one", "two", "three"]);
    assert_eq!(read_lines(&path, 1, 1).unwrap(), ["two"]);
    assert_eq!(read_lines(&path, 5, 10).unwrap(), Vec::<String>::new());
    assert!(process_start(std::process::id()).is_some());
    assert!(same_process(
        std::process::id(),
        process_start(std::process::id())
    ));
    assert!(!same_process(std::process::id(), Some(1)));
}
