"""The change feed (docs/feed.md) through the real server: every committed write, in commit order, with
who made it and what it replaced; read by admins from a position; kept across a clean stop and a SIGKILL;
trimmed by retention, with a reader behind it told to resync."""

import base64
import json
import signal

import pytest
import requests

from conftest import start_hearth
from test_realtime import Client

OWNER = {"Authorization": "Bearer owner"}


def serve(hearth_binary, data, *arguments):
    process, port = start_hearth(hearth_binary, "--emulator", "--data", str(data), "--project", "feed", *arguments)
    assert process.poll() is None, process.communicate()[1]
    return process, f"http://127.0.0.1:{port}", port


def stop(process, sig=signal.SIGTERM):
    process.send_signal(sig)
    process.communicate(timeout=20)


def feed(url, ns="feed-default-rtdb", **params):
    return requests.get(f"{url}/.feed.json", params={"ns": ns, **params}, headers=OWNER, timeout=10)


def unsigned_token(uid):
    header = base64.urlsafe_b64encode(b'{"alg":"none","type":"JWT"}').rstrip(b"=").decode()
    claims = {"sub": uid, "user_id": uid, "iat": 0, "exp": 4102444800}
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{header}.{payload}."


def test_every_write_is_in_the_feed_in_commit_order_with_who_and_what_it_replaced(hearth_binary, tmp_path):
    process, url, port = serve(hearth_binary, tmp_path)
    try:
        ns = "feed-default-rtdb"
        assert requests.put(f"{url}/jokes/j1.json?ns={ns}", json={"text": "knock", "at": {".sv": "timestamp"}},
                            headers=OWNER, timeout=10).status_code == 200
        assert requests.patch(f"{url}/jokes.json?ns={ns}", json={"j1/votes": 1, "j2": None}, timeout=10).status_code == 200
        # A signed-in user over the realtime protocol.
        client = Client(type("S", (), {"host": "127.0.0.1", "port": port})(), ns=ns)
        assert client.call("auth", {"cred": unsigned_token("ada")})[1]["s"] == "ok"
        assert client.call("p", {"p": "/jokes/j1/votes", "d": 2})[1]["s"] == "ok"
        client.close()
        assert requests.delete(f"{url}/jokes/j1.json?ns={ns}", headers=OWNER, timeout=10).status_code == 200

        page = feed(url)
        assert page.status_code == 200, page.text
        body = page.json()
        entries = body["entries"]
        assert [e["type"] for e in entries] == ["set", "update", "set", "set"]
        assert [e["path"] for e in entries] == ["/jokes/j1", "/jokes", "/jokes/j1/votes", "/jokes/j1"]
        positions = [e["position"] for e in entries]
        assert positions == sorted(positions) and len(set(positions)) == 4
        assert body["next"] == positions[-1] and body["trimmedThrough"] == 0

        first, update, vote, delete = entries
        # Server values are stored resolved, as the data has them.
        stamp = first["data"]["at"]
        assert isinstance(stamp, int) and first["data"] == {"text": "knock", "at": stamp}
        assert first["before"] == {"/jokes/j1": None}
        assert (first["authType"], first["protocol"]) == ("admin", "rest") and "authId" not in first
        assert update["data"] == {"j1/votes": 1, "j2": None}
        assert update["before"] == {"/jokes/j1/votes": None, "/jokes/j2": None}
        assert update["authType"] == "unauthenticated"
        assert (vote["authType"], vote["authId"], vote["protocol"]) == ("app_user", "ada", "realtime")
        assert vote["before"] == {"/jokes/j1/votes": 1}
        assert delete["data"] is None and delete["before"] == {"/jokes/j1": {"text": "knock", "at": stamp, "votes": 2}}
        assert all(isinstance(e["time"], int) for e in entries)

        # From a position, a page at a time.
        rest = feed(url, after=positions[1], limit=1).json()
        assert [e["position"] for e in rest["entries"]] == [positions[2]] and rest["next"] == positions[2]
        caught_up = feed(url, after=positions[-1]).json()
        assert caught_up["entries"] == [] and caught_up["next"] == positions[-1]

        # Admins only; parameters are checked.
        assert requests.get(f"{url}/.feed.json?ns={ns}", timeout=10).status_code == 401
        assert feed(url, after="x").status_code == 400
        assert feed(url, limit=0).status_code == 400
        assert feed(url, limit=10_001).status_code == 400
        assert "after must be a whole number" in feed(url, after=-1).json()["error"]
    finally:
        if process.poll() is None:
            stop(process)


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_the_feed_survives_a_restart_and_positions_keep_growing(hearth_binary, tmp_path, how):
    process, url, _ = serve(hearth_binary, tmp_path)
    for index in range(20):
        assert requests.put(f"{url}/items/i{index}.json?ns=feed-default-rtdb", json=index, timeout=10).status_code == 200
    before = feed(url).json()["entries"]
    assert len(before) == 20
    stop(process, getattr(signal, how))

    process, url, _ = serve(hearth_binary, tmp_path)
    try:
        assert feed(url).json()["entries"] == before, "every acknowledged write is still in the feed"
        assert requests.put(f"{url}/items/last.json?ns=feed-default-rtdb", json=True, timeout=10).status_code == 200
        after = feed(url, after=before[-1]["position"]).json()["entries"]
        assert [e["path"] for e in after] == ["/items/last"] and after[0]["position"] > before[-1]["position"]
    finally:
        stop(process)


