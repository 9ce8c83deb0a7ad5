"""The Hive commands beeline users type first: USE, SHOW DATABASES, SHOW TABLES, DESCRIBE
(of a table, a column, a function, a database), SHOW CREATE TABLE; and Hive's variables."""

import re

import pytest

from harness import tpch
from harness.beeline import binary_url, run_beeline

HIVE_TYPE = re.compile(
    r"^(boolean|tinyint|smallint|int|bigint|float|double|decimal\(\d+,\d+\)|string"
    r"|varchar\(\d+\)|char\(\d+\)|binary|date|timestamp)$"
)
STATEMENTS = [
    "SHOW DATABASES",
    "USE tpch",
    "SHOW TABLES",
    "DESCRIBE tpch.nation",
    # Unqualified: resolved in the database chosen by USE.
    "SELECT count(*) AS nations FROM nation",
    "DESCRIBE nation N_NAME",
    "DESCRIBE FUNCTION upper",
    "SHOW CREATE TABLE nation",
    "DESCRIBE DATABASE tpch",
    "DESCRIBE FORMATTED tpch.nation",
]


@pytest.fixture(scope="module")
def results(engine):
    run = run_beeline(binary_url(engine.port), STATEMENTS)
    assert run.returncode == 0, run.describe()
    sets = run.result_sets()
    assert len(sets) == len(STATEMENTS), run.describe()
    return dict(zip(STATEMENTS, sets))


def test_show_databases_lists_default_and_tpch(results):
    header, *rows = results["SHOW DATABASES"]
    assert header == ["database_name"]
    assert {"default", "tpch"} <= {row[0] for row in rows}


def test_use_then_show_tables_lists_the_tpch_tables(results):
    header, *rows = results["SHOW TABLES"]
    assert header == ["tab_name"]
    assert sorted(row[0] for row in rows) == tpch.TABLES


def test_describe_prints_columns_with_hive_types(results):
    header, *rows = results["DESCRIBE tpch.nation"]
    assert header == ["col_name", "data_type", "comment"]
    assert [row[0] for row in rows] == ["n_nationkey", "n_name", "n_regionkey", "n_comment"]
    for name, data_type, _comment in rows:
        assert HIVE_TYPE.match(data_type), f"{name}: {data_type!r} is not a Hive type name"
    types = {row[0]: row[1] for row in rows}
    assert types["n_nationkey"] in ("int", "bigint")
    assert types["n_name"].startswith(("string", "varchar", "char"))


def test_use_sets_the_database_for_unqualified_names(results):
    assert results["SELECT count(*) AS nations FROM nation"] == [["nations"], [str(tpch.NATION_ROWS)]]


def test_describe_a_column_and_a_function_as_hive_does(results):
    assert results["DESCRIBE nation N_NAME"] == [["col_name", "data_type", "comment"], ["n_name", "string", ""]]
    header, *usage = results["DESCRIBE FUNCTION upper"]
    assert header == ["tab_name"]
    assert usage[0][0].startswith("upper(") and " - " in usage[0][0], usage


def test_describe_formatted_adds_the_tables_details_after_its_columns(results):
    """As the Spark Thrift Server does: the columns, a blank row, then key/value rows under
    `# Detailed Table Information` (what dbt and Hue read a table's kind from)."""
    header, *rows = results["DESCRIBE FORMATTED tpch.nation"]
    assert header == ["col_name", "data_type", "comment"]
    assert [row[0] for row in rows[:4]] == ["n_nationkey", "n_name", "n_regionkey", "n_comment"]
    assert rows[4:6] == [["", "", ""], ["# Detailed Table Information", "", ""]]
    details = {row[0]: row[1] for row in rows[6:]}
    assert (details["Database"], details["Table"], details["Type"]) == ("tpch", "nation", "MANAGED")


def test_describe_database_has_hives_columns(results):
    header, *rows = results["DESCRIBE DATABASE tpch"]
    assert header == ["db_name", "comment", "location", "owner_name", "owner_type", "parameters"]
    assert [row[0] for row in rows] == ["tpch"]


def test_show_create_table_prints_a_statement_with_hive_types(results):
    header, *lines = results["SHOW CREATE TABLE nation"]
    assert header == ["createtab_stmt"]
    statement = "\n".join(line[0] for line in lines)
    assert statement.startswith("CREATE TABLE `tpch`.`nation`(\n"), statement
    columns = [line[0].strip().rstrip(",)").split(" ", 1) for line in lines[1:]]
    assert [name for name, _ in columns] == ["`n_nationkey`", "`n_name`", "`n_regionkey`", "`n_comment`"]
    for name, data_type in columns:
        assert HIVE_TYPE.match(data_type), f"{name}: {data_type!r} is not a Hive type name"
    assert statement.endswith(")"), statement


def test_hive_variables_from_the_url_and_set_are_substituted(engine):
    """Beeline scripts written for Hive use `${var}`: the URL's `#var=value` and
    `?hiveconf=value`, and `SET hivevar:`, resolve as HiveServer2 resolves them."""
    url = binary_url(engine.port, options="?etl.queue=nightly#dt=2024-01-31")
    statements = [
        "SELECT '${dt}' AS dt, '${hivevar:dt}' AS var, '${hiveconf:etl.queue}' AS queue",
        "SET hivevar:n=41",
        "SELECT ${n} + 1 AS answer, '${undefined}' AS kept",
    ]
    run = run_beeline(url, statements)
    assert run.returncode == 0, run.describe()
    first, _, last = run.result_sets()
    assert first == [["dt", "var", "queue"], ["2024-01-31", "2024-01-31", "nightly"]]
    assert last == [["answer", "kept"], ["42", "${undefined}"]]
