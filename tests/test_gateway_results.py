"""Results through the gateway equal results straight from the engine, over binary and HTTP."""

import pytest

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from harness import hive, tpch
from harness.beeline import binary_url, http_url, run_beeline
from harness.tcli import ttypes
from harness.thrift_client import check, column_values
from gateway_fixtures import open_session
from test_query_results import PYHIVE_MODES, STATEMENTS


def result_sets(url: str):
    run = run_beeline(url, STATEMENTS, user="ivan")
    assert run.returncode == 0, run.describe()
    sets = run.result_sets()
    assert len(sets) == len(STATEMENTS) and all(sets), run.describe()
    return sets


def test_beeline_results_through_the_gateway_equal_the_engines(engine, kumiho):
    direct = result_sets(binary_url(engine.port))
    assert result_sets(binary_url(kumiho.port)) == direct
    assert result_sets(http_url(kumiho.http_port)) == direct


@pytest.mark.parametrize("mode", PYHIVE_MODES)
def test_pyhive_results_through_the_gateway_equal_the_engines(engine, kumiho, mode):
    def answers(server):
        with hive.connect(server, mode, user="ivan") as connection:
            return [hive.query(connection, sql) for sql in (tpch.Q1, tpch.Q6)]

    assert answers(kumiho) == answers(engine)


def fetch_ids(client, operation, orientation, max_rows: int) -> list[int]:
    reply = client.client.FetchResults(ttypes.TFetchResultsReq(
        operationHandle=operation, orientation=orientation, maxRows=max_rows))
    check(reply.status, "FetchResults")
    return column_values(reply.results.columns[0]) if reply.results.columns else []


def test_a_long_result_arrives_whole_and_in_order_through_the_read_ahead(kumiho):
    """The gateway fetches the next batch while the client reads one: every row still
    arrives once and in order, FETCH_FIRST starts over, and a cancel ends it."""
    rows = 25_000
    session = open_session(kumiho)
    try:
        client = session.client
        sql = f"SELECT value, concat('row-', CAST(value AS STRING)) AS label FROM generate_series(1, {rows}) ORDER BY value"
        operation = client.execute(session.handle, sql)
        first = [fetch_ids(client, operation, ttypes.TFetchOrientation.FETCH_NEXT, 1000) for _ in range(3)]
        assert sum(first, []) == list(range(1, 3001))
        # FETCH_FIRST while a batch was read ahead: the result starts over, nothing skipped.
        seen = fetch_ids(client, operation, ttypes.TFetchOrientation.FETCH_FIRST, 1000)
        while batch := fetch_ids(client, operation, ttypes.TFetchOrientation.FETCH_NEXT, 1000):
            seen += batch
        assert seen == list(range(1, rows + 1))
        client.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=operation))

        # Cancelled with a batch read ahead: the operation says so, and the session goes on.
        operation = client.execute(session.handle, sql)
        assert len(fetch_ids(client, operation, ttypes.TFetchOrientation.FETCH_NEXT, 1000)) == 1000
        cancel = client.client.CancelOperation(ttypes.TCancelOperationReq(operationHandle=operation))
        check(cancel.status, "CancelOperation")
        state = client.client.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=operation))
        assert state.operationState == ttypes.TOperationState.CANCELED_STATE
        client.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=operation))
        assert session.query("SELECT 41 + 1") == [[42]]
    finally:
        session.close()
