"""Firebase Auth against the real `hearth serve --emulator`: firebase-admin's auth module, and the REST
calls exactly as the JS SDK sends them (bodies, key styles and encodings as docs/auth.md §1.4 and §2 describe)."""

import base64
import json
import os
import time
import uuid

import firebase_admin
import jwt
import pytest
import requests
from firebase_admin import auth

KEY = "fake-api-key"


class _NoCredential(firebase_admin.credentials.Base):
    """Emulator mode sends 'Bearer owner' and never asks for a token."""

    def get_credential(self):
        raise AssertionError("credentials are not used in emulator mode")


@pytest.fixture(scope="module")
def app(hearth_server):
    os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = f"{hearth_server.host}:{hearth_server.port}"
    app = firebase_admin.initialize_app(_NoCredential(), {"projectId": "demo-test"}, name=f"auth-{uuid.uuid4().hex[:8]}")
    auth.list_users(app=app)  # the client (and the environment) is read on first use
    yield app
    os.environ.pop("FIREBASE_AUTH_EMULATOR_HOST", None)
    firebase_admin.delete_app(app)


def email():
    return f"user-{uuid.uuid4().hex[:10]}@example.com"


class Client:
    """The JS SDK's calls: JSON bodies with ?key=, an Origin, and the form-encoded token refresh."""

    ORIGIN = "http://127.0.0.1:8765"

    def __init__(self, base):
        self.base = base
        self.session = requests.Session()
        self.session.headers.update({"Origin": self.ORIGIN, "X-Client-Version": "Chrome/JsCore/10.14.1/FirebaseCore-web"})

    def call(self, operation, body):
        response = self.session.post(
            f"{self.base}/identitytoolkit.googleapis.com/v1/accounts:{operation}?key={KEY}", json=body, timeout=10
        )
        assert response.headers.get("access-control-allow-origin") == self.ORIGIN
        return response

    def ok(self, operation, body):
        response = self.call(operation, body)
        assert response.status_code == 200, response.text
        return response.json()

    def error(self, operation, body):
        response = self.call(operation, body)
        assert response.status_code == 400, response.text
        return response.json()["error"]["message"]

    def refresh(self, refresh_token):
        return self.session.post(
            f"{self.base}/securetoken.googleapis.com/v1/token?key={KEY}",
            data={"grant_type": "refresh_token", "refresh_token": refresh_token},
            timeout=10,
        )

    def oob_codes(self):
        return requests.get(f"{self.base}/emulator/v1/projects/demo-test/oobCodes", timeout=10).json()["oobCodes"]


@pytest.fixture
def client(hearth_server):
    return Client(hearth_server.url)


def test_js_sdk_flow_signup_signin_refresh_verify_reset(client):
    address = email()
    preflight = client.session.options(
        f"{client.base}/identitytoolkit.googleapis.com/v1/accounts:signUp?key={KEY}",
        headers={"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,x-client-version"},
    )
    assert preflight.status_code == 204
    assert "x-client-version" in preflight.headers["access-control-allow-headers"]

    signup = client.ok(
        "signUp", {"returnSecureToken": True, "email": address, "password": "secret123", "clientType": "CLIENT_TYPE_WEB"}
    )
    assert signup["kind"] == "identitytoolkit#SignupNewUserResponse"
    assert signup["expiresIn"] == "3600" and len(signup["localId"]) == 28
    uid = signup["localId"]

    signin = client.ok(
        "signInWithPassword",
        {"returnSecureToken": True, "email": address, "password": "secret123", "clientType": "CLIENT_TYPE_WEB"},
    )
    assert signin["registered"] is True and signin["localId"] == uid

    refreshed = client.refresh(signin["refreshToken"])
    assert refreshed.status_code == 200, refreshed.text
    token = refreshed.json()
    assert token["expires_in"] == "3600" and token["token_type"] == "Bearer" and token["user_id"] == uid
    assert token["access_token"] == token["id_token"]
    id_token, refresh_token = token["id_token"], token["refresh_token"]

    user = client.ok("lookup", {"idToken": id_token})["users"][0]
    assert user["localId"] == uid and user["email"] == address and user["emailVerified"] is False
    assert isinstance(user["createdAt"], str) and isinstance(user["lastLoginAt"], str)
    assert user["providerUserInfo"][0]["providerId"] == "password"

    sent = client.ok("sendOobCode", {"requestType": "VERIFY_EMAIL", "idToken": id_token})
    assert sent["email"] == address
    code = next(c for c in client.oob_codes() if c["email"] == address and c["requestType"] == "VERIFY_EMAIL")
    assert "mode=verifyEmail" in code["oobLink"] and code["oobCode"] in code["oobLink"]
    applied = client.ok("update", {"oobCode": code["oobCode"]})
    assert applied["emailVerified"] is True
    assert client.ok("lookup", {"idToken": id_token})["users"][0]["emailVerified"] is True
    assert client.error("update", {"oobCode": code["oobCode"]}) == "INVALID_OOB_CODE"

    client.ok("sendOobCode", {"requestType": "PASSWORD_RESET", "email": address, "clientType": "CLIENT_TYPE_WEB"})
    reset_code = next(c for c in client.oob_codes() if c["email"] == address and c["requestType"] == "PASSWORD_RESET")
    checked = client.ok("resetPassword", {"oobCode": reset_code["oobCode"]})
    assert checked == {"kind": "identitytoolkit#ResetPasswordResponse", "requestType": "PASSWORD_RESET", "email": address}
    client.ok("resetPassword", {"oobCode": reset_code["oobCode"], "newPassword": "brand-new-1"})

    stale = client.refresh(refresh_token)
    assert stale.status_code == 400
    assert stale.json()["error"]["message"] == "TOKEN_EXPIRED"
    assert client.error("signInWithPassword", {"email": address, "password": "secret123"}) == "INVALID_LOGIN_CREDENTIALS"
    assert client.ok("signInWithPassword", {"email": address, "password": "brand-new-1", "returnSecureToken": True})


