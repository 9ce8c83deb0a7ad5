"""Launching engines: asynchronous OpenSession and its log, failed launches, idle engines,
and a gateway killed and replaced while its engines run."""

import time

from pyhive import hive
from TCLIService import ttypes as pyhive_ttypes

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from gateway_fixtures import DEFAULT_CLUSTER, LAUNCH_GUID, LAUNCH_SECRET, engine_pids, live_registrations, open_session, ref_id_of, wait_until
from harness.beeline import binary_url, run_beeline
from harness.engine import HOST

import base64


def test_pyhive_reads_the_launch_handle_and_follows_the_launch_log(kumiho):
    connection = hive.connect(HOST, kumiho.port, username="dave")
    client = connection.client
    reply = client.OpenSession(pyhive_ttypes.TOpenSessionReq(username="dave", configuration={}))
    assert reply.configuration["kyuubi.session.engine.launch.support.result"] == "true"
    assert "hive.server2.thrift.resultset.default.fetch.size" in reply.configuration
    launch = pyhive_ttypes.TOperationHandle(
        operationId=pyhive_ttypes.THandleIdentifier(
            guid=base64.b64decode(reply.configuration[LAUNCH_GUID]),
            secret=base64.b64decode(reply.configuration[LAUNCH_SECRET]),
        ),
        operationType=pyhive_ttypes.TOperationType.UNKNOWN,
        hasResultSet=True,
    )
    lines = []
    state = None
    deadline = time.monotonic() + 120
    while state not in (pyhive_ttypes.TOperationState.FINISHED_STATE, pyhive_ttypes.TOperationState.ERROR_STATE):
        assert time.monotonic() < deadline, f"launch never ended; log so far: {lines}"
        state = client.GetOperationStatus(pyhive_ttypes.TGetOperationStatusReq(operationHandle=launch)).operationState
        log = client.FetchResults(pyhive_ttypes.TFetchResultsReq(
            operationHandle=launch, orientation=pyhive_ttypes.TFetchOrientation.FETCH_NEXT, maxRows=1000, fetchType=1))
        new = list(log.results.columns[0].stringVal.values) if log.results.columns else []
        lines += new
        print("\n".join(new))
        time.sleep(0.1)
    assert state == pyhive_ttypes.TOperationState.FINISHED_STATE, lines
    # The log tells the launch in order (whether the first poll came before its end or not).
    looked_up = [i for i, line in enumerate(lines) if "looking up engine" in line]
    assert looked_up, lines
    assert any("ready at" in line for line in lines[looked_up[0]:]), lines
    client.CloseSession(pyhive_ttypes.TCloseSessionReq(sessionHandle=reply.sessionHandle))
    # The DB-API session of the same connection works through the gateway too.
    with connection.cursor() as cursor:
        cursor.execute("select 6 * 7")
        assert cursor.fetchall() == [(42,)]
    connection.close()


def test_plain_beeline_connects_and_its_first_statement_shows_the_launch_log(kumiho):
    run = run_beeline(binary_url(kumiho.port), ["select 'hello' as greeting"], user="erin")
    assert run.returncode == 0, run.describe()
    assert "Connected to: Kumiho" in run.stderr, run.describe()
    assert run.result_sets()[0] == [["greeting"], ["hello"]], run.describe()
    assert "looking up engine" in run.stderr, run.describe()


def test_a_launch_that_cannot_succeed_fails_the_first_statement_with_the_reason(kumiho):
    kumiho.write_cluster("broken", """\
engine:
  datafusion:
    config-file: /nonexistent/kumiho-engine.yaml
""")
    kumiho.wait_for_log(r"cluster added.*broken|broken.*cluster added")
    started = time.monotonic()
    run = run_beeline(binary_url(kumiho.port, options="?kyuubi.session.cluster=broken"),
                      ["select 1"], user="frank")
    elapsed = time.monotonic() - started
    assert run.returncode != 0, run.describe()
    output = run.stdout + run.stderr
    assert "engine launch failed" in output, run.describe()
    assert "/nonexistent/kumiho-engine.yaml" in output, run.describe()
    assert elapsed < 60, f"took {elapsed:.0f} s"


