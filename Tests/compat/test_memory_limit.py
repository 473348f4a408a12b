"""`hearth serve` under a hard memory limit (docs/reliability.md): request bodies in flight are held to a
share of it, so that a request too big for the memory refuses itself instead of ending the process when
an allocation fails (a Swift process cannot survive one). Measured without the budget: under a 2 GiB
address-space limit a 150 MB write peaked at 2.0 GB of address space, and a 200 MB one failed inside
SQLite with a misleading error; a larger one ends the process.
"""

import base64
import json
import socket
import threading
import time

import pytest
import requests
import websocket

from conftest import start_hearth
from test_realtime import LongPoll

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
    # What the tests saw refused, the server said in its log, with the reason.
    for refusal in limited_refusals:
        assert f"closed: {refusal}" in err, err[-2000:]


limited_refusals: list[str] = []


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


SEGMENT = 16384  # the SDKs' frame size (Wire.frameCharactersMax)


def stored_bytes(url, path):
    value = requests.get(f"{url}{path}.json?ns=mem").json()
    return sum(len(part) for part in value.values()) if value else 0


class LargeRealtimeWrite:
    """A realtime `p` (set) of `length` bytes of strings, sent as the SDKs send large messages: a count frame, then
    16 KB segments. `send_all_but_last` leaves it held by the server, half put together."""

    def __init__(self, port, path, length):
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}/.ws?ns=mem&v=5", timeout=20)
        assert json.loads(self.ws.recv())["t"] == "c"
        # Strings of 1 MB (a string is at most 10 MB).
        data = {f"part{n}": "x" * (1 << 20) for n in range(length >> 20)}
        message = json.dumps({"t": "d", "d": {"r": 1, "a": "p", "b": {"p": path, "d": data}}})
        self.segments = [message[i:i + SEGMENT] for i in range(0, len(message), SEGMENT)]

    def send_all_but_last(self):
        """Sends all but the last segment, or as many as the server takes before it closes the connection."""
        self.cut = False
        try:
            self.ws.send(str(len(self.segments)))
            for segment in self.segments[:-1]:
                self.ws.send(segment)
        except (websocket.WebSocketConnectionClosedException, ConnectionError, BrokenPipeError):
            self.cut = True

    def finish(self):
        """Sends the last segment; returns the server's answer, or the close frame's reason."""
        try:
            if not self.cut:
                self.ws.send(self.segments[-1])
            while True:
                opcode, data = self.ws.recv_data(control_frame=True)
                if opcode == websocket.ABNF.OPCODE_CLOSE:
                    return {"closed": data[2:].decode(errors="replace")}
                if opcode == websocket.ABNF.OPCODE_TEXT:
                    answer = json.loads(data)
                    if answer.get("d", {}).get("r") == 1:
                        return answer["d"]["b"]
        except (websocket.WebSocketConnectionClosedException, ConnectionError, BrokenPipeError) as error:
            return {"closed": str(error)}

    def close(self):
        try:
            self.ws.close(timeout=1)
        except Exception:
            pass


def holding_most_of_the_budget(port, path):
    """Two WebSocket messages of 15 MB, half put together at `path`/held0 and held1: they hold 30 of the budget's
    32 MB until finished."""
    holders = [LargeRealtimeWrite(port, f"{path}/held{n}", 15 << 20) for n in range(2)]
    for holder in holders:
        holder.send_all_but_last()
    return holders


def test_realtime_messages_that_do_not_fit_beside_others_close_their_connection_and_write_nothing(limited):
    url, port, _, process = limited
    holders = holding_most_of_the_budget(port, "/rt")
    try:
        # Once the server has read the holders' segments, a 4 MB message does not fit beside them: its
        # connection is closed, saying why. Until then such a probe is taken (and written).
        deadline = time.monotonic() + 30
        while True:
            probe = LargeRealtimeWrite(port, "/rt/probe", 4 << 20)
            probe.send_all_but_last()
            answer = probe.finish()
            probe.close()
            if "closed" in answer:
                break
            assert answer == {"s": "ok", "d": ""}, answer
            assert time.monotonic() < deadline, "the holders' segments never held the budget"
        # (The close frame says why, but a client still sending may see only the connection end: the
        # server logs the reason too.)
        busy = LargeRealtimeWrite(port, "/rt/busy", 4 << 20)
        busy.send_all_but_last()
        assert "closed" in busy.finish(), "a message that does not fit was taken"
        busy.close()
        assert requests.get(f"{url}/rt/busy.json?ns=mem").json() is None
        # Small messages are not counted: the SDKs' everyday writes go on.
        assert requests.put(f"{url}/rt/small.json?ns=mem", json={"ok": True}).status_code == 200
        # The holders' messages complete and are written.
        for holder in holders:
            assert holder.finish() == {"s": "ok", "d": ""}
    finally:
        for holder in holders:
            holder.close()
    assert stored_bytes(url, "/rt/held1") == 15 << 20
    # Their share given back, the same 4 MB message goes through.
    done = LargeRealtimeWrite(port, "/rt/busy", 4 << 20)
    done.send_all_but_last()
    assert done.finish() == {"s": "ok", "d": ""}
    done.close()
    assert stored_bytes(url, "/rt/busy") == 4 << 20
    assert process.poll() is None
    limited_refusals.append("server busy with other large messages under its memory limit")


