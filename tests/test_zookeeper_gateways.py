"""Several gateways on one ZooKeeper: they share engines, register for Hive JDBC's ZooKeeper
discovery, deregister when they stop, and accept each other's HTTP auth cookies."""

import base64
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport.TTransport import TMemoryBuffer

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from gateway_fixtures import (discovery_url, engine_pids_on, ha_flags, open_session, start_gateway,
                              zookeeper_cluster)
from harness.beeline import run_beeline
from harness.engine import HOST
from harness.tcli import TCLIService, ttypes
from harness.zookeeper import free_port

NAMESPACE = "kumiho-gw"


@pytest.fixture
def two_gateways(zookeeper, gateway_binary, gateway_dirs):
    """Two gateways on the same cluster files, whose default cluster lives in `zookeeper`, both
    registered for discovery, each with its own work directory as on two hosts."""
    work_dir, cluster_dir = gateway_dirs
    (cluster_dir / "default.yaml").write_text(zookeeper_cluster(zookeeper.address))
    started = []
    try:
        for suffix in ("", "-second"):
            started.append(start_gateway(gateway_binary, Path(f"{work_dir}{suffix}"), cluster_dir,
                                         *ha_flags(zookeeper.address, NAMESPACE)))
        yield started
    finally:
        for gateway in started:
            gateway.stop()


def registered_gateways(zookeeper) -> dict[str, dict[str, str]]:
    """Gateway nodes under the namespace and the key/value pairs of their data."""
    nodes = {}
    for child in zookeeper.children(f"/{NAMESPACE}"):
        data = zookeeper.get(f"/{NAMESPACE}/{child}")
        if data is not None:
            nodes[child] = dict(pair.split("=", 1) for pair in data.decode().split(";"))
    return nodes


def test_two_gateways_share_one_engine_per_user(zookeeper, two_gateways):
    first, second = two_gateways
    through_first = open_session(first, "alice")
    through_second = open_session(second, "alice")
    first_engine = through_first.wait_launched()
    second_engine = through_second.wait_launched()
    assert first_engine["engine.ref.id"] == second_engine["engine.ref.id"]
    assert first_engine["engine.address"] == second_engine["engine.address"]
    # Both sessions really run on it, with the secret the second gateway read from ZooKeeper.
    assert through_first.query("select 1 + 1") == [[2]]
    assert through_second.query("select 2 + 2") == [[4]]
    space = first_engine["engine.space"]
    assert len(zookeeper.children(space)) == 1
    assert len(engine_pids_on(zookeeper.address, space)) == 1
    through_first.close()
    through_second.close()
    # The internal secret both gateways use is kept in ZooKeeper, and no log shows it.
    secret = zookeeper.get("/kumiho_secret")
    assert secret and len(secret) >= 32
    # Whichever gateway won the launch lock launched it, with its log under its work directory.
    engine_logs = [log for gateway in (first, second)
                   for log in gateway.work_dir.glob("clusters/default/engines/*.log")]
    assert len(engine_logs) == 1, engine_logs
    for gateway in (first, second):
        assert secret.decode() not in gateway.log()
    for log in engine_logs:
        assert secret.decode() not in log.read_text(errors="replace")


