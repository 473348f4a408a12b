"""Blocking auth hooks (docs/functions.md, "Blocking auth hooks") through the real server and a receiver
the test starts: configured through Firebase's project config, asked before an account is created and
before a sign-in returns tokens, signed as webhooks are; a refusal reaches the client in Firebase's
words and creates nothing; claims and profile changes land on the account and in the ID token; session
claims stay in the session (refreshes included); a hook that does not answer in time refuses (fail
closed) or lets through (fail open) as configured; anonymous sign-ups never ask; a hook may post only
where the admin allowed."""

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from conftest import start_hearth
from hook_receiver import verify

KEY = "fake-api-key"
SECRET = "blocking-hook-secret"
PROJECT = "blocking"


class BlockingReceiver:
    """Answers each hook call with `policy(event)`: (status, JSON body); records (headers, body, event)."""

    def __init__(self, policy):
        self.policy = policy
        self.calls = []
        self.release = threading.Event()  # what a hanging policy waits for
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                event = json.loads(body)
                receiver.calls.append((dict(self.headers), body, event))
                status, answer = receiver.policy(event)
                if status is None:  # hang until the test ends: the server's deadline decides
                    receiver.release.wait(60)
                    return
                data = json.dumps(answer).encode() if answer is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/blocking"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def events(self):
        return [event["eventType"] for _, _, event in self.calls]

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def policy(event):
    """Refuses addresses outside example.com; gives new accounts a role and a name; gives every session a claim."""
    user = event["data"]
    if not user.get("email", "").endswith("@example.com"):
        return 403, {"error": {"status": "PERMISSION_DENIED", "message": f"{user.get('email')} may not sign up here"}}
    if event["eventType"] == "beforeCreate":
        return 200, {"customClaims": {"role": "member"}, "displayName": "New member"}
    if user.get("email", "").startswith("hang") and not event["additionalUserInfo"]["isNewUser"]:
        return None, None
    return 200, {"sessionClaims": {"signedInVia": "hook"}}


class Server:
    def __init__(self, binary, data, *arguments):
        self.process, port = start_hearth(binary, "--data", str(data), "--project", PROJECT, *arguments)
        assert self.process.poll() is None, self.process.communicate()[1]
        self.url = f"http://127.0.0.1:{port}"
        token_file = data / "admin-token"
        self.admin = {"Authorization": "Bearer " + (token_file.read_text().strip() if "--emulator" not in arguments else "owner")}

    def configure(self, triggers):
        return requests.patch(
            f"{self.url}/identitytoolkit.googleapis.com/admin/v2/projects/{PROJECT}/config?updateMask=blockingFunctions",
            json={"blockingFunctions": {"triggers": triggers}}, headers=self.admin, timeout=10)

    def config(self):
        response = requests.get(f"{self.url}/identitytoolkit.googleapis.com/admin/v2/projects/{PROJECT}/config", headers=self.admin, timeout=10)
        assert response.status_code == 200, response.text
        return response.json()

    def call(self, operation, body):
        return requests.post(f"{self.url}/identitytoolkit.googleapis.com/v1/accounts:{operation}?key={KEY}", json=body, timeout=30)

    def user(self, uid):
        response = requests.post(
            f"{self.url}/identitytoolkit.googleapis.com/v1/projects/{PROJECT}/accounts:lookup", json={"localId": [uid]}, headers=self.admin,
            timeout=10)
        assert response.status_code == 200, response.text
        return (response.json().get("users") or [None])[0]

    def users(self):
        response = requests.post(
            f"{self.url}/identitytoolkit.googleapis.com/v1/projects/{PROJECT}/accounts:query", json={}, headers=self.admin, timeout=10)
        assert response.status_code == 200, response.text
        return response.json().get("userInfo", [])

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def claims(id_token):
    payload = id_token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


@pytest.fixture
def receiver():
    receiver = BlockingReceiver(policy)
    yield receiver
    receiver.close()


@pytest.fixture
def server(hearth_binary, tmp_path):
    server = Server(hearth_binary, tmp_path, "--emulator")
    yield server
    server.stop()


def configure_both(server, receiver, **extra):
    hook = {"functionUri": receiver.url, "secret": SECRET, **extra}
    response = server.configure({"beforeCreate": hook, "beforeSignIn": hook})
    assert response.status_code == 200, response.text
    return response.json()


