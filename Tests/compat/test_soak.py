"""`make soak` (soak.py) kept working: the same load for half a minute on one node, with reconnect storms
every ten seconds. Too short to judge growth (that is the hour's job); it checks what the hour checks
besides: no errors, every acknowledged write held, every listener converged, the samples and plots written."""

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_half_a_minute_of_soak_has_no_errors_and_loses_nothing(hearth_binary, tmp_path):
    run = subprocess.run(
        [sys.executable, str(HERE / "soak.py"), "--minutes", "0.5", "--sample-seconds", "5", "--storm-seconds", "10", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "HEARTH_BINARY": str(hearth_binary)})
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["error count"] == 0, summary["errors"]
    assert summary["lost"] == [] and summary["listeners diverged"] == [], summary
    counts = summary["counts"]
    assert counts["storms"] >= 2 and counts["rest writes"] > 100 and counts["realtime writes"] > 50, counts
    assert counts["sse events"] > 0 and counts["sign-ins"] + counts["refreshes"] > 10, counts
    assert len((tmp_path / "samples.csv").read_text().splitlines()) >= 6
    assert (tmp_path / "soak.svg").read_text().startswith("<svg")
    last = json.loads(run.stdout.strip().splitlines()[-1])
    assert last["scenario"] == "soak.single" and last["errors"] == 0, run.stdout[-2000:]
