"""A loopback TCP relay that records every byte crossing it, to check what a client and a
server put on the wire (that under SASL QOP auth-conf no statement or result crosses in
clear, say), without capturing packets.

    with Relay(gateway.port) as relay:
        run_beeline(f"jdbc:hive2://localhost:{relay.port}/...", ...)
    assert b"SELECT" not in relay.recorded()

Each connection to `relay.port` is relayed to the target port on the same host by two
threads, one per direction, until either side closes.
"""

import socket
import threading

from harness.zookeeper import HOST


class Relay:
    """Relays connections on a free loopback port to `target_port`, recording both ways."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self._listener = socket.create_server((HOST, 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._to_server = bytearray()
        self._to_client = bytearray()
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def _accept(self):
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:  # closed
                return
            server = socket.create_connection((HOST, self.target_port))
            self._sockets.extend((client, server))
            for source, sink, record in ((client, server, self._to_server), (server, client, self._to_client)):
                pump = threading.Thread(target=self._pump, args=(source, sink, record), daemon=True)
                pump.start()
                self._threads.append(pump)

    def _pump(self, source: socket.socket, sink: socket.socket, record: bytearray):
        try:
            while data := source.recv(65536):
                with self._lock:
                    record.extend(data)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            # Pass the close on, so that each side sees the other hang up.
            for end in (sink, source):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def recorded(self) -> tuple[bytes, bytes]:
        """What crossed so far: client to server, and server to client."""
        with self._lock:
            return bytes(self._to_server), bytes(self._to_client)

    def close(self):
        self._listener.close()
        for pump in self._threads:
            pump.join(timeout=10)
        for end in self._sockets:
            end.close()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()
