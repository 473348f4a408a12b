"""The console in a real browser: Debian's headless Chromium driven by selenium (docs/console.md). Each
test does what a person would, through the pages, and checks the outcome the way they would: over REST,
with a real user's token, or by looking. Screenshots of every screen at 1280×800 and 390×844 are saved
under .build/test-artifacts/console (HEARTH_ARTIFACTS to change it)."""

import json
import os
import shutil
import time
from pathlib import Path

import pytest
import requests

from console_support import start_console_server
from hook_receiver import Receiver

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("HEARTH_ARTIFACTS", ROOT / ".build" / "test-artifacts" / "console"))
NS = "console-test-default-rtdb"
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


def chromium_paths() -> tuple[str, str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        pytest.fail("Chromium and chromedriver are needed (Debian: apt-get install chromium chromium-driver; "
                    "scripts/setup installs them)", pytrace=False)
    return browser, driver


@pytest.fixture(scope="module")
def server(hearth_binary, tmp_path_factory):
    # Loopback allowed for webhooks: the hooks test's receiver runs on 127.0.0.1.
    # Backups every 2 s: the backups test restores from one. Enough are kept that the one it picked is
    # still there when it asks (with one kept, under stress-ng the next round had replaced it by then).
    server = start_console_server(hearth_binary, tmp_path_factory.mktemp("console-browser-data"), "--hooks-allow", "loopback",
                                  "--backup-every", "2s", "--backup-keep", "100")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser(server):
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = chromium_paths()
    options = Options()
    options.binary_location = binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_window_size(*SIZES["desktop"])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.get(server.link)
    wait(driver).until(lambda d: d.find_elements(By.ID, "nav-data"))
    yield driver
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    driver.quit()
    # The tests provoke some errors on purpose (a 400 for broken rules): those are the server's answers,
    # logged by the browser as failed requests, not errors in the page's scripts.
    script_errors = [entry for entry in errors if "Failed to load resource" not in entry["message"]]
    assert not script_errors, script_errors


def wait(driver, seconds: float = 10) -> WebDriverWait:
    return WebDriverWait(driver, seconds, poll_frequency=0.05,
                         ignored_exceptions=(StaleElementReferenceException,))


def go(driver, route: str) -> None:
    driver.execute_script("location.hash = arguments[0]", route)


def row(driver, path: str):
    found = driver.find_elements(By.CSS_SELECTOR, f'.row[data-path="{path}"]')
    return found[0] if found else None


UNLABELLED = """
return [...document.querySelectorAll('input, select, textarea, button')].filter(e => {
  if (e.type === 'hidden' || e.closest('[hidden]') || e.offsetParent === null) return false;
  const labelled = e.getAttribute('aria-label') || e.getAttribute('aria-labelledby') || e.title
    || (e.id && document.querySelector(`label[for="${e.id}"]`)) || e.closest('label')
    || (e.tagName === 'BUTTON' && e.textContent.trim());
  return !labelled;
}).map(e => e.outerHTML.slice(0, 120));
"""


def screenshots(driver, name: str) -> None:
    """Saves the screen at both sizes (the phone size first, then back to the desktop), having checked
    that every control on it has a label a screen reader can say."""
    unlabelled = driver.execute_script(UNLABELLED)
    assert not unlabelled, f"controls without a label on {name}: {unlabelled}"
    for size, (width, height) in (("phone", SIZES["phone"]), ("desktop", SIZES["desktop"])):
        driver.set_window_size(width, height)
        time.sleep(0.4)
        driver.save_screenshot(str(ARTIFACTS / f"{name}-{size}.png"))


def set_editor(driver, element_id: str, text: str) -> None:
    """Replaces a textarea's text as typing would (the page listens to `input`)."""
    driver.execute_script(
        "const e = document.getElementById(arguments[0]); e.value = arguments[1];"
        "e.dispatchEvent(new Event('input', {bubbles: true}));", element_id, text)


def sign_up(server, email: str) -> dict:
    answer = requests.post(f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp",
                           params={"key": "browser"}, json={"email": email, "password": "secret123", "returnSecureToken": True})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_signing_in_through_the_printed_link_opens_the_console(server, browser):
    assert "/console/" in browser.current_url
    assert browser.find_element(By.ID, "signout").is_displayed() or browser.find_element(By.ID, "signout")
    # The link is spent: a second browser session would get the sign-in screen with the reason.
    assert requests.get(server.link, allow_redirects=False).headers["location"] == "/console/?signin=failed"


def test_a_rest_write_shows_up_in_the_open_data_view_within_a_second(server, browser):
    admin = server.admin()
    assert requests.put(f"{server.url}/greeting.json", json="hello", headers=admin).status_code == 200
    assert requests.put(f"{server.url}/rooms.json", json={"r1": {"name": "Lobby", "size": 3}}, headers=admin).status_code == 200
    go(browser, f"#/data/{NS}/")
    wait(browser).until(lambda d: row(d, "/greeting"))
    written = time.monotonic()
    assert requests.put(f"{server.url}/arrived.json", json={"at": 1}, headers=admin).status_code == 200
    wait(browser, 3).until(lambda d: row(d, "/arrived"))
    shown = time.monotonic() - written
    assert shown < 1.0, f"the write took {shown:.2f} s to show"
    assert "flash-added" in row(browser, "/arrived").get_attribute("class")
    # A change to a shown leaf flashes as changed.
    assert requests.put(f"{server.url}/greeting.json", json="hello again", headers=admin).status_code == 200
    wait(browser, 3).until(lambda d: "hello again" in row(d, "/greeting").text)
    assert "flash-changed" in row(browser, "/greeting").get_attribute("class")
    screenshots(browser, "data")


def test_a_value_edited_in_the_page_reads_back_over_rest(server, browser):
    # A long value is listed in part; editing it starts from the whole of it.
    assert requests.put(f"{server.url}/long.json", json="x" * 5000, headers=server.admin()).status_code == 200
    go(browser, f"#/data/{NS}/")
    wait(browser).until(lambda d: row(d, "/long"))
    assert "5,000 bytes" in row(browser, "/long").text
    row(browser, "/long").find_element(By.CSS_SELECTOR, ".value").click()
    long_editor = wait(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, ".value-editor"))
    assert "x" * 5000 in long_editor.get_attribute("value")
    long_editor.send_keys(Keys.ESCAPE)
    wait(browser).until(lambda d: not d.find_elements(By.CSS_SELECTOR, ".value-editor"))
    wait(browser).until(lambda d: row(d, "/greeting"))
    # By keyboard alone: the value takes focus, Enter opens the editor, Escape closes it and gives
    # the focus back.
    value = row(browser, "/greeting").find_element(By.CSS_SELECTOR, ".value")
    browser.execute_script("arguments[0].focus()", value)
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    editor = wait(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, ".value-editor"))
    assert browser.switch_to.active_element == editor
    editor.send_keys(Keys.ESCAPE)
    wait(browser).until(lambda d: not d.find_elements(By.CSS_SELECTOR, ".value-editor"))
    assert "value" in (browser.switch_to.active_element.get_attribute("class") or "")
    assert browser.find_element(By.CSS_SELECTOR, '.row[data-path="/greeting"] .value').get_attribute("aria-label")
    row(browser, "/greeting").find_element(By.CSS_SELECTOR, ".value").click()
    editor = wait(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, ".value-editor"))
    editor.send_keys(Keys.CONTROL, "a")
    editor.send_keys('"edited in the console"', Keys.ENTER)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        if requests.get(f"{server.url}/greeting.json", headers=server.admin()).json() == "edited in the console":
            break
        time.sleep(0.05)
    assert requests.get(f"{server.url}/greeting.json", headers=server.admin()).json() == "edited in the console"


