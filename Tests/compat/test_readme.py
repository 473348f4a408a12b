"""The README's first-run commands, run verbatim against a fresh `hearth serve` (not in emulator mode: as
`make run` starts it), so the README cannot rot. The block is the one after the marker comment naming this
file; only the port is changed, to a free one."""

import os
import re
import subprocess
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
