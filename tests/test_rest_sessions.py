"""Kyuubi's REST sessions and statements (`/api/v1/sessions`, `/api/v1/operations`) on a real
gateway with the DataFusion engine, driven with `requests` as a script written for Kyuubi
drives them: open a session, run statements, poll their events, read logs, metadata and rows,
cancel, close.

Each test uses users of its own, so that each sees its own engine launch; nothing sleeps on
a guess: every wait polls for what it waits for.
"""

import time
import uuid

import pytest
import requests

from gateway_fixtures import DEFAULT_CLUSTER, engine_pids, kill_engines_on, start_gateway, wait_until
from gateway_fixtures import gateway_binary  # noqa: F401 (fixture)
from harness.engine import HOST

STATEMENT_TIMEOUT_S = 120
ENDLESS_QUERY = "SELECT sum(value % 7) AS s FROM generate_series(1, 1000000000000)"
TYPED_ROW = (
    "SELECT CAST(7 AS INT) AS i, CAST(9000000000 AS BIGINT) AS bi, 'kumiho' AS s, "
    "CAST(NULL AS STRING) AS n, CAST(12345.67 AS DECIMAL(10,2)) AS dec, DATE '2024-01-31' AS dt, "
    "TIMESTAMP '2024-01-31 12:34:56.789' AS ts, CAST(2.25 AS DOUBLE) AS d, true AS b"
)
OPERATION_EVENT_FIELDS = {"statementId", "remoteId", "statement", "shouldRunAsync", "state", "eventTime",
                          "createTime", "startTime", "completeTime", "exception", "sessionId", "sessionUser",
                          "sessionType", "kyuubiInstance", "metrics"}


class Rest:
    """A REST client of one gateway, as one user (HTTP Basic)."""

    def __init__(self, port: int, user: str, password: str = "x"):
        self.base = f"http://{HOST}:{port}/api/v1"
        self.http = requests.Session()
        self.http.auth = (user, password)
        self.user = user

    def call(self, method: str, path: str, **kwargs) -> requests.Response:
        return self.http.request(method, self.base + path, timeout=60, **kwargs)

    def ok(self, method: str, path: str, **kwargs):
        response = self.call(method, path, **kwargs)
        assert response.status_code == 200, f"{method} {path}: {response.status_code} {response.text}"
        return response.json() if response.headers.get("Content-Type", "").startswith("application/json") else None

    def open(self, configs: dict | None = None, **params) -> str:
        handle = self.ok("POST", "/sessions", json={"configs": configs or {}}, params=params)
        assert set(handle) == {"identifier", "kyuubiInstance"}, handle
        uuid.UUID(handle["identifier"])
        return handle["identifier"]

    def statement(self, session: str, sql: str, run_async: bool = False, **extra) -> str:
        body = {"statement": sql, "runAsync": run_async, "queryTimeout": 0, "confOverlay": {}, **extra}
        operation = self.ok("POST", f"/sessions/{session}/operations/statement", json=body)
        assert set(operation) == {"identifier"}, operation
        return operation["identifier"]

    def event(self, operation: str) -> dict:
        event = self.ok("GET", f"/operations/{operation}/event")
        assert set(event) == OPERATION_EVENT_FIELDS, event
        return event

    def wait_for_end(self, operation: str) -> tuple[dict, list[str]]:
        """Polls the event until the operation ends; returns it and every state seen."""
        deadline = time.monotonic() + STATEMENT_TIMEOUT_S
        states = []
        while True:
            event = self.event(operation)
            states.append(event["state"])
            if event["state"] in ("FINISHED", "ERROR", "CANCELED", "CLOSED", "TIMEOUT"):
                return event, states
            assert time.monotonic() < deadline, f"operation never ended: {event}"
            time.sleep(0.1)

    def rows(self, operation: str, **params) -> dict:
        rowset = self.ok("GET", f"/operations/{operation}/rowset", params=params)
        assert rowset["rowCount"] == len(rowset["rows"]), rowset
        return rowset

    def log(self, operation: str, **params) -> list[str]:
        log = self.ok("GET", f"/operations/{operation}/log", params=params)
        assert log["rowCount"] == len(log["logRowSet"]), log
        return log["logRowSet"]


def expect(response: requests.Response, status: int, *texts: str):
    """The answer has this status and says these things."""
    assert response.status_code == status and all(text in response.text for text in texts), \
        f"{response.request.method} {response.url}: {response.status_code} {response.text}"


def values(rowset: dict) -> list[list]:
    return [[field["value"] for field in row["fields"]] for row in rowset["rows"]]


