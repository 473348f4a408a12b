"""SIGKILL in the middle of `hearth import`, `hearth backup` and `hearth export` (docs/reliability.md): the
namespace is whole afterwards (as before an import, never half of one), a backup file is there complete or
not at all, and the data reads back the same."""

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

NS = "killed"


def hearth(binary, *arguments, **options):
    return subprocess.run([str(binary), *arguments], capture_output=True, text=True, timeout=300, **options)


def export(binary, data):
    done = hearth(binary, "export", NS, "--data", str(data))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def kill_when(binary, arguments, says: str, seconds: float = 120) -> subprocess.Popen:
    """Starts `hearth ARGUMENTS` and SIGKILLs it once its progress on standard error says `says`."""
    process = subprocess.Popen([str(binary), *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + seconds
    seen = ""
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        seen += line
        if says in line:
            process.send_signal(signal.SIGKILL)
            process.wait(30)
            return process
    process.kill()
    pytest.fail(f"hearth {arguments[0]} never said '{says}': {seen[-1000:]}")


@pytest.fixture
def big_export(tmp_path):
    """About 40 MB of export JSON: long enough to kill an import halfway."""
    path = tmp_path / "big.json"
    with open(path, "w") as out:
        out.write('{"rows":{')
        for index in range(200_000):
            out.write(("," if index else "") + f'"r{index:06d}":{{"text":"{"x" * 150}","n":{index}}}')
        out.write("}}")
    return path


def test_an_import_killed_halfway_leaves_the_namespace_as_it_was(hearth_binary, tmp_path, big_export):
    data = tmp_path / "data"
    small = tmp_path / "small.json"
    small.write_text(json.dumps({"before": {"kept": True}}))
    assert hearth(hearth_binary, "import", NS, str(small), "--data", str(data)).returncode == 0
    kill_when(hearth_binary, ["import", NS, str(big_export), "--data", str(data)], says="wrote")
    assert export(hearth_binary, data) == {"before": {"kept": True}}
    # And the next import goes through whole.
    done = hearth(hearth_binary, "import", NS, str(big_export), "--data", str(data))
    assert done.returncode == 0, done.stderr
    assert len(export(hearth_binary, data)["rows"]) == 200_000


def test_a_backup_or_an_export_killed_halfway_leaves_no_half_file_and_the_data_whole(hearth_binary, tmp_path, big_export):
    data = tmp_path / "data"
    assert hearth(hearth_binary, "import", NS, str(big_export), "--data", str(data)).returncode == 0
    before = export(hearth_binary, data)
    target = tmp_path / "copy.sqlite"
    kill_when(hearth_binary, ["backup", NS, str(target), "--data", str(data)], says="copied")
    assert not target.exists(), "a killed backup left a file under the final name"
    out = tmp_path / "out.json"
    with open(out, "w") as sink:
        process = subprocess.Popen([str(hearth_binary), "export", NS, "--data", str(data)], stdout=sink, stderr=subprocess.PIPE, text=True)
        while process.poll() is None and out.stat().st_size < 1_000_000:
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait(30)
    assert export(hearth_binary, data) == before
    done = hearth(hearth_binary, "backup", NS, str(target), "--data", str(data))
    assert done.returncode == 0 and target.exists(), done.stderr
