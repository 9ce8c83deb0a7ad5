"""The gateway's Prometheus endpoint: what clients did shows in the scraped metrics
(sessions by cluster and frontend, engine launches and their duration, RPCs by method and
their errors, what is open now), a failed launch is counted, and the endpoint can be
turned off."""

import base64
import urllib.error
import urllib.request

import pytest
from pyhive import hive
from thrift.protocol import TBinaryProtocol
from thrift.transport import THttpClient

from gateway_fixtures import *  # noqa: F401,F403 (fixtures)
from gateway_fixtures import open_session, wait_until
from harness.engine import HOST
from harness.prometheus import scrape
from harness.tcli import TCLIService, ttypes
from harness.thrift_client import check, random_handle_id

PROTOCOL = ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10
LAUNCHES = "kumiho_engine_launches_total"
LAUNCH_SECONDS = "kumiho_engine_launch_duration_seconds"


def http_session(kumiho, user: str):
    """A session over the HTTP frontend: (transport, client, session handle)."""
    transport = THttpClient.THttpClient(f"http://{HOST}:{kumiho.http_port}/cliservice")
    transport.setCustomHeaders({"Authorization": "Basic " + base64.b64encode(f"{user}:x".encode()).decode()})
    client = TCLIService.Client(TBinaryProtocol.TBinaryProtocol(transport))
    opened = client.OpenSession(ttypes.TOpenSessionReq(client_protocol=PROTOCOL, username=user, configuration={}))
    check(opened.status, "OpenSession over HTTP")
    return transport, client, opened.sessionHandle


