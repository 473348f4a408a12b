"""A webhook receiver the tests start on a free loopback port: it records every delivery (headers and
JSON body) and answers as the test tells it (a status, or no answer at all: the port closed)."""

import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    def __init__(self, port=0):
        self.deliveries = []  # (headers dict, body bytes, parsed json), in arrival order
        self.status = 200
        self.changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                status = receiver.status
                with receiver.changed:
                    receiver.deliveries.append((dict(self.headers), body, json.loads(body), status))
                    receiver.changed.notify_all()
                self.send_response(status)
                answer = b'{"ok":true}' if status < 300 else b"receiver says no"
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/hook"

    def accepted(self):
        """The events answered with 2xx, in arrival order."""
        with self.changed:
            return [event for _, _, event, status in self.deliveries if status < 300]

    def wait_for(self, predicate, timeout=60):
        """Waits until predicate(self) holds, woken by each delivery; fails after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate(self):
                left = deadline - time.monotonic()
                assert left > 0, f"timed out; {len(self.deliveries)} deliveries: {[d[2].get('id') for d in self.deliveries][-20:]}"
                self.changed.wait(left)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def verify(headers, body, secret):
    """What a receiver does (docs/functions.md): the signature is HMAC-SHA256 of "t." + body under the
    secret, and t is recent."""
    fields = dict(part.split("=", 1) for part in headers["Hearth-Signature"].split(","))
    expected = hmac.new(secret.encode(), f"{fields['t']}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, fields["v1"]) and abs(time.time() - int(fields["t"])) < 300
