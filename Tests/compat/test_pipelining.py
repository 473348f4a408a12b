"""HTTP/1.1 pipelining against the real server (docs/server.md, "Pipelined requests").

Hearth answers pipelined requests in order until a request with a body comes out of its buffer: that one
ends the connection unanswered, and the client retries on a new connection as RFC 9112 §9.3.2 has it. What must never happen: a wrong answer, a write made from bytes
that were not its body, or a server that stops answering everyone (libwebsockets 4.1 loops forever on
some pipelined bodies; see Sources/HearthTransport/PipelinedRequests.swift).
"""

import json
import random
import re
import socket
import time

import requests

NS = "pipelining"


def request(method: str, path: str, body: bytes | None = None) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer owner\r\n".encode()
    if body is not None:
        head += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
    return head + b"\r\n" + (body or b"")


def exchange(server, chunks: list[bytes], wait: float = 2.0) -> tuple[list[int], list[bytes], bool]:
    """Sends the chunks (each in its own write), reads until the server closes or goes quiet.

    Returns the statuses and bodies of the answers in order, and whether the server closed."""
    with socket.create_connection((server.host, server.port), timeout=wait) as connection:
        for chunk in chunks:
            try:
                connection.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break  # the server ended the connection: what follows is for the retry
            time.sleep(0.002)
        received = b""
        closed = False
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            connection.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                data = connection.recv(1 << 20)
            except socket.timeout:
                break
            except ConnectionResetError:
                closed = True
                break
            if not data:
                closed = True
                break
            received += data
    statuses, bodies = _parse(received)
    return statuses, bodies, closed


def _parse(data: bytes) -> tuple[list[int], list[bytes]]:
    statuses, bodies = [], []
    while True:
        match = re.match(rb"HTTP/1\.1 (\d+)[^\r]*\r\n(.*?)\r\n\r\n", data, re.S)
        if not match:
            return statuses, bodies
        headers = match.group(2).decode().lower()
        length = re.search(r"content-length: (\d+)", headers)
        if not length:
            return statuses, bodies
        start = match.end()
        end = start + int(length.group(1))
        if len(data) < end:
            return statuses, bodies
        statuses.append(int(match.group(1)))
        bodies.append(data[start:end])
        data = data[end:]


def still_serving(server) -> None:
    response = requests.get(f"{server.url}/.json?ns={NS}&shallow=true", headers={"Authorization": "Bearer owner"}, timeout=3)
    assert response.status_code == 200


def test_pipelined_gets_are_all_answered_in_order(hearth_server):
    requests.put(f"{hearth_server.url}/g.json?ns={NS}", json={"a": 1, "b": 2}, headers={"Authorization": "Bearer owner"})
    paths = ["/g/a.json", "/g/b.json", "/g.json", "/g/missing.json"]
    statuses, bodies, _ = exchange(hearth_server, [b"".join(request("GET", p + f"?ns={NS}") for p in paths)], wait=1.0)
    assert statuses == [200, 200, 200, 200]
    assert [json.loads(b) for b in bodies] == [1, 2, {"a": 1, "b": 2}, None]


def test_a_write_then_a_read_are_both_answered(hearth_server):
    statuses, bodies, _ = exchange(
        hearth_server, [request("PUT", f"/wr.json?ns={NS}", b'{"v":1}') + request("GET", f"/wr/v.json?ns={NS}")], wait=1.0)
    assert statuses == [200, 200]
    assert [json.loads(b) for b in bodies] == [{"v": 1}, 1]


def test_writes_pipelined_in_one_packet_answer_the_first_then_close(hearth_server):
    puts = [request("PUT", f"/w/{i}.json?ns={NS}", b'{"v":%d}' % i) for i in range(3)]
    statuses, bodies, closed = exchange(hearth_server, [b"".join(puts) + request("GET", f"/w.json?ns={NS}")])
    assert statuses == [200]
    assert json.loads(bodies[0]) == {"v": 0}
    assert closed
    # Only the answered write was made; the server did not read the others' headers as a body.
    stored = requests.get(f"{hearth_server.url}/w.json?ns={NS}", headers={"Authorization": "Bearer owner"}).json()
    assert stored == [{"v": 0}]
    still_serving(hearth_server)


