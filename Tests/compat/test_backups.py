"""Scheduled backups and restores from them (docs/operations.md) through the real server and commands:
`hearth serve --backup-every --backup-keep` makes verified backups of every namespace while writes go on
and keeps the newest; `hearth backups list` shows them with what they can restore to and `verify`
catches a damaged one; `hearth restore --from-backups` (the newest backup before the moment plus the
feed's writes after it) is exact at every moment of a random load; a backup older than the feed still
restores its own instant; with the server stopped, restore works on the storage itself (SQLite and
PostgreSQL) and an in-place restore is in the history; a backup that never finished is never listed."""

import json
import random
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
import requests

from conftest import start_hearth
from postgres_support import postgres  # noqa: F401 (the fixture)
from test_restore import NS, OWNER, export, feed_after, random_load


def serve(hearth_binary, data, *arguments):
    process, port = start_hearth(hearth_binary, "--emulator", "--data", str(data), "--project", "backups", *arguments)
    assert process.poll() is None, process.communicate()[1]
    return process, f"http://127.0.0.1:{port}", port


def stop(process):
    process.terminate()
    process.wait(30)


def manifests(data, ns=NS, backup_dir=None):
    """The verified backups of `ns` now: {directory name: manifest}."""
    folder = Path(backup_dir or Path(data) / "backups") / ns
    found = {}
    for manifest in folder.glob("*/backup.json") if folder.exists() else []:
        try:
            found[manifest.parent.name] = json.loads(manifest.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            pass  # removed (or being written) as we looked
    return found


def wait_for_backup(data, condition, seconds=60, ns=NS):
    """Waits until a verified backup of `ns` satisfies `condition`; returns (its name, its manifest)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for name, manifest in sorted(manifests(data, ns).items()):
            if condition(manifest):
                return name, manifest
        time.sleep(0.05)
    raise AssertionError(f"no backup of {ns} such as asked within {seconds} s: {manifests(data, ns)}")


def hearth(hearth_binary, *arguments):
    return subprocess.run([str(hearth_binary), *arguments], capture_output=True, text=True, timeout=120)


def restore(hearth_binary, url, *arguments, ns=NS):
    return hearth(hearth_binary, "restore", ns, *arguments, "--url", url, "--token", "owner")


def iso(milliseconds):
    return datetime.fromtimestamp(milliseconds / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_backups_are_made_verified_kept_and_listed_and_a_damaged_one_is_caught(hearth_binary, tmp_path):
    process, url, port = serve(hearth_binary, tmp_path, "--backup-every", "1s", "--backup-keep", "2")
    try:
        random_load(url, port, writes=10, seed=1)
        seen = set()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            now = manifests(tmp_path)
            seen |= set(now)
            if len(seen) >= 3 and len(now) == 2:
                break
            time.sleep(0.05)
        assert len(seen) >= 3 and len(manifests(tmp_path)) == 2, (seen, manifests(tmp_path))
        assert all(m["format"] == "sqlite" and m["namespace"] == NS and m["bytes"] > 0 for m in manifests(tmp_path).values())
    finally:
        stop(process)
    listed = hearth(hearth_binary, "backups", "list", "--data", str(tmp_path))
    assert listed.returncode == 0, listed.stderr
    rows = [line for line in listed.stdout.splitlines() if line.startswith(NS + " ")]
    assert len(rows) == 2 and all("→ now" in row for row in rows), listed.stdout
    assert sorted(manifests(tmp_path)) == sorted(row.split()[-1] for row in rows)
    verified = hearth(hearth_binary, "backups", "verify", NS, "--data", str(tmp_path))
    assert verified.returncode == 0 and verified.stdout.count("verified") == 2, verified.stdout + verified.stderr

    # A copy damaged on disk is caught, named, and not mistaken for a good one.
    name = sorted(manifests(tmp_path))[0]
    data_file = tmp_path / "backups" / NS / name / f"{NS}.sqlite"
    data_file.write_bytes(b"\x00" * data_file.stat().st_size)
    damaged = hearth(hearth_binary, "backups", "verify", NS, name, "--data", str(tmp_path))
    assert damaged.returncode == 1 and name in damaged.stderr and "Use another backup" in damaged.stderr, damaged.stderr


def test_restore_from_backups_is_exact_at_every_moment(hearth_binary, tmp_path):
    process, url, port = serve(hearth_binary, tmp_path, "--backup-every", "1s", "--backup-keep", "100")
    try:
        recorded = []
        for chunk in range(3):
            # Each stretch of writes after a backup that holds the ones before it.
            last = recorded[-1][0] if recorded else 0
            if recorded:
                wait_for_backup(tmp_path, lambda manifest: manifest["position"] >= last)
            recorded += random_load(url, port, writes=25, seed=20 + chunk, after=last)
        first_backup = min(m["position"] for m in manifests(tmp_path).values())
        rng = random.Random(5)
        candidates = [k for k in range(len(recorded) - 1) if recorded[k][0] >= first_backup]
        for k in sorted(rng.sample(candidates, 10)) + [len(recorded) - 2]:
            target = f"{NS}-b{k}"
            done = restore(hearth_binary, url, "--before-position", str(recorded[k + 1][0]), "--from-backups", "--into", target,
                           "--data", str(tmp_path))
            assert done.returncode == 0, done.stderr
            assert "the backup" in done.stdout, done.stdout
            assert export(url, target) == recorded[k][2], f"restored from a backup before write {k + 1} differs from the export after write {k}"
        # By time, the same.
        times = [t for _, t, _ in recorded]
        k = max(index for index in candidates if times[index] < times[index + 1])
        done = restore(hearth_binary, url, "--at", iso(times[k]), "--from-backups", "--into", f"{NS}-bt", "--data", str(tmp_path))
        assert done.returncode == 0, done.stderr
        assert export(url, f"{NS}-bt") == recorded[k][2]
        # Before any backup: refused, saying which is the oldest.
        early = restore(hearth_binary, url, "--before-position", "1", "--from-backups", "--data", str(tmp_path))
        assert early.returncode == 1 and "no backup of" in early.stderr and "oldest" in early.stderr, early.stderr
    finally:
        stop(process)


def test_a_backup_older_than_the_feed_restores_its_own_instant(hearth_binary, tmp_path):
    process, url, port = serve(hearth_binary, tmp_path, "--backup-every", "1s", "--feed-max-bytes", "4000")
    try:
        before = random_load(url, port, writes=8, seed=2)
        name, manifest = wait_for_backup(tmp_path, lambda m: m["position"] >= before[-1][0])
        moment = manifest["time"]
        # Enough writes after it that retention drops the feed's entries back past the backup.
        for n in range(200):
            requests.put(f"{url}/filler/{n}.json?ns={NS}", json="x" * 100, headers=OWNER, timeout=10).raise_for_status()
        page = requests.get(f"{url}/.feed.json", params={"ns": NS, "after": manifest["position"], "limit": 1}, headers=OWNER, timeout=10)
        assert "resync needed" in page.json().get("error", ""), page.text
        listed = hearth(hearth_binary, "backups", "list", NS, "--data", str(tmp_path))
        assert f"only" in [line for line in listed.stdout.splitlines() if name in line][0], listed.stdout

        refused = restore(hearth_binary, url, "--at", iso(moment), "--data", str(tmp_path))
        assert refused.returncode == 1 and f"--backup {name}" in refused.stderr, refused.stderr
        done = restore(hearth_binary, url, "--backup", name, "--into", f"{NS}-then", "--data", str(tmp_path))
        assert done.returncode == 0, done.stderr
        assert export(url, f"{NS}-then") == before[-1][2]
    finally:
        stop(process)


def test_with_the_server_stopped_restore_works_on_the_storage_and_in_place_is_in_the_history(hearth_binary, tmp_path):
    process, url, port = serve(hearth_binary, tmp_path)
    recorded = random_load(url, port, writes=20, seed=4)
    stop(process)
    nobody = f"http://127.0.0.1:{port}"  # stopped: nothing answers there now
    into = restore(hearth_binary, nobody, "--before-position", str(recorded[5][0]), "--into", f"{NS}-offline", "--data", str(tmp_path))
    assert into.returncode == 0, into.stderr
    assert "No server answers" in into.stdout and "restoring in" in into.stdout, into.stdout
    in_place = restore(hearth_binary, nobody, "--before-position", str(recorded[10][0]), "--in-place", "--data", str(tmp_path))
    assert in_place.returncode == 0, in_place.stderr
    # Without --data or --storage it says what to do instead of guessing where the data is.
    unsure = restore(hearth_binary, nobody, "--before-position", str(recorded[10][0]))
    assert unsure.returncode == 1 and "--data DIR or --storage URL" in unsure.stderr, unsure.stderr

    process, url, port = serve(hearth_binary, tmp_path)
    try:
        assert export(url, f"{NS}-offline") == recorded[4][2]
        assert export(url) == recorded[9][2]
        (write,) = feed_after(url, recorded[-1][0])
        assert write["authType"] == "admin" and write["protocol"] == "restore", write
        # Undone like any write, now through the server.
        undone = restore(hearth_binary, url, "--before-position", str(write["position"]), "--in-place")
        assert undone.returncode == 0, undone.stderr
        assert export(url) == recorded[-1][2]
    finally:
        stop(process)


def test_a_backup_that_never_finished_is_never_listed_and_goes(hearth_binary, tmp_path):
    process, url, port = serve(hearth_binary, tmp_path)
    random_load(url, port, writes=3, seed=6)
    stop(process)
    unfinished = tmp_path / "backups" / NS / "20200101T000000000Z"
    unfinished.mkdir(parents=True)
    (unfinished / f"{NS}.sqlite").write_bytes(b"half a copy")
    listed = hearth(hearth_binary, "backups", "list", "--data", str(tmp_path))
    assert listed.returncode == 0 and "20200101T000000000Z" not in listed.stdout and "No backups" in listed.stdout, listed.stdout
    process, url, port = serve(hearth_binary, tmp_path, "--backup-every", "1h")
    try:
        wait_for_backup(tmp_path, lambda m: True)
        deadline = time.monotonic() + 30
        while unfinished.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not unfinished.exists()
    finally:
        stop(process)


def test_options_are_checked(hearth_binary, tmp_path):
    for arguments, message in [
        (["--backup-every", "soon"], "backup-every is a number and a unit"),
        (["--backup-keep", "3"], "backup-keep needs backup-every"),
        (["--backup-every", "1h", "--backup-keep", "0"], "backup-keep is how many"),
    ]:
        done = subprocess.run([str(hearth_binary), "serve", "--data", str(tmp_path), *arguments], capture_output=True, text=True, timeout=30)
        assert done.returncode == 64 and message in done.stderr, (arguments, done.stderr)


def test_backups_and_restores_on_postgresql(postgres, hearth_binary, tmp_path):
    process, port = start_hearth(hearth_binary, "--emulator", "--data", str(tmp_path), "--storage", postgres.url,
                                 "--backup-every", "1s")
    assert process.poll() is None, process.communicate()[1]
    url = f"http://127.0.0.1:{port}"
    try:
        recorded = random_load(url, port, writes=15, seed=8)
        name, manifest = wait_for_backup(tmp_path, lambda m: m["position"] >= recorded[-1][0])
        assert manifest["format"] == "json" and postgres.password not in json.dumps(manifest)
        later = random_load(url, port, writes=10, seed=9, after=recorded[-1][0])
    finally:
        stop(process)
    storage = ["--storage", postgres.url, "--data", str(tmp_path)]
    nobody = f"http://127.0.0.1:{port}"
    done = restore(hearth_binary, nobody, "--backup", name, "--into", "pg-backup", *storage)
    assert done.returncode == 0, done.stderr
    done = restore(hearth_binary, nobody, "--before-position", str(later[5][0]), "--from-backups", "--into", "pg-later", *storage)
    assert done.returncode == 0, done.stderr
    exported = {ns: json.loads(hearth(hearth_binary, "export", ns, "--storage", postgres.url).stdout) for ns in ("pg-backup", "pg-later")}
    assert exported["pg-backup"] == recorded[-1][2]
    assert exported["pg-later"] == later[4][2]