@pytest.fixture(scope="module")
def gateway(gateway_binary, tmp_path_factory):  # noqa: F811
    root = tmp_path_factory.mktemp("rest-sessions")
    work_dir, cluster_dir = root / "work", root / "cluster-configs"
    cluster_dir.mkdir()
    (cluster_dir / "default.yaml").write_text(DEFAULT_CLUSTER + "super-users: [etl_admin]\n")
    gateway = start_gateway(gateway_binary, work_dir, cluster_dir)
    assert gateway.rest_port, "the gateway announced no REST port"
    yield gateway
    gateway.stop()
    kill_engines_on(str(work_dir))


def test_a_statement_returns_its_rows_and_columns_as_kyuubi_shapes_them(gateway):
    rest = Rest(gateway.rest_port, "rest_amy")
    session = rest.open()
    operation = rest.statement(session, TYPED_ROW)
    event, _ = rest.wait_for_end(operation)
    assert event["state"] == "FINISHED", event
    assert (event["statement"], event["sessionId"], event["sessionUser"]) == (TYPED_ROW, session, "rest_amy")
    assert event["exception"] is None and event["completeTime"] >= event["startTime"] > 0, event

    columns = rest.ok("GET", f"/operations/{operation}/resultsetmetadata")["columns"]
    assert [(c["columnName"], c["dataType"]) for c in columns] == [
        ("i", "INT_TYPE"), ("bi", "BIGINT_TYPE"), ("s", "STRING_TYPE"), ("n", "STRING_TYPE"),
        ("dec", "DECIMAL_TYPE"), ("dt", "DATE_TYPE"), ("ts", "TIMESTAMP_TYPE"), ("d", "DOUBLE_TYPE"),
        ("b", "BOOLEAN_TYPE"),
    ], columns
    decimal = columns[4]
    assert (decimal["precision"], decimal["scale"]) == (10, 2), decimal

    rowset = rest.rows(operation)
    assert rowset["rowCount"] == 1, rowset
    fields = rowset["rows"][0]["fields"]
    assert [f["dataType"] for f in fields] == [
        "I32_VAL", "I64_VAL", "STRING_VAL", "STRING_VAL", "STRING_VAL", "STRING_VAL", "STRING_VAL", "DOUBLE_VAL",
        "BOOL_VAL",
    ], fields
    assert values(rowset) == [[7, 9000000000, "kumiho", None, "12345.67", "2024-01-31", "2024-01-31 12:34:56.789",
                               2.25, True]]
    # The result is read to its end; FETCH_FIRST reads it again.
    assert rest.rows(operation)["rowCount"] == 0
    assert values(rest.rows(operation, fetchorientation="FETCH_FIRST"))[0][2] == "kumiho"
    rest.ok("PUT", f"/operations/{operation}", json={"action": "CLOSE"})
    expect(rest.call("GET", f"/operations/{operation}/event"), 404)
    rest.ok("DELETE", f"/sessions/{session}")


def test_rows_are_paged_by_maxrows_with_nulls_where_they_are(gateway):
    rest = Rest(gateway.rest_port, "rest_ben")
    session = rest.open()
    operation = rest.statement(
        session, "SELECT k, v FROM (VALUES (1, 'a'), (2, NULL), (3, 'c')) AS t(k, v) ORDER BY k")
    assert rest.wait_for_end(operation)[0]["state"] == "FINISHED"
    pages = [values(rest.rows(operation, maxrows=2)) for _ in range(3)]
    assert pages == [[[1, "a"], [2, None]], [[3, "c"]], []], pages
    # A huge maxrows is lowered, not refused; a negative one is refused.
    assert rest.rows(operation, maxrows=10**12, fetchorientation="FETCH_FIRST")["rowCount"] == 3
    expect(rest.call("GET", f"/operations/{operation}/rowset", params={"maxrows": -1}), 400, "maxrows")
    sideways = {"fetchorientation": "FETCH_SIDEWAYS"}
    expect(rest.call("GET", f"/operations/{operation}/rowset", params=sideways), 400, "FETCH_SIDEWAYS")
    rest.ok("DELETE", f"/sessions/{session}")