class LargeLongPollWrite:
    """A realtime `p` of `length` bytes sent over the long-poll transport (§1.10) as a browser sends it: the message
    base64-encoded and cut into segments, a few per poll. Each poll is held by the server until the next one comes,
    so each is sent on a thread of its own while the previous one is still open."""

    SEGMENT = 1800  # characters of base64 per segment (Firebase's SDKs cut about 1,870)
    PER_POLL = 3  # segments per poll: within the 8 KB of path and query a request may have

    def __init__(self, url, path, length):
        self.session = LongPoll(type("Server", (), {"url": url})(), ns="mem")
        data = {f"part{n}": "x" * (1 << 20) for n in range(length >> 20)}
        message = json.dumps({"t": "d", "d": {"r": 1, "a": "p", "b": {"p": path, "d": data}}})
        encoded = base64.urlsafe_b64encode(message.encode()).decode().replace("=", ".")
        self.segments = [encoded[i:i + self.SEGMENT] for i in range(0, len(encoded), self.SEGMENT)]
        self.answers: list[str] = []

    def _poll(self, params):
        try:
            self.answers.append(requests.get(self.session.base, params=params, timeout=60).text)
        except requests.RequestException as error:
            self.answers.append(f"failed: {error}")

    def send(self):
        """Sends every segment; returns the session's fate: "ok" once the write is acknowledged, "closed" when the
        server ended the session."""
        base = {"id": self.session.id, "pw": self.session.pw, "ser": "1", "ns": "mem"}
        previous = None
        for first in range(0, len(self.segments), self.PER_POLL):
            params = dict(base)
            for index, serial in enumerate(range(first, min(first + self.PER_POLL, len(self.segments)))):
                params.update({f"seg{index}": str(serial), f"ts{index}": str(len(self.segments)), f"d{index}": self.segments[serial]})
            poll = threading.Thread(target=self._poll, args=(params,))
            poll.start()
            if previous is not None:
                previous.join(60)  # answered once this poll arrived
            previous = poll
            if any("pLPCommand('close'" in answer for answer in self.answers):
                break
        # One more poll collects what the session still has to say (the ack, or its end).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            closing = threading.Thread(target=self._poll, args=(base,))
            closing.start()
            previous.join(60)
            previous = closing
            text = "".join(self.answers)
            if "pLPCommand('close'" in text:
                previous.join(60)
                return "closed"
            if '"r":1,"b":{"s":"ok"' in text:
                previous.join(60)
                return "ok"
        raise AssertionError(f"the long-poll session neither answered nor closed: {self.answers[-3:]}")


def test_long_poll_messages_that_do_not_fit_beside_others_end_their_session_and_write_nothing(limited):
    url, port, _, process = limited
    holders = holding_most_of_the_budget(port, "/lp")
    try:
        # Once the server has read the holders' segments, a 4 MB message sent by long polling does not fit
        # beside them: its session is ended (the SDK would reconnect and send it again). Until then such a
        # probe is taken (and written).
        deadline = time.monotonic() + 30
        while (fate := LargeLongPollWrite(url, "/lp/probe", 4 << 20).send()) == "ok":
            assert time.monotonic() < deadline, "the holders' segments never held the budget"
        assert fate == "closed"
        assert LargeLongPollWrite(url, "/lp/busy", 4 << 20).send() == "closed"
        assert requests.get(f"{url}/lp/busy.json?ns=mem").json() is None
        for holder in holders:
            assert holder.finish() == {"s": "ok", "d": ""}
    finally:
        for holder in holders:
            holder.close()
    # Their share given back, the same message goes through.
    assert LargeLongPollWrite(url, "/lp/busy", 4 << 20).send() == "ok"
    assert stored_bytes(url, "/lp/busy") == 4 << 20
    assert process.poll() is None
    limited_refusals.append("server busy with other large messages under its memory limit")
