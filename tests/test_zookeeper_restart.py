"""ZooKeeper going away and coming back: running sessions keep working, engines and gateways
register again, and a reference that still has its engine is never given a second one."""

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from gateway_fixtures import engine_pids_on, ha_flags, open_session, wait_until, zookeeper_cluster

NAMESPACE = "kumiho-restart"
# Sessions and registrations come back within the ZooKeeper session and connect timeouts
# (10 s and 5 s in these tests) plus the time to start ZooKeeper again.
REGISTERED_AGAIN_TIMEOUT_S = 60


def test_sessions_survive_a_zookeeper_restart_and_the_engine_is_reused(zookeeper, gateway_dirs, start_kumiho):
    _, cluster_dir = gateway_dirs
    (cluster_dir / "default.yaml").write_text(zookeeper_cluster(zookeeper.address))
    gateway = start_kumiho(*ha_flags(zookeeper.address, NAMESPACE))
    session = open_session(gateway, "alice")
    engine = session.wait_launched()
    space = engine["engine.space"]
    assert session.query("select 1") == [[1]]
    assert len(zookeeper.children(f"/{NAMESPACE}")) == 1

    # Down: the running session does not need ZooKeeper.
    zookeeper.stop()
    assert session.query("select 2") == [[2]]

    # Back with its data: the sessions resume, the registrations are still (or again) there.
    zookeeper.start()
    assert session.query("select 3") == [[3]]
    wait_until(lambda: len(zookeeper.children(space)) == 1, "the engine is registered",
               timeout=REGISTERED_AGAIN_TIMEOUT_S)
    wait_until(lambda: len(zookeeper.children(f"/{NAMESPACE}")) == 1, "the gateway is registered",
               timeout=REGISTERED_AGAIN_TIMEOUT_S)
    again = open_session(gateway, "alice")
    reused = again.wait_launched()
    assert (reused["engine.address"], reused["engine.ref.id"]) == (engine["engine.address"], engine["engine.ref.id"])
    assert again.query("select 4") == [[4]]
    again.close()

    # Back empty (every ZooKeeper session expired): everything registers again.
    zookeeper.wipe_and_restart()
    assert session.query("select 5") == [[5]]
    wait_until(lambda: len(zookeeper.children(f"/{NAMESPACE}")) == 1, "the gateway registered again",
               timeout=REGISTERED_AGAIN_TIMEOUT_S)
    wait_until(lambda: len(zookeeper.children(space)) == 1, "the engine registered again",
               timeout=REGISTERED_AGAIN_TIMEOUT_S)
    after_wipe = open_session(gateway, "alice")
    found = after_wipe.wait_launched()
    assert found["engine.address"] == engine["engine.address"], "a second engine was launched"
    assert after_wipe.query("select 6") == [[6]]
    assert len(engine_pids_on(zookeeper.address, space)) == 1
    after_wipe.close()
    session.close()


def test_a_deleted_gateway_registration_is_created_again(zookeeper, gateway_dirs, start_kumiho):
    _, cluster_dir = gateway_dirs
    (cluster_dir / "default.yaml").write_text(zookeeper_cluster(zookeeper.address))
    start_kumiho(*ha_flags(zookeeper.address, NAMESPACE))
    [node] = zookeeper.children(f"/{NAMESPACE}")
    zookeeper.client().delete(f"/{NAMESPACE}/{node}")
    wait_until(lambda: len(zookeeper.children(f"/{NAMESPACE}")) == 1, "the gateway registered again",
               timeout=REGISTERED_AGAIN_TIMEOUT_S)
    [again] = zookeeper.children(f"/{NAMESPACE}")
    assert again != node and again.split(";sequence=")[0] == node.split(";sequence=")[0]
