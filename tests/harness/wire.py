"""Hand-made bytes on raw sockets: what hostile or broken clients send."""

import socket
import struct
import time

from .engine import HOST

# SASL negotiation statuses (a frame is [status u8][length u32 BE][payload]).
SASL_START, SASL_OK, SASL_BAD, SASL_ERROR, SASL_COMPLETE = 1, 2, 3, 4, 5
TWO_GIB = 2**31 - 1
# Thrift binary protocol: strict message header for a CALL, and field type codes.
THRIFT_CALL_HEADER = struct.pack(">I", 0x80010001)
T_STRUCT, T_STRING = 12, 11
# How long a server may take to drop a connection it must refuse.
CLOSE_TIMEOUT_S = 10
MAX_REPLY_BYTES = 1 << 20


def connect(port: int) -> socket.socket:
    return socket.create_connection((HOST, port), timeout=CLOSE_TIMEOUT_S)


def sasl_frame(status: int, payload: bytes) -> bytes:
    return struct.pack(">BI", status, len(payload)) + payload


def thrift_string(value: bytes) -> bytes:
    return struct.pack(">i", len(value)) + value


def call_header(method: str, seqid: int = 1) -> bytes:
    return THRIFT_CALL_HEADER + thrift_string(method.encode()) + struct.pack(">i", seqid)


def field_header(field_type: int, field_id: int) -> bytes:
    return struct.pack(">bh", field_type, field_id)


def sasl_plain_handshake(sock: socket.socket, user: str = "alice", password: str = "x"):
    """Completes SASL PLAIN the way Hive JDBC does; fails unless the server says COMPLETE."""
    sock.sendall(sasl_frame(SASL_START, b"PLAIN"))
    sock.sendall(sasl_frame(SASL_COMPLETE, b"\0" + user.encode() + b"\0" + password.encode()))
    header = recv_exactly(sock, 5)
    status, length = struct.unpack(">BI", header)
    assert length < MAX_REPLY_BYTES, f"SASL reply claims {length} bytes"
    payload = recv_exactly(sock, length)
    assert status == SASL_COMPLETE, f"SASL PLAIN refused: status {status}, {payload!r}"


def recv_exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise AssertionError(f"server closed after {len(data)} of {count} bytes")
        data += chunk
    return data


def read_until_closed(sock: socket.socket) -> bytes:
    """Reads what the server says until it closes the connection.

    Fails if it keeps the connection open for CLOSE_TIMEOUT_S: a server that waits for the
    rest of a message claiming gigabytes is holding a connection it should have refused.
    """
    deadline = time.monotonic() + CLOSE_TIMEOUT_S
    received = b""
    while True:
        remaining = deadline - time.monotonic()
        assert remaining > 0, (
            f"server kept the connection open {CLOSE_TIMEOUT_S} s after bad input "
            f"(it said {received[:200]!r})"
        )
        sock.settimeout(remaining)
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return received
        except socket.timeout:
            continue
        if not chunk:
            return received
        received += chunk
        assert len(received) < MAX_REPLY_BYTES, "server answered bad input with over 1 MiB"


def send_ignoring_reset(sock: socket.socket, data: bytes):
    """Sends, tolerating a server that already hung up: that is a fine answer to garbage."""
    try:
        sock.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
