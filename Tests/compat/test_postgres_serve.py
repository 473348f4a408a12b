"""`hearth serve --storage postgresql://…` and the data commands against a PostgreSQL of the tests' own
(postgres_support.py): data over REST, firebase-admin and the realtime protocol lands in PostgreSQL and
survives a restart; the console lists, creates and deletes namespaces there; deployed rules and their
history come back after a restart; export, import and backup round-trip; a wrong password, a stopped
PostgreSQL and a frozen one give clear errors without the password, and never stall the event loop."""

import json
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import firebase_admin
import pytest
import requests
from firebase_admin import db

from conftest import start_hearth
from console_support import Console, read_available, start_console_server
from postgres_support import postgres  # noqa: F401 (the fixture)
from test_realtime import Client


@dataclass
class Served:
    """A `hearth serve --storage` process, with what it printed."""

    process: subprocess.Popen
    port: int
    host: str = "127.0.0.1"
    banner: str = ""
    stderr: str = ""

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def read_stderr(self, text: str, seconds: float) -> str:
        """Standard error so far, once it says `text` (or after `seconds`)."""
        deadline = time.monotonic() + seconds
        while text not in self.stderr and time.monotonic() < deadline:
            self.stderr += read_available(self.process.stderr, 0.2)
        return self.stderr

    def stop(self) -> tuple[int, str]:
        self.process.terminate()
        out, err = self.process.communicate(timeout=30)
        self.banner += out
        self.stderr += err
        return self.process.returncode, err


def serve(binary, data: Path, storage: str, *arguments: str) -> Served:
    """`hearth serve --emulator --storage URL` on a free port, its banner read."""
    process, port = start_hearth(binary, "--emulator", "--data", str(data), "--project", "pg-test", "--storage", storage, *arguments)
    assert process.poll() is None, process.communicate()
    banner = ""
    deadline = time.monotonic() + 10
    while "Stop with Ctrl-C" not in banner and time.monotonic() < deadline:
        banner += read_available(process.stdout, 0.2)
    return Served(process, port, banner=banner)


def run_hearth(binary, *arguments: str, environment: dict | None = None, cwd: Path | None = None, timeout: float = 60):
    return subprocess.run([str(binary), *arguments], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(environment or {})}, cwd=cwd, stdin=subprocess.DEVNULL)


def rows(postgres, namespace: str) -> dict:
    """How many rows each of Hearth's tables holds for `namespace`."""
    tables = ("hearth_records", "hearth_changes", "hearth_rules", "hearth_namespaces")
    return {table: int(postgres.sql(f"SELECT count(*) FROM {table} WHERE namespace = '{namespace}'")) for table in tables}


