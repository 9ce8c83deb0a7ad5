"""Failures users and operators meet: a client killed mid-query or mid-fetch, an engine killed
under its sessions, a broken cluster file, a launch that cannot succeed. Each test checks what
the client sees and that nothing is left behind on the engine or in the registry."""

import os
import subprocess
import sys
import time

import pytest

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from gateway_fixtures import engine_pids_on, local_socket_entries, open_session, wait_until
from harness.engine import CLOCK_TICKS, HOST

# Minutes of work for a debug engine: still running whenever a test kills its client.
SLOW_QUERY = "SELECT value % 7 AS k, count(*) AS n FROM generate_series(1, 5000000000) GROUP BY value % 7"
LONG_RESULT = "SELECT value FROM generate_series(1, 100000000)"

# A PyHive client, run as its own process so that the test can kill it as a user would (kill
# -9 of a notebook kernel, a crashed job): no CloseOperation, no CloseSession, only the kernel
# closing its socket.
PYHIVE_CLIENT = """
import sys
from pyhive import hive

host, port, user, level, mode, sql = sys.argv[1:]
connection = hive.connect(host, int(port), username=user,
                          configuration={"kyuubi.engine.share.level": level})
cursor = connection.cursor()
print("connected", flush=True)
if mode == "query":
    cursor.execute(sql)  # PyHive's default: synchronous, one call until the query is over
elif mode == "poll":
    cursor.execute(sql, async_=True)  # as beeline runs statements: status polls
    while cursor.poll().operationState in (0, 1, 7):  # INITIALIZED, RUNNING, PENDING
        pass
else:
    cursor.execute(sql)
    cursor.fetchmany(1000)
    print("fetching", flush=True)
    while cursor.fetchmany(1000):
        pass
print("done", flush=True)
"""


def start_pyhive_client(gateway, user: str, level: str, mode: str, sql: str) -> subprocess.Popen:
    client = subprocess.Popen(
        [sys.executable, "-c", PYHIVE_CLIENT, HOST, str(gateway.port), user, level, mode, sql],
        stdout=subprocess.PIPE, text=True)
    assert client.stdout.readline().strip() == "connected", "the PyHive client did not connect"
    return client


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        after_name = stat.read().rsplit(")", 1)[1].split()
    return (int(after_name[11]) + int(after_name[12])) / CLOCK_TICKS


def cpu_over(pid: int, seconds: float) -> float:
    before = cpu_seconds(pid)
    time.sleep(seconds)
    return cpu_seconds(pid) - before


def wait_until_busy(pid: int):
    """Waits until the engine is working (its query runs)."""
    wait_until(lambda: cpu_over(pid, 0.5) > 0.25, "the engine to run the query")


def connection_engine_pids(gateway) -> list[int]:
    return engine_pids_on(str(gateway.work_dir), "_CONNECTION_")


@pytest.mark.parametrize("mode", ["query", "poll", "fetch"])
def test_a_client_killed_mid_query_or_mid_fetch_takes_its_connection_engine_with_it(kumiho, mode):
    """PyHive runs a statement synchronously: one ExecuteStatement call held until the query
    is over. A client killed meanwhile is noticed at once, not when the query ends: its
    session is closed and its CONNECTION engine stops; so with a client polling (as beeline
    does) and one fetching a long result."""
    sql = LONG_RESULT if mode == "fetch" else SLOW_QUERY
    client = start_pyhive_client(kumiho, "kilian", "CONNECTION", mode, sql)
    try:
        wait_until(lambda: len(connection_engine_pids(kumiho)) == 1, "the CONNECTION engine to start")
        engine = connection_engine_pids(kumiho)[0]
        if mode != "fetch":
            wait_until_busy(engine)
        else:
            assert client.stdout.readline().strip() == "fetching"
        mark = len(kumiho.log())
        client.kill()
        client.wait()
        wait_until(lambda: not os.path.exists(f"/proc/{engine}"),
                   "the CONNECTION engine to stop after its client was killed", timeout=20)
        kumiho.wait_for_log(r"client disconnected without closing its session", after=mark, timeout=1)
    finally:
        client.kill()
        client.wait()


