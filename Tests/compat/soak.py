"""`make soak`: mixed load on the real server for an hour, sampled each minute (docs/reliability.md).

One node (`hearth serve` on SQLite), or with `--cluster` two `hearth serve --storage` nodes on Debian's
PostgreSQL behind nginx, under at once: REST writes as signed-in users through security rules, REST
reads and queries, SSE streams, realtime connections that listen and write, Auth sign-ins and token
refreshes, and every five minutes (`--storm-seconds`) a reconnect storm (every realtime connection and stream dropped and
opened again at once). The data stays the same size (writes cycle over fixed keys), so memory should
not grow once warm.

Each minute, per server process: resident memory, open file descriptors, threads, and the 99th
percentile of REST and realtime write latency in that minute. At the end: the growth of each over the
last half of the run (target: at most 5 %), the errors (target: none), and whether every acknowledged
write is what the server holds and every listener's view is the server's. Written to OUT/samples.csv,
OUT/soak.svg (the plots) and OUT/summary.json; the last line printed is one JSON object.

    python Tests/compat/soak.py --minutes 60 [--cluster] [--out DIR]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests
import websocket

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import start_hearth  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KEY = "soak-api-key"
NS = "soak"
USERS = 20
KEYS_PER_USER = 50
FEED_KEYS = 200
RULES = {"rules": {
    "users": {"$uid": {".read": "auth != null", ".write": "auth != null && auth.uid === $uid",
                       "$key": {".validate": "newData.hasChildren(['n', 'at'])"}}},
    "feed": {".read": True, ".write": True, ".indexOn": ["at"]},
}}


class Stats:
    """What the workers did, shared: latencies of the current minute, errors, and what was acknowledged."""

    def __init__(self):
        self.lock = threading.Lock()
        self.latencies = {"rest": [], "realtime": []}
        self.errors: list[str] = []
        self.counts = {"rest writes": 0, "rest reads": 0, "realtime writes": 0, "sse events": 0, "realtime pushes": 0,
                       "sign-ins": 0, "refreshes": 0, "storms": 0}
        self.acknowledged: dict[str, object] = {}  # path -> last acknowledged value, per writer's own keys

    def latency(self, kind: str, seconds: float):
        with self.lock:
            self.latencies[kind].append(seconds)

    def count(self, what: str, n: int = 1):
        with self.lock:
            self.counts[what] += n

    def error(self, what: str):
        with self.lock:
            if len(self.errors) < 1000:
                self.errors.append(f"{time.strftime('%H:%M:%S')} {what}")
            if len(self.errors) <= 20:
                # As it happens, so that a run's log says when (and beside what) it failed.
                print(f"         error: {self.errors[-1]}", flush=True)

    def take_latencies(self) -> dict[str, list[float]]:
        with self.lock:
            taken, self.latencies = self.latencies, {"rest": [], "realtime": []}
        return taken


def percentile(values: list[float], fraction: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class Deployment:
    """The server(s) under load and where clients go."""

    def __init__(self, binary: str, cluster: bool, work: Path):
        self.processes = []
        self.cleanups = []
        if cluster:
            from nginx_support import Balancer
            from postgres_support import TemporaryPostgres
            postgres = TemporaryPostgres()
            self.cleanups.append(postgres.destroy)
            ports = []
            for name in "ab":
                process, port = start_hearth(binary, "--emulator", "--storage", postgres.url, "--data", str(work / name),
                                             "--node", name, "--project", "demo-soak")
                self.processes.append(process)
                ports.append(port)
            balancer = Balancer(ports)
            self.cleanups.insert(0, balancer.stop)
            self.url = balancer.url
            self.node_urls = [f"http://127.0.0.1:{port}" for port in ports]
        else:
            process, port = start_hearth(binary, "--emulator", "--data", str(work / "data"), "--project", "demo-soak")
            self.processes.append(process)
            self.url = f"http://127.0.0.1:{port}"
            self.node_urls = [self.url]
        for process in self.processes:
            assert process.poll() is None, process.stderr.read()
            # Its output is read as it comes: a full pipe would stop it.
            for stream in (process.stdout, process.stderr):
                threading.Thread(target=lambda s=stream: [None for _ in s], daemon=True).start()

    def stop(self):
        # Every step is tried, whatever the one before did: a server that does not stop in time is
        # killed, and nginx and PostgreSQL are stopped anyway.
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for cleanup in self.cleanups:
            try:
                cleanup()
            except Exception as error:  # the others still run
                print(f"soak: cleanup failed: {error}", file=sys.stderr)


def sample(process, url: str) -> dict:
    pid = process.pid
    status = Path(f"/proc/{pid}/status").read_text()
    def kilobytes(field: str) -> int:
        return next(int(line.split()[1]) for line in status.splitlines() if line.startswith(field)) * 1024

    # Resident memory is mostly the libraries' pages (file-backed, shared): the process's own is the anonymous part.
    rss, anon = kilobytes("VmRSS:"), kilobytes("RssAnon:")
    # What the allocator has handed out: resident memory growing while this stays flat is freed pages kept.
    metrics = requests.get(f"{url}/metrics", headers={"Authorization": "Bearer owner"}, timeout=30).text
    heap = next((int(float(line.split()[1])) for line in metrics.splitlines() if line.startswith("hearth_heap_bytes ")), None)
    # Threads by name, so that a change in their number says which (a pool growing, a thread started).
    names = collections.Counter()
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            names[Path(f"/proc/{pid}/task/{task}/comm").read_text().strip().replace(",", " ").replace(";", " ")] += 1
        except OSError:
            pass  # the thread ended while listed
    return {"rss": rss, "anon": anon, "heap": heap, "fds": len(os.listdir(f"/proc/{pid}/fd")), "threads": len(os.listdir(f"/proc/{pid}/task")),
            "thread names": ";".join(f"{name}x{count}" for name, count in sorted(names.items()))}


def thread_change(before: str, after: str) -> str:
    """What differs between two samples' thread names ("NAMExCOUNT;…"), as "+NAME -NAME …"."""
    def parse(names: str) -> collections.Counter:
        counted = collections.Counter()
        for item in filter(None, names.split(";")):
            name, _, count = item.rpartition("x")
            counted[name] += int(count)
        return counted
    old, new = parse(before), parse(after)
    return " ".join([f"+{name}" for name in sorted((new - old).elements())] + [f"-{name}" for name in sorted((old - new).elements())])