def eventually(condition, seconds: float = 20):
    deadline = time.monotonic() + seconds
    while not (result := condition()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return result


class _NoCredential(firebase_admin.credentials.Base):
    def get_credential(self):
        raise AssertionError("credentials are not used in emulator mode")


def test_rest_admin_and_realtime_data_is_in_postgres_and_survives_a_restart(postgres, hearth_binary, tmp_path):
    served = serve(hearth_binary, tmp_path / "data", postgres.url)
    assert f"PostgreSQL {postgres.shown_url}" in served.banner and postgres.password not in served.banner
    assert "keeps the admin token (give every node the same one)" in served.banner
    assert "accounts and the signing key in PostgreSQL, shared by every node" in served.banner

    assert requests.put(f"{served.url}/users/ada.json?ns=app", json={"name": "Ada", "born": 1815}).status_code == 200
    app = firebase_admin.initialize_app(_NoCredential(), {"databaseURL": f"{served.url}/?ns=admin-app", "projectId": "pg-test"},
                                        name=f"pg-{served.port}")
    try:
        ref = db.reference("scores", app=app)
        ref.set({"a": 1})
        ref.update({"b": 2})
        pushed = db.reference("log", app=app).push({"at": 1})
        assert ref.get() == {"a": 1, "b": 2}
    finally:
        firebase_admin.delete_app(app)
    realtime = Client(served, ns="live")
    _, answer = realtime.call("p", {"p": "/room/topic", "d": "hello"})
    assert answer["s"] == "ok"
    _, listened = realtime.call("q", {"p": "/room", "h": ""})
    assert listened["s"] == "ok"
    realtime.close()

    assert postgres.sql("SELECT value FROM hearth_records_readable WHERE namespace = 'app' AND path = '/users/ada/name'") == "Ada"
    assert postgres.sql("SELECT value FROM hearth_records_readable WHERE namespace = 'live'") == "hello"
    assert set(postgres.sql("SELECT namespace FROM hearth_namespaces").split()) >= {"app", "admin-app", "live"}
    assert {path.name for path in (tmp_path / "data").glob("*.sqlite")} <= {"auth.sqlite"}, "no namespace in SQLite"

    status, err = served.stop()
    assert status == 0 and "stopped cleanly" in err and postgres.password not in err
    again = serve(hearth_binary, tmp_path / "data", postgres.url)
    try:
        assert requests.get(f"{again.url}/users/ada.json?ns=app").json() == {"name": "Ada", "born": 1815}
        assert requests.get(f"{again.url}/scores.json?ns=admin-app").json() == {"a": 1, "b": 2}
        assert requests.get(f"{again.url}/log/{pushed.key}/at.json?ns=admin-app").json() == 1
        realtime = Client(again, ns="live")
        _, listened = realtime.call("q", {"p": "/room", "h": ""})
        assert listened["s"] == "ok"
        assert any(m["d"].get("b", {}).get("d") == {"topic": "hello"} for m in realtime.messages if m["t"] == "d"), realtime.messages
        realtime.close()
    finally:
        assert again.stop()[0] == 0


def test_the_console_lists_creates_and_deletes_namespaces_in_postgres(postgres, hearth_binary, tmp_path):
    server = start_console_server(hearth_binary, tmp_path / "data", "--storage", postgres.url)
    try:
        console = Console(server)
        assert console.send("POST", "/console/api/namespaces", json={"name": "shop"}).status_code == 201
        assert console.send("POST", "/console/api/namespaces", json={"name": "shop"}).status_code == 409
        assert rows(postgres, "shop")["hearth_namespaces"] == 1, "an empty namespace exists too"
        assert requests.put(f"{server.url}/item.json?ns=shop", json="a" * 1000, headers=server.admin()).status_code == 200

        def listed():
            return {row["name"]: row for row in console.get("/console/api/namespaces").json()["namespaces"]}

        # Bytes come from the catalogue's measurement, which runs every few seconds here.
        assert eventually(lambda: listed().get("shop", {}).get("bytes", 0) > 1000), listed()
        # One made by another server shows at the catalogue's next refresh.
        postgres.sql("INSERT INTO hearth_namespaces (namespace) VALUES ('elsewhere')")
        assert eventually(lambda: "elsewhere" in listed(), seconds=10)
        assert requests.get(f"{server.url}/.json?ns=elsewhere").status_code == 401, "it exists: the (locked) rules refuse"

        assert console.send("DELETE", "/console/api/namespaces/shop", json={"confirm": "shop"}).status_code == 200
        assert rows(postgres, "shop") == {"hearth_records": 0, "hearth_changes": 0, "hearth_rules": 0, "hearth_namespaces": 0}
        assert "shop" not in listed()
        assert requests.get(f"{server.url}/item.json?ns=shop").status_code == 404
    finally:
        server.stop()


def test_rules_are_kept_in_postgres_with_their_history_across_a_restart(postgres, hearth_binary, tmp_path):
    data = tmp_path / "data"
    server = start_console_server(hearth_binary, data, "--storage", postgres.url)
    first = '{"rules": {".read": false, ".write": false}}'
    second = '{\n  // public notes only\n  "rules": {"notes": {".read": true}, ".read": false, ".write": false}\n}'
    try:
        admin = server.admin()
        assert requests.put(f"{server.url}/notes/n1.json?ns=guarded", json="hi", headers=admin).status_code == 200
        assert requests.put(f"{server.url}/secret.json?ns=guarded", json="s", headers=admin).status_code == 200
        assert requests.put(f"{server.url}/.settings/rules.json?ns=guarded", data=first, headers=admin).status_code == 200
        deployed = Console(server).send("POST", "/console/api/rules/deploy?ns=guarded", json={"source": second, "format": "json"})
        assert deployed.status_code == 200 and deployed.json()["version"] == 2, deployed.text
    finally:
        server.stop()
    assert not list(data.glob("*.rules*")), "the rules are in PostgreSQL, not in files"
    assert postgres.sql("SELECT string_agg(version::text, ',' ORDER BY version) FROM hearth_rules WHERE namespace = 'guarded'") == "1,2"

    server = start_console_server(hearth_binary, data, "--storage", postgres.url)
    try:
        assert requests.get(f"{server.url}/notes/n1.json?ns=guarded").status_code == 200
        assert requests.get(f"{server.url}/secret.json?ns=guarded").status_code == 401
        assert requests.get(f"{server.url}/.settings/rules.json?ns=guarded", headers=server.admin()).text == second
        rules = Console(server).get("/console/api/rules", params={"ns": "guarded"}).json()
        assert [row["version"] for row in rules["history"]] == [2, 1]
        assert rules["history"][0]["current"] is True and rules["source"] == second
    finally:
        server.stop()


def test_export_import_and_backup_round_trip_with_storage(postgres, hearth_binary, tmp_path):
    export = {"books": {"b1": {".priority": 2, "title": "Emma"}, "b2": {"title": "Persuasion", "tags": {"0": "navy"}}}}
    source = tmp_path / "books.json"
    source.write_text(json.dumps(export))
    imported = run_hearth(hearth_binary, "import", "library", str(source), "--storage", postgres.url)
    assert imported.returncode == 0, imported.stderr
    assert f"into PostgreSQL {postgres.shown_url} namespace 'library'" in imported.stdout
    assert "hearth import: read 0 MB (100%), wrote" in imported.stderr
    for output in (imported.stdout, imported.stderr):
        assert postgres.password not in output

    exported = run_hearth(hearth_binary, "export", "library", "--storage", postgres.url)
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout) == export
    # HEARTH_STORAGE instead of the flag (a password stays out of ps).
    backup = tmp_path / "library-backup.json"
    backed = run_hearth(hearth_binary, "backup", "library", str(backup), environment={"HEARTH_STORAGE": postgres.url})
    assert backed.returncode == 0, backed.stderr
    assert "hearth backup: read" in backed.stderr and postgres.password not in backed.stdout
    assert json.loads(backup.read_text()) == export
    restored = run_hearth(hearth_binary, "import", "copy", str(backup), environment={"HEARTH_STORAGE": postgres.url})
    assert restored.returncode == 0, restored.stderr
    assert json.loads(run_hearth(hearth_binary, "export", "copy", "--storage", postgres.url).stdout) == export

    # The server reads what was imported.
    served = serve(hearth_binary, tmp_path / "data", postgres.url)
    try:
        assert requests.get(f"{served.url}/books/b1/title.json?ns=library").json() == "Emma"
    finally:
        served.stop()
    missing = run_hearth(hearth_binary, "export", "nothing-here", "--storage", postgres.url)
    assert missing.returncode == 1 and "no namespace 'nothing-here' in PostgreSQL" in missing.stderr


