"""Linearizability of a cluster under faults (docs/reliability.md): three `hearth serve --storage` nodes on
Debian's PostgreSQL behind nginx, every link through a fault proxy (node to PostgreSQL, balancer to node),
clients on every node and on the balancer doing reads, writes and compare-and-sets on a few keys (REST with
ETags, and realtime puts with and without a transaction's hash), two of the nodes with their clocks 25 s
behind and ahead, while a nemesis pauses nodes past their lease, kills and restarts them, cuts a node from
PostgreSQL or from the balancer, slows and resets links, and restarts PostgreSQL. Every namespace's
history is judged by the checker in linearizability.py; an operation that timed out counts as maybe
applied. A history that fails is saved with a minimised copy under .build/test-artifacts/faults.

A history is one register: one key of one namespace (five keys per namespace), checked on its own.
Budget: `HEARTH_FAULT_HISTORIES` histories (default 12) of at least `HEARTH_FAULT_OPERATIONS` operations
each (default 1,000), run side by side in one stretch of faults; `make faults` runs 50.
"""

import json
import os
import random
import signal
import threading
import time
import uuid
from pathlib import Path

import pytest
import requests
import websocket

from fault_proxy import FaultProxy
from linearizability import Op, check, minimise, save
from nginx_support import Balancer
from postgres_support import TemporaryPostgres
from test_cluster import LEASE_SECONDS, Node
from test_realtime import number_hash

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("HEARTH_ARTIFACTS", ROOT / ".build" / "test-artifacts")) / "faults"
HISTORIES = int(os.environ.get("HEARTH_FAULT_HISTORIES", "12"))
OPERATIONS = int(os.environ.get("HEARTH_FAULT_OPERATIONS", "1000"))
KEYS_PER_NAMESPACE = 5
# Nodes b and c run with their clocks behind and ahead (Debian's faketime): ordering is PostgreSQL's and
# leases are timed by its clock, so neither may matter; ID tokens allow 60 s of skew between nodes.
CLOCKS = {"a": None, "b": "-25s", "c": "+25s"}
TIMEOUT = 4.0


class DrainedNode(Node):
    """A node whose output is also kept whole in the fault tests' artifacts (`node-NAME.log`): under faults
    it logs a line each time a namespace's writes start or stop failing."""

    def open_log_copy(self):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        log = open(ARTIFACTS / f"node-{self.name}.log", "a", buffering=1)  # noqa: SIM115 (closed with the node's output)
        log.write(f"--- started at {time.strftime('%H:%M:%S')}\n")
        return log

    @property
    def pid(self) -> int:
        """The server's own process: under faketime, the wrapper's child (signals go to it, not the wrapper)."""
        if not self.launcher:
            return self.process.pid
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
            except OSError:
                children = []
            if children:
                return int(children[0])
            time.sleep(0.01)
        return self.process.pid

    def kill(self):
        os.kill(self.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self):
        if self.process.poll() is None and self.launcher:
            os.kill(self.pid, signal.SIGTERM)
        super().stop()


class FaultyCluster:
    """PostgreSQL, three nodes each reaching it through a proxy, and nginx reaching each node through one."""

    def __init__(self, binary, tmp_path_factory):
        # Each node holds a connection per namespace it serves, and a killed node's linger until PostgreSQL
        # notices: room for both.
        self.postgres = TemporaryPostgres(max_connections=300)
        self.database_proxies = [FaultProxy(self.postgres.port, name=f"pg-{name}") for name in "abc"]
        self.nodes = []
        for name, proxy in zip("abc", self.database_proxies):
            url = self.postgres.url.replace(f":{self.postgres.port}/", f":{proxy.port}/")
            launcher = ("faketime", "-f", CLOCKS[name]) if CLOCKS[name] else ()
            self.nodes.append(DrainedNode(binary, url, name, tmp_path_factory.mktemp(f"fault-node-{name}"), launcher=launcher))
        self.node_proxies = [FaultProxy(node.port, name=f"to-{node.name}") for node in self.nodes]
        self.balancer = Balancer([proxy.port for proxy in self.node_proxies])
        self.lock = threading.Lock()

    def endpoints(self) -> list[str]:
        """Where clients go: each node (through its proxy) and the balancer."""
        return [f"http://127.0.0.1:{proxy.port}" for proxy in self.node_proxies] + [self.balancer.url]

    def heal(self):
        # A PostgreSQL restart the nemesis could not finish (pg_ctl timing out under load) is finished here.
        if not (self.postgres.directory / "data" / "postmaster.pid").exists():
            self.postgres.start()
            for proxy in self.database_proxies:
                proxy.target = ("127.0.0.1", self.postgres.port)
        for proxy in self.database_proxies + self.node_proxies:
            proxy.heal()
        for node in self.nodes:
            if node.process.poll() is None:
                os.kill(node.pid, signal.SIGCONT)
            else:
                node.start(port=node.port)

    def stop(self):
        self.balancer.stop()
        for node in self.nodes:
            if node.process.poll() is None:
                os.kill(node.pid, signal.SIGCONT)
            node.stop()
        for proxy in self.database_proxies + self.node_proxies:
            proxy.stop()
        self.postgres.destroy()