def test_a_refusal_reaches_the_client_in_firebases_words_and_creates_nothing(server, receiver):
    config = configure_both(server, receiver)
    assert config["blockingFunctions"]["triggers"]["beforeCreate"]["functionUri"] == receiver.url
    assert "secret" not in json.dumps(config), "the config must not show the hooks' secrets"

    refused = server.call("signUp", {"email": "mallory@evil.test", "password": "secret-pass", "returnSecureToken": True})
    assert refused.status_code == 400, refused.text
    message = refused.json()["error"]["message"]
    code, detail = message.split(" : ", 1)
    assert code == "BLOCKING_FUNCTION_ERROR_RESPONSE"
    assert detail.startswith("HTTP Cloud Function returned an error: ")
    returned = json.loads(detail.removeprefix("HTTP Cloud Function returned an error: "))
    assert returned == {"error": {"message": "mallory@evil.test may not sign up here", "status": "PERMISSION_DENIED"}}
    assert server.users() == [], "a refused sign-up must not create an account"
    assert receiver.events() == ["beforeCreate"]
    headers, body, event = receiver.calls[0]
    assert verify(headers, body, SECRET), "the hook call must carry a valid Hearth-Signature"
    assert event["additionalUserInfo"] == {"providerId": "password", "isNewUser": True}
    assert event["data"]["email"] == "mallory@evil.test" and "passwordHash" not in body.decode()


def test_claims_and_profile_land_on_the_account_and_session_claims_in_the_session(server, receiver):
    configure_both(server, receiver)
    signed_up = server.call("signUp", {"email": "ada@example.com", "password": "secret-pass", "returnSecureToken": True})
    assert signed_up.status_code == 200, signed_up.text
    assert receiver.events() == ["beforeCreate", "beforeSignIn"], "a sign-up asks beforeCreate, then beforeSignIn"
    assert receiver.calls[1][2]["data"]["customClaims"] == {"role": "member"}, "beforeSignIn sees what beforeCreate set"
    token = claims(signed_up.json()["idToken"])
    assert token["role"] == "member" and token["signedInVia"] == "hook"
    uid = signed_up.json()["localId"]
    stored = server.user(uid)
    assert json.loads(stored["customAttributes"]) == {"role": "member"}
    assert stored["displayName"] == "New member"

    signed_in = server.call("signInWithPassword", {"email": "ada@example.com", "password": "secret-pass", "returnSecureToken": True})
    assert signed_in.status_code == 200, signed_in.text
    assert receiver.events() == ["beforeCreate", "beforeSignIn", "beforeSignIn"]
    assert receiver.calls[2][2]["additionalUserInfo"]["isNewUser"] is False
    refreshed = requests.post(
        f"{server.url}/securetoken.googleapis.com/v1/token?key={KEY}",
        data={"grant_type": "refresh_token", "refresh_token": signed_in.json()["refreshToken"]}, timeout=10)
    assert refreshed.status_code == 200, refreshed.text
    assert claims(refreshed.json()["id_token"])["signedInVia"] == "hook", "session claims stay through a refresh"
    assert len(receiver.calls) == 3, "a token refresh does not ask the hooks"
    assert "signedInVia" not in (server.user(uid).get("customAttributes") or ""), "session claims are not kept on the account"

    anonymous = server.call("signUp", {"returnSecureToken": True})
    assert anonymous.status_code == 200 and len(receiver.calls) == 3, "anonymous sign-ups never ask the hooks"

    status = server.config()["blockingFunctions"]["triggers"]
    assert status["beforeCreate"]["status"]["calls"] == 1 and status["beforeSignIn"]["status"]["calls"] == 2


def test_a_hook_that_does_not_answer_refuses_unless_it_fails_open(server, receiver):
    configure_both(server, receiver, timeoutSeconds=1)
    assert server.call("signUp", {"email": "hang@example.com", "password": "secret-pass"}).status_code == 200
    # beforeSignIn hangs for this address: the sign-in is refused after the hook's 1 s.
    refused = server.call("signInWithPassword", {"email": "hang@example.com", "password": "secret-pass", "returnSecureToken": True})
    assert refused.status_code == 400, refused.text
    assert "BLOCKING_FUNCTION_ERROR_RESPONSE" in refused.json()["error"]["message"]
    assert '"status":"UNAVAILABLE"' in refused.json()["error"]["message"]
    status = server.config()["blockingFunctions"]["triggers"]["beforeSignIn"]["status"]
    assert status["failures"] >= 1 and "did not answer within 1 s" in status["lastFailure"]

    configure_both(server, receiver, timeoutSeconds=1, failOpen=True)
    let_through = server.call("signInWithPassword", {"email": "hang@example.com", "password": "secret-pass", "returnSecureToken": True})
    assert let_through.status_code == 200, let_through.text
    assert "signedInVia" not in claims(let_through.json()["idToken"])


def test_before_create_may_disable_the_account(server, receiver):
    receiver.policy = lambda event: (200, {"disabled": True}) if event["eventType"] == "beforeCreate" else (200, {})
    configure_both(server, receiver)
    refused = server.call("signUp", {"email": "pending@example.com", "password": "secret-pass", "returnSecureToken": True})
    assert refused.status_code == 400 and refused.json()["error"]["message"] == "USER_DISABLED"
    (user,) = server.users()
    assert user["disabled"] is True and receiver.events() == ["beforeCreate"]


