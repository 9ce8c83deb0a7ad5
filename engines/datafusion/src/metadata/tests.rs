//! Metadata results over a real `SessionContext`: the columns JDBC clients expect, and
//! the JDBC pattern rules (`%`, `_`, `\`, case).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, Field, Int16Type, Int32Type, Schema, SchemaRef};
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::MemorySchemaProvider;
use datafusion::datasource::MemTable;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::physical_plan::SendableRecordBatchStream;

use super::*;

/// A context with the default catalog's `public` schema plus `default`, `tpch`, `a_b` and
/// `axb`, and a few tables and a view.
async fn context() -> SessionContext {
    let ctx = SessionContext::new();
    let catalog = ctx.catalog("datafusion").unwrap();
    for schema in ["default", "tpch", "a_b", "axb"] {
        catalog
            .register_schema(schema, Arc::new(MemorySchemaProvider::new()))
            .unwrap();
    }
    let orders = Arc::new(Schema::new(vec![
        Field::new("o_orderkey", DataType::Int32, false),
        Field::new("o_comment", DataType::Utf8, true),
        Field::new("o_totalprice", DataType::Decimal128(10, 2), true),
    ]));
    let nation = Arc::new(Schema::new(vec![Field::new(
        "n_name",
        DataType::Utf8,
        true,
    )]));
    let tpch = catalog.schema("tpch").unwrap();
    for (name, schema) in [("orders", &orders), ("nation", &nation)] {
        let table = MemTable::try_new(Arc::clone(schema), vec![vec![]]).unwrap();
        tpch.register_table(name.to_owned(), Arc::new(table))
            .unwrap();
    }
    let table = MemTable::try_new(Arc::clone(&nation), vec![vec![]]).unwrap();
    catalog
        .schema("default")
        .unwrap()
        .register_table("t".to_owned(), Arc::new(table))
        .unwrap();
    ctx.sql("CREATE VIEW \"default\".v AS SELECT n_name FROM tpch.nation")
        .await
        .unwrap();
    ctx
}

fn names(batch: &RecordBatch) -> Vec<&str> {
    batch
        .schema_ref()
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect()
}

fn texts(batch: &RecordBatch, column: &str) -> Vec<Option<String>> {
    let array = batch.column_by_name(column).unwrap().as_string::<i32>();
    array.iter().map(|v| v.map(str::to_owned)).collect()
}

fn ints(batch: &RecordBatch, column: &str) -> Vec<Option<i32>> {
    let array = batch.column_by_name(column).unwrap();
    array.as_primitive::<Int32Type>().iter().collect()
}

fn some(values: &[&str]) -> Vec<Option<String>> {
    values.iter().map(|v| Some((*v).to_owned())).collect()
}

#[tokio::test]
async fn catalogs_lists_each_catalog() {
    let ctx = context().await;
    let batch = catalogs(&ctx).unwrap();
    assert_eq!(names(&batch), ["TABLE_CAT"]);
    assert_eq!(texts(&batch, "TABLE_CAT"), some(&["datafusion"]));
}

#[tokio::test]
async fn schemas_follow_jdbc_patterns() {
    let ctx = context().await;
    let all = schemas(&ctx, None, None).unwrap();
    assert_eq!(names(&all), ["TABLE_SCHEM", "TABLE_CATALOG"]);
    assert_eq!(
        texts(&all, "TABLE_SCHEM"),
        some(&["a_b", "axb", "default", "public", "tpch"])
    );
    assert_eq!(texts(&all, "TABLE_CATALOG"), some(&["datafusion"; 5]));

    let schema_names =
        |catalog, pattern| texts(&schemas(&ctx, catalog, pattern).unwrap(), "TABLE_SCHEM");
    assert_eq!(schema_names(None, Some("")), schema_names(None, None));
    assert_eq!(schema_names(None, Some("%")), schema_names(None, None));
    assert_eq!(schema_names(None, Some("tp%")), some(&["tpch"]));
    assert_eq!(schema_names(None, Some("_efault")), some(&["default"]));
    // `_` matches any one character; `\_` only an underscore.
    assert_eq!(schema_names(None, Some("a_b")), some(&["a_b", "axb"]));
    assert_eq!(schema_names(None, Some(r"a\_b")), some(&["a_b"]));
    // Names are matched without regard to case, as Hive's metastore matches them.
    assert_eq!(schema_names(None, Some("TPCH")), some(&["tpch"]));
    assert_eq!(
        schema_names(Some("datafusion"), Some("tpch")),
        some(&["tpch"])
    );
    assert_eq!(
        schema_names(Some("other"), None),
        Vec::<Option<String>>::new()
    );
}