def test_scraped_metrics_show_sessions_a_launch_and_rpcs(kumiho):
    before = scrape(kumiho.metrics_port)
    assert before.types["kumiho_rpcs_total"] == "counter"
    assert before.types["kumiho_operations_open"] == "gauge"
    assert [v for (name, _), v in before.items() if name == "kumiho_build_info"] == [1.0]
    assert before.sum("kumiho_sessions_opened_total") == 0
    assert before.sum(LAUNCHES) == 0
    assert before.value("kumiho_rpcs_total", method="OpenSession") == 0

    # PyHive: OpenSession, a synchronous statement (which waits for the launch), CloseSession.
    connection = hive.connect(HOST, kumiho.port, username="mia")
    cursor = connection.cursor()
    cursor.execute("SELECT 1 AS one")
    assert cursor.fetchall() == [(1,)]
    cursor.close()
    connection.close()

    # Kept open: a raw binary session and an HTTP one, both on mia's USER engine.
    raw = open_session(kumiho, "mia")
    raw.wait_launched()
    transport, http, http_handle = http_session(kumiho, "mia")
    # Errors: one the gateway answers (an unknown operation), one the engine does (bad SQL,
    # forwarded as bytes).
    unknown = ttypes.TOperationHandle(operationId=random_handle_id(), operationType=ttypes.TOperationType.EXECUTE_STATEMENT,
                                      hasResultSet=True)
    status = raw.client.client.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=unknown))
    assert status.status.statusCode != ttypes.TStatusCode.SUCCESS_STATUS
    bad = raw.client.client.ExecuteStatement(ttypes.TExecuteStatementReq(
        sessionHandle=raw.handle, statement="SELEC no_such_syntax", runAsync=False))
    assert bad.status.statusCode == ttypes.TStatusCode.ERROR_STATUS, bad.status

    during = scrape(kumiho.metrics_port)
    assert during.value("kumiho_sessions_opened_total", cluster="default", frontend="binary") == 2
    assert during.value("kumiho_sessions_opened_total", cluster="default", frontend="http") == 1
    assert during.value("kumiho_sessions_open", cluster="default") == 2
    assert during.value(LAUNCHES, cluster="default", engine_type="DATAFUSION", outcome="success") == 1
    assert during.sum(LAUNCHES, outcome="failure") == 0
    assert during.value(f"{LAUNCH_SECONDS}_count", engine_type="DATAFUSION") == 1
    assert 0 < during.value(f"{LAUNCH_SECONDS}_sum", engine_type="DATAFUSION") < 120
    assert during.value(f"{LAUNCH_SECONDS}_bucket", engine_type="DATAFUSION", le="+Inf") == 1
    assert during.value("kumiho_engines_in_use", cluster="default", engine_type="DATAFUSION") == 1
    assert during.value("kumiho_rpcs_total", method="OpenSession") == 3
    assert during.value("kumiho_rpcs_total", method="CloseSession") == 1
    # PyHive's `USE default` on connecting and SELECT 1, then the bad statement.
    assert during.value("kumiho_rpcs_total", method="ExecuteStatement") == 3
    assert during.value("kumiho_rpcs_total", method="FetchResults") >= 1
    assert during.value("kumiho_rpc_errors_total", method="GetOperationStatus") == 1
    assert during.value("kumiho_rpc_errors_total", method="ExecuteStatement") == 1
    assert during.value("kumiho_rpc_errors_total", method="FetchResults") == 0
    assert during.value("kumiho_operations_total") >= 1
    assert during.value("kumiho_connections_total", frontend="binary") == 2
    # The HTTP client keeps its connection open between calls (keep-alive).
    assert during.value("kumiho_connections_total", frontend="http") == 1
    assert during.value("kumiho_connections_open", frontend="http") == 1
    # The process series every Prometheus client exports, read from /proc.
    # (An idle gateway may not have used a clock tick of CPU yet: only its presence is sure.)
    assert during.types["process_cpu_seconds_total"] == "counter"
    assert during.value("process_cpu_seconds_total") >= 0
    assert during.value("process_resident_memory_bytes") > 1_000_000
    assert 0 < during.value("process_open_fds") <= during.value("process_max_fds")
    # PyHive's connection closed; the raw client's is open.
    wait_until(lambda: scrape(kumiho.metrics_port).value("kumiho_connections_open", frontend="binary") == 1,
               "PyHive's closed connection left the open count")

    raw.close()
    http.CloseSession(ttypes.TCloseSessionReq(sessionHandle=http_handle))
    transport.close()
    wait_until(lambda: scrape(kumiho.metrics_port).value("kumiho_connections_open", frontend="binary") == 0,
               "the raw client's closed connection left the open count")
    wait_until(lambda: scrape(kumiho.metrics_port).value("kumiho_connections_open", frontend="http") == 0,
               "the HTTP client's closed connection left the open count")
    after = scrape(kumiho.metrics_port)
    assert after.value("kumiho_sessions_open", cluster="default") == 0
    assert after.value("kumiho_engines_in_use", cluster="default", engine_type="DATAFUSION") == 0
    assert after.value("kumiho_operations_open") == 0
    assert after.value("kumiho_rpcs_total", method="CloseSession") == 3
    # The engine is still running (USER level): no launch was added.
    assert after.sum(LAUNCHES) == 1


def test_a_failed_launch_is_counted_without_a_duration(kumiho):
    kumiho.write_cluster("broken", """\
engine:
  datafusion:
    config-file: /nonexistent/kumiho-engine.yaml
""")
    kumiho.wait_for_log(r"cluster added.*broken|broken.*cluster added")
    session = open_session(kumiho, "nina", configuration={"kyuubi.session.cluster": "broken"})
    try:
        wait_until(lambda: session.launch_status().operationState == ttypes.TOperationState.ERROR_STATE,
                   "the launch failed", timeout=60)
        metrics = scrape(kumiho.metrics_port)
        assert metrics.value(LAUNCHES, cluster="broken", engine_type="DATAFUSION", outcome="failure") == 1
        assert metrics.sum(LAUNCHES, outcome="success") == 0
        assert metrics.sum(f"{LAUNCH_SECONDS}_count") == 0
        assert metrics.value("kumiho_sessions_opened_total", cluster="broken", frontend="binary") == 1
    finally:
        session.close()


def test_only_metrics_is_served_and_the_endpoint_can_be_turned_off(start_kumiho):
    kumiho = start_kumiho()
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"http://{HOST}:{kumiho.metrics_port}/api/v1", timeout=10)
    assert missing.value.code == 404
    assert "/metrics" in missing.value.read().decode()

    quiet = start_kumiho("--metrics-enabled", "false")
    assert quiet.metrics_port == 0
    quiet.wait_for_log(r"kumiho gateway started.*metrics=\"?off")
