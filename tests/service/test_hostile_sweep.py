"""The bad-input sweep against a served process: every hostile request gets its documented status
in the one error envelope with a request id, never a 5xx; nothing stored is lost; no content reaches the log;
and the server's memory comes back to its level after 1-16 MiB bodies."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from service.errors import MAX_BODY_BYTES
from tests.service.test_guard import _chunked_request
from tests.support.service import TRAITS, auth, check, cli_key, samples, served

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own

MARKER = "sweep-marker-7f3a"
MIB = 1024 * 1024
H = "/models/acme.sweep"


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    path: str
    body: bytes | None
    status: int
    code: str
    content_type: str = "application/json"


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


def _sample(text: str) -> dict[str, object]:
    return {"trait": "formality", "text": text, "quality": 1.0}


def cases() -> list[Case]:
    deep = b"[" * 10_000 + b"]" * 10_000
    nul = json.dumps({"samples": [_sample(f"{MARKER}\u0000x")]}).encode()  # json.dumps escapes it: \u0000
    surrogate = (
        b'{"samples": [{"trait": "formality", "text": "' + MARKER.encode() + b'\\ud800", "quality": 1}]}'
    )
    padded = b'{"content": "' + MARKER.encode() + b' dear sir"}' + b" " * (15 * MIB)  # valid JSON, 15 MiB
    return [
        # Sizes: 1 MiB text, 501 samples, a valid 15 MiB body, and 16 MiB + 1 byte.
        Case(
            "1 MiB text",
            "POST",
            f"{H}/samples",
            _json({"samples": [_sample("a" * MIB)]}),
            422,
            "text_too_long",
        ),
        Case(
            "501 samples",
            "POST",
            f"{H}/samples",
            _json({"samples": [_sample(MARKER)] * 501}),
            422,
            "validation_error",
        ),
        Case("15 MiB valid body", "POST", f"{H}/score", padded, 409, "no_active_version"),
        Case("16 MiB + 1", "POST", f"{H}/samples", b" " * (MAX_BODY_BYTES + 1), 413, "payload_too_large"),
        Case("4 MiB junk", "POST", f"{H}/samples", b"\x00\xff" * (2 * MIB), 422, "validation_error"),
        # Characters no database stores, bytes that are not UTF-8, nesting past the parser.
        Case("NUL in a text", "POST", f"{H}/samples", nul, 422, "validation_error"),
        Case("lone surrogate", "POST", f"{H}/samples", surrogate, 422, "validation_error"),
        Case("invalid UTF-8", "POST", "/models", b'{"handle": "acme.\xff\xfe"}', 422, "validation_error"),
        Case("nested 10,000 deep", "POST", f"{H}/samples", deep, 422, "validation_error"),
        Case("nested score", "POST", f"{H}/score", deep, 422, "validation_error"),
        Case("NUL in the path", "GET", "/models/acme.sw%00eep", None, 422, "validation_error"),
        Case("NUL in a query", "GET", "/models?namespace=ac%00me", None, 422, "validation_error"),
        # Votes: a rater's name no database stores or too long, a trait the model lacks, a
        # colleague's name, and the agreement's and overlap's bounds.
        Case(
            "NUL in an annotator",
            "POST",
            f"{H}/samples",
            _json({"samples": [{**_sample(MARKER), "annotator": "rater\u0000"}]}),
            422,
            "validation_error",
        ),
        Case(
            "1,000-char annotator",
            "POST",
            f"{H}/evaluation-set",
            _json({"items": [{**_sample(MARKER), "annotator": "r" * 1000}]}),
            422,
            "validation_error",
        ),
        Case(
            "vote for a missing trait",
            "POST",
            f"{H}/samples",
            _json({"samples": [_sample(MARKER), {**_sample(MARKER), "trait": "tone", "annotator": "r1"}]}),
            422,
            "unknown_trait",
        ),
        Case(
            "a key's name as annotator",
            "POST",
            f"{H}/samples",
            _json({"samples": [{**_sample(MARKER), "annotator": "key-000000000000"}]}),
            422,
            "annotator_reserved",
        ),
        Case("agreement limit 10^9", "GET", f"{H}/agreement?limit=1000000000", None, 422, "validation_error"),
        Case("agreement of no trait", "GET", f"{H}/agreement?trait=..%2Ftone", None, 422, "unknown_trait"),
        Case(
            "overlap 1e308",
            "POST",
            f"{H}/pool/suggest",
            _json({"trait": "formality", "overlap": 1e308}),
            422,
            "validation_error",
        ),
        # Forged cursors on every paged list.
        Case("forged model cursor", "GET", "/models?cursor=eyJhIjoxfQ.forged", None, 400, "invalid_cursor"),
        Case("forged sample cursor", "GET", f"{H}/samples?cursor=AAAA.BBBB", None, 400, "invalid_cursor"),
        Case("forged version cursor", "GET", f"{H}/versions?cursor=x", None, 400, "invalid_cursor"),
        Case("forged pool cursor", "GET", f"{H}/pool?cursor={'A' * 1000}", None, 400, "invalid_cursor"),
        # Handles, tags and version refs: traversal, unicode, 1,000 characters.
        Case("traversal handle", "GET", "/models/..%2F..%2Fetc%2Fpasswd", None, 404, "not_found"),
        Case(
            "traversal in create", "POST", "/models", _json({"handle": "../acme.x"}), 422, "validation_error"
        ),
        Case("unicode handle", "POST", "/models", _json({"handle": "acme.tône"}), 422, "validation_error"),
        Case("fullwidth handle", "GET", "/models/ａcme.sweep", None, 404, "model_not_found"),
        Case(
            "1,000-char handle",
            "POST",
            "/models",
            _json({"handle": "acme." + "a" * 995}),
            422,
            "validation_error",
        ),
        Case("traversal tag", "POST", f"{H}/versions/..%2Fprod", None, 404, "not_found"),
        Case("unicode tag", "POST", f"{H}/versions/pröd", None, 422, "invalid_tag"),
        Case("1,000-char tag", "POST", f"{H}/versions/{'t' * 1000}", None, 422, "invalid_tag"),
        Case("Arabic-Indic version", "GET", f"{H}/versions/v\u0661", None, 404, "version_not_found"),
        Case(
            "1,000-char trait key",
            "PATCH",
            f"{H}/traits/{'k' * 1000}",
            _json({"name": "x"}),
            404,
            "trait_not_found",
        ),
        # Media type and method.
        Case(
            "XML body",
            "POST",
            f"{H}/samples",
            b"<samples/>",
            415,
            "unsupported_media_type",
            "application/xml",
        ),
        Case("PUT", "PUT", H, _json({}), 405, "method_not_allowed"),
    ]


def _memory_kib(pid: int, field: str = "VmRSS") -> int:
    """Resident memory now (VmRSS) or at its peak (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field}")


