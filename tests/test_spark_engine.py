"""The Spark SQL engine: a real Spark Thrift Server (pyspark's) launched by kumiho through
`kumiho-spark-engine`, queried with beeline through the gateway.

Each Spark launch costs tens of seconds here, so the tests launch three engines in all and
check several things on each.
"""

import glob
import os
import re

from pathlib import Path

import pyspark
import pytest

from gateway_fixtures import *  # noqa: F403 (fixtures)
from gateway_fixtures import SessionRefused, live_registrations, local_socket_entries, open_session, wait_until
from harness.beeline import binary_url, run_beeline
from harness.spark import (
    spark_cluster_yaml, spark_jvm_pids, still_running, stop_spark_engines, supervisor_pids, wait_gone,
)
from harness.tcli import ttypes
from harness.thrift_client import ThriftClient, check, column_values

SPARK_SQL = "kyuubi.engine.type=SPARK_SQL"
WRONG = "wrong-Passw0rd"
# The USER engine of the first test stops itself this long after its last connection.
IDLE_TIMEOUT = "20s"
# An operator's conf that would open the Thrift Server behind the gate, were it obeyed.
OPEN_THRIFT_SERVER = {
    "spark.hadoop.hive.server2.authentication": "NONE",
    "spark.hive.server2.authentication": "NOSASL",
    "spark.hadoop.hive.server2.custom.authentication.class": "org.example.Nobody",
}


@pytest.fixture
def spark_kumiho(start_kumiho, gateway_dirs):
    """A gateway whose default cluster runs DataFusion but knows where Spark is (sessions
    choose Spark with `kyuubi.engine.type=SPARK_SQL`), and whose cluster `spark` runs Spark
    by default. Spark engines stop with the test."""
    work_dir, cluster_dir = gateway_dirs
    (cluster_dir / "default.yaml").write_text(spark_cluster_yaml(idle_timeout=IDLE_TIMEOUT, conf=OPEN_THRIFT_SERVER))
    (cluster_dir / "spark.yaml").write_text(spark_cluster_yaml(engine_type="SPARK_SQL"))
    gateway = start_kumiho()
    yield gateway
    stop_spark_engines(work_dir)


def engine_space_dir(work_dir, share: str, user: str, subdomain: str = "default"):
    [space] = glob.glob(str(work_dir / "registry" / f"kumiho_*_{share}_SPARK_SQL" / user / subdomain))
    return "/" + os.path.relpath(space, work_dir / "registry")


def thrift_server_port(work_dir, engine: str) -> int:
    """The port of the Spark Thrift Server behind an engine, from its supervisor's line
    `listening on ... (Spark Thrift Server at 127.0.0.1:P, pid N)` in the engine's log."""
    log = (work_dir / "engines" / f"{engine}.log").read_text()
    [port] = re.findall(r"\(Spark Thrift Server at 127\.0\.0\.1:(\d+), pid", log)
    return int(port)