def test_jump_import_export_and_delete_a_subtree(server, browser, tmp_path):
    go(browser, f"#/data/{NS}/")
    wait(browser).until(lambda d: row(d, "/rooms"))
    # Jump to a path: the tree opens down to it.
    jump = browser.find_element(By.ID, "jump-path")
    jump.clear()
    jump.send_keys("/rooms/r1/name", Keys.ENTER)
    wait(browser).until(lambda d: row(d, "/rooms/r1/name"))
    # Import a file at a path, with its progress shown.
    upload = tmp_path / "menu.json"
    upload.write_text(json.dumps({"soup": {"price": 4}, "bread": {"price": 2}}))
    row(browser, "/rooms").find_element(By.CSS_SELECTOR, ".import-node").click()
    wait(browser).until(lambda d: d.find_element(By.ID, "import-file"))
    browser.find_element(By.ID, "import-file").send_keys(str(upload))
    wait(browser).until(lambda d: "Imported" in d.find_element(By.ID, "import-status").text)
    progress = browser.find_element(By.ID, "import-progress")
    assert float(progress.get_attribute("value")) == float(progress.get_attribute("max")) > 0
    assert requests.get(f"{server.url}/rooms.json", headers=server.admin()).json() == {"soup": {"price": 4}, "bread": {"price": 2}}
    close = browser.find_elements(By.ID, "import-close")
    if close and close[0].is_displayed():
        close[0].click()
    # Export a subtree: the download is the subtree's JSON.
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    wait(browser).until(lambda d: row(d, "/rooms"))
    row(browser, "/rooms").find_element(By.CSS_SELECTOR, ".export-node").click()
    exported = downloads / f"{NS}-rooms.json"
    wait(browser).until(lambda d: exported.exists() and exported.stat().st_size > 0)
    assert json.loads(exported.read_text()) == {"soup": {"price": 4}, "bread": {"price": 2}}
    # Add a child.
    row(browser, "/rooms").find_element(By.CSS_SELECTOR, ".add-child").click()
    wait(browser).until(lambda d: d.find_element(By.ID, "add-key").is_displayed())
    browser.find_element(By.ID, "add-key").send_keys("tea")
    browser.find_element(By.ID, "add-value").send_keys('{"price": 3}')
    browser.find_element(By.ID, "add-submit").click()
    wait(browser).until(lambda d: requests.get(f"{server.url}/rooms/tea.json", headers=server.admin()).json() == {"price": 3})
    # Delete a subtree, after a confirmation naming it.
    row(browser, "/rooms").find_element(By.CSS_SELECTOR, ".delete-node").click()
    ok = wait(browser).until(lambda d: d.find_element(By.ID, "confirm-ok"))
    assert "/rooms" in browser.find_element(By.ID, "confirm-dialog").text
    ok.click()
    wait(browser).until(lambda d: requests.get(f"{server.url}/rooms.json", headers=server.admin()).json() is None)
    wait(browser).until(lambda d: row(d, "/rooms") is None)