def test_an_async_statement_is_polled_until_finished_and_its_log_shows_the_engine_launch(gateway):
    rest = Rest(gateway.rest_port, "rest_cat")
    session = rest.open()
    operation = rest.statement(session, "SELECT 6 * 7 AS answer", run_async=True)
    event, states = rest.wait_for_end(operation)
    assert event["state"] == "FINISHED" and event["shouldRunAsync"] is True, event
    assert set(states) <= {"INITIALIZED", "PENDING", "RUNNING", "FINISHED"}, states
    assert values(rest.rows(operation)) == [[42]]
    # The session's first statement's log begins with the launch of its engine.
    log = rest.log(operation, maxrows=1000)
    assert any("looking up engine" in line for line in log), log
    assert any("ready at" in line for line in log), log
    # The session shows its engine once launched.
    detail = rest.ok("GET", f"/sessions/{session}")
    assert detail["sessionId"] == session and detail["user"] == "rest_cat", detail
    assert detail["engineId"] == "USER-DATAFUSION-rest_cat-default", detail
    assert detail["engineUrl"] and detail["exception"] is None, detail
    info = rest.ok("GET", f"/sessions/{session}/info/17")
    assert info == {"infoType": "CLI_DBMS_NAME", "infoValue": "Kumiho"}, info
    expect(rest.call("GET", f"/sessions/{session}/info/3"), 404)
    rest.ok("DELETE", f"/sessions/{session}")


def test_a_failing_statement_shows_its_error_in_its_event(gateway):
    rest = Rest(gateway.rest_port, "rest_dan")
    session = rest.open()
    operation = rest.statement(session, "SELECT * FROM kumiho_no_such_table", run_async=True)
    event, _ = rest.wait_for_end(operation)
    assert event["state"] == "ERROR", event
    assert "kumiho_no_such_table" in event["exception"]["message"], event
    expect(rest.call("GET", f"/operations/{operation}/rowset"), 400, "kumiho_no_such_table")
    # Run synchronously, the failure is the answer.
    expect(rest.call("POST", f"/sessions/{session}/operations/statement",
                     json={"statement": "SELECT * FROM kumiho_no_such_table"}), 400, "kumiho_no_such_table")
    # The session goes on.
    ok = rest.statement(session, "SELECT 1 AS one")
    assert values(rest.rows(ok)) == [[1]]
    # Its operations, oldest first (the synchronous refusal made none).
    listed = rest.ok("GET", f"/sessions/{session}/operations")
    assert [(o["identifier"], o["statement"], o["state"]) for o in listed] == [
        (operation, "SELECT * FROM kumiho_no_such_table", "ERROR"), (ok, "SELECT 1 AS one", "FINISHED"),
    ], listed
    assert "kumiho_no_such_table" in listed[0]["exception"] and listed[1]["exception"] == "", listed
    rest.ok("DELETE", f"/sessions/{session}")


def test_cancel_stops_a_running_statement_and_close_forgets_it(gateway):
    rest = Rest(gateway.rest_port, "rest_eve")
    session = rest.open()
    operation = rest.statement(session, ENDLESS_QUERY, run_async=True)
    wait_until(lambda: rest.event(operation)["state"] == "RUNNING", "the endless query runs")
    rest.ok("PUT", f"/operations/{operation}", json={"action": "cancel"})
    event, _ = rest.wait_for_end(operation)
    assert event["state"] == "CANCELED", event
    rest.ok("PUT", f"/operations/{operation}", json={"action": "CLOSE"})
    expect(rest.call("GET", f"/operations/{operation}/event"), 404, "unknown")
    other = rest.statement(session, "SELECT 1")
    expect(rest.call("PUT", f"/operations/{other}", json={"action": "PAUSE"}), 400, "CANCEL or CLOSE")
    rest.ok("DELETE", f"/sessions/{session}")


def test_a_statement_past_its_query_timeout_ends_timed_out(gateway):
    rest = Rest(gateway.rest_port, "rest_ema")
    session = rest.open()
    operation = rest.statement(session, ENDLESS_QUERY, run_async=True, queryTimeout=1)
    event, _ = rest.wait_for_end(operation)
    assert event["state"] == "TIMEOUT", event
    expect(rest.call("POST", f"/sessions/{session}/operations/statement",
                     json={"statement": "SELECT 1", "queryTimeout": -1}), 400, "queryTimeout")
    rest.ok("DELETE", f"/sessions/{session}")


def test_sessions_belong_to_their_user(gateway):
    owner = Rest(gateway.rest_port, "rest_fay")
    other = Rest(gateway.rest_port, "rest_gus")
    session = owner.open()
    operation = owner.statement(session, "SELECT 1 AS one")
    assert [s["identifier"] for s in owner.ok("GET", "/sessions")] == [session]
    assert other.ok("GET", "/sessions") == []
    for method, path, body in [
        ("GET", f"/sessions/{session}", None),
        ("GET", f"/sessions/{session}/operations", None),
        ("POST", f"/sessions/{session}/operations/statement", {"statement": "SELECT 2"}),
        ("DELETE", f"/sessions/{session}", None),
        ("GET", f"/operations/{operation}/rowset", None),
        ("GET", f"/operations/{operation}/event", None),
        ("PUT", f"/operations/{operation}", {"action": "CLOSE"}),
    ]:
        expect(other.call(method, path, json=body), 403, "rest_fay")
    # Refusals changed nothing.
    assert values(owner.rows(operation)) == [[1]]
    # A super user of the cluster may act as the session's user.
    admin = Rest(gateway.rest_port, "etl_admin")
    expect(admin.call("GET", f"/sessions/{session}"), 403)
    assert admin.ok("GET", f"/sessions/{session}", params={"proxyUser": "rest_fay"})["user"] == "rest_fay"
    owner.ok("DELETE", f"/sessions/{session}")


