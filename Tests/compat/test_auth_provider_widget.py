"""The official JS SDK's signInWithPopup and signInWithRedirect with GoogleAuthProvider against
`hearth serve --emulator`, in headless Chromium: the app's page (js/idp_app.html, the compat SDK from
../shared/vendor) on its own origin, Hearth's provider sign-in page (/emulator/auth/handler) in the popup
or the same tab, and Hearth's /emulator/auth/iframe in the app's page handing the event to the SDK.

gapi.iframes, which the SDK and the iframe load from https://apis.google.com, is the one part that is not
real: the browser resolves apis.google.com to a local HTTPS server (a certificate made by openssl for the
test, `--ignore-certificate-errors`) that serves js/gapi_stand_in.js, so nothing leaves this machine."""

import http.server
import shutil
import ssl
import subprocess
import threading
import time
from functools import partial
from pathlib import Path

import pytest
import requests

import js_sdk_support
from conftest import start_hearth

JS = Path(__file__).parent / "js"


def _missing() -> str | None:
    if shutil.which("openssl") is None:
        return "openssl (Debian package openssl) is needed for the local apis.google.com"
    bundles = js_sdk_support.vendored_bundles()
    if isinstance(bundles, str):
        return bundles
    paths = js_sdk_support.chromium_paths()
    return paths if isinstance(paths, str) else None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))


class _Files(http.server.SimpleHTTPRequestHandler):
    """Serves a fixed map of URL paths to files, nothing else."""

    def __init__(self, *arguments, routes: dict, **keywords):
        self.routes = routes
        super().__init__(*arguments, **keywords)

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        file = self.routes.get(path)
        if file is None:
            self.send_error(404)
            return
        body = file.read_bytes()
        self.send_response(200)
        kind = "text/html" if file.suffix == ".html" else "text/javascript"
        self.send_header("Content-Type", kind + "; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass


def _serve(routes: dict, context: ssl.SSLContext | None = None) -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Files, routes=routes))
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def stage(hearth_binary, tmp_path_factory):
    """Hearth (emulator), the app's origin, the local apis.google.com, and a Chromium that uses it."""
    directory = tmp_path_factory.mktemp("widget")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", "/CN=apis.google.com"], check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    gapi = _serve({"/js/api.js": JS / "gapi_stand_in.js"}, context)
    bundles = js_sdk_support.vendored_bundles()
    app = _serve({"/app.html": JS / "idp_app.html",
                  "/sdk/firebase-app-compat.js": bundles / "firebase-app-compat.js",
                  "/sdk/firebase-auth-compat.js": bundles / "firebase-auth-compat.js"})
    data = directory / "data"
    data.mkdir()
    process, port = start_hearth(hearth_binary, "--emulator", "--data", str(data), "--project", "demo-test")
    assert process.poll() is None, process.stderr.read()
    driver = js_sdk_support.start_chromium(
        f"--host-resolver-rules=MAP apis.google.com 127.0.0.1:{gapi.server_address[1]}",
        "--ignore-certificate-errors", "--disable-popup-blocking")
    emulator = f"http://127.0.0.1:{port}"
    yield {"driver": driver, "emulator": emulator,
           "app": f"http://127.0.0.1:{app.server_address[1]}/app.html?emulator={emulator}"}
    driver.quit()
    process.terminate()
    process.communicate(timeout=20)
    gapi.shutdown()
    app.shutdown()


