"""The README's first-run commands, run verbatim against a fresh `hearth serve` (not in emulator mode: as
`make run` starts it), so the README cannot rot. The block is the one after the marker comment naming this
file; only the port is changed, to a free one."""

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import start_hearth

ROOT = Path(__file__).resolve().parents[2]


def first_run_block() -> str:
    readme = (ROOT / "README.md").read_text()
    marker = readme.index("Tests/compat/test_readme.py runs this block")
    match = re.search(r"```sh\n(.*?)```", readme[marker:], re.S)
    assert match, "no sh block after the README's test marker"
    return match.group(1)


def test_the_readme_first_run_commands_work_verbatim(hearth_binary, tmp_path):
    # A checkout-shaped directory: the README's relative paths, the binary under test, fresh data.
    (tmp_path / ".build" / "debug").mkdir(parents=True)
    os.symlink(hearth_binary, tmp_path / ".build" / "debug" / "hearth")
    os.symlink(ROOT / "Examples", tmp_path / "Examples")
    process, port = start_hearth(hearth_binary, "--data", str(tmp_path / "hearth-data"), "--project", "readme")
    try:
        assert process.poll() is None, process.stderr.read()
        script = first_run_block().replace("localhost:9000", f"localhost:{port}")
        result = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output
        assert '{"text":"knock knock"}' in output, output
        assert "Deployed Examples/rules/seed-apps.bolt" in output, output
        assert '{"error":"Permission denied"}' in output, output
        assert "knock knock" in (tmp_path / "demo.json").read_text()
    finally:
        process.terminate()
        process.communicate(timeout=20)


def cluster_block() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Running a cluster"):]
    match = re.search(r"```sh\n(.*?)```", section, re.S)
    assert match, "no sh block in the README's 'Running a cluster'"
    return match.group(1)


def test_the_readme_cluster_block_runs_against_make_cluster(hearth_binary):
    """`make cluster` (scripts/cluster) and the README's commands for it, verbatim: a private PostgreSQL,
    nodes a and b and nginx on the README's ports; Ctrl-C leaves nothing behind."""
    if os.environ.get("HEARTH_SKIP_POSTGRES") == "1":
        pytest.skip("HEARTH_SKIP_POSTGRES=1: make cluster needs PostgreSQL")
    cluster = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "cluster")], env={**os.environ, "HEARTH_BINARY": str(hearth_binary)},
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        for line in cluster.stdout:
            lines.append(line)
            if line.startswith("Stop with Ctrl-C"):
                break
        assert lines and lines[-1].startswith("Stop with"), "".join(lines)
        outputs = [subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=30).stdout.strip()
                   for command in cluster_block().strip().splitlines()]
        assert outputs[0] in ('"a"', '"b"') and outputs[1] == '"hi"' and outputs[2] == '"hi"', outputs
    finally:
        cluster.send_signal(signal.SIGINT)
        rest = cluster.communicate(timeout=60)[0]
    assert "stopped; PostgreSQL and the nodes' directories removed" in rest, rest
    assert cluster.returncode == 0