def test_a_super_user_opens_a_session_as_another_user(gateway):
    admin = Rest(gateway.rest_port, "etl_admin")
    session = admin.open(proxyUser="rest_hal")
    assert admin.ok("GET", f"/sessions/{session}", params={"proxyUser": "rest_hal"})["user"] == "rest_hal"
    ivy = Rest(gateway.rest_port, "rest_ivy")
    expect(ivy.call("POST", "/sessions", json={}, params={"proxyUser": "rest_hal"}), 403, "rest_ivy")
    # The session's own user reaches it too.
    hal = Rest(gateway.rest_port, "rest_hal")
    assert hal.ok("GET", f"/sessions/{session}")["user"] == "rest_hal"
    hal.ok("DELETE", f"/sessions/{session}")


def test_unknown_ids_bad_credentials_and_bad_bodies_are_answered_alone(gateway):
    rest = Rest(gateway.rest_port, "rest_jon")
    unknown = str(uuid.uuid4())
    for path in [f"/sessions/{unknown}", f"/operations/{unknown}/event", "/sessions/not-a-uuid"]:
        expect(rest.call("GET", path), 404)
    statement = f"/sessions/{unknown}/operations/statement"
    expect(rest.call("POST", statement, json={"statement": "SELECT 1"}), 404, unknown)
    expect(rest.call("POST", "/sessions/x/operations/nonsense", json={}), 404)
    # The gateway's authentication takes any password (NONE) until it has a password
    # authenticator; credentials missing or malformed are refused.
    missing = requests.get(f"{rest.base}/sessions", timeout=10)
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"].startswith("Basic"), missing.text
    expect(requests.get(f"{rest.base}/sessions", headers={"Authorization": "Basic !!!"}, timeout=10), 401)
    expect(rest.call("DELETE", "/sessions"), 405)
    session = rest.open()
    statement = f"/sessions/{session}/operations/statement"
    for body, what in [(b"{", "cannot be read"), (b'{"runAsync": true}', "statement")]:
        expect(rest.call("POST", statement, data=body, headers={"Content-Type": "application/json"}), 400, what)
    expect(rest.call("POST", statement, data=b"SELECT 1", headers={"Content-Type": "text/plain"}), 415)
    huge = {"statement": "SELECT '" + "x" * (2 * 1024 * 1024) + "'"}
    too_large = rest.call("POST", statement, json=huge)
    expect(too_large, 413, "limit")
    # The body was refused unread, so the connection cannot carry another request: the
    # gateway closes it and says so, and the client's next request opens a new one.
    assert too_large.headers.get("Connection") == "close", too_large.headers
    assert rest.statement(session, "SELECT 1 AS still_here")
    rest.ok("DELETE", f"/sessions/{session}")


def test_a_deleted_session_is_gone_and_its_engine_session_closed(gateway):
    rest = Rest(gateway.rest_port, "rest_kim")
    # A CONNECTION engine is the session's alone: it stops when the engine session closes.
    session = rest.open({"kyuubi.engine.share.level": "CONNECTION"})
    operation = rest.statement(session, "SELECT 1 AS one")
    assert values(rest.rows(operation)) == [[1]]
    engine = rest.ok("GET", f"/sessions/{session}")["engineId"]
    assert engine.startswith("CONNECTION-DATAFUSION-rest_kim-"), engine
    pids = engine_pids(gateway.work_dir)
    rest.ok("DELETE", f"/sessions/{session}")
    expect(rest.call("GET", f"/sessions/{session}"), 404)
    expect(rest.call("GET", f"/operations/{operation}/event"), 404)
    assert rest.ok("GET", "/sessions") == []
    expect(rest.call("DELETE", f"/sessions/{session}"), 404)
    gateway.wait_for_log(rf"session closed.*{session}|{session}.*session closed")
    wait_until(lambda: len(engine_pids(gateway.work_dir)) < len(pids), "the CONNECTION engine stops")


