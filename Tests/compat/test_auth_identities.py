"""Account attributes firebase-admin manages (issue: user management as firebase-admin expects it):
phone numbers, linked providers, exports that migrate, action-link domains, and plain answers for what
Hearth does not do. Through firebase-admin against the real `hearth serve --emulator`, and over REST
where firebase-admin hides the wire."""

import base64
import os
import random
import time
import uuid

import firebase_admin
import pytest
import requests
from firebase_admin import auth, exceptions

from test_auth import KEY, Client, _NoCredential, email


@pytest.fixture(scope="module")
def app(hearth_server):
    os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = f"{hearth_server.host}:{hearth_server.port}"
    app = firebase_admin.initialize_app(_NoCredential(), {"projectId": "demo-test"}, name=f"ids-{uuid.uuid4().hex[:8]}")
    auth.list_users(app=app)
    yield app
    os.environ.pop("FIREBASE_AUTH_EMULATOR_HOST", None)
    firebase_admin.delete_app(app)


def phone():
    return "+1" + "".join(random.choice("0123456789") for _ in range(10))


def admin(hearth_server, operation, body):
    return requests.post(
        f"{hearth_server.url}/identitytoolkit.googleapis.com/v1/projects/demo-test/accounts:{operation}",
        json=body, headers={"Authorization": "Bearer owner"}, timeout=10)


def provider_ids(user):
    return sorted(provider.provider_id for provider in user.provider_data)


def test_phone_numbers_are_attributes_unique_like_emails(app):
    number = phone()
    user = auth.create_user(email=email(), password="secret123", phone_number=number, app=app)
    assert user.phone_number == number
    assert provider_ids(user) == ["password", "phone"]
    assert auth.get_user_by_phone_number(number, app=app).uid == user.uid
    # Unique, like an email.
    with pytest.raises(auth.PhoneNumberAlreadyExistsError):
        auth.create_user(phone_number=number, app=app)
    other = auth.create_user(app=app)
    with pytest.raises(auth.PhoneNumberAlreadyExistsError):
        auth.update_user(other.uid, phone_number=number, app=app)
    # E.164 only (firebase-admin checks the '+' itself; the server the rest).
    for bad in ["+0123456", "+1 555 555 0100", "+1234567890123456", "+1"]:
        with pytest.raises(exceptions.InvalidArgumentError, match="INVALID_PHONE_NUMBER"):
            auth.update_user(other.uid, phone_number=bad, app=app)
    # Removed with DELETE_ATTRIBUTE (deleteProvider: ["phone"]), which frees the number.
    cleared = auth.update_user(user.uid, phone_number=auth.DELETE_ATTRIBUTE, app=app)
    assert cleared.phone_number is None and provider_ids(cleared) == ["password"]
    assert auth.update_user(other.uid, phone_number=number, app=app).phone_number == number
    found = auth.get_users([auth.PhoneIdentifier(number), auth.UidIdentifier(user.uid)], app=app)
    assert sorted(u.uid for u in found.users) == sorted([user.uid, other.uid])


