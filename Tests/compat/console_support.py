"""A `hearth serve` for the console's tests (not in emulator mode, as `make run` starts it), a sign-in link
from `hearth console link` (the banner prints one only to a terminal, and these servers' output is a pipe),
and a signed-in `requests` session that sends the console's CSRF token."""

import os
import re
import select
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from conftest import start_hearth

LINK = re.compile(r"(http://\S+/console/signin\?code=[0-9a-f]+)")
SPENT = re.compile(r"console with a sign-in link, which is now spent[^\n]*")


@dataclass
class ConsoleServer:
    process: subprocess.Popen
    port: int
    data: Path
    binary: Path
    banner: str
    link: str = ""
    stderr_text: list = field(default_factory=list)

    def new_link(self) -> str:
        """A fresh one-time sign-in link, as its owner gets one: `hearth console link` with the data directory
        (the previous link stops working)."""
        done = subprocess.run([str(self.binary), "console", "link", "--url", self.url, "--data", str(self.data)],
                              capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
        match = LINK.fullmatch(done.stdout.strip())
        assert match, done.stdout
        return match.group(1)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def admin_token(self) -> str:
        return (self.data / "admin-token").read_text().strip()

    def admin(self) -> dict:
        return {"Authorization": f"Bearer {self.admin_token}"}

    def read_stderr(self, pattern: re.Pattern, seconds: float = 5) -> re.Match:
        """Waits for the server's standard error to say something matching `pattern` (each match once)."""
        deadline = time.monotonic() + seconds
        while True:
            text = "".join(self.stderr_text)
            if match := pattern.search(text):
                self.stderr_text[:] = [text[match.end():]]
                return match
            if time.monotonic() > deadline:
                raise AssertionError(f"no {pattern.pattern} on hearth's standard error: {text}")
            self.stderr_text.append(read_available(self.process.stderr, 0.1))

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()


def read_available(stream, seconds: float) -> str:
    """What the pipe holds now (waiting up to `seconds` for something), read past Python's buffering."""
    ready, _, _ = select.select([stream.fileno()], [], [], seconds)
    return os.read(stream.fileno(), 65536).decode() if ready else ""


def start_console_server(binary, data: Path, *arguments: str) -> ConsoleServer:
    process, port = start_hearth(binary, "--data", str(data), "--project", "console-test", *arguments)
    assert process.poll() is None, process.stderr.read()
    banner = ""
    deadline = time.monotonic() + 10
    while "Stop with Ctrl-C" not in banner and time.monotonic() < deadline:
        banner += read_available(process.stdout, 0.2)
    # Output that is not a terminal (a log, a pipe) gets no link: it makes its reader the admin.
    assert not LINK.search(banner), f"a sign-in link in the banner of a server whose output is a pipe:\n{banner}"
    assert "hearth console link" in banner, banner
    server = ConsoleServer(process, port, data, Path(binary), banner)
    # The link says 127.0.0.1; the cookie is for that host, so every request below uses it too.
    server.link = server.new_link()
    return server


class Console:
    """What the console's pages do, as HTTP: a cookie session plus the CSRF header on changes."""

    def __init__(self, server: ConsoleServer, link: str | None = None):
        self.server = server
        self.http = requests.Session()
        answer = self.http.get(link or server.link, allow_redirects=False)
        assert answer.status_code == 303 and answer.headers["location"] == "/console/", answer.headers
        session = self.http.get(server.url + "/console/api/session")
        assert session.status_code == 200, session.text
        self.csrf = session.json()["csrf"]

    def get(self, path: str, **kwargs) -> requests.Response:
        headers = {"X-Hearth-CSRF": self.csrf, **kwargs.pop("headers", {})}
        return self.http.get(self.server.url + path, headers=headers, **kwargs)

    def send(self, method: str, path: str, **kwargs) -> requests.Response:
        headers = {"X-Hearth-CSRF": self.csrf, **kwargs.pop("headers", {})}
        return self.http.request(method, self.server.url + path, headers=headers, **kwargs)

    def auth(self, operation: str, body: dict) -> requests.Response:
        project = "console-test"
        path = f"/console/api/auth/identitytoolkit.googleapis.com/v1/projects/{project}/{operation}"
        return self.send("POST", path, json=body)
