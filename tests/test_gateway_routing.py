"""Which engine a session reaches: share levels, subdomains, pools, and one launch for many sessions."""

from concurrent.futures import ThreadPoolExecutor

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from gateway_fixtures import engine_pids, live_registrations, open_session, ref_id_of, wait_until
from harness.beeline import binary_url, run_beeline
from harness.tcli import ttypes
from harness.thrift_client import check, column_values

VERSION_PREFIX = "kumiho_0.1.0"


def launched(gateway, user="alice", **settings):
    """Opens a session, waits for its engine, returns (session, launch result)."""
    session = open_session(gateway, user=user, configuration=settings)
    return session, session.wait_launched()


def test_user_level_one_engine_per_user_seen_by_beeline_and_registry(kumiho):
    first = run_beeline(binary_url(kumiho.port), ["select 1 as x"], user="alice")
    assert first.returncode == 0, first.describe()
    assert first.result_sets()[0] == [["x"], ["1"]], first.describe()
    second = run_beeline(binary_url(kumiho.port), ["select 2 as x"], user="alice")
    assert second.returncode == 0, second.describe()
    alice_space = f"{VERSION_PREFIX}_USER_DATAFUSION/alice/default"
    registrations = live_registrations(kumiho.work_dir, alice_space)
    assert len(registrations) == 1, registrations

    session, result = launched(kumiho, "alice")
    assert result["engine.ref.id"] == ref_id_of(registrations[0])
    assert result["engine.share.level"] == "USER"
    bob, bob_result = launched(kumiho, "bob")
    assert bob_result["engine.ref.id"] != result["engine.ref.id"]
    assert len(live_registrations(kumiho.work_dir, f"{VERSION_PREFIX}_USER_DATAFUSION/bob/default")) == 1
    session.close()
    bob.close()


def test_connection_level_engine_per_connection_gone_after_close(kumiho):
    one, one_result = launched(kumiho, "alice", **{"kyuubi.engine.share.level": "CONNECTION"})
    two, two_result = launched(kumiho, "alice", **{"kyuubi.engine.share.level": "CONNECTION"})
    assert one_result["engine.ref.id"] != two_result["engine.ref.id"]
    space = one_result["engine.space"]
    assert len(live_registrations(kumiho.work_dir, space)) == 1
    one.close()
    wait_until(lambda: not live_registrations(kumiho.work_dir, space), "the CONNECTION engine deregistered")
    assert len(live_registrations(kumiho.work_dir, two_result["engine.space"])) == 1
    two.close()


def test_a_connection_session_closed_before_its_launch_ends_leaves_no_engine(kumiho):
    """Closed at once, before its engine is up: the gateway opens no engine session for it,
    and its CONNECTION engine is stopped all the same; the next session is served."""
    session = open_session(kumiho, user="erin", configuration={"kyuubi.engine.share.level": "CONNECTION"})
    session.close()
    kumiho.wait_for_log(r"CONNECTION engine stopped with its session")
    assert not engine_pids(kumiho.work_dir)
    assert open_session(kumiho, user="erin").query("SELECT 1 + 1") == [[2]]


def test_group_level_users_of_one_group_share(kumiho):
    # `sync` and `nobody` both have the primary group `nogroup` on Debian.
    sync, sync_result = launched(kumiho, "sync", **{"kyuubi.engine.share.level": "GROUP"})
    nobody, nobody_result = launched(kumiho, "nobody", **{"kyuubi.engine.share.level": "GROUP"})
    assert sync_result["engine.ref.id"] == nobody_result["engine.ref.id"]
    assert "/nogroup/" in sync_result["engine.space"]
    sync.close()
    nobody.close()


def test_server_level_one_engine_for_all(kumiho):
    alice, alice_result = launched(kumiho, "alice", **{"kyuubi.engine.share.level": "SERVER"})
    bob, bob_result = launched(kumiho, "bob", **{"kyuubi.engine.share.level": "SERVER"})
    assert alice_result["engine.ref.id"] == bob_result["engine.ref.id"]
    assert alice.query("select 40 + 2")[0] == [42]
    alice.close()
    bob.close()


