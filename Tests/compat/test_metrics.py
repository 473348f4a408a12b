"""`GET /metrics`: Prometheus' text format, for admins only, counting what clients really did."""

import json

import requests
import websocket


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus text, by name and labels."""
    wanted = name + ("{" + ",".join(f'{key}="{value}"' for key, value in labels.items()) + "}" if labels else "")
    for line in text.splitlines():
        if line.startswith(wanted + " "):
            return float(line.split(" ")[-1])
    raise AssertionError(f"no sample {wanted} in:\n{text}")


def test_metrics_are_for_admins_only(hearth_server):
    url = hearth_server.url + "/metrics"
    assert requests.get(url).status_code == 401
    unsigned_user = "eyJhbGciOiJub25lIn0.eyJ1aWQiOiJhbGljZSIsInN1YiI6ImFsaWNlIn0."
    assert requests.get(url, headers={"Authorization": f"Bearer {unsigned_user}"}).status_code == 401
    answer = requests.get(url, headers={"Authorization": "Bearer owner"})
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert "# TYPE hearth_writes_total counter" in answer.text


def test_reads_writes_and_deliveries_are_counted(hearth_server):
    base = hearth_server.url
    admin = {"Authorization": "Bearer owner"}
    namespace = "metrics-test"

    def scrape() -> str:
        return requests.get(base + "/metrics", headers=admin).text

    assert requests.put(f"{base}/seed.json?ns={namespace}", json=1).status_code == 200
    before = scrape()
    socket = websocket.create_connection(f"ws://127.0.0.1:{hearth_server.port}/.ws?v=5&ns={namespace}", timeout=10)
    try:
        socket.recv()  # handshake
        socket.send(json.dumps({"t": "d", "d": {"r": 1, "a": "q", "b": {"p": "/counter", "h": ""}}}))
        while '"r":1' not in socket.recv():
            pass
        for value in range(3):
            assert requests.put(f"{base}/counter.json?ns={namespace}", json=value).status_code == 200
        assert requests.get(f"{base}/counter.json?ns={namespace}").json() == 2
        after = scrape()
        assert metric(after, "hearth_realtime_connections", namespace=namespace) == 1
        assert metric(after, "hearth_subscriptions", namespace=namespace) >= 1
    finally:
        socket.close()
    assert metric(after, "hearth_writes_total", protocol="rest") - metric(before, "hearth_writes_total", protocol="rest") == 3
    assert metric(after, "hearth_reads_total", protocol="realtime") - metric(before, "hearth_reads_total", protocol="realtime") == 1
    assert metric(after, "hearth_reads_total", protocol="rest") - metric(before, "hearth_reads_total", protocol="rest") >= 1
    assert metric(after, "hearth_deliveries_total") - metric(before, "hearth_deliveries_total") >= 3
    assert metric(after, "hearth_storage_bytes", namespace=namespace) > 0
    stale = requests.put(f"{base}/counter.json?ns={namespace}", json=9, headers={"if-match": "not-the-hash"})
    assert stale.status_code == 412
    assert metric(scrape(), "hearth_write_failures_total", reason="stale") - metric(after, "hearth_write_failures_total", reason="stale") == 1


def test_the_heap_in_use_grows_with_what_the_server_holds(hearth_server):
    """`hearth_heap_bytes` is the allocator's count of bytes handed out (what the soak plots beside resident
    memory): a namespace loaded with a few megabytes of data shows in it."""
    base, admin = hearth_server.url, {"Authorization": "Bearer owner"}
    namespace = "metrics-heap"
    before = metric(requests.get(base + "/metrics", headers=admin).text, "hearth_heap_bytes")
    assert before > 1 << 20
    value = "x" * 1000
    for chunk in range(4):
        body = {f"k{chunk}-{index}": value for index in range(1000)}
        assert requests.patch(f"{base}/big.json?ns={namespace}", json=body, headers=admin).status_code == 200
    after = metric(requests.get(base + "/metrics", headers=admin).text, "hearth_heap_bytes")
    assert after - before > 4_000_000, (before, after)
