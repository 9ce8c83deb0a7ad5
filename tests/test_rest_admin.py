"""What operators of Kyuubi use over REST, on a real gateway with real clients: every session
of the gateway in `GET /api/v1/sessions` (PyHive's too, not only REST-made ones), the exec
pool statistic, and the admin API (`/api/v1/admin`) for a cluster's super-users: all
sessions and operations, closing them (the client's next call says an administrator closed
it) and each operation's state as its engine reported it, a user's engines in the cluster's
registry (stopping one so that the next session launches a new engine), the gateways registered
together in ZooKeeper, and the refresh calls, which reread the cluster configs.

The tests share one gateway and engines of their own users; nothing sleeps on a guess.
"""

import uuid
from pathlib import Path

import pytest
from pyhive import hive

from gateway_fixtures import (DEFAULT_CLUSTER, engine_pids, engine_pids_on, ha_flags, kill_engines_on,
                              start_gateway, wait_until, zookeeper_cluster)
from gateway_fixtures import gateway_binary, gateway_dirs, start_kumiho, zookeeper  # noqa: F401 (fixtures)
from harness.engine import HOST
from harness.prometheus import scrape
from harness.tcli import ttypes
from test_gateway_metrics import http_session
from test_rest_sessions import ENDLESS_QUERY, Rest, expect

ADMIN = "ops_admin"
SESSION_DATA_FIELDS = {"identifier", "remoteSessionId", "user", "ipAddr", "conf", "createTime", "duration",
                       "idleTime", "exception", "sessionType", "kyuubiInstance", "engineId", "engineName",
                       "engineUrl", "sessionName", "totalOperations"}
ENGINE_FIELDS = {"version", "user", "engineType", "sharelevel", "subdomain", "instance", "namespace", "attributes"}
SERVER_DATA_FIELDS = {"nodeName", "namespace", "instance", "host", "port", "attributes", "status"}


@pytest.fixture(scope="module")
def gateway(gateway_binary, tmp_path_factory):  # noqa: F811
    root = tmp_path_factory.mktemp("rest-admin")
    work_dir, cluster_dir = root / "work", root / "cluster-configs"
    cluster_dir.mkdir()
    (cluster_dir / "default.yaml").write_text(DEFAULT_CLUSTER + f"super-users: [{ADMIN}]\n")
    gateway = start_gateway(gateway_binary, work_dir, cluster_dir)
    assert gateway.rest_port, "the gateway announced no REST port"
    yield gateway
    gateway.stop()
    kill_engines_on(str(work_dir))


def pyhive_session(gateway, user: str, configuration: dict | None = None):
    """A PyHive connection (binary, SASL) whose engine is up, and its cursor."""
    connection = hive.connect(HOST, gateway.port, username=user, configuration=configuration)
    cursor = connection.cursor()
    cursor.execute("SELECT 1 AS one")
    assert cursor.fetchall() == [(1,)]
    return connection, cursor


