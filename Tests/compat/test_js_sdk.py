"""The official Firebase JS SDK against the real server.

The scenarios are in js/*.cjs, written against the SDK's modular API as an app uses it; each prints one
JSON line, {"ok": true, ...} or {"ok": false, "error": ...}. They run under node when
FIREBASE_JS_SDK_DIR names a node_modules directory holding `firebase` and its `@firebase/*` packages (and
`node` is on PATH), and otherwise in Debian's headless Chromium on Google's compat bundles of SDK 10.14.1
in ../shared/vendor/firebase-js-sdk-10.14.1 (js_sdk_support.py, js/runner.html, js/modular_on_compat.js),
so that they run in every CI run. They skip, saying what is missing, only when neither is possible.
"""

import json
import subprocess
import time
from pathlib import Path

import pytest
import requests

import js_sdk_support


def run_scenario(js_sdk, server, namespace: str, scenario: str) -> dict:
    """One scenario of js/realtime.cjs against `server` (anything with host and port)."""
    result = js_sdk.run("realtime.cjs", server.host, str(server.port), namespace, scenario, timeout=90)
    assert result["ok"], result["error"]
    return result


@pytest.mark.parametrize("scenario", ["roundtrip", "query", "transaction", "ondisconnect", "info"])
def test_js_sdk_scenario(js_sdk, hearth_server, scenario):
    run_scenario(js_sdk, hearth_server, "jssdk", scenario)


def test_js_sdk_sees_rules_denials(js_sdk, hearth_server):
    rules = {"rules": {"open": {".read": True, ".write": True}}}
    deployed = requests.put(
        f"{hearth_server.url}/.settings/rules.json?ns=jsdenied", data=json.dumps(rules),
        headers={"Authorization": "Bearer owner"})
    assert deployed.status_code == 200
    result = run_scenario(js_sdk, hearth_server, "jsdenied", "denied")
    assert "PERMISSION_DENIED" in result["write"].upper()


def test_js_sdk_auth_flow_and_the_database_under_its_tokens(js_sdk, hearth_server):
    """firebase/auth against Hearth's Auth endpoints: sign-up, errors, refresh, email verification and
    password reset through the outbox, anonymous sign-in; the database's rules see the signed-in uid."""
    rules = {"rules": {"users": {"$uid": {".read": "auth != null && auth.uid == $uid",
                                          ".write": "auth != null && auth.uid == $uid"}}}}
    deployed = requests.put(f"{hearth_server.url}/.settings/rules.json?ns=jsauth", data=json.dumps(rules),
                            headers={"Authorization": "Bearer owner"})
    assert deployed.status_code == 200
    result = js_sdk.run("auth.cjs", hearth_server.host, str(hearth_server.port), "jsauth", "demo-test", timeout=90)
    assert result["ok"], result["error"]


def test_js_sdk_compat_bundles_in_headless_chromium(chromium, hearth_server):
    """The compat bundles, as a web page loads them (js/browser.html), in Debian's Chromium: set, update,
    listen, transactions; the page reports its result over REST."""
    from selenium.webdriver.support.ui import WebDriverWait

    bundles = js_sdk_support.vendored_bundles()
    if isinstance(bundles, str):
        modules = js_sdk_support.node_modules()
        if modules is None:
            pytest.skip(bundles)
        bundles = modules / "firebase"
    page = (js_sdk_support.JS / "browser.html").as_uri()
    chromium.get(f"{page}?sdk={bundles.as_uri()}&port={hearth_server.port}&ns=jsbrowser")

    def reported(_driver):
        return requests.get(f"{hearth_server.url}/browser/result.json?ns=jsbrowser",
                            headers={"Authorization": "Bearer owner"}, timeout=10).json()

    try:
        result = WebDriverWait(chromium, 60, poll_frequency=0.1).until(
            reported, message="the page did not report within 60 s")
    finally:
        shown = chromium.execute_script("return document.getElementById('result').textContent")
        chromium.get("about:blank")
    assert result["ok"], (result, shown)


def test_the_seed_tutorials_apps_run_on_the_js_sdk(js_sdk, hearth_binary, hearth_server):
    """The apps of ../shared/seeds (jokes with votes, profiles with followers and a username index,
    verified-only per-user posts with server timestamps, a message board's events), as the JS SDK runs
    them, under Examples/rules/seed-apps.bolt deployed with `hearth rules deploy`, with the seed
    functions (vote totals, the board, follower counts) running beside the server."""
    rules = Path(__file__).resolve().parents[2] / "Examples" / "rules" / "seed-apps.bolt"
    deployed = subprocess.run(
        [str(hearth_binary), "rules", "deploy", "jsseeds", str(rules), "--url", hearth_server.url],
        capture_output=True, text=True, timeout=60)
    assert deployed.returncode == 0, deployed.stderr
    functions = subprocess.Popen(
        [str(hearth_binary.parent / "seed-functions"), "--url", f"{hearth_server.url}?ns=jsseeds", "--token", "owner"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not requests.get(f"{hearth_server.url}/.settings/functions.json?ns=jsseeds", headers={"Authorization": "Bearer owner"},
                               timeout=10).json().get("functions"):
            assert functions.poll() is None and time.monotonic() < deadline, "seed-functions did not register"
            time.sleep(0.05)
        result = js_sdk.run("seed_apps.cjs", hearth_server.host, str(hearth_server.port), "jsseeds", "demo-test",
                            timeout=120)
    finally:
        functions.terminate()
        functions.wait(timeout=30)
    assert result["ok"], result["error"]


SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "Fixtures" / "client-scenarios").glob("*.json"))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[path.stem for path in SCENARIOS])
def test_the_js_sdk_raises_the_client_scenarios_events(js_sdk, hearth_binary, tmp_path, scenario):
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
        result = js_sdk.run("client_scenarios.cjs", "127.0.0.1", str(port), "scenario", str(scenario), timeout=60,
                            files={str(scenario): scenario.read_text()})
        assert result["ok"], result
    finally:
        process.terminate()
        process.wait(timeout=20)