def test_error_strings_and_envelope(client):
    address = email()
    client.ok("signUp", {"email": address, "password": "secret123", "returnSecureToken": True})
    response = client.call("signUp", {"email": address.upper(), "password": "secret123"})
    assert response.status_code == 400
    assert response.json() == {
        "error": {
            "code": 400,
            "message": "EMAIL_EXISTS",
            "errors": [{"message": "EMAIL_EXISTS", "domain": "global", "reason": "invalid"}],
        }
    }
    assert client.error("signUp", {"email": email(), "password": "123"}) == "WEAK_PASSWORD : Password should be at least 6 characters"
    assert client.error("signUp", {"email": "no-at-sign", "password": "secret123"}) == "INVALID_EMAIL"
    assert client.error("signInWithPassword", {"email": email(), "password": "secret123"}) == "INVALID_LOGIN_CREDENTIALS"
    assert client.error("lookup", {"idToken": "not.a.token"}) == "INVALID_ID_TOKEN"
    assert client.refresh("garbage").json()["error"]["message"] == "INVALID_REFRESH_TOKEN"
    missing_key = requests.post(f"{client.base}/identitytoolkit.googleapis.com/v1/accounts:signUp", json={}, timeout=10)
    assert missing_key.status_code == 403 and missing_key.json()["error"]["status"] == "PERMISSION_DENIED"


def test_ios_legacy_paths_and_json_refresh(client):
    address = email()
    base = f"{client.base}/www.googleapis.com/identitytoolkit/v3/relyingparty"
    created = requests.post(f"{base}/signupNewUser?key={KEY}", json={"email": address, "password": "secret123", "returnSecureToken": True}, timeout=10)
    assert created.status_code == 200, created.text
    signed_in = requests.post(f"{base}/verifyPassword?key={KEY}", json={"email": address, "password": "secret123", "returnSecureToken": True}, timeout=10).json()
    refreshed = requests.post(
        f"{client.base}/securetoken.googleapis.com/v1/token?key={KEY}",
        json={"grantType": "refresh_token", "refreshToken": signed_in["refreshToken"]},
        timeout=10,
    )
    assert refreshed.status_code == 200 and refreshed.json()["user_id"] == signed_in["localId"]


def test_anonymous_then_link(client):
    anonymous = client.ok("signUp", {"returnSecureToken": True})
    assert "email" not in anonymous
    address = email()
    linked = client.ok("signUp", {"idToken": anonymous["idToken"], "email": address, "password": "secret123", "returnSecureToken": True})
    assert linked["localId"] == anonymous["localId"]
    user = client.ok("lookup", {"idToken": linked["idToken"]})["users"][0]
    assert user["email"] == address and user["passwordHash"]


