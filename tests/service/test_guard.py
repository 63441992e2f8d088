"""What every request passes before its route reads a byte (service/http/guard.py): the key is checked
before the body, and the body limit holds while a chunked body streams in, over a real socket."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from service.errors import MAX_BODY_BYTES
from tests.support.service import Svc, check, serving

# Rules beside the store: the SQLite cases cover them (tests/service/conftest.py).
pytestmark = pytest.mark.database_free

# Fixed socket buffers on both ends of the streaming test: the kernel otherwise grows them as it likes
# (tcp_rmem's ceiling is 6 MiB on one machine and 32 MiB on another), and the bytes a client can send
# before it sees the answer are the limit plus what the buffers hold.
SOCKET_BUFFER = 256 * 1024


def _read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before a response: {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, headers, rest[:length]


def _chunked_request(address: tuple[str, int], path: str, headers: dict[str, str], body_mib: int) -> Any:
    """POST a chunked body (no Content-Length) of `body_mib` MiB, stopping as soon as the server answers.
    Returns (status, headers, body, bytes sent)."""
    import select as select_module

    with socket.create_connection(address, timeout=30) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
        lines = [f"POST {path} HTTP/1.1", "Host: localhost", "Content-Type: application/json"]
        lines += ["Transfer-Encoding: chunked", *(f"{k}: {v}" for k, v in headers.items())]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        chunk = b"a" * (1024 * 1024)
        sent = 0
        sock.settimeout(5)  # a server that stopped reading shows as a send that cannot complete
        for _ in range(body_mib):
            if select_module.select([sock], [], [], 0)[0]:
                break  # the server has answered
            try:
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                break
            sent += len(chunk)
        else:
            sock.sendall(b"0\r\n\r\n")
        sock.settimeout(30)
        status, resp_headers, body = _read_response(sock)
    return status, resp_headers, json.loads(body), sent


def _envelope(body: dict[str, Any], headers: dict[str, str], code: str) -> None:
    assert body["error"]["code"] == code, body
    assert body["error"]["request_id"] == headers["x-request-id"]


def test_key_checked_before_the_body_and_limit_holds_while_streaming(svc: Svc) -> None:
    check(svc.client.post("/v1/models", json={"handle": "acme.h"}, headers=svc.author), 201)
    with serving(svc.app, receive_buffer=SOCKET_BUFFER) as address:
        path = "/v1/models/acme.h/score"
        # No key, and a key of the right shape that does not exist: 401 before one body byte is sent.
        missing_key = _chunked_request(address, path, {}, 0)
        unknown = "sk_000000000000_" + "x" * 43
        unknown_key = _chunked_request(address, path, {"Authorization": f"Bearer {unknown}"}, 0)
        for status, headers, body, sent in (missing_key, unknown_key):
            assert (status, sent) == (401, 0)
            _envelope(body, headers, "unauthorized")
        # A valid key and a 64 MiB chunked body: 413 once the limit is passed, not after reading it all.
        status, headers, body, sent = _chunked_request(address, path, svc.author, 64)
        assert status == 413
        _envelope(body, headers, "payload_too_large")
        # Beyond the limit: both socket buffers (the kernel doubles each), the server's read buffer and the
        # chunk being sent when the answer came; nowhere near the 64 MiB a server that reads it all takes.
        assert sent <= MAX_BODY_BYTES + 4 * 1024 * 1024
        # A body under the limit still reaches the route.
        status, headers, body, _ = _chunked_request(address, path, svc.author, 1)
        assert status == 422 and body["error"]["code"] == "validation_error"
