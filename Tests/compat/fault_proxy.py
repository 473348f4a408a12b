"""A TCP proxy for the fault tests (docs/reliability.md): this kernel has no netem, so every link a test wants
to break (a node to PostgreSQL, the balancer to a node, an SDK to its server) goes through one of these on
loopback, and the test switches what it does to the bytes:

- `heal()`: pass everything;
- `delay(seconds)`: hold each chunk that long, both ways (a slow link);
- `blackhole()`: keep every connection open but forward nothing, either way, and accept new connections
  without ever reaching the server (a partition: packets vanish, nothing is refused, peers wait);
- `reset()`: reset every connection now (RST) and new ones as they come (a crashed middlebox);
- `refuse()`: close the listening socket (nothing listens: connection refused); `heal()` listens again
  on the same port.

Each connection is two pump threads; switching applies to open connections at once.
"""

from __future__ import annotations

import select
import socket
import struct
import threading
import time


class FaultProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1", port: int = 0, name: str = "proxy"):
        self.target = (target_host, target_port)
        self.name = name
        self._lock = threading.Lock()
        self._mode = "pass"
        self._delay = 0.0
        self._connections: set[socket.socket] = set()
        self._stopped = False
        self._listener = self._listen(port)
        self.port = self._listener.getsockname()[1]
        self._accepting = threading.Thread(target=self._accept, name=f"{name}.accept", daemon=True)
        self._accepting.start()

    # Switching

    def heal(self):
        with self._lock:
            self._mode, self._delay = "pass", 0.0
            refused = self._listener is None
        if refused:
            self._listener = self._listen(self.port)
            self._accepting = threading.Thread(target=self._accept, name=f"{self.name}.accept", daemon=True)
            self._accepting.start()

    def delay(self, seconds: float):
        with self._lock:
            self._mode, self._delay = "pass", seconds

    def blackhole(self):
        with self._lock:
            self._mode = "blackhole"

    def reset(self):
        with self._lock:
            self._mode = "reset"
            connections = list(self._connections)
        for connection in connections:
            self._abort(connection)

    def refuse(self):
        with self._lock:
            listener, self._listener = self._listener, None
            self._mode = "pass"
        self._close_listener(listener)
        self.reset_connections()

    def reset_connections(self):
        """Resets the open connections once, whatever the mode."""
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            self._abort(connection)

    @property
    def mode(self) -> str:
        with self._lock:
            return self._mode

    def stop(self):
        with self._lock:
            self._stopped = True
            listener, self._listener = self._listener, None
        self._close_listener(listener)
        self.reset_connections()

    # Plumbing

    @staticmethod
    def _close_listener(listener: socket.socket | None):
        # shutdown first: a plain close leaves the socket listening while the accept thread is blocked on it.
        if listener is None:
            return
        try:
            listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        listener.close()

    @staticmethod
    def _listen(port: int) -> socket.socket:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        for _attempt in range(100):
            try:
                listener.bind(("127.0.0.1", port))
                break
            except OSError:
                if port == 0:
                    raise
                time.sleep(0.05)  # a socket of the last listen on this port is still closing
        listener.listen(256)
        return listener

    def _accept(self):
        listener = self._listener
        while listener is not None:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                mode, stopped = self._mode, self._stopped
            if stopped or mode == "reset":
                self._abort(client)
                continue
            threading.Thread(target=self._serve, args=(client,), name=f"{self.name}.conn", daemon=True).start()

    def _serve(self, client: socket.socket):
        self._track(client)
        # A blackholed link reaches nobody: wait (holding the client) until healed.
        while self.mode == "blackhole":
            if self._closed(client):
                self._untrack(client)
                return
            time.sleep(0.05)
        try:
            server = socket.create_connection(self.target, timeout=5)
        except OSError:
            self._abort(client)
            self._untrack(client)
            return
        server.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._track(server)
        pumps = [threading.Thread(target=self._pump, args=(client, server), daemon=True),
                 threading.Thread(target=self._pump, args=(server, client), daemon=True)]
        for pump in pumps:
            pump.start()
        for pump in pumps:
            pump.join()
        for end in (client, server):
            self._untrack(end)
            try:
                end.close()
            except OSError:
                pass

    def _pump(self, source: socket.socket, destination: socket.socket):
        while True:
            try:
                ready, _, _ = select.select([source], [], [], 0.05)
            except (OSError, ValueError):
                break
            with self._lock:
                mode, delay = self._mode, self._delay
            if mode == "blackhole":
                continue  # leave the bytes where they are: the sender's window fills, as on a dead link
            if not ready:
                continue
            try:
                chunk = source.recv(65536)
            except OSError:
                break
            if not chunk:
                try:
                    destination.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                break
            if delay:
                time.sleep(delay)
            try:
                destination.sendall(chunk)
            except OSError:
                break
        try:
            source.shutdown(socket.SHUT_RD)
        except OSError:
            pass

    def _track(self, connection: socket.socket):
        with self._lock:
            self._connections.add(connection)

    def _untrack(self, connection: socket.socket):
        with self._lock:
            self._connections.discard(connection)

    @staticmethod
    def _closed(connection: socket.socket) -> bool:
        try:
            ready, _, _ = select.select([connection], [], [], 0)
            return bool(ready) and connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    @staticmethod
    def _abort(connection: socket.socket):
        """Closes with RST (SO_LINGER 0), not FIN."""
        try:
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            connection.close()
        except OSError:
            pass