def test_admin_user_management(app):
    address = email()
    created = auth.create_user(email=address, password="secret123", display_name="Alice", app=app)
    assert created.email == address and created.display_name == "Alice" and not created.disabled
    assert auth.get_user(created.uid, app=app).email == address
    assert auth.get_user_by_email(address.upper(), app=app).uid == created.uid
    with pytest.raises(auth.EmailAlreadyExistsError):
        auth.create_user(email=address, password="secret123", app=app)

    updated = auth.update_user(created.uid, email_verified=True, display_name="Alice B", disabled=True, app=app)
    assert updated.email_verified and updated.display_name == "Alice B" and updated.disabled
    auth.update_user(created.uid, display_name=auth.DELETE_ATTRIBUTE, disabled=False, app=app)
    assert auth.get_user(created.uid, app=app).display_name is None
    auth.set_custom_user_claims(created.uid, {"admin": True}, app=app)
    assert auth.get_user(created.uid, app=app).custom_claims == {"admin": True}
    with pytest.raises(ValueError):
        auth.set_custom_user_claims(created.uid, {"sub": "x"}, app=app)  # reserved, refused by the SDK

    assert created.uid in {user.uid for user in auth.list_users(app=app).iterate_all()}
    auth.delete_user(created.uid, app=app)
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user(created.uid, app=app)
    with pytest.raises(auth.UserNotFoundError):
        auth.delete_user(created.uid, app=app)


def test_verify_id_token_issued_by_hearth(app, client, hearth_server):
    address = email()
    uid = auth.create_user(email=address, password="secret123", app=app).uid
    auth.set_custom_user_claims(uid, {"role": "editor"}, app=app)
    signed_in = client.ok("signInWithPassword", {"email": address, "password": "secret123", "returnSecureToken": True})
    id_token = signed_in["idToken"]

    claims = auth.verify_id_token(id_token, app=app)
    assert claims["uid"] == uid and claims["email"] == address and claims["role"] == "editor"
    assert claims["firebase"]["sign_in_provider"] == "password"
    assert auth.verify_id_token(id_token, check_revoked=True, app=app)["uid"] == uid

    # The signature verifies with the published JWKS, as any other backend would check it.
    jwks = requests.get(
        f"{hearth_server.url}/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com", timeout=10
    ).json()
    header = jwt.get_unverified_header(id_token)
    key = next(k for k in jwks["keys"] if k["kid"] == header["kid"])
    verified = jwt.decode(
        id_token,
        jwt.algorithms.RSAAlgorithm.from_jwk(json.dumps(key)),
        algorithms=["RS256"],
        audience="demo-test",
        issuer="https://securetoken.google.com/demo-test",
    )
    assert verified["sub"] == uid and verified["exp"] - verified["iat"] == 3600

    time.sleep(1.1)  # validSince has second granularity
    auth.revoke_refresh_tokens(uid, app=app)
    with pytest.raises(auth.RevokedIdTokenError):
        auth.verify_id_token(id_token, check_revoked=True, app=app)
    stale = client.refresh(signed_in["refreshToken"])
    assert stale.json()["error"]["message"] == "TOKEN_EXPIRED"


def test_custom_token_from_firebase_admin(app, client):
    token = auth.create_custom_token("robot-" + uuid.uuid4().hex[:6], {"tier": "gold"}, app=app)
    signed_in = client.ok("signInWithCustomToken", {"token": token.decode(), "returnSecureToken": True})
    assert signed_in["isNewUser"] is True
    claims = auth.verify_id_token(signed_in["idToken"], app=app)
    assert claims["tier"] == "gold" and claims["firebase"]["sign_in_provider"] == "custom"


def test_import_users_with_firebase_scrypt_hashes(app, client):
    """Firebase scrypt's published test vector (docs/auth.md §7.2): imported users sign in with their old passwords."""
    address = email()
    uid = "imported-" + uuid.uuid4().hex[:8]
    record = auth.ImportUserRecord(
        uid=uid,
        email=address,
        password_hash=base64.b64decode("lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="),
        password_salt=base64.b64decode("42xEC+ixf3L2lw=="),
    )
    hash_alg = auth.UserImportHash.scrypt(
        key=base64.b64decode("jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="),
        rounds=8,
        memory_cost=14,
        salt_separator=base64.b64decode("Bw=="),
    )
    duplicate = auth.ImportUserRecord(uid=uid + "-dup", email=address.replace("user-", "other-"))
    result = auth.import_users([record, duplicate], hash_alg=hash_alg, app=app)
    assert result.success_count == 2 and result.failure_count == 0
    again = auth.import_users([auth.ImportUserRecord(uid=uid)], app=app)
    assert again.failure_count == 1 and "existing account" in again.errors[0].reason

    assert client.error("signInWithPassword", {"email": address, "password": "hunter2"}) == "INVALID_LOGIN_CREDENTIALS"
    assert client.ok("signInWithPassword", {"email": address, "password": "user1password", "returnSecureToken": True})["localId"] == uid
    # Re-hashed with argon2id on that sign-in; the password still works.
    assert client.ok("signInWithPassword", {"email": address, "password": "user1password", "returnSecureToken": True})

    deleted = auth.delete_users([uid, uid + "-dup", "no-such-user"], app=app)
    assert deleted.success_count == 3 and deleted.failure_count == 0
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user(uid, app=app)


