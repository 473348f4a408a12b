"""Three `hearth serve --storage postgresql://…` nodes behind nginx (docs/scaling.md), with the real
PostgreSQL and nginx from Debian's packages, started here on private ports.

Every request through the balancer may land on another node, so each test is also a test that the
nodes agree: a write on one reaches listeners on the others, transactions from clients on different
nodes sum exactly, a killed node loses nothing acknowledged and its connections' onDisconnect
operations run once on a survivor, and a PostgreSQL restart fails writes in the gap, clearly, and
loses nothing acknowledged.
"""

import collections
import json
import os
import signal
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests

from conftest import start_hearth
from nginx_support import Balancer
from postgres_support import TemporaryPostgres
from test_js_sdk import run_scenario as run_js_scenario
from test_realtime import Client, increment_in_transactions

LEASE_SECONDS = 2


@dataclass
class Endpoint:
    """Where a client connects: a node or the balancer (what test_realtime's Client needs)."""

    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


class Node:
    def __init__(self, binary, storage: str, name: str, data: Path, launcher: tuple[str, ...] = ()):
        self.binary, self.storage, self.name, self.data, self.launcher = binary, storage, name, data, launcher
        self.start()

    def start(self, port: int | None = None):
        environment = {"HEARTH_CLUSTER_LEASE_SECONDS": str(LEASE_SECONDS)}
        for _attempt in range(5):
            self.process, self.port = start_hearth(
                self.binary, "--emulator", "--storage", self.storage, "--data", str(self.data), "--node", self.name,
                "--project", "demo-cluster", environment=environment, port=port, launcher=self.launcher)
            if self.process.poll() is None:
                # Read as it comes: a node whose pipe filled would stop at its next line of log. The last
                # lines are shown when a test of this module fails (`cluster`).
                self.log = collections.deque(maxlen=200)
                copy = self.open_log_copy()
                for stream in (self.process.stdout, self.process.stderr):
                    threading.Thread(target=self._read_output, args=(stream, copy), daemon=True).start()
                return
        pytest.fail(f"node {self.name} did not start: {self.process.stderr.read()}", pytrace=False)

    def open_log_copy(self):
        """A file that keeps every line the node writes (subclasses' artifacts), or None."""
        return None

    def _read_output(self, stream, copy):
        for line in stream:
            self.log.append(line.rstrip("\n"))
            if copy is not None:
                copy.write(line)

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint("127.0.0.1", self.port)

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="module")
def cluster(hearth_binary, tmp_path_factory, request):
    if os.environ.get("HEARTH_SKIP_POSTGRES") == "1":
        pytest.skip("HEARTH_SKIP_POSTGRES=1: the cluster tests need PostgreSQL")
    failed_before = request.session.testsfailed
    # Each node keeps about two connections per namespace it has open (docs/scaling.md), and this module
    # opens a few dozen on three nodes: 60 (the default) ran out near the module's end, and a node then
    # refused to open a namespace ("too many clients already").
    postgres = TemporaryPostgres(max_connections=300)
    nodes = [Node(hearth_binary, postgres.url, name, tmp_path_factory.mktemp(f"node-{name}")) for name in ("a", "b", "c")]
    balancer = Balancer([node.port for node in nodes])
    yield postgres, nodes, balancer
    if request.session.testsfailed > failed_before:
        # What each node said, for the failures above (their own output holds only the test's side).
        capture = request.config.pluginmanager.getplugin("capturemanager")
        with capture.global_and_fixture_disabled():
            for node in nodes:
                print(f"\n--- node {node.name}: the last {len(node.log)} lines of its log ---", *node.log, sep="\n")
    balancer.stop()
    for node in nodes:
        node.stop()
    postgres.destroy()


def namespace() -> str:
    return "cl-" + uuid.uuid4().hex[:8]


