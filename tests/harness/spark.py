"""Spark SQL engines launched by kumiho in tests: cluster configs for them, their processes
(the `kumiho-spark-engine` supervisor and the Spark JVM under it), and stopping them."""

import os
import signal
import time
from pathlib import Path

from .beeline import SPARK_HOME

# Every Spark launch of the tests: one core, no web UI, few shuffle partitions.
SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
}
# Spark stops within seconds of SIGTERM; this only bounds a hang.
STOP_TIMEOUT_S = 60


def spark_cluster_yaml(engine_type: str = "DATAFUSION", idle_timeout: str = "5m", master: str = "local[1]",
                       zookeeper: str | None = None, conf: dict[str, str] | None = None) -> str:
    """A cluster config whose Spark settings point at pyspark's Spark (`local[1]`), its
    engines registered in the embedded registry or in the ZooKeeper at `zookeeper`, with
    `conf` over the tests' `SPARK_CONF`.

    With `engine_type` DATAFUSION, sessions pick Spark with `kyuubi.engine.type=SPARK_SQL`.
    """
    conf = "".join(f'      {key}: "{value}"\n' for key, value in {**SPARK_CONF, **(conf or {})}.items())
    registry = f"  zookeeper: {{addresses: '{zookeeper}', namespace: kumiho}}\n" if zookeeper else "  embedded: {}\n"
    return (
        "registry:\n"
        f"{registry}"
        "engine:\n"
        f"  type: {engine_type}\n"
        "  share-level: USER\n"
        f"  idle-timeout: {idle_timeout}\n"
        "  initialize-timeout: 3m\n"
        "  spark:\n"
        f"    home: {SPARK_HOME}\n"
        f"    master: {master}\n"
        "    conf:\n"
        f"{conf}"
    )


def _cmdline(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def _pids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def supervisor_pids(work_dir: Path) -> list[int]:
    """`kumiho-spark-engine` processes launched for `work_dir` (their flags name its registry)."""
    needle = str(work_dir).encode()
    return [
        pid for pid in _pids()
        if (cmdline := _cmdline(pid)) and cmdline[0].endswith(b"kumiho-spark-engine")
        and any(needle in arg for arg in cmdline)
    ]


def spark_jvm_pids(work_dir: Path) -> list[int]:
    """Spark JVMs (spark-submit execs java) running in an engine directory under `work_dir`
    (`engines/`, or `clusters/NAME/engines/` for a cluster on ZooKeeper)."""
    engines = work_dir.resolve()
    pids = []
    for pid in _pids():
        cmdline = _cmdline(pid)
        if not cmdline or not cmdline[0].endswith(b"java"):
            continue
        try:
            cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            continue
        if cwd.is_relative_to(engines):
            pids.append(pid)
    return pids


def still_running(pids: list[int]) -> list[int]:
    """Those of `pids` that are still running (zombies, whose command line is empty, are not)."""
    return [pid for pid in pids if _cmdline(pid) not in ([], [b""])]


def wait_gone(pids_of, what: str, timeout: float = STOP_TIMEOUT_S):
    """Waits until `pids_of()` is empty; fails naming what is still running."""
    deadline = time.monotonic() + timeout
    while pids := pids_of():
        assert time.monotonic() < deadline, f"{what} still running: pids {pids}"
        time.sleep(0.2)


def stop_spark_engines(work_dir: Path):
    """Stops every Spark engine of `work_dir`: SIGTERM to the supervisors (which deregister and
    stop Spark), then SIGKILL to whatever is left."""
    for pid in supervisor_pids(work_dir):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while (supervisor_pids(work_dir) or spark_jvm_pids(work_dir)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in supervisor_pids(work_dir) + spark_jvm_pids(work_dir):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
