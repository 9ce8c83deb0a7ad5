"""Fixtures for the gateway tests: `kumiho` started on free ports with its own work directory
and cluster configs, a raw client that reads the launch handle, and registry inspection.

Import them in a test module with `from gateway_fixtures import *`.
"""

import base64
import fcntl
import os
import queue
import re
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness.engine import HOST, build_binaries, stop_process
from harness.tcli import ttypes
from harness.thrift_client import ThriftClient, check, column_values

READY_TIMEOUT_S = 60
# A first launch starts an engine process and builds its demo data.
LAUNCH_TIMEOUT_S = 120
BINARY_LISTENING = re.compile(r"^binary listening on (\S+):(\d+)$")
HTTP_LISTENING = re.compile(r"^http listening on (\S+):(\d+)$")
METRICS_LISTENING = re.compile(r"^metrics listening on (\S+):(\d+)$")
REST_LISTENING = re.compile(r"^rest listening on (\S+):(\d+)$")
LAUNCH_GUID = "kyuubi.session.engine.launch.handle.guid"
LAUNCH_SECRET = "kyuubi.session.engine.launch.handle.secret"
# Default cluster of the tests: the shipped one, with a short idle timeout so that engines
# left behind by a test do not pile up.
DEFAULT_CLUSTER = """\
registry:
  embedded: {}
engine:
  type: DATAFUSION
  share-level: USER
  idle-timeout: 5m
  initialize-timeout: 2m
"""


def build_gateway() -> Path:
    """Builds the workspace and returns `kumiho`'s path; the engine binary sits beside it."""
    binary = build_binaries() / "kumiho"
    assert binary.is_file(), f"cargo built the workspace but {binary} does not exist"
    return binary