def test_a_session_is_routed_to_the_cluster_its_configs_name(gateway):
    gateway.write_cluster("rest_second", DEFAULT_CLUSTER.replace("share-level: USER", "share-level: SERVER"))
    gateway.write_cluster("rest_broken", "engine:\n  datafusion:\n    config-file: /nonexistent/kumiho-engine.yaml\n")
    gateway.wait_for_log(r"cluster added.*rest_second|rest_second.*cluster added")
    gateway.wait_for_log(r"cluster added.*rest_broken|rest_broken.*cluster added")
    rest = Rest(gateway.rest_port, "rest_lee")
    session = rest.open({"kyuubi.session.cluster": "rest_second"})
    operation = rest.statement(session, "SELECT 'routed' AS r")
    assert values(rest.rows(operation)) == [["routed"]]
    assert rest.ok("GET", f"/sessions/{session}")["engineId"].startswith("SERVER-DATAFUSION-"), session
    rest.ok("DELETE", f"/sessions/{session}")
    # A cluster whose engine cannot start: the statement's event carries the launch's reason.
    broken = rest.open({"kyuubi.session.cluster": "rest_broken"})
    failed = rest.statement(broken, "SELECT 1", run_async=True)
    event, _ = rest.wait_for_end(failed)
    assert event["state"] == "ERROR", event
    assert "engine launch failed" in event["exception"]["message"], event
    assert "/nonexistent/kumiho-engine.yaml" in event["exception"]["message"], event
    rest.ok("DELETE", f"/sessions/{broken}")
    nowhere = {"configs": {"kyuubi.session.cluster": "rest_nowhere"}}
    expect(rest.call("POST", "/sessions", json=nowhere), 400, "rest_nowhere")


def test_metadata_operations_list_what_the_engine_has(gateway):
    rest = Rest(gateway.rest_port, "rest_max")
    session = rest.open()
    schemas = rest.ok("POST", f"/sessions/{session}/operations/schemas", json={"schemaName": "%"})["identifier"]
    assert rest.wait_for_end(schemas)[0]["state"] == "FINISHED"
    names = [row[0] for row in values(rest.rows(schemas, maxrows=1000))]
    assert "default" in names, names
    catalogs = rest.ok("POST", f"/sessions/{session}/operations/catalogs")["identifier"]
    assert rest.event(catalogs)["statement"] == "GET_CATALOGS"
    rest.ok("DELETE", f"/sessions/{session}")


def test_an_idle_rest_operation_is_closed_by_the_gateway_and_its_session_goes_on(gateway_binary, tmp_path):  # noqa: F811
    work_dir, cluster_dir = tmp_path / "work", tmp_path / "cluster-configs"
    cluster_dir.mkdir()
    (cluster_dir / "default.yaml").write_text(DEFAULT_CLUSTER)
    idle = start_gateway(gateway_binary, work_dir, cluster_dir, "--operation-idle-timeout", "2s")
    try:
        rest = Rest(idle.rest_port, "rest_olga")
        session = rest.open()
        operation = rest.statement(session, "SELECT 1 AS one")
        assert rest.event(operation)["state"] == "FINISHED"
        # Left alone (reading it would be a use), the reaper closes it.
        idle.wait_for_log(r"closing idle operation")
        expect(rest.call("GET", f"/operations/{operation}/event"), 404, "unknown")
        assert values(rest.rows(rest.statement(session, "SELECT 2 AS two"))) == [[2]]
    finally:
        idle.stop()
        kill_engines_on(str(work_dir))


def test_an_idle_rest_session_is_closed_by_the_gateway(gateway_binary, tmp_path):  # noqa: F811
    work_dir, cluster_dir = tmp_path / "work", tmp_path / "cluster-configs"
    cluster_dir.mkdir()
    (cluster_dir / "default.yaml").write_text(DEFAULT_CLUSTER)
    idle = start_gateway(gateway_binary, work_dir, cluster_dir, "--session-idle-timeout", "2s")
    try:
        rest = Rest(idle.rest_port, "rest_ned")
        session = rest.open()
        assert values(rest.rows(rest.statement(session, "SELECT 1 AS one"))) == [[1]]
        assert rest.ok("GET", "/sessions/count") == {"openSessionCount": 1}
        # Reading the session does not keep it in use; the reaper closes it.
        wait_until(lambda: rest.call("GET", f"/sessions/{session}").status_code == 404,
                   "the idle session is closed", timeout=30)
        idle.wait_for_log(r"closing idle session")
        assert rest.ok("GET", "/sessions") == []
        assert rest.ok("GET", "/sessions/count") == {"openSessionCount": 0}
    finally:
        idle.stop()
        kill_engines_on(str(work_dir))
