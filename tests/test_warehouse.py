"""The DataFusion engine's warehouse through the gateway: Hive DDL and DML whose tables
outlive the engine, and that every user's engine sees (Spark's spark.sql.warehouse.dir)."""

import pytest

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from gateway_fixtures import DEFAULT_CLUSTER, open_session
from harness.tcli import ttypes
from harness import hive
from harness.thrift_client import column_values
from test_object_stores import CREDENTIALS, engine_env, s3_endpoint  # noqa: F401 (fixture)

# Engines that stop when their session closes: the next session gets a fresh engine, as
# after an idle timeout.
CONNECTION = {"kyuubi.engine.share.level": "CONNECTION"}


def run(session, sql: str):
    """Runs a statement that has no result set."""
    operation = session.client.execute(session.handle, sql)
    session.client.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=operation))


def failure(session, sql: str) -> str:
    with pytest.raises(AssertionError) as failed:
        run(session, sql)
    return str(failed.value)


def metadata_rows(session, reply) -> list[list]:
    """The columns of a metadata call's result (GetTables, GetColumns)."""
    assert reply.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS, reply.status.errorMessage
    rowset = session.client.fetch(reply.operationHandle, 1000)
    return [column_values(column) for column in rowset.columns]


def data_files(directory) -> list[str]:
    """The data files under a table directory, relative; hidden ones left out."""
    return sorted(
        str(path.relative_to(directory)) for path in directory.rglob("*")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(directory).parts))


def test_a_table_outlives_its_engine_and_other_users_see_it(kumiho):
    warehouse = kumiho.work_dir / "warehouse"
    alice = open_session(kumiho, "alice", configuration=CONNECTION)
    alice.wait_launched()
    run(alice, "CREATE TABLE orders (id INT, c STRING) STORED AS PARQUET")
    run(alice, "INSERT INTO orders VALUES (1, 'a'), (2, 'b')")
    assert alice.query("SELECT id, c FROM orders ORDER BY id") == [[1, 2], ["a", "b"]]
    assert (warehouse / "orders" / ".kumiho-table").is_file()
    assert len(data_files(warehouse / "orders")) == 1
    alice.close()  # her CONNECTION engine stops

    # Another user's engine (another process) sees it, and writes to it.
    bob = open_session(kumiho, "bob")
    bob.wait_launched()
    assert bob.query("SELECT count(*) FROM orders") == [[2]]
    run(bob, "INSERT INTO TABLE orders SELECT 3, 'c'")

    # A fresh engine of alice's: the table and bob's row are there.
    again = open_session(kumiho, "alice", configuration=CONNECTION)
    again.wait_launched()
    assert again.query("SELECT id FROM orders ORDER BY id") == [[1, 2, 3]]
    assert "orders" in again.query("SHOW TABLES")[0]
    create = "\n".join(again.query("SHOW CREATE TABLE orders")[0])
    assert "STORED AS PARQUET" in create, create
    # JDBC metadata (DBeaver's and Superset's table browsers) lists it and its columns.
    tables = metadata_rows(again, again.client.client.GetTables(ttypes.TGetTablesReq(
        sessionHandle=again.handle, schemaName="default", tableName="ord%")))
    assert tables[2] == ["orders"] and tables[3] == ["TABLE"], tables
    columns = metadata_rows(again, again.client.client.GetColumns(ttypes.TGetColumnsReq(
        sessionHandle=again.handle, schemaName="default", tableName="orders")))
    assert columns[3] == ["id", "c"] and columns[5] == ["INT", "STRING"], columns

    # INSERT OVERWRITE replaces, and bob sees it at his next statement.
    run(again, "INSERT OVERWRITE TABLE orders SELECT 9, 'z'")
    assert bob.query("SELECT id, c FROM orders") == [[9], ["z"]]
    assert len(data_files(warehouse / "orders")) == 1

    run(bob, "DROP TABLE orders")
    assert not (warehouse / "orders").exists()
    assert "orders" in failure(again, "INSERT INTO orders VALUES (1, 'a')")
    again.close()
    bob.close()


