"""Results through the gateway equal results straight from the engine, over binary and HTTP."""

import pytest

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from harness import hive, tpch
from harness.beeline import binary_url, http_url, run_beeline
from harness.tcli import ttypes
from harness.thrift_client import ThriftClient, check, column_values
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


def final_status(client, operation):
    """Polls the operation's status as JDBC drivers do, until it leaves RUNNING; the last reply."""
    while True:
        reply = client.client.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=operation))
        check(reply.status, "GetOperationStatus")
        if reply.operationState not in (ttypes.TOperationState.INITIALIZED_STATE,
                                        ttypes.TOperationState.PENDING_STATE,
                                        ttypes.TOperationState.RUNNING_STATE):
            return reply


def wait_until_finished(client, operation) -> None:
    reply = final_status(client, operation)
    assert reply.operationState == ttypes.TOperationState.FINISHED_STATE, reply


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
def test_batches_fetched_ahead_hold_no_more_rows_than_the_client_asks(kumiho, run_async):
    """The gateway fetches a finished statement's first batch in the size the client used
    last; a client that then asks for fewer rows gets at most that many per fetch, and every
    row once, in order."""
    sql = "SELECT value FROM generate_series(1, 25) ORDER BY value"
    session = open_session(kumiho)
    try:
        client = session.client

        def batches(max_rows: int) -> list[list[int]]:
            operation = client.execute(session.handle, sql, run_async=run_async)
            if run_async:
                wait_until_finished(client, operation)
            metadata = client.client.GetResultSetMetadata(
                ttypes.TGetResultSetMetadataReq(operationHandle=operation))
            check(metadata.status, "GetResultSetMetadata")
            assert [c.columnName for c in metadata.schema.columns] == ["value"]
            fetched = []
            while batch := fetch_ids(client, operation, ttypes.TFetchOrientation.FETCH_NEXT, max_rows):
                fetched.append(batch)
            closed = client.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=operation))
            check(closed.status, "CloseOperation")
            return fetched

        assert batches(1000) == [list(range(1, 26))]
        # The first batch was fetched ahead with 1,000 rows: split, the rest served after.
        assert batches(7) == [list(range(1, 8)), list(range(8, 15)), list(range(15, 22)), list(range(22, 26))]
        # Fetched ahead with 7: fewer than asked, which HiveServer2 allows; nothing lost.
        larger = batches(10)
        assert sum(larger, []) == list(range(1, 26))
        assert all(1 <= len(batch) <= 10 for batch in larger), larger
        assert session.query("SELECT 41 + 1") == [[42]]
    finally:
        session.close()


def test_a_closed_operation_is_gone_at_once(kumiho):
    """CloseOperation is answered before the engine has closed it; the handle is unknown
    from then on, and the session goes on."""
    session = open_session(kumiho)
    try:
        client = session.client
        operation = client.execute(session.handle, "SELECT 1", run_async=True)
        closed = client.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=operation))
        check(closed.status, "CloseOperation")
        status = client.client.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=operation))
        assert status.status.statusCode == ttypes.TStatusCode.INVALID_HANDLE_STATUS
        assert "operation" in status.status.errorMessage.lower(), status.status
        again = client.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=operation))
        assert again.status.statusCode == ttypes.TStatusCode.INVALID_HANDLE_STATUS
        assert session.query("SELECT 41 + 1") == [[42]]
    finally:
        session.close()


FAILING_STATEMENTS = [
    "SELECT * FROM no_such_table",  # refused when planned
    "SELECT 'not a number'::INT",  # fails while it runs (CAST would give NULL, as Hive's)
]


@pytest.mark.parametrize("sql", FAILING_STATEMENTS, ids=["planning", "running"])
def test_a_failing_async_statement_reports_the_engines_error_through_the_status_sent_ahead(engine, kumiho, sql):
    """The gateway asks for a statement's first status before the client does; a statement
    that fails still shows ERROR with the engine's own message, as it does direct."""
    def failure(client, session_handle) -> tuple:
        operation = client.execute(session_handle, sql, run_async=True)
        reply = final_status(client, operation)
        client.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=operation))
        return reply.operationState, reply.errorMessage

    direct_client = ThriftClient(engine.port)
    try:
        direct = failure(direct_client, direct_client.open_session())
    finally:
        direct_client.close()
    session = open_session(kumiho)
    try:
        through = failure(session.client, session.handle)
        assert session.query("SELECT 41 + 1") == [[42]]
    finally:
        session.close()
    assert direct[0] == ttypes.TOperationState.ERROR_STATE, direct
    assert through == direct