def test_retention_trims_the_oldest_and_a_reader_behind_it_must_resync(hearth_binary, tmp_path):
    # About 200 bytes an entry: 2,000 bytes keep the newest handful.
    process, url, _ = serve(hearth_binary, tmp_path, "--feed-max-bytes", "2000")
    try:
        for index in range(50):
            assert requests.put(f"{url}/log/e{index}.json?ns=feed-default-rtdb", json={"n": index}, timeout=10).status_code == 200
        behind = feed(url)
        assert behind.status_code == 410
        assert "resync needed" in behind.json()["error"] and "Read the data again" in behind.json()["error"]
        trimmed = int(behind.json()["error"].split("follow the feed after ")[1].rstrip("."))
        kept = feed(url, after=trimmed)
        assert kept.status_code == 200
        entries = kept.json()["entries"]
        assert 3 <= len(entries) < 50 and kept.json()["trimmedThrough"] == trimmed
        assert entries[-1]["data"] == {"n": 49}
        # What is kept is consecutive up to the newest write.
        assert [e["data"]["n"] for e in entries] == list(range(50 - len(entries), 50))
    finally:
        stop(process)


def test_feed_retention_flags_are_checked(hearth_binary, tmp_path):
    for flags, message in [(["--feed-max-age", "7x"], "feed-max-age is a number and a unit"),
                           (["--feed-max-bytes", "lots"], "feed-max-bytes must be a whole number")]:
        process, _port = start_hearth(hearth_binary, "--emulator", "--data", str(tmp_path), *flags)
        _out, err = process.communicate(timeout=20)
        assert process.returncode != 0 and message in err


class FeedEvents:
    """`GET /.feed.json` as server-sent events, read an event at a time."""

    def __init__(self, url, after=0):
        self.response = requests.get(f"{url}/.feed.json", params={"ns": "feed-default-rtdb", "after": after},
                                     headers={**OWNER, "Accept": "text/event-stream"}, stream=True, timeout=10)
        assert self.response.status_code == 200
        self.lines = self.response.iter_lines(decode_unicode=True)

    def next(self):
        """The next (event, data) that is not a keep-alive."""
        event = None
        for line in self.lines:
            if line.startswith("event: "):
                event = line[len("event: "):]
            elif line.startswith("data: ") and event != "keep-alive":
                return event, json.loads(line[len("data: "):])
        raise AssertionError("the stream ended")

    def close(self):
        self.response.close()