def test_a_pyhive_session_is_listed_and_an_admin_closes_it_for_good(gateway):
    connection, cursor = pyhive_session(gateway, "adm_pia")
    pia, other, admin = (Rest(gateway.rest_port, user) for user in ("adm_pia", "adm_rex", ADMIN))
    _, http_client, http_handle = http_session(gateway, "adm_pia")
    http_id = str(uuid.UUID(bytes=http_handle.sessionId.guid))
    rest_session = pia.open()

    # Every frontend's sessions: PyHive's (binary), a Thrift HTTP client's, the REST one.
    listed = pia.ok("GET", "/sessions")
    assert [s["user"] for s in listed] == ["adm_pia"] * 3, listed
    assert [s["identifier"] for s in listed][1:] == [http_id, rest_session], listed
    thrift = listed[0]
    assert set(thrift) == SESSION_DATA_FIELDS, thrift
    assert thrift["ipAddr"] == "127.0.0.1" and thrift["sessionType"] == "INTERACTIVE", thrift
    assert thrift["engineId"] == "USER-DATAFUSION-adm_pia-default" and thrift["engineUrl"], thrift
    assert thrift["totalOperations"] >= 1 and thrift["createTime"] > 0, thrift
    uuid.UUID(thrift["identifier"])
    # Another user sees none of them; only the session's own client uses a Thrift session.
    assert other.ok("GET", "/sessions") == []
    expect(pia.call("GET", f"/sessions/{thrift['identifier']}"), 404, "not over REST")

    # The admin API is the super-users'.
    expect(pia.call("GET", "/admin/sessions"), 403, "adm_pia", "super-users")
    expect(pia.call("DELETE", f"/admin/sessions/{thrift['identifier']}"), 403, "super-users")
    everyone = admin.ok("GET", "/admin/sessions")
    assert {thrift["identifier"], rest_session} <= {s["identifier"] for s in everyone}, everyone
    assert [s["identifier"] for s in admin.ok("GET", "/admin/sessions", params={"users": "adm_pia"})] \
        == [thrift["identifier"], http_id, rest_session]
    assert admin.ok("GET", "/admin/sessions", params={"users": "nobody"}) == []
    assert admin.ok("GET", "/admin/sessions", params={"sessionType": "BATCH"}) == []

    # Closed by the admin: PyHive's next call says so, and so does the REST session's.
    expect(admin.call("DELETE", f"/admin/sessions/{thrift['identifier']}"), 200, "closed successfully")
    expect(admin.call("DELETE", f"/admin/sessions/{rest_session}"), 200)
    expect(admin.call("DELETE", f"/admin/sessions/{http_id}"), 200)
    with pytest.raises(Exception, match=f"closed by administrator `{ADMIN}`"):
        cursor.execute("SELECT 2")
    refused = http_client.ExecuteStatement(ttypes.TExecuteStatementReq(sessionHandle=http_handle, statement="SELECT 2"))
    assert refused.status.statusCode == ttypes.TStatusCode.INVALID_HANDLE_STATUS, refused
    assert f"closed by administrator `{ADMIN}`" in refused.status.errorMessage, refused
    expect(pia.call("POST", f"/sessions/{rest_session}/operations/statement", json={"statement": "SELECT 2"}),
           404, f"closed by administrator `{ADMIN}`", "open a new session")
    assert pia.ok("GET", "/sessions") == []
    expect(admin.call("DELETE", f"/admin/sessions/{thrift['identifier']}"), 404, "not open")
    expect(admin.call("DELETE", "/admin/sessions/not-a-uuid"), 404, "UUID")


def test_an_admin_lists_and_closes_operations_of_any_user(gateway):
    sue, admin = Rest(gateway.rest_port, "adm_sue"), Rest(gateway.rest_port, ADMIN)
    session = sue.open()
    operation = sue.statement(session, "SELECT 42 AS answer")
    expect(sue.call("GET", "/admin/operations"), 403, "super-users")
    listed = admin.ok("GET", "/admin/operations", params={"sessionHandle": session})
    assert [(o["identifier"], o["statement"], o["sessionUser"]) for o in listed] \
        == [(operation, "SELECT 42 AS answer", "adm_sue")], listed
    assert admin.ok("GET", "/admin/operations", params={"users": "adm_nobody"}) == []
    expect(admin.call("DELETE", f"/admin/operations/{operation}"), 200, "closed successfully")
    expect(sue.call("GET", f"/operations/{operation}/rowset"), 404, f"closed by administrator `{ADMIN}`",
           "run the statement again")
    assert admin.ok("GET", "/admin/operations", params={"sessionHandle": session}) == []
    # The session goes on.
    again = sue.statement(session, "SELECT 43 AS answer")
    assert sue.wait_for_end(again)[0]["state"] == "FINISHED"
    # Sessions opened over REST count as the REST frontend's.
    metrics = scrape(gateway.metrics_port)
    assert metrics.value("kumiho_sessions_opened_total", cluster="default", frontend="rest") >= 1
    sue.ok("DELETE", f"/sessions/{session}")


