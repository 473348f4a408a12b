"""The realtime protocol (docs/protocol.md §1–§3, §9–§10) spoken by hand over /.ws against the real server.

A small client built on websocket-client: it reassembles count-prefixed frames, records every message in
arrival order, and checks JSON types the way the Android SDK does (integer `r`/`ts`/`t`, object listen-ok
`d`, string error `d`).
"""

import base64
import hashlib
import json
import socket
import struct
import threading
import time
import uuid

import pytest
import websocket


def number_hash(value) -> str:
    """§4.1 hash of a number leaf ("" for null)."""
    if value is None:
        return ""
    preimage = "number:" + struct.pack(">d", float(value)).hex()
    return base64.b64encode(hashlib.sha1(preimage.encode()).digest()).decode()


class Client:
    """One realtime connection: requests by number, every received message kept in order."""

    def __init__(self, server, ns="demo-test", timeout=10):
        self.url = f"ws://{server.host}:{server.port}/.ws?v=5&ns={ns}"
        self.ws = websocket.create_connection(self.url, timeout=timeout)
        self.messages = []
        self.next_r = 1
        self.handshake = self.receive()

    def receive(self):
        try:
            text = self.ws.recv()
        except websocket.WebSocketConnectionClosedException as error:
            # What the server said last (a shutdown `s` says why it closed), for the failure's report.
            raise websocket.WebSocketConnectionClosedException(f"{error} The last messages received: {self.messages[-3:]}") from error
        if text.isdigit():  # count frame (§1.8)
            text = "".join(self.ws.recv() for _ in range(int(text)))
        message = json.loads(text)
        assert "t" in message and "d" in message, message
        self.messages.append(message)
        return message

    def request(self, action, body):
        r = self.next_r
        self.next_r += 1
        self.ws.send(json.dumps({"t": "d", "d": {"r": r, "a": action, "b": body}}))
        return r

    def until_response(self, r):
        """Messages up to and including the response to `r`: (pushes before it, the response body)."""
        pushes = []
        while True:
            message = self.receive()
            data = message["d"]
            if message["t"] == "d" and data.get("r") == r:
                body = data["b"]
                assert type(data["r"]) is int
                if body["s"] != "ok":
                    assert isinstance(body["d"], str), body  # non-ok `d` is always a string
                return pushes, body
            if message["t"] == "d" and "a" in data:
                assert "r" not in data
                pushes.append(data)

    def call(self, action, body):
        return self.until_response(self.request(action, body))

    def next_push(self):
        while True:
            message = self.receive()
            if message["t"] == "d" and "a" in message["d"]:
                return message["d"]

    def close(self):
        self.ws.close()


def increment_in_transactions(client, path, increments, tries_max=3000):
    """Listens at `path` and increments it `increments` times with compare-and-set puts (what an SDK's
    transaction sends), each `datastale` retried on the value the pushes brought. Returns the puts made."""
    state = {"value": None}

    def absorb(pushes):
        for push in pushes:
            if push["a"] == "d" and push["b"]["p"].strip("/") == path:
                state["value"] = push["b"]["d"]

    pushes, reply = client.call("q", {"p": "/" + path, "h": ""})
    assert reply["s"] == "ok", reply
    absorb(pushes)
    done = tries = 0
    while done < increments:
        tries += 1
        assert tries < tries_max, "no progress"
        current = state["value"]
        pushes, reply = client.call("p", {"p": "/" + path, "d": (current or 0) + 1, "h": number_hash(current)})
        absorb(pushes)
        if reply["s"] == "ok":
            done += 1
        else:
            assert reply == {"s": "datastale", "d": "Transaction hash does not match"}, reply
            # The push that made it stale may still be on its way (from another node, in a cluster).
            if not pushes:
                absorb([client.next_push()])
    return tries


def unique(prefix):
    return f"rt/{prefix}-{uuid.uuid4().hex[:8]}"


def test_handshake_comes_first_with_exact_types(hearth_server):
    client = Client(hearth_server)
    hs = client.handshake
    assert hs["t"] == "c" and hs["d"]["t"] == "h"
    payload = hs["d"]["d"]
    assert type(payload["ts"]) is int and payload["ts"] > 2**31
    assert abs(payload["ts"] / 1000 - time.time()) < 60
    assert payload["v"] == "5"
    assert payload["h"] == f"127.0.0.1:{hearth_server.port}"
    assert isinstance(payload["s"], str) and len(payload["s"]) >= 16
    # Stats, ping → pong, the keepalive frame "0" is ignored.
    pushes, reply = client.call("s", {"c": {"sdk.js.10-14-1": 1}})
    assert (pushes, reply) == ([], {"s": "ok", "d": ""})
    client.ws.send(json.dumps({"t": "c", "d": {"t": "p", "d": {}}}))
    assert client.receive() == {"t": "c", "d": {"t": "o", "d": None}}
    client.ws.send("0")
    assert client.call("zz", {})[1] == {"s": "failure", "d": "Unsupported action"}
    other = Client(hearth_server)
    assert other.handshake["d"]["d"]["s"] != payload["s"]
    client.close()
    other.close()