class Nemesis:
    """Injects one fault at a time, each healed before the next, and says what it did."""

    def __init__(self, cluster: FaultyCluster, seed: int, clock):
        self.cluster, self.clock = cluster, clock
        self.timeline: list[str] = []  # when each fault began and ended, on the histories' clock
        self.rng = random.Random(seed)
        self.done: list[str] = []
        self.stop = threading.Event()

    def run(self):
        faults = [self.pause, self.kill, self.cut_from_postgres, self.cut_from_balancer, self.slow, self.reset_links,
                  self.restart_postgres]
        while not self.stop.wait(self.rng.uniform(0.5, 1.5)):
            fault = self.rng.choice(faults)
            node = self.rng.choice(self.cluster.nodes)
            began = self.clock()
            try:
                self.done.append(fault(node))
                self.timeline.append(f"{began:8.3f}–{self.clock():8.3f} {self.done[-1]}")
            except BaseException as error:  # noqa: BLE001 (a node that did not restart: healed at the end)
                self.done.append(f"{fault.__name__} {node.name} failed: {str(error)[:200]}")

    def hold(self, seconds):
        self.stop.wait(seconds)

    def pause(self, node):
        os.kill(node.pid, signal.SIGSTOP)
        self.hold(LEASE_SECONDS * 1.5)  # wakes past its lease
        os.kill(node.pid, signal.SIGCONT)
        return f"paused {node.name}"

    def kill(self, node):
        node.kill()
        self.hold(0.5)
        node.start(port=node.port)
        return f"killed {node.name}"

    def cut_from_postgres(self, node):
        proxy = self.cluster.database_proxies[self.cluster.nodes.index(node)]
        proxy.blackhole()
        self.hold(LEASE_SECONDS * 1.5)
        proxy.heal()
        return f"cut {node.name} from postgres"

    def cut_from_balancer(self, node):
        proxy = self.cluster.node_proxies[self.cluster.nodes.index(node)]
        proxy.blackhole()
        self.hold(2)
        proxy.heal()
        return f"cut {node.name} from its clients"

    def slow(self, node):
        index = self.cluster.nodes.index(node)
        for proxy in (self.cluster.database_proxies[index], self.cluster.node_proxies[index]):
            proxy.delay(self.rng.uniform(0.02, 0.2))
        self.hold(2)
        for proxy in (self.cluster.database_proxies[index], self.cluster.node_proxies[index]):
            proxy.heal()
        return f"slowed {node.name}'s links"

    def reset_links(self, node):
        proxy = self.cluster.database_proxies[self.cluster.nodes.index(node)]
        proxy.reset_connections()
        return f"reset {node.name}'s connections to postgres"

    def restart_postgres(self, _node):
        postgres = self.cluster.postgres
        postgres.stop()
        self.hold(0.5)
        postgres.start()
        for proxy in self.cluster.database_proxies:
            proxy.target = ("127.0.0.1", postgres.port)
        return "restarted postgres"