def test_rules_with_an_error_show_it_at_its_line_then_deploy_once_fixed(server, browser):
    go(browser, f"#/rules/{NS}")
    wait(browser).until(lambda d: d.find_element(By.ID, "rules-editor").get_attribute("value"))
    broken = ('{\n  "rules": {\n    "notes": {\n      "$uid": {\n        ".read": "auth.uid == $uid &&",\n'
              '        ".write": "auth != null && auth.uid == $uid"\n      }\n    }\n  }\n}\n')
    Select(browser.find_element(By.ID, "rules-format")).select_by_value("json")
    set_editor(browser, "rules-editor", broken)
    browser.find_element(By.ID, "rules-deploy").click()
    wait(browser).until(lambda d: "Line 5" in d.find_element(By.ID, "rules-error").text)
    assert browser.find_elements(By.CSS_SELECTOR, '[data-line="5"].error-line')
    screenshots(browser, "rules-error")
    fixed = broken.replace("auth.uid == $uid &&", "auth != null && auth.uid == $uid")
    set_editor(browser, "rules-editor", fixed)
    browser.find_element(By.ID, "rules-deploy").click()
    wait(browser).until(lambda d: requests.get(f"{server.url}/.settings/rules.json", headers=server.admin()).text == fixed)
    wait(browser).until(lambda d: "Line" not in d.find_element(By.ID, "rules-error").text)
    wait(browser).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#rules-history [data-version]")) >= 1)
    # A second version, its diff against the first, and a rollback to the first.
    second = fixed.replace('"auth != null && auth.uid == $uid",\n        ".write"', '"auth != null",\n        ".write"')
    assert second != fixed
    set_editor(browser, "rules-editor", second)
    browser.find_element(By.ID, "rules-deploy").click()
    wait(browser).until(lambda d: requests.get(f"{server.url}/.settings/rules.json", headers=server.admin()).text == second)
    versions = wait(browser).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#rules-history [data-version]")) >= 2
                                   and d.find_elements(By.CSS_SELECTOR, "#rules-history [data-version]"))
    first = versions[-1]
    first.find_element(By.CSS_SELECTOR, ".diff-version").click()
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#rules-diff .diff-add")
                        and d.find_elements(By.CSS_SELECTOR, "#rules-diff .diff-del"))
    screenshots(browser, "rules-diff")
    first = browser.find_elements(By.CSS_SELECTOR, "#rules-history [data-version]")[-1]
    first.find_element(By.CSS_SELECTOR, ".rollback-version").click()
    wait(browser).until(lambda d: d.find_element(By.ID, "confirm-ok").is_displayed())
    browser.find_element(By.ID, "confirm-ok").click()
    wait(browser).until(lambda d: requests.get(f"{server.url}/.settings/rules.json", headers=server.admin()).text == fixed)


