"""The fault tests' TCP proxy (fault_proxy.py) does to a link what it says: passes, delays, blackholes (open
but silent, both for open connections and new ones), resets, refuses, and heals again."""

import socket
import threading
import time

import pytest

from fault_proxy import FaultProxy


@pytest.fixture
def echo():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)

    def serve(connection):
        with connection:
            try:
                while data := connection.recv(65536):
                    connection.sendall(data)
            except OSError:
                pass  # the proxy reset it

    def accept():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()


def round_trip(port, payload=b"ping", timeout=2.0):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(payload)
        return connection.recv(64)


def test_passes_delays_blackholes_resets_refuses_and_heals(echo):
    proxy = FaultProxy(echo)
    try:
        assert round_trip(proxy.port) == b"ping"
        proxy.delay(0.3)
        started = time.monotonic()
        assert round_trip(proxy.port) == b"ping"
        assert time.monotonic() - started >= 0.55, "held both ways"

        # An open connection goes silent, and so does a new one; neither is refused or reset.
        proxy.heal()
        open_connection = socket.create_connection(("127.0.0.1", proxy.port), timeout=0.5)
        open_connection.sendall(b"a")
        assert open_connection.recv(8) == b"a"
        proxy.blackhole()
        open_connection.sendall(b"b")
        with pytest.raises(socket.timeout):
            open_connection.recv(8)
        with pytest.raises(socket.timeout):
            round_trip(proxy.port, timeout=0.5)
        # Healed, the bytes held come through.
        proxy.heal()
        assert open_connection.recv(8) == b"b"
        open_connection.close()

        proxy.reset()
        with pytest.raises((ConnectionResetError, ConnectionAbortedError, BrokenPipeError)):
            round_trip(proxy.port)
        proxy.heal()
        assert round_trip(proxy.port) == b"ping"

        proxy.refuse()
        with pytest.raises(ConnectionRefusedError):
            round_trip(proxy.port)
        proxy.heal()
        assert round_trip(proxy.port) == b"ping"
    finally:
        proxy.stop()