def test_a_malformed_answer_is_a_failure_and_removing_a_hook_stops_the_calls(server, receiver):
    receiver.policy = lambda event: (200, {"customClaims": {"sub": "someone-else"}})
    configure_both(server, receiver)
    refused = server.call("signUp", {"email": "eve@example.com", "password": "secret-pass"})
    assert refused.status_code == 400 and "UNAVAILABLE" in refused.json()["error"]["message"]
    assert "FORBIDDEN_CLAIM" in server.config()["blockingFunctions"]["triggers"]["beforeCreate"]["status"]["lastFailure"]
    removed = server.configure({"beforeCreate": {"functionUri": ""}, "beforeSignIn": None})
    assert removed.status_code == 200 and removed.json()["blockingFunctions"]["triggers"] == {}
    calls = len(receiver.calls)
    assert server.call("signUp", {"email": "eve@example.com", "password": "secret-pass"}).status_code == 200
    assert len(receiver.calls) == calls


def test_bad_configurations_are_refused_clearly(server, receiver):
    no_secret = server.configure({"beforeCreate": {"functionUri": receiver.url}})
    assert no_secret.status_code == 400 and "secret" in no_secret.json()["error"]["message"]
    bad_timeout = server.configure({"beforeCreate": {"functionUri": receiver.url, "secret": SECRET, "timeoutSeconds": 60}})
    assert bad_timeout.status_code == 400 and "timeoutSeconds" in bad_timeout.json()["error"]["message"]
    unknown = server.configure({"beforeDelete": {"functionUri": receiver.url, "secret": SECRET}})
    assert unknown.status_code == 400 and "beforeDelete" in unknown.json()["error"]["message"]
    anonymous = requests.patch(
        f"{server.url}/identitytoolkit.googleapis.com/admin/v2/projects/{PROJECT}/config",
        json={"blockingFunctions": {"triggers": {}}}, timeout=10)
    assert anonymous.status_code == 401


def test_hooks_post_only_where_the_admin_allowed_and_survive_a_restart(hearth_binary, tmp_path, receiver):
    server = Server(hearth_binary, tmp_path)
    try:
        refused = server.configure({"beforeCreate": {"functionUri": receiver.url, "secret": SECRET}})
        assert refused.status_code == 400 and "--hooks-allow" in refused.json()["error"]["message"]
    finally:
        server.stop()
    server = Server(hearth_binary, tmp_path, "--hooks-allow", "127.0.0.1")
    try:
        assert server.configure({"beforeCreate": {"functionUri": receiver.url, "secret": SECRET}}).status_code == 200
    finally:
        server.stop()
    server = Server(hearth_binary, tmp_path, "--hooks-allow", "127.0.0.1")
    try:
        assert server.config()["blockingFunctions"]["triggers"]["beforeCreate"]["functionUri"] == receiver.url
        refused = server.call("signUp", {"email": "mallory@evil.test", "password": "secret-pass"})
        assert refused.status_code == 400 and "may not sign up here" in refused.json()["error"]["message"]
    finally:
        server.stop()


def test_an_email_link_sign_up_asks_both_hooks(server, receiver):
    configure_both(server, receiver)
    for address in ["grace@example.com", "mallory@evil.test"]:
        sent = server.call("sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": address, "continueUrl": "http://localhost/done"})
        assert sent.status_code == 200, sent.text
    codes = requests.get(f"{server.url}/emulator/v1/projects/{PROJECT}/oobCodes", timeout=10).json()["oobCodes"]
    code = {entry["email"]: entry["oobCode"] for entry in codes}
    signed_in = server.call("signInWithEmailLink", {"email": "grace@example.com", "oobCode": code["grace@example.com"]})
    assert signed_in.status_code == 200, signed_in.text
    assert signed_in.json()["isNewUser"] is True and claims(signed_in.json()["idToken"])["role"] == "member"
    assert receiver.events() == ["beforeCreate", "beforeSignIn"]
    refused = server.call("signInWithEmailLink", {"email": "mallory@evil.test", "oobCode": code["mallory@evil.test"]})
    assert refused.status_code == 400 and "may not sign up here" in refused.json()["error"]["message"]
    assert [user["email"] for user in server.users()] == ["grace@example.com"]


def test_the_official_js_sdk_sees_the_refusal_and_the_claims(js_sdk, server, receiver):
    configure_both(server, receiver)
    result = js_sdk.run("blocking.cjs", "127.0.0.1", server.url.rsplit(":", 1)[1], PROJECT, timeout=90)
    assert result["ok"], result["error"]
