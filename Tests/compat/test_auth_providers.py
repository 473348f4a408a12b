"""Sign-in with identity providers through the real `hearth serve`: provider configurations through
firebase-admin, and accounts:signInWithIdp against providers on loopback (idp_support.py) with real keys,
as an app's backend and the official SDKs call it. Hostile tokens, a provider that hangs and one that
fails are refused with Firebase's errors, create nothing, and never stall the rest of the server."""

import hashlib
import json
import os
import threading
import time
import uuid

import firebase_admin
import pytest
import requests
from firebase_admin import auth

from conftest import start_hearth
from idp_support import LocalProviders, google_claims
from test_auth import _NoCredential

GOOGLE_CLIENT = "web-client.apps.googleusercontent.com"
APPLE_CLIENT = "com.example.app"


@pytest.fixture(scope="module")
def providers():
    local = LocalProviders()
    yield local
    local.stop()


class IdpServer:
    """`hearth serve` (not the emulator: signatures are checked) pointed at the local providers."""

    def __init__(self, binary, data, providers: LocalProviders):
        endpoints = data / "provider-endpoints.json"
        endpoints.write_text(json.dumps(providers.endpoints()))
        self.process, self.port = start_hearth(
            binary, "--data", str(data), "--project", "demo-idp", "--provider-endpoints", str(endpoints))
        assert self.process.poll() is None, self.process.stderr.read()
        self.url = f"http://127.0.0.1:{self.port}"
        self.admin = {"Authorization": "Bearer " + (data / "admin-token").read_text().strip()}

    def configure(self, collection: str, provider_id: str, body: dict) -> requests.Response:
        parameter = {"oauthIdpConfigs": "oauthIdpConfigId", "inboundSamlConfigs": "inboundSamlConfigId"}.get(collection, "idpId")
        return requests.post(f"{self.url}/identitytoolkit.googleapis.com/v2/projects/demo-idp/{collection}",
                             params={parameter: provider_id}, json=body, headers=self.admin, timeout=10)

    def sign_in(self, post_body: str, **extra) -> requests.Response:
        body = {"requestUri": "http://localhost", "postBody": post_body, "returnSecureToken": True, **extra}
        return requests.post(f"{self.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp?key=k", json=body, timeout=30)

    def users(self) -> list:
        answer = requests.post(f"{self.url}/identitytoolkit.googleapis.com/v1/projects/demo-idp/accounts:query", json={},
                               headers=self.admin, timeout=10)
        return answer.json().get("userInfo", [])

    def stop(self):
        self.process.terminate()
        self.process.communicate(timeout=20)


@pytest.fixture(scope="module")
def server(hearth_binary, tmp_path_factory, providers):
    running = IdpServer(hearth_binary, tmp_path_factory.mktemp("idp-data"), providers)
    for provider_id, body in [
        ("google.com", {"enabled": True, "clientId": GOOGLE_CLIENT}),
        ("apple.com", {"enabled": True, "clientId": APPLE_CLIENT}),
        ("github.com", {"enabled": True, "clientId": providers.github_app[0], "clientSecret": providers.github_app[1]}),
        ("facebook.com", {"enabled": True, "clientId": providers.facebook_app[0], "clientSecret": providers.facebook_app[1]}),
    ]:
        assert running.configure("defaultSupportedIdpConfigs", provider_id, body).status_code == 200
    for provider_id, issuer in [("oidc.local", providers.oidc_issuer), ("oidc.hanging", providers.hanging_issuer)]:
        answer = running.configure("oauthIdpConfigs", provider_id,
                                   {"clientId": "oidc-client", "issuer": issuer, "enabled": True, "responseType": {"idToken": True}})
        assert answer.status_code == 200, answer.text
    yield running
    running.stop()


def error(answer: requests.Response) -> str:
    return answer.json().get("error", {}).get("message", "")


# --- Configurations, as firebase-admin manages them (Google's own suite does the same calls) ---