def test_providers_are_linked_listed_found_and_removed(app, hearth_server):
    google_uid = uuid.uuid4().hex
    user = auth.create_user(email=email(), app=app)
    assert provider_ids(user) == []  # an address without a password is no sign-in method
    # firebase-admin for Node links with `providerToLink`: linkProviderUserInfo on the wire.
    response = admin(hearth_server, "update", {
        "localId": user.uid, "linkProviderUserInfo": {"providerId": "google.com", "rawId": google_uid, "email": "g@example.com"}})
    assert response.status_code == 200, response.text
    linked = auth.get_user(user.uid, app=app)
    assert provider_ids(linked) == ["google.com"]
    (google,) = linked.provider_data
    assert google.uid == google_uid and google.email == "g@example.com"
    found = auth.get_users([auth.ProviderIdentifier("google.com", google_uid)], app=app)
    assert [u.uid for u in found.users] == [user.uid]
    # One provider identity belongs to one account.
    response = admin(hearth_server, "update", {
        "localId": auth.create_user(app=app).uid, "linkProviderUserInfo": {"providerId": "google.com", "rawId": google_uid}})
    assert response.status_code == 400 and response.json()["error"]["message"] == "FEDERATED_USER_ID_ALREADY_LINKED"
    removed = auth.update_user(user.uid, providers_to_delete=["google.com"], app=app)
    assert provider_ids(removed) == []
    assert auth.get_users([auth.ProviderIdentifier("google.com", google_uid)], app=app).users == []
    # Imported with an export's providers: password and phone are the account's own, the rest linked.
    uid = uuid.uuid4().hex[:20]
    result = auth.import_users([auth.ImportUserRecord(
        uid=uid, email=email(), phone_number=phone(),
        provider_data=[auth.UserProvider(uid="gh-1", provider_id="github.com", display_name="Octo")])], app=app)
    assert result.success_count == 1, [e.reason for e in result.errors]
    assert provider_ids(auth.get_user(uid, app=app)) == ["github.com", "phone"]


def test_exports_carry_hashes_that_verify_after_an_import(app, hearth_server):
    address = email()
    user = auth.create_user(email=address, password="secret123", app=app)
    exported = next(u for u in auth.list_users(app=app).iterate_all() if u.uid == user.uid)
    assert exported.password_hash and exported.password_salt
    # Back into an account of its own with the stated parameters (docs/auth.md): the same password works.
    uid = uuid.uuid4().hex[:20]
    copy = email()
    response = admin(hearth_server, "batchCreate", {
        "hashAlgorithm": "ARGON2ID", "memoryCost": 19456, "rounds": 2, "parallelization": 1,
        "users": [{"localId": uid, "email": copy, "passwordHash": exported.password_hash, "salt": exported.password_salt}]})
    assert response.status_code == 200 and "error" not in response.json(), response.text
    client = Client(hearth_server.url)
    assert client.ok("signInWithPassword", {"email": copy, "password": "secret123", "returnSecureToken": True})["localId"] == uid
    assert client.call("signInWithPassword", {"email": copy, "password": "wrong-one"}).status_code == 400
    # Signing in sets the last refresh time, which lookups return.
    assert auth.get_user(user.uid, app=app).user_metadata.last_refresh_timestamp is None
    client.ok("signInWithPassword", {"email": address, "password": "secret123", "returnSecureToken": True})
    refreshed = auth.get_user(user.uid, app=app).user_metadata.last_refresh_timestamp
    assert refreshed is not None and abs(refreshed - time.time() * 1000) < 60_000


def test_link_domains_must_be_authorized(app):
    settings = auth.ActionCodeSettings("http://localhost/done", handle_code_in_app=True, link_domain="cool.link")
    with pytest.raises(auth.InvalidHostingLinkDomainError):
        auth.generate_sign_in_with_email_link(email(), settings, app=app)
    ok = auth.ActionCodeSettings("http://localhost/done", handle_code_in_app=True, link_domain="localhost")
    assert auth.generate_sign_in_with_email_link(email(), ok, app=app).startswith("http")


def test_what_hearth_does_not_do_is_said_plainly(app, hearth_server):
    for path in ["tenants", "accounts/mfaEnrollment:start"]:
        response = requests.post(
            f"{hearth_server.url}/identitytoolkit.googleapis.com/v2/projects/demo-test/{path}",
            json={}, headers={"Authorization": "Bearer owner"}, timeout=10)
        assert response.status_code == 400
        assert "not supported by Hearth" in response.json()["error"]["message"]
    # SAML configurations are kept, but signing in with one is refused in so many words.
    response = requests.post(
        f"{hearth_server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp?key=k",
        json={"requestUri": "http://localhost", "postBody": "providerId=saml.corp&id_token={\"sub\":\"a\"}"}, timeout=10)
    assert response.status_code == 400
    assert "SAML sign-in is not supported by Hearth" in response.json()["error"]["message"]
