"""Identity providers on loopback for the sign-in tests: an OpenID provider (discovery, JWKS with RS256 and
ES256 keys that can be rotated), Google's and Apple's key sets, stand-ins of GitHub's and Facebook's user
APIs, and endpoints that hang or fail. Tokens are signed with real keys (PyPI's `cryptography`), so the
server checks real signatures. `hearth serve --provider-endpoints FILE` points the built-in providers here.
"""

import base64
import hashlib
import hmac
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _int_bytes(number: int, length: int | None = None) -> bytes:
    length = length or (number.bit_length() + 7) // 8
    return number.to_bytes(length, "big")


class SigningKeys:
    """An RSA and a P-256 key, each with a kid; `rotate` replaces them (the old ones stop being published)."""

    def __init__(self):
        self.rotate()

    def rotate(self):
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        suffix = uuid.uuid4().hex[:8]
        self.rsa_kid, self.ec_kid = f"rsa-{suffix}", f"ec-{suffix}"

    def jwks(self) -> dict:
        rsa_numbers = self.rsa.public_key().public_numbers()
        ec_numbers = self.ec.public_key().public_numbers()
        return {"keys": [
            {"kty": "RSA", "kid": self.rsa_kid, "use": "sig", "alg": "RS256", "n": b64url(_int_bytes(rsa_numbers.n)),
             "e": b64url(_int_bytes(rsa_numbers.e))},
            {"kty": "EC", "kid": self.ec_kid, "use": "sig", "alg": "ES256", "crv": "P-256",
             "x": b64url(_int_bytes(ec_numbers.x, 32)), "y": b64url(_int_bytes(ec_numbers.y, 32))},
        ]}

    def public_pem(self) -> bytes:
        return self.rsa.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    def sign(self, claims: dict, alg: str = "RS256", header: dict | None = None) -> str:
        """A compact JWS of `claims`; `header` overrides the header's fields (a hostile kid, jku, alg)."""
        fields = {"alg": alg, "kid": self.ec_kid if alg == "ES256" else self.rsa_kid, "typ": "JWT"}
        fields.update(header or {})
        signing_input = b64url(json.dumps(fields).encode()) + "." + b64url(json.dumps(claims).encode())
        if fields["alg"] == "ES256" and alg == "ES256":
            r, s = decode_dss_signature(self.ec.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
            signature = _int_bytes(r, 32) + _int_bytes(s, 32)
        else:
            signature = self.rsa.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return signing_input + "." + b64url(signature)

    def sign_hs256_with_public_key(self, claims: dict) -> str:
        """The key-confusion attack: HS256 with the provider's public key as the HMAC secret."""
        signing_input = b64url(json.dumps({"alg": "HS256", "kid": self.rsa_kid, "typ": "JWT"}).encode()) + "." + \
            b64url(json.dumps(claims).encode())
        return signing_input + "." + b64url(hmac.new(self.public_pem(), signing_input.encode(), hashlib.sha256).digest())


class LocalProviders:
    """The providers, served on 127.0.0.1 from a thread. `requests` logs each path asked; `github_users` and
    `facebook_users` map valid access tokens to their users; `failing` paths answer 500."""

    def __init__(self):
        self.keys = SigningKeys()
        self.requests: list[str] = []
        self.github_users: dict[str, dict] = {}
        self.github_app = ("gh-app", "gh-secret")
        self.facebook_users: dict[str, dict] = {}
        self.facebook_app = ("fb-app", "fb-secret")
        self.failing: set[str] = set()
        self.release_hang = threading.Event()
        providers = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                providers._answer(self, None)

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                providers._answer(self, self.rfile.read(length))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def oidc_issuer(self) -> str:
        return self.url + "/oidc"

    @property
    def hanging_issuer(self) -> str:
        return self.url + "/hang"

    def endpoints(self) -> dict:
        """The JSON of `--provider-endpoints`: every built-in provider pointed here."""
        return {
            "googleKeys": self.url + "/google/keys", "googleIssuers": ["https://accounts.google.com", "accounts.google.com"],
            "appleKeys": self.url + "/apple/keys", "appleIssuer": "https://appleid.apple.com",
            "githubAPI": self.url + "/github", "facebookGraph": self.url + "/facebook",
        }

    def count(self, path: str) -> int:
        return sum(1 for asked in self.requests if asked == path)

    def stop(self):
        self.release_hang.set()
        self.server.shutdown()
        self.server.server_close()

    def _answer(self, handler, body):
        parsed = urlparse(handler.path)
        path, query = parsed.path, {k: v[0] for k, v in parse_qs(parsed.query).items()}
        self.requests.append(path)

        def reply(status, payload, headers=None):
            data = json.dumps(payload).encode()
            handler.send_response(status)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(data)

        bearer = (handler.headers.get("authorization") or "").removeprefix("Bearer ").strip()
        if path in self.failing:
            return reply(500, {"error": "down"})
        if path in ("/google/keys", "/apple/keys", "/oidc/keys"):
            return reply(200, self.keys.jwks(), {"cache-control": "public, max-age=3600"})
        if path == "/oidc/.well-known/openid-configuration":
            return reply(200, {"issuer": self.oidc_issuer, "jwks_uri": self.url + "/oidc/keys"})
        if path == "/hang/.well-known/openid-configuration":
            return reply(200, {"issuer": self.hanging_issuer, "jwks_uri": self.url + "/hang/keys"})
        if path == "/hang/keys":
            self.release_hang.wait(30)  # longer than the server waits for any provider
            return reply(200, self.keys.jwks())
        if path == "/github/user":
            user = self.github_users.get(bearer)
            return reply(200, user) if user else reply(401, {"message": "Bad credentials"})
        if path == "/github/user/emails":
            user = self.github_users.get(bearer)
            if not user:
                return reply(401, {"message": "Bad credentials"})
            return reply(200, [{"email": user["email"], "primary": True, "verified": True}])
        if path.startswith("/github/applications/") and path.endswith("/token"):
            expected = "Basic " + base64.b64encode(f"{self.github_app[0]}:{self.github_app[1]}".encode()).decode()
            token = json.loads(body or b"{}").get("access_token")
            ok = handler.headers.get("authorization") == expected and path.split("/")[3] == self.github_app[0] \
                and token in self.github_users
            return reply(200 if ok else 404, {"token": token} if ok else {"message": "Not Found"})
        if path == "/facebook/debug_token":
            valid = query.get("input_token") in self.facebook_users and \
                query.get("access_token") == f"{self.facebook_app[0]}|{self.facebook_app[1]}"
            return reply(200, {"data": {"is_valid": valid, "app_id": self.facebook_app[0]}})
        if path == "/facebook/me":
            user = self.facebook_users.get(query.get("access_token"))
            return reply(200, user) if user else reply(400, {"error": {"message": "Invalid OAuth access token."}})
        reply(404, {"error": "no such path"})


def google_claims(sub: str, client_id: str, email: str | None = None, verified: bool = True, **extra) -> dict:
    now = int(time.time())
    claims = {"iss": "https://accounts.google.com", "aud": client_id, "sub": sub, "iat": now, "exp": now + 3600}
    if email:
        claims.update(email=email, email_verified=verified)
    claims.update(extra)
    return claims
