"""A PostgreSQL server of the tests' own, for `hearth serve --storage postgresql://…` and the data commands.

Like TemporaryPostgres (Sources/HearthTesting/TemporaryPostgres.swift): Debian's `initdb` and `pg_ctl`
(/usr/lib/postgresql/<version>/bin) make a fresh cluster in a temporary directory, listening on a free
loopback port with password authentication. `initdb` refuses root, so as root (CI) the server programs run
as `nobody`, who owns the directory. HEARTH_SKIP_POSTGRES=1 skips the tests that need it; without the
programs they fail naming the packages.
"""

import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import _free_port

SERVER_USER = "nobody"


def _programs() -> Path | None:
    """`/usr/lib/postgresql/<newest version>/bin`, when it has initdb."""
    root = Path("/usr/lib/postgresql")
    versions = sorted((int(p.name), p) for p in root.glob("*") if p.name.isdigit()) if root.is_dir() else []
    for _, version in reversed(versions):
        if os.access(version / "bin" / "initdb", os.X_OK):
            return version / "bin"
    return None


class TemporaryPostgres:
    """A running cluster: `url` (user hearth, a random password, database postgres), stop/start, and freezing
    every server process with SIGSTOP to play a PostgreSQL that stops answering."""

    user = "hearth"
    database = "postgres"

    def __init__(self, max_connections: int = 60):
        self.max_connections = max_connections
        programs = _programs()
        if programs is None:
            pytest.fail("PostgreSQL's server programs (initdb, pg_ctl) are not installed in /usr/lib/postgresql/*/bin: "
                        "install the Debian packages postgresql and libpq-dev (scripts/setup does), or set "
                        "HEARTH_SKIP_POSTGRES=1 to skip these tests.", pytrace=False)
        self.programs = programs
        # Not under pytest's tmp_path: its parents are closed to `nobody`.
        self.directory = Path(tempfile.mkdtemp(prefix="pg-hearth-compat-"))
        self.password = secrets.token_hex(12)
        self.port = _free_port()
        self._give_to_server_user(self.directory)
        password_file = self.directory / "password"
        password_file.write_text(self.password)
        self._give_to_server_user(password_file)
        self._run("initdb", "-D", str(self.directory / "data"), "-U", self.user, f"--pwfile={password_file}",
                  "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
                  "--no-instructions")
        password_file.unlink()
        self.start()

    @property
    def url(self) -> str:
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/{self.database}"

    @property
    def shown_url(self) -> str:
        """The URL as hearth prints it: without the password."""
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{self.database}"

    def start(self) -> None:
        """Starts the server on its port; when another process took the port meanwhile, on another one."""
        for attempt in range(5):
            try:
                self._run("pg_ctl", "-D", str(self.directory / "data"), "-l", str(self.directory / "server.log"), "-w",
                          "-t", "60", "start", "-o", f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 "
                          f"-c unix_socket_permissions=0700 -c shared_buffers=16MB -c max_connections={self.max_connections}")
                return
            except AssertionError as error:
                if attempt == 4 or "could not bind" not in str(error):
                    raise
                self.port = _free_port()

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.directory / "data"), "-w", "-t", "60", "stop", "-m", "fast")

    def _processes(self) -> list[int]:
        """The postmaster and every process it started (backends, checkpointer, …)."""
        postmaster = int((self.directory / "data" / "postmaster.pid").read_text().split("\n")[0])
        children = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    # Fields after the command, which is in parentheses: state, then the parent's pid.
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[1]) == postmaster:
                    children.append(int(entry.name))
        return [postmaster, *children]

    def freeze(self) -> None:
        """SIGSTOP every server process: connections stay open and nothing answers."""
        for pid in self._processes():
            os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        for pid in self._processes():
            os.kill(pid, signal.SIGCONT)

    def sql(self, statement: str) -> str:
        """Runs one statement with psql over TCP; its unaligned output, without headers."""
        completed = subprocess.run(
            ["psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", statement, f"postgresql://{self.user}@127.0.0.1:{self.port}/{self.database}"],
            env={**os.environ, "PGPASSWORD": self.password}, capture_output=True, text=True, timeout=30)
        assert completed.returncode == 0, completed.stderr
        return completed.stdout.strip()

    def destroy(self) -> None:
        try:
            self.thaw()
        except (OSError, ValueError):
            pass
        subprocess.run(self._command("pg_ctl", "-D", str(self.directory / "data"), "-w", "stop", "-m", "immediate"),
                       cwd=self.directory, capture_output=True)
        shutil.rmtree(self.directory, ignore_errors=True)

    # Running the server programs (as `nobody` when we are root).

    @staticmethod
    def _give_to_server_user(path: Path) -> None:
        if os.geteuid() == 0:
            account = pwd.getpwnam(SERVER_USER)
            os.chown(path, account.pw_uid, account.pw_gid)

    def _command(self, program: str, *arguments: str) -> list[str]:
        command = [str(self.programs / program), *arguments]
        return ["/usr/sbin/runuser", "-u", SERVER_USER, "--", *command] if os.geteuid() == 0 else command

    def _run(self, program: str, *arguments: str) -> None:
        # The server pg_ctl leaves running inherits pg_ctl's descriptors: output goes to a file, not a pipe
        # that would never reach its end.
        output = self.directory / f"{program}.out"
        with open(output, "w") as sink:
            completed = subprocess.run(self._command(program, *arguments), cwd=self.directory, stdin=subprocess.DEVNULL,
                                       stdout=sink, stderr=subprocess.STDOUT, timeout=120)
        if completed.returncode != 0:
            log = self.directory / "server.log"
            raise AssertionError(f"{program} failed ({completed.returncode}): {output.read_text()}"
                                 f"{log.read_text()[-2000:] if log.exists() else ''}")


@pytest.fixture(scope="module")
def postgres():
    """A PostgreSQL server for the module, stopped and removed after it."""
    if os.environ.get("HEARTH_SKIP_POSTGRES") == "1":
        pytest.skip("HEARTH_SKIP_POSTGRES=1: the tests of hearth serve --storage need PostgreSQL")
    server = TemporaryPostgres()
    yield server
    server.destroy()