def test_the_feed_streams_from_a_position_then_each_commit_as_it_is_made(hearth_binary, tmp_path):
    process, url, _ = serve(hearth_binary, tmp_path)
    try:
        for index in range(3):
            assert requests.put(f"{url}/a/{index}.json?ns=feed-default-rtdb", json=index, timeout=10).status_code == 200
        positions = [e["position"] for e in feed(url).json()["entries"]]
        events = FeedEvents(url, after=positions[0])
        assert [events.next() for _ in range(2)] == [
            ("entry", entry) for entry in feed(url, after=positions[0]).json()["entries"]]
        # Live: each write arrives as it commits, in order.
        for index in range(3, 8):
            assert requests.patch(f"{url}/b.json?ns=feed-default-rtdb", json={str(index): index}, timeout=10).status_code == 200
        live = [events.next() for _ in range(5)]
        assert [(event, data["path"], data["data"]) for event, data in live] == [
            ("entry", "/b", {str(index): index}) for index in range(3, 8)]
        assert all(data["position"] > positions[-1] for _, data in live)
        events.close()
    finally:
        stop(process)


def test_a_stream_behind_retention_is_told_to_resync(hearth_binary, tmp_path):
    process, url, _ = serve(hearth_binary, tmp_path, "--feed-max-bytes", "1000")
    try:
        for index in range(30):
            assert requests.put(f"{url}/c/{index}.json?ns=feed-default-rtdb", json=index, timeout=10).status_code == 200
        events = FeedEvents(url, after=0)
        event, message = events.next()
        assert event == "resync" and "resync needed" in message
        with pytest.raises(AssertionError, match="the stream ended"):
            events.next()
    finally:
        stop(process)


def test_hearth_feed_prints_a_page_as_json_lines_and_where_to_go_on(hearth_binary, tmp_path):
    import subprocess

    process, url, _ = serve(hearth_binary, tmp_path)
    try:
        for index in range(3):
            assert requests.put(f"{url}/n/{index}.json?ns=feed-default-rtdb", json={"i": index, "gone": None if index else 1},
                                timeout=10).status_code == 200
        run = subprocess.run([str(hearth_binary), "feed", "feed-default-rtdb", "--url", url, "--data", str(tmp_path)],
                             capture_output=True, text=True, timeout=30)
        assert run.returncode == 0, run.stderr
        lines = [json.loads(line) for line in run.stdout.splitlines()]
        assert [line["path"] for line in lines] == ["/n/0", "/n/1", "/n/2"]
        assert lines[0]["before"] == {"/n/0": None}, "nulls survive"
        assert f"--after {lines[-1]['position']}" in run.stderr and "3 entries" in run.stderr

        after = subprocess.run([str(hearth_binary), "feed", "feed-default-rtdb", "--url", url, "--data", str(tmp_path),
                                "--after", str(lines[0]["position"]), "--limit", "1"], capture_output=True, text=True, timeout=30)
        assert after.returncode == 0 and [json.loads(line)["path"] for line in after.stdout.splitlines()] == ["/n/1"]

        wrong = subprocess.run([str(hearth_binary), "feed", "feed-default-rtdb", "--after", "soon"], capture_output=True, text=True, timeout=30)
        assert wrong.returncode == 64 and "--after must be a whole number" in wrong.stderr
        refused = subprocess.run([str(hearth_binary), "feed", "feed-default-rtdb", "--url", url, "--token", "wrong"],
                                 capture_output=True, text=True, timeout=30)
        assert refused.returncode == 1 and "401" in refused.stderr and "--token" in refused.stderr
    finally:
        stop(process)
    down = subprocess.run([str(hearth_binary), "feed", "feed-default-rtdb", "--url", url, "--data", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert down.returncode == 1 and "Is 'hearth serve' running?" in down.stderr
