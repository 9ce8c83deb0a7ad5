"""Runs a standalone ZooKeeper from Debian's `zookeeper` package on a free loopback port.

    zk = start_zookeeper(tmp_path)      # ready: it has answered a request
    zk.address                          # "127.0.0.1:PORT", for cluster configs and JDBC URLs
    zk.children("/kumiho")              # [] for a missing node
    zk.stop(); zk.start()               # same port, same data: sessions survive a short stop
    zk.wipe_and_restart()               # same port, empty data: every session has expired

Stop it with `zk.stop()` (fixtures should, in a `finally` or with `yield`); `close()` also
stops it and forgets the client.
"""

import shutil
import socket
import subprocess
import time
from pathlib import Path

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from harness.engine import stop_process

HOST = "127.0.0.1"
ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
# A cold JVM starts ZooKeeper in about a second; this bounds a broken start.
READY_TIMEOUT_S = 60
# Short ticks keep session expiry in tests short: ZooKeeper allows sessions of 2 to 20 ticks
# unless told otherwise, and maxSessionTimeout raises the ceiling to what gateways ask for.
TICK_MS = 200
MAX_SESSION_TIMEOUT_MS = 120_000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class ZooKeeper:
    """One standalone ZooKeeper server with its own directory, port and data."""

    def __init__(self, directory: Path, port: int):
        self.directory = directory
        self.port = port
        self.data_dir = directory / "data"
        self.config_path = directory / "zoo.cfg"
        self.log_path = directory / "zookeeper.log"
        self.process: subprocess.Popen | None = None
        self._client: KazooClient | None = None

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    def _write_config(self):
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(
            "\n".join(
                [
                    f"tickTime={TICK_MS}",
                    "initLimit=10",
                    "syncLimit=5",
                    f"dataDir={self.data_dir}",
                    f"clientPort={self.port}",
                    f"clientPortAddress={HOST}",
                    f"maxSessionTimeout={MAX_SESSION_TIMEOUT_MS}",
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=ruok,srvr,cons",
                    "",
                ]
            )
        )

    def start(self):
        """Starts (or restarts) the server on its port and data dir; returns once it answers."""
        if self.process is not None and self.process.poll() is None:
            return
        if not ZOOKEEPER_JAR.is_file():
            raise RuntimeError(f"{ZOOKEEPER_JAR} is missing: install Debian's `zookeeper` (scripts/setup.sh)")
        self._write_config()
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            ["java", "-Xmx256m", "-cp", str(ZOOKEEPER_JAR), MAIN_CLASS, str(self.config_path)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=self.directory,
        )
        log.close()
        self._wait_ready()

    def _wait_ready(self):
        deadline = time.monotonic() + READY_TIMEOUT_S
        last_error = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited with {self.process.returncode}; its log:\n{self.log_tail()}")
            client = KazooClient(hosts=self.address, timeout=2.0)
            try:
                client.start(timeout=2.0)
                client.get_children("/")
                return
            except Exception as error:  # not up yet: connection refused, timeout
                last_error = error
                time.sleep(0.1)
            finally:
                client.stop()
                client.close()
        self.stop()
        raise RuntimeError(f"ZooKeeper did not answer within {READY_TIMEOUT_S} s ({last_error}); its log:\n{self.log_tail()}")

    def stop(self):
        """Stops the server; its data stays for `start()`."""
        self._forget_client()
        if self.process is not None:
            stop_process(self.process)
            self.process = None

    def wipe_and_restart(self):
        """Stops, deletes every node and session, starts again on the same port."""
        self.stop()
        shutil.rmtree(self.data_dir, ignore_errors=True)
        self.start()

    def close(self):
        self.stop()

    def log_tail(self, limit: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-limit:]
        except FileNotFoundError:
            return ""

    def client(self) -> KazooClient:
        """A connected kazoo client, kept until the server stops."""
        if self._client is None:
            client = KazooClient(hosts=self.address, timeout=10.0)
            client.start(timeout=10.0)
            self._client = client
        return self._client

    def _forget_client(self):
        if self._client is not None:
            self._client.stop()
            self._client.close()
            self._client = None

    def children(self, path: str) -> list[str]:
        """The children of `path`, sorted; [] when `path` does not exist."""
        try:
            return sorted(self.client().get_children(path))
        except NoNodeError:
            return []

    def get(self, path: str) -> bytes | None:
        """The data of `path`; None when it does not exist."""
        try:
            data, _stat = self.client().get(path)
            return data
        except NoNodeError:
            return None

    def exists(self, path: str) -> bool:
        return self.client().exists(path) is not None


def start_zookeeper(tmp_path: Path, name: str = "zookeeper") -> ZooKeeper:
    """Starts a ZooKeeper in `tmp_path/name` on a free port and waits until it answers."""
    directory = Path(tmp_path) / name
    directory.mkdir(parents=True, exist_ok=True)
    zookeeper = ZooKeeper(directory, free_port())
    zookeeper.start()
    return zookeeper