def test_beeline_runs_spark_sql_sees_the_spark_submit_log_and_the_idle_engine_stops(spark_kumiho):
    work_dir = spark_kumiho.work_dir
    run = run_beeline(
        binary_url(spark_kumiho.port, options=f"?{SPARK_SQL}"),
        ["select version()", "select sum(id) as total, count(*) as n from range(1000)"],
    )
    assert run.returncode == 0, run.describe()
    version, aggregate = run.result_sets()
    assert version[0] == ["version()"] and version[1][0].startswith(pyspark.__version__ + " "), run.describe()
    assert aggregate == [["total", "n"], ["499500", "1000"]], run.describe()
    # The first statement's log is the launch log: the spark-submit command and Spark's own lines.
    output = run.stdout + run.stderr
    assert "spark-submit --master local[1] --deploy-mode client" in output, run.describe()
    # The engine runs as its user (spark-submit --proxy-user, Kyuubi's doAs): Spark's security
    # manager names the OS user and the user the JVM acts as (the OS user alone without it).
    assert "--proxy-user alice " in output, run.describe()
    assert re.search(r"Changing view acls to: (\w+,)?alice\n", output), run.describe()
    assert "HiveThriftServer2 started" in output, run.describe()

    # Spark's files stay in the engine's directory.
    assert (work_dir / "engines" / "USER-SPARK_SQL-alice-default" / "metastore_db").is_dir()

    # The registered address is the supervisor's gate: the secret gets in, nothing else does.
    # The direct connection stays open until the end: an open connection keeps the engine
    # from idling out while the second beeline starts.
    space = engine_space_dir(work_dir, "USER", "alice")
    [registration] = live_registrations(work_dir, space)
    port = int(registration.split(";")[0].rsplit(":", 1)[1])
    secret = (work_dir / "internal-secret").read_text().strip()
    direct = ThriftClient(port, sasl=True, user="alice", password=secret)
    try:
        session = direct.open_session()
        rowset = direct.fetch(direct.execute(session, "select 6 * 7"), 10)
        assert [column_values(column) for column in rowset.columns] == [[42]]
        with pytest.raises(Exception, match="wrong password for user 'mallory'"):
            ThriftClient(port, sasl=True, user="mallory", password=WRONG)

        # The Thrift Server behind the gate admits only the gate's own token, although the
        # cluster's conf (OPEN_THRIFT_SERVER) asks for no authentication: not a wrong
        # password, not an empty one, not even the cluster's secret.
        thrift_port = thrift_server_port(work_dir, "USER-SPARK_SQL-alice-default")
        assert thrift_port != port
        for password in [WRONG, "", secret]:
            # Hive answers only "Error validating the login"; the reason is in the engine's log.
            with pytest.raises(Exception, match="Error validating the login"):
                ThriftClient(thrift_port, sasl=True, user="mallory", password=password)
        log = (work_dir / "engines" / "USER-SPARK_SQL-alice-default.log").read_text()
        gate_only = "this Spark Thrift Server admits only the kumiho-spark-engine gate in front of it"
        assert f"wrong password for user 'mallory': {gate_only}" in log
        assert "No password name provided" in log  # Hive's own check, before ours
        assert WRONG not in log and secret not in log
        # The token is in the JVM's environment, the cluster's secret is not.
        [jvm] = spark_jvm_pids(work_dir)
        environ = dict(entry.split(b"=", 1) for entry in
                       (Path(f"/proc/{jvm}/environ").read_bytes().split(b"\0")) if b"=" in entry)
        assert b"KUMIHO_ENGINE_SECRET" not in environ
        token = environ[b"KUMIHO_SPARK_GATE_SECRET"]
        assert len(token) == 64 and token != secret.encode()
        assert token.decode() not in log

        # A long Spark statement through kumiho is cancelled: the gateway sends the cancel to
        # the engine on a connection of its own, which the Thrift Server accepts.
        through = open_session(spark_kumiho, user="alice", configuration={
            "kyuubi.engine.type": "SPARK_SQL", "kyuubi.server.info.provider": "ENGINE"})
        try:
            # The gateway reaches the engine's gate on this host over its local socket.
            ref_id = through.wait_launched()["engine.ref.id"]
            assert "03" in local_socket_entries(f"kumiho-engine/{ref_id}")
            # Asked to, the gateway lets Spark name itself, as BI tools expect of Spark.
            dbms_name = through.client.client.GetInfo(ttypes.TGetInfoReq(
                sessionHandle=through.handle, infoType=ttypes.TGetInfoType.CLI_DBMS_NAME))
            assert dbms_name.infoValue.stringValue == "Spark SQL", dbms_name
            operation = through.client.execute(
                through.handle, "select count(*) from range(1000000000000)", run_async=True)
            cancel = through.client.client.CancelOperation(ttypes.TCancelOperationReq(operationHandle=operation))
            check(cancel.status, "CancelOperation")

            def state():
                reply = through.client.client.GetOperationStatus(
                    ttypes.TGetOperationStatusReq(operationHandle=operation))
                return reply.operationState

            wait_until(lambda: state() == ttypes.TOperationState.CANCELED_STATE, "the Spark statement cancelled")
        finally:
            through.close()

        # A second session finds the running engine; its runtime spark.* keys apply to its own
        # Spark session, the ones Spark refuses at runtime are skipped and said so.
        again = run_beeline(
            binary_url(spark_kumiho.port,
                       options=f"?{SPARK_SQL};spark.sql.shuffle.partitions=5;spark.sql.warehouse.dir=/nowhere"),
            ["set spark.sql.shuffle.partitions"],
        )
        assert again.returncode == 0, again.describe()
        assert again.result_sets() == [[["key", "value"], ["spark.sql.shuffle.partitions", "5"]]], again.describe()
        output = again.stdout + again.stderr
        assert "found engine at" in output, again.describe()
        assert "SET spark.sql.warehouse.dir: refused by Spark, ignored" in output, again.describe()
    finally:
        direct.close()

    # With no connection for the idle timeout the engine deregisters and Spark stops.
    assert spark_jvm_pids(work_dir), "the Spark JVM is not running"
    wait_gone(lambda: live_registrations(work_dir, space), "the idle engine's registration")
    wait_gone(lambda: spark_jvm_pids(work_dir), "the idle engine's Spark JVM")
    wait_gone(lambda: supervisor_pids(work_dir), "the idle engine's supervisor")