def test_listen_sends_data_before_ok_and_writes_reach_every_listener_before_the_ack(hearth_server):
    path = unique("shared")
    a, b = Client(hearth_server), Client(hearth_server)
    for client in (a, b):
        pushes, reply = client.call("q", {"p": "/" + path, "h": ""})
        assert pushes == [{"a": "d", "b": {"p": path, "d": None}}]
        assert reply == {"s": "ok", "d": {}}
    pushes, reply = a.call("p", {"p": "/" + path, "d": {"msg": "hello", "n": 1}})
    # The writer's own listen sees its write before the ok (§3.2).
    assert pushes == [{"a": "d", "b": {"p": path, "d": {"msg": "hello", "n": 1}}}]
    assert reply == {"s": "ok", "d": ""}
    assert b.next_push() == {"a": "d", "b": {"p": path, "d": {"msg": "hello", "n": 1}}}
    # A merge arrives as one `m` with the keys as sent; a write below arrives at its own path.
    pushes, reply = a.call("m", {"p": "/" + path, "d": {"n": 2, "extra/x": True}})
    assert pushes == [{"a": "m", "b": {"p": path, "d": {"n": 2, "extra/x": True}}}]
    assert b.next_push() == {"a": "m", "b": {"p": path, "d": {"n": 2, "extra/x": True}}}
    a.call("p", {"p": f"/{path}/n", "d": 2.5})
    assert b.next_push() == {"a": "d", "b": {"p": f"{path}/n", "d": 2.5}}
    # REST writes (firebase-admin, curl) reach realtime listeners too.
    import requests

    requests.put(f"{hearth_server.url}/{path}/msg.json?ns=demo-test", data='"rest"', timeout=10).raise_for_status()
    assert b.next_push() == {"a": "d", "b": {"p": f"{path}/msg", "d": "rest"}}
    requests.patch(f"{hearth_server.url}/{path}.json?ns=demo-test", data='{"msg":"hello"}', timeout=10).raise_for_status()
    assert b.next_push() == {"a": "m", "b": {"p": path, "d": {"msg": "hello"}}}
    # get answers the current value and pushes nothing; numbers keep their JSON type.
    assert b.call("g", {"p": "/" + path, "q": {}}) == (
        [], {"s": "ok", "d": {"extra": {"x": True}, "msg": "hello", "n": 2.5}})
    # Unlisten: B hears nothing more about the path.
    assert b.call("n", {"p": "/" + path}) == ([], {"s": "ok", "d": ""})
    a.call("p", {"p": f"/{path}/msg", "d": "bye"})
    assert b.call("s", {"c": {}}) == ([], {"s": "ok", "d": ""})
    a.close()
    b.close()


def test_a_large_write_round_trips_in_split_frames(hearth_server):
    path = unique("big")
    client = Client(hearth_server)
    client.call("q", {"p": "/" + path, "h": ""})
    big = "é" * 30000
    frames = []
    original = client.ws.recv

    def recording_recv():
        text = original()
        frames.append(text)
        return text

    client.ws.recv = recording_recv
    pushes, reply = client.call("p", {"p": "/" + path, "d": big})
    assert pushes == [{"a": "d", "b": {"p": path, "d": big}}]
    assert frames[0].isdigit() and 1 < int(frames[0]) <= 9999 and frames[0] != "0"
    client.close()