def execute(session, sql: str):
    """Runs a statement without a result set (DDL, SET) in a gateway session."""
    operation = session.client.execute(session.handle, sql)
    session.client.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=operation))


def error_of(session, sql: str) -> str:
    """The error message of a statement that must fail."""
    reply = session.client.client.ExecuteStatement(
        ttypes.TExecuteStatementReq(sessionHandle=session.handle, statement=sql))
    assert reply.status.statusCode == ttypes.TStatusCode.ERROR_STATUS, f"{sql} did not fail"
    return reply.status.errorMessage


def tables_named(session, name: str) -> list[tuple]:
    """GetTables' (TABLE_SCHEM, TABLE_NAME, TABLE_TYPE) rows for one table name."""
    reply = session.client.client.GetTables(ttypes.TGetTablesReq(sessionHandle=session.handle, tableName=name))
    check(reply.status, "GetTables")
    columns = [column_values(column) for column in session.client.fetch(reply.operationHandle, 100).columns]
    session.client.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=reply.operationHandle))
    return [(row[1], row[2], row[3]) for row in zip(*columns)]


def test_server_level_sessions_keep_their_temporary_views_variables_and_users(kumiho):
    """One engine serves alice twice and bob: a temporary view, a variable and the user
    belong to the session, and the view ends with its session."""
    server = {"kyuubi.engine.share.level": "SERVER"}
    alice, alice_result = launched(kumiho, "alice", **server)
    alice_two, _ = launched(kumiho, "alice", **server)
    bob, bob_result = launched(kumiho, "bob", **server)
    assert alice_result["engine.ref.id"] == bob_result["engine.ref.id"]
    execute(alice, "CREATE TEMPORARY VIEW tv AS SELECT 42 AS c")
    execute(alice, "SET hivevar:who=alice")
    assert alice.query("SELECT c FROM tv") == [[42]]
    assert alice.query("SELECT '${who}' AS w, current_user() AS u") == [["alice"], ["alice"]]
    assert ("tv" in sum(alice.query("SHOW TABLES"), []))
    assert tables_named(alice, "tv") == [(None, "tv", "VIEW")]
    for other in (bob, alice_two):
        assert "tv" in error_of(other, "SELECT c FROM tv")
        assert "tv" not in sum(other.query("SHOW TABLES"), [])
        assert tables_named(other, "tv") == []
        assert other.query("SELECT '${who}' AS w") == [["${who}"]]
    assert bob.query("SELECT current_user() AS u") == [["bob"]]
    alice.close()
    alice_again, _ = launched(kumiho, "alice", **server)
    assert "tv" in error_of(alice_again, "SELECT c FROM tv")
    for session in (alice_two, bob, alice_again):
        session.close()


def test_subdomains_give_separate_engines(kumiho):
    a, a_result = launched(kumiho, "alice", **{"kyuubi.engine.share.level.subdomain": "a"})
    b, b_result = launched(kumiho, "alice", **{"kyuubi.engine.share.level.subdomain": "b"})
    assert a_result["engine.ref.id"] != b_result["engine.ref.id"]
    assert a_result["engine.space"].endswith("/alice/a") and b_result["engine.space"].endswith("/alice/b")
    a.close()
    b.close()


def test_polling_pool_spreads_sessions_over_its_engines(kumiho):
    pool = {"kyuubi.engine.pool.size": "3", "kyuubi.engine.pool.selectPolicy": "POLLING"}
    sessions = [launched(kumiho, "alice", **pool) for _ in range(3)]
    engines = {result["engine.ref.id"] for _, result in sessions}
    subdomains = {result["engine.subdomain"] for _, result in sessions}
    assert len(engines) == 3, sessions
    assert subdomains == {"engine-pool-0", "engine-pool-1", "engine-pool-2"}
    for session, _ in sessions:
        session.close()