def test_users_cli_against_a_running_server(hearth, hearth_server, client, tmp_path):
    """`hearth users` works on the live data directory: an import of Firebase's export format signs in with
    the old password, and `disable` ends the session the server already handed out."""
    address = email()
    export = tmp_path / "users.json"
    export.write_text(
        json.dumps(
            {
                "users": [
                    {
                        "localId": "cli-" + uuid.uuid4().hex[:8],
                        "email": address,
                        "emailVerified": True,
                        "passwordHash": "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
                        "salt": "42xEC+ixf3L2lw==",
                        "displayName": "Test User 1",
                        "lastSignedInAt": "1508893925000",
                        "createdAt": "1508893925000",
                        "providerUserInfo": [],
                    }
                ]
            }
        )
    )
    data = str(hearth_server.data)
    imported = hearth(
        "users", "import", str(export), "--data", data,
        "--hash-key", "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==",
        "--salt-separator", "Bw==", "--rounds", "8", "--mem-cost", "14",
    )
    assert imported.returncode == 0, imported.stderr
    assert "imported 1, failed 0" in imported.stderr

    signed_in = client.ok("signInWithPassword", {"email": address, "password": "user1password", "returnSecureToken": True})
    uid = signed_in["localId"]
    listed = hearth("users", "list", "--data", data)
    assert f"{uid}\t{address}\tverified" in listed.stdout

    assert hearth("users", "disable", uid, "--data", data).returncode == 0
    assert client.refresh(signed_in["refreshToken"]).json()["error"]["message"] == "USER_DISABLED"
    assert client.error("signInWithPassword", {"email": address, "password": "user1password"}) == "USER_DISABLED"
    assert hearth("users", "enable", uid, "--data", data).returncode == 0
    assert client.ok("signInWithPassword", {"email": address, "password": "user1password", "returnSecureToken": True})

    # The export carries the (now argon2id) hash with its parameters: deleted and imported back, the
    # account signs in with the same password, no options needed.
    exported = json.loads(hearth("users", "export", "--data", data).stdout)
    (mine,) = [user for user in exported["users"] if user["localId"] == uid]
    assert mine["email"] == address and mine["passwordHash"] and mine["salt"]
    assert mine["passwordHashParameters"] == {"algorithm": "ARGON2ID", "memoryCost": 19456, "rounds": 2, "parallelization": 1}
    assert hearth("users", "delete", uid, "--data", data).returncode == 0
    assert client.error("signInWithPassword", {"email": address, "password": "user1password"}) == "INVALID_LOGIN_CREDENTIALS"
    export.write_text(json.dumps({"users": [mine]}))
    again = hearth("users", "import", str(export), "--data", data)
    assert again.returncode == 0 and "imported 1, failed 0" in again.stderr, again.stderr
    assert client.ok("signInWithPassword", {"email": address, "password": "user1password", "returnSecureToken": True})["localId"] == uid
    assert client.error("signInWithPassword", {"email": address, "password": "wrong-password"}) == "INVALID_LOGIN_CREDENTIALS"
    assert hearth("users", "delete", uid, "--data", data).returncode == 0
    assert hearth("users", "add", "not-an-email", "secret123", "--data", data).returncode == 1


def test_session_cookies(app, client):
    address = email()
    auth.create_user(email=address, password="secret123", app=app)
    id_token = client.ok("signInWithPassword", {"email": address, "password": "secret123", "returnSecureToken": True})["idToken"]
    cookie = auth.create_session_cookie(id_token, expires_in=3600, app=app)
    claims = auth.verify_session_cookie(cookie, app=app)
    assert claims["email"] == address and claims["exp"] - claims["iat"] == 3600
    assert jwt.get_unverified_header(cookie)["alg"] == "RS256"
    with pytest.raises(ValueError):
        auth.create_session_cookie(id_token, expires_in=60, app=app)  # the SDK enforces 5 min – 14 days
