"""TPC-H queries, and DuckDB as the oracle for their answers.

The engine's demo data is TPC-H generated with tpchgen (a port of dbgen that writes the
same rows); DuckDB's tpch extension runs dbgen itself. Running the same SQL on DuckDB gives
expected answers that owe nothing to the engine under test.
"""

import functools
from decimal import Decimal
from pathlib import Path

import duckdb
import duckdb_extension_tpch

SCALE = 0.1  # the engine's default --tpch-scale
# Published TPC-H row counts, which dbgen produces exactly: 6,001,215 x SF lineitem rows
# (600,572 at SF 0.1) and always 25 nations.
LINEITEM_ROWS_SF_0_1 = 600_572
NATION_ROWS = 25
TABLES = ["customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"]

# Q1 and Q6 with the specification's default substitution parameters (Q1: DELTA = 90 days,
# so 1998-12-01 - 90 days = 1998-09-02; Q6: 1994, discount 0.06, quantity 24), one line each
# so that beeline's script runner keeps them whole.
Q1 = (
    "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, "
    "sum(l_extendedprice) AS sum_base_price, "
    "sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, "
    "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, "
    "avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc, "
    "count(*) AS count_order "
    "FROM tpch.lineitem WHERE l_shipdate <= DATE '1998-09-02' "
    "GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus"
)
Q1_COLUMNS = [
    "l_returnflag", "l_linestatus", "sum_qty", "sum_base_price", "sum_disc_price",
    "sum_charge", "avg_qty", "avg_price", "avg_disc", "count_order",
]
Q1_GROUPS = [("A", "F"), ("N", "F"), ("N", "O"), ("R", "F")]
Q6 = (
    "SELECT sum(l_extendedprice * l_discount) AS revenue FROM tpch.lineitem "
    "WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' "
    "AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"
)


@functools.cache
def _duckdb() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.execute("PRAGMA disable_progress_bar")
    extension = next(Path(duckdb_extension_tpch.__file__).parent.glob("extensions/*/tpch.duckdb_extension"))
    connection.execute(f"LOAD '{extension}'")
    connection.execute(f"CALL dbgen(sf={SCALE})")
    # The queries name the engine's database `tpch`.
    connection.execute("CREATE SCHEMA tpch")
    for table in TABLES:
        connection.execute(f"CREATE VIEW tpch.{table} AS SELECT * FROM main.{table}")
    return connection


def expected_q1() -> list[tuple]:
    """Q1's rows, with the averages exact (sum / count as Decimal), not DuckDB's doubles."""
    rows = _duckdb().execute(
        Q1.replace("avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, "
                   "avg(l_discount) AS avg_disc",
                   "sum(l_quantity), sum(l_extendedprice), sum(l_discount)")
    ).fetchall()
    expected = []
    for flag, status, qty, base, disc_price, charge, s_qty, s_price, s_disc, count in rows:
        expected.append((
            flag, status, qty, base, disc_price, charge,
            Decimal(s_qty) / count, Decimal(s_price) / count, Decimal(s_disc) / count, count,
        ))
    return expected


def expected_q6() -> Decimal:
    return _duckdb().execute(Q6).fetchone()[0]


def assert_q1_matches(rows: list[tuple], source: str):
    """Compares Q1 rows (values already parsed: str, Decimal or float, int) to the oracle.

    Sums are exact decimals and must match exactly. Averages may be cut to the engine's
    decimal scale (Hive's rule gives avg(decimal(15,2)) the scale 6) or be doubles, so they
    match within 1e-6 absolute or 1e-12 relative, whichever is larger.
    """
    expected = expected_q1()
    assert [tuple(row[:2]) for row in rows] == Q1_GROUPS, f"{source}: Q1 groups {rows}"
    for row, want in zip(rows, expected):
        group = f"{source}: Q1 group {row[0]},{row[1]}"
        assert [Decimal(str(v)) for v in row[2:6]] == list(want[2:6]), f"{group}: sums {row} != {want}"
        for got, exact in zip(row[6:9], want[6:9]):
            tolerance = max(Decimal("1e-6"), exact * Decimal("1e-12"))
            assert abs(Decimal(str(got)) - exact) <= tolerance, f"{group}: avg {got} != {exact}"
        assert int(row[9]) == want[9], f"{group}: count {row[9]} != {want[9]}"
