"""deploy/hearth.service, the systemd unit docs/deploy.md installs: valid, and confined.

systemd does not run on the machines these tests run on, so the unit is checked as a file: `systemd-analyze
verify` (syntax, and that ExecStart names an executable) and `systemd-analyze security --offline=true` (the
exposure score systemd computes from its sandboxing options).
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "deploy" / "hearth.service"

needs_systemd_analyze = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed (Debian package systemd)"
)


@pytest.fixture
def unit(tmp_path, hearth_binary):
    """The unit with ExecStart pointing at the binary under test (verify checks that it exists)."""
    text = UNIT.read_text().replace("/usr/local/bin/hearth", str(hearth_binary))
    path = tmp_path / "hearth.service"
    path.write_text(text)
    return path


def test_the_unit_restarts_hearth_and_stops_it_cleanly():
    text = UNIT.read_text()
    assert re.search(r"^Restart=on-failure$", text, re.M)
    assert re.search(r"^KillSignal=SIGTERM$", text, re.M)
    assert re.search(r"^ExecStart=/usr/local/bin/hearth serve ", text, re.M)
    for option in ("NoNewPrivileges=yes", "ProtectSystem=strict", "UMask=0077", "StateDirectoryMode=0700"):
        assert re.search(rf"^{re.escape(option)}$", text, re.M), option


@needs_systemd_analyze
def test_systemd_accepts_the_unit(unit):
    completed = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert "Unknown" not in completed.stderr and "Failed" not in completed.stderr, completed.stderr


@needs_systemd_analyze
def test_the_unit_is_confined(unit):
    completed = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", str(unit)], capture_output=True, text=True, timeout=60
    )
    match = re.search(r"Overall exposure level for \S+: ([0-9.]+)", completed.stdout)
    assert match, completed.stdout + completed.stderr
    assert float(match.group(1)) <= 2.0, completed.stdout