class Client:
    """One process of the history: operations one at a time on random keys of random namespaces."""

    def __init__(self, process: int, endpoint: str, registers: list[tuple[str, str]], history: dict, lock: threading.Lock, clock):
        self.process, self.endpoint, self.registers = process, endpoint, registers
        self.history, self.lock, self.clock = history, lock, clock
        self.rng = random.Random(process)
        self.session = requests.Session()
        self.counter = 0
        self.sockets: dict[str, websocket.WebSocket] = {}  # a realtime connection per namespace, opened when needed
        self.next_request = 0
        self.realtime_outcomes = {"ok": 0, "datastale": 0, "unknown": 0}

    def record(self, namespace: str, op: Op):
        with self.lock:
            self.history[(namespace, op.key)].append(op)

    def url(self, namespace, key):
        return f"{self.endpoint}/reg/{key}.json?ns={namespace}"

    def run(self, stop: threading.Event, wanted: int):
        while not stop.is_set():
            namespace, key = self.rng.choice(self.registers)
            with self.lock:
                if all(len(h) >= wanted for h in self.history.values()):
                    return
            kind = self.rng.choices(["read", "write", "cas", "realtime_write", "realtime_cas"], [0.4, 0.2, 0.2, 0.1, 0.1])[0]
            getattr(self, kind)(namespace, key)
        for socket in self.sockets.values():
            socket.close()

    def realtime_put(self, namespace, key, value, hash_: str | None) -> bool | None:
        """A realtime `p` (with `h`, a transaction's compare-and-set): True when answered ok, False when
        refused as stale, None when the answer never came or was another failure (it may have been
        stored: a storage error, a node that died after committing)."""
        try:
            socket = self.sockets.get(namespace)
            if socket is None:
                socket = websocket.create_connection(
                    self.endpoint.replace("http://", "ws://") + f"/.ws?v=5&ns={namespace}", timeout=TIMEOUT)
                socket.recv()  # the handshake
                self.sockets[namespace] = socket
            self.next_request += 1
            body = {"p": f"/reg/{key}", "d": value}
            if hash_ is not None:
                body["h"] = hash_
            socket.send(json.dumps({"t": "d", "d": {"r": self.next_request, "a": "p", "b": body}}))
            while True:
                message = json.loads(socket.recv())
                if isinstance(message, dict) and message.get("t") == "d" and message["d"].get("r") == self.next_request:
                    status = message["d"]["b"].get("s")
                    outcome = status if status in ("ok", "datastale") else "unknown"
                    self.realtime_outcomes[outcome] += 1
                    return True if status == "ok" else False if status == "datastale" else None
        except (websocket.WebSocketException, OSError, ValueError):
            self.realtime_outcomes["unknown"] += 1
            socket = self.sockets.pop(namespace, None)
            if socket is not None:
                socket.close()
            return None

    def realtime_write(self, namespace, key):
        value = self.fresh()
        invoked = self.clock()
        ok = self.realtime_put(namespace, key, value, None)
        ok = True if ok else None
        self.record(namespace, Op(self.process, "write", key, invoked, self.clock() if ok else None, ok, value=value))

    def realtime_cas(self, namespace, key):
        # As an SDK's transaction: the value it holds (read over REST here), its hash, and a put with it.
        try:
            read = self.session.get(self.url(namespace, key), timeout=TIMEOUT)
        except requests.RequestException:
            return
        if read.status_code != 200:
            return
        expected, value = read.json(), self.fresh()
        invoked = self.clock()
        ok = self.realtime_put(namespace, key, value, number_hash(expected))
        if ok is False:
            # `datastale` claims nothing about the value (a node that has not yet caught up refuses on the
            # value it has, and the SDK retries once it hears of the newer one): no effect, no claim.
            return
        self.record(namespace, Op(self.process, "cas", key, invoked, self.clock() if ok else None, ok, value=value, expected=expected))

    def read(self, namespace, key):
        invoked = self.clock()
        try:
            response = self.session.get(self.url(namespace, key), timeout=TIMEOUT)
        except requests.RequestException:
            return self.record(namespace, Op(self.process, "read", key, invoked, None, None))
        completed = self.clock()
        if response.status_code != 200:
            return self.record(namespace, Op(self.process, "read", key, invoked, None, None))
        self.record(namespace, Op(self.process, "read", key, invoked, completed, True, result=response.json()))

    def fresh(self):
        self.counter += 1
        return self.process * 1_000_000 + self.counter

    def write(self, namespace, key):
        value = self.fresh()
        invoked = self.clock()
        try:
            response = self.session.put(self.url(namespace, key), json=value, timeout=TIMEOUT)
        except requests.RequestException:
            return self.record(namespace, Op(self.process, "write", key, invoked, None, None, value=value))
        completed = self.clock()
        # Anything but a 200 may or may not have been stored (a commit whose answer was lost).
        ok = True if response.status_code == 200 else None
        self.record(namespace, Op(self.process, "write", key, invoked, completed if ok else None, ok, value=value))

    def cas(self, namespace, key):
        # The value and its ETag, then a PUT that only applies if it is still that value.
        try:
            read = self.session.get(self.url(namespace, key), headers={"X-Firebase-ETag": "true"}, timeout=TIMEOUT)
        except requests.RequestException:
            return
        if read.status_code != 200 or "ETag" not in read.headers:
            return
        expected, value = read.json(), self.fresh()
        invoked = self.clock()
        try:
            response = self.session.put(self.url(namespace, key), json=value, headers={"if-match": read.headers["ETag"]}, timeout=TIMEOUT)
        except requests.RequestException:
            return self.record(namespace, Op(self.process, "cas", key, invoked, None, None, value=value, expected=expected))
        completed = self.clock()
        if response.status_code == 200:
            self.record(namespace, Op(self.process, "cas", key, invoked, completed, True, value=value, expected=expected))
        elif response.status_code == 412:
            self.record(namespace, Op(self.process, "cas", key, invoked, completed, False, value=value, expected=expected))
            # A 412 answers with the value the node holds: a read within the same interval.
            self.record(namespace, Op(self.process, "read", key, invoked, completed, True, result=response.json()))
        else:
            self.record(namespace, Op(self.process, "cas", key, invoked, None, None, value=value, expected=expected))