class Users:
    """Accounts made at the start (sign-ups are rate-limited per address), then signed in and refreshed."""

    def __init__(self, url: str, stats: Stats):
        self.url, self.stats = url, stats
        self.session = requests.Session()
        self.accounts = []
        for index in range(USERS):
            answer = self.session.post(f"{url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key={KEY}", json={
                "email": f"soak{index}-{os.getpid()}@example.com", "password": "soak-secret", "returnSecureToken": True}, timeout=30)
            answer.raise_for_status()
            body = answer.json()
            self.accounts.append({"uid": body["localId"], "email": f"soak{index}-{os.getpid()}@example.com",
                                  "id": body["idToken"], "refresh": body["refreshToken"]})
        self.lock = threading.Lock()

    def token(self, index: int) -> tuple[str, str]:
        with self.lock:
            account = self.accounts[index]
            return account["uid"], account["id"]

    def run(self, stop: threading.Event):
        rng = random.Random(7)
        while not stop.wait(0.5):
            index = rng.randrange(USERS)
            account = self.accounts[index]
            try:
                if rng.random() < 0.5:
                    answer = self.session.post(f"{self.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key={KEY}",
                                               json={"email": account["email"], "password": "soak-secret", "returnSecureToken": True}, timeout=30)
                    answer.raise_for_status()
                    with self.lock:
                        account["id"], account["refresh"] = answer.json()["idToken"], answer.json()["refreshToken"]
                    self.stats.count("sign-ins")
                else:
                    answer = self.session.post(f"{self.url}/securetoken.googleapis.com/v1/token?key={KEY}",
                                               data={"grant_type": "refresh_token", "refresh_token": account["refresh"]}, timeout=30)
                    answer.raise_for_status()
                    with self.lock:
                        account["id"], account["refresh"] = answer.json()["id_token"], answer.json()["refresh_token"]
                    self.stats.count("refreshes")
            except Exception as error:  # noqa: BLE001 (every failure is counted and reported)
                self.stats.error(f"auth: {error}")


