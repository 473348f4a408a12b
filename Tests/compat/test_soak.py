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
        [sys.executable, str(HERE / "soak.py"), "--minutes", "0.5", "--sample-seconds", "5", "--storm-seconds", "10", "--ballast-mb", "1", "--out", str(tmp_path)],
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


def judge(key, values):
    sys.path.insert(0, str(HERE))
    import soak
    return soak.judged([{"minute": minute, key: value} for minute, value in enumerate(values)], key)


def test_the_verdict_takes_one_more_thread_as_none_and_two_or_a_creep_as_growth():
    # The hour-long cluster run's node a: 13 threads, 14 from minute 52.
    assert judge("node a.threads", [13] * 51 + [14] * 9) == 0.0
    assert judge("node a.threads", [13] * 30 + [14] * 10 + [15] * 20) > 5.0
    # The two nodes' descriptors together, 72-78 as connections come and go, are flat; eight more from the middle on are not.
    swing = [74, 75, 72, 76, 78, 75, 73, 76, 77, 74]
    assert judge("all.fds", swing * 6) == 0.0
    assert judge("all.fds", swing * 3 + [value + 8 for value in swing * 3]) > 5.0
    # Resident memory creeping 0.3 MB a minute from 45 MB is growth, a flat one is not.
    assert judge("node a.rss", [45e6 + 0.3e6 * minute for minute in range(60)]) > 5.0
    assert judge("node a.rss", [45e6 + (minute % 3) * 1e5 for minute in range(60)]) <= 5.0
