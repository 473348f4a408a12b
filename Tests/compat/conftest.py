"""Shared fixtures for the compatibility tests, which drive the real `hearth` binary as a user would.

The binary is the debug build that `make test` has just made; set HEARTH_BINARY to test another one.
"""

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Completed:
    """What one run of `hearth` returned and printed."""

    returncode: int
    stdout: str
    stderr: str


@pytest.fixture(scope="session")
def hearth_binary() -> Path:
    """Path of the built `hearth` executable; fails the run with a hint when it has not been built."""
    binary = Path(os.environ.get("HEARTH_BINARY", ROOT / ".build" / "debug" / "hearth"))
    if not binary.is_absolute():
        binary = ROOT / binary
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no hearth binary at {binary}: build it with 'swift build' (make test does)", pytrace=False)
    return binary


@pytest.fixture
def hearth(hearth_binary, tmp_path):
    """Runs `hearth` with the given arguments in an empty directory, with a timeout, and captures its output."""

    def run(*arguments: str, timeout: float = 30) -> Completed:
        completed = subprocess.run(
            [str(hearth_binary), *arguments],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return Completed(completed.returncode, completed.stdout, completed.stderr)

    return run