def test_a_client_killed_mid_query_frees_its_shared_engine_of_the_query(kumiho):
    """On a USER engine the other sessions go on, and the killed client's query stops at once
    (its engine session is closed, and its query with it), instead of running to its end."""
    other = open_session(kumiho, "kilian")
    try:
        ref_id = other.wait_launched()["engine.ref.id"]
        socket = f"kumiho-engine/{ref_id}"
        assert local_socket_entries(socket).count("03") == 1  # `other`'s engine session
        engine = engine_pids_on(str(kumiho.work_dir), ref_id)[0]
        client = start_pyhive_client(kumiho, "kilian", "USER", "query", SLOW_QUERY)
        try:
            wait_until_busy(engine)
            assert local_socket_entries(socket).count("03") == 2
            client.kill()
            client.wait()
            wait_until(lambda: local_socket_entries(socket).count("03") == 1,
                       "the killed client's engine session to be closed", timeout=20)
            wait_until(lambda: cpu_over(engine, 1.0) < 0.3, "the engine to stop the killed client's query",
                       timeout=20)
        finally:
            client.kill()
            client.wait()
        assert other.query("SELECT 6 * 7") == [[42]]
    finally:
        other.close()


@pytest.fixture(params=["embedded", "zookeeper"])
def registry_kind(request, tmp_path, gateway_dirs):
    """The default cluster on each registry: embedded, or a ZooKeeper of the test's own whose
    session timeout (30 s) is longer than the test waits for anything."""
    if request.param == "embedded":
        yield None
        return
    from harness.zookeeper import start_zookeeper

    from gateway_fixtures import kill_engines_on, zookeeper_cluster

    server = start_zookeeper(tmp_path)
    _, cluster_dir = gateway_dirs
    (cluster_dir / "default.yaml").write_text(
        zookeeper_cluster(server.address).replace("session-timeout: 10s", "session-timeout: 30s"))
    yield server
    kill_engines_on(server.address)
    server.stop()


def registrations(gateway, zookeeper, space: str) -> list[str]:
    from gateway_fixtures import live_registrations

    if zookeeper is None:
        return live_registrations(gateway.work_dir, space)
    return [name for name in zookeeper.children(space) if name.startswith("serviceUri=")]


def engine_pid_of(ref_id: str) -> int:
    [pid] = engine_pids_on(ref_id)
    return pid


def test_an_engine_killed_under_a_session_fails_its_next_call_and_a_new_session_gets_a_new_engine(
        registry_kind, start_kumiho):
    """kill -9 of a shared engine: the session on it gets an error naming the engine and
    saying what to do, at once; a new session of the same user gets a new engine at once,
    whatever the registry (ZooKeeper would list the dead engine until its session times out),
    and the dead engine's registration is gone."""
    from gateway_fixtures import ref_id_of
    from harness.tcli import ttypes

    kumiho = start_kumiho()
    first = open_session(kumiho, "kira")
    second = None
    try:
        launched = first.wait_launched()
        space, dead = launched["engine.space"], launched["engine.ref.id"]
        assert first.query("SELECT 1") == [[1]]
        assert [ref_id_of(r) for r in registrations(kumiho, registry_kind, space)] == [dead]
        os.kill(engine_pid_of(dead), 9)
        wait_until(lambda: not engine_pids_on(dead), "the engine to be gone")

        reply = first.client.client.ExecuteStatement(ttypes.TExecuteStatementReq(
            sessionHandle=first.handle, statement="SELECT 2", runAsync=False))
        assert reply.status.statusCode == ttypes.TStatusCode.ERROR_STATUS, reply.status
        assert reply.status.sqlState == "08S01", reply.status
        message = reply.status.errorMessage
        assert launched["engine.id"] in message and launched["engine.address"] in message, message
        assert "reconnect" in message, message

        started = time.monotonic()
        second = open_session(kumiho, "kira")
        relaunched = second.wait_launched()
        assert relaunched["engine.ref.id"] != dead
        assert second.query("SELECT 3") == [[3]]
        assert time.monotonic() - started < 20
        assert [ref_id_of(r) for r in registrations(kumiho, registry_kind, space)] == [relaunched["engine.ref.id"]]
        if registry_kind is not None:
            assert any("the engine is gone; removing its registration" in line for line in second.launch_log())
    finally:
        first.close()
        if second:
            second.close()


