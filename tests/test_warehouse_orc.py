"""ORC tables of the DataFusion engine's warehouse (STORED AS ORC) against the real Spark:
ORC files Spark wrote read through the gateway with PyHive, and the ORC table Kumiho wrote
read back by Spark, value for value (strings, integers, doubles, dates, timestamps, NULLs,
a partition column)."""

import datetime

import pytest
from pyhive.exc import OperationalError

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from harness import hive
from test_object_stores import CREDENTIALS, engine_env, s3_endpoint  # noqa: F401 (fixture)

# Spark reads and writes times in UTC, as the engine does (datafusion.execution.time_zone).
SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
}
COLUMNS = "name STRING, qty INT, price DOUBLE, day DATE, at TIMESTAMP"
# The rows both sides write: one of values, one of NULLs, in two partitions.
ROWS_SQL = ("('apple', 3, 1.25, DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05.123456', '2024-01-02'), "
            "(NULL, NULL, NULL, NULL, NULL, '2024-01-03')")
APPLE = ("apple", 3, 1.25, datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 3, 4, 5, 123456), "2024-01-02")
NULLS = (None, None, None, None, None, "2024-01-03")


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    """One local Spark (pyspark's JVM, started once for the module)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[1]").appName("kumiho-orc")
    builder = builder.config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))
    for key, value in SPARK_CONF.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    yield session
    session.stop()


def pyhive_rows(connection, sql: str) -> list[tuple]:
    return hive.query(connection, sql)[2]


def as_values(row: tuple) -> tuple:
    """A row as PyHive gives it (dates as text) in Python's types."""
    name, qty, price, day, at, dt = row
    if day is not None:
        day = datetime.date.fromisoformat(day)
    return (name, qty, price, day, at, dt)


def test_kumiho_reads_the_orc_files_spark_wrote(spark, kumiho, tmp_path):
    location = tmp_path / "spark-sales"
    spark.sql(f"CREATE TABLE sales ({COLUMNS}, dt STRING) USING ORC PARTITIONED BY (dt) "
              f"LOCATION '{location}'")
    spark.sql(f"INSERT INTO sales VALUES {ROWS_SQL}")
    written = sorted(str(p.relative_to(location)) for p in location.rglob("*.orc"))
    assert [w.split("/")[0] for w in written] == ["dt=2024-01-02", "dt=2024-01-03"], written

    connection = hive.connect(kumiho)
    try:
        with connection.cursor() as cursor:
            # Columns left out: read from Spark's files; the partition column named.
            cursor.execute(f"CREATE EXTERNAL TABLE spark_sales STORED AS ORC PARTITIONED BY (dt) "
                           f"LOCATION '{location}'")
            # Columns declared, as Hive's DDL of the same table would.
            cursor.execute(f"CREATE EXTERNAL TABLE spark_sales_typed ({COLUMNS}) PARTITIONED BY (dt STRING) "
                           f"STORED AS ORC LOCATION '{location}'")
        for table in ("spark_sales", "spark_sales_typed"):
            rows = pyhive_rows(connection, f"SELECT name, qty, price, day, at, dt FROM {table} ORDER BY dt")
            assert [as_values(row) for row in rows] == [APPLE, NULLS], (table, rows)
        names, types, _ = hive.query(connection, "SELECT name, qty, price, day, at FROM spark_sales LIMIT 1")
        assert types == ["STRING_TYPE", "INT_TYPE", "DOUBLE_TYPE", "DATE_TYPE", "TIMESTAMP_TYPE"], types
        assert pyhive_rows(connection, "SELECT count(*), sum(qty) FROM spark_sales WHERE dt = '2024-01-02'") == [(1, 3)]
        create = "\n".join(row[0] for row in pyhive_rows(connection, "SHOW CREATE TABLE spark_sales"))
        assert "STORED AS ORC" in create and "EXTERNAL" in create, create
        # DROP leaves an external table's files, Spark's, where they are.
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE spark_sales")
        assert sorted(str(p.relative_to(location)) for p in location.rglob("*.orc")) == written
    finally:
        connection.close()