def test_a_write_pipelined_behind_a_read_ends_the_connection_without_writing_garbage(hearth_server):
    for body in [b'{bad', b'{"x":1}', b'7', b'"P"']:
        statuses, bodies, closed = exchange(
            hearth_server, [request("GET", f"/r.json?ns={NS}") + request("PUT", f"/r.json?ns={NS}", body)])
        assert statuses[:1] == [200]
        assert closed
        stored = requests.get(f"{hearth_server.url}/r.json?ns={NS}", headers={"Authorization": "Bearer owner"}).json()
        # Either the write was refused (nothing stored) or it stored exactly its own body.
        assert stored is None or stored == json.loads(body)
        still_serving(hearth_server)


def test_random_pipelines_never_stall_the_server(hearth_server):
    """Seeded: pipelines of random requests cut at random points; after each, a fresh client is answered."""
    generator = random.Random(20261201)
    kinds = ["GET", "PUT", "POST", "PATCH", "DELETE", "BAD"]
    for _round in range(60):
        stream = b""
        for _ in range(generator.randint(2, 6)):
            kind = generator.choice(kinds)
            path = f"/f/{generator.randint(0, 3)}.json?ns={NS}"
            if kind == "GET":
                stream += request("GET", path)
            elif kind == "BAD":
                stream += request("PUT", path, b"{" * generator.randint(1, 9))
            elif kind == "PATCH":
                stream += request("PATCH", f"/f.json?ns={NS}", json.dumps({str(generator.randint(0, 3)): generator.randint(0, 9)}).encode())
            elif kind == "DELETE":
                stream += request("DELETE", path)
            else:
                stream += request(kind, path, json.dumps({"n": generator.randint(0, 10**6), "s": "x" * generator.randint(0, 3000)}).encode())
        cuts = sorted(generator.sample(range(1, len(stream)), k=min(generator.randint(0, 3), len(stream) - 1)))
        chunks = [stream[a:b] for a, b in zip([0] + cuts, cuts + [len(stream)])]
        statuses, _bodies, _closed = exchange(hearth_server, chunks, wait=0.5)
        assert all(status in (200, 204, 400) for status in statuses), statuses
        started = time.monotonic()
        still_serving(hearth_server)
        assert time.monotonic() - started < 2


def test_keep_alive_clients_get_every_answer_given_at_once_to_a_body(hearth_server):
    """A request with a body answered at once (an error, the rules endpoint, the console) on a keep-alive
    connection: the client's next request, sent the moment the answer arrives, must not be taken for more
    of the body. It was, for 1–3% of such answers, and the connection was closed under the client."""
    session = requests.Session()
    admin = {"Authorization": "Bearer owner"}
    statuses = []
    for _ in range(600):
        statuses.append(session.put(f"{hearth_server.url}/x.json?ns={NS}", data="{bad", headers=admin).status_code)
        statuses.append(session.put(f"{hearth_server.url}/x.json?ns={NS}", data="1", headers=admin).status_code)
    assert statuses.count(400) == 600 and statuses.count(200) == 600


def test_an_answer_to_connection_close_says_it_closes(hearth_server):
    """A proxy keeping upstream connections (nginx `keepalive`) reuses one unless the answer says
    `Connection: close`: hearth closes after such a request, so its answer must say so, for reads and
    writes alike, and a request without it keeps the connection."""
    import http.client

    for method, body in (("GET", None), ("PUT", b"1"), ("PATCH", b'{"a": 1}')):
        connection = http.client.HTTPConnection(hearth_server.host, hearth_server.port, timeout=10)
        connection.request(method, f"/close.json?ns={NS}", body=body, headers={"Connection": "close"})
        response = connection.getresponse()
        response.read()
        assert response.status == 200 and response.getheader("connection") == "close", (method, response.getheaders())
        connection.close()
    connection = http.client.HTTPConnection(hearth_server.host, hearth_server.port, timeout=10)
    for _ in range(3):
        connection.request("GET", f"/close.json?ns={NS}")
        response = connection.getresponse()
        response.read()
        assert response.status == 200 and response.getheader("connection") is None
    connection.close()
