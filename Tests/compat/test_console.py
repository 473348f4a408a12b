"""The console's API through the real binary (docs/console.md, docs/console-api.md): signing in with a
one-time link, the cookie session and its CSRF token, and everything the pages do, each checked the way a
user would check it: over REST, with a real user's token, or on disk. The pages themselves are driven in
Chromium by test_console_browser.py."""

import json
import subprocess
import threading
import time

import pytest
import requests

from console_support import SPENT, Console, start_console_server


@pytest.fixture(scope="module")
def server(hearth_binary, tmp_path_factory):
    server = start_console_server(hearth_binary, tmp_path_factory.mktemp("console-data"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def console(server):
    return Console(server)


def api_key() -> dict:
    return {"key": "console-test-key"}


def sign_up(server, email: str, password: str = "secret123") -> dict:
    answer = requests.post(
        f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp", params=api_key(),
        json={"email": email, "password": password, "returnSecureToken": True})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_sign_in_link_signs_in_once_and_no_other_code_is_told(server, console):
    # `console` used the link `hearth console link` gave: it is spent, and the log says so without a new code.
    again = requests.get(server.link, allow_redirects=False)
    assert again.status_code == 303 and again.headers["location"] == "/console/?signin=failed"
    assert "set-cookie" not in again.headers
    said = server.read_stderr(SPENT).group(0)
    assert "code=" not in said and "admin token" in said
    # `/` leads to the console, whose page is served with a policy that keeps other sites out.
    root = requests.get(server.url + "/", allow_redirects=False)
    assert root.status_code == 303 and root.headers["location"] == "/console/"
    page = requests.get(server.url + "/console/")
    assert page.status_code == 200 and "<html" in page.text.lower()
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    cookie = console.http.cookies.get("hearth_console")
    assert cookie
    raw = requests.get(server.link, allow_redirects=False)  # spent, but shows no cookie either way
    assert raw.status_code == 303


def test_the_admin_token_signs_in_too(server):
    http = requests.Session()
    assert http.post(server.url + "/console/api/signin", json={"token": "wrong"}).status_code == 401
    answer = http.post(server.url + "/console/api/signin", json={"token": server.admin_token})
    assert answer.status_code == 200
    assert "HttpOnly" in answer.headers["set-cookie"] and "SameSite=Strict" in answer.headers["set-cookie"]
    assert http.get(server.url + "/console/api/session").status_code == 200


def test_nothing_in_the_console_works_for_a_non_admin(server, console):
    user = sign_up(server, "stranger@example.com")
    as_user = {"Authorization": f"Bearer {user['idToken']}"}
    forged = {"Cookie": "hearth_console=" + "0" * 64}
    gets = ["session", "usage", "namespaces", "rules", "children", "changes",
            "auth/emulator/v1/projects/console-test/oobCodes"]
    for headers in (as_user, forged, {}):
        for endpoint in gets:
            answer = requests.get(f"{server.url}/console/api/{endpoint}", headers=headers, timeout=5)
            assert answer.status_code == 401, (endpoint, headers, answer.text)
        for endpoint in ("namespaces", "rules/deploy", "rules/simulate", "rules/rollback",
                         "auth/identitytoolkit.googleapis.com/v1/projects/console-test/accounts:query"):
            answer = requests.post(f"{server.url}/console/api/{endpoint}", headers=headers, json={"name": "x"}, timeout=5)
            assert answer.status_code == 401, (endpoint, headers, answer.text)
    # A forged cookie is no credential for the data either.
    assert requests.put(f"{server.url}/private.json", json=1, headers=server.admin()).status_code == 200
    assert requests.get(f"{server.url}/.json", headers=forged).status_code == 401


def test_the_cookie_alone_reads_nothing(server, console):
    """Another port of this host is the same site: its pages make the browser send the cookie (JSONP with
    `callback=`, an `<img>` naming a new namespace). Without the CSRF token the cookie is no one: the request
    is a signed-out one, which the rules judge as such."""
    assert requests.put(f"{server.url}/secret.json", json={"apiKey": "top"}, headers=server.admin()).status_code == 200
    cookie_only = console.http.get(f"{server.url}/.json", params={"callback": "leak", "format": "export"})
    assert cookie_only.status_code == 401 and "top" not in cookie_only.text
    assert cookie_only.json() == {"error": "Permission denied"}
    assert console.http.get(f"{server.url}/x.json", params={"ns": "planted"}).status_code == 404
    assert not (server.data / "planted.sqlite").exists()
    assert console.http.get(f"{server.url}/console/api/usage").status_code == 403
    assert console.get("/secret.json").json() == {"apiKey": "top"}


def test_with_the_console_signed_in_public_data_reads_as_for_anyone(server, console):
    """The same browser's other pages (a --public app on this port) send the cookie with their own fetches,
    without the console's token: those are signed-out requests, answered as for anyone, not refused. A
    wrong token is still refused."""
    namespace = "publicreads"
    assert console.send("POST", "/console/api/namespaces", json={"name": namespace}).status_code == 201
    rules = {"rules": {"public": {".read": True}}}
    assert requests.put(f"{server.url}/.settings/rules.json?ns={namespace}", json=rules, headers=server.admin()).status_code == 200
    assert requests.put(f"{server.url}/public/news.json?ns={namespace}", json="hello", headers=server.admin()).status_code == 200
    assert requests.put(f"{server.url}/private.json?ns={namespace}", json="no", headers=server.admin()).status_code == 200
    public = console.http.get(f"{server.url}/public/news.json", params={"ns": namespace})
    assert public.status_code == 200 and public.json() == "hello"
    assert console.http.get(f"{server.url}/private.json", params={"ns": namespace}).status_code == 401
    wrong = console.http.get(f"{server.url}/public/news.json", params={"ns": namespace}, headers={"X-Hearth-CSRF": "0" * 64})
    assert wrong.status_code == 403 and "CSRF" in wrong.json()["error"]


def test_data_under_a_key_named_console_is_still_data(server, console):
    assert requests.put(f"{server.url}/console/settings.json", json={"theme": "dark"}, headers=server.admin()).status_code == 200
    assert requests.get(f"{server.url}/console/settings.json", headers=server.admin()).json() == {"theme": "dark"}


def test_changes_need_the_csrf_token(server, console):
    assert console.send("PUT", "/csrf.json", json="kept").status_code == 200
    # Without the token the cookie is nobody: a signed-out write, which the (locked) rules refuse.
    bare = console.http.put(server.url + "/csrf.json", json="replaced")
    assert bare.status_code == 401, bare.text
    assert console.http.post(server.url + "/console/api/namespaces", json={"name": "sneaky"}).status_code == 403
    # With a wrong one, refused as such.
    wrong = {"X-Hearth-CSRF": "0" * 64}
    forged = console.http.put(server.url + "/csrf.json", json="replaced", headers=wrong)
    assert forged.status_code == 403 and "CSRF" in forged.json()["error"]
    assert console.http.post(server.url + "/console/api/namespaces", json={"name": "sneaky"}, headers=wrong).status_code == 403
    assert requests.get(server.url + "/csrf.json", headers=server.admin()).json() == "kept"
    assert "sneaky" not in [row["name"] for row in console.get("/console/api/namespaces").json()["namespaces"]]


def test_the_change_feed_takes_its_csrf_token_in_a_header_never_the_url(server, console):
    """Proxies and browsers log URLs: a token in one would be there for anyone reading the logs."""
    in_url = console.http.get(server.url + "/console/api/changes", params={"csrf": console.csrf}, stream=True, timeout=5)
    assert in_url.status_code == 403
    in_url.close()
    with console.http.get(server.url + "/console/api/changes", headers={"X-Hearth-CSRF": console.csrf},
                          stream=True, timeout=10) as feed:
        assert feed.status_code == 200 and feed.headers["content-type"].startswith("text/event-stream")
        assert requests.put(f"{server.url}/fed.json", json=1, headers=server.admin()).status_code == 200
        lines = feed.iter_lines(decode_unicode=True)
        assert next(line for line in lines if line.startswith("data:")) == 'data: {"paths":["/fed"]}'


def test_the_console_forwards_only_json_bodies_to_auth(server, console):
    """Firebase Auth reads JSON only: a form body was taken for no body at all, and made an account without
    the email it named. It is refused, clearly, and nothing is made."""
    project = "console-test"
    path = f"/console/api/auth/identitytoolkit.googleapis.com/v1/projects/{project}/accounts"
    before = console.send("POST", f"/console/api/auth/identitytoolkit.googleapis.com/v1/projects/{project}/accounts:query",
                          json={}).json().get("recordsCount")
    form = console.send("POST", path, data="email=form%40example.com&password=secret123",
                        headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert form.status_code == 415 and "application/json" in form.json()["error"], form.text
    text = console.send("POST", path, data='{"email": "text@example.com", "password": "secret123"}',
                        headers={"Content-Type": "text/plain"})
    assert text.status_code == 415
    after = console.send("POST", f"/console/api/auth/identitytoolkit.googleapis.com/v1/projects/{project}/accounts:query",
                         json={}).json().get("recordsCount")
    assert after == before
    made = console.send("POST", path, json={"email": "json@example.com", "password": "secret123"})
    assert made.status_code == 200 and made.json()["email"] == "json@example.com"


def test_provider_secrets_go_in_through_the_console_and_never_come_back_out(server, console):
    """An identity provider's client secret is written through the console and kept, but no answer the
    console's pages get carries it: they see that one is set. The admin API itself still returns it, as
    firebase-admin expects."""
    base = "/console/api/auth/identitytoolkit.googleapis.com/v2/projects/console-test/defaultSupportedIdpConfigs"
    made = console.send("POST", base, params={"idpId": "github.com"},
                        json={"enabled": True, "clientId": "gh-console", "clientSecret": "gh-secret-from-console"})
    assert made.status_code == 200, made.text
    for answer in [made, console.get(base), console.get(base + "/github.com"),
                   console.send("PATCH", base + "/github.com", params={"updateMask": "enabled"}, json={"enabled": False})]:
        assert answer.status_code == 200, answer.text
        assert "gh-secret-from-console" not in answer.text
        assert '"clientSecretSet":true' in answer.text.replace(" ", "")
    direct = requests.get(f"{server.url}/identitytoolkit.googleapis.com/v2/projects/console-test/defaultSupportedIdpConfigs/github.com",
                          headers=server.admin(), timeout=10)
    assert direct.json()["clientSecret"] == "gh-secret-from-console"
    assert direct.json()["enabled"] is False
    # Kept owner-only on disk.
    assert (server.data / "auth-identity-providers.json").stat().st_mode & 0o077 == 0


def test_head_answers_carry_the_gets_length_once(server, console):
    """HEAD is GET without the body: the same length, said once (RFC 9110 §9.3.2), everywhere."""
    assert requests.put(f"{server.url}/sized.json", json={"a": "12345"}, headers=server.admin()).status_code == 200
    for path, headers in (("/console/", {}), ("/console/app.js", {}), ("/sized.json", server.admin()), ("/console", {})):
        got = requests.get(server.url + path, headers=headers, allow_redirects=False)
        head = requests.head(server.url + path, headers=headers, allow_redirects=False)
        assert head.status_code == got.status_code, path
        assert head.headers["content-length"] == str(len(got.content)) == got.headers["content-length"], path
        assert head.content == b""
        for answer in (got, head):
            assert answer.raw.headers.getlist("content-length") == [answer.headers["content-length"]], (path, answer.raw.headers)
    # The connection stays usable after a HEAD: no body bytes were left in it for the next answer.
    with requests.Session() as keep_alive:
        assert keep_alive.head(server.url + "/sized.json", headers=server.admin()).status_code == 200
        assert keep_alive.get(server.url + "/sized.json", headers=server.admin()).json() == {"a": "12345"}


def test_plain_http_sends_no_strict_transport_security(server, console):
    for path in ("/console/", "/sized.json", "/.json?shallow=true"):
        assert "strict-transport-security" not in requests.get(server.url + path, headers=server.admin()).headers


def test_the_tree_is_read_a_page_at_a_time(server, console):
    leaves = {f"k{index:05d}": index for index in range(1200)}
    assert requests.put(f"{server.url}/big.json", json={"list": leaves, "leaf": "v"}, headers=server.admin()).status_code == 200
    first = console.get("/console/api/children", params={"path": "/big/list", "limit": 500}).json()
    assert first["total"] == 1200 and first["more"] is True and len(first["children"]) == 500
    assert first["children"][0] == {"key": "k00000", "leaf": True, "value": 0}
    seen = [row["key"] for row in first["children"]]
    while first["more"]:
        first = console.get("/console/api/children", params={"path": "/big/list", "after": seen[-1], "limit": 500}).json()
        seen += [row["key"] for row in first["children"]]
    assert seen == sorted(leaves)
    top = console.get("/console/api/children", params={"path": "/big"}).json()
    assert top["children"] == [{"key": "leaf", "leaf": True, "value": "v"}, {"key": "list", "leaf": False, "count": 1200}]
    # A long value is shown in part, with its size: a page of big leaves stays small.
    long_text = "é" * 300_000
    assert requests.put(f"{server.url}/big/long.json", json=long_text, headers=server.admin()).status_code == 200
    page = console.get("/console/api/children", params={"path": "/big"})
    long_row = next(row for row in page.json()["children"] if row["key"] == "long")
    assert long_row["truncated"] is True and long_row["bytes"] == 600_000 and long_row["value"] == "é" * 1000
    assert len(page.content) < 10_000


def test_the_change_feed_names_written_paths_within_a_second(server, console):
    events: list = []
    opened = threading.Event()

    def listen():
        assert console.http.get(server.url + "/console/api/changes", timeout=5).status_code == 403
        with console.http.get(server.url + "/console/api/changes", headers={"X-Hearth-CSRF": console.csrf}, stream=True,
                              timeout=10) as stream:
            opened.set()
            for line in stream.iter_lines(decode_unicode=True):
                if line.startswith("data: "):
                    events.append((time.monotonic(), json.loads(line[6:])))
                    return

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    # Registered before its head is sent: once the head is here, the feed hears every commit.
    assert opened.wait(5)
    written = time.monotonic()
    assert requests.patch(f"{server.url}/feed.json", json={"a/b": 1, "c": 2}, headers=server.admin()).status_code == 200
    thread.join(5)
    assert events, "no change event"
    arrived, data = events[0]
    assert sorted(data["paths"]) == ["/feed/a/b", "/feed/c"]
    assert arrived - written < 1.0


def test_rules_errors_deploys_history_rollback_and_the_simulator(server, console):
    broken = '{\n  "rules": {\n    "notes": {\n      ".read": "auth != nul"\n    }\n  }\n}'
    refused = console.send("POST", "/console/api/rules/deploy", json={"source": broken, "format": "json"})
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["line"] == 4 and error["column"] > 1, error
    checked = console.send("POST", "/console/api/rules/check", json={"source": broken, "format": "json"}).json()
    assert checked["ok"] is False and checked["error"]["line"] == 4

    rules = ('{\n  "rules": {\n    "notes": {\n      "$uid": {\n        ".read": "auth != null && auth.uid == $uid",\n'
             '        ".write": "auth != null && auth.uid == $uid"\n      }\n    }\n  }\n}')
    deployed = console.send("POST", "/console/api/rules/deploy", json={"source": rules, "format": "json"})
    assert deployed.status_code == 200, deployed.text
    # The same rules over the REST rules endpoint, as the CLI reads them.
    assert requests.get(f"{server.url}/.settings/rules.json", headers=server.admin()).text == rules

    user = sign_up(server, "rules@example.com")
    uid = user["localId"]
    for (uid_as, path) in ((uid, f"/notes/{uid}"), (uid, "/notes/other"), (None, f"/notes/{uid}")):
        simulated = console.send("POST", "/console/api/rules/simulate", json={
            "operation": "read", "path": path, "auth": {"uid": uid_as} if uid_as else None}).json()
        params = {"auth": user["idToken"]} if uid_as else {}
        real = requests.get(f"{server.url}{path}.json", params=params)
        assert simulated["allowed"] == (real.status_code == 200), (path, uid_as, simulated, real.text)
        assert simulated["rule"]["line"] == 5, simulated
    # Bad keys are refused as a real request refuses them, before any rule.
    bad = console.send("POST", "/console/api/rules/simulate", json={
        "operation": "set", "path": "/notes/a.b", "auth": {"uid": uid}, "value": 1})
    real_bad = requests.put(f"{server.url}/notes/a.b.json", params={"auth": user["idToken"]}, json=1)
    assert bad.status_code == 400 and real_bad.status_code == 400
    write = console.send("POST", "/console/api/rules/simulate", json={
        "operation": "set", "path": f"/notes/{uid}", "auth": {"uid": uid}, "value": {"text": "hi"}}).json()
    real_write = requests.put(f"{server.url}/notes/{uid}.json", params={"auth": user["idToken"]}, json={"text": "hi"})
    assert write["allowed"] is True and real_write.status_code == 200

    bolt = "path /notes/{uid} {\n  read() { false }\n}\n"
    assert console.send("POST", "/console/api/rules/deploy", json={"source": bolt, "format": "bolt"}).status_code == 200
    assert requests.get(f"{server.url}/notes/{uid}.json", params={"auth": user["idToken"]}).status_code == 401
    listed = console.get("/console/api/rules").json()
    assert listed["format"] == "bolt" and listed["source"] == bolt
    versions = [row["version"] for row in listed["history"]]
    assert versions == sorted(versions, reverse=True) and len(versions) >= 2
    previous = versions[1]
    assert console.get("/console/api/rules/version", params={"version": previous}).json()["source"] == rules
    rolled = console.send("POST", "/console/api/rules/rollback", json={"version": previous})
    assert rolled.status_code == 200 and rolled.json()["version"] == versions[0] + 1
    assert requests.get(f"{server.url}/notes/{uid}.json", params={"auth": user["idToken"]}).status_code == 200
    # The history is on disk: it survives a restart of the console's view of it.
    assert (server.data / "console-test-default-rtdb.rules-history.jsonl").exists()


def test_users_are_managed_through_the_console(server, console):
    created = console.auth("accounts", {"email": "made@example.com", "password": "secret123"})
    assert created.status_code == 200, created.text
    uid = created.json()["localId"]
    sign_in = f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword"
    credentials = {"email": "made@example.com", "password": "secret123", "returnSecureToken": True}
    assert requests.post(sign_in, params=api_key(), json=credentials).status_code == 200
    assert console.auth("accounts:update", {"localId": uid, "disableUser": True}).status_code == 200
    refused = requests.post(sign_in, params=api_key(), json=credentials)
    assert refused.json()["error"]["message"] == "USER_DISABLED"
    listed = console.auth("accounts:query", {"returnUserInfo": True, "limit": 25}).json()
    assert any(user["localId"] == uid and user.get("disabled") for user in listed["userInfo"])
    found = console.auth("accounts:lookup", {"email": ["made@example.com"]}).json()
    assert found["users"][0]["localId"] == uid
    assert console.auth("accounts:sendOobCode", {"requestType": "PASSWORD_RESET", "email": "made@example.com"}).status_code == 200
    outbox = console.get("/console/api/auth/emulator/v1/projects/console-test/oobCodes").json()["oobCodes"]
    assert any(code["email"] == "made@example.com" and code["requestType"] == "PASSWORD_RESET" for code in outbox)
    assert console.auth("accounts:delete", {"localId": uid}).status_code == 200
    assert console.auth("accounts:lookup", {"localId": [uid]}).json().get("users") is None


def test_sign_in_methods_switch_off_and_on(server, console):
    config = "/console/api/auth/identitytoolkit.googleapis.com/admin/v2/projects/console-test/config"
    sign_up_url = f"{server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp"
    assert console.send("PATCH", config, json={"signIn": {"anonymous": {"enabled": False}}}).status_code == 200
    assert requests.post(sign_up_url, params=api_key(), json={}).json()["error"]["message"] == "ADMIN_ONLY_OPERATION"
    assert console.get(config).json()["signIn"]["anonymous"]["enabled"] is False
    assert console.send("PATCH", config, json={"signIn": {"anonymous": {"enabled": True}}}).status_code == 200
    assert requests.post(sign_up_url, params=api_key(), json={}).status_code == 200


def test_usage_moves_under_load(server, console):
    def charted_writes() -> float:
        """Writes the minute chart accounts for: each point's rate times the seconds of its step."""
        points = console.get("/console/api/usage", params={"range": "minute"}).json()["points"]
        return sum(point["writes"] * point["seconds"] for point in points)

    # However soon after the server's start these come (alone, this test runs in its first second), every
    # one of them is drawn: the chart's first point begins at the server's start.
    for index in range(200):
        requests.put(f"{server.url}/load/{index}.json", json=index, headers=server.admin())
    # The chart moves once a second (the server's tick): wait for the tick that takes the last write in.
    deadline = time.monotonic() + 30
    while charted_writes() < 199.5 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert round(charted_writes()) >= 200
    usage = console.get("/console/api/usage", params={"range": "hour"}).json()
    assert usage["stepSeconds"] == 60
    assert any(row["namespace"] == "console-test-default-rtdb" and row["bytes"] > 0 for row in usage["storage"])


def test_namespaces_are_created_and_deleted(server, console):
    assert console.send("POST", "/console/api/namespaces", json={"name": "shop"}).status_code == 201
    assert console.send("POST", "/console/api/namespaces", json={"name": "shop"}).status_code == 409
    assert console.send("POST", "/console/api/namespaces", json={"name": "auth"}).status_code == 400
    assert requests.put(f"{server.url}/item.json?ns=shop", json=1, headers=server.admin()).status_code == 200
    names = {row["name"]: row for row in console.get("/console/api/namespaces").json()["namespaces"]}
    assert names["shop"]["bytes"] > 0 and names["console-test-default-rtdb"]["default"] is True
    assert "auth" not in names
    wrong = console.send("DELETE", "/console/api/namespaces/shop", json={"confirm": "shops"})
    assert wrong.status_code == 400
    assert console.send("DELETE", "/console/api/namespaces/shop", json={"confirm": "shop"}).status_code == 200
    assert not (server.data / "shop.sqlite").exists()
    assert requests.get(f"{server.url}/item.json?ns=shop", headers={"Authorization": "Bearer nobody"}).status_code in (401, 404)
    assert "shop" not in [row["name"] for row in console.get("/console/api/namespaces").json()["namespaces"]]


def test_bolt_whose_types_multiply_is_refused_without_harm(server, console):
    """`type T0 {a: T1, b: T1}`, `type T1 {a: T2, b: T2}`, … 40 levels: 2^40 locations from 2 KB of text.
    It took the server's memory (19 levels: gigabytes); now it is an error at once."""
    source = "path /x is T0;\n" + "".join(f"type T{n} {{ a: T{n + 1}, b: T{n + 1} }}\n" for n in range(40))
    source += "type T40 extends String {}\n"
    started = time.monotonic()
    checked = console.send("POST", "/console/api/rules/check", json={"source": source, "format": "bolt"}, timeout=30).json()
    assert checked["ok"] is False and "rule locations" in checked["error"]["message"]
    assert time.monotonic() - started < 10
    assert console.get("/console/api/session").status_code == 200


def test_the_banner_prints_a_sign_in_link_only_to_a_terminal(hearth_binary, tmp_path):
    """The link makes its holder the admin: a person at a terminal gets it; a log (systemd's journal, a pipe)
    gets how to ask for one. `hearth console link` gives a fresh one, and the previous one stops working."""
    import os
    import pty
    import select

    from conftest import _free_port
    from console_support import LINK

    port = _free_port()
    terminal, child = pty.openpty()
    process = subprocess.Popen([str(hearth_binary), "serve", "--data", str(tmp_path / "data"), "--port", str(port)],
                               stdin=subprocess.DEVNULL, stdout=child, stderr=subprocess.PIPE)
    os.close(child)
    try:
        banner = ""
        deadline = time.monotonic() + 20
        while "Stop with Ctrl-C" not in banner and time.monotonic() < deadline and process.poll() is None:
            if select.select([terminal], [], [], 0.2)[0]:
                banner += os.read(terminal, 65536).decode()
        printed = LINK.search(banner)
        assert printed, banner
        link = printed.group(1)

        def link_from_the_command() -> str:
            done = subprocess.run([str(hearth_binary), "console", "link", "--url", f"http://127.0.0.1:{port}",
                                   "--data", str(tmp_path / "data")], capture_output=True, text=True, timeout=30)
            assert done.returncode == 0, done.stderr
            return done.stdout.strip()

        fresh = link_from_the_command()
        assert LINK.fullmatch(fresh) and fresh != link
        # The printed link was replaced: it signs nobody in; the fresh one does, once.
        assert requests.get(link, allow_redirects=False).headers["location"] == "/console/?signin=failed"
        signed_in = requests.get(fresh, allow_redirects=False)
        assert signed_in.headers["location"] == "/console/" and "hearth_console=" in signed_in.headers["set-cookie"]
        assert requests.get(fresh, allow_redirects=False).headers["location"] == "/console/?signin=failed"
        # Whoever cannot read the admin token gets no link.
        refused = subprocess.run([str(hearth_binary), "console", "link", "--url", f"http://127.0.0.1:{port}", "--token", "guess"],
                                 capture_output=True, text=True, timeout=30)
        assert refused.returncode == 1 and "admin token" in refused.stderr and "code=" not in refused.stdout + refused.stderr
    finally:
        process.terminate()
        process.communicate(timeout=20)
        os.close(terminal)


def test_x_forwarded_proto_is_believed_from_trusted_proxies_only(hearth_binary, tmp_path):
    """Behind the TLS proxy of docs/deploy.md the browser talks HTTPS and the proxy plain HTTP: the cookie is
    Secure when a trusted proxy says X-Forwarded-Proto: https, and a client talking to the server directly
    cannot make it so (or not so) by saying it."""
    for trusted, secure in (([], False), (["127.0.0.1"], True), (["192.0.2.1"], False)):
        data = tmp_path / f"data-{len(trusted)}-{secure}"
        arguments = ["--trusted-proxies", ",".join(trusted)] if trusted else []
        server = start_console_server(hearth_binary, data, *arguments)
        try:
            signed_in = requests.post(server.url + "/console/api/signin", json={"token": server.admin_token},
                                      headers={"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"})
            assert signed_in.status_code == 200
            assert ("; Secure" in signed_in.headers["set-cookie"]) == secure, (trusted, signed_in.headers["set-cookie"])
            by_link = requests.get(server.new_link(), headers={"X-Forwarded-Proto": "https"}, allow_redirects=False)
            assert ("; Secure" in by_link.headers["set-cookie"]) == secure, trusted
        finally:
            server.stop()
