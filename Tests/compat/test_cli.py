"""The `hearth` command line as a user and a script see it: output, error text and exit codes."""

import json
import re

import requests

from conftest import ROOT

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


def test_rules_deploy_makes_bolt_rules_live_on_the_running_server(hearth, hearth_server):
    rules = str(ROOT / "Examples" / "rules" / "seed-apps.bolt")
    completed = hearth("rules", "deploy", "deploytest", rules, "--url", hearth_server.url)
    assert completed.returncode == 0, completed.stderr
    assert "Deployed" in completed.stdout
    as_bob = {"ns": "deploytest", "auth": "owner", "auth_variable_override": json.dumps({"uid": "bob"})}
    denied = requests.put(f"{hearth_server.url}/users/ada.json", params=as_bob, data=json.dumps({"username": "x"}))
    assert denied.status_code == 401
    as_ada = dict(as_bob, auth_variable_override=json.dumps({"uid": "ada"}))
    assert requests.put(f"{hearth_server.url}/users/ada.json", params=as_ada, data=json.dumps({"username": "ada"})).status_code == 200
