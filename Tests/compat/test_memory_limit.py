"""`hearth serve` under a hard memory limit (docs/reliability.md): request bodies in flight are held to a
share of it, so that a request too big for the memory refuses itself instead of ending the process when
an allocation fails (a Swift process cannot survive one). Measured without the budget: under a 2 GiB
address-space limit a 150 MB write peaked at 2.0 GB of address space, and a 200 MB one failed inside
SQLite with a misleading error; a larger one ends the process.
"""

import socket
import time

import pytest
import requests

from conftest import start_hearth

LIMIT = 1 << 30  # 1 GiB of address space (idle, the server takes about 400 MB of it)
BUDGET = LIMIT // 32  # ServerLimits.memoryBytesPerRequestBodyByte


@pytest.fixture(scope="module")
def limited(hearth_binary, tmp_path_factory):
    data = tmp_path_factory.mktemp("memory-limit")
    process, port = start_hearth(hearth_binary, "--emulator", "--data", str(data), launcher=("prlimit", f"--as={LIMIT}", "--"))
    assert process.poll() is None, process.stderr.read()
    banner = []
    while not banner or not banner[-1].startswith("Stop with"):
        banner.append(process.stdout.readline().strip())
    yield f"http://127.0.0.1:{port}", port, "\n".join(banner), process
    process.terminate()
    _, err = process.communicate(timeout=20)
    assert process.returncode == 0, err


def head_only(port: int, length: int, body: bytes = b"") -> socket.socket:
    """A PUT that declares `length` bytes of body and sends `body` of it: it holds its share of the budget
    until the connection closes."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=10)
    connection.sendall(f"PUT /big.json?ns=mem HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n".encode() + body)
    return connection


def answer(connection: socket.socket) -> bytes:
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = connection.recv(65536)
        if not chunk:
            break
        received += chunk
    return received


def test_the_banner_says_the_limit_and_the_budget(limited):
    _, _, banner, _ = limited
    assert f"Memory:     limit {LIMIT >> 20} MB (RLIMIT_AS (ulimit -v)): request bodies held to {BUDGET >> 20} MB at once" in banner


def test_a_body_larger_than_the_budget_is_refused_before_it_is_read(limited):
    url, port, _, process = limited
    connection = head_only(port, 100 << 20)
    head = answer(connection).decode()
    connection.close()
    assert head.startswith("HTTP/1.1 413"), head
    assert "memory limit" in head and "smaller parts" in head
    assert process.poll() is None
    assert requests.put(f"{url}/small.json?ns=mem", json={"ok": True}).status_code == 200


def test_bodies_that_do_not_fit_beside_others_wait_their_turn(limited):
    url, port, _, process = limited
    holder = head_only(port, BUDGET - (1 << 20), b'"')  # most of the budget, its body still arriving
    try:
        # Once the server has read the holder's head, a body that does not fit beside it waits. Until then
        # the probe (not JSON: refused 400 when taken, nothing written) is taken.
        deadline = time.monotonic() + 10
        while requests.put(f"{url}/probe.json?ns=mem", data="x" * (2 << 20), timeout=10).status_code != 503:
            assert time.monotonic() < deadline, "the holder's body never held the budget"
        busy = requests.put(f"{url}/next.json?ns=mem", data='"' + "x" * (4 << 20) + '"', timeout=10)
        assert busy.status_code == 503, busy.text
        assert busy.headers.get("Retry-After") == "1"
        assert "retry" in busy.json()["error"] and "Nothing was written" in busy.json()["error"]
        assert requests.get(f"{url}/next.json?ns=mem").json() is None
    finally:
        holder.close()
    # The holder gone, its share is given back: the same write goes through.
    deadline = time.monotonic() + 10
    while (done := requests.put(f"{url}/next.json?ns=mem", data='"' + "x" * (4 << 20) + '"', timeout=10)).status_code == 503:
        assert time.monotonic() < deadline, "the budget was not given back"
    assert done.status_code == 200
    assert len(requests.get(f"{url}/next.json?ns=mem").json()) == 4 << 20
    assert process.poll() is None
