"""HearthClient on a bad network, killed at random moments (docs/reliability.md, "The Swift SDK on a bad
network"). The probe app (Sources/HearthClientProbe, `churn`) writes every 2 ms with persistence on, each write
an update that adds one to `count` and sets a key of its own, and now and then runs a transaction on `tx`; its
link to the server goes through the fault proxy, which a nemesis keeps switching between passing, slow, silent
(blackholed) and reset; and the app is SIGKILLed at a random moment and started again, CHURN_ROUNDS times
(`HEARTH_CLIENT_CHURN_ROUNDS`, 1,000 for the record in reliability.md).

Afterwards every write the app had saved is on the server, and each once: `count` (one increment per write)
equals the number of keys, so no write was applied twice, although the server saw writes sent again after it had
applied them (`hearth_writes_resent_total`); the transaction counter is at most the transactions started and at
least those reported committed; and a listener on `count` converges to the server's value. The same again in
front of a cluster, where each reconnect may land on another node (CLUSTER_CHURN_ROUNDS,
`HEARTH_CLIENT_CLUSTER_CHURN_ROUNDS`)."""

import os
import random
import re
import subprocess
import threading

import pytest
import requests

from conftest import start_hearth
from fault_proxy import FaultProxy
from nginx_support import Balancer
from postgres_support import TemporaryPostgres
from test_cluster import Node as ClusterNode
from test_realtime import Client

NS = "churn"
OWNER = {"Authorization": "Bearer owner"}
CHURN_ROUNDS = int(os.environ.get("HEARTH_CLIENT_CHURN_ROUNDS", "200"))
# In front of a cluster (three nodes on PostgreSQL behind nginx): fewer, each slower to start.
CLUSTER_CHURN_ROUNDS = int(os.environ.get("HEARTH_CLIENT_CLUSTER_CHURN_ROUNDS", "100"))
# A kill comes this long after the app starts, at most: some before it has connected, most while it writes.
KILL_AFTER_MAX_SECONDS = 0.4


def nemesis(proxy: FaultProxy, rng: random.Random, stop: threading.Event, log: list[str]):
    """Switches the link every 50-400 ms: mostly passing, sometimes slow, silent, or reset."""
    while not stop.is_set():
        roll = rng.random()
        if roll < 0.45:
            proxy.heal()
            log.append("heal")
        elif roll < 0.65:
            proxy.delay(rng.uniform(0.01, 0.15))
            log.append("delay")
        elif roll < 0.85:
            proxy.heal()
            proxy.reset_connections()
            log.append("reset")
        else:
            proxy.blackhole()
            log.append("blackhole")
        stop.wait(rng.uniform(0.05, 0.4))
    proxy.heal()


def run_probe(probe, *arguments, cache, timeout=None, kill_after=None):
    """Runs the probe app; with `kill_after`, SIGKILLs it that many seconds after it started. Returns its output."""
    app = subprocess.Popen([str(probe), *arguments], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, env={**os.environ, "HEARTH_CLIENT_CACHE_DIR": str(cache)})
    if kill_after is not None:
        # The fault itself, not a wait for something to happen: the moment is meant to be arbitrary.
        try:
            out, _ = app.communicate(timeout=kill_after)
        except subprocess.TimeoutExpired:
            app.kill()
            out, _ = app.communicate()
        return out
    out, _ = app.communicate(timeout=timeout)
    return out


def test_the_swift_sdk_killed_at_random_on_a_faulty_link_applies_every_saved_write_exactly_once(hearth_binary, tmp_path):
    process, port = start_hearth(hearth_binary, "--emulator", "--data", str(tmp_path / "data"), "--project", NS)
    assert process.poll() is None, process.communicate()[1]
    proxy = FaultProxy(port, name="client")
    try:
        churn(hearth_binary, proxy, [f"http://127.0.0.1:{port}"], tmp_path, CHURN_ROUNDS)
    finally:
        proxy.stop()
        process.terminate()
        process.wait(timeout=20)


def test_the_swift_sdk_killed_at_random_in_front_of_a_cluster_applies_every_saved_write_exactly_once(hearth_binary, tmp_path):
    """The same, with the app's link going through nginx to three nodes on PostgreSQL: each reconnect may land on
    another node, which must know the writes the others applied (the write IDs in PostgreSQL's change log)."""
    if os.environ.get("HEARTH_SKIP_POSTGRES") == "1":
        pytest.skip("HEARTH_SKIP_POSTGRES=1: the cluster needs PostgreSQL")
    postgres = TemporaryPostgres()
    nodes = [ClusterNode(hearth_binary, postgres.url, name, tmp_path / f"node-{name}") for name in ("a", "b", "c")]
    balancer = Balancer([node.port for node in nodes])
    proxy = FaultProxy(balancer.port, name="client")
    try:
        churn(hearth_binary, proxy, [node.endpoint.url for node in nodes], tmp_path, CLUSTER_CHURN_ROUNDS)
    finally:
        proxy.stop()
        balancer.stop()
        for node in nodes:
            node.stop()
        postgres.destroy()