@dataclass
class Gateway:
    """A running `kumiho` and the directories it serves."""

    process: subprocess.Popen
    work_dir: Path
    cluster_dir: Path
    stderr_path: Path
    port: int = 0
    http_port: int = 0
    # The Prometheus endpoint's port; 0 when started with `--metrics-enabled false`.
    metrics_port: int = 0
    # The REST API's port; 0 when started with `--rest-enabled false`.
    rest_port: int = 0
    stdout_lines: list = field(default_factory=list)

    def log(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_for_log(self, pattern: str, after: int = 0, timeout: float = 30) -> str:
        """Waits until the gateway's log (from byte `after`) matches `pattern`; returns the match."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while True:
            text = self.log()[after:]
            if match := regex.search(text):
                return match.group(0)
            assert time.monotonic() < deadline, f"gateway never logged /{pattern}/; its log:\n{text[-4000:]}"
            assert self.process.poll() is None, f"gateway exited with {self.process.returncode}:\n{text[-4000:]}"
            time.sleep(0.1)

    def write_cluster(self, name: str, text: str):
        """Writes a cluster file the way an editor saving it would (replace in one step)."""
        temp = self.cluster_dir / f".{name}.yaml.tmp"
        temp.write_text(text)
        os.replace(temp, self.cluster_dir / f"{name}.yaml")

    def stop(self):
        stop_process(self.process)

    def kill(self):
        """kill -9: no cleanup of any kind."""
        self.process.kill()
        self.process.wait()


def default_cluster_dir(root: Path) -> Path:
    """`root/cluster-configs` holding the default cluster alone."""
    directory = root / "cluster-configs"
    directory.mkdir()
    (directory / "default.yaml").write_text(DEFAULT_CLUSTER)
    return directory


def start_gateway(binary: Path, work_dir: Path, cluster_dir: Path, *flags: str, env: dict | None = None) -> Gateway:
    """Starts `kumiho` with `flags` on free ports; `env` (default: this process's) is its
    environment, RUST_LOG aside."""
    # A free port for metrics too: Kyuubi's 10019 would let only one gateway start at a time.
    metrics = "--metrics-enabled" not in flags or flags[flags.index("--metrics-enabled") + 1] != "false"
    # REST too: Kyuubi's 10099 likewise.
    rest = "--rest-enabled" not in flags or flags[flags.index("--rest-enabled") + 1] != "false"
    args = [
        str(binary),
        "--bind-host", HOST,
        "--binary-port", "0",
        "--http-port", "0",
        "--metrics-port", "0",
        "--rest-port", "0",
        "--work-dir", str(work_dir),
        "--cluster-configs", str(cluster_dir),
        "--cluster-rescan-interval", "1s",
        *flags,
    ]
    stderr_file = tempfile.NamedTemporaryFile(prefix="kumiho-", suffix=".log", delete=False)
    process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr_file, text=True,
                               env={**(os.environ if env is None else env), "RUST_LOG": "info"})
    stderr_file.close()
    gateway = Gateway(process, work_dir, cluster_dir, Path(stderr_file.name))
    lines: queue.Queue = queue.Queue()

    def pump():
        for line in process.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not (gateway.port and gateway.http_port and (gateway.metrics_port or not metrics)
               and (gateway.rest_port or not rest)):
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            gateway.stop()
            raise RuntimeError(f"{' '.join(args)} did not start; its log:\n{gateway.log()[-4000:]}")
        if line is None:
            raise RuntimeError(f"{' '.join(args)} exited with {process.wait()}; its log:\n{gateway.log()[-4000:]}")
        if match := BINARY_LISTENING.match(line):
            gateway.port = int(match.group(2))
        elif match := HTTP_LISTENING.match(line):
            gateway.http_port = int(match.group(2))
        elif match := METRICS_LISTENING.match(line):
            gateway.metrics_port = int(match.group(2))
        elif match := REST_LISTENING.match(line):
            gateway.rest_port = int(match.group(2))
        else:
            gateway.stdout_lines.append(line)
    return gateway


def engine_pids(work_dir: Path) -> list[int]:
    """Engines launched for `work_dir` (their command line names its registry)."""
    return engine_pids_on(str(work_dir))


def live_registrations(work_dir: Path, space: str) -> list[str]:
    """Names of the live registrations in an engine space of the embedded registry: files
    whose holder (the engine) keeps a lock on them."""
    directory = work_dir / "registry" / space.strip("/")
    if not directory.is_dir():
        return []
    live = []
    for entry in sorted(directory.iterdir()):
        if entry.name.startswith(".") or not entry.name.startswith("serviceUri="):
            continue
        try:
            with open(entry, "rb") as file:
                try:
                    fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    live.append(entry.name)
                else:
                    fcntl.flock(file, fcntl.LOCK_UN)
        except FileNotFoundError:
            continue
    return live


def ref_id_of(registration: str) -> str:
    return dict(part.split("=", 1) for part in registration.split(";"))["refId"]


def wait_until(predicate, what: str, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.2)


@dataclass
class GatewaySession:
    """A raw client's session through the gateway, with its LaunchEngine handle."""

    client: ThriftClient
    handle: ttypes.TSessionHandle
    configuration: dict
    launch: ttypes.TOperationHandle

    def launch_status(self):
        return self.client.client.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=self.launch))

    def wait_launched(self) -> dict:
        """Waits for LaunchEngine to finish; returns its key/value result."""
        deadline = time.monotonic() + LAUNCH_TIMEOUT_S
        while True:
            status = self.launch_status()
            check(status.status, "GetOperationStatus(LaunchEngine)")
            if status.operationState == ttypes.TOperationState.FINISHED_STATE:
                break
            assert status.operationState != ttypes.TOperationState.ERROR_STATE, f"launch failed: {status.errorMessage}"
            assert time.monotonic() < deadline, "launch did not finish in time"
            time.sleep(0.2)
        rows = self.client.client.FetchResults(ttypes.TFetchResultsReq(
            operationHandle=self.launch, orientation=ttypes.TFetchOrientation.FETCH_NEXT, maxRows=100))
        check(rows.status, "FetchResults(LaunchEngine)")
        keys, values = (column_values(column) for column in rows.results.columns)
        return dict(zip(keys, values))

    def launch_log(self) -> list[str]:
        reply = self.client.client.FetchResults(ttypes.TFetchResultsReq(
            operationHandle=self.launch, orientation=ttypes.TFetchOrientation.FETCH_NEXT, maxRows=1000, fetchType=1))
        check(reply.status, "FetchResults(LaunchEngine log)")
        return column_values(reply.results.columns[0]) if reply.results.columns else []

    def query(self, sql: str) -> list[list]:
        operation = self.client.execute(self.handle, sql)
        rowset = self.client.fetch(operation, 10_000)
        self.client.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=operation))
        return [column_values(column) for column in rowset.columns]

    def close(self):
        try:
            self.client.client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=self.handle))
        finally:
            self.client.close()


def launch_handle(configuration: dict) -> ttypes.TOperationHandle:
    """The LaunchEngine operation handle from an OpenSession reply's configuration."""
    return ttypes.TOperationHandle(
        operationId=ttypes.THandleIdentifier(
            guid=base64.b64decode(configuration[LAUNCH_GUID]),
            secret=base64.b64decode(configuration[LAUNCH_SECRET]),
        ),
        operationType=ttypes.TOperationType.UNKNOWN,
        hasResultSet=True,
    )


