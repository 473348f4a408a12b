"""Auth emails over SMTP: `hearth serve --smtp-url` sends verification and reset links (libcurl), and the
links work when opened. The SMTP server is Python's own (smtpd), capturing what arrives."""

import re
import threading
import time
import warnings

import pytest
import requests

from conftest import start_hearth

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import asyncore
    import smtpd


class CapturingSMTPServer(smtpd.SMTPServer):
    def __init__(self):
        super().__init__(("127.0.0.1", 0), None, decode_data=True)
        self.port = self.socket.getsockname()[1]
        self.messages = []

    def process_message(self, peer, mailfrom, rcpttos, data, **kwargs):
        self.messages.append({"from": mailfrom, "to": rcpttos, "data": data})


@pytest.fixture
def smtp_server():
    server = CapturingSMTPServer()
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            asyncore.loop(timeout=0.05, count=1, map=None)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    yield server
    stop.set()
    thread.join(timeout=5)
    server.close()


@pytest.fixture
def mailing_hearth(hearth_binary, tmp_path, smtp_server):
    process, port = start_hearth(
        hearth_binary, "--emulator", "--data", str(tmp_path / "data"), "--project", "demo-mail",
        "--smtp-url", f"smtp://127.0.0.1:{smtp_server.port}", "--smtp-from", "Demo <noreply@demo.test>")
    yield f"http://127.0.0.1:{port}"
    process.terminate()
    _, err = process.communicate(timeout=20)
    assert process.returncode == 0, err


def wait_for_message(server, count):
    deadline = time.monotonic() + 10
    while len(server.messages) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(server.messages) >= count, "no email arrived"
    return server.messages[count - 1]


def test_verification_and_reset_links_arrive_by_smtp_and_work(mailing_hearth, smtp_server):
    base = f"{mailing_hearth}/identitytoolkit.googleapis.com/v1/accounts"
    signup = requests.post(f"{base}:signUp?key=k", json={"email": "Mia@Example.com", "password": "secret123", "returnSecureToken": True}, timeout=10).json()
    sent = requests.post(f"{base}:sendOobCode?key=k", json={"requestType": "VERIFY_EMAIL", "idToken": signup["idToken"]}, timeout=10)
    assert sent.status_code == 200

    message = wait_for_message(smtp_server, 1)
    assert message["from"] == "noreply@demo.test" and message["to"] == ["mia@example.com"]
    assert "Subject: Verify your email for demo-mail" in message["data"]
    link = re.search(r"(http://\S+/emulator/action\?\S+)", message["data"]).group(1)
    assert "mode=verifyEmail" in link
    opened = requests.get(link, timeout=10)
    assert opened.status_code == 200, opened.text
    user = requests.post(f"{base}:lookup?key=k", json={"idToken": signup["idToken"]}, timeout=10).json()["users"][0]
    assert user["emailVerified"] is True

    requests.post(f"{base}:sendOobCode?key=k", json={"requestType": "PASSWORD_RESET", "email": "mia@example.com"}, timeout=10)
    reset = wait_for_message(smtp_server, 2)
    assert "Subject: Reset your password for demo-mail" in reset["data"]
    reset_link = re.search(r"(http://\S+/emulator/action\?\S+)", reset["data"]).group(1)
    assert requests.get(reset_link + "&newPassword=another-secret", timeout=10).status_code == 200
    signin = requests.post(f"{base}:signInWithPassword?key=k", json={"email": "mia@example.com", "password": "another-secret"}, timeout=10)
    assert signin.status_code == 200, signin.text
