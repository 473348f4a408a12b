"""`hearth serve --public DIR`: a web app's files on the database's port, as `firebase serve` serves them.

Drives the real binary with raw HTTP (http.client sends paths exactly as written, `..` included)."""

import http.client
import os

import pytest
import requests

from conftest import start_hearth


@pytest.fixture(scope="module")
def site(hearth_binary, tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    public = root / "public"
    (public / "docs").mkdir(parents=True)
    (public / "index.html").write_text("<!doctype html><title>Jokes</title><h1>Jokes</h1>")
    (public / "app.js").write_text("console.log('jokes')")
    (public / "style.css").write_text("h1 { color: tomato }")
    (public / "docs" / "index.html").write_text("<h1>Docs</h1>")
    (public / "404.html").write_text("<h1>No such page</h1>")
    (public / ".env").write_text("SECRET=1")
    (root / "outside.txt").write_text("not for the web")
    os.symlink(root / "outside.txt", public / "leak.txt")
    with open(public / "huge.bin", "wb") as huge:
        huge.truncate(33 << 20)
    data = root / "data"
    process, port = start_hearth(hearth_binary, "--emulator", "--data", str(data), "--public", str(public))
    assert process.poll() is None, process.stderr.read()
    yield f"http://127.0.0.1:{port}", port
    process.terminate()
    process.communicate(timeout=20)


def raw_get(port: int, path: str, method: str = "GET") -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(method, path)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, body


def test_the_root_serves_index_html_and_files_have_their_types(site):
    url, _ = site
    page = requests.get(url + "/")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "<h1>Jokes</h1>" in page.text
    assert page.headers["cache-control"] == "no-cache"
    script = requests.get(url + "/app.js")
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert script.headers["cache-control"] == "public, max-age=3600"
    assert requests.get(url + "/style.css").headers["content-type"] == "text/css; charset=utf-8"
    assert "<h1>Docs</h1>" in requests.get(url + "/docs/").text
    assert "<h1>Docs</h1>" in requests.get(url + "/docs").text


def test_a_current_copy_is_answered_304_and_head_has_no_body(site):
    url, port = site
    first = requests.get(url + "/app.js")
    tag = first.headers["etag"]
    again = requests.get(url + "/app.js", headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""
    status, body = raw_get(port, "/app.js", method="HEAD")
    assert status == 200 and body == b""


def test_missing_files_get_the_sites_404_page(site):
    url, _ = site
    missing = requests.get(url + "/nope.html")
    assert missing.status_code == 404
    assert "No such page" in missing.text


def test_nothing_outside_the_directory_or_hidden_is_served(site):
    _, port = site
    for path in ["/../outside.txt", "/%2e%2e/outside.txt", "/docs/../../outside.txt", "/leak.txt", "/.env",
                 "/docs/%2e%2e/%2e%2e/outside.txt", "/..%2foutside.txt"]:
        status, body = raw_get(port, path)
        assert status in (400, 404), (path, status)
        assert b"not for the web" not in body and b"SECRET" not in body, path


def test_a_file_over_the_limit_says_so(site):
    url, _ = site
    huge = requests.get(url + "/huge.bin")
    assert huge.status_code == 500
    assert "up to 32 MiB" in huge.text


def test_the_database_still_answers_json_paths_beside_the_site(site):
    url, _ = site
    assert requests.put(url + "/jokes/j1.json?ns=demo", json={"text": "knock knock"}).status_code == 200
    assert requests.get(url + "/jokes/j1/text.json?ns=demo").json() == "knock knock"
    assert requests.post(url + "/index.html").status_code == 404  # writes never go to the files


def test_the_data_directory_inside_the_site_is_never_served(hearth_binary, tmp_path):
    # `hearth serve --public .` from a project whose data directory is ./hearth-data (the default).
    project = tmp_path / "project"
    project.mkdir()
    (project / "index.html").write_text("<h1>app</h1>")
    data = project / "hearth-data"
    process, port = start_hearth(hearth_binary, "--data", str(data), "--public", str(project))
    try:
        assert process.poll() is None, process.stderr.read()
        assert raw_get(port, "/")[0] == 200
        token = (data / "admin-token").read_text().strip()
        for path in ["/hearth-data/admin-token", "/hearth-data/auth.sqlite", "/hearth-data/"]:
            status, body = raw_get(port, path)
            assert status == 404, (path, status)
            assert token.encode() not in body
    finally:
        process.terminate()
        process.communicate(timeout=20)


def test_serving_the_data_directory_itself_is_refused(hearth_binary, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    process, _ = start_hearth(hearth_binary, "--data", str(data), "--public", str(data), seconds=5)
    out, err = process.communicate(timeout=20)
    assert process.returncode != 0
    assert "is the data directory or inside it" in err