def test_a_cancel_does_not_wait_for_a_status_poll_in_flight(kumiho):
    """A JDBC driver polls a running statement's status, which the engine holds for up to
    its long-poll wait, and cancels from another thread. The gateway sends the cancel to the
    engine on a connection of its own, so the poll in flight comes back CANCELED instead of
    holding the cancel until it returns."""
    import threading

    from test_cancel import ENDLESS_QUERY

    session = open_session(kumiho)
    canceller = ThriftClient(kumiho.port, sasl=True, user="alice")
    try:
        operation = session.client.execute(session.handle, ENDLESS_QUERY, run_async=True)
        polls = []  # (poll number, state)
        sending_second_poll = threading.Event()

        def poll_until_over():
            number = 0
            while True:
                number += 1
                if number == 2:
                    sending_second_poll.set()
                reply = session.client.client.GetOperationStatus(
                    ttypes.TGetOperationStatusReq(operationHandle=operation))
                polls.append((number, reply.operationState))
                if reply.operationState != ttypes.TOperationState.RUNNING_STATE:
                    return

        poller = threading.Thread(target=poll_until_over)
        poller.start()
        assert sending_second_poll.wait(30), polls
        cancel = canceller.client.CancelOperation(ttypes.TCancelOperationReq(operationHandle=operation))
        check(cancel.status, "CancelOperation")
        poller.join(30)
        assert not poller.is_alive(), polls
        # The poll sent before the cancel is the one that says so.
        assert polls[-1] == (2, ttypes.TOperationState.CANCELED_STATE), polls
        session.client.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=operation))
        assert session.query("SELECT 41 + 1") == [[42]]
    finally:
        canceller.close()
        session.close()


@pytest.mark.parametrize("mode", PYHIVE_MODES)
def test_pyhive_async_queries_and_statements_through_the_gateway_equal_the_engines(engine, kumiho, mode):
    """An async query is answered by the gateway before the engine has looked at it, with a
    handle that says it has a result set; PyHive reads only the handle's. Its columns and
    rows, and statements without rows (answered by the engine, a `SELECT ... INTO` too), are
    what the engine gives directly."""
    from pyhive import hive as pyhive

    statements = [
        "CREATE TABLE IF NOT EXISTS async_t AS SELECT 1 AS x",  # no result set
        "-- the answer\n(SELECT 41 + 1 AS answer)",
        "/* listing */ SHOW TABLES",
        "WITH t AS (SELECT 2 AS y) SELECT y, 'two' AS word FROM t",
        f"SELECT 3 AS z INTO async_into_{mode}",  # no result set
        f"DROP TABLE async_into_{mode}",  # the shared engine's tables as they were
    ]

    def answers(server):
        out = []
        with hive.connect(server, mode, user="ivan") as connection:
            cursor = connection.cursor()
            for sql in statements:
                cursor.execute(sql, async_=True)
                while cursor.poll().operationState in (ttypes.TOperationState.INITIALIZED_STATE,
                                                       ttypes.TOperationState.PENDING_STATE,
                                                       ttypes.TOperationState.RUNNING_STATE):
                    pass
                if cursor.description is None:
                    out.append(None)
                    with pytest.raises(pyhive.ProgrammingError):
                        cursor.fetchall()
                else:
                    out.append(([c[0] for c in cursor.description], cursor.fetchall()))
            cursor.close()
        return out

    through = answers(kumiho)
    assert through == answers(engine)
    assert through[0] is None and through[1] == (["answer"], [(42,)]), through
    assert through[4] is None, through


def test_a_cancel_right_after_an_async_query_was_answered_cancels_it(kumiho):
    """The gateway answers an async query before the engine has the statement; a cancel
    sent at once still reaches the statement, which ends CANCELED."""
    from test_cancel import ENDLESS_QUERY

    session = open_session(kumiho)
    try:
        for _ in range(3):
            operation = session.client.execute(session.handle, ENDLESS_QUERY, run_async=True)
            cancel = session.client.client.CancelOperation(ttypes.TCancelOperationReq(operationHandle=operation))
            check(cancel.status, "CancelOperation")
            assert final_status(session.client, operation).operationState == ttypes.TOperationState.CANCELED_STATE
            session.client.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=operation))
        assert session.query("SELECT 41 + 1") == [[42]]
    finally:
        session.close()


