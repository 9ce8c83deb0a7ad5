"""What BI tools and drivers ask the DataFusion engine, through the gateway, answered as
HiveServer2 answers it: beeline's metadata commands (Hive JDBC 2.3's DatabaseMetaData),
Hive's SHOW COLUMNS / FUNCTIONS / VIEWS and current_database(), and the metadata RPCs with
the metastore patterns (`*`, `|`) that Hue and other Hive clients send.

Expected values come from the statements themselves (the key the test declares, the
columns it creates) and from Hive's documented result shapes, not from the engine.
"""

import pytest

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from gateway_fixtures import open_session
from harness.beeline import binary_url, run_beeline
from harness.tcli import ttypes
from harness.thrift_client import check, column_values

# A key declared out of column order: the key's order (a, then b) is what JDBC reports.
KEYED_TABLE = "CREATE TABLE keyed (b INT, a INT, note VARCHAR, PRIMARY KEY (a, b))"
BEELINE_STATEMENTS = [
    KEYED_TABLE,
    "!primarykeys keyed",
    "!typeinfo",
    "SHOW COLUMNS IN keyed",
    "SHOW COLUMNS FROM nation IN tpch LIKE '*key'",
    "SHOW FUNCTIONS LIKE 'upp*|lower'",
    "CREATE VIEW keyed_notes AS SELECT note FROM keyed",
    "SHOW VIEWS",
    "SELECT current_database() AS db",
    "USE tpch",
    "SELECT current_schema() AS db",
]


@pytest.fixture
def beeline_results(kumiho):
    run = run_beeline(binary_url(kumiho.port), BEELINE_STATEMENTS)
    assert run.returncode == 0, run.describe()
    sets = run.result_sets()
    assert len(sets) == len(BEELINE_STATEMENTS), run.describe()
    return dict(zip(BEELINE_STATEMENTS, sets))


def test_beeline_metadata_commands_answer_as_hive_does(beeline_results):
    # Hive JDBC's getPrimaryKeys: Hive's six columns (with its own KEQ_SEQ), one row per key
    # column in key order; beeline's `!primarykeys` sends catalog "" and no schema.
    header, *keys = beeline_results["!primarykeys keyed"]
    assert header == ["TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "KEQ_SEQ", "PK_NAME"]
    assert [row[1:5] for row in keys] == [["default", "keyed", "a", "1"], ["default", "keyed", "b", "2"]]

    # getTypeInfo lists the character types DataFusion takes in DDL, with their JDBC codes.
    header, *types = beeline_results["!typeinfo"]
    assert header[:2] == ["TYPE_NAME", "DATA_TYPE"]
    codes = {row[0]: row[1] for row in types}
    assert (codes.get("CHAR"), codes.get("VARCHAR"), codes.get("STRING")) == ("1", "12", "12")

    # Hive's SHOW COLUMNS: one column `field` of names, in table order; LIKE takes `*`.
    assert beeline_results["SHOW COLUMNS IN keyed"] == [["field"], ["b"], ["a"], ["note"]]
    assert beeline_results["SHOW COLUMNS FROM nation IN tpch LIKE '*key'"] == [
        ["field"], ["n_nationkey"], ["n_regionkey"]]
    # Hive's SHOW FUNCTIONS: one column `tab_name` of names; the pattern is Hive's.
    assert beeline_results["SHOW FUNCTIONS LIKE 'upp*|lower'"] == [["tab_name"], ["lower"], ["upper"]]
    # Hive's SHOW VIEWS (Superset lists views with it): views only, not the table.
    assert beeline_results["SHOW VIEWS"] == [["tab_name"], ["keyed_notes"]]


def test_current_database_follows_use(beeline_results):
    assert beeline_results["SELECT current_database() AS db"] == [["db"], ["default"]]
    assert beeline_results["SELECT current_schema() AS db"] == [["db"], ["tpch"]]


def fetch_all(client, operation) -> tuple[int, list[tuple]]:
    """The number of columns and every row of a metadata operation's result."""
    columns, rows = 0, []
    while True:
        results = client.fetch(operation, 1000)
        if not results.columns:
            return columns, rows
        values = [column_values(column) for column in results.columns]
        if not values[0]:
            return len(values), rows
        columns = len(values)
        rows += list(zip(*values))


def test_metadata_rpcs_take_hive_patterns_and_answer_key_calls(kumiho):
    session = open_session(kumiho)
    raw = session.client.client
    try:
        session.wait_launched()

        def rows_of(reply, what):
            check(reply.status, what)
            return fetch_all(session.client, reply.operationHandle)

        # The metastore's `*` (any run) and `|` (alternatives), as Hue sends them.
        _, tables = rows_of(raw.GetTables(ttypes.TGetTablesReq(
            sessionHandle=session.handle, schemaName="tpch", tableName="n*|REG*")), "GetTables")
        assert [row[2] for row in tables] == ["nation", "region"]
        _, schemas = rows_of(raw.GetSchemas(ttypes.TGetSchemasReq(
            sessionHandle=session.handle, schemaName="*")), "GetSchemas")
        assert {"default", "tpch"} <= {row[0] for row in schemas}
        _, functions = rows_of(raw.GetFunctions(ttypes.TGetFunctionsReq(
            sessionHandle=session.handle, functionName="upp*")), "GetFunctions")
        assert [row[2] for row in functions] == ["upper"]

        # Key calls that JDBC tools make when they open a table: answered, not refused.
        columns, keys = rows_of(raw.GetPrimaryKeys(ttypes.TGetPrimaryKeysReq(
            sessionHandle=session.handle, schemaName="tpch", tableName="nation")), "GetPrimaryKeys")
        assert (columns, keys) == (6, [])
        columns, references = rows_of(raw.GetCrossReference(ttypes.TGetCrossReferenceReq(
            sessionHandle=session.handle, parentSchemaName="tpch", parentTableName="nation",
            foreignSchemaName="tpch", foreignTableName="customer")), "GetCrossReference")
        assert (columns, references) == (14, [])

        # Hive JDBC 3+ answers DatabaseMetaData.getSQLKeywords with this.
        keywords = raw.GetInfo(ttypes.TGetInfoReq(
            sessionHandle=session.handle, infoType=ttypes.TGetInfoType.CLI_ODBC_KEYWORDS))
        check(keywords.status, "GetInfo(CLI_ODBC_KEYWORDS)")
        assert {"SELECT", "FROM", "PARTITION"} <= set(keywords.infoValue.stringValue.split(","))
    finally:
        raw.CloseSession(ttypes.TCloseSessionReq(sessionHandle=session.handle))
        session.client.close()
