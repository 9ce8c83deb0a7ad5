"""A running query cancelled from the client ends CANCELED, and its work really stops."""

import time

from harness import hive
from harness.hive import ttypes

# Aggregates a trillion generated rows: hours of CPU, no memory to speak of.
ENDLESS_QUERY = "SELECT sum(value % 7) AS s FROM generate_series(1, 1000000000000)"
# CPU seconds the engine must burn to show the query is really running.
BUSY_CPU_S = 0.5
# After the cancel, a window of this many seconds must see (almost) no CPU use.
QUIET_WINDOW_S = 1.0
QUIET_CPU_S = 0.05
DEADLINE_S = 30


def wait_for(condition, what: str, deadline_s: float = DEADLINE_S, interval_s: float = 0.05):
    deadline = time.monotonic() + deadline_s
    while not (result := condition()):
        assert time.monotonic() < deadline, f"timed out after {deadline_s} s waiting for {what}"
        time.sleep(interval_s)
    return result


def test_cancel_stops_a_running_query(start_own_engine):
    engine = start_own_engine()
    connection = hive.connect(engine)
    try:
        cursor = connection.cursor()
        cursor.execute(ENDLESS_QUERY, async_=True)
        started_cpu = engine.cpu_seconds()
        wait_for(lambda: engine.cpu_seconds() - started_cpu >= BUSY_CPU_S, "the query to use CPU")
        assert cursor.poll().operationState == ttypes.TOperationState.RUNNING_STATE

        cursor.cancel()
        state = wait_for(
            lambda: (s := cursor.poll().operationState) != ttypes.TOperationState.RUNNING_STATE and s,
            "the operation to leave RUNNING",
        )
        assert state == ttypes.TOperationState.CANCELED_STATE, ttypes.TOperationState._VALUES_TO_NAMES[state]

        windows = []

        def quiet_window():
            before = engine.cpu_seconds()
            time.sleep(QUIET_WINDOW_S)
            windows.append(engine.cpu_seconds() - before)
            return windows[-1] <= QUIET_CPU_S

        # Stopping may take a moment (the plan notices at its next batch): poll windows.
        deadline = time.monotonic() + 10
        while not quiet_window():
            assert time.monotonic() < deadline, f"engine still busy after cancel: CPU s per window {windows}"

        # The engine and the same session go on serving.
        cursor.execute("SELECT count(*) FROM tpch.nation")
        assert cursor.fetchall() == [(25,)]
    finally:
        connection.close()