def test_a_connection_engine_on_zookeeper_takes_its_spark_jvm_with_it_when_the_session_closes(
        spark_kumiho, gateway_dirs, zookeeper):
    work_dir, cluster_dir = gateway_dirs
    # A cluster on ZooKeeper whose `engine.type: SPARK_SQL` picks Spark; the session only
    # names the cluster. The supervisor registers the engine in that ensemble.
    (cluster_dir / "spark-zk.yaml").write_text(spark_cluster_yaml(engine_type="SPARK_SQL", zookeeper=zookeeper.address))
    configuration = {"kyuubi.session.cluster": "spark-zk", "kyuubi.engine.share.level": "CONNECTION"}
    session = None

    def opened() -> bool:
        nonlocal session
        try:
            session = open_session(spark_kumiho, user="carol", configuration=configuration)
        except SessionRefused as refused:
            assert "spark-zk" in str(refused), refused  # not yet reloaded: the cluster is unknown
            return False
        return True

    wait_until(opened, "the gateway knows cluster spark-zk")
    try:
        launched = session.wait_launched()
        assert launched["engine.type"] == "SPARK_SQL", launched
        space = launched["engine.space"]
        assert len(zookeeper.children(space)) == 1, zookeeper.children(space)
        assert session.query("select count(*) from range(10)") == [[10]]
        jvms = spark_jvm_pids(work_dir)
        assert len(jvms) == 1, jvms
    finally:
        session.close()
    wait_gone(lambda: still_running(jvms), "the CONNECTION engine's Spark JVM")
    wait_gone(lambda: supervisor_pids(work_dir), "the CONNECTION engine's supervisor")
    wait_gone(lambda: zookeeper.children(space), "the CONNECTION engine's registration")
    # The engine's directory (metastore_db, ...) was the session's own: it went with it.
    leftovers = list(work_dir.rglob("metastore_db"))
    assert leftovers == [], leftovers


def test_a_bad_master_fails_the_first_statement_with_spark_submits_error(spark_kumiho):
    run = run_beeline(
        binary_url(spark_kumiho.port, options=f"?{SPARK_SQL};spark.master=bogus://x"),
        ["select 1"],
        user="bob",
    )
    assert run.returncode != 0, run.describe()
    output = run.stdout + run.stderr
    assert "Master must either be yarn or start with spark, k8s, or local" in output, run.describe()
    assert "spark-submit exited with exit status: 1 before the Spark Thrift Server accepted connections" in output, run.describe()
    assert run.result_sets() == [[]] or run.result_sets() == [], run.describe()