def test_broken_cluster_files_keep_sessions_working_and_say_what_is_wrong_until_fixed(kumiho):
    """An operator breaks cluster files while the gateway runs: a session open on the cluster
    goes on, new sessions get its last good version, the log names the file and the line,
    a cluster whose file never loaded is reported broken (not unknown) to its sessions, and
    fixing the files works without a restart."""
    from gateway_fixtures import DEFAULT_CLUSTER, SessionRefused

    running = open_session(kumiho, "bree")
    try:
        assert running.wait_launched()["engine.share.level"] == "USER"
        breakages = {
            "an unknown key": DEFAULT_CLUSTER.replace("share-level: USER", "share-levle: SERVER"),
            "a wrong type": DEFAULT_CLUSTER.replace("idle-timeout: 5m", "idle-timeout: [5m]"),
            "bad YAML": DEFAULT_CLUSTER.replace("share-level: USER", "share-level: [SERVER"),
        }
        for what, text in breakages.items():
            mark = len(kumiho.log())
            kumiho.write_cluster("default", text.replace("USER", "SERVER"))
            reported = kumiho.wait_for_log(r"default\.yaml.*", after=mark)
            assert "line" in reported and "stays in force" in reported, (what, reported)
            assert running.query("SELECT 1") == [[1]], what
            fresh = open_session(kumiho, "bree")
            assert fresh.wait_launched()["engine.share.level"] == "USER", what
            fresh.close()

        mark = len(kumiho.log())
        kumiho.write_cluster("adhoc", "engine:\n  share-level: SERVER\n  bogus: 1\n")
        kumiho.wait_for_log(r"adhoc\.yaml.*bogus", after=mark)
        with pytest.raises(SessionRefused) as refused:
            open_session(kumiho, "bree", configuration={"kyuubi.session.cluster": "adhoc"})
        message = str(refused.value)
        assert "adhoc.yaml is broken" in message and "ask an operator" in message, message
        assert "unknown" not in message, message

        mark = len(kumiho.log())
        kumiho.write_cluster("adhoc", "engine:\n  share-level: SERVER\n")
        kumiho.write_cluster("default", DEFAULT_CLUSTER.replace("share-level: USER", "share-level: SERVER"))
        kumiho.wait_for_log(r"cluster added cluster=adhoc", after=mark)
        kumiho.wait_for_log(r"cluster reloaded cluster=default", after=mark)
        fixed = open_session(kumiho, "bree", configuration={"kyuubi.session.cluster": "adhoc"})
        assert fixed.wait_launched()["engine.share.level"] == "SERVER"
        fixed.close()
        assert running.query("SELECT 2") == [[2]]
    finally:
        running.close()