def rest_writer(url: str, users: Users, stats: Stats, stop: threading.Event, seed: int):
    rng = random.Random(seed)
    session = requests.Session()
    n = 0
    while not stop.wait(0.02):
        index = rng.randrange(USERS)
        uid, token = users.token(index)
        n += 1
        # Each writer its own keys: with two on one key, which answer came last says nothing of which
        # write the server stored last.
        path = f"users/{uid}/w{seed}k{rng.randrange(KEYS_PER_USER)}"
        value = {"n": n * 1000 + seed, "at": int(time.time() * 1000)}
        began = time.monotonic()
        try:
            answer = session.put(f"{url}/{path}.json?ns={NS}&auth={token}", json=value, timeout=30)
            if answer.status_code != 200:
                stats.error(f"REST write {answer.status_code}: {answer.text[:200]}")
                continue
        except requests.RequestException as error:
            stats.error(f"REST write: {error}")
            continue
        stats.latency("rest", time.monotonic() - began)
        stats.count("rest writes")
        with stats.lock:
            stats.acknowledged[path] = value


def rest_reader(url: str, stats: Stats, stop: threading.Event):
    session = requests.Session()
    while not stop.wait(0.05):
        try:
            answer = session.get(f'{url}/feed.json?ns={NS}&orderBy="at"&limitToLast=20', timeout=30)
            if answer.status_code != 200:
                stats.error(f"REST query {answer.status_code}: {answer.text[:200]}")
                continue
            stats.count("rest reads")
        except requests.RequestException as error:
            stats.error(f"REST query: {error}")


class Listener:
    """A realtime connection listening to the feed and writing its own slot of it; dropped by storms."""

    def __init__(self, url: str, index: int, stats: Stats):
        self.ws_url = url.replace("http://", "ws://") + f"/.ws?v=5&ns={NS}"
        self.index, self.stats = index, stats
        self.view: dict = {}
        self.storm = threading.Event()

    def receive(self, ws, waiting_for: int | None):
        text = ws.recv()
        if text.isdigit():
            text = "".join(ws.recv() for _ in range(int(text)))
        message = json.loads(text)
        data = message.get("d", {})
        if message.get("t") == "d" and data.get("a") in ("d", "m"):
            self.stats.count("realtime pushes")
            body = data["b"]
            path = [part for part in body["p"].split("/") if part]
            if path[:1] == ["feed"]:
                self.apply(path[1:], body["d"], merge=data["a"] == "m")
        return message if message.get("t") == "d" and data.get("r") == waiting_for else None

    def apply(self, path, value, merge):
        if not path:
            if merge:
                for key, child in value.items():
                    self.set([key], child)
            else:
                self.view = value if isinstance(value, dict) else {}
            return
        if merge:
            for key, child in value.items():
                self.set(path + [key], child)
        else:
            self.set(path, value)

    def set(self, path, value):
        # The feed is two levels at most: feed/<key> = {n, at}, or feed/<key>/<field>.
        if len(path) == 1:
            if value is None:
                self.view.pop(path[0], None)
            else:
                self.view[path[0]] = value
        else:
            entry = self.view.setdefault(path[0], {})
            if value is None:
                entry.pop(path[1], None)
            else:
                entry[path[1]] = value

    def run(self, stop: threading.Event):
        rng = random.Random(self.index)
        n = 0
        while not stop.is_set():
            try:
                ws = websocket.create_connection(self.ws_url, timeout=30)
                ws.recv()  # the handshake
                r = 1
                ws.send(json.dumps({"t": "d", "d": {"r": r, "a": "q", "b": {"p": "/feed", "h": ""}}}))
                while self.receive(ws, r) is None:
                    pass
                self.storm.clear()
                while not stop.is_set() and not self.storm.is_set():
                    r += 1
                    n += 1
                    key = f"f{rng.randrange(FEED_KEYS)}"
                    began = time.monotonic()
                    ws.send(json.dumps({"t": "d", "d": {"r": r, "a": "p", "b": {"p": f"/feed/{key}", "d": {"n": n, "at": int(time.time() * 1000)}}}}))
                    while (answer := self.receive(ws, r)) is None:
                        pass
                    if answer["d"]["b"].get("s") != "ok":
                        self.stats.error(f"realtime write: {answer['d']['b']}")
                    else:
                        self.stats.latency("realtime", time.monotonic() - began)
                        self.stats.count("realtime writes")
                    stop.wait(rng.uniform(0.1, 0.4))
                ws.close()
            except (websocket.WebSocketException, OSError) as error:
                if not stop.is_set():
                    self.stats.error(f"realtime: {error}")
                    stop.wait(1)

    def settle(self, seconds: float = 5):
        """After the writers stop: keeps reading pushes for a moment on a fresh connection so the view
        converges (the run's connection is closed by then)."""
        ws = websocket.create_connection(self.ws_url, timeout=30)
        ws.recv()
        ws.send(json.dumps({"t": "d", "d": {"r": 1, "a": "q", "b": {"p": "/feed", "h": ""}}}))
        while self.receive(ws, 1) is None:
            pass
        ws.close()


