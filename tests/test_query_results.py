"""Query results as users see them: beeline over SASL, NOSASL and HTTP, and PyHive, for
TPC-H Q1 and Q6 and for a row of every supported type and a row of NULLs.

Expected values come from outside the engine: TPC-H answers from DuckDB on dbgen's data
(harness.tpch), the typed row from what its SQL literals mean, and PyHive and beeline are
compared with each other.
"""

import datetime
import re
from decimal import Decimal

import pytest

from harness import hive, tpch
from harness.beeline import binary_url, http_url, run_beeline
from harness.values import from_beeline, from_pyhive

# A row of every type the engine maps to HiveServer2 types, then a row of NULLs (the UNION
# gives the NULLs the first row's types).
TYPES_QUERY = (
    "SELECT 1 AS k, true AS b, CAST(1 AS TINYINT) AS ti, CAST(2 AS SMALLINT) AS si, "
    "CAST(3 AS INT) AS i, CAST(4 AS BIGINT) AS bi, CAST(1.5 AS FLOAT) AS f, "
    "CAST(2.25 AS DOUBLE) AS d, CAST(12345.67 AS DECIMAL(10,2)) AS dec, 'he,llo' AS s, "
    "CAST('bin' AS BYTEA) AS bin, DATE '2024-01-31' AS dt, "
    "TIMESTAMP '2024-01-31 12:34:56.789' AS ts, NULL AS n, make_array(1, 2, NULL) AS arr, "
    "named_struct('a', 1, 'b', 'x') AS st, map(['k1', 'k2'], [1, NULL]) AS m "
    "UNION ALL SELECT 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL ORDER BY k"
)
TYPES_COLUMNS = ["k", "b", "ti", "si", "i", "bi", "f", "d", "dec", "s", "bin", "dt", "ts", "n", "arr", "st", "m"]
TYPE_NAMES = [
    "INT_TYPE", "BOOLEAN_TYPE", "TINYINT_TYPE", "SMALLINT_TYPE", "INT_TYPE", "BIGINT_TYPE",
    "FLOAT_TYPE", "DOUBLE_TYPE", "DECIMAL_TYPE", "STRING_TYPE", "BINARY_TYPE", "DATE_TYPE",
    "TIMESTAMP_TYPE", "NULL_TYPE", "ARRAY_TYPE", "STRUCT_TYPE", "MAP_TYPE",
]
TYPES_ROWS = [
    [
        1, True, 1, 2, 3, 4, 1.5, 2.25, Decimal("12345.67"), "he,llo", b"bin", "2024-01-31",
        datetime.datetime(2024, 1, 31, 12, 34, 56, 789000), None, [1, 2, None],
        {"a": 1, "b": "x"}, {"k1": 1, "k2": None},
    ],
    [2] + [None] * 16,
]
# Q1's columns as Hive types: flags, sums and averages as decimals, the count as bigint.
Q1_TYPES = ["STRING_TYPE"] * 2 + ["DECIMAL_TYPE"] * 7 + ["BIGINT_TYPE"]
LINEITEM_COUNT = "SELECT count(*) AS n FROM tpch.lineitem"
STATEMENTS = [tpch.Q1, tpch.Q6, LINEITEM_COUNT, TYPES_QUERY]

BEELINE_URLS = {
    "sasl": lambda engine: binary_url(engine.port),
    "nosasl": lambda engine: binary_url(engine.port, options=";auth=noSasl"),
    "http": lambda engine: http_url(engine.http_port),
}


@pytest.fixture(scope="module")
def beeline_output(engine):
    """All statements through beeline, once per transport (one JVM each)."""
    runs = {}

    def output(transport):
        if transport not in runs:
            runs[transport] = run_beeline(BEELINE_URLS[transport](engine), STATEMENTS)
        return runs[transport]

    return output