def test_a_webhook_is_deployed_its_dead_letter_seen_and_redelivered_from_the_console(server, browser):
    receiver = Receiver()
    receiver.status = 500
    try:
        go(browser, f"#/hooks/{NS}")
        wait(browser).until(lambda d: d.find_element(By.ID, "hooks-document").get_attribute("value"))
        document = {"hooks": {"onJoke": {"path": "/jokes/{jokeId}", "events": ["created"], "url": receiver.url,
                                         "secret": "console-secret-0123", "attempts": 1}}}
        set_editor(browser, "hooks-document", json.dumps(document, indent=2))
        browser.find_element(By.ID, "deploy-hooks").click()
        wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, '#hooks-status tr[data-hook="onJoke"]'))
        assert requests.put(f"{server.url}/jokes/j1.json", json={"text": "knock"}, headers=server.admin()).status_code == 200
        # The receiver refuses it once (its only attempt): parked, and shown with its error.
        letter = wait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#hooks-dead tr[data-event]"))[0]
        assert "500" in letter.text and "/jokes/j1" in letter.text
        wait(browser).until(lambda d: "500" in d.find_element(By.ID, "hooks-log").text)
        screenshots(browser, "hooks-dead-letter")
        receiver.status = 200
        letter.find_element(By.CSS_SELECTOR, ".redeliver").click()
        receiver.wait_for(lambda r: len(r.accepted()) == 1)
        assert receiver.accepted()[0]["after"] == {"text": "knock"}
        wait(browser, 20).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#hooks-dead tr[data-event]"))
        # The secret never comes back to the page.
        assert "console-secret-0123" not in browser.find_element(By.ID, "hooks-document").get_attribute("value")
    finally:
        receiver.close()


def test_a_functions_process_and_its_parked_event_are_shown_and_dismissed(server, browser, tmp_path):
    import subprocess
    probe_binary = server.binary.parent / "hearth-functions-probe"
    token = server.admin_token
    probe = subprocess.Popen(
        [str(probe_binary), "--url", f"{server.url}?ns={NS}", "--token", token, "--name", "console-probe"],
        env={**os.environ, "HEARTH_PROBE_LOG": str(tmp_path / "events.jsonl")},
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        go(browser, f"#/hooks/{NS}")
        row = wait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, '#functions-status tr[data-process="console-probe"]'))[0]
        assert "/fail/{id}" in row.text and "running" in row.text
        # The probe's failing function throws on each of its three attempts: the event is parked, shown.
        assert requests.put(f"{server.url}/fail/f1.json?ns={NS}", json=1, headers=server.admin()).status_code == 200
        parked = wait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, '#functions-parked tr[data-function="failing"]'))[0]
        assert "/fail/f1" in parked.text and "always throws" in parked.text
        screenshots(browser, "functions-parked")
        parked.find_element(By.CSS_SELECTOR, ".dismiss").click()
        wait(browser, 20).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#functions-parked tr[data-event]"))
        listed = requests.get(f"{server.url}/.settings/functions.json?ns={NS}", headers=server.admin()).json()["functions"]
        assert [(f["name"], f["parked"]) for f in listed] == [("console-probe", 0)]
    finally:
        probe.terminate()
        probe.wait(timeout=30)