def test_the_exec_pool_statistic_counts_the_gateways_background_work(gateway):
    statistic = Rest(gateway.rest_port, "adm_tom").ok("GET", "/sessions/execPool/statistic")
    assert set(statistic) == {"execPoolSize", "execPoolActiveCount", "execPoolWorkQueueSize"}, statistic
    assert statistic["execPoolSize"] >= 1 and statistic["execPoolActiveCount"] >= 0, statistic


def test_an_admin_stops_a_users_engine_and_the_next_session_launches_a_new_one(gateway):
    connection, cursor = pyhive_session(gateway, "adm_uma")
    cursor.close()
    connection.close()
    uma, admin = Rest(gateway.rest_port, "adm_uma"), Rest(gateway.rest_port, ADMIN)
    expect(uma.call("GET", "/admin/engine"), 403, "adm_uma", "super-users")
    expect(uma.call("DELETE", "/admin/engine"), 403, "super-users")

    engines = admin.ok("GET", "/admin/engine", params={"hive.server2.proxy.user": "adm_uma"})
    assert len(engines) == 1, engines
    engine = engines[0]
    assert set(engine) == ENGINE_FIELDS, engine
    assert (engine["user"], engine["engineType"], engine["sharelevel"], engine["subdomain"]) \
        == ("adm_uma", "DATAFUSION", "USER", "default"), engine
    assert engine["namespace"].startswith("/kumiho_") and engine["namespace"].endswith("_USER_DATAFUSION/adm_uma/default")
    assert engine["attributes"]["serviceUri"] == engine["instance"], engine
    # The same with Kyuubi's other parameters spelled out; other users' and levels' are not.
    assert admin.ok("GET", "/admin/engine", params={"proxyUser": "adm_uma", "type": "datafusion",
                                                     "sharelevel": "USER", "subdomain": "default",
                                                     "cluster": "default"}) == engines
    assert admin.ok("GET", "/admin/engine", params={"hive.server2.proxy.user": "adm_uma",
                                                     "sharelevel": "GROUP"}) == []
    expect(admin.call("GET", "/admin/engine", params={"type": "FLINK_SQL"}), 400, "DATAFUSION")
    expect(admin.call("GET", "/admin/engine", params={"cluster": "nowhere"}), 400, "nowhere")

    pids_before = set(engine_pids(gateway.work_dir))
    stopped = admin.call("DELETE", "/admin/engine", params={"hive.server2.proxy.user": "adm_uma"})
    expect(stopped, 200, "deleted successfully", engine["attributes"]["refId"], "stopped")
    assert admin.ok("GET", "/admin/engine", params={"hive.server2.proxy.user": "adm_uma"}) == []
    wait_until(lambda: len(set(engine_pids(gateway.work_dir))) == len(pids_before) - 1, "the engine exits")
    expect(admin.call("DELETE", "/admin/engine", params={"hive.server2.proxy.user": "adm_uma"}),
           404, "no engine is registered")

    # The next session launches a new engine.
    connection, cursor = pyhive_session(gateway, "adm_uma")
    relaunched = admin.ok("GET", "/admin/engine", params={"hive.server2.proxy.user": "adm_uma"})
    assert len(relaunched) == 1, relaunched
    assert relaunched[0]["attributes"]["refId"] != engine["attributes"]["refId"], relaunched
    cursor.close()
    connection.close()


