"""`hearth serve --tls-cert/--tls-key`: REST, SSE and the realtime WebSocket over TLS, with a certificate
made for the test by Debian's openssl, checked against that certificate (no verification turned off)."""

import json
import shutil
import ssl
import subprocess

import pytest
import requests
import websocket

from conftest import start_hearth

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl (Debian package openssl) is needed")


def make_certificate(directory):
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True)
    return cert, key


@pytest.fixture(scope="module")
def tls_server(hearth_binary, tmp_path_factory):
    directory = tmp_path_factory.mktemp("tls")
    cert, key = make_certificate(directory)
    process, port = start_hearth(
        hearth_binary, "--emulator", "--data", str(directory / "data"), "--tls-cert", str(cert), "--tls-key", str(key))
    yield f"127.0.0.1:{port}", str(cert)
    process.terminate()
    process.communicate(timeout=20)


def test_strict_transport_security_over_tls_for_this_host_only(tls_server):
    """Over TLS every answer says HSTS for a year, for this host only: includeSubDomains or preload would lock
    every subdomain of the name into HTTPS, which only the domain's owner can decide (--hsts)."""
    address, cert = tls_server
    for path in ("/t.json?ns=tls", "/console/", "/no-such.json?ns=tls&print=silent"):
        answer = requests.get(f"https://{address}{path}", verify=cert)
        assert answer.headers["strict-transport-security"] == "max-age=31536000", path
    with requests.get(f"https://{address}/t.json?ns=tls", headers={"Accept": "text/event-stream"}, verify=cert,
                      stream=True, timeout=5) as stream:
        assert stream.headers["strict-transport-security"] == "max-age=31536000"


def test_hsts_is_the_operators_to_set_or_turn_off(hearth_binary, tmp_path):
    cert, key = make_certificate(tmp_path)
    for setting, expected in (("max-age=63072000; includeSubDomains; preload", "max-age=63072000; includeSubDomains; preload"),
                              ("off", None)):
        process, port = start_hearth(hearth_binary, "--emulator", "--data", str(tmp_path / "data"), "--tls-cert", str(cert),
                                     "--tls-key", str(key), "--hsts", setting)
        try:
            answer = requests.get(f"https://127.0.0.1:{port}/.json?ns=tls", verify=str(cert))
            assert answer.headers.get("strict-transport-security") == expected
        finally:
            process.terminate()
            process.communicate(timeout=20)


def test_rest_over_tls(tls_server):
    address, cert = tls_server
    put = requests.put(f"https://{address}/t.json?ns=tls", data=json.dumps({"a": "ü"}), verify=cert,
                       headers={"Authorization": "Bearer owner"})
    assert put.status_code == 200
    assert requests.get(f"https://{address}/t/a.json?ns=tls", verify=cert).json() == "ü"


def test_streams_over_tls(tls_server):
    address, cert = tls_server
    with requests.get(f"https://{address}/t.json?ns=tls", headers={"Accept": "text/event-stream"}, verify=cert,
                      stream=True, timeout=5) as response:
        assert response.status_code == 200
        lines = response.iter_lines(decode_unicode=True)
        assert next(lines) == "event: put"
        assert json.loads(next(lines)[len("data: "):])["path"] == "/"


def test_realtime_websocket_over_tls(tls_server):
    address, cert = tls_server
    context = ssl.create_default_context(cafile=cert)
    connection = websocket.create_connection(f"wss://{address}/.ws?v=5&ns=tls", sslopt={"context": context}, timeout=5)
    try:
        handshake = json.loads(connection.recv())
        assert handshake["d"]["t"] == "h"
        connection.send(json.dumps({"t": "d", "d": {"r": 1, "a": "p", "b": {"p": "/t/b", "d": 2}}}))
        assert json.loads(connection.recv())["d"]["b"]["s"] == "ok"
    finally:
        connection.close()


def test_plain_http_to_the_tls_port_is_refused_not_served(tls_server):
    address, _ = tls_server
    with pytest.raises(requests.exceptions.ConnectionError):
        requests.get(f"http://{address}/t.json?ns=tls", timeout=5)