def test_a_limit_to_last_window_slides(hearth_server):
    path = unique("scores")
    writer, reader = Client(hearth_server), Client(hearth_server)
    writer.call("p", {"p": "/" + path, "d": {"a": {"score": 1}, "b": {"score": 2}, "c": {"score": 3}}})
    query = {"l": 2, "vf": "r", "i": "score"}
    pushes, reply = reader.call("q", {"p": "/" + path, "q": query, "t": 7, "h": ""})
    assert pushes == [{"a": "d", "b": {"p": path, "d": {"b": {"score": 2}, "c": {"score": 3}}, "t": 7}}]
    assert reply == {"s": "ok", "d": {}}
    # A higher score enters, the lowest of the window leaves.
    writer.call("p", {"p": f"/{path}/d", "d": {"score": 10}})
    push = reader.next_push()
    assert push == {"a": "d", "b": {"p": path, "d": {"c": {"score": 3}, "d": {"score": 10}}, "t": 7}}
    assert type(push["b"]["t"]) is int
    # A change outside the window sends nothing; removing a member slides the window back.
    writer.call("p", {"p": f"/{path}/a/score", "d": 0})
    writer.call("p", {"p": f"/{path}/d", "d": None})
    assert reader.next_push() == {"a": "d", "b": {"p": path, "d": {"b": {"score": 2}, "c": {"score": 3}}, "t": 7}}
    # get with the same query answers the window.
    assert reader.call("g", {"p": "/" + path, "q": query})[1] == {"s": "ok", "d": {"b": {"score": 2}, "c": {"score": 3}}}
    assert reader.call("n", {"p": "/" + path, "q": query, "t": 7}) == ([], {"s": "ok", "d": ""})
    writer.close()
    reader.close()


def test_transactions_from_20_connections_converge_exactly(hearth_server):
    path = unique("counter")
    connections, increments = 20, 5
    errors = []
    attempts = []

    def worker():
        try:
            client = Client(hearth_server, timeout=60)
            tries = increment_in_transactions(client, path, increments)
            attempts.append(tries)
            client.close()
        except Exception as error:  # reported below
            errors.append(repr(error))

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    checker = Client(hearth_server)
    assert checker.call("g", {"p": "/" + path, "q": {}})[1] == {"s": "ok", "d": connections * increments}
    checker.close()
    assert sum(attempts) >= connections * increments


def test_on_disconnect_runs_when_the_socket_is_killed(hearth_server):
    path = unique("presence")
    watcher, leaver = Client(hearth_server), Client(hearth_server)
    leaver.call("p", {"p": f"/{path}/u1", "d": {"online": True}})
    assert leaver.call("o", {"p": f"/{path}/u1", "d": {"online": False, "last": {".sv": "timestamp"}}})[1] == {
        "s": "ok", "d": ""}
    assert leaver.call("om", {"p": f"/{path}", "d": {"u2/online": False, "u3": "gone"}})[1]["s"] == "ok"
    assert leaver.call("oc", {"p": f"/{path}/u3", "d": None})[1] == {"s": "ok", "d": ""}
    pushes, _ = watcher.call("q", {"p": "/" + path, "h": ""})
    assert pushes[0]["b"]["d"] == {"u1": {"online": True}}
    # Kill the TCP connection without a WebSocket close.
    leaver.ws.sock.shutdown(socket.SHUT_RDWR)
    leaver.ws.sock.close()
    seen = {}
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not ("u1" in seen and "u2" in seen):
        push = watcher.next_push()
        relative = push["b"]["p"][len(path):].strip("/")
        seen[relative.split("/")[0]] = push["b"]["d"]
    assert set(seen) == {"u1", "u2"}
    final = watcher.call("g", {"p": "/" + path, "q": {}})[1]["d"]
    assert final["u1"]["online"] is False
    assert type(final["u1"]["last"]) is int and final["u1"]["last"] > 2**31
    assert final["u2"] == {"online": False}
    assert "u3" not in final  # cancelled with oc
    watcher.close()


def test_auth_owner_unsigned_jwts_and_bad_tokens(hearth_server):
    client = Client(hearth_server)
    assert client.call("gauth", {"cred": "owner"})[1] == {"s": "ok", "d": {"auth": None, "expires": None}}
    header = base64.urlsafe_b64encode(b'{"alg":"none","type":"JWT"}').rstrip(b"=").decode()
    claims = {"sub": "user1", "iat": 0, "exp": 3600, "firebase": {"sign_in_provider": "custom"}}
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    reply = client.call("auth", {"cred": f"{header}.{payload}."})[1]
    assert reply["s"] == "ok"
    assert reply["d"]["auth"]["uid"] == "user1" and reply["d"]["expires"] == 3600
    assert client.call("auth", {"cred": "not a token"})[1]["s"] == "invalid_token"
    assert client.call("unauth", {})[1] == {"s": "ok", "d": ""}
    client.close()