def _until(what: str, check, seconds: float = 30):
    """Polls the browser (WebDriver has no event to wait on) until `check` answers something."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what} within {seconds} s")


def _accounts(emulator: str) -> list:
    answer = requests.post(f"{emulator}/identitytoolkit.googleapis.com/v1/projects/demo-test/accounts:query",
                           json={"returnUserInfo": True}, headers={"Authorization": "Bearer owner"}, timeout=10)
    return answer.json().get("userInfo", [])


def _open_app(stage) -> str:
    """Loads the app; its getRedirectResult must answer 'no user' (the iframe's auth/no-auth-event)."""
    driver = stage["driver"]
    driver.get(stage["app"])
    outcome = _until("the app's getRedirectResult() answers", lambda: driver.execute_script("return window.redirectOutcome"))
    assert outcome == {"user": None}, outcome
    return driver.current_window_handle


def _popup(stage, main: str):
    driver = stage["driver"]
    driver.execute_script("window.popupOutcome = null; document.getElementById('popup').click()")
    handles = _until("the SDK opens Hearth's sign-in page in a popup", lambda: [h for h in driver.window_handles if h != main])
    driver.switch_to.window(handles[0])
    _until("the sign-in page shows its form", lambda: driver.execute_script(
        "return document.getElementById('email') && document.getElementById('title').textContent"))
    return driver


def _finish_popup(driver, main: str) -> dict:
    _until("the popup closes after signing in", lambda: main in driver.window_handles and len(driver.window_handles) == 1)
    driver.switch_to.window(main)
    return _until("signInWithPopup resolves", lambda: driver.execute_script("return window.popupOutcome"))


def test_sign_in_with_popup_makes_a_google_account_and_signs_in_to_it_again(stage):
    main = _open_app(stage)
    driver = _popup(stage, main)
    assert driver.execute_script("return document.getElementById('title').textContent") == "Sign in with Google"
    assert driver.current_url.startswith(stage["emulator"] + "/emulator/auth/handler?")
    driver.find_element("id", "email").send_keys("ada@example.com")
    driver.find_element("id", "displayName").send_keys("Ada Lovelace")
    driver.find_element("id", "sign-in").click()
    first = _finish_popup(driver, main)
    assert first.get("email") == "ada@example.com", first
    assert first["displayName"] == "Ada Lovelace"
    assert first["providers"] == ["google.com"]
    assert first["isNewUser"] is True and first["providerId"] == "google.com" and first["credential"] == "google.com"
    assert first["operation"] == "signIn"
    accounts = [user for user in _accounts(stage["emulator"]) if user.get("email") == "ada@example.com"]
    assert len(accounts) == 1 and accounts[0]["localId"] == first["uid"]
    assert [info["providerId"] for info in accounts[0]["providerUserInfo"]] == ["google.com"]

    # Again, picking the account the page lists: the same user, not a new one.
    driver.switch_to.window(main)
    driver.execute_script("document.getElementById('sign-out').click()")
    driver = _popup(stage, main)
    button = _until("the page lists the Google account", lambda: [
        element for element in driver.find_elements("css selector", "#accounts button.account") if "ada@example.com" in element.text])
    button[0].click()
    second = _finish_popup(driver, main)
    assert second.get("uid") == first["uid"], second
    assert second["isNewUser"] is False


def test_closing_the_popup_is_the_sdks_popup_closed_by_user(stage):
    main = _open_app(stage)
    driver = _popup(stage, main)
    driver.find_element("id", "cancel").click()
    outcome = _finish_popup(driver, main)
    assert outcome.get("error") == "auth/popup-closed-by-user", outcome


def test_sign_in_with_redirect_comes_back_signed_in(stage):
    main = _open_app(stage)
    driver = stage["driver"]
    driver.execute_script("document.getElementById('redirect').click()")
    _until("the tab goes to Hearth's sign-in page", lambda: driver.current_url.startswith(stage["emulator"] + "/emulator/auth/handler?"))
    _until("the sign-in page shows its form", lambda: driver.execute_script("return document.getElementById('email') !== null"))
    assert driver.current_window_handle == main
    driver.find_element("id", "email").send_keys("grace@example.com")
    driver.find_element("id", "sign-in").click()
    _until("the tab comes back to the app", lambda: driver.current_url.startswith(stage["app"].split("?")[0]))
    outcome = _until("getRedirectResult() answers", lambda: driver.execute_script("return window.redirectOutcome"))
    assert outcome.get("email") == "grace@example.com", outcome
    assert outcome["providers"] == ["google.com"] and outcome["isNewUser"] is True and outcome["operation"] == "signIn"
    assert any(user.get("email") == "grace@example.com" for user in _accounts(stage["emulator"]))
    # The event is delivered once: a reload has no redirect result left (the user stays signed in).
    driver.refresh()
    again = _until("getRedirectResult() answers after a reload", lambda: driver.execute_script("return window.redirectOutcome"))
    assert again == {"user": None}, again


def test_the_pages_are_the_emulators_only(hearth_binary, tmp_path):
    process, port = start_hearth(hearth_binary, "--data", str(tmp_path), "--project", "demo-test")
    try:
        answer = requests.get(f"http://127.0.0.1:{port}/emulator/auth/handler", params={"providerId": "google.com"}, timeout=10)
        assert answer.status_code == 400
        assert "--emulator" in answer.json()["error"]["message"]
    finally:
        process.terminate()
        process.communicate(timeout=20)