def test_hostile_sweep_against_a_served_process(tmp_path: Path) -> None:
    h = auth(cli_key(tmp_path))
    no_runs = "--no-worker"  # the sweep starts no run: no worker child process
    with served(tmp_path, None, no_runs) as (base, proc, log), httpx.Client(base_url=base, timeout=60) as c:
        url = urlsplit(base)
        address = (str(url.hostname), int(url.port or 80))
        check(c.post("/models", json={"handle": "acme.sweep"}, headers=h), 201)
        check(c.post(f"{H}/traits", json={"traits": TRAITS}, headers=h), 201)
        check(c.post(f"{H}/samples", json={"samples": samples()}, headers=h), 201)
        before = check(c.get(H, headers=h), 200)

        def sweep() -> list[str]:
            wrong = []
            for case in cases():
                resp = c.request(
                    case.method,
                    case.path,
                    content=case.body,
                    headers={**h, "Content-Type": case.content_type},
                )
                try:
                    body = resp.json()
                    error = body["error"]
                    ok = (resp.status_code, error["code"]) == (case.status, case.code)
                    ok = ok and error["request_id"] == resp.headers["x-request-id"] != ""
                    ok = ok and isinstance(error["message"], str) and "\x00" not in error["message"]
                except (ValueError, KeyError, TypeError):
                    ok = False
                if not ok:
                    wrong.append(f"{case.name}: {resp.status_code} {resp.text[:200]}")
            # 17 MiB sent chunked (no Content-Length): the server stops reading at 16 MiB.
            status, _, body, _ = _chunked_request(address, f"{url.path}{H}/samples", h, 17)
            if (status, body["error"]["code"]) != (413, "payload_too_large"):
                wrong.append(f"chunked 17 MiB: {status} {body}")
            return wrong

        # The first round warms the process up (imports, pools, allocator arenas); the next must not grow.
        # At no time may it hold more than a few copies of the 16 MiB limit.
        start = _memory_kib(proc.pid)
        assert sweep() == []
        warm = _memory_kib(proc.pid)
        for _ in range(3):
            assert sweep() == []
        grown_mib = (_memory_kib(proc.pid) - warm) / 1024
        peak_mib = (_memory_kib(proc.pid, "VmHWM") - start) / 1024
        assert grown_mib < 32, f"the server kept {grown_mib:.0f} MiB more after three more sweeps"
        assert peak_mib < 160, f"the server's memory peaked {peak_mib:.0f} MiB above its start"

        # Nothing stored was lost or changed, and the server still serves.
        after = check(c.get(H, headers=h), 200)
        assert (after["sample_count"], after["state"]) == (before["sample_count"], before["state"])
        assert check(c.get("/health"), 200)["status"] == "ok"
    assert not [line for line in log if MARKER in line], "content reached the server's log"