def test_the_simulator_answers_as_a_real_request_does(server, browser):
    user = sign_up(server, "simulated@example.com")
    uid = user["localId"]
    requests.put(f"{server.url}/notes/{uid}.json", json={"text": "mine"}, headers=server.admin())
    go(browser, f"#/rules/{NS}")
    wait(browser).until(lambda d: d.find_element(By.ID, "sim-run"))
    cases = [(uid, f"/notes/{uid}"), ("", f"/notes/{uid}"), (uid, "/notes/someone-else")]
    for as_uid, path in cases:
        Select(browser.find_element(By.ID, "sim-operation")).select_by_value("read")
        for element_id, value in (("sim-path", path), ("sim-uid", as_uid)):
            field = browser.find_element(By.ID, element_id)
            field.clear()
            if value:
                field.send_keys(value)
        draft = browser.find_element(By.ID, "sim-draft")
        if draft.is_selected():
            draft.click()
        before = browser.find_element(By.ID, "sim-result").text
        browser.find_element(By.ID, "sim-run").click()
        wait(browser).until(lambda d: d.find_element(By.ID, "sim-result").text not in ("", before)
                            or ("Allowed" in d.find_element(By.ID, "sim-result").text) != ("Allowed" in before))
        time.sleep(0.2)
        result = browser.find_element(By.ID, "sim-result").text
        real = requests.get(f"{server.url}{path}.json", params={"auth": user["idToken"]} if as_uid else {})
        expected = "Allowed" if real.status_code == 200 else "Denied"
        assert expected in result, (as_uid, path, result, real.status_code)
        if as_uid == "":
            browser.execute_script("document.getElementById('sim-result').scrollIntoView({block: 'center'})")
            screenshots(browser, "rules-simulator")


def test_creating_and_disabling_a_user(server, browser):
    go(browser, "#/auth")
    wait(browser).until(lambda d: d.find_element(By.ID, "create-user"))
    browser.find_element(By.ID, "create-user").click()
    wait(browser).until(lambda d: d.find_element(By.ID, "new-email").is_displayed())
    browser.find_element(By.ID, "new-email").send_keys("ada@example.com")
    browser.find_element(By.ID, "new-password").send_keys("lovelace1")
    browser.find_element(By.ID, "new-name").send_keys("Ada")
    browser.find_element(By.ID, "new-submit").click()
    sign_in = f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword"
    credentials = {"email": "ada@example.com", "password": "lovelace1", "returnSecureToken": True}
    wait(browser).until(lambda d: requests.post(sign_in, params={"key": "k"}, json=credentials).status_code == 200)
    uid = requests.post(sign_in, params={"key": "k"}, json=credentials).json()["localId"]
    user_row = wait(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, f'#users-table [data-uid="{uid}"]'))
    user_row.find_element(By.CSS_SELECTOR, ".disable-user").click()
    confirm = browser.find_elements(By.ID, "confirm-ok")
    if confirm and confirm[0].is_displayed():
        confirm[0].click()
    wait(browser).until(lambda d: requests.post(sign_in, params={"key": "k"}, json=credentials).json()
                        .get("error", {}).get("message") == "USER_DISABLED")
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, f'#users-table [data-uid="{uid}"] .enable-user'))
    screenshots(browser, "auth")


def test_sign_in_providers_are_set_up_and_users_show_how_they_sign_in(server, browser):
    go(browser, "#/auth")
    configure = wait(browser).until(lambda d: d.find_element(By.ID, "configure-github.com"))
    configure.click()
    wait(browser).until(lambda d: d.find_element(By.ID, "provider-client-id").is_displayed())
    browser.find_element(By.ID, "provider-client-id").send_keys("gh-browser")
    browser.find_element(By.ID, "provider-secret").send_keys("gh-browser-secret")
    browser.find_element(By.ID, "provider-save").click()
    state = lambda d: d.find_element(By.ID, "provider-github.com-state").text  # noqa: E731
    wait(browser).until(lambda d: state(d) == "On · client gh-browser · secret set")
    assert "gh-browser-secret" not in browser.page_source
    admin = server.admin()
    config_url = f"{server.url}/identitytoolkit.googleapis.com/v2/projects/console-test/defaultSupportedIdpConfigs/github.com"
    assert requests.get(config_url, headers=admin, timeout=10).json()["clientSecret"] == "gh-browser-secret"
    # The switch turns it off, and the secret stays set.
    browser.find_element(By.ID, "provider-github.com").click()
    wait(browser).until(lambda d: state(d).startswith("Off"))
    assert requests.get(config_url, headers=admin, timeout=10).json()["enabled"] is False
    # A user linked to GitHub shows it in the table.
    accounts = f"{server.url}/identitytoolkit.googleapis.com/v1/projects/console-test/accounts"
    uid = requests.post(accounts, headers=admin, json={"email": "octo@example.com"}, timeout=10).json()["localId"]
    linked = requests.post(accounts + ":update", headers=admin, timeout=10, json={
        "localId": uid, "linkProviderUserInfo": {"providerId": "github.com", "rawId": "4242", "email": "octo@example.com"}})
    assert linked.status_code == 200, linked.text
    search = browser.find_element(By.ID, "user-search")
    search.send_keys("octo@example.com", Keys.ENTER)
    badge = wait(browser).until(lambda d: d.find_element(
        By.CSS_SELECTOR, f'#users-table [data-uid="{uid}"] .provider-badge[data-provider="github.com"]'))
    assert badge.text == "GitHub"
    screenshots(browser, "auth-users-providers")
    browser.execute_script("document.querySelector('.providers-panel').scrollIntoView({block: 'start'})")
    screenshots(browser, "auth-providers")


