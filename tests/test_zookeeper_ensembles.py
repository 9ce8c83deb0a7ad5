"""One gateway serving clusters on two ZooKeeper ensembles: an ensemble that goes down fails
new sessions of its own cluster with a clear error, and nothing else."""

import time

import pytest

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from gateway_fixtures import kill_engines_on, open_session, zookeeper_cluster
from harness.beeline import binary_url, run_beeline
from harness.zookeeper import start_zookeeper


@pytest.fixture
def ensemble_b(tmp_path):
    server = start_zookeeper(tmp_path, "zookeeper-b")
    yield server
    kill_engines_on(server.address)
    server.stop()


def test_a_cluster_whose_ensemble_is_down_fails_alone(zookeeper, ensemble_b, gateway_dirs, start_kumiho):
    _, cluster_dir = gateway_dirs
    (cluster_dir / "a.yaml").write_text(zookeeper_cluster(zookeeper.address))
    (cluster_dir / "b.yaml").write_text(zookeeper_cluster(ensemble_b.address))
    gateway = start_kumiho()

    on_a = open_session(gateway, "alice", configuration={"kyuubi.session.cluster": "a"})
    on_b = open_session(gateway, "alice", configuration={"kyuubi.session.cluster": "b"})
    engine_a = on_a.wait_launched()
    engine_b = on_b.wait_launched()
    # Each cluster's engine registered in its own ensemble.
    assert zookeeper.children(engine_a["engine.space"]) and ensemble_b.children(engine_b["engine.space"])
    assert engine_a["engine.address"] != engine_b["engine.address"]

    ensemble_b.stop()
    started = time.monotonic()
    run = run_beeline(binary_url(gateway.port, options="?kyuubi.session.cluster=b"), ["select 1"], user="bob")
    elapsed = time.monotonic() - started
    assert run.returncode != 0, run.describe()
    output = run.stdout + run.stderr
    assert "engine registry of cluster `b` is unavailable" in output, run.describe()
    assert ensemble_b.address in output, run.describe()
    # The connect timeout (5 s) plus two JVM starts, not a hang.
    assert elapsed < 60, f"took {elapsed:.0f} s"

    # The other cluster serves new sessions, and the running session on b keeps its engine.
    run = run_beeline(binary_url(gateway.port, options="?kyuubi.session.cluster=a"), ["select 'a works' as status"], user="bob")
    assert run.returncode == 0, run.describe()
    assert run.result_sets()[0] == [["status"], ["a works"]], run.describe()
    assert on_b.query("select 7") == [[7]]
    assert on_a.query("select 8") == [[8]]
    on_a.close()
    on_b.close()