def test_an_admin_stops_an_engine_registered_in_zookeeper(zookeeper, gateway_dirs, start_kumiho):  # noqa: F811
    _, cluster_dir = gateway_dirs
    (cluster_dir / "zk.yaml").write_text(zookeeper_cluster(zookeeper.address) + f"super-users: [{ADMIN}]\n")
    gateway = start_kumiho()
    on_zk = {"kyuubi.session.cluster": "zk"}
    connection, cursor = pyhive_session(gateway, "adm_vic", on_zk)
    admin = Rest(gateway.rest_port, ADMIN)
    which = {"hive.server2.proxy.user": "adm_vic", "cluster": "zk"}
    # A super-user of `zk` only: the default cluster's engines are not theirs to see.
    expect(admin.call("GET", "/admin/engine", params={"hive.server2.proxy.user": "adm_vic"}), 403,
           "cluster `default`")
    expect(admin.call("GET", "/admin/sessions", params={"users": "adm_vic"}), 200)
    engines = admin.ok("GET", "/admin/engine", params=which)
    assert [e["user"] for e in engines] == ["adm_vic"], engines
    assert engine_pids_on(zookeeper.address), "the engine runs"

    expect(admin.call("DELETE", "/admin/engine", params=which), 200, "deleted successfully", "stopped")
    assert admin.ok("GET", "/admin/engine", params=which) == []
    wait_until(lambda: not engine_pids_on(zookeeper.address), "the engine exits")
    # The session that used it is told its engine is gone; a new one launches another.
    with pytest.raises(Exception, match="engine"):
        cursor.execute("SELECT 2")
    connection, cursor = pyhive_session(gateway, "adm_vic", on_zk)
    relaunched = admin.ok("GET", "/admin/engine", params=which)
    assert len(relaunched) == 1 and relaunched[0]["attributes"]["refId"] != engines[0]["attributes"]["refId"]
    cursor.close()
    connection.close()


def operations_by_id(admin: Rest, **params) -> dict[str, dict]:
    return {o["identifier"]: o for o in admin.ok("GET", "/admin/operations", params=params)}


def test_an_admin_sees_each_operations_state_as_its_engine_reported_it(gateway):
    zoe, admin = Rest(gateway.rest_port, "adm_zoe"), Rest(gateway.rest_port, ADMIN)
    session = zoe.open()
    # Synchronous: the engine's reply comes once the statement has run.
    done = zoe.statement(session, "SELECT 1 AS one")
    failed = zoe.statement(session, "SELECT * FROM adm_no_such_table", run_async=True)
    assert zoe.wait_for_end(failed)[0]["state"] == "ERROR"
    running = zoe.statement(session, ENDLESS_QUERY, run_async=True)
    wait_until(lambda: zoe.event(running)["state"] == "RUNNING", "the endless query runs")

    listed = operations_by_id(admin, sessionHandle=session)
    assert [listed[op]["state"] for op in (done, failed, running)] == ["FINISHED", "ERROR", "RUNNING"], listed
    assert listed[done]["completeTime"] >= listed[done]["startTime"] > 0 and listed[done]["exception"] == ""
    assert "adm_no_such_table" in listed[failed]["exception"], listed[failed]
    assert listed[running]["startTime"] > 0 and listed[running]["completeTime"] == 0, listed[running]
    # Cancelled by its client: the engine's answer to the cancel is the new state.
    zoe.ok("PUT", f"/operations/{running}", json={"action": "CANCEL"})
    assert operations_by_id(admin, sessionHandle=session)[running]["state"] == "CANCELED"
    zoe.ok("DELETE", f"/sessions/{session}")

    # A Thrift client's statements too, as its polls tell them, with their SQL.
    connection, cursor = pyhive_session(gateway, "adm_zed")
    endless = connection.cursor()
    endless.execute(ENDLESS_QUERY, async_=True)
    wait_until(lambda: endless.poll().operationState == ttypes.TOperationState.RUNNING_STATE,
               "the endless query runs")
    assert [(o["state"], o["statement"]) for o in admin.ok("GET", "/admin/operations", params={"users": "adm_zed"})] \
        == [("FINISHED", "SELECT 1 AS one"), ("RUNNING", ENDLESS_QUERY)]
    endless.cancel()
    assert [o["state"] for o in admin.ok("GET", "/admin/operations", params={"users": "adm_zed"})] \
        == ["FINISHED", "CANCELED"]
    connection.close()


def test_without_ha_the_server_list_is_this_gateway(gateway):
    expect(Rest(gateway.rest_port, "adm_ivy").call("GET", "/admin/server"), 403, "super-users")
    [server] = Rest(gateway.rest_port, ADMIN).ok("GET", "/admin/server")
    assert set(server) == SERVER_DATA_FIELDS, server
    assert (server["instance"], server["host"], server["port"], server["namespace"], server["status"]) \
        == (f"{HOST}:{gateway.port}", HOST, gateway.port, "", "Running"), server
    assert server["attributes"]["serverUri"] == server["instance"] and "sequence" not in server["attributes"]


