"""Linearizability of a cluster under faults (docs/reliability.md): three `hearth serve --storage` nodes on
Debian's PostgreSQL behind nginx, every link through a fault proxy (node to PostgreSQL, balancer to node),
clients on every node and on the balancer doing reads, writes and compare-and-sets (REST with ETags) on a
few keys, while a nemesis pauses nodes past their lease, kills and restarts them, cuts a node from
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

from fault_proxy import FaultProxy
from linearizability import Op, check, minimise, save
from nginx_support import Balancer
from postgres_support import TemporaryPostgres
from test_cluster import LEASE_SECONDS, Node

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("HEARTH_ARTIFACTS", ROOT / ".build" / "test-artifacts")) / "faults"
HISTORIES = int(os.environ.get("HEARTH_FAULT_HISTORIES", "12"))
OPERATIONS = int(os.environ.get("HEARTH_FAULT_OPERATIONS", "1000"))
KEYS_PER_NAMESPACE = 5
TIMEOUT = 4.0


class DrainedNode(Node):
    """A node whose standard output and error are read as they come: under faults it logs a line each time
    a namespace's writes start or stop failing, and a full pipe would stop it."""

    def start(self, port: int | None = None):
        super().start(port)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        log = open(ARTIFACTS / f"node-{self.name}.log", "a", buffering=1)  # noqa: SIM115 (closed with the node's output)
        log.write(f"--- started at {time.strftime('%H:%M:%S')}\n")
        for stream in (self.process.stdout, self.process.stderr):
            threading.Thread(target=self._drain, args=(stream, log), daemon=True).start()

    @staticmethod
    def _drain(stream, log):
        for line in stream:
            log.write(line)


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
            self.nodes.append(DrainedNode(binary, url, name, tmp_path_factory.mktemp(f"fault-node-{name}")))
        self.node_proxies = [FaultProxy(node.port, name=f"to-{node.name}") for node in self.nodes]
        self.balancer = Balancer([proxy.port for proxy in self.node_proxies])
        self.lock = threading.Lock()

    def endpoints(self) -> list[str]:
        """Where clients go: each node (through its proxy) and the balancer."""
        return [f"http://127.0.0.1:{proxy.port}" for proxy in self.node_proxies] + [self.balancer.url]

    def heal(self):
        for proxy in self.database_proxies + self.node_proxies:
            proxy.heal()
        for node in self.nodes:
            if node.process.poll() is None:
                os.kill(node.process.pid, signal.SIGCONT)
            else:
                node.start(port=node.port)

    def stop(self):
        self.balancer.stop()
        for node in self.nodes:
            if node.process.poll() is None:
                os.kill(node.process.pid, signal.SIGCONT)
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
        os.kill(node.process.pid, signal.SIGSTOP)
        self.hold(LEASE_SECONDS * 1.5)  # wakes past its lease
        os.kill(node.process.pid, signal.SIGCONT)
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
            kind = self.rng.choices(["read", "write", "cas"], [0.4, 0.3, 0.3])[0]
            getattr(self, kind)(namespace, key)

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
    nemesis_thread.start()
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + float(os.environ.get("HEARTH_FAULT_SECONDS", "600"))
    for thread in threads:
        thread.join(max(0, deadline - time.monotonic()))
    stop.set()
    nemesis.stop.set()
    nemesis_thread.join(60)
    for thread in threads:
        thread.join(60)
    cluster.heal()

    # Then every key read back through every node, once they answer: the end of each history.
    for namespace, key in registers:
        for endpoint in endpoints:
            deadline = time.monotonic() + 60
            while True:
                invoked = clock()
                try:
                    response = requests.get(f"{endpoint}/reg/{key}.json?ns={namespace}", timeout=TIMEOUT)
                    if response.status_code == 200:
                        history[(namespace, key)].append(Op(99, "read", key, invoked, clock(), True, result=response.json()))
                        break
                except requests.RequestException:
                    pass
                assert time.monotonic() < deadline, f"{endpoint} did not answer after the faults"
                time.sleep(0.2)

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "faults.txt").write_text("\n".join(nemesis.timeline) + "\n")
    counts = [len(ops) for ops in history.values()]
    unknown = sum(1 for ops in history.values() for op in ops if op.ok is None)
    print(f"\n{len(registers)} histories ({len(namespaces)} namespaces), {sum(counts)} operations ({min(counts)}–{max(counts)} each, {unknown} without an answer); "
          f"faults: {len(nemesis.done)} ({', '.join(sorted(set(f.split(' ')[0] for f in nemesis.done)))})")
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
