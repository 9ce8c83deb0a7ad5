"""Kyuubi's REST batch API (`/api/v1/batches`) on a real gateway, with pyspark's real
`spark-submit`: a batch that finishes, one that fails, one cancelled, and every kind of bad
request answered to its client alone while the gateway goes on serving.

Each spark-submit starts a JVM (about ten seconds here), so the module runs three in all,
submitted together and polled, never slept on.
"""

import base64
import json
import os
import re
import socket
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from gateway_fixtures import kill_engines_on, start_gateway, wait_until
from gateway_fixtures import gateway_binary  # noqa: F401 (fixture)
from harness.engine import HOST
from harness.spark import spark_cluster_yaml

BATCH_TIMEOUT_S = 180
BATCH_FIELDS = {"id", "user", "batchType", "name", "appStartTime", "appId", "appUrl", "appState", "appDiagnostic",
                "kyuubiInstance", "state", "createTime", "endTime", "batchInfo"}

HELLO = """\
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
print("kumiho-batch-answer", spark.range(5).count(), "args", sys.argv[1:], flush=True)
print("kumiho-batch-app", spark.sparkContext.applicationId, flush=True)
print("kumiho-batch-user", spark.sparkContext.sparkUser(), flush=True)
spark.stop()
"""
FAIL = """\
raise ValueError("kumiho-boom: the input is missing")
"""
SLEEP = """\
import time
print("kumiho-batch-sleeping", flush=True)
time.sleep(600)
"""


def rest(port: int, method: str, path: str, user: str | None = "alice", body=None, headers=None):
    """One call: (status, parsed JSON or text, headers)."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(f"http://{HOST}:{port}/api/v1{path}", data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if user is not None:
        request.add_header("Authorization", "Basic " + base64.b64encode(f"{user}:x".encode()).decode())
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, raw, got = response.status, response.read(), response.headers
    except urllib.error.HTTPError as e:
        status, raw, got = e.code, e.read(), e.headers
    text = raw.decode()
    if got.get("Content-Type", "").startswith("application/json"):
        return status, json.loads(text), got
    return status, text, got


@pytest.fixture(scope="module")
def gateway(gateway_binary, tmp_path_factory):  # noqa: F811
    """A gateway whose default cluster points at pyspark's Spark (local[1], no UI)."""
    root = tmp_path_factory.mktemp("rest")
    work_dir, cluster_dir = root / "work", root / "cluster-configs"
    cluster_dir.mkdir()
    (cluster_dir / "default.yaml").write_text(spark_cluster_yaml())
    gateway = start_gateway(gateway_binary, work_dir, cluster_dir)
    assert gateway.rest_port, "the gateway announced no REST port"
    gateway.scripts = root / "scripts"
    gateway.scripts.mkdir()
    yield gateway
    gateway.stop()
    kill_processes_mentioning(str(gateway.scripts))
    kill_engines_on(str(work_dir))


def script(gateway, name: str, text: str) -> str:
    path = gateway.scripts / name
    path.write_text(text)
    return str(path)


def submit(gateway, resource: str, name: str, user: str = "alice", args=None, batch_id=None) -> dict:
    conf = {"spark.sql.shuffle.partitions": "1"}
    if batch_id:
        conf["kyuubi.batch.id"] = batch_id
    status, batch, _ = rest(gateway.rest_port, "POST", "/batches", user, {
        "batchType": "pyspark", "resource": resource, "name": name, "args": args or [], "conf": conf,
    })
    assert status == 200, batch
    assert set(batch) == BATCH_FIELDS, batch
    assert batch["state"] in ("PENDING", "RUNNING"), batch
    assert (batch["user"], batch["batchType"], batch["name"]) == (user, "PYSPARK", name)
    uuid.UUID(batch["id"])
    return batch


def wait_for(gateway, batch_id: str, predicate, what: str, user: str = "alice") -> dict:
    deadline = time.monotonic() + BATCH_TIMEOUT_S
    while True:
        status, batch, _ = rest(gateway.rest_port, "GET", f"/batches/{batch_id}", user)
        assert status == 200, batch
        if predicate(batch):
            return batch
        assert time.monotonic() < deadline, f"batch never {what}: {batch}\n{log_lines(gateway, batch_id)[-40:]}"
        time.sleep(0.3)


