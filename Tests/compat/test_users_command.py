"""`hearth users` run many times over, against auth.sqlite and against a cluster's PostgreSQL with a server
serving beside it: every run ends cleanly.

A run that returned while a thread of its own was still inside libpq or libcrypto crashed now and then
(SIGSEGV in OpenSSL's locks, torn down by the process's exit handlers). Every command now stops and joins
its threads before it returns, and a debug build (the one tested) exits with 70, naming the threads, when
one is still running: so these runs also check that nothing is left behind.
"""

import signal
import subprocess

import pytest

from conftest import start_hearth
from postgres_support import postgres  # noqa: F401 (the fixture)

# add, list, disable and delete: four runs a round.
ROUNDS = 50


def run_users(binary, *arguments: str) -> str:
    done = subprocess.run([str(binary), "users", *arguments], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    if done.returncode < 0:
        pytest.fail(f"hearth users {arguments[0]} died of {signal.Signals(-done.returncode).name}:\n{done.stderr}")
    assert done.returncode == 0, f"hearth users {arguments[0]} exited with {done.returncode}:\n{done.stderr}"
    return done.stdout


def rounds_of_users_commands(binary, store: list[str], prefix: str) -> None:
    for index in range(ROUNDS):
        email = f"{prefix}{index}@example.com"
        uid = run_users(binary, "add", email, "secret123", *store).strip()
        assert f"{uid}\t{email}" in run_users(binary, "list", *store)
        assert run_users(binary, "disable", uid, *store).strip() == f"disabled {uid}"
        assert run_users(binary, "delete", uid, *store).strip() == f"deleted {uid}"
    assert prefix not in run_users(binary, "list", *store)


def test_users_commands_on_sqlite_end_cleanly_every_time(hearth_binary, tmp_path):
    data = tmp_path / "data"
    process, _port = start_hearth(hearth_binary, "--data", str(data))
    try:
        assert process.poll() is None, process.stderr.read()
        rounds_of_users_commands(hearth_binary, ["--data", str(data)], "sqlite")
    finally:
        process.terminate()
        process.communicate(timeout=30)


def test_users_commands_on_postgres_end_cleanly_every_time(postgres, hearth_binary, tmp_path):  # noqa: F811
    process, _port = start_hearth(hearth_binary, "--data", str(tmp_path / "data"), "--storage", postgres.url)
    try:
        assert process.poll() is None, process.stderr.read()
        rounds_of_users_commands(hearth_binary, ["--storage", postgres.url], "postgres")
    finally:
        process.terminate()
        process.communicate(timeout=30)