def test_an_async_query_on_an_engine_that_is_gone_fails_on_its_status_poll(kumiho):
    """The gateway answered the query before the engine could refuse it: the engine being
    gone is the statement's ERROR, naming the engine, on the client's status poll."""
    import os
    import signal

    from gateway_fixtures import engine_pids, wait_until

    session = open_session(kumiho)
    try:
        assert session.query("SELECT 1") == [[1]]
        pids = engine_pids(kumiho.work_dir)
        assert len(pids) == 1, pids
        os.kill(pids[0], signal.SIGKILL)
        wait_until(lambda: not engine_pids(kumiho.work_dir), "the engine to be gone")
        operation = session.client.execute(session.handle, "SELECT 2", run_async=True)
        reply = final_status(session.client, operation)
        assert reply.operationState == ttypes.TOperationState.ERROR_STATE, reply
        assert "engine" in reply.errorMessage, reply.errorMessage
    finally:
        session.close()


# Long enough (about 2 s in a debug build on 2 cores) to still run when the engine answers its
# first status poll, which it holds for 500 ms: at 120M rows (under 1 s) a busy machine's early
# FetchResults could take the rest of the margin, and the query finished before the first poll.
SLOW_GROUPS = "SELECT value % 4 AS k, count(*) AS n FROM generate_series(1, 300000000) GROUP BY value % 4 ORDER BY k"
SLOW_GROUP_COUNTS = [[0, 1, 2, 3], [75000000] * 4]


@pytest.mark.parametrize("poll_first", [True, False], ids=["polled", "fetched-unpolled"])
def test_a_query_still_running_after_the_first_status_poll_gets_all_its_rows(kumiho, poll_first):
    """With an async query answered ahead, the gateway sends its metadata and first batches
    behind its first status poll, on speculation. A query still running when that poll
    returns gets them refused; its metadata and rows are still whole and in order, whether
    the client polls first or fetches at once (refused, as direct, while it runs)."""
    session = open_session(kumiho)
    try:
        client = session.client
        assert session.query("SELECT 1") == [[1]]  # the session's fetch size is known
        operation = client.execute(session.handle, SLOW_GROUPS, run_async=True)
        if not poll_first:
            early = client.client.FetchResults(ttypes.TFetchResultsReq(
                operationHandle=operation, orientation=ttypes.TFetchOrientation.FETCH_NEXT, maxRows=2))
            assert early.status.statusCode == ttypes.TStatusCode.ERROR_STATUS, early.status
        states = []
        while not states or states[-1] == ttypes.TOperationState.RUNNING_STATE:
            reply = client.client.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=operation))
            check(reply.status, "GetOperationStatus")
            states.append(reply.operationState)
        # The case this test is for: the first poll came back while the query ran.
        assert states[0] == ttypes.TOperationState.RUNNING_STATE, states
        assert states[-1] == ttypes.TOperationState.FINISHED_STATE, states
        metadata = client.client.GetResultSetMetadata(ttypes.TGetResultSetMetadataReq(operationHandle=operation))
        check(metadata.status, "GetResultSetMetadata")
        assert [column.columnName for column in metadata.schema.columns] == ["k", "n"]
        columns = [[], []]
        while True:
            rows = client.fetch(operation, 2)
            batch = [column_values(column) for column in rows.columns]
            if not batch or not batch[0]:
                break
            columns[0] += batch[0]
            columns[1] += batch[1]
        assert columns == SLOW_GROUP_COUNTS
        client.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=operation))
        assert session.query("SELECT 41 + 1") == [[42]]
    finally:
        session.close()


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
def test_a_statements_overlay_reaches_the_engine_for_that_statement_only(kumiho, run_async):
    """`confOverlay` settings of one statement apply to it alone, whether the gateway forwards
    the statement (sync) or answers it ahead of the engine (async, with its own handle added
    to the overlay)."""
    session = open_session(kumiho)
    show = "SHOW datafusion.execution.batch_size"

    def shown(overlay):
        operation = session.client.execute(session.handle, show, run_async=run_async,
                                           overlay=overlay)
        wait_until_finished(session.client, operation)
        rows = session.client.fetch(operation, 10)
        session.client.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=operation))
        return column_values(rows.columns[1])

    try:
        assert shown({"datafusion.execution.batch_size": "7"}) == ["7"]
        assert shown(None) == ["8192"]
    finally:
        session.close()