def test_twenty_concurrent_first_sessions_start_one_engine(kumiho):
    def first_session(_):
        session, result = launched(kumiho, "carol")
        session.close()
        return result["engine.ref.id"]

    with ThreadPoolExecutor(max_workers=20) as pool:
        engines = set(pool.map(first_session, range(20)))
    assert len(engines) == 1, engines
    space = f"{VERSION_PREFIX}_USER_DATAFUSION/carol/default"
    assert [ref_id_of(r) for r in live_registrations(kumiho.work_dir, space)] == list(engines)


def test_engine_sessions_opened_one_at_a_time_still_serve_every_client(start_kumiho):
    """With `--engine-session-opens 1`, twenty concurrent sessions queue for their engine
    sessions and each one's statement still gets its own answer."""
    kumiho = start_kumiho("--engine-session-opens", "1")

    def answer(n: int):
        session = open_session(kumiho, user="dora")
        try:
            return session.query(f"SELECT {n} * 2")
        finally:
            session.close()

    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(answer, range(20)))
    assert answers == [[[n * 2]] for n in range(20)]


CAPPED_CLUSTER = """\
registry:
  embedded:
    namespace: capped
engine:
  type: DATAFUSION
  share-level: USER
  idle-timeout: 5m
  initialize-timeout: 2m
limits:
  max-engines: 1
"""
LIMIT_MESSAGE = (
    "cluster `capped` runs its maximum of 1 engine (limits.max-engines): wait for an idle engine "
    "to stop, or ask the operator to raise the limit"
)


def first_statement_error(session) -> str:
    """Runs a statement as a client's first one and returns its ERROR message."""
    reply = session.client.client.ExecuteStatement(
        ttypes.TExecuteStatementReq(sessionHandle=session.handle, statement="SELECT 1", runAsync=False))
    assert reply.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS, reply.status
    status = session.client.client.GetOperationStatus(
        ttypes.TGetOperationStatusReq(operationHandle=reply.operationHandle))
    assert status.operationState == ttypes.TOperationState.ERROR_STATE, status
    return status.errorMessage


def test_a_cluster_at_its_max_engines_refuses_a_new_engine_until_one_stops(kumiho):
    """`limits.max-engines: 1`: alice's engine fills the cluster, so bob's launch fails and
    says why; once alice's engine stops (idle), bob's next session gets an engine."""
    kumiho.write_cluster("capped", CAPPED_CLUSTER)
    kumiho.wait_for_log(r"cluster added.*capped|capped.*cluster added")
    settings = {"kyuubi.session.cluster": "capped", "kyuubi.session.engine.idle.timeout": "PT3S"}
    alice, alice_result = launched(kumiho, "alice", **settings)
    alice_space = alice_result["engine.space"]
    assert alice_space == "/capped_0.1.0_USER_DATAFUSION/alice/default", alice_result
    # Engines of other clusters do not count: the default cluster's run beside it.
    other, _ = launched(kumiho, "carol")
    other.close()

    bob = open_session(kumiho, "bob", configuration=settings)
    assert LIMIT_MESSAGE in first_statement_error(bob)
    assert bob.launch_status().operationState == ttypes.TOperationState.ERROR_STATE
    assert LIMIT_MESSAGE in bob.launch_status().errorMessage
    assert not live_registrations(kumiho.work_dir, "capped_0.1.0_USER_DATAFUSION/bob/default")
    bob.close()
    # A session of the running engine is never refused.
    again, again_result = launched(kumiho, "alice", **settings)
    assert again_result["engine.ref.id"] == alice_result["engine.ref.id"]
    again.close()

    alice.close()
    wait_until(lambda: not live_registrations(kumiho.work_dir, alice_space), "alice's idle engine stopped")
    bob_again, bob_result = launched(kumiho, "bob", **settings)
    assert bob_result["engine.space"] == "/capped_0.1.0_USER_DATAFUSION/bob/default"
    assert bob_again.query("SELECT 1") == [[1]]
    bob_again.close()