def log_lines(gateway, batch_id: str, user: str = "alice") -> list[str]:
    status, log, _ = rest(gateway.rest_port, "GET", f"/batches/{batch_id}/localLog?from=0&size=10000", user)
    assert status == 200, log
    assert log["rowCount"] == len(log["logRowSet"])
    return log["logRowSet"]


def processes_mentioning(needle: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if needle.encode() in cmdline:
            pids.append(int(entry.name))
    return pids


def kill_processes_mentioning(needle: str):
    for pid in processes_mentioning(needle):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


def submit_upload(gateway, file_name: str, text: str, name: str, user: str = "alice") -> dict:
    """A batch whose resource is uploaded with it (Kyuubi's multipart form)."""
    boundary = "kumiho-" + uuid.uuid4().hex
    request = json.dumps({"batchType": "PYSPARK", "name": name, "conf": {"spark.sql.shuffle.partitions": "1"}})
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"batchRequest\"\r\n"
            f"Content-Type: application/json\r\n\r\n{request}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"resourceFile\"; filename=\"{file_name}\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n{text}\r\n--{boundary}--\r\n").encode()
    status, batch, _ = rest(gateway.rest_port, "POST", "/batches", user, body,
                            headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert status == 200, batch
    assert set(batch) == BATCH_FIELDS and batch["name"] == name, batch
    return batch


@pytest.fixture(scope="module")
def batches(gateway):
    """The three Spark batches, submitted together: {name: submitted batch}. The failing
    one's script is uploaded with it."""
    return {
        "hello": submit(gateway, script(gateway, "hello.py", HELLO), "hello", args=["day=2026-12-01"]),
        "fail": submit_upload(gateway, "fail.py", FAIL, "fail"),
        "sleep": submit(gateway, script(gateway, "sleep.py", SLEEP), "sleep", batch_id=SLEEP_BATCH_ID),
    }


# The id the client chose for the sleeping batch, to retry its submission.
SLEEP_BATCH_ID = str(uuid.uuid4())


def test_a_pyspark_batch_finishes_with_its_output_and_app_id(gateway, batches):
    batch = wait_for(gateway, batches["hello"]["id"], lambda b: b["state"] in ("FINISHED", "ERROR", "CANCELED"),
                     "ended")
    lines = log_lines(gateway, batch["id"])
    assert batch["state"] == "FINISHED", (batch, lines[-30:])
    assert "kumiho-batch-answer 5 args ['day=2026-12-01']" in lines, lines[-30:]
    [app_line] = [line for line in lines if line.startswith("kumiho-batch-app ")]
    app_id = app_line.split()[1]
    assert re.fullmatch(r"local-\d+", app_id), app_line
    assert batch["appId"] == app_id
    assert batch["appState"] == "FINISHED"
    assert batch["kyuubiInstance"].endswith(f":{gateway.rest_port}")
    assert 0 < batch["createTime"] <= batch["appStartTime"] <= batch["endTime"]
    # The command line: the cluster's master and conf, the batch's conf over it, client mode.
    [command] = [line for line in lines if line.startswith("kumiho: starting ")]
    assert "--master local[1] --deploy-mode client --name hello --proxy-user alice" in command, command
    # Spark ran as the batch's user (spark-submit --proxy-user), not as the gateway's.
    assert "kumiho-batch-user alice" in lines, lines[-30:]
    assert "--conf spark.sql.shuffle.partitions=1" in command and "--conf spark.ui.enabled=false" in command
    # Paged reads.
    status, page, _ = rest(gateway.rest_port, "GET", f"/batches/{batch['id']}/localLog?from=1&size=2")
    assert status == 200 and page == {"logRowSet": lines[1:3], "rowCount": 2}, page
    # Deleting an ended batch does nothing and says so.
    status, closed, _ = rest(gateway.rest_port, "DELETE", f"/batches/{batch['id']}")
    assert status == 200 and closed["success"] is False and "FINISHED" in closed["msg"], closed


def test_an_uploaded_failing_batch_is_an_error_naming_the_error(gateway, batches):
    batch = wait_for(gateway, batches["fail"]["id"], lambda b: b["state"] in ("FINISHED", "ERROR", "CANCELED"),
                     "ended")
    # The upload ran from the batch's own directory.
    uploaded = gateway.work_dir / "batches" / batch["id"] / "fail.py"
    assert uploaded.read_text() == FAIL
    assert any(line.startswith("kumiho: starting ") and line.endswith(str(uploaded))
               for line in log_lines(gateway, batch["id"]))
    assert batch["state"] == "ERROR", batch
    assert batch["appState"] == "FAILED"
    diagnostic = batch["appDiagnostic"]
    assert "exit status" in diagnostic and "ValueError: kumiho-boom: the input is missing" in diagnostic, diagnostic
    # Spark's INFO chatter stays out of it.
    assert " INFO " not in diagnostic, diagnostic


def test_deleting_a_running_batch_cancels_it_and_stops_its_processes(gateway, batches):
    batch_id = batches["sleep"]["id"]
    sleep_script = str(gateway.scripts / "sleep.py")
    wait_for(gateway, batch_id, lambda b: b["state"] == "RUNNING" and "kumiho-batch-sleeping" in log_lines(gateway, batch_id),
             "running its script")
    running = processes_mentioning(sleep_script)
    assert running, "spark-submit and its Python driver should be running"
    # A client retrying the submission with the id it chose gets this batch, not a second one.
    assert batch_id == SLEEP_BATCH_ID
    retried = submit(gateway, sleep_script, "sleep", batch_id=SLEEP_BATCH_ID)
    assert (retried["id"], retried["state"]) == (batch_id, "RUNNING"), retried
    assert retried["batchInfo"] == {"kyuubi.batch.duplicated": "true"}, retried
    assert sorted(processes_mentioning(sleep_script)) == sorted(running), "nothing new started"
    # Not bob's to cancel.
    status, message, _ = rest(gateway.rest_port, "DELETE", f"/batches/{batch_id}", "bob")
    assert status == 403, message
    status, closed, _ = rest(gateway.rest_port, "DELETE", f"/batches/{batch_id}")
    assert status == 200 and closed["success"] is True, closed
    status, batch, _ = rest(gateway.rest_port, "GET", f"/batches/{batch_id}")
    assert (batch["state"], batch["appState"]) == ("CANCELED", "KILLED"), batch
    assert batch["endTime"] >= batch["createTime"]
    wait_until(lambda: not processes_mentioning(sleep_script), "the cancelled batch's processes are gone", timeout=15)


def test_batches_are_listed_filtered_and_paged_for_their_owner_only(gateway, batches):
    for batch in batches.values():
        wait_for(gateway, batch["id"], lambda b: b["state"] in ("FINISHED", "ERROR", "CANCELED"), "ended")
    status, listed, _ = rest(gateway.rest_port, "GET", "/batches?batchType=PYSPARK")
    assert status == 200 and listed["from"] == 0, listed
    assert [b["name"] for b in listed["batches"]] == ["hello", "fail", "sleep"]
    assert listed["total"] == 3
    status, listed, _ = rest(gateway.rest_port, "GET", "/batches?batchState=error")
    assert [b["name"] for b in listed["batches"]] == ["fail"]
    status, listed, _ = rest(gateway.rest_port, "GET", "/batches?from=1&size=1&desc=true")
    assert (listed["from"], listed["total"], [b["name"] for b in listed["batches"]]) == (1, 1, ["fail"])
    status, listed, _ = rest(gateway.rest_port, "GET", "/batches?batchName=hello&batchUser=alice")
    assert [b["name"] for b in listed["batches"]] == ["hello"]
    # bob sees none of alice's batches, and may not read one.
    status, listed, _ = rest(gateway.rest_port, "GET", "/batches", "bob")
    assert status == 200 and listed["batches"] == [], listed
    hello = batches["hello"]["id"]
    for path in (f"/batches/{hello}", f"/batches/{hello}/localLog"):
        status, message, _ = rest(gateway.rest_port, "GET", path, "bob")
        assert status == 403 and "alice" in message, (path, status, message)


def test_bad_requests_are_refused_to_their_client_and_the_gateway_goes_on(gateway):
    port = gateway.rest_port
    # No credentials, or credentials that are not Basic user:password.
    for headers in ({}, {"Authorization": "Bearer abc.def"}, {"Authorization": "Basic !!!not-base64"}):
        status, message, got = rest(port, "GET", "/batches", None, headers=headers)
        assert status == 401, (headers, status, message)
        assert got["WWW-Authenticate"].startswith("Basic"), got
    # Malformed JSON, missing fields, an unsupported type, a cluster that cannot run Spark.
    status, message, _ = rest(port, "POST", "/batches", body=b'{"batchType": "PYSPARK", "resource": ')
    assert status == 400 and "not a valid BatchRequest" in message and "line 1" in message, message
    status, message, _ = rest(port, "POST", "/batches", body={"batchType": "PYSPARK"})
    assert status == 400 and "`resource` is required" in message, message
    status, message, _ = rest(port, "POST", "/batches", body={"batchType": "SPARK", "resource": "/x.jar"})
    assert status == 400 and "`className` is required" in message, message
    status, message, _ = rest(port, "POST", "/batches", body={"batchType": "HIVE", "resource": "/x.sql"})
    assert status == 400 and "SPARK or PYSPARK" in message, message
    mark = len(gateway.log())
    gateway.write_cluster("nospark", "engine:\n  spark:\n    home: /nonexistent/spark\n")
    gateway.wait_for_log(r"cluster added cluster=nospark", after=mark)
    status, message, _ = rest(port, "POST", "/batches", body={
        "batchType": "PYSPARK", "resource": "/x.py", "conf": {"kyuubi.session.cluster": "nospark"}})
    assert status == 400 and "cluster `nospark` cannot run Spark batches" in message, message
    assert "engine.spark.home" in message, message
    # Impersonation without being a super user.
    status, message, _ = rest(port, "POST", "/batches", body={
        "batchType": "PYSPARK", "resource": "/x.py", "conf": {"hive.server2.proxy.user": "bob"}})
    assert status == 403 and "may not impersonate" in message, message
    # Unknown and malformed ids, paths and methods.
    status, message, _ = rest(port, "GET", f"/batches/{uuid.uuid4()}")
    assert status == 404 and "unknown" in message, message
    status, message, _ = rest(port, "DELETE", "/batches/not-a-uuid")
    assert status == 404 and "UUID" in message, message
    assert rest(port, "GET", "/nowhere")[0] == 404
    status, message, got = rest(port, "PUT", "/batches", body={})
    assert status == 405 and got["Allow"] == "GET, POST", (status, message)
    # A huge declared body is refused before it is sent.
    with socket.create_connection((HOST, port), timeout=10) as raw:
        credentials = base64.b64encode(b"alice:x").decode()
        raw.sendall((f"POST /api/v1/batches HTTP/1.1\r\nHost: {HOST}\r\nAuthorization: Basic {credentials}\r\n"
                     "Content-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n{").encode())
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = raw.recv(4096)
            if not chunk:
                break
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 413"), reply
    # None of it left a batch behind, and the gateway still serves everyone.
    status, listed, _ = rest(port, "GET", "/batches", "carol")
    assert status == 200 and listed["batches"] == []
    assert rest(port, "GET", "/ping", None)[:2] == (200, "pong")
    assert gateway.process.poll() is None


def test_a_restarted_gateway_lists_old_batches_and_ends_those_it_lost(gateway, gateway_binary, batches):  # noqa: F811
    for batch in batches.values():
        wait_for(gateway, batch["id"], lambda b: b["state"] in ("FINISHED", "ERROR", "CANCELED"), "ended")
    records = gateway.work_dir / "batches"
    # A batch that was running under a gateway that died, whose spark-submit is gone too.
    lost = json.loads((records / f"{batches['hello']['id']}.json").read_text())
    lost.update(id=str(uuid.uuid4()), state="RUNNING", endTime=0, pid=2 ** 22 - 3, pidStart=1, name="lost")
    (records / f"{lost['id']}.json").write_text(json.dumps(lost))
    again = start_gateway(gateway_binary, gateway.work_dir, gateway.cluster_dir)
    try:
        status, listed, _ = rest(again.rest_port, "GET", "/batches")
        assert status == 200, listed
        states = {b["name"]: b["state"] for b in listed["batches"]}
        assert states == {"hello": "FINISHED", "fail": "ERROR", "sleep": "CANCELED", "lost": "ERROR"}, states
        status, batch, _ = rest(again.rest_port, "GET", f"/batches/{lost['id']}")
        assert "gateway restarted" in batch["appDiagnostic"], batch
        assert batch["endTime"] > 0
        assert "kumiho-batch-answer 5" in " ".join(log_lines(again, batches["hello"]["id"]))
    finally:
        again.stop()
