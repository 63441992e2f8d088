"""The URL path of a resource: one rule for the client and its bulk imports (core.client.importing)."""

from __future__ import annotations

from urllib.parse import quote


def path(*parts: str | int) -> str:
    """The URL path of `parts`; an empty part would name another resource (or a redirect): refused."""
    if any(str(p).strip() == "" for p in parts):
        raise ValueError(f"A name in the request path {'/'.join(map(str, parts))!r} is empty.")
    return "/" + "/".join(quote(str(p), safe="") for p in parts)
