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


# Ports below Linux's ephemeral range (32768-60999), from which the kernel picks the local port of every
# outgoing connection: a port that bind(0) handed out is in that range, so a connection opened meanwhile
# could take it before the server binds it ("Address already in use" on a busy machine).
_CANDIDATE_PORTS = range(20000, 32768)
_handed_out: set[int] = set()


def _free_port() -> int:
    """A loopback port nobody holds now, outside the ephemeral range, never handed out twice by this process.
    Another process could still take it first: callers that start servers retry when their bind fails."""
    import random

    while True:
        port = random.choice(_CANDIDATE_PORTS)
        if port in _handed_out:
            continue
        _handed_out.add(port)
        if _can_bind(port):
            return port


def start_hearth(binary, *arguments: str, seconds: float = 20, environment: dict | None = None,
                 port: int | None = None, launcher: tuple[str, ...] = ()) -> tuple[subprocess.Popen, int]:
    """Starts `hearth serve ARGUMENTS --port <port>` (a free one unless given) with `environment` added to
    this process's, and waits until it accepts connections. When another process took a chosen port before
    hearth bound it, it starts again on another. `launcher` runs it (`prlimit --as=…`, say).

    Returns the process (or one that already exited: check `poll()`) and its port."""
    import socket
    import time

    for _attempt in range(5):
        chosen = port or _free_port()
        process = subprocess.Popen(
            [*launcher, str(binary), "serve", *arguments, "--port", str(chosen)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **(environment or {})},
        )
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and process.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", chosen), timeout=0.5).close()
                return process, chosen
            except OSError:
                time.sleep(0.05)
        if port is not None or process.poll() is None or _can_bind(chosen):
            # Running, or stopped for a reason of its own (the caller reads it on standard error).
            return process, chosen
        process.communicate()
    return process, chosen


def _can_bind(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


@dataclass
class RunningServer:
    """A `hearth serve` process started for the tests."""

    host: str
    port: int
    data: Path
    process: subprocess.Popen

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


@pytest.fixture(scope="session")
def hearth_server(hearth_binary, tmp_path_factory):
    """The real `hearth serve --emulator` on a free port with a temporary data directory, stopped after the run."""
    data = tmp_path_factory.mktemp("hearth-data")
    for _attempt in range(5):
        process, port = start_hearth(hearth_binary, "--emulator", "--data", str(data), "--project", "demo-test")
        if process.poll() is None:
            break
    else:
        pytest.fail("hearth serve did not start", pytrace=False)
    server = RunningServer("127.0.0.1", port, data, process)
    yield server
    process.terminate()
    try:
        out, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"hearth serve did not stop within 20 s of SIGTERM; stderr:\n{err}")
    assert process.returncode == 0, f"hearth serve exited with {process.returncode}; stderr:\n{err}"
    assert "stopped cleanly" in err


@pytest.fixture(scope="session")
def chromium():
    """A headless Chromium under selenium for the session (js_sdk_support.start_chromium); skips the
    test when Chromium, chromedriver or selenium is missing."""
    from js_sdk_support import chromium_paths, start_chromium

    paths = chromium_paths()
    if isinstance(paths, str):
        pytest.skip(paths)
    driver = start_chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def js_sdk(request):
    """Runs the official JS SDK's scenarios (js/*.cjs): under node when FIREBASE_JS_SDK_DIR provides the
    SDK, otherwise in `chromium` on the compat bundles in ../shared/vendor (js_sdk_support.py); skips,
    saying what is missing, when neither can."""
    import js_sdk_support

    missing = js_sdk_support.unavailable()
    if missing:
        pytest.skip(missing)
    modules = js_sdk_support.node_modules()
    if modules is not None:
        return js_sdk_support.NodeRunner(modules)
    return js_sdk_support.ChromiumRunner(request.getfixturevalue("chromium"), js_sdk_support.vendored_bundles())


# What was skipped and why, for the one line `make test` ends with (scripts/test): a file of
# "SUITE<TAB>REASON" lines, one per skipped test, where HEARTH_SKIP_REPORT says.
_skipped: list[tuple[str, str]] = []


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        suite = report.nodeid.split("::")[0].rsplit("/", 1)[-1]
        _skipped.append((suite, reason.removeprefix("Skipped: ").replace("\t", " ").replace("\n", " ")))


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("HEARTH_SKIP_REPORT")
    if path:
        Path(path).write_text("".join(f"{suite}\t{reason}\n" for suite, reason in _skipped))
