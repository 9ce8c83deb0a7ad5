"""Builds and runs `kumiho-engine` as a user would, and reads its resource use from /proc."""

import json
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

REPO_ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
# Debug builds start in well under a second; this only bounds a broken start.
READY_TIMEOUT_S = 60
STOP_TIMEOUT_S = 10
LISTENING = re.compile(r"^listening on (\S+):(\d+)$")
HTTP_LISTENING = re.compile(r"^http listening on (\S+):(\d+)$")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def build_binaries() -> Path:
    """Builds the workspace (debug) and returns the directory holding its binaries.

    The command is the one scripts/test.sh builds with: cargo unifies dependency features
    per invocation, so building only `-p kumiho-engine` would enable other features than
    `--workspace --all-targets` and rebuild DataFusion from scratch. The target directory
    comes from cargo itself, so CARGO_TARGET_DIR and .cargo/config are respected.
    """
    build = subprocess.run(
        ["cargo", "build", "--workspace", "--all-targets"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    if build.returncode != 0:
        raise RuntimeError(f"cargo build failed:\n{build.stderr[-8000:]}")
    metadata = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(json.loads(metadata.stdout)["target_directory"]) / "debug"


def build_engine() -> Path:
    """Builds the workspace once and returns the `kumiho-engine` binary's path."""
    binary = build_binaries() / "kumiho-engine"
    if not binary.is_file():
        raise RuntimeError(f"cargo built the workspace but {binary} does not exist")
    return binary


@dataclass
class Engine:
    """A running `kumiho-engine` process and where it listens."""

    process: subprocess.Popen
    port: int
    http_port: int | None
    stderr_path: Path
    # Lines the engine printed on stdout after the readiness lines (drained by a thread so
    # that a chatty engine never blocks on a full pipe).
    stdout_lines: list = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.process.pid

    def rss_bytes(self) -> int:
        """Resident set size now (VmRSS in /proc/PID/status)."""
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        raise RuntimeError(f"engine {self.pid} has no VmRSS: has it exited? {self.stderr_tail()}")

    def cpu_seconds(self) -> float:
        """User + system CPU time the engine has used so far (/proc/PID/stat)."""
        with open(f"/proc/{self.pid}/stat") as stat:
            # The command name (field 2) may hold spaces; fields after it are plain.
            after_name = stat.read().rsplit(")", 1)[1].split()
        utime, stime = int(after_name[11]), int(after_name[12])
        return (utime + stime) / CLOCK_TICKS

    def stderr_tail(self, limit: int = 4000) -> str:
        text = self.stderr_path.read_text(errors="replace")
        return text[-limit:]

    def assert_alive(self):
        code = self.process.poll()
        assert code is None, f"engine exited with {code}; its log:\n{self.stderr_tail()}"

    def stop(self):
        stop_process(self.process)


def stop_process(process: subprocess.Popen):
    """SIGTERM (graceful shutdown), then SIGKILL if it does not exit in time."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def start_engine(binary: Path, *flags: str, http: bool = False, env: dict | None = None) -> Engine:
    """Starts the engine on free ports of 127.0.0.1 and waits until it says it listens."""
    args = [str(binary), "--host", HOST, "--port", "0", *flags]
    if http:
        args += ["--http-port", "0"]
    stderr_file = tempfile.NamedTemporaryFile(prefix="kumiho-engine-", suffix=".log", delete=False)
    process = subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr_file,
        text=True,
        env={**os.environ, **(env or {})},
    )
    stderr_file.close()
    lines: queue.Queue = queue.Queue()

    def pump_stdout():
        for line in process.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump_stdout, daemon=True).start()
    engine = Engine(process, port=0, http_port=None, stderr_path=Path(stderr_file.name))

    def fail(reason: str):
        engine.stop()
        raise RuntimeError(f"{' '.join(args)}: {reason}; its log:\n{engine.stderr_tail()}")

    deadline = time.monotonic() + READY_TIMEOUT_S
    while engine.port == 0 or (http and engine.http_port is None):
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            fail(f"did not print 'listening on HOST:PORT' within {READY_TIMEOUT_S} s")
        if line is None:
            fail(f"exited with {process.wait()} before listening")
        if match := LISTENING.match(line):
            engine.port = int(match.group(2))
        elif match := HTTP_LISTENING.match(line):
            engine.http_port = int(match.group(2))
        else:
            engine.stdout_lines.append(line)

    def keep_draining():
        while (line := lines.get()) is not None:
            engine.stdout_lines.append(line)

    threading.Thread(target=keep_draining, daemon=True).start()
    return engine
