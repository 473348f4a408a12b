"""Benchmark scenarios that drive the real `hearth serve` through APIs that tests elsewhere change
(the console's), run small with the debug build: a scenario that no longer speaks the server's API
fails here rather than only in a long `make bench`. The numbers mean nothing at this size."""

import json
import os
import subprocess

import pytest


def test_console_open_signs_in_and_pages_as_the_console_does(hearth_binary):
    bench = hearth_binary.parent / "hearth-bench"
    if not os.access(bench, os.X_OK):
        pytest.fail(f"no hearth-bench at {bench}: build with 'swift build' (make test does)", pytrace=False)
    environment = {**os.environ, "HEARTH_BINARY": str(hearth_binary), "HEARTH_BENCH_CONSOLE_LEAVES": "2000"}
    completed = subprocess.run([str(bench), "--runs", "1", "console.open"], capture_output=True, text=True, timeout=120, env=environment)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert result["scenario"] == "console.open" and result["value"] > 0
    assert 0 < result["consoleBytes"] < result["shallowBytes"], "the console reads one page, the shallow GET every key"


def test_hooks_latency_deploys_a_hook_and_times_every_delivery(hearth_binary):
    bench = hearth_binary.parent / "hearth-bench"
    if not os.access(bench, os.X_OK):
        pytest.fail(f"no hearth-bench at {bench}: build with 'swift build' (make test does)", pytrace=False)
    environment = {**os.environ, "HEARTH_BINARY": str(hearth_binary), "HEARTH_BENCH_HOOK_WRITES_PER_SECOND": "100",
                   "HEARTH_BENCH_HOOK_SECONDS": "1"}
    completed = subprocess.run([str(bench), "--runs", "1", "hooks.latency"], capture_output=True, text=True, timeout=180, env=environment)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert result["scenario"] == "hooks.latency" and result["delivered"] == result["expected"] == 100, completed.stdout