def test_failed_launches_say_why_hold_no_place_and_a_retry_after_the_fix_works(
        registry_kind, start_kumiho, gateway_dirs, tmp_path):
    """The engine program hangs without registering, exits at once, or is missing: each
    session's launch fails with the reason and the engine log's last lines, leaves no process
    behind and holds no place of limits.max-engines (1 here) nor its launch lock, on either
    registry, so the retry after the fix launches the engine."""
    from harness.engine import build_engine
    from harness.tcli import ttypes

    mode = tmp_path / "engine-mode"
    program = tmp_path / "bin" / "kumiho-engine"
    program.parent.mkdir()
    program.write_text(f"""#!/bin/sh
case "$(cat {mode} 2>/dev/null)" in
  hang) echo "starting, slowly"; exec sleep 600;;
  exit) echo "cannot start: simulated failure" >&2; exit 3;;
esac
exec {build_engine()} "$@"
""")
    program.chmod(0o755)
    kumiho = start_kumiho("--engine-binary", str(program))
    cluster = (gateway_dirs[1] / "default.yaml").read_text()
    kumiho.write_cluster("default", cluster.replace("initialize-timeout: 2m", "initialize-timeout: 3s")
                         + "limits:\n  max-engines: 1\n")
    kumiho.wait_for_log(r"cluster reloaded cluster=default")

    def launch_error() -> str:
        session = open_session(kumiho, "lena")
        try:
            deadline = time.monotonic() + 60
            while (status := session.launch_status()).operationState not in (
                    ttypes.TOperationState.FINISHED_STATE, ttypes.TOperationState.ERROR_STATE):
                assert time.monotonic() < deadline, "the launch never ended"
                time.sleep(0.1)
            if status.operationState == ttypes.TOperationState.FINISHED_STATE:
                assert session.query("SELECT 5") == [[5]]
                return ""
            # What plain beeline sees: its first statement fails with the launch's reason.
            operation = session.client.execute(session.handle, "SELECT 1", run_async=True)
            failed = session.client.client.GetOperationStatus(
                ttypes.TGetOperationStatusReq(operationHandle=operation))
            assert failed.operationState == ttypes.TOperationState.ERROR_STATE, failed
            assert failed.errorMessage == status.errorMessage
            return status.errorMessage
        finally:
            session.close()

    mode.write_text("hang")
    message = launch_error()
    assert "did not register within 3s" in message and "starting, slowly" in message, message
    assert "initialize.timeout" in message, message
    wait_until(lambda: "sleep 600" not in subprocess.run(["ps", "-eo", "args"], capture_output=True,
                                                         text=True).stdout, "the hung engine to be killed")
    mode.write_text("exit")
    message = launch_error()
    assert "exit status: 3" in message and "simulated failure" in message, message
    mode.write_text("")
    program.rename(program.with_suffix(".away"))
    message = launch_error()
    assert f"{program} not found" in message, message
    program.with_suffix(".away").rename(program)
    assert launch_error() == ""


def test_an_http_session_outlives_a_call_its_client_gave_up_on(kumiho):
    """Over HTTP a session outlives its connections (HiveServer2's semantics): a client that
    gives up on a synchronous statement (its socket timeout, a proxy's idle timeout) and comes
    back on a new connection finds its session working, once the statement is over, instead
    of an engine connection left out of step."""
    import base64

    from thrift.protocol import TBinaryProtocol
    from thrift.transport import THttpClient

    from harness.tcli import TCLIService, ttypes

    def http_client(timeout_ms: int | None = None):
        transport = THttpClient.THttpClient(f"http://{HOST}:{kumiho.http_port}/cliservice")
        transport.setCustomHeaders({"Authorization": "Basic " + base64.b64encode(b"hugo:x").decode()})
        if timeout_ms:
            transport.setTimeout(timeout_ms)
        return transport, TCLIService.Client(TBinaryProtocol.TBinaryProtocol(transport))

    def execute(client, sql):
        return client.ExecuteStatement(ttypes.TExecuteStatementReq(sessionHandle=handle, statement=sql, runAsync=False))

    transport, client = http_client()
    opened = client.OpenSession(ttypes.TOpenSessionReq(
        client_protocol=ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10, username="hugo", configuration={}))
    handle = opened.sessionHandle
    try:
        assert execute(client, "SELECT 1").status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS
        impatient_transport, impatient = http_client(timeout_ms=500)
        with pytest.raises(TimeoutError):
            execute(impatient, "SELECT value % 7 AS k, count(*) FROM generate_series(1, 300000000) GROUP BY value % 7")
        impatient_transport.close()
        again = execute(client, "SELECT 2")
        assert again.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS, again.status
        rows = client.FetchResults(ttypes.TFetchResultsReq(
            operationHandle=again.operationHandle, orientation=ttypes.TFetchOrientation.FETCH_NEXT, maxRows=10))
        assert rows.results.columns[0].i32Val.values == [2]
    finally:
        client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=handle))
        transport.close()


