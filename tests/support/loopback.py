"""A real HTTP server on loopback, for tests that need a peer the service is not (a generator, a web page)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], path: str = "/v1") -> Iterator[str]:
    """Serve `handler` on a free loopback port, on a thread, until the block ends; yields the base URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}{path}"
    finally:
        httpd.shutdown()
        httpd.server_close()