def test_a_large_import_streams_into_postgres_and_a_running_server_reloads_it(postgres, hearth_binary, tmp_path):
    served = serve(hearth_binary, tmp_path / "data", postgres.url)
    ns = "streamed"
    try:
        requests.put(f"{served.url}/old.json?ns={ns}", json="before", timeout=10).raise_for_status()
        listener = Client(served, ns=ns, timeout=30)
        _, reply = listener.call("q", {"p": "/", "h": ""})
        assert reply["s"] == "ok"
        # An object of 5 MB: past the importer's 4 MB whole-value limit, so it is walked key by key. Its
        # first key comes again at the end: the last value wins, as when parsing it whole.
        entries = ",".join(f'"k{i}": {{"text": "{"x" * 80}", "n": {i}}}' for i in range(50_000))
        source = tmp_path / "big.json"
        source.write_text('{"big": {' + entries + ', "k0": {"text": "last", "n": -1}}, "title": "streamed"}')
        assert source.stat().st_size > 4 << 20
        imported = run_hearth(hearth_binary, "import", ns, str(source), "--storage", postgres.url)
        assert imported.returncode == 0, imported.stderr
        assert "wrote 100001 records" in imported.stderr, imported.stderr

        # The server following the namespace reloads it (the change log holds a marker, not the tree).
        assert eventually(lambda: requests.get(f"{served.url}/big/k0.json?ns={ns}", timeout=10).json()
                          == {"text": "last", "n": -1})
        assert requests.get(f"{served.url}/old.json?ns={ns}", timeout=10).json() is None
        assert len(requests.get(f"{served.url}/big.json?ns={ns}&shallow=true", timeout=30).json()) == 50_000
        push = listener.next_push()
        assert push["b"]["p"].strip("/") == "" and push["b"]["d"]["title"] == "streamed"

        # A file that is not a valid export changes nothing.
        bad = tmp_path / "bad.json"
        bad.write_text('{"big": {"a": 1,')
        failed = run_hearth(hearth_binary, "import", ns, str(bad), "--storage", postgres.url)
        assert failed.returncode != 0 and "not valid Firebase JSON" in failed.stderr, failed.stderr
        exported = json.loads(run_hearth(hearth_binary, "export", ns, "--storage", postgres.url).stdout)
        assert len(exported["big"]) == 50_000 and exported["big"]["k49999"]["n"] == 49_999
    finally:
        served.stop()