def test_an_admin_lists_the_gateways_registered_together_in_zookeeper(zookeeper, gateway_binary,  # noqa: F811
                                                                      gateway_dirs):  # noqa: F811
    work_dir, cluster_dir = gateway_dirs
    (cluster_dir / "default.yaml").write_text(DEFAULT_CLUSTER + f"super-users: [{ADMIN}]\n")
    namespace = "kumiho-admin"
    started = []
    try:
        for suffix in ("", "-second"):
            started.append(start_gateway(gateway_binary, Path(f"{work_dir}{suffix}"), cluster_dir,
                                         *ha_flags(zookeeper.address, namespace)))
        first, second = started
        servers = Rest(first.rest_port, ADMIN).ok("GET", "/admin/server")
        assert [s["instance"] for s in servers] == [f"{HOST}:{first.port}", f"{HOST}:{second.port}"], servers
        assert {s["nodeName"] for s in servers} == set(zookeeper.children(f"/{namespace}")), servers
        for server in servers:
            assert set(server) == SERVER_DATA_FIELDS, server
            assert (server["namespace"], server["host"], server["status"]) == (f"/{namespace}", HOST, "Running")
            attributes = server["attributes"]
            assert attributes["serverUri"] == server["instance"] and attributes["version"], server
            assert server["nodeName"].endswith(f"sequence={attributes['sequence']}"), server
        # Either gateway answers the same; one that stops leaves the list.
        assert Rest(second.rest_port, ADMIN).ok("GET", "/admin/server") == servers
        second.stop()
        assert [s["instance"] for s in Rest(first.rest_port, ADMIN).ok("GET", "/admin/server")] \
            == [f"{HOST}:{first.port}"]
    finally:
        for gateway in started:
            gateway.stop()


def test_refresh_rereads_the_cluster_configs_and_names_a_broken_file(gateway):
    admin = Rest(gateway.rest_port, ADMIN)
    expect(Rest(gateway.rest_port, "adm_ivy").call("POST", "/admin/refresh/hadoop_conf"), 403, "super-users")
    extra = gateway.cluster_dir / "adm_extra.yaml"
    try:
        extra.write_text(f"super-users: [{ADMIN}]\n")
        expect(admin.call("POST", "/admin/refresh/user_defaults_conf"), 200,
               "Refresh the user defaults conf successfully", "clusters in force: adm_extra, default")
        # Broken: its last good version stays, and the refresh says why, even if the watcher
        # read it first.
        extra.write_text(f"super-users: [{ADMIN}\n")
        broken = admin.call("POST", "/admin/refresh/hadoop_conf")
        expect(broken, 503, "adm_extra.yaml is broken", "line", "its last good version stays in force")
        expect(admin.call("POST", "/admin/refresh/kubernetes_conf"), 503, "adm_extra.yaml is broken")
        extra.write_text(f"super-users: [{ADMIN}, adm_ivy]\n")
        # As `curl -X POST -d ''` sends it: no body is read.
        expect(admin.call("POST", "/admin/refresh/kubernetes_conf", data="",
                          headers={"Content-Type": "application/x-www-form-urlencoded"}), 200, "successfully")
        expect(Rest(gateway.rest_port, "adm_ivy").call("POST", "/admin/refresh/hadoop_conf"), 200, "successfully")
    finally:
        extra.unlink(missing_ok=True)
        admin.call("POST", "/admin/refresh/hadoop_conf")
    # Kyuubi's connection lists live in the cluster files too (tests/test_gateway_admission.py).
    for name in ("deny users", "unlimited users", "deny ips"):
        expect(admin.call("POST", "/admin/refresh/" + name.replace(" ", "_")), 200,
               f"Refresh the {name} successfully", "no cluster changed")
    expect(admin.call("POST", "/admin/refresh/everything"), 404)
