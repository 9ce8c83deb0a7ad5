"""Broken and hostile input: each case gets a clear answer or a closed connection, and the
SAME engine then serves the next client normally, without having grown."""

import random
import struct

import pytest

from harness import hive, wire
from harness.engine import start_engine
from harness.thrift_client import ThriftClient, random_handle_id, ttypes
from thrift.Thrift import TApplicationException

# Growth allowed across one bad input and one normal query: far below what honouring any
# of the 2 GiB claims below would cost.
RSS_SLACK = 64 * 1024 * 1024
ERROR_CODES = (ttypes.TStatusCode.ERROR_STATUS, ttypes.TStatusCode.INVALID_HANDLE_STATUS)


@pytest.fixture(scope="module")
def engine(engine_binary):
    running = start_engine(engine_binary)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def baseline_rss(engine):
    """RSS after one normal client has been served (so lazy start-up work is done)."""
    assert_serves_a_client(engine)
    return engine.rss_bytes()


def assert_serves_a_client(engine):
    connection = hive.connect(engine)
    try:
        assert hive.query(connection, "SELECT count(*) AS n FROM tpch.nation")[2] == [(25,)]
    finally:
        connection.close()


@pytest.fixture
def still_healthy(engine, baseline_rss):
    """After the test: the engine is alive, serves a query, and has not grown."""
    yield
    engine.assert_alive()
    assert_serves_a_client(engine)
    growth = engine.rss_bytes() - baseline_rss
    assert growth < RSS_SLACK, f"engine RSS grew {growth >> 20} MiB after bad input"


def test_random_bytes_are_refused(engine, still_healthy):
    garbage = random.Random(20261130).randbytes(64 * 1024)
    with wire.connect(engine.port) as sock:
        wire.send_ignoring_reset(sock, garbage)
        wire.read_until_closed(sock)


def test_sasl_negotiation_frame_claiming_2_gib(engine, still_healthy):
    with wire.connect(engine.port) as sock:
        wire.send_ignoring_reset(sock, struct.pack(">BI", wire.SASL_START, wire.TWO_GIB) + b"PLAIN")
        reply = wire.read_until_closed(sock)
    # A server may explain itself in a BAD or ERROR frame before it hangs up.
    assert reply == b"" or reply[0] in (wire.SASL_BAD, wire.SASL_ERROR), reply[:100]


def test_sasl_data_frame_claiming_2_gib(engine, still_healthy):
    with wire.connect(engine.port) as sock:
        wire.sasl_plain_handshake(sock)
        wire.send_ignoring_reset(sock, struct.pack(">I", wire.TWO_GIB) + wire.THRIFT_CALL_HEADER)
        wire.read_until_closed(sock)


def test_nosasl_string_claiming_2_gib(engine, still_healthy):
    # ExecuteStatement(req = {statement: <2 GiB string>}) on the raw binary protocol.
    message = (
        wire.call_header("ExecuteStatement")
        + wire.field_header(wire.T_STRUCT, 1)
        + wire.field_header(wire.T_STRING, 2)
        + struct.pack(">i", wire.TWO_GIB)
        + b"SELECT 1"
    )
    with wire.connect(engine.port) as sock:
        wire.send_ignoring_reset(sock, message)
        wire.read_until_closed(sock)


def test_unknown_method_gets_unknown_method_and_the_connection_goes_on(engine, still_healthy):
    client = ThriftClient(engine.port)
    try:
        # impyla calls the Impala-only GetLog and falls back when told UNKNOWN_METHOD.
        error = client.call_unknown_method("GetLog")
        assert error.type == TApplicationException.UNKNOWN_METHOD, error
        # The same connection is still in step: a real call works.
        client.open_session()
    finally:
        client.close()


def test_unknown_session_handle_is_an_error_status(engine, still_healthy):
    client = ThriftClient(engine.port)
    try:
        unknown = ttypes.TSessionHandle(sessionId=random_handle_id())
        status = client.client.ExecuteStatement(
            ttypes.TExecuteStatementReq(sessionHandle=unknown, statement="SELECT 1")
        ).status
        assert status.statusCode in ERROR_CODES and status.errorMessage, status
        status = client.client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=unknown)).status
        assert status.statusCode in ERROR_CODES and status.errorMessage, status
        malformed = ttypes.TSessionHandle(ttypes.THandleIdentifier(guid=b"abc", secret=b""))
        status = client.client.GetInfo(ttypes.TGetInfoReq(sessionHandle=malformed, infoType=17)).status
        assert status.statusCode in ERROR_CODES and status.errorMessage, status
    finally:
        client.close()


def test_unknown_operation_handle_is_an_error_status(engine, still_healthy):
    client = ThriftClient(engine.port)
    try:
        client.open_session()
        unknown = ttypes.TOperationHandle(
            operationId=random_handle_id(),
            operationType=ttypes.TOperationType.EXECUTE_STATEMENT,
            hasResultSet=True,
        )
        calls = {
            "GetOperationStatus": lambda: client.client.GetOperationStatus(
                ttypes.TGetOperationStatusReq(operationHandle=unknown)),
            "FetchResults": lambda: client.client.FetchResults(ttypes.TFetchResultsReq(
                operationHandle=unknown, orientation=ttypes.TFetchOrientation.FETCH_NEXT, maxRows=10)),
            "GetResultSetMetadata": lambda: client.client.GetResultSetMetadata(
                ttypes.TGetResultSetMetadataReq(operationHandle=unknown)),
            "CancelOperation": lambda: client.client.CancelOperation(
                ttypes.TCancelOperationReq(operationHandle=unknown)),
            "CloseOperation": lambda: client.client.CloseOperation(
                ttypes.TCloseOperationReq(operationHandle=unknown)),
        }
        for name, call in calls.items():
            status = call().status
            assert status.statusCode in ERROR_CODES and status.errorMessage, f"{name}: {status}"
    finally:
        client.close()