def test_a_clusters_time_zone_is_where_its_sessions_start_and_a_bad_one_fails_the_launch(kumiho):
    kumiho.write_cluster("seoul", DEFAULT_CLUSTER + "  datafusion:\n    time-zone: Asia/Seoul\n")
    kumiho.write_cluster("nowhere", DEFAULT_CLUSTER + "  datafusion:\n    time-zone: Mars/Olympus\n")
    kumiho.wait_for_log(r"cluster added.*seoul|seoul.*cluster added")
    kumiho.wait_for_log(r"cluster added.*nowhere|nowhere.*cluster added")
    query = ["SELECT current_timezone() AS z, from_unixtime(0) AS f"]
    seoul = run_beeline(binary_url(kumiho.port, options="?kyuubi.session.cluster=seoul"), query, user="ivan")
    assert seoul.returncode == 0, seoul.describe()
    assert seoul.result_sets()[0] == [["z", "f"], ["Asia/Seoul", "1970-01-01 09:00:00"]], seoul.describe()
    # The same engine; the session sets its own zone in its URL.
    own = run_beeline(binary_url(
        kumiho.port, options="?kyuubi.session.cluster=seoul;spark.sql.session.timeZone=America/Los_Angeles"),
        query, user="ivan")
    assert own.returncode == 0, own.describe()
    assert own.result_sets()[0] == [["z", "f"], ["America/Los_Angeles", "1969-12-31 16:00:00"]], own.describe()
    # The same user in another cluster gets that cluster's engine, not the Seoul one: each
    # cluster that names no registry namespace has its own (kumiho-nowhere).
    broken = run_beeline(binary_url(kumiho.port, options="?kyuubi.session.cluster=nowhere"), query, user="ivan")
    assert broken.returncode != 0, broken.describe()
    output = broken.stdout + broken.stderr
    assert "engine launch failed" in output, broken.describe()
    assert "'Mars/Olympus' is not a time zone" in output, broken.describe()


def test_idle_user_engine_stops_and_the_next_session_launches_a_new_one(kumiho):
    settings = {"kyuubi.session.engine.idle.timeout": "PT3S"}
    first = open_session(kumiho, "grace", configuration=settings)
    first_result = first.wait_launched()
    space = first_result["engine.space"]
    first.close()
    wait_until(lambda: not live_registrations(kumiho.work_dir, space), "the idle engine deregistered", timeout=60)
    second = open_session(kumiho, "grace", configuration=settings)
    second_result = second.wait_launched()
    assert second_result["engine.ref.id"] != first_result["engine.ref.id"]
    second.close()


def test_engines_survive_kill_9_of_the_gateway_and_a_new_gateway_reuses_them(start_kumiho):
    first_gateway = start_kumiho()
    session = open_session(first_gateway, "heidi")
    result = session.wait_launched()
    pids = engine_pids(first_gateway.work_dir)
    assert pids
    first_gateway.kill()
    session.client.close()
    assert engine_pids(first_gateway.work_dir) == pids
    assert [ref_id_of(r) for r in live_registrations(first_gateway.work_dir, result["engine.space"])] == [result["engine.ref.id"]]

    second_gateway = start_kumiho()
    again = open_session(second_gateway, "heidi")
    assert again.wait_launched()["engine.ref.id"] == result["engine.ref.id"]
    assert again.query("select 3")[0] == [3]
    again.close()


def test_kyuubis_own_statements_describe_the_session_and_its_engine(kumiho):
    run = run_beeline(binary_url(kumiho.port), [
        "KYUUBI DESC SESSION",
        "kyuubi describe engine",
        "select 'still here' as a",
        "KYUUBI RESTART ENGINE",
    ], user="kyle")
    sets = run.result_sets()
    assert len(sets) >= 3, run.describe()
    session, engine, after = sets[0], sets[1], sets[2]
    assert session[0] == ["id", "user", "type"], run.describe()
    assert session[1][1:] == ["kyle", "INTERACTIVE"], run.describe()
    assert engine[0] == ["ENGINE_ID", "ENGINE_NAME", "ENGINE_URL"], run.describe()
    engine_id, engine_name, engine_url = engine[1]
    assert engine_name == "USER-DATAFUSION-kyle-default", run.describe()
    # The engine the registry holds for kyle: its launch's id, and where it listens.
    spaces = [path.parent for path in (kumiho.work_dir / "registry").rglob("serviceUri=*")
              if "kyle" in path.parent.parts]
    assert len(set(spaces)) == 1, spaces
    space = str(spaces[0].relative_to(kumiho.work_dir / "registry"))
    registrations = live_registrations(kumiho.work_dir, space)
    assert [ref_id_of(r) for r in registrations] == [engine_id], registrations
    assert registrations[0].startswith(f"serviceUri={engine_url};"), registrations
    assert after == [["a"], ["still here"]], run.describe()
    # RESTART is refused, saying what to do instead; beeline stops there.
    assert run.returncode != 0, run.describe()
    assert "KYUUBI RESTART ENGINE is not taken here" in run.stderr, run.describe()
    assert "DELETE /api/v1/admin/engine" in run.stderr, run.describe()
