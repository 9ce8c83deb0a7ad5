"""A cluster's session-conf rules: restricted keys refuse the session, ignored keys never reach the engine."""

import time

import pytest
from pyhive import hive
from TCLIService.ttypes import TOperationState

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from gateway_fixtures import DEFAULT_CLUSTER, SessionRefused, engine_pids, open_session
from harness.beeline import binary_url, run_beeline
from harness.engine import HOST

RULED_CLUSTER = DEFAULT_CLUSTER + """\
super-users: [etl]
session-conf:
  restrict: [spark.jars, spark.driver.*]
  ignore: [spark.ui.enabled]
"""


@pytest.fixture
def ruled_kumiho(gateway_dirs, start_kumiho):
    """A gateway whose default cluster restricts spark.jars and spark.driver.*, and ignores
    spark.ui.enabled."""
    _, cluster_dir = gateway_dirs
    (cluster_dir / "default.yaml").write_text(RULED_CLUSTER)
    return start_kumiho()


def test_restricted_key_in_the_jdbc_url_refuses_the_connection_naming_the_key(ruled_kumiho):
    run = run_beeline(binary_url(ruled_kumiho.port, options="?spark.jars=/tmp/x.jar"), ["select 1 as x"])
    output = run.stdout + run.stderr
    assert run.returncode != 0, run.describe()
    assert "`spark.jars` is restricted on cluster `default`" in output, run.describe()
    # Refused at OpenSession: no engine was started for it.
    assert engine_pids(ruled_kumiho.work_dir) == []


def test_prefix_rules_refuse_super_users_too(ruled_kumiho):
    with pytest.raises(SessionRefused) as refused:
        open_session(ruled_kumiho, "etl", configuration={"set:hivevar:spark.driver.extraJavaOptions": "-Dx=1"})
    message = str(refused.value)
    assert "`spark.driver.extraJavaOptions`" in message and "`spark.driver.*`" in message, message


def test_ignored_key_does_not_reach_the_engine_and_others_do(ruled_kumiho):
    url = binary_url(ruled_kumiho.port, options="?spark.ui.enabled=false;spark.sql.shuffle.partitions=7")
    run = run_beeline(url, ["set spark.ui.enabled", "set spark.sql.shuffle.partitions"])
    assert run.returncode == 0, run.describe()
    assert run.result_sets() == [
        [["set"], ["spark.ui.enabled is undefined"]],
        [["set"], ["spark.sql.shuffle.partitions=7"]],
    ], run.describe()
    # The first statement's log begins with the launch log, which says what was dropped.
    assert "settings ignored by cluster default (session-conf.ignore): spark.ui.enabled" in run.stderr, run.describe()


def test_rule_edits_apply_to_the_next_session_and_bad_entries_are_reported_with_their_line(kumiho):
    before = open_session(kumiho, "alice", configuration={"spark.files": "/tmp/f"})
    before.close()

    mark = len(kumiho.log())
    kumiho.write_cluster("default", DEFAULT_CLUSTER + "session-conf:\n  restrict: ['spark.files*']\n")
    kumiho.wait_for_log(r"cluster reloaded", after=mark)
    with pytest.raises(SessionRefused) as refused:
        open_session(kumiho, "alice", configuration={"set:hiveconf:spark.files": "/tmp/f"})
    assert "`spark.files`" in str(refused.value), refused.value

    mark = len(kumiho.log())
    kumiho.write_cluster("default", DEFAULT_CLUSTER + "session-conf:\n  restrict:\n    - spark.*.extraJavaOptions\n")
    reported = kumiho.wait_for_log(r"default\.yaml.*line \d+.*", after=mark)
    assert "may only end" in reported and "stays in force" in reported, reported
    # The last good rules stay in force.
    with pytest.raises(SessionRefused):
        open_session(kumiho, "alice", configuration={"spark.files": "/tmp/f"})


ENDLESS_QUERY = "SELECT sum(value % 7) AS s FROM generate_series(1, 1000000000000)"


def test_a_statement_past_the_query_timeout_ends_timed_out_and_a_session_cannot_lengthen_it(gateway_dirs, start_kumiho):
    _, cluster_dir = gateway_dirs
    (cluster_dir / "default.yaml").write_text(DEFAULT_CLUSTER + "limits:\n  query-timeout: 2s\n")
    gateway = start_kumiho()
    # Asking for an hour in the JDBC URL does not lift the cluster's two seconds.
    url = binary_url(gateway.port, options="?kyuubi.operation.query.timeout=PT1H")
    run = run_beeline(url, ["select 'before' as b", ENDLESS_QUERY, "select 'after' as a"])
    assert run.result_sets()[0] == [["b"], ["before"]], run.describe()
    assert run.returncode != 0, run.describe()
    assert "timed out" in (run.stdout + run.stderr).lower(), run.describe()
    # The session's own shorter timeout, over PyHive; the session goes on after it.
    connection = hive.connect(HOST, gateway.port, username="tim",
                              configuration={"kyuubi.operation.query.timeout": "PT1S"})
    try:
        cursor = connection.cursor()
        cursor.execute(ENDLESS_QUERY, async_=True)
        deadline = time.monotonic() + 60
        state = cursor.poll().operationState
        while state in (TOperationState.INITIALIZED_STATE, TOperationState.PENDING_STATE,
                        TOperationState.RUNNING_STATE):
            assert time.monotonic() < deadline, "the statement never timed out"
            time.sleep(0.2)
            state = cursor.poll().operationState
        assert state == TOperationState.TIMEDOUT_STATE, state
        cursor.execute("select 1 as one")
        assert cursor.fetchall() == [(1,)]
    finally:
        connection.close()