def test_spark_reads_the_orc_table_kumiho_wrote(spark, kumiho):
    connection = hive.connect(kumiho)
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE TABLE events ({COLUMNS}) PARTITIONED BY (dt STRING) STORED AS ORC")
            # A static partition, then a dynamic one.
            cursor.execute("INSERT INTO events PARTITION (dt='2024-01-02') VALUES "
                           "('apple', 3, 1.25, DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05.123456')")
            cursor.execute("INSERT INTO events PARTITION (dt) SELECT NULL AS a, NULL AS b, NULL AS c, "
                           "NULL AS d, NULL AS e, '2024-01-03'")
            cursor.execute("CREATE TABLE events_copy STORED AS ORC AS SELECT name, qty FROM events")
        described = pyhive_rows(connection, "DESCRIBE FORMATTED events")
        assert ("Provider", "orc", "") in [tuple(v.strip() if v else "" for v in row) for row in described], described
        # orc-rust writes no decimals: the table is refused, naming the column.
        with pytest.raises(OperationalError) as refused, connection.cursor() as cursor:
            cursor.execute("CREATE TABLE money (price DECIMAL(10,2)) STORED AS ORC")
        assert "'price'" in str(refused.value) and "DECIMAL(10,2)" in str(refused.value), refused.value
        assert pyhive_rows(connection, "SELECT count(*) FROM events_copy") == [(2,)]
    finally:
        connection.close()

    table = kumiho.work_dir / "warehouse" / "events"
    files = sorted(str(p.relative_to(table)) for p in table.rglob("*.orc"))
    assert [f.split("/")[0] for f in files] == ["dt=2024-01-02", "dt=2024-01-03"], files
    # Spark reads the directory as it reads its own: hidden files (the warehouse's metadata)
    # skipped, the partition column from the directory names.
    frame = spark.read.schema(f"{COLUMNS}, dt STRING").orc(str(table))
    rows = sorted((tuple(row) for row in frame.collect()), key=lambda row: row[5])
    assert rows == [APPLE, NULLS], rows
    assert spark.read.orc(str(kumiho.work_dir / "warehouse" / "events_copy")).count() == 2


def test_an_orc_table_in_a_warehouse_on_s3(start_own_engine, s3_endpoint):
    """ORC files uploaded to S3 (moto) and read back by byte ranges, by another engine."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1",
                      aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                      aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"])
    s3.create_bucket(Bucket="orc-warehouse")
    flags = ("--warehouse", "s3://orc-warehouse/wh/", "--tpch-scale", "0")
    writer = hive.connect(start_own_engine(*flags, env=engine_env(s3_endpoint)))
    reader = hive.connect(start_own_engine(*flags, env=engine_env(s3_endpoint)))
    try:
        with writer.cursor() as cursor:
            cursor.execute("CREATE TABLE t (id INT, v STRING, note STRING) PARTITIONED BY (dt STRING) STORED AS ORC")
            # note: NULL alone, an empty stream in the file.
            cursor.execute("INSERT INTO t PARTITION (dt) VALUES (1, 'x', NULL, 'a'), (2, 'y', NULL, 'b')")
            cursor.execute("INSERT OVERWRITE TABLE t PARTITION (dt='a') VALUES (3, 'z', 'new')")
        keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket="orc-warehouse")["Contents"])
        assert [k for k in keys if k.startswith("wh/t/dt=a/") and k.endswith(".orc")], keys
        assert not [k for k in keys if ".staging" in k], keys
        assert pyhive_rows(reader, "SELECT id, v, note, dt FROM t ORDER BY id") == [
            (2, "y", None, "b"), (3, "z", "new", "a")]
    finally:
        writer.close()
        reader.close()