class LongPoll:
    """The long-poll transport (§1.10) as a browser's hidden iframe drives it."""

    def __init__(self, server, ns="demo-test"):
        import re
        import requests

        self.requests = requests
        self.base = f"{server.url}/.lp"
        self.ns = ns
        start = requests.get(self.base, params={"start": "t", "ser": "7", "cb": "3", "v": "5", "ns": ns}, timeout=10)
        assert start.headers["content-type"].startswith("application/javascript")
        assert 'parent.window["pRTLPCB3"]' in start.text
        self.id, self.pw = re.search(r"pLPCommand\('start','([^']+)','([^']+)'\);", start.text).groups()
        self.packet = 0
        self.messages = self.packets(start.text)
        self.segment = 0
        self.r = 1

    def packets(self, text):
        import re

        messages = []
        for number, data in re.findall(r"pRTLPCB\((\d+),(\[.*?\])\);", text, re.S):
            assert int(number) == self.packet  # one number per response, in order
            self.packet += 1
            messages += json.loads(data)
        return messages

    def poll(self, *bodies):
        params = {"id": self.id, "pw": self.pw, "ser": "1", "ns": self.ns}
        for index, (action, body) in enumerate(bodies):
            envelope = json.dumps({"t": "d", "d": {"r": self.r, "a": action, "b": body}})
            self.r += 1
            encoded = base64.urlsafe_b64encode(envelope.encode()).decode().replace("=", ".")
            params.update({f"seg{index}": str(self.segment), f"ts{index}": "1", f"d{index}": encoded})
            self.segment += 1
        text = self.requests.get(self.base, params=params, timeout=30).text
        return text, self.packets(text)


def test_long_poll_sessions_serve_requests_hold_polls_and_run_on_disconnect(hearth_server):
    path = unique("lp")
    lp = LongPoll(hearth_server)
    handshake = lp.messages[0]["d"]
    assert handshake["t"] == "h" and type(handshake["d"]["ts"]) is int
    _, messages = lp.poll(("q", {"p": "/" + path, "h": ""}), ("o", {"p": f"/{path}/gone", "d": True}))
    while len(messages) < 3:
        messages += lp.poll()[1]
    assert messages[0] == {"t": "d", "d": {"a": "d", "b": {"p": path, "d": None}}}
    assert messages[1]["d"] == {"r": 1, "b": {"s": "ok", "d": {}}}
    # A held poll is answered when another connection's write reaches the listen.
    result = []
    holder = threading.Thread(target=lambda: result.append(lp.poll()[1]))
    holder.start()
    time.sleep(0.3)
    other = Client(hearth_server)
    other.call("p", {"p": f"/{path}/x", "d": 1})
    holder.join(10)
    assert result and result[0][0] == {"t": "d", "d": {"a": "d", "b": {"p": f"{path}/x", "d": 1}}}
    # The unload request ends the session: its onDisconnect runs.
    lp.requests.get(lp.base, params={"disconn": "t", "id": lp.id, "pw": lp.pw}, timeout=10)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if other.call("g", {"p": f"/{path}/gone", "q": {}})[1]["d"] is True:
            break
        time.sleep(0.05)
    else:
        pytest.fail("onDisconnect of the long-poll session did not run")
    assert "pLPCommand('close')" in lp.poll()[0]
    # A WebSocket upgrading a long-poll session (`s=`) is refused with `r`, never a fresh session.
    upgrade = websocket.create_connection(
        f"ws://{hearth_server.host}:{hearth_server.port}/.ws?v=5&s={lp.id}&ns=demo-test", timeout=5)
    assert json.loads(upgrade.recv()) == {"t": "c", "d": {"t": "r", "d": f"127.0.0.1:{hearth_server.port}"}}
    other.close()


def test_a_client_that_stops_reading_is_disconnected_and_never_delays_others(hearth_server):
    path = unique("slow")
    slow, writer = Client(hearth_server), Client(hearth_server, timeout=30)
    slow.call("q", {"p": "/" + path, "h": ""})
    value = "z" * 500_000
    started = time.monotonic()
    for index in range(40):  # 20 MB for a reader that reads nothing: more than its queue and the socket buffers
        assert writer.call("p", {"p": "/" + path, "d": f"{index}{value}"})[1] == {"s": "ok", "d": ""}
    assert time.monotonic() - started < 20  # the writer's acks never waited for the slow reader
    # The slow connection was closed by the server: reading drains what was already sent, then ends.
    slow.ws.sock.settimeout(10)
    deadline = time.monotonic() + 30
    try:
        while slow.ws.sock.recv(1 << 20) and time.monotonic() < deadline:
            pass
    except ConnectionError:
        pass
    assert time.monotonic() < deadline, "the slow connection was not closed"
    slow.ws.sock.close()
    writer.close()