def churn(hearth_binary, proxy: FaultProxy, servers: list[str], tmp_path, rounds: int):
    """Runs the probe app `rounds` times through `proxy`, killed at random while the nemesis switches the link;
    then checks on every server (base URLs) that each saved write is there once and a listener converges."""
    probe = hearth_binary.parent / "hearth-client-probe"
    seed = int(os.environ.get("HEARTH_CLIENT_CHURN_SEED", random.randrange(1 << 30)))
    print(f"seed {seed}, {rounds} rounds")
    rng = random.Random(seed)
    url = f"http://127.0.0.1:{proxy.port}?ns={NS}"
    cache = tmp_path / "cache"
    stop, switches = threading.Event(), []
    switching = threading.Thread(target=nemesis, args=(proxy, random.Random(seed + 1), stop, switches), daemon=True)
    saved: set[str] = set()
    started_transactions = committed_transactions = 0
    try:
        switching.start()
        for round_number in range(rounds):
            out = run_probe(probe, "churn", url, str(round_number), cache=cache,
                            kill_after=rng.uniform(0, KILL_AFTER_MAX_SECONDS))
            saved.update(re.findall(r"^w (\S+)$", out, re.MULTILINE))
            started_transactions += out.count("t started")
            committed_transactions += out.count("t committed")
        stop.set()
        switching.join()

        # On a healed link, the next run sends what the last ones left and is acknowledged in order.
        out = run_probe(probe, "sync", url, cache=cache, timeout=120)
        assert "synced" in out, out

        resent = 0
        for server in servers:
            metrics = requests.get(f"{server}/metrics", headers=OWNER, timeout=10).text
            resent += int(float(re.search(r"^hearth_writes_resent_total (\S+)$", metrics, re.MULTILINE).group(1)))
        for server in servers:
            written = requests.get(f"{server}/w.json?ns={NS}", headers=OWNER, timeout=30).json() or {}
            count = requests.get(f"{server}/count.json?ns={NS}", headers=OWNER, timeout=10).json()
            transactions = requests.get(f"{server}/tx.json?ns={NS}", headers=OWNER, timeout=10).json() or 0
            print(f"{server}: {len(saved)} writes saved by the app, {len(written)} on the server, count {count}; "
                  f"{resent} resends of applied writes answered without applying; transactions: "
                  f"{started_transactions} started, {committed_transactions} reported committed, {transactions} applied; "
                  f"link: {', '.join(f'{switches.count(kind)} {kind}' for kind in ('heal', 'delay', 'reset', 'blackhole'))}")
            lost = saved - written.keys()
            assert not lost, f"{len(lost)} saved writes never reached {server}: {sorted(lost)[:10]}"
            assert count == len(written), f"count {count} for {len(written)} writes: some were applied more than once"
            assert committed_transactions <= transactions <= started_transactions
        assert resent > 0, "no write was sent again after it was applied: the faults did not test exactly-once"

        # A listener converges to what the server holds.
        watch = subprocess.Popen([str(probe), "watch", url, "count"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True, env={**os.environ, "HEARTH_CLIENT_CACHE_DIR": str(cache)})
        # A bound for "never": the app is killed, which ends its output.
        deadline = threading.Timer(60, watch.kill)
        deadline.start()
        try:
            for line in watch.stdout:
                if line.strip() == f"value {count}":
                    break
            else:
                raise AssertionError("the listener never showed the server's count")
        finally:
            deadline.cancel()
            watch.kill()
            watch.wait()
    finally:
        stop.set()


def test_a_write_sent_again_with_its_id_is_applied_once_even_after_a_restart(hearth_binary, tmp_path):
    """The protocol under the SDK (docs/protocol.md §2.6.1): a put or merge with a `wid` the namespace applied
    already is acknowledged and not applied again; the IDs are stored with the writes, so a restart remembers
    them; a transaction's compare-and-set sent again is acknowledged, not refused as stale; a bad `wid` is refused."""
    data = str(tmp_path / "data")

    def serve():
        process, port = start_hearth(hearth_binary, "--emulator", "--data", data, "--project", NS)
        assert process.poll() is None, process.communicate()[1]
        return process, Client(type("Endpoint", (), {"host": "127.0.0.1", "port": port})(), ns=NS), port

    increment = {"count": {".sv": {"increment": 1}}}
    process, client, port = serve()
    try:
        for _ in range(3):
            assert client.call("m", {"p": "/", "d": increment, "wid": "run-1"})[1]["s"] == "ok"
        assert client.call("p", {"p": "/other", "d": {".sv": {"increment": 1}}, "wid": "run-2"})[1]["s"] == "ok"
        assert client.call("p", {"p": "/other", "d": {".sv": {"increment": 1}}, "wid": "run-2"})[1]["s"] == "ok"
        # A compare-and-set applied, then sent again with its old hash: acknowledged, not stale.
        cas = {"p": "/tx", "d": 1, "h": "", "wid": "run-3"}
        assert client.call("p", cas)[1]["s"] == "ok"
        assert client.call("p", cas)[1]["s"] == "ok"
        for bad in ["", "a b", "x" * 65, 7]:
            status = client.call("m", {"p": "/", "d": increment, "wid": bad})[1]
            assert status["s"] == "failure" and "write ID" in status["d"], status
        client.close()
    finally:
        process.terminate()
        process.wait(timeout=20)

    process, client, port = serve()
    try:
        assert client.call("m", {"p": "/", "d": increment, "wid": "run-1"})[1]["s"] == "ok"
        assert client.call("m", {"p": "/", "d": increment, "wid": "run-4"})[1]["s"] == "ok"
        state = requests.get(f"http://127.0.0.1:{port}/.json?ns={NS}", headers=OWNER, timeout=10).json()
        assert state == {"count": 2, "other": 1, "tx": 1}, state
        metrics = requests.get(f"http://127.0.0.1:{port}/metrics", headers=OWNER, timeout=10).text
        assert re.search(r"^hearth_writes_resent_total 1$", metrics, re.MULTILINE), "after the restart, one resend"
        client.close()
    finally:
        process.terminate()
        process.wait(timeout=20)
