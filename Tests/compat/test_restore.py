"""Point-in-time restore (docs/operations.md) through the real server and `hearth restore`: a random load of
sets, updates with removals, deletes, priorities and server values, over REST and a realtime client, with
the namespace's export recorded after every write; restoring to the moment before a write, or to a time,
gives back exactly the export recorded then; in place, the restore is itself in the history and can be
undone the same way; a subtree alone; exact across a SIGKILL of the server, and a restore killed at any
moment is all or nothing; and moments the command cannot serve are refused plainly."""

import json
import random
import subprocess
import time
from datetime import datetime, timezone

import pytest
import requests

from conftest import start_hearth
from test_realtime import Client

OWNER = {"Authorization": "Bearer owner"}
NS = "restore-test"


@pytest.fixture
def server(hearth_binary, tmp_path):
    process, port = start_hearth(hearth_binary, "--emulator", "--data", str(tmp_path), "--project", "restore")
    assert process.poll() is None, process.communicate()[1]
    yield f"http://127.0.0.1:{port}", port
    process.terminate()
    process.wait(30)


def export(url, ns=NS, path=""):
    response = requests.get(f"{url}/{path}.json", params={"ns": ns, "format": "export"}, headers=OWNER, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def feed_after(url, after):
    response = requests.get(f"{url}/.feed.json", params={"ns": NS, "after": after}, headers=OWNER, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()["entries"]


def restore(hearth_binary, url, *arguments):
    return subprocess.run([str(hearth_binary), "restore", NS, *arguments, "--url", url, "--token", "owner"],
                          capture_output=True, text=True, timeout=120)


def random_load(url, port, writes, seed, after=0):
    """Makes `writes` random writes, one at a time, the feed's last entry being at `after`; returns
    [(position, time, export after it)]."""
    rng = random.Random(seed)
    client = Client(type("Endpoint", (), {"host": "127.0.0.1", "port": port})(), ns=NS)
    keys = [f"k{n}" for n in range(6)]
    recorded, last = [], after
    for _ in range(writes):
        a, b = rng.choice(keys), rng.choice(keys)
        kind = rng.choice(["set", "set-deep", "update", "delete", "priority", "server-value", "realtime"])
        if kind == "set":
            body = {"n": rng.randint(0, 99), "tags": {t: True for t in rng.sample(keys, 2)}}
            requests.put(f"{url}/items/{a}.json?ns={NS}", json=body, headers=OWNER, timeout=10).raise_for_status()
        elif kind == "set-deep":
            requests.put(f"{url}/items/{a}/n.json?ns={NS}", json=rng.randint(100, 199), headers=OWNER, timeout=10).raise_for_status()
        elif kind == "update":
            body = {f"{a}/n": rng.randint(200, 299), f"{b}/tags": None if rng.random() < 0.5 else {"x": 1}}
            requests.patch(f"{url}/items.json?ns={NS}", json=body, headers=OWNER, timeout=10).raise_for_status()
        elif kind == "delete":
            requests.delete(f"{url}/items/{a}.json?ns={NS}", headers=OWNER, timeout=10).raise_for_status()
        elif kind == "priority":
            body = {".value": rng.randint(0, 9), ".priority": rng.choice([1, 2.5, "p"])}
            requests.put(f"{url}/ranked/{a}.json?ns={NS}", json=body, headers=OWNER, timeout=10).raise_for_status()
        elif kind == "server-value":
            requests.put(f"{url}/stamps/{a}.json?ns={NS}", json={".sv": "timestamp"}, headers=OWNER, timeout=10).raise_for_status()
        else:
            assert client.call("p", {"p": f"/live/{a}", "d": {"v": rng.randint(0, 9)}})[1]["s"] == "ok"
        entries = feed_after(url, last)
        assert len(entries) == 1, entries
        last = entries[0]["position"]
        recorded.append((last, entries[0]["time"], export(url)))
    return recorded


def test_every_moment_comes_back_exactly(server, hearth_binary):
    url, port = server
    recorded = random_load(url, port, writes=120, seed=7)
    rng = random.Random(11)
    for k in sorted(rng.sample(range(len(recorded) - 1), 12)) + [len(recorded) - 2]:
        target = f"{NS}-k{k}"
        done = restore(hearth_binary, url, "--before-position", str(recorded[k + 1][0]), "--into", target)
        assert done.returncode == 0, done.stderr
        assert export(url, target) == recorded[k][2], f"restored before write {k + 1} differs from the export after write {k}"
    # Before the first write: nothing.
    assert restore(hearth_binary, url, "--before-position", str(recorded[0][0]), "--into", f"{NS}-empty").returncode == 0
    assert export(url, f"{NS}-empty") is None
    # By time: the last write taken at or before that millisecond.
    times = [t for _, t, _ in recorded]
    k = max(index for index in range(len(times) - 1) if times[index] < times[index + 1] and index < len(times) // 2)
    at = datetime.fromtimestamp(times[k] / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    done = restore(hearth_binary, url, "--at", at, "--into", f"{NS}-at")
    assert done.returncode == 0, done.stderr
    assert export(url, f"{NS}-at") == recorded[k][2]
    # Without --into, a new namespace named after the time.
    default = restore(hearth_binary, url, "--at", at)
    assert default.returncode == 0 and f"{NS}-restored-" in default.stdout, default.stdout


def test_in_place_is_in_the_history_and_undone_the_same_way_and_a_subtree_alone(server, hearth_binary):
    url, port = server
    recorded = random_load(url, port, writes=30, seed=3)
    latest = recorded[-1][2]
    done = restore(hearth_binary, url, "--before-position", str(recorded[10][0]), "--in-place")
    assert done.returncode == 0, done.stderr
    assert export(url) == recorded[9][2]
    # The restore is a write of its own: undone by restoring to just before it.
    (restore_write,) = feed_after(url, recorded[-1][0])
    assert restore_write["authType"] == "admin" and restore_write["protocol"] == "rest"
    undone = restore(hearth_binary, url, "--before-position", str(restore_write["position"]), "--in-place")
    assert undone.returncode == 0, undone.stderr
    assert export(url) == latest
    # One subtree, into a new namespace: only it is written there.
    sub = restore(hearth_binary, url, "--before-position", str(recorded[20][0]), "--path", "/items", "--into", f"{NS}-items")
    assert sub.returncode == 0, sub.stderr
    assert export(url, f"{NS}-items") == ({"items": recorded[19][2]["items"]} if recorded[19][2] and "items" in recorded[19][2] else None)


def test_moments_it_cannot_serve_are_refused_plainly(server, hearth_binary):
    url, _ = server
    requests.put(f"{url}/a.json?ns={NS}", json=1, headers=OWNER, timeout=10).raise_for_status()
    usage = subprocess.run([str(hearth_binary), "restore", NS, "--url", url], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 64 and "--at TIME or --before-position" in usage.stderr
    bad_time = restore(hearth_binary, url, "--at", "yesterday")
    assert bad_time.returncode == 64 and "2026-12-05T10:02:00.123Z" in bad_time.stderr
    both = restore(hearth_binary, url, "--at", "2026-12-05T10:02:00Z", "--in-place", "--into", "x")
    assert both.returncode == 64
    down = subprocess.run([str(hearth_binary), "restore", NS, "--at", "2026-12-05T10:02:00Z", "--url", "http://127.0.0.1:9"],
                          capture_output=True, text=True, timeout=60)
    assert down.returncode == 1 and "Is 'hearth serve' running?" in down.stderr


def test_the_servers_restore_endpoint_the_consoles_is_exact_and_checks_what_it_is_asked(server, hearth_binary):
    url, port = server
    recorded = random_load(url, port, writes=40, seed=13)

    def ask(body, headers=OWNER, ns=NS):
        return requests.post(f"{url}/.restore.json", params={"ns": ns}, json=body, headers=headers, timeout=60)

    for k in (0, 7, 21, 38):
        target = f"{NS}-e{k}"
        done = ask({"path": "/", "beforePosition": recorded[k + 1][0], "into": target})
        assert done.status_code == 200, done.text
        assert done.json() == {"path": "/", "into": target, "undone": len(recorded) - k - 1}
        assert export(url, target) == recorded[k][2]
    # One location, in place: the rest of the namespace stays; the restore is a write in the history.
    done = ask({"path": "/items", "beforePosition": recorded[10][0], "inPlace": True})
    assert done.status_code == 200, done.text
    expected = dict(recorded[-1][2] or {})
    expected.pop("items", None)
    if (recorded[9][2] or {}).get("items") is not None:
        expected["items"] = recorded[9][2]["items"]
    assert export(url) == (expected or None)
    (write,) = feed_after(url, recorded[-1][0])
    assert write["path"] == "/items" and write["authType"] == "admin"
    # What it refuses, and how.
    for body, status, words in [
        ({"path": "/", "beforePosition": 0, "into": "x"}, 400, "beforePosition"),
        ({"path": "items", "beforePosition": 1, "into": "x"}, 400, "path is a location"),
        ({"path": "/", "beforePosition": 1}, 400, "into (a namespace) or inPlace"),
        ({"path": "/", "beforePosition": 1, "into": "x", "inPlace": True}, 400, "one of them"),
        ({"path": "/", "beforePosition": 1, "into": "a.b"}, 400, "not a valid namespace name"),
        ({"path": "/", "beforePosition": 1, "into": NS}, 400, "inPlace instead"),
        ("not json", 400, "Send"),
    ]:
        refused = ask(body)
        assert refused.status_code == status and words in refused.json()["error"], (body, refused.text)
    assert ask({"path": "/", "beforePosition": 1, "into": "x"}, headers={}).status_code == 401
    assert requests.get(f"{url}/.restore.json", params={"ns": NS}, headers=OWNER, timeout=10).status_code == 405


def test_exact_across_a_server_sigkill_and_a_killed_restore_is_all_or_nothing(hearth_binary, tmp_path):
    import signal

    process, port = start_hearth(hearth_binary, "--emulator", "--data", str(tmp_path), "--project", "restore")
    url = f"http://127.0.0.1:{port}"
    try:
        before_kill = random_load(url, port, writes=40, seed=5)
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        process, _ = start_hearth(hearth_binary, "--emulator", "--data", str(tmp_path), "--project", "restore", port=port)
        assert process.poll() is None
        after_kill = random_load(url, port, writes=40, seed=6, after=before_kill[-1][0])
        recorded = before_kill + after_kill
        for k in (10, 38, 39, 45, 70):
            done = restore(hearth_binary, url, "--before-position", str(recorded[k + 1][0]), "--into", f"{NS}-kill{k}")
            assert done.returncode == 0, done.stderr
            assert export(url, f"{NS}-kill{k}") == recorded[k][2], f"before write {k + 1}, across the kill"
        # A restore in place killed at some moment: the namespace is either as it was or wholly restored.
        latest, target, seen = recorded[-1][2], recorded[20][2], recorded[-1][0]
        for delay in (0.0, 0.05, 0.15, 0.4):
            command = subprocess.Popen(
                [str(hearth_binary), "restore", NS, "--before-position", str(recorded[21][0]), "--in-place", "--url", url, "--token", "owner"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + delay
            while time.monotonic() < deadline and command.poll() is None:
                time.sleep(0.005)
            command.send_signal(signal.SIGKILL)
            command.wait(30)
            now = export(url)
            assert now in (latest, target), "a killed restore left the namespace half restored"
            written = feed_after(url, seen)
            assert len(written) == (1 if now == target else 0), "a restore is one write or none"
            if written:  # it finished: put the latest back the same way for the next round
                undo = restore(hearth_binary, url, "--before-position", str(written[0]["position"]), "--in-place")
                assert undo.returncode == 0 and export(url) == latest
                seen = feed_after(url, written[0]["position"])[-1]["position"]
    finally:
        process.terminate()
        process.wait(30)
