"""firebase-admin's db module (REST + SSE) against the real `hearth serve --emulator` (docs/protocol.md §7)."""

import os
import threading
import time
import uuid

import firebase_admin
import pytest
from firebase_admin import db, exceptions


class _NoCredential(firebase_admin.credentials.Base):
    """Emulator mode never asks for a token (it sends 'Bearer owner'); this keeps the SDK from looking for one."""

    def get_credential(self):
        raise AssertionError("credentials are not used in emulator mode")


@pytest.fixture(scope="module", params=["emulator-host", "ns-url"])
def app(request, hearth_server):
    """An app in each of firebase-admin's two emulator modes (§7.1), in its own namespace."""
    name = f"{request.param}-{uuid.uuid4().hex[:8]}"
    if request.param == "emulator-host":
        os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = f"{hearth_server.host}:{hearth_server.port}"
        url = f"https://{name}.firebaseio.com"
    else:
        os.environ.pop("FIREBASE_DATABASE_EMULATOR_HOST", None)
        url = f"{hearth_server.url}/?ns={name}"
    app = firebase_admin.initialize_app(_NoCredential(), {"databaseURL": url, "projectId": "demo-test"}, name=name)
    # The client is made (and the environment read) on first use.
    db.reference("/", app=app).get()
    os.environ.pop("FIREBASE_DATABASE_EMULATOR_HOST", None)
    yield app
    firebase_admin.delete_app(app)


def test_set_get_update_push_delete(app):
    ref = db.reference("probe/scalar", app=app)
    ref.set({"a": 1, "b": "two"})
    assert ref.get() == {"a": 1, "b": "two"}
    ref.update({"b": "three", "c/d": True})
    assert ref.get() == {"a": 1, "b": "three", "c": {"d": True}}
    ref.update({"a": None})
    assert ref.get() == {"b": "three", "c": {"d": True}}
    child = db.reference("probe/list", app=app).push({"score": 5})
    assert len(child.key) == 20
    assert child.path == f"/probe/list/{child.key}"
    assert child.get() == {"score": 5}
    empty = db.reference("probe/list", app=app).push()
    assert empty.get() == ""
    assert db.reference("probe", app=app).get(shallow=True) == {"list": True, "scalar": True}
    # Primitive children keep their values; only objects become true.
    db.reference("shallow", app=app).set({"a": {"deep": 1}, "b": 2, "c": "s"})
    assert db.reference("shallow", app=app).get(shallow=True) == {"a": True, "b": 2, "c": "s"}
    ref.delete()
    assert ref.get() is None


def test_server_values_resolve(app):
    ref = db.reference("probe/sv", app=app)
    ref.set({"n": 41})
    ref.update({"n": {".sv": {"increment": 1}}, "at": {".sv": "timestamp"}})
    value = ref.get()
    assert value["n"] == 42
    assert abs(value["at"] - time.time() * 1000) < 60_000


def test_etags_and_conditional_writes(app):
    ref = db.reference("probe/etag", app=app)
    ref.set({"v": 1})
    value, etag = ref.get(etag=True)
    assert value == {"v": 1} and etag
    ok, current, stale_etag = ref.set_if_unchanged("not-the-etag", {"v": 2})
    assert (ok, current, stale_etag) == (False, {"v": 1}, etag)
    ok, written, new_etag = ref.set_if_unchanged(etag, {"v": 2})
    assert ok and written == {"v": 2} and new_etag != etag
    changed, _, _ = ref.get_if_changed(new_etag)
    assert changed is False
    assert db.reference("probe/nothing", app=app).get(etag=True) == (None, "null_etag")


def test_transaction_from_ten_threads_is_exact(app):
    ref = db.reference("probe/counter", app=app)
    ref.set(0)
    errors = []

    def increment():
        try:
            # One each: with ten writers a transaction loses at most nine races, below the SDK's 25 tries.
            ref.transaction(lambda current: (current or 0) + 1)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    start = threading.Barrier(10)

    def run():
        start.wait()
        increment()

    threads = [threading.Thread(target=run) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert ref.get() == 10


def test_ordered_queries(app):
    ref = db.reference("dinos", app=app)
    ref.set({
        "bruhathkayosaurus": {"height": 25, "ratings": {"pos": 3}},
        "lambeosaurus": {"height": 2.1, "ratings": {"pos": 2}},
        "linhenykus": {"height": 0.6, "ratings": {"pos": 1}},
        "pterodactyl": {"height": 0.6, "ratings": {"pos": 5}},
        "stegosaurus": {"height": 4, "ratings": {"pos": 4}},
    })
    tallest = ref.order_by_child("height").limit_to_last(2).get()
    assert list(tallest) == ["stegosaurus", "bruhathkayosaurus"]
    ranged = ref.order_by_child("height").start_at(0.6).end_at(2.1).get()
    assert list(ranged) == ["linhenykus", "pterodactyl", "lambeosaurus"]
    assert list(ref.order_by_child("ratings/pos").limit_to_first(2).get()) == ["linhenykus", "lambeosaurus"]
    assert list(ref.order_by_key().limit_to_first(1).get()) == ["bruhathkayosaurus"]
    assert list(ref.order_by_key().start_at("p").get()) == ["pterodactyl", "stegosaurus"]
    assert list(ref.order_by_child("height").equal_to(0.6).get()) == ["linhenykus", "pterodactyl"]
    scores = db.reference("scores", app=app)
    scores.set({"a": 30, "b": 10, "c": 20})
    assert list(scores.order_by_value().limit_to_last(2).get()) == ["c", "a"]


def test_listen_receives_put_and_patch(app):
    ref = db.reference("live", app=app)
    ref.set({"a": 1})
    events = []
    arrived = threading.Event()

    def on_event(event):
        events.append((event.event_type, event.path, event.data))
        if len(events) >= 3:
            arrived.set()

    registration = ref.listen(on_event)
    try:
        deadline = time.monotonic() + 10
        while not events and time.monotonic() < deadline:
            time.sleep(0.02)
        ref.child("b").set("x")
        ref.update({"c/d": 2})
        assert arrived.wait(10), events
    finally:
        registration.close()
    assert events[:3] == [("put", "/", {"a": 1}), ("put", "/b", "x"), ("patch", "/", {"c/d": 2})]
