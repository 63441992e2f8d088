"""Opaque, HMAC-signed keyset cursors. A cursor names the list it belongs to, so a cursor
from another list or other filters is rejected like a forged one."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

from service.errors import ApiError


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Cursors:
    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def _sign(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, payload, hashlib.sha256).digest()[:16]

    def encode(self, scope: str, after: object) -> str:  # any value json.dumps takes
        payload = json.dumps({"s": scope, "a": after}, separators=(",", ":")).encode()
        return f"{_b64(payload)}.{_b64(self._sign(payload))}"

    def decode(self, cursor: str, scope: str) -> Any:  # Any: the JSON value encode() was given
        """Return the position after which the next page starts; 400 invalid_cursor otherwise."""
        try:
            body, sig = cursor.split(".", 1)
            payload = _unb64(body)
            valid = hmac.compare_digest(_unb64(sig), self._sign(payload))
            data = json.loads(payload) if valid else None
        except (ValueError, UnicodeDecodeError):
            data = None
        if not isinstance(data, dict) or data.get("s") != scope or "a" not in data:
            raise ApiError(
                400, "invalid_cursor", "The cursor is not valid for this list; start from the first page."
            )
        return data["a"]

    def position(self, cursor: str | None, scope: str) -> int | None:
        """The keyset position (an id or a version number) a page starts after; None without a cursor."""
        if not cursor:
            return None
        after = self.decode(cursor, scope)
        if not isinstance(after, int):
            raise ApiError(400, "invalid_cursor", "The cursor is not valid for this list.")
        return after
