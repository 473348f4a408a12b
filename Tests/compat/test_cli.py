"""The `hearth` command line as a user and a script see it: output, error text and exit codes."""

import re

EXIT_USAGE = 64  # EX_USAGE in sysexits.h


def test_version_prints_name_and_semantic_version(hearth):
    result = hearth("--version")
    assert result.returncode == 0
    assert re.fullmatch(r"hearth \d+\.\d+\.\d+(-[0-9A-Za-z.]+)?\n", result.stdout)
    assert result.stderr == ""


def test_help_lists_serve(hearth):
    result = hearth("--help")
    assert result.returncode == 0
    assert "Usage: hearth <command>" in result.stdout
    assert "serve" in result.stdout


def test_serve_refuses_unknown_options_before_listening(hearth, tmp_path):
    result = hearth("serve", "--bogus", timeout=10)
    assert result.returncode == EXIT_USAGE
    assert "unknown option '--bogus'" in result.stderr
    assert "hearth serve --help" in result.stderr
    assert result.stdout == ""
    # Nothing was created where it ran.
    assert not (tmp_path / "hearth-data").exists()


def test_unknown_command_fails_and_says_what_to_do(hearth):
    result = hearth("bogus")
    assert result.returncode == EXIT_USAGE
    assert "unknown command 'bogus'" in result.stderr
    assert "hearth --help" in result.stderr
    assert result.stdout == ""


def test_serve_on_a_port_in_use_fails_and_says_so(hearth, hearth_server, tmp_path):
    completed = hearth("serve", "--emulator", "--port", str(hearth_server.port), "--data", str(tmp_path / "second"), timeout=20)
    assert completed.returncode == 1
    assert "port is in use" in completed.stderr
    assert "--port" in completed.stderr