class Stream:
    """An SSE stream of the feed, counting events; dropped by storms and opened again."""

    def __init__(self, url: str, stats: Stats):
        self.url, self.stats = url, stats
        self.response = None

    def run(self, stop: threading.Event):
        while not stop.is_set():
            try:
                with requests.get(f"{self.url}/feed.json?ns={NS}", headers={"Accept": "text/event-stream"}, stream=True, timeout=(10, 120)) as response:
                    self.response = response
                    for line in response.iter_lines():
                        if stop.is_set():
                            break
                        if line.startswith(b"event: put") or line.startswith(b"event: patch"):
                            self.stats.count("sse events")
            except (requests.RequestException, AttributeError, ValueError):
                pass  # closed by a storm, or at the end
            stop.wait(0.2)

    def drop(self):
        response = self.response
        if response is not None:
            try:
                response.raw._fp.fp.raw._sock.shutdown(2)  # noqa: SLF001 (drop the socket itself, as a network would)
            except Exception:  # noqa: BLE001
                response.close()


def plot(samples: list[dict], names: list[str], out: Path, title: str):
    """The run as small line charts, one per measure, a line per server process: hand-drawn SVG."""
    measures = [("rss", "resident memory (MB)", 1 / (1 << 20)), ("anon", "resident, anonymous (MB)", 1 / (1 << 20)),
                ("heap", "heap in use (MB)", 1 / (1 << 20)), ("fds", "open file descriptors", 1), ("threads", "threads", 1),
                ("rest_p99", "REST write p99 (ms)", 1000), ("realtime_p99", "realtime write p99 (ms)", 1000)]
    width, height, pad = 420, 150, 40
    colours = ["#d9480f", "#1864ab", "#2b8a3e"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * 2 + 20}" height="{(height + 30) * ((len(measures) + 1) // 2) + 30}" font-family="sans-serif" font-size="11">',
             f'<text x="10" y="18" font-size="13">{title}</text>']
    minutes = [s["minute"] for s in samples] or [0]
    for chart, (key, label, scale) in enumerate(measures):
        x0, y0 = 10 + (chart % 2) * (width + 10), 30 + (chart // 2) * (height + 30)
        series = {}
        for s in samples:
            for name in names:
                value = s.get(f"{name}.{key}", s.get(key) if name == names[0] else None)
                if value is not None:
                    series.setdefault(name if f"{name}.{key}" in s else "all", []).append((s["minute"], value * scale))
        values = [v for points in series.values() for _, v in points] or [0]
        top = max(values) * 1.1 or 1
        parts.append(f'<text x="{x0}" y="{y0 + 12}">{label} (0–{top:.0f})</text>')
        parts.append(f'<rect x="{x0 + pad}" y="{y0 + 18}" width="{width - pad - 10}" height="{height - 40}" fill="none" stroke="#ccc"/>')
        span = max(1, max(minutes))
        for index, (name, points) in enumerate(series.items()):
            coordinates = " ".join(f"{x0 + pad + (m / span) * (width - pad - 10):.1f},{y0 + 18 + (height - 40) * (1 - v / top):.1f}" for m, v in points)
            parts.append(f'<polyline points="{coordinates}" fill="none" stroke="{colours[index % 3]}" stroke-width="1.5"/>')
            parts.append(f'<text x="{x0 + pad + 5 + 60 * index}" y="{y0 + height - 8}" fill="{colours[index % 3]}">{name}</text>')
        parts.append(f'<text x="{x0 + width - 70}" y="{y0 + height - 8}">{span} min</text>')
    parts.append("</svg>")
    out.write_text("\n".join(parts))


COUNTS = ("fds", "threads")


def windows(values: list) -> tuple[list, list]:
    """Ten samples around the middle of the run and the last ten (fewer in a short run): in an hour, minutes
    25-35 against 50-60, two reconnect storms in each, so that the storms' swings fall in both."""
    width = min(10, len(values) // 6)
    return values[len(values) // 2 - width // 2:][:width], values[len(values) - width:]


def growth(samples: list[dict], key: str) -> float:
    """Growth over the last half of the run, in %: the median of the last window against the middle's. A
    window, not a minute: a minute's p99 moves by a third from one minute to the next."""
    values = [s[key] for s in samples if s.get(key) is not None]
    if len(values) < 12:
        return 0.0
    middle, end = (statistics.median(window) for window in windows(values))
    return 100.0 * (end - middle) / middle if middle else 0.0


def judged(samples: list[dict], key: str) -> float:
    """The growth the verdict holds against 5 %. Descriptors and threads are whole numbers: one thread is
    7.7 % of 13, so for them a change of at most one counts as none (a leak shows as more than one)."""
    values = [s[key] for s in samples if s.get(key) is not None]
    if key.split(".")[-1] in COUNTS and len(values) >= 12:
        middle, end = (statistics.median(window) for window in windows(values))
        if abs(end - middle) <= 1:
            return 0.0
    return growth(samples, key)


def judged_measures(names: list[str]) -> list[str]:
    """Each process's resident memory and threads, and the descriptors of all of them together: in a cluster
    the long-lived connections land on one node or the other after each reconnect storm (one node's count
    swings 33-41 while the two nodes' total holds at 72-78), so a node's own count says where clients went."""
    return [f"{name}.{key}" for name in names for key in ("rss", "threads")] + ["all.fds"]


def interrupt(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main() -> int:
    # Stopped by Ctrl-C, `kill -INT` or `kill`, it stops its servers, nginx and PostgreSQL first. A shell
    # that starts it in the background hands it SIGINT ignored, and Python then leaves it so: the handlers
    # are set here, whatever it was given.
    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--sample-seconds", type=float, default=60)
    parser.add_argument("--storm-seconds", type=float, default=300, help="between reconnect storms")
    parser.add_argument("--cluster", action="store_true")
    parser.add_argument("--ballast-mb", type=int, default=None,
                        help="data the namespace holds before the load starts (default: 96 on one node, none on a cluster)")
    parser.add_argument("--out", type=Path)
    arguments = parser.parse_args()
    binary = os.environ.get("HEARTH_BINARY", str(ROOT / ".build" / "debug" / "hearth"))
    kind = "cluster" if arguments.cluster else "single"
    out = arguments.out or ROOT / ".build" / "soak" / kind
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"hearth-soak-{kind}-"))
    deployment = Deployment(binary, arguments.cluster, work)
    stats = Stats()
    stop = threading.Event()
    try:
        requests.put(f"{deployment.url}/.settings/rules.json?ns={NS}", data=json.dumps(RULES),
                     headers={"Authorization": "Bearer owner"}, timeout=30).raise_for_status()
        # One node's SQLite keeps a page cache of 64 MB per namespace, filled as the file grows (the change
        # feed adds ~2 MB a minute): from an empty namespace that takes half an hour of the load, and the
        # growth it shows is the cache filling, not a leak. A namespace that already holds more than that,
        # as a production one does, starts with it full. PostgreSQL's nodes keep no such cache.
        ballast = arguments.ballast_mb if arguments.ballast_mb is not None else (0 if arguments.cluster else 96)
        if ballast:
            began = time.monotonic()
            items = {f"b{index}": "x" * 1000 for index in range(ballast * 1000)}
            requests.put(f"{deployment.url}/ballast.json?ns={NS}", data=json.dumps(items),
                         headers={"Authorization": "Bearer owner"}, timeout=600).raise_for_status()
            print(f"ballast: {ballast} MB written in {time.monotonic() - began:.1f} s", flush=True)
        users = Users(deployment.url, stats)
        listeners = [Listener(deployment.url, index, stats) for index in range(10)]
        streams = [Stream(deployment.url, stats) for _ in range(5)]
        workers = [threading.Thread(target=users.run, args=(stop,))]
        workers += [threading.Thread(target=rest_writer, args=(deployment.url, users, stats, stop, seed)) for seed in range(3)]
        workers += [threading.Thread(target=rest_reader, args=(deployment.url, stats, stop))]
        workers += [threading.Thread(target=listener.run, args=(stop,)) for listener in listeners]
        workers += [threading.Thread(target=stream.run, args=(stop,)) for stream in streams]
        for worker in workers:
            worker.start()
        names = [f"node {name}" for name in "ab"][:len(deployment.processes)] if arguments.cluster else ["server"]
        samples = []
        began = time.monotonic()
        next_storm = began + arguments.storm_seconds
        columns = None
        with open(out / "samples.csv", "w") as csv:
            while (elapsed := time.monotonic() - began) < arguments.minutes * 60:
                stop.wait(min(arguments.sample_seconds, max(0.1, arguments.minutes * 60 - elapsed)))
                if time.monotonic() >= next_storm:
                    next_storm += arguments.storm_seconds
                    stats.count("storms")
                    for listener in listeners:
                        listener.storm.set()
                    for stream in streams:
                        stream.drop()
                latencies = stats.take_latencies()
                row = {"minute": round((time.monotonic() - began) / 60, 2),
                       "rest_p99": percentile(latencies["rest"], 0.99), "realtime_p99": percentile(latencies["realtime"], 0.99),
                       "rest_writes": len(latencies["rest"]), "errors": len(stats.errors)}
                for name, process, node_url in zip(names, deployment.processes, deployment.node_urls):
                    for key, value in sample(process, node_url).items():
                        row[f"{name}.{key}"] = value
                row["all.fds"] = sum(row[f"{name}.fds"] for name in names)
                if samples:
                    for name in names:
                        change = thread_change(samples[-1][f"{name}.thread names"], row[f"{name}.thread names"])
                        if change:
                            print(f"         {name} threads {samples[-1][f'{name}.threads']} -> {row[f'{name}.threads']}: {change}", flush=True)
                samples.append(row)
                if columns is None:
                    columns = list(row)
                    csv.write(",".join(columns) + "\n")
                csv.write(",".join("" if row.get(c) is None else str(row[c]) for c in columns) + "\n")
                csv.flush()
                shown = "  ".join(f"{name}: {row[f'{name}.rss'] >> 20} MB (anon {row[f'{name}.anon'] >> 20}, heap {(row[f'{name}.heap'] or 0) >> 20}), {row[f'{name}.fds']} fds, {row[f'{name}.threads']} threads" for name in names)
                p99 = f"{row['rest_p99'] * 1000:.1f}" if row["rest_p99"] is not None else "-"
                print(f"{row['minute']:6.2f} min  {shown}  REST p99 {p99} ms  ({row['rest_writes']} writes)  errors {row['errors']}", flush=True)
        stop.set()
        for worker in workers:
            worker.join(60)

        # Nothing lost: every acknowledged write is what the server holds (through every node).
        lost = []
        for node in deployment.node_urls:
            held = requests.get(f"{node}/users.json?ns={NS}", headers={"Authorization": "Bearer owner"}, timeout=60).json() or {}
            for path, value in stats.acknowledged.items():
                _, uid, key = path.split("/")
                if held.get(uid, {}).get(key) != value:
                    lost.append((node, path, value, held.get(uid, {}).get(key)))
        # Every listener's view converges to the server's feed.
        feed = requests.get(f"{deployment.url}/feed.json?ns={NS}", timeout=60).json() or {}
        diverged = []
        for listener in listeners:
            listener.settle()
            if listener.view != feed:
                diverged.append(listener.index)
        summary = {"kind": kind, "minutes": arguments.minutes, "counts": stats.counts, "errors": stats.errors[:20],
                   "error count": len(stats.errors), "lost": lost[:20], "listeners diverged": diverged,
                   "growth %": {f"{name}.{key}": round(growth(samples, f"{name}.{key}"), 2) for name in names for key in ("rss", "anon", "heap", "fds", "threads")}}
        for key in ("all.fds", "rest_p99"):
            summary["growth %"][key] = round(growth(samples, key), 2)
        summary["judged %"] = {key: round(judged(samples, key), 2) for key in judged_measures(names)}
        if len(samples) >= 2:
            summary["threads, middle to end"] = {name: thread_change(samples[len(samples) // 2][f"{name}.thread names"], samples[-1][f"{name}.thread names"])
                                                 for name in names}
        (out / "summary.json").write_text(json.dumps(summary, indent=1))
        plot(samples, names, out / "soak.svg", f"hearth soak, {kind}, {arguments.minutes:g} min")
        print(json.dumps(summary["counts"]))
        if stats.errors:
            print("errors:", *stats.errors[:10], sep="\n  ")
        # The target is on resident memory, descriptors and threads; the anonymous part and the heap say where
        # growth comes from (small bases make their percentages jumpy).
        worst = max(summary["judged %"].values(), default=0.0)
        print(json.dumps({"scenario": f"soak.{kind}", "metric": "growth.last-half.max", "value": worst, "unit": "%",
                          "reference": "target", "referenceValue": 5.0, "ratio": round(worst / 5.0, 3),
                          "errors": len(stats.errors), "lost": len(lost), "listenersDiverged": len(diverged)}))
        return 0 if not stats.errors and not lost and not diverged and worst <= 5.0 else 1
    finally:
        stop.set()
        deployment.stop()


if __name__ == "__main__":
    sys.exit(main())
