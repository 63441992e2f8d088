"""docs/api.md's endpoint index is the app's routes, each with who may call it as the auth matrix tests it.

The index is rendered here from the app and from `OPERATIONS` (tests/service/test_auth_matrix.py), so a route
added without its row in the matrix, or a rule changed in the matrix, shows as a difference from the page.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

from fastapi.routing import APIRoute

from core.contract import ROLES, least_role
from tests.service.test_auth_matrix import OPERATIONS, OWN_ERROR_SHAPE, UNAUTHENTICATED, Op
from tests.support.service import Svc

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
BEGIN, END = "<!-- endpoint index: begin -->", "<!-- endpoint index: end -->"

_READERS = {
    "any_key": "any key",
    "list_namespace": "any key of the namespace",
    "read": "any key that can read the model",
    "author_read": "an authoring key that can read the model",
    "owner_read": "an authoring key of the namespace",
    "review_read": "a reviewer of the namespace",
    "audit": "an owner of the namespace",
    "ns_read": "an owner of the namespace",
    "person": "a signed-in person (a key: 403)",
}
_ROLE = {"annotator": "an annotator of the namespace", "reviewer": "a reviewer of the namespace",
         "owner": "an owner of the namespace"}  # fmt: skip


def _who(ops: list[Op]) -> str:
    """The least each kind of call needs, e.g. "annotator (add_samples); reviewer (settle)"."""
    parts: dict[str, list[str]] = defaultdict(list)
    for op in ops:
        if op.writes:
            parts[_ROLE[least_role(op.action)]].append(op.name)
        else:
            parts[_READERS[op.kind]].append(op.name)
    rank = {_ROLE[r]: i for i, r in enumerate(ROLES)}
    ordered = sorted(parts, key=lambda k: (rank.get(k, -1), k))
    if len(ordered) == 1:
        return ordered[0]
    return "; ".join(f"{k} ({', '.join(sorted(parts[k]))})" for k in ordered)


def render(routes: set[tuple[str, str]]) -> str:
    by_route: dict[tuple[str, str], list[Op]] = defaultdict(list)
    for op in OPERATIONS:
        by_route[(op.method, op.path)].append(op)
    rows = ["| method | path | who may call it |", "|---|---|---|"]
    for method, path in sorted(routes, key=lambda r: (r[1], r[0])):
        if (method, path) in UNAUTHENTICATED:
            who = "no key needed"
        elif (method, path) in OWN_ERROR_SHAPE:
            who = 'see "Perspective-compatible surface"'
        else:
            who = _who(by_route[(method, path)])
        shown = path.removeprefix("/v1").replace("{handle}", "{h}") if path.startswith("/v1/") else path
        rows.append(f"| `{method}` | `{shown}` | {who} |")
    return "\n".join(rows)


def test_the_endpoint_index_is_the_apps_routes_and_the_matrix_rules(svc: Svc) -> None:
    routes = {
        (method, route.path_format)  # `{sample_id:int}` is documented as `{sample_id}`
        for route in svc.app.routes
        if isinstance(route, APIRoute)
        for method in route.methods
    }
    want = render(routes)
    text = DOC.read_text()
    assert BEGIN in text and END in text, f"docs/api.md needs {BEGIN} … {END}"
    have = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    if have != want and os.environ.get("SCORING_WRITE_API_INDEX") == "1":  # after adding a route: rewrite it
        DOC.write_text(text.replace(have, want) if have else text.replace(BEGIN, f"{BEGIN}\n{want}"))
        have = want
    assert have == want, f"docs/api.md's endpoint index, between its markers, should read:\n\n{want}\n"
