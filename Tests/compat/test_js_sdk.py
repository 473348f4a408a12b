"""The official Firebase JS SDK (modular API, node build) against the real server.

The SDK cannot be installed here (no npm registry), and a copy may not be committed, so these tests run
when FIREBASE_JS_SDK_DIR names a node_modules directory holding `firebase` and its `@firebase/*`
packages (and `node` is on PATH), and skip with that message otherwise. The scenarios are in
js/realtime.cjs: each prints one JSON line, {"ok": true, ...} or {"ok": false, "error": ...}.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

SDK = os.environ.get("FIREBASE_JS_SDK_DIR", "")
SCRIPT = Path(__file__).parent / "js" / "realtime.cjs"

pytestmark = pytest.mark.skipif(
    not SDK or not (Path(SDK) / "firebase" / "package.json").is_file() or shutil.which("node") is None,
    reason="set FIREBASE_JS_SDK_DIR to a node_modules directory with the firebase package (and install node) "
    "to run the JS SDK tests",
)


def run_scenario(server, namespace: str, scenario: str) -> dict:
    completed = subprocess.run(
        ["node", str(SCRIPT), server.host, str(server.port), namespace, scenario],
        env=dict(os.environ, NODE_PATH=SDK),
        capture_output=True,
        text=True,
        timeout=90,
    )
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no result from the JS SDK (exit {completed.returncode}):\n{completed.stdout}\n{completed.stderr}"
    result = json.loads(lines[-1])
    assert result["ok"], result["error"]
    return result


@pytest.mark.parametrize("scenario", ["roundtrip", "query", "transaction", "ondisconnect", "info"])
def test_js_sdk_scenario(hearth_server, scenario):
    run_scenario(hearth_server, "jssdk", scenario)


def test_js_sdk_sees_rules_denials(hearth_server):
    rules = {"rules": {"open": {".read": True, ".write": True}}}
    deployed = requests.put(
        f"{hearth_server.url}/.settings/rules.json?ns=jsdenied", data=json.dumps(rules),
        headers={"Authorization": "Bearer owner"})
    assert deployed.status_code == 200
    result = run_scenario(hearth_server, "jsdenied", "denied")
    assert "PERMISSION_DENIED" in result["write"].upper()


def test_js_sdk_auth_flow_and_the_database_under_its_tokens(hearth_server):
    """firebase/auth against Hearth's Auth endpoints: sign-up, errors, refresh, email verification and
    password reset through the outbox, anonymous sign-in; the database's rules see the signed-in uid."""
    rules = {"rules": {"users": {"$uid": {".read": "auth != null && auth.uid == $uid",
                                          ".write": "auth != null && auth.uid == $uid"}}}}
    deployed = requests.put(f"{hearth_server.url}/.settings/rules.json?ns=jsauth", data=json.dumps(rules),
                            headers={"Authorization": "Bearer owner"})
    assert deployed.status_code == 200
    completed = subprocess.run(
        ["node", str(Path(__file__).parent / "js" / "auth.cjs"), hearth_server.host, str(hearth_server.port), "jsauth",
         "demo-test"],
        env=dict(os.environ, NODE_PATH=SDK), capture_output=True, text=True, timeout=90)
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no result (exit {completed.returncode}):\n{completed.stdout}\n{completed.stderr}"
    result = json.loads(lines[-1])
    assert result["ok"], result["error"]


def test_js_sdk_compat_bundles_in_headless_chromium(hearth_server, tmp_path):
    """The compat bundles, as a web page loads them, in Debian's Chromium: set, update, listen, transactions."""
    browser = shutil.which("chromium")
    if browser is None:
        pytest.skip("chromium is not installed (apt install chromium) to run the browser test")
    import time

    page = (Path(__file__).parent / "js" / "browser.html").resolve()
    url = f"file://{page}?sdk=file://{Path(SDK).resolve() / 'firebase'}&port={hearth_server.port}&ns=jsbrowser"
    process = subprocess.Popen(
        [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
         f"--user-data-dir={tmp_path}", url],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        result = None
        while time.monotonic() < deadline and result is None:
            time.sleep(0.2)
            result = requests.get(f"{hearth_server.url}/browser/result.json?ns=jsbrowser",
                                  headers={"Authorization": "Bearer owner"}).json()
    finally:
        process.kill()
        process.wait()
    assert result is not None, "the page did not report within 60 s"
    assert result["ok"], result


def test_the_seed_tutorials_apps_run_on_the_js_sdk(hearth_binary, hearth_server, tmp_path):
    """The apps of ../shared/seeds (jokes with votes, profiles with followers and a username index,
    verified-only per-user posts with server timestamps, a message board's events), as the JS SDK runs
    them, under Examples/rules/seed-apps.bolt deployed with `hearth rules deploy`."""
    rules = Path(__file__).resolve().parents[2] / "Examples" / "rules" / "seed-apps.bolt"
    deployed = subprocess.run(
        [str(hearth_binary), "rules", "deploy", "jsseeds", str(rules), "--url", hearth_server.url],
        capture_output=True, text=True, timeout=60)
    assert deployed.returncode == 0, deployed.stderr
    completed = subprocess.run(
        ["node", str(Path(__file__).parent / "js" / "seed_apps.cjs"), hearth_server.host, str(hearth_server.port),
         "jsseeds", "demo-test"],
        env=dict(os.environ, NODE_PATH=SDK), capture_output=True, text=True, timeout=120)
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no result (exit {completed.returncode}):\n{completed.stdout}\n{completed.stderr}"
    result = json.loads(lines[-1])
    assert result["ok"], result["error"]


SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "Fixtures" / "client-scenarios").glob("*.json"))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[path.stem for path in SCENARIOS])
def test_the_js_sdk_raises_the_client_scenarios_events(hearth_binary, tmp_path, scenario):
    """The scenarios HearthClient runs too (ClientScenarioTests.swift): the JS SDK must raise exactly the
    expected events, so both SDKs raise the same ones. Each runs on a fresh server (initial data included)."""
    from conftest import start_hearth

    process, port = start_hearth(hearth_binary, "--emulator", "--data", str(tmp_path / "data"))
    try:
        initial = json.loads(scenario.read_text()).get("initial")
        if initial is not None:
            response = requests.put(f"http://127.0.0.1:{port}/.json?ns=scenario", data=json.dumps(initial),
                                    headers={"Authorization": "Bearer owner"}, timeout=10)
            assert response.status_code == 200, response.text
        completed = subprocess.run(
            ["node", str(Path(__file__).parent / "js" / "client_scenarios.cjs"), "127.0.0.1", str(port), "scenario",
             str(scenario)],
            env=dict(os.environ, NODE_PATH=SDK), capture_output=True, text=True, timeout=60)
        lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
        assert lines, f"no result (exit {completed.returncode}):\n{completed.stdout}\n{completed.stderr}"
        result = json.loads(lines[-1])
        assert result["ok"], result
    finally:
        process.terminate()
        process.wait(timeout=20)