#[tokio::test]
async fn tables_lists_every_schema_with_jdbc_columns() {
    let ctx = context().await;
    let batch = tables(&ctx, None, None, None, None).unwrap();
    assert_eq!(
        names(&batch),
        [
            "TABLE_CAT",
            "TABLE_SCHEM",
            "TABLE_NAME",
            "TABLE_TYPE",
            "REMARKS",
            "TYPE_CAT",
            "TYPE_SCHEM",
            "TYPE_NAME",
            "SELF_REFERENCING_COL_NAME",
            "REF_GENERATION",
        ]
    );
    // Ordered by type, then catalog, schema and name.
    assert_eq!(
        texts(&batch, "TABLE_NAME"),
        some(&["t", "nation", "orders", "v"])
    );
    assert_eq!(
        texts(&batch, "TABLE_SCHEM"),
        some(&["default", "tpch", "tpch", "default"])
    );
    assert_eq!(
        texts(&batch, "TABLE_TYPE"),
        some(&["TABLE", "TABLE", "TABLE", "VIEW"])
    );
    assert_eq!(texts(&batch, "TABLE_CAT"), some(&["datafusion"; 4]));
    assert_eq!(texts(&batch, "REMARKS"), vec![None; 4]);

    let table_names = |schema, table, types: Option<&[String]>| {
        texts(
            &tables(&ctx, None, schema, table, types).unwrap(),
            "TABLE_NAME",
        )
    };
    assert_eq!(
        table_names(Some("tpch"), Some("%o%"), None),
        some(&["nation", "orders"])
    );
    assert_eq!(table_names(None, Some("ORD_RS"), None), some(&["orders"]));
    assert_eq!(
        table_names(None, None, Some(&["view".to_owned()])),
        some(&["v"])
    );
    assert_eq!(
        table_names(None, None, Some(&[])),
        table_names(None, None, None)
    );
}

#[tokio::test]
async fn patterns_take_hive_metastore_wildcards_and_alternatives() {
    // Hue and other Hive clients send the metastore's `*` and `|`, as Hive accepts them.
    let ctx = context().await;
    let table_names = |schema, table| {
        texts(
            &tables(&ctx, None, schema, table, None).unwrap(),
            "TABLE_NAME",
        )
    };
    assert_eq!(
        table_names(Some("*"), Some("*")),
        table_names(None, None),
        "`*` alone is every name"
    );
    assert_eq!(table_names(Some("tpch"), Some("n*")), some(&["nation"]));
    assert_eq!(
        table_names(Some("tpch"), Some("ORD*|nat%")),
        some(&["nation", "orders"])
    );
    assert_eq!(
        table_names(Some("default|tpch"), Some("t|orders")),
        some(&["t", "orders"])
    );
    // An escaped `*` or `|` is the character itself, which no name here holds.
    assert_eq!(
        table_names(None, Some(r"n\*")),
        Vec::<Option<String>>::new()
    );
    assert_eq!(
        table_names(None, Some(r"t\|v")),
        Vec::<Option<String>>::new()
    );
    // impyla and Impala's shell send regular-expression wildcards: `.` is any one character.
    assert_eq!(
        table_names(Some(".*"), Some(".*")),
        table_names(None, None),
        "`.*` is every name"
    );
    assert_eq!(table_names(Some("tpch"), Some("n.tion")), some(&["nation"]));
    assert_eq!(
        table_names(None, Some(r"n\.tion")),
        Vec::<Option<String>>::new()
    );
    let schema_names = |pattern| texts(&schemas(&ctx, None, pattern).unwrap(), "TABLE_SCHEM");
    assert_eq!(schema_names(Some("a*")), some(&["a_b", "axb"]));
    assert_eq!(schema_names(Some("a.b")), some(&["a_b", "axb"]));
    let column_names = |pattern| {
        texts(
            &columns(&ctx, None, Some("tpch"), Some("orders"), pattern).unwrap(),
            "COLUMN_NAME",
        )
    };
    assert_eq!(
        column_names(Some("o_order*|O_COMMENT")),
        some(&["o_orderkey", "o_comment"])
    );
    let function_names = |pattern| {
        texts(
            &functions(&ctx, None, None, pattern).unwrap(),
            "FUNCTION_NAME",
        )
    };
    assert_eq!(function_names("upp*|lower"), some(&["lower", "upper"]));
    assert_eq!(function_names("*"), function_names("%"));
}