class Presence:
    """Realtime connections that each register an onDisconnect (an increment of their own counter) and go
    away after a moment, dropped by the client or with their node: each must run exactly once, by their
    node or, when it died or was paused past its lease, by another."""

    def __init__(self, endpoints: list[str], namespace: str, clock):
        self.endpoints, self.namespace, self.clock = endpoints, namespace, clock
        self.registered: set[str] = set()  # acknowledged: must run exactly once
        self.seen: dict[str, str] = {}  # where and when each went, for a failure's message
        self.unknown: set[str] = set()  # sent, answer lost: at most once
        self.rng = random.Random(35)

    def run(self, stop: threading.Event):
        number = 0
        while not stop.is_set():
            number += 1
            name = f"c{number}"
            endpoint = self.rng.choice(self.endpoints)
            try:
                socket = websocket.create_connection(
                    endpoint.replace("http://", "ws://") + f"/.ws?v=5&ns={self.namespace}", timeout=TIMEOUT)
            except (websocket.WebSocketException, OSError):
                stop.wait(0.2)
                continue
            try:
                socket.recv()  # the handshake
                socket.send(json.dumps({"t": "d", "d": {"r": 1, "a": "o", "b": {"p": f"/runs/{name}", "d": {".sv": {"increment": 1}}}}}))
                self.unknown.add(name)
                while True:
                    message = json.loads(socket.recv())
                    if isinstance(message, dict) and message.get("t") == "d" and message["d"].get("r") == 1:
                        if message["d"]["b"].get("s") == "ok":
                            self.unknown.discard(name)
                            self.registered.add(name)
                        break
                stop.wait(self.rng.uniform(0.2, 3))
            except (websocket.WebSocketException, OSError, ValueError):
                pass
            finally:
                self.seen[name] = f"{endpoint} {self.clock():.2f}"
                # Gone without a goodbye, as an app that loses its network.
                try:
                    socket.sock.shutdown(2)
                except (OSError, AttributeError):
                    pass
                socket.close()


@pytest.fixture(scope="module")
def faulty_cluster(hearth_binary, tmp_path_factory):
    if os.environ.get("HEARTH_SKIP_POSTGRES") == "1":
        pytest.skip("HEARTH_SKIP_POSTGRES=1: the cluster fault tests need PostgreSQL")
    cluster = FaultyCluster(hearth_binary, tmp_path_factory)
    yield cluster
    cluster.stop()


