"""nginx from Debian's package, started by a test in front of several hearth nodes.

It balances plain HTTP, SSE streams and WebSocket upgrades round-robin over the nodes, as a
production balancer would (docs/scaling.md has the same configuration for real deployments):
buffering off so events stream, the Upgrade headers passed on, long read timeouts for listeners,
and a read whose node fails sent to the next node. A write never is: nginx takes PUT and DELETE for
idempotent and sends one that a node received, on a kept-alive connection that then broke, to a second
node, which applies it again after whatever came between (test_balancer.py; docs/reliability.md, fix 8).
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from conftest import _free_port

CONFIG = """
daemon off;
master_process on;
worker_processes 1;
{user}
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    map $http_upgrade $connection_upgrade {{ default upgrade; '' ''; }}
    upstream hearth {{
{servers}
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 256m;
        proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $connection_upgrade;
        proxy_set_header Host $host;
        proxy_set_header X-Forwarded-For $remote_addr;
        proxy_buffering off;
        proxy_request_buffering off;
        proxy_read_timeout 1h;
        proxy_send_timeout 1h;
        proxy_connect_timeout 2s;
        location / {{
            error_page 418 = @write;
            if ($request_method !~ ^(GET|HEAD|OPTIONS)$) {{ return 418; }}
            proxy_pass http://hearth;
            proxy_next_upstream error timeout;
        }}
        location @write {{
            proxy_pass http://hearth;
            proxy_next_upstream off;
        }}
    }}
}}
"""


class Balancer:
    """nginx on a free loopback port, round-robin over `upstream_ports`; `stop()` ends it."""

    def __init__(self, upstream_ports: list[int], port: int | None = None):
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.access(binary, os.X_OK):
            raise RuntimeError("nginx is not installed: apt-get install nginx (scripts/setup does)")
        self.prefix = Path(tempfile.mkdtemp(prefix="hearth-nginx-"))
        self.port = port or _free_port()
        servers = "\n".join(f"        server 127.0.0.1:{port} max_fails=1 fail_timeout=5s;" for port in upstream_ports)
        # As root (CI), workers would switch to nobody, who cannot use the temporary directories.
        user = "user root;" if os.geteuid() == 0 else ""
        config = self.prefix / "nginx.conf"
        config.write_text(CONFIG.format(prefix=self.prefix, port=self.port, servers=servers, user=user))
        self.process = subprocess.Popen(
            [binary, "-p", str(self.prefix), "-c", str(config)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited: {self.process.stderr.read()} {self.error_log()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"nginx did not listen within 10 s: {self.error_log()}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def error_log(self) -> str:
        try:
            return (self.prefix / "error.log").read_text()
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.prefix, ignore_errors=True)