def eventually(condition, seconds: float = 10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def get(endpoint, path: str, ns: str):
    return requests.get(f"{endpoint.url}/{path}.json?ns={ns}", timeout=10).json()


def test_each_node_names_itself_and_the_balancer_spreads_requests(cluster):
    _postgres, nodes, balancer = cluster
    for node in nodes:
        assert requests.get(f"{node.endpoint.url}/.info/node.json", timeout=5).json() == node.name
    seen = {requests.get(f"{balancer.url}/.info/node.json", timeout=5).json() for _ in range(9)}
    assert seen == {"a", "b", "c"}


def test_a_write_on_one_node_reaches_listeners_on_the_others(cluster):
    _postgres, (a, b, c), _balancer = cluster
    ns = namespace()
    requests.put(f"{a.endpoint.url}/rooms.json?ns={ns}", json={"lobby": {"topic": "start"}}, timeout=10).raise_for_status()
    listener = Client(c.endpoint, ns=ns)
    pushes, reply = listener.call("q", {"p": "/rooms", "h": ""})
    assert reply["s"] == "ok"
    stream = requests.get(f"{b.endpoint.url}/rooms.json?ns={ns}", headers={"Accept": "text/event-stream"}, stream=True, timeout=10)
    lines = stream.iter_lines(decode_unicode=True)
    assert next(lines) == "event: put"
    started = time.monotonic()
    requests.put(f"{a.endpoint.url}/rooms/lobby/topic.json?ns={ns}", json="hello", timeout=10).raise_for_status()
    push = listener.next_push()
    assert push["b"]["d"] == "hello" and push["b"]["p"].rstrip("/").endswith("rooms/lobby/topic")
    events = []
    for line in lines:
        if line.startswith("data:") and "hello" in line:
            events.append(json.loads(line[5:]))
            break
    assert events == [{"path": "/lobby/topic", "data": "hello"}]
    assert time.monotonic() - started < 2
    stream.close()
    listener.close()
    for node in (a, b, c):
        assert get(node.endpoint, "rooms", ns) == {"lobby": {"topic": "hello"}}


def test_every_node_serves_one_change_feed_in_postgresqls_order(cluster):
    _postgres, nodes, _balancer = cluster
    ns = namespace()
    owner = {"Authorization": "Bearer owner"}
    for index in range(9):
        node = nodes[index % 3]
        requests.put(f"{node.endpoint.url}/votes/v{index}.json?ns={ns}", json=index, timeout=10).raise_for_status()
    requests.put(f"{nodes[0].endpoint.url}/votes/v0.json?ns={ns}", json=100, timeout=10).raise_for_status()
    pages = [requests.get(f"{node.endpoint.url}/.feed.json?ns={ns}", headers=owner, timeout=10).json() for node in nodes]
    assert pages[0] == pages[1] == pages[2], "a position names the same entry on every node"
    entries = pages[0]["entries"]
    assert [(e["path"], e["data"]) for e in entries] == [(f"/votes/v{i}", i) for i in range(9)] + [("/votes/v0", 100)]
    assert entries[-1]["before"] == {"/votes/v0": 0}
    # A stream on one node hears a write made on another.
    stream = requests.get(f"{nodes[2].endpoint.url}/.feed.json?ns={ns}&after={entries[-1]['position']}",
                          headers={**owner, "Accept": "text/event-stream"}, stream=True, timeout=10)
    requests.put(f"{nodes[0].endpoint.url}/votes/late.json?ns={ns}", json=True, timeout=10).raise_for_status()
    lines = stream.iter_lines(decode_unicode=True)
    data = next(json.loads(line[len("data: "):]) for line in lines if line.startswith("data: {"))
    stream.close()
    assert data["path"] == "/votes/late" and data["position"] > entries[-1]["position"]


def test_rules_deployed_on_one_node_apply_on_every_node(cluster):
    _postgres, (a, b, c), _balancer = cluster
    ns = namespace()
    for node in (a, b, c):  # open everywhere, under the emulator's open rules
        requests.put(f"{node.endpoint.url}/x.json?ns={ns}", json=node.name, timeout=10).raise_for_status()
    locked = '{"rules": {".read": true, ".write": false}}'
    deployed = requests.put(f"{a.endpoint.url}/.settings/rules.json?ns={ns}", data=locked,
                            headers={"Authorization": "Bearer owner"}, timeout=10)
    assert deployed.status_code == 200, deployed.text
    for node in (b, c):
        # Applied within moments of the deploy (a notification, then one read of hearth_rules).
        assert eventually(lambda: requests.put(f"{node.endpoint.url}/x.json?ns={ns}", json=1, timeout=10).status_code == 401, 5), node.name
        current = requests.get(f"{node.endpoint.url}/.settings/rules.json?ns={ns}", headers={"Authorization": "Bearer owner"}, timeout=10)
        assert current.text == locked


def test_accounts_are_shared_by_every_node(cluster):
    _postgres, (a, b, c), balancer = cluster
    ns = namespace()
    email, password = f"{ns}@example.com", "secret123"

    def auth(node, operation, body):
        return requests.post(f"{node.endpoint.url}/identitytoolkit.googleapis.com/v1/accounts:{operation}?key=k",
                             json=body, timeout=30)

    signed_up = auth(a, "signUp", {"email": email, "password": password, "returnSecureToken": True})
    assert signed_up.status_code == 200, signed_up.text
    signed_in = auth(b, "signInWithPassword", {"email": email, "password": password, "returnSecureToken": True})
    assert signed_in.status_code == 200, signed_in.text
    token, uid = signed_in.json()["idToken"], signed_in.json()["localId"]
    assert uid == signed_up.json()["localId"]
    # Rules that need a signed-in user, deployed on a, enforced on c with the token b issued.
    rules = '{"rules": {"users": {"$uid": {".read": "auth.uid == $uid", ".write": "auth.uid == $uid"}}}}'
    requests.put(f"{a.endpoint.url}/.settings/rules.json?ns={ns}", data=rules, headers={"Authorization": "Bearer owner"},
                 timeout=10).raise_for_status()
    assert eventually(lambda: requests.put(f"{c.endpoint.url}/users/{uid}.json?ns={ns}&auth={token}", json={"n": 1},
                                           timeout=10).status_code == 200, 5)
    assert requests.get(f"{c.endpoint.url}/users/{uid}.json?ns={ns}", timeout=10).status_code == 401
    # A refresh token from b refreshes on c; the account is the same one everywhere.
    refreshed = requests.post(f"{c.endpoint.url}/securetoken.googleapis.com/v1/token?key=k",
                              data={"grant_type": "refresh_token", "refresh_token": signed_in.json()["refreshToken"]}, timeout=30)
    assert refreshed.status_code == 200 and refreshed.json()["user_id"] == uid, refreshed.text
    duplicate = auth(c, "signUp", {"email": email, "password": password})
    assert duplicate.status_code == 400 and "EMAIL_EXISTS" in duplicate.text


def test_blocking_auth_hooks_set_on_one_node_are_asked_by_every_node(cluster):
    from test_blocking_hooks import SECRET, BlockingReceiver, policy

    _postgres, (a, b, c), _balancer = cluster
    receiver = BlockingReceiver(policy)
    config = f"{a.endpoint.url}/identitytoolkit.googleapis.com/admin/v2/projects/demo-cluster/config"
    hook = {"functionUri": receiver.url, "secret": SECRET}
    owner = {"Authorization": "Bearer owner"}
    try:
        assert requests.patch(config, json={"blockingFunctions": {"triggers": {"beforeCreate": hook}}}, headers=owner,
                              timeout=10).status_code == 200

        def sign_up(node, email):
            return requests.post(f"{node.endpoint.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
                                 json={"email": email, "password": "secret123", "returnSecureToken": True}, timeout=30)

        # Each node re-reads the shared setting within a second.
        assert eventually(lambda: sign_up(c, f"{namespace()}@evil.test").status_code == 400, 5)
        allowed = sign_up(b, f"{namespace()}@example.com")
        assert allowed.status_code == 200, allowed.text
        assert "beforeCreate" in receiver.events()
    finally:
        requests.patch(config, json={"blockingFunctions": {"triggers": {"beforeCreate": None}}}, headers=owner, timeout=10)
        receiver.close()


def hook_status(node, ns):
    response = requests.get(f"{node.endpoint.url}/.settings/hooks/status.json?ns={ns}", headers={"Authorization": "Bearer owner"}, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()["hooks"]


def test_a_webhook_deployed_on_one_node_is_delivered_once_by_one_node_and_taken_over_when_it_dies(cluster):
    from hook_receiver import Receiver

    _postgres, nodes, _balancer = cluster
    a, b, c = nodes
    ns = namespace()
    receiver = Receiver()
    document = {"hooks": {"h": {"path": "/jokes/{jokeId}", "events": ["written"], "url": receiver.url, "secret": "a-secret-of-sixteen-plus"}}}
    try:
        deployed = requests.put(f"{a.endpoint.url}/.settings/hooks.json?ns={ns}", json=document, headers={"Authorization": "Bearer owner"}, timeout=30)
        assert deployed.status_code == 200, deployed.text
        # Every node says which one delivers it, and it is the same one.
        assert eventually(lambda: all(hook_status(node, ns)[0].get("node") for node in nodes), 10)
        owners = {hook_status(node, ns)[0]["node"] for node in nodes}
        assert len(owners) == 1, owners
        (owner,) = owners
        for n in range(30):
            endpoint = (b, c)[n % 2].endpoint  # writes land on every node
            requests.put(f"{endpoint.url}/jokes/j{n:02d}.json?ns={ns}", json=n, timeout=10).raise_for_status()
        receiver.wait_for(lambda r: len(r.accepted()) >= 30, timeout=30)
        delivered = receiver.accepted()
        assert [event["after"] for event in delivered] == list(range(30)), "each write once, in the cluster's commit order"
        assert len({event["id"] for event in delivered}) == 30

        # The delivering node dies: another takes the hook once its lease lapses, from the saved cursor.
        dead = next(node for node in nodes if owner.startswith(node.name + "#"))
        survivors = [node for node in nodes if node is not dead]
        dead.kill()
        for n in range(30, 40):
            requests.put(f"{survivors[n % 2].endpoint.url}/jokes/j{n:02d}.json?ns={ns}", json=n, timeout=10).raise_for_status()
        receiver.wait_for(lambda r: {event["after"] for event in r.accepted()} >= set(range(40)), timeout=LEASE_SECONDS * 5 + 20)
        after = [event for event in receiver.accepted() if event["after"] >= 30]
        first_seen = list(dict.fromkeys(event["after"] for event in after))
        assert first_seen == list(range(30, 40)), "in order after the takeover"
        by_id = {}
        for event in receiver.accepted():
            assert by_id.setdefault(event["id"], event) == event, "a repeat carries the same id and content"
        new_owner = hook_status(survivors[0], ns)[0]["node"]
        assert not new_owner.startswith(dead.name + "#"), new_owner
        dead.start(port=dead.port)
    finally:
        receiver.close()


def test_a_functions_process_registers_and_reads_through_any_node(cluster, hearth_binary, tmp_path):
    import subprocess

    _postgres, (a, b, c), _balancer = cluster
    ns = namespace()
    probe = hearth_binary.parent / "hearth-functions-probe"
    log = tmp_path / "probe.log"
    process = subprocess.Popen(
        [str(probe), "--url", f"{b.endpoint.url}?ns={ns}", "--token", "owner", "--name", "probe"],
        env={**os.environ, "HEARTH_PROBE_LOG": str(log)}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "probe.err", "w"))
    try:
        listed = lambda node: requests.get(f"{node.endpoint.url}/.settings/functions.json?ns={ns}", headers={"Authorization": "Bearer owner"},
                                           timeout=10).json().get("functions", [])
        assert eventually(lambda: listed(c), 30), (tmp_path / "probe.err").read_text()
        for node, key, text in ((c, "m1", "hi"), (a, "m2", "ho")):
            response = requests.put(f"{node.endpoint.url}/inbox/{key}.json?ns={ns}", json={"text": text}, timeout=10)
            assert response.status_code == 200, (node.name, response.status_code, response.text)

        def created():
            if not log.exists():
                return set()
            events = [json.loads(line) for line in log.read_text().splitlines() if line.endswith("}")]
            return {event["params"]["messageId"] for event in events if event["function"] == "created"}

        assert eventually(lambda: created() >= {"m1", "m2"}, 30), created()
        # Its writes back, with admin access through node b, reach every node.
        assert eventually(lambda: get(a.endpoint, "processed", ns) == {"m1": "HI", "m2": "HO"}, 10)
    finally:
        process.terminate()
        process.wait(30)


def test_a_locations_history_is_the_clusters_on_every_node(cluster):
    _postgres, (a, b, c), _balancer = cluster
    ns = namespace()
    for n, node in enumerate((a, b, c, a)):
        requests.put(f"{node.endpoint.url}/score.json?ns={ns}", json=n, timeout=10).raise_for_status()
    for n in range(60):
        requests.put(f"{(a, b, c)[n % 3].endpoint.url}/other/o{n}.json?ns={ns}", json=n, timeout=10).raise_for_status()
    for node in (a, b, c):
        response = requests.get(f"{node.endpoint.url}/.history.json", params={"ns": ns, "path": "/score"},
                                headers={"Authorization": "Bearer owner"}, timeout=30)
        assert response.status_code == 200, response.text
        assert [change["after"] for change in response.json()["changes"]] == [3, 2, 1, 0]
        # From the feed's location index in PostgreSQL: the four entries read, not the 60 newer ones.
        assert response.json()["scanned"] == 4, response.json()
    older = requests.get(f"{b.endpoint.url}/.history.json", params={"ns": ns, "path": "/score", "limit": 2},
                         headers={"Authorization": "Bearer owner"}, timeout=30).json()
    rest = requests.get(f"{c.endpoint.url}/.history.json", params={"ns": ns, "path": "/score", "before": older["next"]},
                        headers={"Authorization": "Bearer owner"}, timeout=30).json()
    assert [change["after"] for change in older["changes"] + rest["changes"]] == [3, 2, 1, 0] and rest["next"] is None


def test_a_namespace_deleted_on_one_node_is_closed_on_the_others(cluster):
    _postgres, (a, b, _c), _balancer = cluster
    ns = namespace()
    requests.put(f"{a.endpoint.url}/shop.json?ns={ns}", json={"item": 1}, timeout=10).raise_for_status()
    listener = Client(b.endpoint, ns=ns)
    _, reply = listener.call("q", {"p": "/shop", "h": ""})
    assert reply["s"] == "ok"
    # The console on node a, signed in with the admin token (owner in emulator mode).
    console = requests.Session()
    assert console.post(f"{a.endpoint.url}/console/api/signin", json={"token": "owner"}, timeout=10).status_code == 200
    csrf = console.get(f"{a.endpoint.url}/console/api/session", timeout=10).json()["csrf"]
    deleted = console.delete(f"{a.endpoint.url}/console/api/namespaces/{ns}", json={"confirm": ns},
                             headers={"X-Hearth-CSRF": csrf}, timeout=30)
    assert deleted.status_code == 200, deleted.text
    # Node b tells its client as node a would, and forgets the data it held.
    while (message := listener.receive())["t"] != "c":
        pass
    assert message["d"]["t"] == "s" and "deleted" in message["d"]["d"], message
    assert requests.get(f"{b.endpoint.url}/shop.json?ns={ns}", timeout=10).json() is None


@pytest.mark.parametrize("scenario", ["roundtrip", "query", "transaction", "ondisconnect", "info"])
def test_the_official_js_sdk_through_the_balancer(js_sdk, cluster, scenario):
    """js/realtime.cjs's scenarios (test_js_sdk.py) with every app connecting through nginx: the apps of
    one scenario land on different nodes, so a set seen by a second app, 20 apps' transactions on one
    counter and an onDisconnect all cross nodes."""
    _postgres, _nodes, balancer = cluster
    run_js_scenario(js_sdk, SimpleNamespace(host="127.0.0.1", port=balancer.port), namespace(), scenario)


def test_hearth_users_with_storage_manages_the_clusters_accounts(cluster, hearth_binary):
    postgres, (a, _b, c), _balancer = cluster
    email = f"{namespace()}@example.com"

    def users(*arguments):
        done = subprocess.run([str(hearth_binary), "users", *arguments, "--storage", postgres.url],
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def sign_in(node):
        return requests.post(f"{node.endpoint.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=k",
                             json={"email": email, "password": "secret123", "returnSecureToken": True}, timeout=30)

    uid = users("add", email, "secret123").strip()
    assert uid and f"{uid}\t{email}" in users("list")
    assert sign_in(c).status_code == 200 and sign_in(c).json()["localId"] == uid
    users("disable", uid)
    refused = sign_in(a)
    assert refused.status_code == 400 and "USER_DISABLED" in refused.text, refused.text
    assert f"{uid}\t{email}\tdisabled" in users("list")


def test_firebase_admin_through_the_balancer(cluster, monkeypatch):
    _postgres, _nodes, balancer = cluster
    import firebase_admin
    from firebase_admin import credentials, db

    monkeypatch.setenv("FIREBASE_DATABASE_EMULATOR_HOST", f"127.0.0.1:{balancer.port}")
    ns = namespace()

    class Anonymous(credentials.Base):
        def get_credential(self):
            from google.auth.credentials import AnonymousCredentials
            return AnonymousCredentials()

    app = firebase_admin.initialize_app(Anonymous(), {"databaseURL": f"https://{ns}.firebaseio.com"}, name=ns)
    try:
        root = db.reference("/", app=app)
        root.child("users/ada").set({"name": "Ada", "born": 1815})
        root.child("users").update({"bob/name": "Bob"})
        key = root.child("log").push({"n": 1}).key
        assert root.child("users").get() == {"ada": {"name": "Ada", "born": 1815}, "bob": {"name": "Bob"}}
        assert root.child(f"log/{key}/n").get() == 1
        assert root.child("users").order_by_key().limit_to_first(1).get() == {"ada": {"name": "Ada", "born": 1815}}

        # 20 clients, each incrementing one counter 10 times in transactions, every request balanced. With
        # 20 contenders firebase-admin gives some up after its 25 tries (on one node too: 24 of 200 in a
        # run), having written nothing; an app tries those again, and so do these clients.
        errors = []

        def client():
            try:
                done = aborted = 0
                while done < 10:
                    try:
                        root.child("counter").transaction(lambda value: (value or 0) + 1)
                        done += 1
                    except db.TransactionAbortedError:
                        aborted += 1
                        assert aborted < 50, "no progress"
            except Exception as error:  # reported below
                errors.append(repr(error))

        threads = [threading.Thread(target=client) for _ in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(180)
        if errors:
            Path("/tmp/nginx-error.log").write_text(balancer.error_log())
        assert not errors, errors[:3]
        # Read through the balancer right after: whichever node answers has caught up first.
        assert root.child("counter").get() == 200
    finally:
        firebase_admin.delete_app(app)


def test_realtime_transactions_from_clients_on_every_node_sum_exactly(cluster):
    _postgres, nodes, balancer = cluster
    ns = namespace()
    path = "counter"
    errors = []

    def worker(endpoint):
        try:
            client = Client(endpoint, ns=ns, timeout=60)
            increment_in_transactions(client, path, 10)
            client.close()
        except Exception as error:  # reported below
            errors.append(repr(error))

    endpoints = [node.endpoint for node in nodes] + [Endpoint("127.0.0.1", balancer.port)]
    threads = [threading.Thread(target=worker, args=(endpoints[index % len(endpoints)],)) for index in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    assert not errors, errors[:3]
    for node in nodes:
        assert eventually(lambda: get(node.endpoint, path, ns) == 200, 5), get(node.endpoint, path, ns)


def resent_writes(node) -> int:
    metrics = requests.get(f"{node.endpoint.url}/metrics", headers={"Authorization": "Bearer owner"}, timeout=10).text
    return int(next(line.split()[1] for line in metrics.splitlines() if line.startswith("hearth_writes_resent_total ")))


def test_a_write_sent_again_to_another_node_is_applied_once(cluster):
    """HearthClient's write IDs in a cluster (docs/protocol.md §2.6.1): a client that lost the answer to a write
    sends it again, perhaps through the balancer to another node. That node knows another applied it (from
    PostgreSQL's change log; once restarted, from hearth_applied_writes) and acknowledges it without applying it
    again: sent to one node after another, to all three at once, as a transaction's compare-and-set, and after a
    restart."""
    _postgres, (a, b, c), _balancer = cluster
    ns = namespace()
    increment = {"count": {".sv": {"increment": 1}}}
    clients = {node.name: Client(node.endpoint, ns=ns) for node in (a, b, c)}
    resent_before = sum(resent_writes(node) for node in (a, b, c))
    for index in range(10):
        for node in (a, b, c):
            status = clients[node.name].call("m", {"p": "/", "d": increment, "wid": f"one-by-one-{index}"})[1]
            assert status["s"] == "ok", (node.name, status)
    for index in range(10):
        statuses = {}

        def send(name, wid=f"at-once-{index}"):
            statuses[name] = clients[name].call("m", {"p": "/", "d": increment, "wid": wid})[1]["s"]

        threads = [threading.Thread(target=send, args=(name,)) for name in clients]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert statuses == {"a": "ok", "b": "ok", "c": "ok"}, statuses
    # A transaction's compare-and-set sent again elsewhere is acknowledged, not refused as stale.
    assert clients["a"].call("p", {"p": "/tx", "d": 1, "h": "", "wid": "cas"})[1]["s"] == "ok"
    assert clients["b"].call("p", {"p": "/tx", "d": 1, "h": "", "wid": "cas"})[1]["s"] == "ok"
    for node in (a, b, c):
        assert eventually(lambda: get(node.endpoint, "", ns) == {"count": 20, "tx": 1}), (node.name, get(node.endpoint, "", ns))
    # Each write was applied by one node; the two others each took it as a resend.
    assert sum(resent_writes(node) for node in (a, b, c)) - resent_before == 2 * 20 + 1
    for client in clients.values():
        client.close()
    # Restarted, a node remembers the IDs PostgreSQL holds.
    b.stop()
    b.start(port=b.port)
    restarted = Client(b.endpoint, ns=ns)
    assert restarted.call("m", {"p": "/", "d": increment, "wid": "one-by-one-0"})[1]["s"] == "ok"
    assert restarted.call("m", {"p": "/", "d": increment, "wid": "after-restart"})[1]["s"] == "ok"
    restarted.close()
    assert get(b.endpoint, "count", ns) == 21
    assert resent_writes(b) == 1


def test_a_killed_node_loses_nothing_acknowledged_and_its_on_disconnects_run_once(cluster):
    postgres, (a, b, c), balancer = cluster
    ns = namespace()
    requests.put(f"{a.endpoint.url}/presence.json?ns={ns}", json={"ada": "online"}, timeout=10).raise_for_status()
    leaver = Client(b.endpoint, ns=ns)
    assert leaver.call("o", {"p": "/presence/ada", "d": "offline"})[1]["s"] == "ok"
    watcher = requests.get(f"{a.endpoint.url}/presence/ada.json?ns={ns}", headers={"Accept": "text/event-stream"}, stream=True, timeout=60)
    watched = []

    def watch():
        try:
            for line in watcher.iter_lines(decode_unicode=True):
                if line.startswith("data:") and line[5:].strip() not in ("null", ""):
                    watched.append(json.loads(line[5:])["data"])
        except (requests.RequestException, AttributeError, ValueError):
            pass  # closed by the test at its end

    threading.Thread(target=watch, daemon=True).start()
    assert eventually(lambda: watched == ["online"])

    acknowledged, stop = [], threading.Event()

    def writer(endpoint, tag):
        index = 0
        session = requests.Session()
        while not stop.is_set():
            try:
                response = session.put(f"{endpoint.url}/load/{tag}-{index}.json?ns={ns}", json=index, timeout=10)
                if response.status_code == 200:
                    acknowledged.append(f"{tag}-{index}")
            except requests.RequestException:
                pass  # the killed node's in-flight writes were never acknowledged
            index += 1

    writers = [threading.Thread(target=writer, args=(endpoint, tag)) for tag, endpoint in
               (("b", b.endpoint), ("lb", Endpoint("127.0.0.1", balancer.port)), ("c", c.endpoint))]
    for thread in writers:
        thread.start()
    time.sleep(1.0)
    b.kill()
    killed = time.monotonic()
    time.sleep(1.0)
    stop.set()
    for thread in writers:
        thread.join(30)
    # Every acknowledged write is there, on both survivors.
    for node in (a, c):
        stored = get(node.endpoint, "load", ns) or {}
        missing = [key for key in acknowledged if key not in stored]
        assert not missing, f"{len(missing)} acknowledged writes missing on {node.name}: {missing[:5]}"
    # Node b's connection's onDisconnect ran once on a survivor, within its lease (+ a renewal).
    assert eventually(lambda: watched == ["online", "offline"], LEASE_SECONDS * 3 + 5), watched
    assert time.monotonic() - killed < LEASE_SECONDS * 3 + 5
    time.sleep(LEASE_SECONDS * 1.5)
    assert watched == ["online", "offline"], "run more than once"
    # The claim went in the same commit as the write that ran it: nothing is left for another node.
    assert postgres.sql(f"SELECT count(*) FROM hearth_ondisconnect WHERE namespace = '{ns}'") == "0"
    watcher.close()
    # Node b comes back (on its port, so the balancer finds it) and serves the survivors' tree.
    b.start(port=b.port)
    assert eventually(lambda: get(b.endpoint, "presence/ada", ns) == "offline")
    assert get(b.endpoint, "load", ns) == get(a.endpoint, "load", ns)


def test_a_postgres_restart_fails_writes_in_the_gap_clearly_and_loses_nothing(cluster):
    postgres, nodes, balancer = cluster
    ns = namespace()
    requests.put(f"{balancer.url}/state.json?ns={ns}", json={"before": True}, timeout=10).raise_for_status()
    listener = Client(nodes[2].endpoint, ns=ns)
    assert listener.call("q", {"p": "/state", "h": ""})[1]["s"] == "ok"
    acknowledged, failures, stop = [], [], threading.Event()

    def writer():
        index = 0
        while not stop.is_set():
            started = time.monotonic()
            response = requests.put(f"{nodes[0].endpoint.url}/state/w{index}.json?ns={ns}", json=index, timeout=30)
            elapsed = time.monotonic() - started
            if response.status_code == 200:
                acknowledged.append(f"w{index}")
            else:
                failures.append((response.status_code, response.json().get("error", ""), elapsed))
            index += 1
            time.sleep(0.01)

    thread = threading.Thread(target=writer)
    thread.start()
    time.sleep(0.5)
    postgres.stop()
    time.sleep(2)
    postgres.start()
    time.sleep(2)
    stop.set()
    thread.join(60)
    assert failures, "no write fell in the gap"
    for status, message, elapsed in failures:
        assert status >= 500 and "PostgreSQL" in message and elapsed < 11, (status, message, elapsed)
        assert postgres.password not in message
    # After the restart writes succeed again, and nothing acknowledged is missing anywhere.
    requests.put(f"{nodes[0].endpoint.url}/state/after.json?ns={ns}", json=1, timeout=10).raise_for_status()
    for node in nodes:
        assert eventually(lambda: (get(node.endpoint, "state", ns) or {}).get("after") == 1, 10)
        stored = get(node.endpoint, "state", ns)
        assert [key for key in acknowledged if key not in stored] == []
    # The listener on node c kept its connection and hears writes again.
    requests.put(f"{nodes[1].endpoint.url}/state/later.json?ns={ns}", json=2, timeout=10).raise_for_status()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        push = listener.next_push()
        if push["b"]["p"].strip("/").endswith("later"):
            assert push["b"]["d"] == 2
            break
    else:
        pytest.fail("the listener heard nothing after the restart")
    listener.close()
