"""Rough realtime measurements with Python clients (client-bound): idle RSS per connection, fan-out, acked writes."""
import json, os, sys, time, threading, socket, statistics
import websocket

host, port = "127.0.0.1", int(sys.argv[1])
pid = int(sys.argv[2])
mode = sys.argv[3]

def rss():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) * 1024

def connect():
    ws = websocket.create_connection(f"ws://{host}:{port}/.ws?v=5&ns=bench", timeout=30)
    ws.recv()
    return ws

def call(ws, r, a, b):
    ws.send(json.dumps({"t":"d","d":{"r":r,"a":a,"b":b}}))

if mode == "idle":
    n = int(sys.argv[4])
    before = rss()
    conns = []
    for i in range(n):
        ws = connect()
        call(ws, 1, "gauth", {"cred": "owner"}); ws.recv()
        call(ws, 2, "q", {"p": f"/idle/{i}", "h": ""}); ws.recv(); ws.recv()
        conns.append(ws)
    time.sleep(1)
    after = rss()
    print(f"ws.idle: {n} connections, RSS {before/1e6:.1f} MB -> {after/1e6:.1f} MB, {(after-before)/n:.0f} bytes/connection")
elif mode == "fanout":
    n = int(sys.argv[4]); writes = int(sys.argv[5])
    listeners = []
    for i in range(n):
        ws = connect()
        call(ws, 1, "q", {"p": "/fan", "h": ""}); ws.recv(); ws.recv()
        listeners.append(ws)
    writer = connect()
    value = "x" * 100
    received = [0]
    lat = []
    def drain(group):
        import selectors
        sel = selectors.DefaultSelector()
        for ws in group: sel.register(ws.sock, selectors.EVENT_READ, ws)
        target = len(group) * writes
        got = 0
        while got < target:
            for key, _ in sel.select(timeout=30):
                key.data.recv(); got += 1
        received[0] += got
    groups = [listeners[i::4] for i in range(4)]
    threads = [threading.Thread(target=drain, args=(g,)) for g in groups]
    start = time.monotonic()
    for t in threads: t.start()
    for i in range(writes):
        call(writer, i + 1, "p", {"p": "/fan", "d": value + str(i)})
        writer.recv()
    for t in threads: t.join()
    elapsed = time.monotonic() - start
    print(f"ws.fanout: {n} listeners x {writes} writes = {received[0]} deliveries in {elapsed:.2f} s = {received[0]/elapsed:.0f}/s (Python clients)")
elif mode == "writes":
    n = int(sys.argv[4]); per = int(sys.argv[5])
    def worker(k, out):
        ws = connect()
        call(ws, 1, "q", {"p": f"/w/{k}", "h": ""}); ws.recv(); ws.recv()
        window = 32
        sent = acked = 0
        r = 2
        while acked < per:
            while sent < per and sent - acked < window:
                call(ws, r, "p", {"p": f"/w/{k}", "d": sent}); r += 1; sent += 1
            m = json.loads(ws.recv())
            if "r" in m["d"]: acked += 1
        out.append(acked)
    out = []
    threads = [threading.Thread(target=worker, args=(k, out)) for k in range(n)]
    start = time.monotonic()
    for t in threads: t.start()
    for t in threads: t.join()
    elapsed = time.monotonic() - start
    print(f"ws.writes: {n} clients x {per} = {sum(out)} acknowledged durable writes in {elapsed:.2f} s = {sum(out)/elapsed:.0f}/s (Python clients, 32 in flight each)")