def open_session(gateway: Gateway, user: str = "alice", sasl: bool = True, configuration: dict | None = None) -> GatewaySession:
    """Opens a session through the gateway with these (bare) session settings."""
    configuration = configuration or {}
    client = ThriftClient(gateway.port, sasl=sasl, user=user)
    reply = client.client.OpenSession(ttypes.TOpenSessionReq(
        client_protocol=ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10, username=user,
        configuration=configuration))
    if reply.status.statusCode not in (ttypes.TStatusCode.SUCCESS_STATUS, ttypes.TStatusCode.SUCCESS_WITH_INFO_STATUS):
        client.close()
        raise SessionRefused(reply.status.errorMessage or "")
    return GatewaySession(client, reply.sessionHandle, reply.configuration, launch_handle(reply.configuration))


class SessionRefused(Exception):
    """OpenSession answered with an error status; the message is the server's."""


@pytest.fixture(scope="session")
def gateway_binary():
    return build_gateway()


@pytest.fixture
def gateway_dirs(tmp_path):
    """A work directory and a cluster-configs directory holding the tests' default cluster."""
    work_dir = tmp_path / "work"
    cluster_dir = tmp_path / "cluster-configs"
    cluster_dir.mkdir()
    (cluster_dir / "default.yaml").write_text(DEFAULT_CLUSTER)
    yield work_dir, cluster_dir
    kill_engines_on(str(work_dir))


@pytest.fixture
def start_kumiho(gateway_binary, gateway_dirs):
    """Starts gateways on the test's directories (several share them, as after a restart);
    all are stopped when the test ends."""
    work_dir, cluster_dir = gateway_dirs
    started = []

    def start(*flags: str) -> Gateway:
        gateway = start_gateway(gateway_binary, work_dir, cluster_dir, *flags)
        started.append(gateway)
        return gateway

    yield start
    for gateway in started:
        gateway.stop()


@pytest.fixture
def kumiho(start_kumiho):
    """One gateway on the test's own directories."""
    return start_kumiho()


# ZooKeeper clusters and gateways registered for ZooKeeper discovery (tests/test_zookeeper_*.py).

def zookeeper_cluster(address: str, namespace: str = "kumiho") -> str:
    """A cluster config whose engines register in the ZooKeeper ensemble at `address`, with
    timeouts short enough that an unreachable ensemble fails a session quickly."""
    return f"""\
registry:
  zookeeper:
    addresses: {address}
    namespace: {namespace}
    session-timeout: 10s
    connect-timeout: 5s
engine:
  type: DATAFUSION
  share-level: USER
  idle-timeout: 5m
  initialize-timeout: 2m
"""


def ha_flags(address: str, namespace: str) -> tuple[str, ...]:
    """Gateway flags that register it for ZooKeeper discovery under `/namespace`."""
    return ("--ha-addresses", address, "--ha-namespace", namespace,
            "--ha-session-timeout", "10s", "--ha-connect-timeout", "5s")


def discovery_url(zookeeper_address: str, namespace: str, database: str = "default") -> str:
    """A Hive JDBC URL that finds a gateway through ZooKeeper."""
    return (f"jdbc:hive2://{zookeeper_address}/{database};"
            f"serviceDiscoveryMode=zooKeeper;zooKeeperNamespace={namespace}")


def engine_pids_on(*needles: str) -> list[int]:
    """Engines whose command line mentions every one of `needles` (a ZooKeeper address, an
    engine space)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmdline and cmdline[0].endswith(b"kumiho-engine") and all(
                any(needle.encode() in arg for arg in cmdline) for needle in needles):
            pids.append(int(entry.name))
    return pids


def kill_engines_on(needle: str):
    """Engines outlive gateways by design; a test's engines end with the test."""
    for pid in engine_pids_on(needle):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture
def zookeeper(tmp_path):
    """A ZooKeeper of the test's own; its engines are killed and it stops when the test ends."""
    from harness.zookeeper import start_zookeeper

    server = start_zookeeper(tmp_path)
    yield server
    kill_engines_on(server.address)
    server.stop()


def local_socket_entries(name: str) -> list[str]:
    """States (/proc/net/unix `St`: 01 listening, 03 connected) of the sockets bound to the
    abstract name `name`, as `ss -x` lists them."""
    states = []
    with open("/proc/net/unix") as table:
        next(table)
        for line in table:
            fields = line.split()
            if len(fields) >= 8 and fields[7] == "@" + name:
                states.append(fields[5])
    return states