#[tokio::test]
async fn primary_keys_are_datafusions_constraints() {
    let ctx = context().await;
    ctx.sql("CREATE TABLE \"default\".keyed (b INT, a INT, note VARCHAR, PRIMARY KEY (a, b))")
        .await
        .unwrap();
    let batch = primary_keys(&ctx, None, Some("default"), Some("keyed")).unwrap();
    assert_eq!(
        names(&batch),
        [
            "TABLE_CAT",
            "TABLE_SCHEM",
            "TABLE_NAME",
            "COLUMN_NAME",
            "KEQ_SEQ",
            "PK_NAME"
        ]
    );
    assert_eq!(texts(&batch, "COLUMN_NAME"), some(&["a", "b"]));
    assert_eq!(ints(&batch, "KEQ_SEQ"), [Some(1), Some(2)]);
    assert_eq!(texts(&batch, "TABLE_NAME"), some(&["keyed", "keyed"]));
    assert_eq!(texts(&batch, "PK_NAME"), [None, None]);
    // Names are exact, not patterns; a missing or empty name (Hive JDBC's catalog) means any.
    assert_eq!(
        primary_keys(&ctx, Some(""), None, Some("KEYED"))
            .unwrap()
            .num_rows(),
        2
    );
    assert_eq!(
        primary_keys(&ctx, None, None, Some("keye_"))
            .unwrap()
            .num_rows(),
        0
    );
    // A table without a key has no rows, not an error.
    let none = primary_keys(&ctx, None, Some("tpch"), Some("orders")).unwrap();
    assert_eq!((none.num_columns(), none.num_rows()), (6, 0));
}

#[test]
fn cross_reference_has_hives_columns_and_no_rows() {
    let batch = cross_reference().unwrap();
    assert_eq!(batch.num_rows(), 0);
    assert_eq!(
        names(&batch),
        [
            "PKTABLE_CAT",
            "PKTABLE_SCHEM",
            "PKTABLE_NAME",
            "PKCOLUMN_NAME",
            "FKTABLE_CAT",
            "FKTABLE_SCHEM",
            "FKTABLE_NAME",
            "FKCOLUMN_NAME",
            "KEQ_SEQ",
            "UPDATE_RULE",
            "DELETE_RULE",
            "FK_NAME",
            "PK_NAME",
            "DEFERRABILITY",
        ]
    );
}

