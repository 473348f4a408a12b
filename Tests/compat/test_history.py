"""The history of a location (docs/feed.md, "History of a location") through the real server: writes at,
above and below a location by REST and by a signed-in realtime client, listed newest first with who made
each and the values before and after (narrowed to the location for writes above it), paged with `next`
down to the oldest entry retention kept; admins only; bad parameters answered plainly."""

import sqlite3

import pytest
import requests

from conftest import start_hearth
from test_realtime import Client

OWNER = {"Authorization": "Bearer owner"}
NS = "history-test"


@pytest.fixture
def server(hearth_binary, tmp_path):
    process, port = start_hearth(hearth_binary, "--emulator", "--data", str(tmp_path), "--project", "history")
    assert process.poll() is None, process.communicate()[1]
    yield f"http://127.0.0.1:{port}", port
    process.terminate()
    process.wait(30)


def put(url, path, value):
    response = requests.put(f"{url}/{path}.json?ns={NS}", json=value, headers=OWNER, timeout=10)
    assert response.status_code == 200, response.text


def history(url, path, **parameters):
    response = requests.get(f"{url}/.history.json", params={"ns": NS, "path": path, **parameters}, headers=OWNER, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_locations_changes_newest_first_with_who_and_before_and_after(server):
    url, port = server
    put(url, "jokes/j1", {"text": "first", "votes": 0})                    # at the location
    put(url, "jokes/j2", {"text": "elsewhere"})                            # a sibling: not listed
    put(url, "jokes/j1/votes", 1)                                          # below it
    requests.patch(f"{url}/jokes.json?ns={NS}", json={"j1/text": "second", "j2/text": "x"}, headers=OWNER, timeout=10).raise_for_status()
    put(url, "jokes", {"j1": {"text": "third", "votes": 1}})               # above it: narrowed to j1
    put(url, "jokes", {"j1": {"text": "third", "votes": 1}, "j3": {}})     # above it, j1 unchanged: not listed
    client = Client(type("Endpoint", (), {"host": "127.0.0.1", "port": port})(), ns=NS)
    assert client.call("p", {"p": "/jokes/j1", "d": None})[1]["s"] == "ok"  # deleted over realtime

    changes = history(url, "/jokes/j1")["changes"]
    assert [(c["path"], c["before"], c["after"]) for c in changes] == [
        ("/jokes/j1", {"text": "third", "votes": 1}, None),
        ("/jokes/j1", {"text": "second", "votes": 1}, {"text": "third", "votes": 1}),  # written above: narrowed
        ("/jokes/j1/text", "first", "second"),  # written below (an update): shown where written
        ("/jokes/j1/votes", 0, 1),
        ("/jokes/j1", None, {"text": "first", "votes": 0}),
    ]
    positions = [c["position"] for c in changes]
    assert positions == sorted(positions, reverse=True), "newest first"
    assert changes[0]["protocol"] == "realtime" and changes[2]["type"] == "update" and changes[-1]["protocol"] == "rest"
    assert changes[-1]["authType"] == "admin" and all(c["time"] > 0 for c in changes)


def test_pages_go_back_to_the_oldest_entry_kept(server):
    url, _ = server
    for n in range(25):
        put(url, "counter", n)
    first = history(url, "/counter", limit=10)
    assert [c["after"] for c in first["changes"]] == list(range(24, 14, -1))
    second = history(url, "/counter", limit=10, before=first["next"])
    third = history(url, "/counter", limit=10, before=second["next"])
    assert [c["after"] for c in second["changes"]] == list(range(14, 4, -1))
    assert [c["after"] for c in third["changes"]] == [4, 3, 2, 1, 0] and third["next"] is None
    assert third["changes"][-1]["before"] is None and first["changes"][0]["before"] == 23


def test_only_admins_and_plain_errors(server):
    url, _ = server
    put(url, "a", 1)
    assert requests.get(f"{url}/.history.json", params={"ns": NS, "path": "/a"}, timeout=10).status_code == 401
    no_path = requests.get(f"{url}/.history.json", params={"ns": NS}, headers=OWNER, timeout=10)
    assert no_path.status_code == 400 and "path=" in no_path.json()["error"]
    bad_key = requests.get(f"{url}/.history.json", params={"ns": NS, "path": "/a/b#c"}, headers=OWNER, timeout=10)
    assert bad_key.status_code == 400
    bad_limit = requests.get(f"{url}/.history.json", params={"ns": NS, "path": "/a", "limit": "0"}, headers=OWNER, timeout=10)
    assert bad_limit.status_code == 400 and "limit" in bad_limit.json()["error"]
    assert history(url, "/nothing/here")["changes"] == []


def test_a_rare_locations_history_is_read_from_the_index_and_pages_by_it(server):
    url, _ = server
    session = requests.Session()
    put(url, "rare/r", 0)
    for n in range(1500):
        session.put(f"{url}/busy/b{n % 40}.json?ns={NS}", json=n, headers=OWNER, timeout=10).raise_for_status()
        if n % 300 == 299:
            put(url, "rare/r", n)
    page = history(url, "/rare/r", limit=3)
    # Only the entries that touched it are read (the index), not the 1,500 others.
    assert [c["after"] for c in page["changes"]] == [1499, 1199, 899] and page["scanned"] <= 3, page
    older = history(url, "/rare/r", limit=3, before=page["next"])
    assert [c["after"] for c in older["changes"]] == [599, 299, 0] and older["scanned"] <= 3, older
    last = history(url, "/rare/r", limit=3, before=older["next"]) if older["next"] is not None else {"changes": [], "next": None}
    assert last["changes"] == [] and last["next"] is None
    # The root's history is the feed itself, newest first.
    assert history(url, "/", limit=2)["changes"][0]["after"] == 1499


def test_a_failing_index_leaves_the_history_to_the_feed(server, tmp_path):
    """When the location index cannot be written (here a trigger refuses its rows), a history is read from
    the feed instead of failing, and from the index again once it works."""
    url, _ = server
    put(url, "rare/r", 0)
    for n in range(30):
        put(url, f"busy/b{n}", n)
    assert history(url, "/rare/r")["scanned"] <= 1  # the index, built
    database = sqlite3.connect(tmp_path / f"{NS}.sqlite", timeout=10)
    database.execute("CREATE TRIGGER refuse BEFORE INSERT ON feed_locations BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
    database.commit()
    put(url, "rare/r", 1)
    page = history(url, "/rare/r")
    assert [c["after"] for c in page["changes"]] == [1, 0] and page["scanned"] >= 32, page
    database.execute("DROP TRIGGER refuse")
    database.commit()
    database.close()
    page = history(url, "/rare/r")
    assert [c["after"] for c in page["changes"]] == [1, 0] and page["scanned"] <= 2, page