def test_a_blocking_hook_is_set_up_and_its_refusals_are_counted(server, browser):
    from test_blocking_hooks import BlockingReceiver, policy

    receiver = BlockingReceiver(policy)
    try:
        go(browser, "#/auth")
        wait(browser).until(lambda d: d.find_element(By.ID, "configure-beforeCreate")).click()
        wait(browser).until(lambda d: d.find_element(By.ID, "hook-url").is_displayed())
        browser.find_element(By.ID, "hook-url").send_keys(receiver.url)
        browser.find_element(By.ID, "hook-secret").send_keys("console-hook-secret")
        browser.find_element(By.ID, "hook-save").click()
        state = lambda d: d.find_element(By.ID, "hook-beforeCreate-state").text  # noqa: E731
        wait(browser).until(lambda d: state(d) == f"{receiver.url} · 7 s · fails closed")
        assert "console-hook-secret" not in browser.page_source
        # A sign-up the hook refuses, then the screen again: the refusal is counted.
        signed_up = requests.post(f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
                                  json={"email": "mallory@evil.test", "password": "secret-pass"}, timeout=30)
        assert signed_up.status_code == 400 and "BLOCKING_FUNCTION_ERROR_RESPONSE" in signed_up.text
        browser.refresh()  # the same route: the page is read again
        calls = lambda d: d.find_element(By.CSS_SELECTOR, '[data-hook="beforeCreate"] [data-status="calls"]').text  # noqa: E731
        wait(browser).until(lambda d: calls(d).startswith("1 call · 1 refused · 0 failed"))
        browser.execute_script("document.querySelector('.blocking-panel').scrollIntoView({block: 'start'})")
        screenshots(browser, "auth-blocking")
        # Removed from the screen, the hook is asked no more.
        browser.find_element(By.ID, "remove-beforeCreate").click()
        wait(browser).until(lambda d: d.find_element(By.ID, "confirm-ok").is_displayed())
        browser.find_element(By.ID, "confirm-ok").click()
        wait(browser).until(lambda d: state(d) == "Not set")
    finally:
        receiver.close()


def test_a_nodes_history_lists_who_changed_it_newest_first(server, browser):
    admin = server.admin()
    for text in ("first", "second", "third"):
        assert requests.put(f"{server.url}/story/title.json", json=text, headers=admin, timeout=10).status_code == 200
    assert requests.put(f"{server.url}/story.json", json={"title": "fourth", "by": "ada"}, headers=admin, timeout=10).status_code == 200
    go(browser, f"#/data/{NS}/")
    story = wait(browser).until(lambda d: row(d, "/story"))
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", story)
    story.find_element(By.CSS_SELECTOR, ".history-node").click()
    rows = lambda d: d.find_elements(By.CSS_SELECTOR, "#history-table tbody tr")  # noqa: E731
    wait(browser).until(lambda d: len(rows(d)) == 4)
    cells = [[cell.text for cell in r.find_elements(By.TAG_NAME, "td")] for r in rows(browser)]
    assert [c[2] for c in cells] == ["/story", "/story/title", "/story/title", "/story/title"], cells
    assert cells[0][3] == '{"title":"third"}' and cells[0][4] == '{"by":"ada","title":"fourth"}', cells[0]
    assert cells[-1][3] == "null" and cells[-1][4] == '"first"' and "admin · rest" in cells[-1][1]
    assert "4 changes, back to the oldest entry" in browser.find_element(By.ID, "history-status").text
    screenshots(browser, "data-history")
    browser.find_element(By.ID, "history-close").click()