@pytest.fixture(scope="module")
def admin_app(hearth_server):
    os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = f"{hearth_server.host}:{hearth_server.port}"
    app = firebase_admin.initialize_app(_NoCredential(), {"projectId": "demo-test"}, name=f"idp-{uuid.uuid4().hex[:8]}")
    yield app
    os.environ.pop("FIREBASE_AUTH_EMULATOR_HOST", None)
    firebase_admin.delete_app(app)


def test_oidc_configurations_through_firebase_admin(admin_app):
    provider_id = "oidc." + uuid.uuid4().hex[:10]
    created = auth.create_oidc_provider_config(
        provider_id, client_id="CLIENT", issuer="https://oidc.example.com/issuer", display_name="Partner", enabled=True,
        id_token_response_type=True, code_response_type=False, app=admin_app)
    assert (created.provider_id, created.client_id, created.issuer, created.display_name) == \
        (provider_id, "CLIENT", "https://oidc.example.com/issuer", "Partner")
    assert created.enabled and created.id_token_response_type and not created.code_response_type
    assert created.client_secret is None
    assert auth.get_oidc_provider_config(provider_id, app=admin_app).client_id == "CLIENT"
    assert provider_id in [config.provider_id for config in auth.list_oidc_provider_configs(app=admin_app).iterate_all()]
    updated = auth.update_oidc_provider_config(
        provider_id, client_id="UPDATED", issuer="https://oidc.example.com/updated", display_name="Renamed", enabled=False,
        client_secret="SECRET", id_token_response_type=False, code_response_type=True, app=admin_app)
    assert (updated.client_id, updated.issuer, updated.display_name, updated.enabled, updated.client_secret) == \
        ("UPDATED", "https://oidc.example.com/updated", "Renamed", False, "SECRET")
    assert updated.code_response_type and not updated.id_token_response_type
    only_name = auth.update_oidc_provider_config(provider_id, display_name=auth.DELETE_ATTRIBUTE, app=admin_app)
    assert only_name.display_name is None and only_name.client_id == "UPDATED"
    auth.delete_oidc_provider_config(provider_id, app=admin_app)
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.get_oidc_provider_config(provider_id, app=admin_app)


def test_saml_configurations_through_firebase_admin(admin_app):
    provider_id = "saml." + uuid.uuid4().hex[:10]
    pem = "-----BEGIN CERTIFICATE-----\nMIICZjCCAc+gAwIBAgIBADANBgkqhkiG9w0BAQ0FADBQMQswCQYDVQQGEwJ1czEL\n-----END CERTIFICATE-----\n"
    created = auth.create_saml_provider_config(
        provider_id, idp_entity_id="IDP", sso_url="https://idp.example.com/login", x509_certificates=[pem],
        rp_entity_id="RP", callback_url="https://demo.firebaseapp.com/__/auth/handler", display_name="Corp", enabled=True,
        app=admin_app)
    assert created.x509_certificates == [pem]  # byte for byte
    assert (created.idp_entity_id, created.rp_entity_id, created.callback_url) == \
        ("IDP", "RP", "https://demo.firebaseapp.com/__/auth/handler")
    updated = auth.update_saml_provider_config(provider_id, x509_certificates=[pem + "\n"], enabled=False, app=admin_app)
    assert updated.x509_certificates == [pem + "\n"] and updated.idp_entity_id == "IDP" and not updated.enabled
    assert provider_id in [config.provider_id for config in auth.list_saml_provider_configs(app=admin_app).iterate_all()]
    auth.delete_saml_provider_config(provider_id, app=admin_app)
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.get_saml_provider_config(provider_id, app=admin_app)


# --- Sign-in against providers on loopback, signatures checked ---

