"""Gateway sessions: answered before any engine, closed when idle, refused when unknown."""

import pytest

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from gateway_fixtures import DEFAULT_CLUSTER, SessionRefused, local_socket_entries, open_session, wait_until
from harness.tcli import ttypes

DBMS_NAME = 17
DBMS_VER = 18


def get_info(session, info_type):
    return session.client.client.GetInfo(ttypes.TGetInfoReq(sessionHandle=session.handle, infoType=info_type))


def test_get_info_is_answered_by_the_gateway_before_the_engine(kumiho):
    session = open_session(kumiho, "judy")
    name = get_info(session, DBMS_NAME)
    assert name.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS
    assert name.infoValue.stringValue == "Kumiho"
    assert get_info(session, DBMS_VER).infoValue.stringValue
    session.close()


def test_get_info_names_the_engine_when_the_session_or_its_cluster_asks(kumiho):
    """Kyuubi's `kyuubi.server.info.provider=ENGINE`: tools that recognise the DBMS by name get
    the engine's name and version, once its launch is done; the cluster sets the default and a
    session may choose either way."""
    session = open_session(kumiho, "judy", configuration={"kyuubi.server.info.provider": "engine"})
    assert get_info(session, DBMS_NAME).infoValue.stringValue == "Kumiho DataFusion Engine"
    assert get_info(session, DBMS_VER).infoValue.stringValue
    session.close()

    kumiho.write_cluster("by-engine", DEFAULT_CLUSTER + "info-provider: ENGINE\n")
    kumiho.wait_for_log(r"cluster added.*by-engine|by-engine.*cluster added")
    by_cluster = open_session(kumiho, "judy", configuration={"kyuubi.session.cluster": "by-engine"})
    assert get_info(by_cluster, DBMS_NAME).infoValue.stringValue == "Kumiho DataFusion Engine"
    by_cluster.close()
    chosen = open_session(kumiho, "judy", configuration={
        "kyuubi.session.cluster": "by-engine", "kyuubi.server.info.provider": "SERVER"})
    assert get_info(chosen, DBMS_NAME).infoValue.stringValue == "Kumiho"
    chosen.close()

    with pytest.raises(SessionRefused, match=r"kyuubi.server.info.provider: `both` is not a valid "
                                             r"server info provider; use one of SERVER, ENGINE"):
        open_session(kumiho, "judy", configuration={"kyuubi.server.info.provider": "both"})


def test_unknown_session_gets_invalid_handle(kumiho):
    session = open_session(kumiho, "judy")
    session.close()
    other = open_session(kumiho, "judy")
    stale = other.client.client.GetInfo(ttypes.TGetInfoReq(sessionHandle=session.handle, infoType=DBMS_NAME))
    assert stale.status.statusCode == ttypes.TStatusCode.INVALID_HANDLE_STATUS, stale.status
    assert "open a new session" in stale.status.errorMessage
    other.close()


def test_a_hang_up_closes_the_sessions_its_connection_left_open_and_no_other(kumiho):
    """A client may open several sessions on one connection and close some: when it hangs
    up, the gateway closes the ones it left open, and sessions of other connections go on."""
    first = open_session(kumiho, "judy")
    opened_too = first.client.client.OpenSession(ttypes.TOpenSessionReq(
        client_protocol=ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10, username="judy"))
    closed_by_client = first.client.client.OpenSession(ttypes.TOpenSessionReq(
        client_protocol=ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10, username="judy"))
    first.client.client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=closed_by_client.sessionHandle))
    other = open_session(kumiho, "judy")

    def answers(handle) -> bool:
        reply = other.client.client.GetInfo(ttypes.TGetInfoReq(sessionHandle=handle, infoType=DBMS_NAME))
        return reply.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS

    assert answers(first.handle) and answers(opened_too.sessionHandle)
    mark = len(kumiho.log())
    first.client.close()
    wait_until(lambda: not answers(first.handle) and not answers(opened_too.sessionHandle),
               "the hung-up connection's sessions to be closed")
    closed = [line for line in kumiho.log()[mark:].splitlines()
              if "client disconnected without closing its session" in line]
    assert len(closed) == 2, closed
    assert answers(other.handle)
    other.close()