def test_histories_under_faults_are_linearizable(faulty_cluster):
    cluster = faulty_cluster
    namespaces = [f"lin-{uuid.uuid4().hex[:8]}" for _ in range((HISTORIES + KEYS_PER_NAMESPACE - 1) // KEYS_PER_NAMESPACE)]
    registers = [(namespace, f"k{index}") for namespace in namespaces for index in range(KEYS_PER_NAMESPACE)][:HISTORIES]
    history = {register: [] for register in registers}
    lock = threading.Lock()
    start = time.monotonic()
    clock = lambda: time.monotonic() - start  # noqa: E731
    endpoints = cluster.endpoints()
    clients = [Client(process, endpoints[process % len(endpoints)], registers, history, lock, clock) for process in range(12)]
    stop = threading.Event()
    nemesis = Nemesis(cluster, seed=int(os.environ.get("HEARTH_FAULT_SEED", "1")), clock=clock)
    threads = [threading.Thread(target=client.run, args=(stop, OPERATIONS)) for client in clients]
    nemesis_thread = threading.Thread(target=nemesis.run)
    presence = Presence(endpoints, f"od-{uuid.uuid4().hex[:8]}", clock)
    presence_thread = threading.Thread(target=presence.run, args=(stop,))
    nemesis_thread.start()
    presence_thread.start()
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + float(os.environ.get("HEARTH_FAULT_SECONDS", "600"))
    for thread in threads:
        thread.join(max(0, deadline - time.monotonic()))
    stop.set()
    nemesis.stop.set()
    nemesis_thread.join(60)
    presence_thread.join(60)
    for thread in threads:
        thread.join(60)
    cluster.heal()

    # Then every key read back through every node, once they answer: the end of each history.
    for namespace, key in registers:
        for endpoint in endpoints:
            deadline = time.monotonic() + 120
            while True:
                invoked = clock()
                try:
                    response = requests.get(f"{endpoint}/reg/{key}.json?ns={namespace}", timeout=TIMEOUT)
                    if response.status_code == 200:
                        history[(namespace, key)].append(Op(99, "read", key, invoked, clock(), True, result=response.json()))
                        break
                except requests.RequestException:
                    pass
                assert time.monotonic() < deadline, f"{endpoint} did not answer after the faults; the last faults: {nemesis.done[-5:]}; nodes' logs in {ARTIFACTS}"
                time.sleep(0.2)

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "faults.txt").write_text("\n".join(nemesis.timeline) + "\n")
    # Every onDisconnect acknowledged ran exactly once; none sent ran twice. Once the ledger in PostgreSQL
    # is empty, nothing is left to run (a dead node's operations stay there until a write runs them).
    deadline = time.monotonic() + 60
    while cluster.postgres.sql("SELECT count(*) FROM hearth_ondisconnect") != "0":
        assert time.monotonic() < deadline, "onDisconnect operations were left in the ledger 60 s after the faults"
        time.sleep(0.2)
    for endpoint in endpoints:
        runs = requests.get(f"{endpoint}/runs.json?ns={presence.namespace}", timeout=TIMEOUT).json() or {}
        missing = sorted(name for name in presence.registered if runs.get(name) != 1)
        twice = sorted(name for name, count in runs.items() if count != 1)
        assert not missing and not twice, (
            f"onDisconnect through {endpoint}: {len(presence.registered)} acknowledged; not run exactly once: "
            f"{[(name, runs.get(name), presence.seen.get(name)) for name in missing[:10]]}; "
            f"run more than once: {[(name, runs[name], presence.seen.get(name)) for name in twice[:10]]}")

    # An ID token made by the node whose clock is ahead is taken by the one behind, 50 s apart.
    signup = requests.post(f"{endpoints[2]}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=faults", timeout=TIMEOUT,
                           json={"email": f"skew-{uuid.uuid4().hex[:6]}@example.com", "password": "skewed-clocks", "returnSecureToken": True})
    assert signup.status_code == 200, signup.text
    for endpoint in endpoints:
        read = requests.get(f"{endpoint}/reg.json?ns={namespaces[0]}&auth={signup.json()['idToken']}", timeout=TIMEOUT)
        assert read.status_code == 200, f"{endpoint}: a token from the node 25 s ahead: {read.status_code} {read.text}"

    counts = [len(ops) for ops in history.values()]
    unknown = sum(1 for ops in history.values() for op in ops if op.ok is None)
    print(f"\nclocks: {', '.join(f'{name} {offset}' for name, offset in CLOCKS.items() if offset)}; "
          f"{len(registers)} histories ({len(namespaces)} namespaces), {sum(counts)} operations ({min(counts)}–{max(counts)} each, {unknown} without an answer); "
          f"faults: {len(nemesis.done)} ({', '.join(sorted(set(f.split(' ')[0] for f in nemesis.done)))}); "
          f"realtime puts: {', '.join(f'{sum(c.realtime_outcomes[k] for c in clients)} {k}' for k in ('ok', 'datastale', 'unknown'))}; "
          f"onDisconnects: {len(presence.registered)} acknowledged, {len(presence.unknown)} unanswered, each run once")
    failures = []
    for (namespace, key), ops in history.items():
        try:
            verdict = check(ops)
        except RuntimeError as error:  # the search's budget: kept for a look, and a failure
            save(ops, ARTIFACTS / f"{namespace}-{key}.unchecked.json")
            failures.append(f"{namespace}/{key} ({len(ops)} operations) could not be checked: {error}")
            continue
        if not verdict.linearizable:
            save(ops, ARTIFACTS / f"{namespace}-{key}.json")
            small = minimise(ops)
            save(small, ARTIFACTS / f"{namespace}-{key}.minimal.json")
            failures.append(f"{namespace}/{key} ({len(ops)} operations, minimal {len(small)}):\n{verdict.explain()}\n"
                            + "minimal:\n" + "\n".join("  " + op.describe() for op in small))
    assert not failures, f"{len(failures)} of {len(registers)} histories are not linearizable; faults: {nemesis.done}\n" + "\n\n".join(failures[:3])
    assert min(counts) >= OPERATIONS, f"histories too short within the time: {counts}"