def test_a_wrong_password_or_a_stopped_postgres_stop_hearth_with_the_reason(postgres, hearth_binary, tmp_path):
    wrong = postgres.url.replace(postgres.password, "not-the-password-42")
    process, _ = start_hearth(hearth_binary, "--emulator", "--data", str(tmp_path / "data"), "--storage", wrong)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 1, err
    assert "password authentication failed" in err and "Check the user and password in the URL" in err
    assert "not-the-password-42" not in err + out and "Stop with Ctrl-C" not in out
    exported = run_hearth(hearth_binary, "export", "x", environment={"HEARTH_STORAGE": wrong})
    assert exported.returncode == 1 and "password authentication failed" in exported.stderr
    assert "not-the-password-42" not in exported.stderr

    refused = run_hearth(hearth_binary, "serve", "--storage", "mysql://ada:not-the-password-42@db/app")
    assert refused.returncode == 64 and "'mysql://'" in refused.stderr and "not-the-password-42" not in refused.stderr

    postgres.stop()
    try:
        process, _ = start_hearth(hearth_binary, "--emulator", "--data", str(tmp_path / "data"), "--storage", postgres.url)
        out, err = process.communicate(timeout=30)
        assert process.returncode == 1, err
        assert f"cannot connect to PostgreSQL at {postgres.shown_url}" in err and "Nothing accepts connections" in err
        assert postgres.password not in err + out
    finally:
        postgres.start()