def test_a_node_is_restored_from_its_history_into_a_new_namespace_or_in_place(server, browser):
    admin = server.admin()
    for text in ("one", "two", "three"):
        assert requests.put(f"{server.url}/poem/line.json", json=text, headers=admin, timeout=10).status_code == 200
    go(browser, f"#/data/{NS}/")
    poem = wait(browser).until(lambda d: row(d, "/poem"))
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", poem)
    poem.find_element(By.CSS_SELECTOR, ".history-node").click()
    rows = lambda d: d.find_elements(By.CSS_SELECTOR, "#history-table tbody tr")  # noqa: E731
    wait(browser).until(lambda d: len(rows(d)) == 3)
    # Just before "three": into a new namespace, the default; the confirmation names what is replaced.
    second = rows(browser)[0]
    position = second.get_attribute("data-position")
    second.find_element(By.CSS_SELECTOR, ".history-restore").click()
    wait(browser).until(lambda d: d.find_element(By.ID, "confirm-ok").is_displayed())
    message = browser.find_element(By.ID, "confirm-message").text
    assert "/poem and everything below it" in message and f"position {position}" in message, message
    screenshots(browser, "data-history-restore")
    browser.find_element(By.ID, "confirm-ok").click()
    target = f"{NS}-restored-{position}"
    wait(browser).until(lambda d: f"into the namespace {target}" in d.find_element(By.ID, "history-status").text)
    assert requests.get(f"{server.url}/poem.json", params={"ns": target}, headers=admin, timeout=10).json() == {"line": "two"}
    assert requests.get(f"{server.url}/poem.json", headers=admin, timeout=10).json() == {"line": "three"}
    # In place, just before "two": the live data changes, and the restore is the newest change listed.
    rows(browser)[1].find_element(By.CSS_SELECTOR, ".history-restore").click()
    wait(browser).until(lambda d: d.find_element(By.ID, "confirm-ok").is_displayed())
    browser.find_element(By.ID, "restore-in-place").click()
    browser.find_element(By.ID, "confirm-ok").click()
    wait(browser).until(lambda d: "in place" in d.find_element(By.ID, "history-status").text)
    assert requests.get(f"{server.url}/poem.json", headers=admin, timeout=10).json() == {"line": "one"}
    wait(browser).until(lambda d: len(rows(d)) == 4)
    newest = [cell.text for cell in rows(browser)[0].find_elements(By.TAG_NAME, "td")]
    assert newest[2] == "/poem" and "admin · rest" in newest[1], newest
    browser.find_element(By.ID, "history-close").click()


def test_a_namespace_is_restored_from_a_backup_listed_on_the_namespaces_screen(server, browser):
    admin = server.admin()
    verse = {"a": "roses", "b": {".value": "violets", ".priority": 2}}
    assert requests.put(f"{server.url}/verse.json", json=verse, headers=admin, timeout=10).status_code == 200
    change = requests.get(f"{server.url}/.history.json", params={"ns": NS, "path": "/verse", "limit": 1}, headers=admin, timeout=10).json()
    written = change["changes"][0]["position"]
    go(browser, "#/namespaces")
    # A backup made after the write (the list refreshes itself).
    holding = lambda d: [r for r in d.find_elements(By.CSS_SELECTOR, f'#backups-table tr[data-namespace="{NS}"]')  # noqa: E731
                         if int(r.get_attribute("data-position")) >= written]
    # Every namespace of this server is backed up each round, one after another: under load a round is long.
    backup = wait(browser, 180).until(holding)[0]
    name = backup.get_attribute("data-backup")
    expected = requests.get(f"{server.url}/.json", params={"format": "export"}, headers=admin, timeout=10).json()
    backup.find_element(By.CSS_SELECTOR, ".restore-backup").click()
    wait(browser).until(lambda d: d.find_element(By.ID, "confirm-ok").is_displayed())
    assert f"All of {NS} as the backup" in browser.find_element(By.ID, "confirm-message").text
    screenshots(browser, "namespaces-backups-restore")
    browser.find_element(By.ID, "confirm-ok").click()
    target = f"{NS}-restored-{name}"[:63]
    wait(browser, 60).until(lambda d: requests.get(f"{server.url}/.json", params={"ns": target, "format": "export"},
                                                   headers=admin, timeout=10).json() is not None)
    restored = requests.get(f"{server.url}/.json", params={"ns": target, "format": "export"}, headers=admin, timeout=10).json()
    assert restored["verse"] == expected["verse"] == {"a": "roses", "b": {".value": "violets", ".priority": 2}}