#[tokio::test]
async fn columns_describe_each_column_as_hive_does() {
    let ctx = context().await;
    let batch = columns(&ctx, None, Some("tpch"), Some("orders"), None).unwrap();
    assert_eq!(
        names(&batch),
        [
            "TABLE_CAT",
            "TABLE_SCHEM",
            "TABLE_NAME",
            "COLUMN_NAME",
            "DATA_TYPE",
            "TYPE_NAME",
            "COLUMN_SIZE",
            "BUFFER_LENGTH",
            "DECIMAL_DIGITS",
            "NUM_PREC_RADIX",
            "NULLABLE",
            "REMARKS",
            "COLUMN_DEF",
            "SQL_DATA_TYPE",
            "SQL_DATETIME_SUB",
            "CHAR_OCTET_LENGTH",
            "ORDINAL_POSITION",
            "IS_NULLABLE",
            "SCOPE_CATALOG",
            "SCOPE_SCHEMA",
            "SCOPE_TABLE",
            "SOURCE_DATA_TYPE",
            "IS_AUTO_INCREMENT",
        ]
    );
    let schema = batch.schema();
    assert_eq!(
        schema.field_with_name("DATA_TYPE").unwrap().data_type(),
        &DataType::Int32
    );
    assert_eq!(
        schema.field_with_name("BUFFER_LENGTH").unwrap().data_type(),
        &DataType::Int8
    );
    assert_eq!(
        schema
            .field_with_name("SOURCE_DATA_TYPE")
            .unwrap()
            .data_type(),
        &DataType::Int16
    );

    assert_eq!(
        texts(&batch, "COLUMN_NAME"),
        some(&["o_orderkey", "o_comment", "o_totalprice"])
    );
    // java.sql.Types INTEGER, VARCHAR, DECIMAL.
    assert_eq!(ints(&batch, "DATA_TYPE"), [Some(4), Some(12), Some(3)]);
    assert_eq!(
        texts(&batch, "TYPE_NAME"),
        some(&["INT", "STRING", "DECIMAL"])
    );
    assert_eq!(
        ints(&batch, "COLUMN_SIZE"),
        [Some(10), Some(i32::MAX), Some(10)]
    );
    assert_eq!(ints(&batch, "DECIMAL_DIGITS"), [Some(0), None, Some(2)]);
    assert_eq!(ints(&batch, "NUM_PREC_RADIX"), [Some(10), None, Some(10)]);
    assert_eq!(ints(&batch, "NULLABLE"), [Some(0), Some(1), Some(1)]);
    assert_eq!(texts(&batch, "IS_NULLABLE"), some(&["NO", "YES", "YES"]));
    assert_eq!(
        ints(&batch, "ORDINAL_POSITION"),
        [Some(1), Some(2), Some(3)]
    );
    assert_eq!(texts(&batch, "IS_AUTO_INCREMENT"), some(&["NO"; 3]));
    assert_eq!(
        batch
            .column_by_name("SOURCE_DATA_TYPE")
            .unwrap()
            .null_count(),
        3
    );

    let by_pattern = columns(&ctx, None, None, None, Some("%NAME")).unwrap();
    assert_eq!(
        texts(&by_pattern, "COLUMN_NAME"),
        some(&["n_name", "n_name", "n_name"])
    );
    assert_eq!(
        texts(&by_pattern, "TABLE_NAME"),
        some(&["t", "v", "nation"])
    );
}

#[test]
fn table_types_are_the_jdbc_names() {
    let batch = table_types().unwrap();
    assert_eq!(names(&batch), ["TABLE_TYPE"]);
    assert_eq!(
        texts(&batch, "TABLE_TYPE"),
        some(&["LOCAL TEMPORARY", "TABLE", "VIEW"])
    );
}

#[test]
fn type_info_has_the_eighteen_jdbc_columns() {
    let batch = type_info().unwrap();
    assert_eq!(
        names(&batch),
        [
            "TYPE_NAME",
            "DATA_TYPE",
            "PRECISION",
            "LITERAL_PREFIX",
            "LITERAL_SUFFIX",
            "CREATE_PARAMS",
            "NULLABLE",
            "CASE_SENSITIVE",
            "SEARCHABLE",
            "UNSIGNED_ATTRIBUTE",
            "FIXED_PREC_SCALE",
            "AUTO_INCREMENT",
            "LOCAL_TYPE_NAME",
            "MINIMUM_SCALE",
            "MAXIMUM_SCALE",
            "SQL_DATA_TYPE",
            "SQL_DATETIME_SUB",
            "NUM_PREC_RADIX",
        ]
    );
    let type_names = texts(&batch, "TYPE_NAME");
    let int = type_names
        .iter()
        .position(|n| n.as_deref() == Some("INT"))
        .unwrap();
    assert_eq!(ints(&batch, "DATA_TYPE")[int], Some(4));
    assert_eq!(ints(&batch, "PRECISION")[int], Some(10));
    let nullable = batch.column_by_name("NULLABLE").unwrap();
    assert_eq!(nullable.as_primitive::<Int16Type>().value(int), 1);
    assert!(type_names.contains(&Some("DECIMAL".to_owned())));
    assert!(type_names.contains(&Some("ARRAY".to_owned())));
    // DataFusion takes CHAR and VARCHAR in DDL and casts, so they are listed as Hive does.
    let position = |name: &str| {
        type_names
            .iter()
            .position(|n| n.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("{name} is not listed"))
    };
    let data_types = ints(&batch, "DATA_TYPE");
    assert_eq!(data_types[position("CHAR")], Some(1));
    assert_eq!(data_types[position("VARCHAR")], Some(12));
    assert_eq!(position("VARCHAR"), position("STRING") + 2);
}