def test_google_signs_up_then_in_and_the_token_names_the_provider(server, providers):
    first = server.sign_in(f"id_token={providers.keys.sign(google_claims('g-100', GOOGLE_CLIENT, 'grace@example.com'))}&providerId=google.com")
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["isNewUser"] is True and body["federatedId"] == "https://accounts.google.com/g-100"
    again = server.sign_in(f"id_token={providers.keys.sign(google_claims('g-100', GOOGLE_CLIENT))}&providerId=google.com").json()
    assert again["localId"] == body["localId"] and "isNewUser" not in again
    looked = requests.post(f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:lookup?key=k",
                           json={"idToken": again["idToken"]}, timeout=10).json()["users"][0]
    assert [(p["providerId"], p["rawId"]) for p in looked["providerUserInfo"]] == [("google.com", "g-100")]
    # The database sees the provider in the rules' auth.token.
    claims = json.loads(__import__("base64").urlsafe_b64decode(again["idToken"].split(".")[1] + "=="))
    assert claims["firebase"]["sign_in_provider"] == "google.com"


def test_hostile_tokens_are_refused_and_create_nothing(server, providers):
    before = len(server.users())
    now = int(time.time())
    good = google_claims("g-hostile", GOOGLE_CLIENT, "h@example.com")
    header = __import__("base64").urlsafe_b64encode(b'{"alg":"none","typ":"JWT"}').rstrip(b"=").decode()
    payload = __import__("base64").urlsafe_b64encode(json.dumps(good).encode()).rstrip(b"=").decode()
    hostile = {
        "alg none": f"{header}.{payload}.",
        "HS256 with the public key": providers.keys.sign_hs256_with_public_key(good),
        "wrong aud": providers.keys.sign({**good, "aud": "another-project"}),
        "wrong iss": providers.keys.sign({**good, "iss": "https://evil.example"}),
        "expired": providers.keys.sign({**good, "exp": now - 3600, "iat": now - 7200}),
        "iat in the future": providers.keys.sign({**good, "iat": now + 3600}),
        "unknown kid": providers.keys.sign(good, header={"kid": "not-published"}),
        "jku header": providers.keys.sign(good, header={"jku": "https://evil.example/keys"}),
        "oversized": "a" * 20_000,
        "malformed": "not.a.jwt",
    }
    for name, token in hostile.items():
        answer = server.sign_in(f"id_token={token}&providerId=google.com")
        assert answer.status_code == 400, name
        assert error(answer).startswith("INVALID_IDP_RESPONSE"), (name, error(answer))
    # Apple: the nonce must be the SHA-256 of the raw nonce, and a token signs in once.
    raw = uuid.uuid4().hex
    apple = providers.keys.sign({"iss": "https://appleid.apple.com", "aud": APPLE_CLIENT, "sub": "apple-h", "iat": now,
                                 "exp": now + 600, "nonce": hashlib.sha256(raw.encode()).hexdigest()}, alg="ES256")
    assert error(server.sign_in(f"id_token={apple}&providerId=apple.com&nonce=wrong")).startswith("MISSING_OR_INVALID_NONCE")
    assert error(server.sign_in(f"id_token={apple}&providerId=apple.com")).startswith("MISSING_OR_INVALID_NONCE")
    assert len(server.users()) == before
    assert server.sign_in(f"id_token={apple}&providerId=apple.com&nonce={raw}").status_code == 200
    assert "Duplicate credential" in error(server.sign_in(f"id_token={apple}&providerId=apple.com&nonce={raw}"))
    # The unknown kid made the keys be fetched again once at most (not once per token).
    assert providers.count("/google/keys") <= 2


def test_an_openid_provider_signs_in_with_es256_through_discovery(server, providers):
    now = int(time.time())
    token = providers.keys.sign({"iss": providers.oidc_issuer, "aud": "oidc-client", "sub": "o-1", "iat": now, "exp": now + 600,
                                 "email": "o@example.com", "email_verified": True}, alg="ES256")
    answer = server.sign_in(f"id_token={token}&providerId=oidc.local")
    assert answer.status_code == 200, answer.text
    assert answer.json()["providerId"] == "oidc.local"
    assert error(server.sign_in(f"id_token={token}&providerId=oidc.unconfigured")).startswith("OPERATION_NOT_ALLOWED")


