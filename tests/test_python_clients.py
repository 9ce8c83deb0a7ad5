"""Python's other HiveServer2 clients, through the gateway to the DataFusion engine:
impyla's DB-API (what Ibis and Impala users script with) over SASL PLAIN, NOSASL and HTTP,
with its metadata calls, which send regular-expression patterns (`.*`) as Impala's and
Hive's metastore read them; and SQLAlchemy on PyHive's `hive://` dialect (what Superset
and other BI tools built on SQLAlchemy use), reflecting a table and querying it; and
PyHive's own connection setting the session's time zone.

Every expected value comes from the table the test creates.
"""

import datetime

import pytest
import sqlalchemy as sa
from impala.dbapi import connect as impyla_connect
from pyhive import hive

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)

ROWS = [(1, "ann", 10.5), (2, "bob", 20.25), (3, "cy", 7.0)]
CREATE = "CREATE TABLE people (id INT, name STRING, score DOUBLE)"
INSERT = "INSERT INTO people VALUES " + ", ".join(f"({i}, '{n}', {s})" for i, n, s in ROWS)


def impyla(gateway, transport: str):
    if transport == "http":
        return impyla_connect(host="127.0.0.1", port=gateway.http_port, auth_mechanism="PLAIN",
                              user="alice", password="x", use_http_transport=True,
                              http_path="cliservice")
    if transport == "nosasl":
        return impyla_connect(host="127.0.0.1", port=gateway.port, auth_mechanism="NOSASL",
                              user="alice")
    return impyla_connect(host="127.0.0.1", port=gateway.port, auth_mechanism="PLAIN",
                          user="alice", password="x")


@pytest.mark.parametrize("transport", ["plain", "nosasl", "http"])
def test_impyla_queries_and_reads_metadata(kumiho, transport):
    connection = impyla(kumiho, transport)
    cursor = connection.cursor()
    cursor.execute(CREATE)
    cursor.execute(INSERT)

    cursor.execute("SELECT id, name, score FROM people WHERE name <> %(skip)s ORDER BY id",
                   {"skip": "bob"})
    assert [column[0] for column in cursor.description] == ["id", "name", "score"]
    assert [column[1] for column in cursor.description] == ["INT", "STRING", "DOUBLE"]
    assert cursor.fetchall() == [row for row in ROWS if row[1] != "bob"]

    # impyla's metadata calls send `.*` for "any": the table must be found by them.
    cursor.get_databases()
    assert "default" in [row[0] for row in cursor.fetchall()]
    cursor.get_tables(database_name="default")
    assert "people" in [row[2] for row in cursor.fetchall()]
    assert cursor.get_table_schema("people", database_name="default") == [
        ("id", "INT"), ("name", "STRING"), ("score", "DOUBLE")]
    assert cursor.table_exists("people", database_name="default")
    assert not cursor.table_exists("nobody", database_name="default")
    cursor.close()
    connection.close()


def test_sqlalchemy_on_pyhive_reflects_and_queries(kumiho):
    engine = sa.create_engine(f"hive://alice@127.0.0.1:{kumiho.port}/default")
    with engine.connect() as connection:
        connection.execute(sa.text(CREATE))
        connection.execute(sa.text(INSERT))

        inspector = sa.inspect(connection)
        assert "default" in inspector.get_schema_names()
        assert "people" in inspector.get_table_names()
        people = sa.Table("people", sa.MetaData(), autoload_with=connection)
        assert [column.name for column in people.columns] == ["id", "name", "score"]

        query = sa.select(people.c.name, people.c.score).where(people.c.id >= 2).order_by(people.c.id)
        assert connection.execute(query).fetchall() == [(n, s) for i, n, s in ROWS if i >= 2]
        total = connection.execute(sa.select(sa.func.sum(people.c.score))).scalar()
        assert total == pytest.approx(sum(s for _, _, s in ROWS))
    engine.dispose()


def test_pyhive_reads_times_in_the_time_zone_its_session_sets(kumiho):
    """PyHive's `configuration=` sets the session's zone, as Spark's `spark.sql.session.timeZone`
    would: a moment (seconds since 1970) reads as Seoul's wall-clock time, and a time written
    in Seoul counts back to the same moment. Every value is Seoul's (UTC+9, no daylight saving)."""
    connection = hive.connect("127.0.0.1", port=kumiho.port, username="alice", password="x",
                              auth="CUSTOM",
                              configuration={"spark.sql.session.timeZone": "Asia/Seoul"})
    cursor = connection.cursor()
    cursor.execute("SELECT current_timezone(), from_unixtime(0), CAST(0 AS TIMESTAMP), "
                   "unix_timestamp('1970-01-01 09:00:00')")
    assert cursor.fetchall() == [("Asia/Seoul", "1970-01-01 09:00:00",
                                  datetime.datetime(1970, 1, 1, 9, 0), 0)]
    cursor.execute("SET TIME ZONE 'UTC'")
    cursor.execute("SELECT from_unixtime(0)")
    assert cursor.fetchall() == [("1970-01-01 00:00:00",)]
    cursor.close()
    connection.close()