#[tokio::test]
async fn functions_come_from_the_session() {
    let ctx = context().await;
    let batch = functions(&ctx, None, None, "abs").unwrap();
    assert_eq!(
        names(&batch),
        [
            "FUNCTION_CAT",
            "FUNCTION_SCHEM",
            "FUNCTION_NAME",
            "REMARKS",
            "FUNCTION_TYPE",
            "SPECIFIC_NAME",
        ]
    );
    assert_eq!(texts(&batch, "FUNCTION_NAME"), some(&["abs"]));
    assert_eq!(ints(&batch, "FUNCTION_TYPE"), [Some(1)]);
    assert!(texts(&batch, "REMARKS")[0].is_some(), "abs is documented");

    let sums = texts(
        &functions(&ctx, None, None, "SUM").unwrap(),
        "FUNCTION_NAME",
    );
    assert_eq!(sums, some(&["sum"]), "aggregates are listed, case ignored");

    let all = functions(&ctx, None, None, "").unwrap();
    assert!(all.num_rows() > 100, "every function: {}", all.num_rows());
    let listed = texts(&all, "FUNCTION_NAME");
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(listed, sorted);
}

#[tokio::test]
async fn table_functions_return_tables() {
    let ctx = context().await;
    let batch = functions(&ctx, None, None, "generate_series").unwrap();
    let kinds: Vec<_> = ints(&batch, "FUNCTION_TYPE");
    assert!(
        kinds.contains(&Some(FUNCTION_RETURNS_TABLE)),
        "generate_series is a table function: {kinds:?}"
    );
}

/// A table whose data is produced only when a query runs it, like the TPC-H demo tables;
/// it records whether that ever happened.
#[derive(Debug)]
struct GeneratedOnScan {
    schema: SchemaRef,
    generated: Arc<AtomicBool>,
}

impl PartitionStream for GeneratedOnScan {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        self.generated.store(true, Ordering::SeqCst);
        Box::pin(RecordBatchStreamAdapter::new(
            Arc::clone(&self.schema),
            futures::stream::empty(),
        ))
    }
}

#[tokio::test]
async fn listing_generated_tables_does_not_generate_them() {
    let ctx = context().await;
    let generated = Arc::new(AtomicBool::new(false));
    let schema = Arc::new(Schema::new(vec![
        Field::new("l_orderkey", DataType::Int64, false),
        Field::new("l_shipdate", DataType::Date32, false),
    ]));
    let partition = Arc::new(GeneratedOnScan {
        schema: Arc::clone(&schema),
        generated: Arc::clone(&generated),
    });
    let table = StreamingTable::try_new(schema, vec![partition]).unwrap();
    let tpch = ctx.catalog("datafusion").unwrap().schema("tpch").unwrap();
    tpch.register_table("lineitem".to_owned(), Arc::new(table))
        .unwrap();

    let listed = tables(&ctx, None, Some("tpch"), None, None).unwrap();
    assert_eq!(
        texts(&listed, "TABLE_NAME"),
        some(&["nation", "orders", "lineitem"])
    );
    // DataFusion counts a streaming table as a view, and the listing says what DataFusion says.
    assert_eq!(
        texts(&listed, "TABLE_TYPE"),
        some(&["TABLE", "TABLE", "VIEW"])
    );
    let described = columns(&ctx, None, None, Some("lineitem"), None).unwrap();
    assert_eq!(
        texts(&described, "COLUMN_NAME"),
        some(&["l_orderkey", "l_shipdate"])
    );
    assert_eq!(texts(&described, "TYPE_NAME"), some(&["BIGINT", "DATE"]));
    assert!(!generated.load(Ordering::SeqCst), "listing ran the table");

    // The sentinel does notice a query, so its silence above means something.
    ctx.sql("SELECT * FROM tpch.lineitem")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert!(generated.load(Ordering::SeqCst));
}
