"""Runs the official Firebase JS SDK's scenarios (js/*.cjs, written against the modular API) against a
Hearth server, in one of two ways:

- under node, when FIREBASE_JS_SDK_DIR names a node_modules directory with the `firebase` package (and
  `node` is on PATH): `node js/<scenario>.cjs ARGS` with NODE_PATH set to it, as an app runs the SDK;
- otherwise in Debian's headless Chromium, driven by selenium, with Google's browser "compat" bundles of
  the SDK from ../shared/vendor/firebase-js-sdk-10.14.1 (beside the repository; never copied into it):
  js/runner.html loads them and js/modular_on_compat.js, which gives the scenarios the modular functions
  they use on top of the compat API (the same implementation underneath), and runs the scenario's source
  with node's `require`, `process.argv`, `process.exit` and `console.log`.

Either way a scenario prints one JSON line, {"ok": true, ...} or {"ok": false, "error": ...}, which
`run` returns. When neither way is possible, `unavailable()` says what is missing (the tests skip with it).
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JS = Path(__file__).resolve().parent / "js"
VENDOR_NAME = "firebase-js-sdk-10.14.1"
VENDORED = ROOT.parent / "shared" / "vendor" / VENDOR_NAME
BUNDLES = ("firebase-app-compat.js", "firebase-database-compat.js", "firebase-auth-compat.js")
NODE_MODULES = os.environ.get("FIREBASE_JS_SDK_DIR", "")


def node_modules() -> Path | None:
    """FIREBASE_JS_SDK_DIR when it names a node_modules directory with firebase in it and node is on PATH."""
    if NODE_MODULES and (Path(NODE_MODULES) / "firebase" / "package.json").is_file() and shutil.which("node"):
        return Path(NODE_MODULES).resolve()
    return None


def chromium_paths() -> tuple[str, str] | str:
    """(chromium, chromedriver), or why they cannot be used."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        return ("chromium and chromedriver are needed (Debian: apt-get install chromium chromium-driver; "
                "scripts/setup installs them)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is needed (pip install -r Tests/compat/requirements.txt)"
    return browser, driver


def vendored_bundles() -> Path | str:
    """The folder of the vendored compat bundles, or why it cannot be used."""
    missing = [name for name in BUNDLES if not (VENDORED / name).is_file()]
    if not VENDORED.is_dir():
        return (f"../shared/vendor/{VENDOR_NAME} not found: {VENDORED} (and FIREBASE_JS_SDK_DIR does not name a "
                "node_modules directory with the firebase package, with node on PATH)")
    if missing:
        return f"../shared/vendor/{VENDOR_NAME} lacks {', '.join(missing)}: {VENDORED}"
    return VENDORED.resolve()


def unavailable() -> str | None:
    """None when the scenarios can run (under node or in Chromium), else what is missing."""
    if node_modules() is not None:
        return None
    bundles = vendored_bundles()
    if isinstance(bundles, str):
        return bundles
    paths = chromium_paths()
    return paths if isinstance(paths, str) else None


def start_chromium(*extra_arguments: str):
    """A headless Chromium under selenium that may load file:// pages and scripts; `extra_arguments` are
    more command-line switches."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    paths = chromium_paths()
    assert not isinstance(paths, str), paths
    binary, driver_path = paths
    options = Options()
    options.binary_location = binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--allow-file-access-from-files", "--disable-background-timer-throttling",
                     "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows", *extra_arguments):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(driver_path), options=options)


def _result(stdout_lines: list[str], what: str) -> dict:
    """The last JSON line the scenario printed (node keeps printing after it in no scenario)."""
    lines = [line for line in stdout_lines if line.startswith("{")]
    assert lines, what
    return json.loads(lines[-1])


class NodeRunner:
    """The scenarios under node, with the SDK from FIREBASE_JS_SDK_DIR."""

    mode = "node"

    def __init__(self, modules: Path):
        self.modules = modules

    def run(self, script: str, *arguments: str, timeout: float, files: dict[str, str] | None = None) -> dict:
        completed = subprocess.run(
            ["node", str(JS / script), *arguments], env=dict(os.environ, NODE_PATH=str(self.modules)),
            capture_output=True, text=True, timeout=timeout)
        return _result(completed.stdout.splitlines(),
                       f"no result from the JS SDK (node {script}, exit {completed.returncode}):\n"
                       f"{completed.stdout}\n{completed.stderr}")


# Waits in the page for the scenario's end (process.exit, or an uncaught error), at most arguments[0] ms.
WAIT_FOR_OUTCOME = """
const done = arguments[arguments.length - 1];
const timer = setTimeout(() => done(null), arguments[0]);
window.hearthFinished.then((outcome) => { clearTimeout(timer); done(outcome); });
"""
WAIT_FOR_SDK = """
const done = arguments[arguments.length - 1];
window.hearthReady.then((version) => done({version}), (error) => done({error: String(error && error.stack || error)}));
"""


class ChromiumRunner:
    """The scenarios in headless Chromium on the vendored compat bundles (js/runner.html); one browser for
    the session, each scenario in a fresh page load, left (about:blank) when it ends so that its
    connections close as a node process's would."""

    mode = "chromium"
    CHUNK_SECONDS = 20  # one WebDriver call waits at most this long (the client's HTTP timeout is 120 s)

    def __init__(self, driver, bundles: Path):
        self.driver, self.bundles = driver, bundles
        self.page = f"{(JS / 'runner.html').as_uri()}?sdk={bundles.as_uri()}"

    def run(self, script: str, *arguments: str, timeout: float, files: dict[str, str] | None = None) -> dict:
        import time

        driver = self.driver
        driver.set_script_timeout(self.CHUNK_SECONDS + 30)
        driver.get(self.page)
        try:
            loaded = driver.execute_async_script(WAIT_FOR_SDK)
            assert "error" not in loaded, f"runner.html could not load the SDK from {self.bundles}: {loaded['error']}"
            driver.execute_script("hearthRun(arguments[0])", {
                "name": script, "source": (JS / script).read_text(), "argv": list(arguments), "files": files or {}})
            deadline = time.monotonic() + timeout
            outcome = None
            while outcome is None and time.monotonic() < deadline:
                chunk = min(self.CHUNK_SECONDS, max(0.0, deadline - time.monotonic()))
                outcome = driver.execute_async_script(WAIT_FOR_OUTCOME, int(chunk * 1000))
            if outcome is None:
                output = driver.execute_script("return window.hearthOutput")
                raise AssertionError(f"{script} did not finish within {timeout} s in Chromium:\nstdout:\n"
                                     + "\n".join(output["stdout"]) + "\nstderr:\n" + "\n".join(output["stderr"]))
        finally:
            driver.get("about:blank")
        return _result(outcome["stdout"],
                       f"no result from the JS SDK ({script} in Chromium, exit {outcome['code']}):\nstdout:\n"
                       + "\n".join(outcome["stdout"]) + "\nstderr:\n" + "\n".join(outcome["stderr"]))