def test_twenty_concurrent_first_sessions_on_two_gateways_start_one_engine(zookeeper, two_gateways):
    gateways = two_gateways
    results, errors = [], []

    def connect(index: int):
        try:
            session = open_session(gateways[index % 2], "bob")
            results.append(session.wait_launched())
            session.close()
        except Exception as error:  # reported below with the others
            errors.append(error)

    threads = [threading.Thread(target=connect, args=(index,)) for index in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert len(results) == 20
    assert len({result["engine.ref.id"] for result in results}) == 1, results
    space = results[0]["engine.space"]
    assert len(zookeeper.children(space)) == 1
    assert len(engine_pids_on(zookeeper.address, space)) == 1


def test_beeline_discovers_the_gateways_and_still_connects_when_one_stopped(zookeeper, two_gateways):
    first, second = two_gateways
    nodes = registered_gateways(zookeeper)
    assert sorted(int(data["hive.server2.thrift.port"]) for data in nodes.values()) == sorted([first.port, second.port])
    for node, data in nodes.items():
        assert node.startswith(f"serverUri={HOST}:{data['hive.server2.thrift.port']};version=")
        assert data["hive.server2.thrift.bind.host"] == HOST
        assert data["hive.server2.transport.mode"] == "binary"

    url = discovery_url(zookeeper.address, NAMESPACE)
    run = run_beeline(url, ["select 'found' as via_zookeeper"], user="carol")
    assert run.returncode == 0, run.describe()
    assert run.result_sets()[0] == [["via_zookeeper"], ["found"]], run.describe()

    first.stop()
    # The node went before the process ended, and before the frontends closed.
    assert [int(data["hive.server2.thrift.port"]) for data in registered_gateways(zookeeper).values()] == [second.port]
    log = first.log()
    assert log.index("deregistered from ZooKeeper discovery") < log.index("stopping: no new connections"), log[-3000:]

    for _ in range(3):  # discovery picks a node at random: only the live one is left to pick
        run = run_beeline(url, ["select 'still found' as via_zookeeper"], user="carol")
        assert run.returncode == 0, run.describe()
        assert run.result_sets()[0] == [["via_zookeeper"], ["still found"]], run.describe()


def open_session_body(user: str) -> bytes:
    """An OpenSession call as Thrift over HTTP sends it."""
    buffer = TMemoryBuffer()
    TCLIService.Client(TBinaryProtocol(buffer)).send_OpenSession(ttypes.TOpenSessionReq(
        client_protocol=ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10, username=user))
    return buffer.getvalue()


def post(port: int, headers: dict):
    """POSTs an OpenSession call; the HTTP status and the reply's headers (case-insensitive)."""
    request = urllib.request.Request(
        f"http://{HOST}:{port}/cliservice", data=open_session_body("dave"), method="POST",
        headers={"Content-Type": "application/x-thrift", **headers})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.headers


def test_an_http_cookie_from_one_gateway_is_accepted_by_the_other(zookeeper, two_gateways, start_kumiho):
    first, second = two_gateways
    basic = "Basic " + base64.b64encode(b"dave:x").decode()
    status, headers = post(first.http_port, {"Authorization": basic})
    assert status == 200, headers
    cookie = headers.get("Set-Cookie", "").split(";", 1)[0]
    assert cookie.startswith("hive.server2.auth=")
    # Without credentials or cookie the second gateway refuses; with the first's cookie it serves.
    assert post(second.http_port, {})[0] == 401
    assert post(second.http_port, {"Cookie": cookie})[0] == 200
    # A gateway on its own (no ZooKeeper, no cookie-secret) has a key of its own.
    alone = start_kumiho()
    assert post(alone.http_port, {"Cookie": cookie})[0] == 401


def test_a_gateway_can_advertise_its_http_frontend(zookeeper, gateway_dirs, start_kumiho):
    _, cluster_dir = gateway_dirs
    (cluster_dir / "default.yaml").write_text(zookeeper_cluster(zookeeper.address))
    namespace = "kumiho-http"
    gateway = start_kumiho(*ha_flags(zookeeper.address, namespace), "--ha-transport-mode", "http")
    [node] = zookeeper.children(f"/{namespace}")
    data = dict(pair.split("=", 1) for pair in zookeeper.get(f"/{namespace}/{node}").decode().split(";"))
    assert data["hive.server2.transport.mode"] == "http"
    assert data["hive.server2.thrift.http.port"] == str(gateway.http_port)
    assert data["hive.server2.thrift.http.path"] == "cliservice"
    # Only the HTTP port is advertised: connecting at all means beeline went over HTTP.
    assert "hive.server2.thrift.port" not in data
    run = run_beeline(discovery_url(zookeeper.address, namespace), ["select 'over http' as via"], user="erin")
    assert run.returncode == 0, run.describe()
    assert run.result_sets()[0] == [["via"], ["over http"]], run.describe()


def test_a_gateway_whose_ha_ensemble_does_not_answer_does_not_start(gateway_binary, gateway_dirs):
    work_dir, cluster_dir = gateway_dirs
    nobody = f"{HOST}:{free_port()}"
    with pytest.raises(RuntimeError) as failed:
        start_gateway(gateway_binary, work_dir, cluster_dir, "--ha-addresses", nobody, "--ha-connect-timeout", "2s")
    message = str(failed.value)
    assert "exited with 1" in message and nobody in message and "ha-addresses" in message, message
