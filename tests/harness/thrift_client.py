"""A raw HiveServer2 client on TCLIService bindings, for what PyHive itself hides: raw
handles and status codes, fetch sizes, columnar batches, unknown methods."""

import os
from contextlib import contextmanager

import thrift_sasl
from pyhive.sasl_compat import PureSASLClient
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.Thrift import TApplicationException, TMessageType
from thrift.transport import TSocket, TTransport

from .engine import HOST
from .tcli import TCLIService, ttypes

SOCKET_TIMEOUT_MS = 120_000
PROTOCOL = ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10
SUCCESS_CODES = (ttypes.TStatusCode.SUCCESS_STATUS, ttypes.TStatusCode.SUCCESS_WITH_INFO_STATUS)


class ThriftClient:
    """One connection: NOSASL (raw binary protocol) or SASL PLAIN with user/password."""

    def __init__(self, port: int, sasl: bool = False, user: str = "alice", password: str = "x"):
        socket = TSocket.TSocket(HOST, port)
        socket.setTimeout(SOCKET_TIMEOUT_MS)
        if sasl:
            self.transport = thrift_sasl.TSaslClientTransport(
                lambda: PureSASLClient(host=HOST, username=user, password=password),
                "PLAIN",
                socket,
            )
        else:
            self.transport = TTransport.TBufferedTransport(socket)
        # The accelerated protocol decodes row sets in C: millions of rows stay quick.
        self.protocol = TBinaryProtocolAccelerated(self.transport)
        self.client = TCLIService.Client(self.protocol)
        self.user = user
        self.transport.open()

    def close(self):
        self.transport.close()

    def open_session(self, configuration: dict | None = None) -> ttypes.TSessionHandle:
        response = self.client.OpenSession(
            ttypes.TOpenSessionReq(
                client_protocol=PROTOCOL, username=self.user, configuration=configuration or {}
            )
        )
        check(response.status, "OpenSession")
        return response.sessionHandle

    def execute(self, session, sql: str, run_async: bool = False,
                overlay: dict | None = None) -> ttypes.TOperationHandle:
        response = self.client.ExecuteStatement(
            ttypes.TExecuteStatementReq(sessionHandle=session, statement=sql, runAsync=run_async,
                                        confOverlay=overlay)
        )
        check(response.status, f"ExecuteStatement({sql!r})")
        return response.operationHandle

    def fetch(self, operation, max_rows: int) -> ttypes.TRowSet:
        response = self.client.FetchResults(
            ttypes.TFetchResultsReq(
                operationHandle=operation,
                orientation=ttypes.TFetchOrientation.FETCH_NEXT,
                maxRows=max_rows,
            )
        )
        check(response.status, "FetchResults")
        return response.results

    def call_unknown_method(self, name: str) -> TApplicationException:
        """Sends a call the service does not define and returns the exception it answers.

        The arguments are an empty struct, as for a method without parameters.
        """
        self.protocol.writeMessageBegin(name, TMessageType.CALL, 7)
        self.protocol.writeStructBegin(f"{name}_args")
        self.protocol.writeFieldStop()
        self.protocol.writeStructEnd()
        self.protocol.writeMessageEnd()
        self.transport.flush()
        reply_name, reply_type, seqid = self.protocol.readMessageBegin()
        assert reply_type == TMessageType.EXCEPTION, (
            f"{name}: expected an exception reply, got message type {reply_type}"
        )
        assert (reply_name, seqid) == (name, 7), f"reply to {name}#7 came as {reply_name}#{seqid}"
        error = TApplicationException()
        error.read(self.protocol)
        self.protocol.readMessageEnd()
        return error


def check(status: ttypes.TStatus, what: str):
    assert status.statusCode in SUCCESS_CODES, (
        f"{what} failed: {ttypes.TStatusCode._VALUES_TO_NAMES.get(status.statusCode)} "
        f"{status.sqlState} {status.errorMessage}"
    )


def random_handle_id() -> ttypes.THandleIdentifier:
    return ttypes.THandleIdentifier(guid=os.urandom(16), secret=os.urandom(16))


def column_values(column: ttypes.TColumn) -> list:
    """The values of a columnar result column, None where the null bitmap says NULL."""
    for kind in ("boolVal", "byteVal", "i16Val", "i32Val", "i64Val", "doubleVal", "stringVal", "binaryVal"):
        typed = getattr(column, kind)
        if typed is not None:
            values = list(typed.values)
            for index, byte in enumerate(typed.nulls or b""):
                for bit in range(8):
                    if byte >> bit & 1 and index * 8 + bit < len(values):
                        values[index * 8 + bit] = None
            return values
    raise AssertionError(f"empty TColumn: {column}")


@contextmanager
def session(port: int, sasl: bool = False, **kwargs):
    """A connected client and an open session, both closed at the end."""
    client = ThriftClient(port, sasl=sasl, **kwargs)
    try:
        handle = client.open_session()
        yield client, handle
        client.client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=handle))
    finally:
        client.close()
