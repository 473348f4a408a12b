"""The balancer configuration the cluster tests run and docs/scaling.md recommends (nginx_support.py), in
front of two stand-in nodes that record every request they receive.

What it must never do: send a write that one node received to a second node. nginx counts PUT and DELETE
as idempotent and, when a kept-alive upstream connection breaks before the answer, sends the request
again to the next node; a compare-and-set the first node applied is then refused by the second (a 412
holding the writer's own value), and a plain write lands twice, the second time after whatever other
writes came between (docs/reliability.md, fix 8). What it should still do: send a read whose node is down
to the next one.
"""

import socket
import threading

import requests

from conftest import _free_port
from nginx_support import Balancer


class StandInNode:
    """An HTTP/1.1 server on loopback that records each request's method and body. With
    `drop_every_second`, it closes a kept-alive connection without answering when the connection's second
    request arrives: a node that received a request and then died, or a link that broke, before answering."""

    def __init__(self, drop_every_second: bool):
        self.drop_every_second = drop_every_second
        self.received: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket):
        buffered = b""
        served = 0
        with connection:
            while True:
                while b"\r\n\r\n" not in buffered:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    buffered += chunk
                head, buffered = buffered.split(b"\r\n\r\n", 1)
                lines = head.decode("latin-1").split("\r\n")
                length = next((int(line.split(":", 1)[1]) for line in lines[1:] if line.lower().startswith("content-length:")), 0)
                while len(buffered) < length:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    buffered += chunk
                body, buffered = buffered[:length], buffered[length:]
                with self.lock:
                    self.received.append((lines[0].split(" ")[0], body))
                served += 1
                if self.drop_every_second and served == 2:
                    return
                connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4\r\n\r\nnull")

    def stop(self):
        self.listener.close()


def test_a_write_a_node_received_is_never_sent_to_another_node():
    dropping, steady = StandInNode(drop_every_second=True), StandInNode(drop_every_second=False)
    balancer = Balancer([dropping.port, steady.port])
    try:
        sent = []
        answers = []
        with requests.Session() as session:
            # Round robin: the third request is the second on the first node's kept-alive connection (a PUT,
            # the method nginx sends again); the node is then out for its fail_timeout.
            for index in range(12):
                method = ["PATCH", "POST", "PUT", "DELETE"][index % 4]
                body = f'{{"write": {index}}}'.encode()
                sent.append((method, body))
                answers.append(session.request(method, f"{balancer.url}/reg/k.json", data=body, timeout=10).status_code)
        received = dropping.received + steady.received
        twice = [request for request in sent if received.count(request) > 1]
        assert not twice, f"writes delivered to two nodes: {twice}; answers {answers}; {balancer.error_log()[-500:]}"
        # The test would prove nothing if no connection had broken: nginx answered those writes 502.
        assert 502 in answers, f"no kept-alive connection broke under a write: {answers}"
    finally:
        balancer.stop()
        dropping.stop()
        steady.stop()


def test_a_read_goes_to_the_next_node_when_one_is_down():
    steady = StandInNode(drop_every_second=False)
    down = _free_port()  # nothing listens: connection refused
    balancer = Balancer([down, steady.port])
    try:
        answers = [requests.get(f"{balancer.url}/reg/k.json", timeout=10).status_code for _ in range(4)]
        assert answers == [200] * 4, f"{answers}; {balancer.error_log()[-500:]}"
        assert len(steady.received) == 4
    finally:
        balancer.stop()
        steady.stop()
