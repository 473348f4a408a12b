"""The seed tutorials' apps (Examples/: jokes, social, board), driven as people use them: the real
executables in a real terminal (tmux), typed into with send-keys and read with capture-pane, against a
real `hearth serve` started as `make run` starts it (locked rules, an admin token in its data directory),
so each app also deploys its rules to a fresh namespace by itself.

When a wait fails, the message shows every pane as it was."""

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from conftest import ROOT, start_hearth

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (scripts/setup installs it)")


@pytest.fixture(scope="module")
def apps(hearth_binary) -> Path:
    """The directory of the built apps (beside the hearth binary)."""
    directory = hearth_binary.parent
    for app in ("jokes", "social", "board", "seed-functions"):
        if not os.access(directory / app, os.X_OK):
            pytest.fail(f"no {app} at {directory}: build with 'swift build' (make test does)", pytrace=False)
    return directory


class Server:
    """`hearth serve` as `make run` runs it (no --emulator), on a port and data directory of its own."""

    def __init__(self, binary: Path, data: Path):
        self.binary, self.data = binary, data
        self.port = None
        self.process = None
        self.start()

    def start(self):
        arguments = ["--data", str(self.data), "--project", "seed-test"]
        if self.port is None:
            self.process, self.port = start_hearth(self.binary, *arguments)
        else:
            # The same port again: the apps reconnect to where they were.
            self.process = subprocess.Popen(
                [str(self.binary), "serve", *arguments, "--port", str(self.port)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{self.port}/.json", timeout=1)
                    break
                except urllib.error.HTTPError:
                    break
                except OSError:
                    time.sleep(0.1)
        assert self.process.poll() is None, "hearth serve did not start"

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.communicate(timeout=20)

    @property
    def token(self) -> str:
        return (self.data / "admin-token").read_text().strip()

    def get(self, path: str, namespace: str):
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}.json?ns={namespace}", headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)

    def outbox_link(self, email: str) -> str:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/emulator/v1/projects/seed-test/oobCodes",
            headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            codes = json.load(response)["oobCodes"]
        return [code["oobLink"] for code in codes if code["email"] == email][-1]


@pytest.fixture
def server(hearth_binary, tmp_path):
    running = Server(hearth_binary, tmp_path / "hearth-data")
    yield running
    if running.process.poll() is None:
        running.stop()


class SeedFunctions:
    """The seed apps' functions process (Examples/functions) for one namespace, as `make functions` runs it."""

    def __init__(self, apps: Path, server: Server, namespace: str, log: Path):
        self.apps, self.server, self.namespace, self.log = apps, server, namespace, log
        self.process = None
        self.start()

    def start(self):
        self.process = subprocess.Popen(
            [str(self.apps / "seed-functions"), "--url", f"http://127.0.0.1:{self.server.port}?ns={self.namespace}",
             "--data", str(self.server.data)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(self.log, "a"))

    def wait_registered(self, seconds: float = 20):
        """Until the server lists the process (it registered its patterns and has a cursor)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"seed-functions exited: {self.log.read_text()[-2000:]}"
            if self.server.get("/.settings/functions", self.namespace)["functions"]:
                return
            time.sleep(0.05)
        pytest.fail(f"seed-functions did not register within {seconds} s: {self.log.read_text()[-2000:]}", pytrace=False)

    def stop(self, sig=signal.SIGTERM):
        if self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=20)


@pytest.fixture
def functions(apps, server, tmp_path):
    """Starts the seed functions for a namespace: functions(namespace)."""
    started = []

    def start(namespace: str) -> SeedFunctions:
        running = SeedFunctions(apps, server, namespace, tmp_path / f"functions-{namespace}.log")
        running.wait_registered()
        started.append(running)
        return running
    yield start
    for running in started:
        running.stop()


class Terminal:
    """A tmux server of the test's own, with a window per app; every window 100×30."""

    def __init__(self, tmp_path: Path):
        self.socket = f"hearth-test-{uuid.uuid4().hex[:8]}"
        self.tmp_path = tmp_path
        self.windows: list[str] = []

    def tmux(self, *arguments: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *arguments], capture_output=True, text=True, check=True, timeout=10).stdout

    def open(self, name: str, command: list[str], session_dir: Path):
        environment = f"HEARTH_CLIENT_CACHE_DIR={session_dir} TERM=xterm-256color"
        # The app's own warnings ([HearthClient] …) go to a file: on screen its redraw paints over them.
        line = f"{environment} {' '.join(command)} 2>>{self.stderr_file(name)}; echo '[exited]'; sleep 600"
        if not self.windows:
            self.tmux("new-session", "-d", "-s", "t", "-n", name, "-x", "100", "-y", "30", line)
        else:
            self.tmux("new-window", "-t", "t", "-n", name, line)
        self.windows.append(name)

    def keys(self, name: str, *keys: str):
        self.tmux("send-keys", "-t", f"t:{name}", *keys)

    def type(self, name: str, text: str):
        self.tmux("send-keys", "-t", f"t:{name}", "-l", text)

    def screen(self, name: str) -> str:
        return self.tmux("capture-pane", "-p", "-t", f"t:{name}")

    def stderr_file(self, name: str) -> Path:
        return self.tmp_path / f"stderr-{name}.log"

    def screens(self) -> str:
        def warnings(name: str) -> str:
            path = self.stderr_file(name)
            text = path.read_text(errors="replace").strip() if path.exists() else ""
            return f"--- its standard error ---\n{text[-2000:]}\n" if text else ""
        return "\n".join(f"--- window {name} ---\n{self.screen(name)}{warnings(name)}" for name in self.windows)

    def wait(self, name: str, check, what: str, seconds: float = 10) -> float:
        """Waits until `check(screen)` holds (a string: appears); returns the seconds it took."""
        test = (lambda screen: check in screen) if isinstance(check, str) else check
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            if test(self.screen(name)):
                return time.monotonic() - start
            time.sleep(0.05)
        pytest.fail(f"window {name}: {what} did not happen within {seconds} s. The panes:\n{self.screens()}", pytrace=False)

    def close(self):
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


@pytest.fixture
def terminal(tmp_path):
    opened = Terminal(tmp_path)
    yield opened
    opened.close()


def launch(terminal, apps, server, app: str, window: str, namespace: str, tmp_path: Path):
    url = f"'http://127.0.0.1:{server.port}?ns={namespace}'"
    terminal.open(window, [str(apps / app), "--url", url, "--data", str(server.data)], tmp_path / f"session-{window}")


def fill(terminal, window: str, *values: str):
    """Types each value into the focused field and presses Enter (the next field, then submit)."""
    for value in values:
        terminal.type(window, value)
        terminal.keys(window, "Enter")


def sign_up(terminal, window: str, email: str, username: str | None = None):
    terminal.wait(window, "Sign in", "the login screen")
    terminal.keys(window, "C-t")
    fill(terminal, window, email, "secret123", *([username] if username else []))
    signed_in(terminal, window, email)


def signed_in(terminal, window: str, email: str, seconds: float = 10):
    """Waits for the app's header naming the user (the login form shows the typed address too)."""
    terminal.wait(window, lambda screen: f"{email}  ●" in screen or f"{email}  ○" in screen, f"{email} signed in", seconds)


def test_help_explains_every_option_and_key(apps):
    for app in ("jokes", "social", "board"):
        completed = subprocess.run([str(apps / app), "--help"], capture_output=True, text=True, timeout=10)
        assert completed.returncode == 0
        assert "--url URL" in completed.stdout and "Keys:" in completed.stdout and "sign out" in completed.stdout
        wrong = subprocess.run([str(apps / app), "--nope"], capture_output=True, text=True, timeout=10)
        assert wrong.returncode == 2 and "unknown option --nope" in wrong.stderr


def test_jokes_two_users_see_each_other_live(apps, server, terminal, functions, tmp_path):
    functions("jokes1")
    launch(terminal, apps, server, "jokes", "ann", "jokes1", tmp_path)
    launch(terminal, apps, server, "jokes", "bob", "jokes1", tmp_path)
    sign_up(terminal, "ann", "ann@example.com")
    sign_up(terminal, "bob", "bob@example.com")
    # The app deployed the seed rules to the new namespace: signed-out reads are refused.
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(f"http://127.0.0.1:{server.port}/jokes.json?ns=jokes1", timeout=5)

    terminal.keys("ann", "n")
    fill(terminal, "ann", "Why did the chicken cross the road?")
    seen = terminal.wait("bob", "Why did the chicken cross the road?", "bob seeing ann's joke", seconds=5)
    assert seen < 1.0, f"bob saw the joke after {seen:.2f} s"

    # bob records his vote; the seed functions count it into the total ann sees.
    terminal.keys("bob", "v")
    counted = terminal.wait("ann", "▲  1 Why did the chicken", "ann seeing bob's vote", seconds=5)
    assert counted < 1.0, f"ann saw the vote after {counted:.2f} s"
    terminal.wait("bob", "★ ▲  1", "bob's own vote marked")
    # A second press takes the vote back: one vote per user.
    terminal.keys("bob", "v")
    terminal.wait("ann", "▲  0 Why did the chicken", "the vote taken back")
    (joke_id, joke), = server.get("/jokes", "jokes1").items()
    assert joke["votes"] == 0 and joke["text"] == "Why did the chicken cross the road?"


def test_jokes_ten_users_vote_at_once_and_the_count_is_ten(apps, server, terminal, functions, tmp_path):
    functions("jokes10")
    users = [f"voter{index}" for index in range(10)]
    for user in users:
        launch(terminal, apps, server, "jokes", user, "jokes10", tmp_path)
    for user in users:
        terminal.wait(user, "Sign in", "the login screen")
    for user in users:
        terminal.keys(user, "C-t")
        fill(terminal, user, f"{user}@example.com", "secret123")
    for user in users:
        signed_in(terminal, user, f"{user}@example.com", seconds=20)
    for user in users:
        terminal.wait(user, f"{user}@example.com  ●", "online")
    terminal.keys("voter0", "n")
    fill(terminal, "voter0", "Ten votes, please")
    for user in users:
        terminal.wait(user, "Ten votes, please", "the joke")
    for user in users:  # as close together as tmux delivers them
        terminal.keys(user, "v")
    for user in users:
        terminal.wait(user, "▲ 10 Ten votes", "the count at 10", seconds=15)
    (joke_id, joke), = server.get("/jokes", "jokes10").items()
    assert joke["votes"] == 10
    votes = server.get("/votes", "jokes10")
    assert len(votes) == 10 and all(list(mine) == [joke_id] for mine in votes.values())
    # The board the functions keep has it at the top, with its total.
    terminal.keys("voter3", "t")
    terminal.wait("voter3", " 1. ▲ 10 Ten votes, please", "the top-10 board")
    assert server.get("/board", "jokes10") == {joke_id: {"text": "Ten votes, please", "authorName": "voter0", "votes": 10}}


def test_jokes_totals_and_board_come_right_when_the_functions_are_killed(apps, server, terminal, functions, tmp_path):
    # Votes written while the functions process is killed (SIGKILL) and restarted are all counted once
    # it is back: the server kept its place in the feed. Writes go over REST as admin, many at a time.
    running = functions("killed")
    token = server.token

    def put(path: str, value):
        request = urllib.request.Request(
            f"http://127.0.0.1:{server.port}{path}.json?ns=killed", data=json.dumps(value).encode(), method="PUT",
            headers={"Authorization": f"Bearer {token}"})
        urllib.request.urlopen(request, timeout=10).read()

    jokes = [f"j{index:02}" for index in range(12)]
    for joke in jokes:
        put(f"/jokes/{joke}", {"text": f"joke {joke}", "author": "ann", "votes": 0})
    expected = {}
    for round_ in range(3):
        for index, joke in enumerate(jokes):
            voters = [f"u{n}" for n in range(index + round_ * 2)]
            for voter in voters:
                put(f"/votes/{voter}/{joke}", True)
            expected[joke] = len(voters)
            if index == 5:
                running.stop(signal.SIGKILL)
            if index == 8:
                running.start()
    # One vote taken back, and a joke deleted: it leaves the board.
    put("/votes/u0/j11", None)
    expected["j11"] -= 1
    put("/jokes/j10", None)
    del expected["j10"]
    top = sorted(expected, key=lambda joke: (-expected[joke], joke))[:10]
    wanted = {
        "totals": expected,
        "board": {joke: expected[joke] for joke in top},
        # Every vote's event handled: j11's last voters, u0's vote taken back. Without it, totals and board
        # can match on the way (j11 passes 14 before it reaches 15 and comes back to 14), and the board,
        # rebuilt after each total, lags the totals: under load the board was read one rebuild behind.
        "voters of j11": [f"u{n}" for n in range(1, 15)],
    }

    def state() -> dict:
        jokes = server.get("/jokes", "killed") or {}
        board = server.get("/board", "killed") or {}
        return {
            "totals": {key: joke.get("votes") for key, joke in jokes.items()},
            "board": {key: entry.get("votes") for key, entry in board.items()},
            "voters of j11": sorted(server.get("/voters/j11", "killed") or {}, key=lambda uid: int(uid[1:])),
        }

    deadline = time.monotonic() + 30
    seen = state()
    while seen != wanted and time.monotonic() < deadline:
        time.sleep(0.1)
        seen = state()
    for part in wanted:
        assert seen[part] == wanted[part], part


def test_a_session_survives_an_app_restart(apps, server, terminal, tmp_path):
    launch(terminal, apps, server, "jokes", "ann", "session", tmp_path)
    sign_up(terminal, "ann", "ann@example.com")
    terminal.keys("ann", "q")
    terminal.wait("ann", "[exited]", "the app quitting")
    # The same session directory as before: no login screen.
    terminal.open("again", [str(apps / "jokes"), "--url", f"'http://127.0.0.1:{server.port}?ns=session'", "--data", str(server.data)],
                  tmp_path / "session-ann")
    signed_in(terminal, "again", "ann@example.com")
    assert "Sign in" not in terminal.screen("again")
    # Signing out forgets it.
    terminal.keys("again", "o")
    terminal.wait("again", "Sign in", "the login screen after signing out")


def test_social_usernames_and_follows_on_both_sides(apps, server, terminal, functions, tmp_path):
    functions("social")
    launch(terminal, apps, server, "social", "carol", "social", tmp_path)
    launch(terminal, apps, server, "social", "dave", "social", tmp_path)
    sign_up(terminal, "carol", "carol@example.com", "carol")
    sign_up(terminal, "dave", "dave@example.com", "dave")
    terminal.wait("dave", "@carol", "carol in dave's list")
    terminal.keys("dave", "f")
    terminal.wait("carol", "Following you: @dave", "carol seeing her new follower")
    terminal.wait("carol", "You: @carol   1 follower", "carol's count")
    terminal.wait("dave", "✓ following", "dave's follow marked")
    assert server.get("/followers/" + server.get("/usernames/carol", "social"), "social") is not None
    terminal.keys("dave", "f")
    terminal.wait("carol", "Following you: nobody yet", "the unfollow")
    terminal.wait("carol", "You: @carol   0 followers", "the count back to 0")
    carol_uid = server.get("/usernames/carol", "social")
    dave_uid = server.get("/usernames/dave", "social")
    assert server.get(f"/followers/{carol_uid}", "social") is None and server.get(f"/following/{dave_uid}", "social") is None

    # Log in by username; a taken username is refused and the account is not kept.
    terminal.keys("carol", "o")
    terminal.wait("carol", "Email or username", "the login screen")
    fill(terminal, "carol", "carol", "secret123")
    signed_in(terminal, "carol", "carol@example.com")
    terminal.keys("dave", "o")
    terminal.wait("dave", "Sign in", "the login screen")
    terminal.keys("dave", "C-t")
    fill(terminal, "dave", "eve@example.com", "secret123", "carol")
    terminal.wait("dave", "The username @carol is taken", "the refusal")
    assert "Create an account" in terminal.screen("dave")


def test_an_account_made_in_another_app_chooses_its_username_in_social(apps, server, terminal, tmp_path):
    # The apps share accounts and the signed-in session: an account made in jokes opens social signed in,
    # with no profile there yet.
    launch(terminal, apps, server, "jokes", "hal", "shared", tmp_path)
    sign_up(terminal, "hal", "hal@example.com")
    terminal.keys("hal", "q")
    terminal.wait("hal", "[exited]", "jokes quitting")
    launch(terminal, apps, server, "social", "ivy", "shared", tmp_path)
    sign_up(terminal, "ivy", "ivy@example.com", "ivy")
    terminal.open("hal-social", [str(apps / "social"), "--url", f"'http://127.0.0.1:{server.port}?ns=shared'", "--data", str(server.data)],
                  tmp_path / "session-hal")
    signed_in(terminal, "hal-social", "hal@example.com")
    terminal.wait("hal-social", "No profile here yet", "the missing profile explained")
    terminal.keys("hal-social", "u")
    fill(terminal, "hal-social", "ivy")
    terminal.wait("hal-social", "The username @ivy is taken", "a taken username refused")
    terminal.keys("hal-social", "u")
    fill(terminal, "hal-social", "Hal")
    terminal.wait("hal-social", "You: @hal   0 followers", "the new profile")
    terminal.wait("ivy", "@hal", "ivy seeing hal in the list")
    hal_uid = server.get("/usernames/hal", "shared")
    assert server.get(f"/users/{hal_uid}", "shared")["username"] == "hal"
    assert server.get(f"/emails/{hal_uid}", "shared") == "hal@example.com"
    # Logging in by the new username works.
    terminal.keys("hal-social", "o")
    terminal.wait("hal-social", "Email or username", "the login screen")
    fill(terminal, "hal-social", "hal", "secret123")
    signed_in(terminal, "hal-social", "hal@example.com")


def test_board_posts_need_verification_and_survive_the_server_going_away(apps, server, terminal, tmp_path):
    launch(terminal, apps, server, "board", "fay", "board", tmp_path)
    launch(terminal, apps, server, "board", "gus", "board", tmp_path)
    sign_up(terminal, "fay", "fay@example.com")
    sign_up(terminal, "gus", "gus@example.com")

    # The message board, with every child event shown as it happens.
    terminal.keys("fay", "n")
    fill(terminal, "fay", "hello board")
    terminal.wait("gus", "fay: hello board", "gus seeing fay's message")
    terminal.wait("gus", "childAdded", "the event log")
    terminal.keys("fay", "e")
    fill(terminal, "fay", "!")
    terminal.wait("gus", "fay: hello board!", "the edit")
    terminal.wait("gus", "childChanged", "the change event")

    # Posts: refused until the address is verified with the emailed link.
    terminal.keys("fay", "Tab")
    terminal.wait("fay", "Posting needs a verified email address", "the verification notice")
    terminal.keys("fay", "s")
    terminal.wait("fay", "then press r", "the link sent")
    urllib.request.urlopen(server.outbox_link("fay@example.com"), timeout=10).read()
    terminal.keys("fay", "r")
    terminal.wait("fay", "Verified", "the verification noticed")
    terminal.keys("fay", "n")
    fill(terminal, "fay", "Online post", "written with the server up")
    terminal.wait("fay", "Posted.", "the post acknowledged")

    # The server goes away; a post shows at once and reaches the server when it is back.
    server.stop()
    terminal.wait("fay", "○ offline", "the offline header")
    terminal.keys("fay", "n")
    fill(terminal, "fay", "Offline post", "written with the server down")
    terminal.wait("fay", "Offline post — written with the server down", "the offline post shown at once", seconds=2)
    server.start()
    terminal.wait("fay", "● online", "the reconnection", seconds=30)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        posts = server.get("/posts", "board") or {}
        titles = sorted(post["title"] for mine in posts.values() for post in mine.values())
        if titles == ["Offline post", "Online post"]:
            break
        time.sleep(0.2)
    assert titles == ["Offline post", "Online post"], terminal.screens()
    created = [post["createdAt"] for mine in posts.values() for post in mine.values()]
    assert all(isinstance(value, int) and value > 1_700_000_000_000 for value in created)  # the server's time