def test_the_usage_chart_moves_under_load(server, browser):
    go(browser, "#/usage")
    chart = wait(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, "#chart-writes path.series"))
    before = chart.get_attribute("d")
    session = requests.Session()
    deadline = time.monotonic() + 3
    index = 0
    while time.monotonic() < deadline:
        session.put(f"{server.url}/load/{index % 50}.json", json=index, headers=server.admin())
        index += 1
    wait(browser, 5).until(lambda d: d.find_element(By.CSS_SELECTOR, "#chart-writes path.series").get_attribute("d") != before)
    current = browser.find_element(By.CSS_SELECTOR, "#chart-writes .current").text
    assert any(character.isdigit() and character != "0" for character in current), current
    screenshots(browser, "usage")


def test_a_deep_link_to_a_namespace_that_does_not_exist_shows_why_and_asks_nothing_more(server, browser):
    browser.get_log("browser")  # what earlier tests logged
    go(browser, "#/data/no-such-ns/x/y")
    missing = wait(browser).until(lambda d: d.find_element(By.ID, "missing-namespace"))
    assert "There is no namespace no-such-ns" in missing.text and "Namespaces page" in missing.text
    assert browser.find_element(By.ID, "live-status").text != "Live"
    # No change feed is opened for it, so none is retried every few seconds; nothing was left unhandled.
    feeds = browser.execute_script(
        "return performance.getEntriesByType('resource').filter(e => e.name.includes('/console/api/changes?ns=no-such-ns')).length")
    assert feeds == 0
    logged = [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not [message for message in logged if "Failed to load resource" not in message], logged
    # A namespace that exists opens its feed as ever.
    go(browser, f"#/data/{NS}/")
    wait(browser).until(lambda d: d.find_element(By.ID, "live-status").text == "Live")


def test_namespaces_and_the_other_screens_look_finished(server, browser):
    go(browser, "#/namespaces")
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, f'#namespaces-table [data-namespace="{NS}"]'))
    field = browser.find_element(By.ID, "new-namespace")
    field.send_keys("shop")
    browser.find_element(By.ID, "create-namespace").click()
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, '#namespaces-table [data-namespace="shop"]'))
    assert (server.data / "shop.sqlite").exists()
    screenshots(browser, "namespaces")
    shop = browser.find_element(By.CSS_SELECTOR, '#namespaces-table [data-namespace="shop"]')
    shop.find_element(By.CSS_SELECTOR, ".delete-namespace").click()
    ok = wait(browser).until(lambda d: d.find_element(By.ID, "confirm-ok"))
    assert not ok.is_enabled(), "deleting must wait for the name to be typed"
    browser.find_element(By.ID, "confirm-name").send_keys("shop")
    wait(browser).until(lambda d: d.find_element(By.ID, "confirm-ok").is_enabled())
    browser.find_element(By.ID, "confirm-ok").click()
    wait(browser).until(lambda d: not d.find_elements(By.CSS_SELECTOR, '#namespaces-table [data-namespace="shop"]'))
    assert not (server.data / "shop.sqlite").exists()
    go(browser, "#/auth")
    wait(browser).until(lambda d: d.find_element(By.ID, "outbox"))
    go(browser, f"#/rules/{NS}")
    wait(browser).until(lambda d: d.find_element(By.ID, "rules-editor").get_attribute("value"))
    screenshots(browser, "rules")
    # The sign-in screen, as a browser without a session sees it.
    browser.delete_all_cookies()
    browser.get(server.url + "/console/?signin=failed")
    wait(browser).until(lambda d: d.find_elements(By.ID, "signin-token"))
    screenshots(browser, "signin")