def test_partitions_databases_and_the_clusters_own_warehouse(kumiho, tmp_path):
    lake = tmp_path / "lake"
    kumiho.write_cluster("lake", DEFAULT_CLUSTER + f"  datafusion:\n    warehouse: {lake}\n")
    kumiho.wait_for_log(r"cluster added.*lake|lake.*cluster added")
    cluster = {"kyuubi.session.cluster": "lake"}
    alice = open_session(kumiho, "alice", configuration=cluster)
    alice.wait_launched()
    run(alice, "CREATE DATABASE sales")
    assert (lake / "sales.db").is_dir()
    run(alice, "CREATE TABLE sales.events (id INT, v STRING) PARTITIONED BY (dt STRING)")
    run(alice, "INSERT INTO sales.events PARTITION (dt='2024-01-01') VALUES (1, 'a'), (2, 'b')")
    run(alice, "INSERT INTO sales.events PARTITION (dt) SELECT 3, 'c', '2024-01-02'")
    table = lake / "sales.db" / "events"
    assert [f.split("/")[0] for f in data_files(table)] == ["dt=2024-01-01", "dt=2024-01-02"]
    assert alice.query("SHOW PARTITIONS sales.events") == [["dt=2024-01-01", "dt=2024-01-02"]]
    # Pruned to one partition's directory, and answering right.
    plan = "\n".join(alice.query(
        "EXPLAIN SELECT sum(id) FROM sales.events WHERE dt = '2024-01-02'")[1])
    assert "dt=2024-01-02" in plan and "dt=2024-01-01" not in plan, plan
    assert alice.query("SELECT sum(id) FROM sales.events WHERE dt = '2024-01-01'") == [[3]]
    run(alice, "INSERT OVERWRITE TABLE sales.events PARTITION (dt='2024-01-01') SELECT 10, 'z'")
    assert alice.query("SELECT id, dt FROM sales.events ORDER BY id") == [
        [3, 10], ["2024-01-02", "2024-01-01"]]

    # Another user's engine of the cluster lists the database, and Hive's DROP rules hold.
    bob = open_session(kumiho, "bob", configuration=cluster)
    bob.wait_launched()
    assert "sales" in bob.query("SHOW DATABASES")[0]
    assert "not empty" in failure(bob, "DROP DATABASE sales")
    run(bob, "DROP DATABASE sales CASCADE")
    assert not (lake / "sales.db").exists()
    assert "sales" not in alice.query("SHOW DATABASES")[0]
    # The demo data is untouched.
    assert alice.query("SELECT count(*) FROM tpch.region") == [[5]]
    alice.close()
    bob.close()