def test_an_engine_that_accepts_but_never_answers_fails_new_sessions_in_bounded_time(kumiho):
    """A hung engine (SIGSTOP here; a wedged JVM alike) still has its connections accepted by
    the kernel: a new session's launch gives up after the login timeout (15 s by default,
    Kyuubi's; 2 s here, set by the session with Kyuubi's key) with a message saying so, and
    closing a session on it returns, instead of waiting for ever; the engine serves again once
    it resumes."""
    import signal

    from harness.tcli import ttypes

    first = open_session(kumiho, "hank")
    ref_id = first.wait_launched()["engine.ref.id"]
    engine = engine_pid_of(ref_id)
    os.kill(engine, signal.SIGSTOP)
    try:
        started = time.monotonic()
        second = open_session(kumiho, "hank", configuration={"kyuubi.session.engine.login.timeout": "2s"})
        while (status := second.launch_status()).operationState not in (
                ttypes.TOperationState.FINISHED_STATE, ttypes.TOperationState.ERROR_STATE):
            assert time.monotonic() - started < 40, "the launch still waits for the hung engine"
            time.sleep(0.2)
        assert status.operationState == ttypes.TOperationState.ERROR_STATE
        assert "no answer within 2s" in status.errorMessage, status.errorMessage
        assert "hung or overloaded" in status.errorMessage, status.errorMessage
        second.close()
        # Closing a session on the hung engine does not wait for it either.
        started = time.monotonic()
        first.close()
        assert time.monotonic() - started < 10
    finally:
        os.kill(engine, signal.SIGCONT)
    again = open_session(kumiho, "hank")
    assert again.wait_launched()["engine.ref.id"] == ref_id
    assert again.query("SELECT 4") == [[4]]
    again.close()


def test_a_client_that_hangs_up_right_after_close_session_still_stops_its_connection_engine(kumiho):
    """CloseSession's cleanup (the engine session, then the CONNECTION engine) runs to its end
    even when the client does not wait for the reply."""
    from harness.tcli import ttypes

    session = open_session(kumiho, "cleo", configuration={"kyuubi.engine.share.level": "CONNECTION"})
    ref_id = session.wait_launched()["engine.ref.id"]
    assert engine_pids_on(ref_id)
    session.client.client.send_CloseSession(ttypes.TCloseSessionReq(sessionHandle=session.handle))
    session.client.close()
    wait_until(lambda: not engine_pids_on(ref_id), "the CONNECTION engine to stop", timeout=20)


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
def test_an_engine_killed_mid_query_fails_the_query_at_once_naming_the_engine(kumiho, run_async):
    from harness.tcli import ttypes

    session = open_session(kumiho, "kurt")
    try:
        launched = session.wait_launched()
        engine = engine_pid_of(launched["engine.ref.id"])
        operation = None
        if run_async:
            operation = session.client.execute(session.handle, SLOW_QUERY, run_async=True)
            wait_until_busy(engine)
            os.kill(engine, 9)
            deadline = time.monotonic() + 20
            while True:
                reply = session.client.client.GetOperationStatus(
                    ttypes.TGetOperationStatusReq(operationHandle=operation))
                if reply.status.statusCode == ttypes.TStatusCode.ERROR_STATUS:
                    status = reply.status
                    break
                assert reply.operationState == ttypes.TOperationState.RUNNING_STATE, reply
                assert time.monotonic() < deadline, "the query still runs on a dead engine"
        else:
            import threading

            threading.Thread(target=lambda: (wait_until_busy(engine), os.kill(engine, 9)), daemon=True).start()
            started = time.monotonic()
            status = session.client.client.ExecuteStatement(ttypes.TExecuteStatementReq(
                sessionHandle=session.handle, statement=SLOW_QUERY, runAsync=False)).status
            assert time.monotonic() - started < 20
        assert status.statusCode == ttypes.TStatusCode.ERROR_STATUS, status
        assert status.sqlState == "08S01", status
        assert launched["engine.id"] in status.errorMessage and "reconnect" in status.errorMessage, status
    finally:
        session.close()