def test_postgres_stopping_under_a_running_server_fails_writes_and_they_recover(postgres, hearth_binary, tmp_path):
    served = serve(hearth_binary, tmp_path / "data", postgres.url)
    try:
        assert requests.put(f"{served.url}/kept.json?ns=steady", json=1).status_code == 200
        postgres.stop()
        try:
            # A read of loaded data cannot be confirmed fresh (other nodes may write this namespace), so it
            # is refused, saying why (docs/scaling.md); a write fails with the reason, not the password.
            read = requests.get(f"{served.url}/kept.json?ns=steady", timeout=5)
            assert read.status_code == 503 and "could not confirm" in read.text and postgres.password not in read.text, read.text
            failed = requests.put(f"{served.url}/lost.json?ns=steady", json=2, timeout=15)
            assert failed.status_code >= 500 and postgres.password not in failed.text
            unopened = requests.get(f"{served.url}/x.json?ns=never-opened", timeout=15)
            assert unopened.status_code == 500 and "PostgreSQL" in unopened.text and postgres.password not in unopened.text
            # The catalogue's next refresh (every 5 s) fails, and says so once.
            assert "Serving the last known namespace list" in served.read_stderr("Serving the last known", 15)
        finally:
            postgres.start()
        assert eventually(lambda: requests.put(f"{served.url}/back.json?ns=steady", json=3).status_code == 200, seconds=15)
        assert requests.get(f"{served.url}/.json?ns=steady").json() == {"kept": 1, "back": 3}
        assert "answers again" in served.read_stderr("answers again", 15)
    finally:
        status, _ = served.stop()
    assert status == 0 and postgres.password not in served.stderr + served.banner
    assert served.stderr.count("Serving the last known") == 1, served.stderr


def test_the_loop_answers_other_namespaces_while_postgres_is_frozen(postgres, hearth_binary, tmp_path):
    served = serve(hearth_binary, tmp_path / "data", postgres.url)
    owner = {"Authorization": "Bearer owner"}
    answers: dict = {}
    try:
        assert requests.put(f"{served.url}/x.json?ns=warm", json=1).status_code == 200
        postgres.freeze()
        try:
            # Each of these waits on PostgreSQL, off the loop: a namespace to open, a write to commit, rules
            # to store.
            slow = {
                "open": lambda: requests.get(f"{served.url}/x.json?ns=cold", timeout=30),
                "write": lambda: requests.put(f"{served.url}/y.json?ns=warm", json=2, timeout=30),
                "rules": lambda: requests.put(f"{served.url}/.settings/rules.json?ns=warm", headers=owner,
                                              data='{"rules": {".read": true, ".write": true}}', timeout=30),
            }
            threads = [threading.Thread(target=lambda k=k, f=f: answers.__setitem__(k, f()), daemon=True) for k, f in slow.items()]
            for thread in threads:
                thread.start()
            time.sleep(0.5)
            for _ in range(10):
                started = time.monotonic()
                assert requests.get(f"{served.url}/.info/node.json", timeout=5).status_code == 200
                # /metrics asks the catalogue for every namespace's bytes: memory, not PostgreSQL.
                assert requests.get(f"{served.url}/metrics", headers=owner, timeout=5).status_code == 200
                assert time.monotonic() - started < 1, "the loop waited on PostgreSQL"
                time.sleep(0.2)
            # A read of loaded data waits for this node to catch up with PostgreSQL (other nodes may write
            # it), off the loop, and is refused within its bound rather than answered possibly stale.
            started = time.monotonic()
            read = requests.get(f"{served.url}/x.json?ns=warm", timeout=10)
            assert read.status_code == 503 and "could not confirm" in read.text, read.text
            assert time.monotonic() - started < 3, "the read's wait is bounded"
            # Whatever was answered meanwhile gave up on PostgreSQL (connect 3 s, commit 5 s): never a success.
            during = dict(answers)
            assert all(answer.status_code >= 500 for answer in during.values()), {k: a.text for k, a in during.items()}
        finally:
            postgres.thaw()
        for thread in threads:
            thread.join(timeout=30)
        assert set(answers) == {"open", "write", "rules"}
        assert eventually(lambda: requests.put(f"{served.url}/z.json?ns=warm", json=3).status_code == 200, seconds=15)
    finally:
        assert served.stop()[0] == 0