def test_a_hanging_provider_fails_within_its_bound_and_the_server_keeps_serving(server, providers):
    now = int(time.time())
    token = providers.keys.sign({"iss": providers.hanging_issuer, "aud": "oidc-client", "sub": "h-1", "iat": now, "exp": now + 600})
    result = {}

    def sign_in():
        started = time.monotonic()
        result["answer"] = server.sign_in(f"id_token={token}&providerId=oidc.hanging")
        result["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=sign_in)
    thread.start()
    # Meanwhile the database answers at once: the provider is waited for off the event loop.
    while thread.is_alive() and providers.count("/hang/keys") == 0:
        time.sleep(0.01)
    started = time.monotonic()
    assert requests.get(f"{server.url}/.json?ns=demo-idp-default-rtdb&shallow=true", headers=server.admin, timeout=5).status_code == 200
    assert time.monotonic() - started < 1.0
    thread.join(30)
    assert result["answer"].status_code == 400
    assert "could not be read" in error(result["answer"])
    assert result["seconds"] < 10  # ServerLimits.providerFetchTotalSeconds (5) and some
    # Within the backoff a second attempt fails at once, without asking the provider again.
    asked = providers.count("/hang/keys")
    started = time.monotonic()
    assert server.sign_in(f"id_token={token}&providerId=oidc.hanging").status_code == 400
    assert time.monotonic() - started < 2 and providers.count("/hang/keys") == asked


def test_github_and_facebook_ask_their_apis_and_only_trust_this_apps_tokens(server, providers):
    providers.github_users["gh-live"] = {"id": 9001, "login": "octo", "name": "Octo", "avatar_url": "https://a/o.png",
                                         "email": "octo-live@example.com"}
    answer = server.sign_in("access_token=gh-live&providerId=github.com")
    assert answer.status_code == 200, answer.text
    assert (answer.json()["federatedId"], answer.json()["screenName"]) == ("9001", "octo")
    assert error(server.sign_in("access_token=someone-elses&providerId=github.com")).startswith("INVALID_IDP_RESPONSE")
    providers.facebook_users["fb-live"] = {"id": "55", "name": "Mark", "email": "octo-live@example.com"}
    confirm = server.sign_in("access_token=fb-live&providerId=facebook.com").json()
    # Facebook's address is unverified and belongs to the GitHub account: the app must confirm.
    assert confirm["needConfirmation"] is True and confirm["localId"] == answer.json()["localId"]
    assert "idToken" not in confirm
    providers.failing.add("/facebook/debug_token")
    assert error(server.sign_in("access_token=fb-live&providerId=facebook.com")).startswith("INVALID_IDP_RESPONSE")
    providers.failing.clear()


def test_link_then_unlink_a_provider(server, providers):
    anonymous = requests.post(f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
                              json={"returnSecureToken": True}, timeout=10).json()
    token = providers.keys.sign(google_claims("g-link", GOOGLE_CLIENT, "linker@example.com"))
    linked = server.sign_in(f"id_token={token}&providerId=google.com", idToken=anonymous["idToken"])
    assert linked.status_code == 200 and linked.json()["localId"] == anonymous["localId"]
    other = requests.post(f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
                          json={"returnSecureToken": True}, timeout=10).json()
    carried = server.sign_in(f"id_token={token}&providerId=google.com", idToken=other["idToken"], returnIdpCredential=True)
    assert carried.status_code == 200 and carried.json()["errorMessage"] == "FEDERATED_USER_ID_ALREADY_LINKED"
    unlinked = requests.post(f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:update?key=k",
                             json={"idToken": linked.json()["idToken"], "deleteProvider": ["google.com"]}, timeout=10).json()
    assert all(p["providerId"] != "google.com" for p in unlinked.get("providerUserInfo", []))