def test_idle_sessions_are_closed(start_kumiho):
    kumiho = start_kumiho("--session-idle-timeout", "2s")
    session = open_session(kumiho, "judy")
    assert get_info(session, DBMS_NAME).status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS
    mark = len(kumiho.log())
    kumiho.wait_for_log(r"closing idle session", after=mark)
    reply = get_info(session, DBMS_NAME)
    assert reply.status.statusCode == ttypes.TStatusCode.INVALID_HANDLE_STATUS, reply.status
    session.client.close()


def test_the_gateway_reaches_an_engine_on_this_host_over_its_local_socket(kumiho):
    """An engine the gateway launched on a loopback address listens on a local socket too,
    and the gateway's engine session goes over it; closing the session closes it."""
    session = open_session(kumiho, "judy")
    ref_id = session.wait_launched()["engine.ref.id"]
    name = f"kumiho-engine/{ref_id}"
    assert session.query("SELECT 41 + 1") == [[42]]
    states = local_socket_entries(name)
    assert "01" in states, states  # the engine listens
    assert "03" in states, states  # the gateway's engine session is connected there
    session.close()
    wait_until(lambda: "03" not in local_socket_entries(name), "the engine session's socket to close")


def test_a_session_with_a_call_in_flight_is_not_idle(start_kumiho):
    """A synchronous statement running longer than the idle timeout keeps its session: the
    client gets the statement's rows, and the session closes only once idle after it."""
    import time

    from harness.thrift_client import column_values

    kumiho = start_kumiho("--session-idle-timeout", "2s")
    session = open_session(kumiho, "judy")
    session.wait_launched()
    started = time.monotonic()
    operation = session.client.execute(
        session.handle,
        "SELECT value % 3 AS k, count(*) AS n FROM generate_series(1, 900000000) GROUP BY value % 3 ORDER BY k")
    # The call outlasted the idle timeout and the reaper's next look (each second).
    assert time.monotonic() - started > 3.5, "the statement was too quick to test anything"
    rows = session.client.fetch(operation, 10)
    assert [column_values(column) for column in rows.columns] == [[0, 1, 2], [300000000] * 3]
    mark = len(kumiho.log())
    kumiho.wait_for_log(r"closing idle session", after=mark)
    assert get_info(session, DBMS_NAME).status.statusCode == ttypes.TStatusCode.INVALID_HANDLE_STATUS
    session.client.close()


def test_idle_operations_are_closed_here_and_in_the_engine(start_kumiho):
    """An operation its client leaves (a BI tool that never closes its statements) is closed
    after operation-idle-timeout, in the gateway and in the engine, where its results were
    held; the client's next call on it says so, and its session goes on."""
    from harness.thrift_client import ThriftClient

    kumiho = start_kumiho("--operation-idle-timeout", "2s")
    session = open_session(kumiho, "judy")
    engine_port = int(session.wait_launched()["engine.address"].rsplit(":", 1)[1])
    operation = session.client.execute(session.handle, "SELECT value FROM generate_series(1, 100000)")
    assert len(session.client.fetch(operation, 10).columns[0].i64Val.values) == 10
    # Ask the engine itself, as the gateway would, whether it still holds the operation.
    secret = (kumiho.work_dir / "internal-secret").read_text().strip()
    engine = ThriftClient(engine_port, sasl=True, user="judy", password=secret)

    def engine_holds_it() -> bool:
        reply = engine.client.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=operation))
        return reply.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS

    try:
        assert engine_holds_it()
        mark = len(kumiho.log())
        kumiho.wait_for_log(r"closing idle operation", after=mark)
        reply = session.client.client.FetchResults(ttypes.TFetchResultsReq(
            operationHandle=operation, orientation=ttypes.TFetchOrientation.FETCH_NEXT, maxRows=10))
        assert reply.status.statusCode == ttypes.TStatusCode.INVALID_HANDLE_STATUS, reply.status
        assert "timed out" in reply.status.errorMessage and "run the statement again" in reply.status.errorMessage
        wait_until(lambda: not engine_holds_it(), "the engine to close the idle operation", timeout=10)
        assert session.query("SELECT 1") == [[1]]
    finally:
        engine.close()
        session.close()
