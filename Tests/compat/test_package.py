"""What the package promises about its own shape (docs/ARCHITECTURE.md, "Modules"), read from SwiftPM itself:
an app that adds HearthClient links client code only, uses no Apple API newer than its declared platforms,
and each C library is wrapped by one module."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SWIFT = shutil.which("swift") or "/opt/swift/usr/bin/swift"

# What HearthClient may link: the pure core and its support, the wire protocol both sides speak, SQLite for
# the disk cache, and (on Linux only) the WebSocket client.
CLIENT_CLOSURE = {"HearthClient", "HearthCore", "HearthSupport", "HearthWire", "HearthSQL", "CSQLite",
                  "HearthWebSocketClient", "CLibWebSockets"}


@pytest.fixture(scope="module")
def targets() -> dict:
    described = subprocess.run([SWIFT, "package", "describe", "--type", "json"], cwd=ROOT, capture_output=True,
                               text=True, timeout=300)
    assert described.returncode == 0, described.stderr
    return {target["name"]: target for target in json.loads(described.stdout)["targets"]}


def closure(targets: dict, name: str) -> set:
    seen, pending = set(), [name]
    while pending:
        current = pending.pop()
        if current not in seen:
            seen.add(current)
            pending += targets[current].get("target_dependencies", [])
    return seen


def test_hearth_client_links_client_code_only(targets):
    linked = closure(targets, "HearthClient")
    assert linked == CLIENT_CLOSURE, f"HearthClient links {sorted(linked - CLIENT_CLOSURE)} beyond its closure " \
                                     f"(and lacks {sorted(CLIENT_CLOSURE - linked)})"
    # The Linux socket brings no server code with it either.
    assert closure(targets, "HearthWebSocketClient") == {"HearthWebSocketClient", "HearthSupport", "CLibWebSockets"}


def test_each_c_library_is_wrapped_by_one_module(targets):
    importers: dict[str, set] = {}
    for name, target in targets.items():
        if target.get("module_type") != "SwiftTarget":
            continue
        for source in target["sources"]:
            text = (ROOT / target["path"] / source).read_text()
            for module in re.findall(r"^\s*(?:internal |public |package |@testable )?import (C[A-Z][A-Za-z]+)\b", text, re.M):
                importers.setdefault(module, set()).add(name)
    # libwebsockets has two: the server's transport and the SDK's socket, so that an app never links the
    # server (docs/ARCHITECTURE.md says why).
    expected_two = {"CLibWebSockets": {"HearthTransport", "HearthWebSocketClient"}}
    for module, modules in sorted(importers.items()):
        assert modules == expected_two.get(module, modules) and (module in expected_two or len(modules) == 1), \
            f"{module} is imported by {sorted(modules)}"


def test_nothing_hearth_client_links_needs_a_newer_apple_platform():
    checked = subprocess.run([str(ROOT / "scripts" / "check-apple-availability")], cwd=ROOT, capture_output=True,
                             text=True, timeout=300, env={**os.environ, "PATH": os.environ["PATH"] + ":/opt/swift/usr/bin"})
    assert checked.returncode == 0, checked.stdout + checked.stderr