def test_a_warehouse_on_s3(start_own_engine, s3_endpoint, tmp_path):
    """Two engines (PyHive clients) over one S3 warehouse: moto's S3 server."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1",
                      aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                      aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"])
    s3.create_bucket(Bucket="warehouse")
    flags = ("--warehouse", "s3://warehouse/wh/", "--tpch-scale", "0")
    first = start_own_engine(*flags, env=engine_env(s3_endpoint))
    second = start_own_engine(*flags, env=engine_env(s3_endpoint))
    one, two = hive.connect(first), hive.connect(second)
    try:
        with one.cursor() as cursor:
            cursor.execute("CREATE DATABASE sales")
            cursor.execute("CREATE TABLE sales.t (id INT, v STRING) PARTITIONED BY (dt STRING)")
            cursor.execute("INSERT INTO sales.t PARTITION (dt='a') VALUES (1, 'x'), (2, 'y')")
            cursor.execute("INSERT OVERWRITE TABLE sales.t PARTITION (dt='a') VALUES (3, 'z')")
        keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket="warehouse")["Contents"])
        assert "wh/sales.db/t/.kumiho-table" in keys, keys
        assert [k for k in keys if k.startswith("wh/sales.db/t/dt=a/")], keys
        assert not [k for k in keys if ".staging" in k], keys
        assert hive.query(two, "SELECT id, v, dt FROM sales.t")[2] == [(3, "z", "a")]
        # LOAD DATA moves a file within the bucket, and copies one from the engine's host.
        s3.put_object(Bucket="warehouse", Key="landing/a.csv", Body=b"4,w\n")
        (tmp_path / "b.csv").write_text("5,v\n")
        with two.cursor() as cursor:
            cursor.execute("CREATE TABLE sales.l (id INT, v STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ','")
            cursor.execute("LOAD DATA INPATH 's3://warehouse/landing/a.csv' INTO TABLE sales.l")
            cursor.execute(f"LOAD DATA LOCAL INPATH '{tmp_path / 'b.csv'}' INTO TABLE sales.l")
        keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket="warehouse")["Contents"])
        assert "wh/sales.db/l/a.csv" in keys and "wh/sales.db/l/b.csv" in keys, keys
        assert not [k for k in keys if k.startswith("landing/") or ".staging" in k], keys
        assert hive.query(one, "SELECT id FROM sales.l ORDER BY id")[2] == [(4,), (5,)]
        with two.cursor() as cursor:
            cursor.execute("DROP DATABASE sales CASCADE")
        left = s3.list_objects_v2(Bucket="warehouse").get("Contents", [])
        assert left == [], left
    finally:
        one.close()
        two.close()


def test_an_analysts_hive_script_through_beeline(kumiho):
    """The statements an analyst types in beeline, as Hive takes them, in one script."""
    from harness.beeline import binary_url, run_beeline

    script = run_beeline(binary_url(kumiho.port), [
        "CREATE TABLE orders (id INT, c STRING) PARTITIONED BY (dt STRING) STORED AS PARQUET",
        "INSERT INTO orders PARTITION (dt='2024-01-01') VALUES (1, 'a'), (2, 'b')",
        "INSERT OVERWRITE TABLE orders PARTITION (dt='2024-01-01') SELECT 3, 'c'",
        "CREATE TABLE csv_in (a INT, b STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ','",
        "INSERT INTO csv_in SELECT id, c FROM orders",
        "ALTER TABLE csv_in ADD COLUMNS (note STRING)",
        "CREATE TEMPORARY VIEW recent AS SELECT * FROM orders WHERE dt >= '2024-01-01'",
        "SELECT id, c, dt FROM recent",
        "TRUNCATE TABLE csv_in",
        "SELECT count(*) AS n FROM csv_in",
        "SHOW PARTITIONS orders",
    ], user="carol")
    assert script.returncode == 0, script.describe()
    results = script.result_sets()  # one per statement; [] for those without rows
    assert results[7][1:] == [["3", "c", "2024-01-01"]], script.describe()
    assert results[9][1:] == [["0"]], script.describe()
    assert results[10][1:] == [["dt=2024-01-01"]], script.describe()
    assert (kumiho.work_dir / "warehouse" / "csv_in" / ".kumiho-table").is_file()


def test_an_etl_script_loads_analyzes_and_describes_through_beeline(kumiho, tmp_path):
    """An ETL script as analysts write them for Hive, run by beeline, which stops at the
    first statement that fails: jars added, files loaded (copied from the engine's host,
    moved within the warehouse's filesystem), statistics computed, properties set, tables
    described."""
    from harness.beeline import binary_url, run_beeline

    warehouse = kumiho.work_dir / "warehouse"
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "sales.csv").write_text("1,apple,2.5\n2,pear,1.0\n")
    # A Parquet file as another job leaves it: Hive's name, no extension.
    alice = open_session(kumiho, "alice")
    alice.wait_launched()
    run(alice, "CREATE TABLE made STORED AS PARQUET AS SELECT 3 AS id, 'fig' AS item, 4.0 AS amount")
    (made,) = data_files(warehouse / "made")
    parquet = tmp_path / "moved"
    parquet.mkdir()
    (warehouse / "made" / made).rename(parquet / "000000_0")

    script = run_beeline(binary_url(kumiho.port), [
        "ADD JAR /opt/etl/udfs.jar",
        "LIST JARS",
        "CREATE TABLE staging_sales (id INT, item STRING, amount DOUBLE) "
        "ROW FORMAT DELIMITED FIELDS TERMINATED BY ','",
        f"LOAD DATA LOCAL INPATH '{landing}/sales.csv' OVERWRITE INTO TABLE staging_sales",
        "CREATE TABLE sales (id INT, item STRING, amount DOUBLE) PARTITIONED BY (dt STRING) "
        "STORED AS PARQUET TBLPROPERTIES ('team'='etl')",
        "INSERT OVERWRITE TABLE sales PARTITION (dt='2024-01-01') SELECT * FROM staging_sales",
        f"LOAD DATA INPATH '{parquet}' INTO TABLE sales PARTITION (dt='2024-01-02')",
        "ANALYZE TABLE sales PARTITION (dt) COMPUTE STATISTICS",
        "ANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS",
        "ALTER TABLE sales SET TBLPROPERTIES ('comment'='daily sales', 'EXTERNAL'='FALSE')",
        "ALTER TABLE sales UNSET TBLPROPERTIES IF EXISTS ('never.set')",
        "SHOW TBLPROPERTIES sales",
        "DESCRIBE FORMATTED sales PARTITION (dt='2024-01-02')",
        "SHOW TABLE EXTENDED LIKE 'sal*'",
        "DROP TEMPORARY FUNCTION IF EXISTS to_geo",
        "SELECT dt, count(*) AS n, sum(amount) AS total FROM sales GROUP BY dt ORDER BY dt",
    ], user="carol")
    assert script.returncode == 0, script.describe()
    results = script.result_sets()
    assert results[1][1:] == [["/opt/etl/udfs.jar"]], script.describe()
    properties = dict(tuple(row) for row in results[11][1:])
    assert properties["team"] == "etl" and properties["comment"] == "daily sales", properties
    assert properties["numFiles"] == "2" and properties["numRows"] == "3", properties
    partition = results[12]
    assert ["Partition Values", "[dt=2024-01-02]", ""] in partition, script.describe()
    assert ["", "numRows", "1"] in partition, script.describe()
    extended = [row[0] for row in results[13][1:] if row]  # [] for the blank line after a table
    assert "tableName:sales" in extended and "owner:carol" in extended, extended
    assert "partitionColumns:struct partition_columns { string dt}" in extended, extended
    assert results[15][1:] == [["2024-01-01", "2", "3.5"], ["2024-01-02", "1", "4.0"]], script.describe()
    # Copied from the engine's host (the file stays), moved within the warehouse's filesystem.
    assert (landing / "sales.csv").is_file()
    assert not (parquet / "000000_0").exists()
    assert data_files(warehouse / "sales" / "dt=2024-01-02") == ["000000_0.parquet"]
    # The operation log tells the script's reader what was accepted without being done.
    assert "not loaded" in script.stderr, script.describe()

    # What cannot run here says so, and where it runs.
    refused = failure(alice, "CREATE TEMPORARY FUNCTION to_geo AS 'com.example.hive.ToGeo'")
    assert "com.example.hive.ToGeo" in refused and "SPARK_SQL" in refused, refused
    refused = failure(alice, f"LOAD DATA LOCAL INPATH '{landing}/none.csv' INTO TABLE sales PARTITION (dt='x')")
    assert "none.csv" in refused and "does not exist" in refused, refused
    refused = failure(alice, f"LOAD DATA LOCAL INPATH '{landing}/sales.csv' INTO TABLE sales PARTITION (dt='x')")
    assert "not a PARQUET file" in refused, refused
    alice.close()