def beeline_results(run):
    """The four result sets, checked to be complete, with values parsed by column type."""
    assert run.returncode == 0, run.describe()
    sets = run.result_sets()
    assert len(sets) == len(STATEMENTS), run.describe()
    q1, q6, count, types = sets
    assert q1[0] == tpch.Q1_COLUMNS, run.describe()
    assert q6[0] == ["revenue"], run.describe()
    assert count[0] == ["n"], run.describe()
    assert types[0] == TYPES_COLUMNS, run.describe()
    parse = lambda rows, names: [[from_beeline(v, t) for v, t in zip(row, names)] for row in rows]
    return {
        "q1": parse(q1[1:], Q1_TYPES),
        "q6": parse(q6[1:], ["DECIMAL_TYPE"]),
        "count": parse(count[1:], ["BIGINT_TYPE"]),
        "types": parse(types[1:], TYPE_NAMES),
    }


@pytest.mark.parametrize("transport", BEELINE_URLS)
def test_beeline_connects_and_names_the_server(beeline_output, transport):
    run = beeline_output(transport)
    assert re.search(r"^Connected to: \S.* \(version \S+\)$", run.stderr, re.MULTILINE), run.describe()
    assert "Driver: Hive JDBC (version 2.3" in run.stderr, run.describe()


@pytest.mark.parametrize("transport", BEELINE_URLS)
def test_beeline_prints_tpch_answers(beeline_output, transport):
    results = beeline_results(beeline_output(transport))
    tpch.assert_q1_matches(results["q1"], f"beeline over {transport}")
    assert results["q6"] == [[tpch.expected_q6()]]
    assert results["count"] == [[tpch.LINEITEM_ROWS_SF_0_1]]


@pytest.mark.parametrize("transport", BEELINE_URLS)
def test_beeline_prints_every_type_and_nulls(beeline_output, transport):
    results = beeline_results(beeline_output(transport))
    assert results["types"] == TYPES_ROWS


# PyHive over HTTP posts to /cliservice/ (with the trailing slash HiveServer2 accepts).
PYHIVE_MODES = hive.MODES


@pytest.mark.parametrize("mode", PYHIVE_MODES)
def test_pyhive_gets_what_beeline_prints(engine, beeline_output, mode):
    connection = hive.connect(engine, mode)
    try:
        names, types, q1 = hive.query(connection, tpch.Q1)
        assert (names, types) == (tpch.Q1_COLUMNS, Q1_TYPES)
        _, _, q6 = hive.query(connection, tpch.Q6)
        names, types, typed = hive.query(connection, TYPES_QUERY)
        assert (names, types) == (TYPES_COLUMNS, TYPE_NAMES)
    finally:
        connection.close()
    q1 = [[from_pyhive(v, t) for v, t in zip(row, Q1_TYPES)] for row in q1]
    typed = [[from_pyhive(v, t) for v, t in zip(row, TYPE_NAMES)] for row in typed]

    tpch.assert_q1_matches(q1, f"PyHive over {mode}")
    assert [[Decimal(v) for v in row] for row in q6] == [[tpch.expected_q6()]]
    assert typed == TYPES_ROWS
    beeline = beeline_results(beeline_output("sasl"))
    assert q1 == beeline["q1"]
    assert typed == beeline["types"]


def test_interval_literals_print_as_hive_and_spark_print_them(engine):
    """DataFusion's interval literals are month-day-nano intervals, a type Hive lacks: they
    arrive as text in Hive's forms, as the Spark Thrift Server prints INTERVAL '1' DAY and
    INTERVAL '2' MONTH."""
    connection = hive.connect(engine)
    try:
        names, _, rows = hive.query(connection, "SELECT INTERVAL '1' DAY AS d, INTERVAL '2' MONTH AS m")
    finally:
        connection.close()
    assert (names, rows) == (["d", "m"], [("1 00:00:00.000000000", "0-2")])


def test_a_missing_table_fails_with_hives_sqlstate(engine):
    """Hive reports a table that does not exist as SQLSTATE 42S02 ("base table or view not
    found" to ODBC); other mistakes keep the general 42000."""
    from pyhive.exc import OperationalError

    connection = hive.connect(engine)
    try:
        states = {}
        for sql in ("SELECT * FROM tpch.no_such_table", "SELECT no_such_column FROM tpch.nation"):
            with pytest.raises(OperationalError) as failure, connection.cursor() as cursor:
                cursor.execute(sql)
            states[sql] = failure.value.args[0].status.sqlState
    finally:
        connection.close()
    assert states == {
        "SELECT * FROM tpch.no_such_table": "42S02",
        "SELECT no_such_column FROM tpch.nation": "42000",
    }
