"""Every operation of the API x (no key, bad key, scoring key, other-namespace authoring key, and the
namespace's annotator, reviewer and owner).

Each cell asserts the status; every cell that must not write (refusals, and reads) also asserts that no row of
any table changed (the queue's too). The writes a caller's role allows (the owner's, and an annotator's or
reviewer's where `Op.action` lets them) must change something, which shows the comparison can see a change.
An operation is one row of OPERATIONS; a route of the app missing from it fails
`test_every_route_is_in_the_matrix`, so a new endpoint cannot skip this matrix.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from fastapi.routing import APIRoute
from sqlalchemy import create_engine, inspect

from core.contract import Action, role_allows
from service.store.api_keys import create_key
from service.store.db import transaction
from tests.service.conftest import Svc, _migrate, running
from tests.service.helpers import auth, check, error_code, make_model, train_ready, wait_settled

Kind = Literal[
    "read",
    "author_read",
    "owner_read",
    "write",
    "create",
    "list_namespace",
    "any_key",
    "audit",
    "claim",
    "ns_read",
    "ns_write",
]
Visibility = Literal["public", "private"]
Who = Literal["no_key", "bad_key", "scoring", "other", "annotator", "reviewer", "owner"]
WHO: tuple[Who, ...] = ("no_key", "bad_key", "scoring", "other", "annotator", "reviewer", "owner")
ROLE_KEYS: tuple[Literal["annotator", "reviewer"], ...] = ("annotator", "reviewer")
BAD_KEY = auth("sk_000000000000_" + "x" * 40)  # well-formed, unknown

# What a scoring key of the model's namespace, and an authoring key of namespace `other`, get from each kind
# of operation (docs/api.md, Authentication and scopes). A private model is invisible to `other`: 404.
# `owner_read`: a read of what only the owner may write (buffered feedback), refused as a write is.
# `audit`: the namespace's audit log, its owners' alone (a namespace the key does not own: 403, as a list).
_SCORING = {
    "claim": 403,
    "read": 200,
    "author_read": 403,
    "owner_read": 403,
    "write": 403,
    "create": 403,
    "list_namespace": 200,
    "audit": 403,
}
# `claim`: suggestions claimed for the caller; a reader who may not label gets them unclaimed (no write).
_OTHER_PUBLIC = {"claim": 200, "read": 200, "author_read": 200, "owner_read": 403, "write": 403,
                 "create": 403, "list_namespace": 200, "audit": 403}  # fmt: skip
_OTHER_PRIVATE = {"claim": 404, "read": 404, "author_read": 404, "owner_read": 404, "write": 404,
                  "create": 403, "list_namespace": 403, "audit": 403}  # fmt: skip
FEEDBACK = [{"trait": "formality", "quality": 1.0}]


@dataclass(frozen=True)
class Op:
    """One operation. `path` is the route's own template; `{handle}` is the target model's handle,
    `{ns}` its namespace, other fields come from `params`."""

    name: str
    method: str
    path: str
    kind: Kind
    target: Literal["draft", "ready", "none"]  # the state of the model it acts on
    status: int  # the owner's status
    json: Callable[[str], Any] | None = None  # body, given the namespace
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    query: Callable[[str], dict[str, str]] | None = None
    params: dict[str, str] = field(default_factory=dict)
    # Runs once per model as its owner before the cells, and again after a write of an annotator or a
    # reviewer (so the next caller finds what it acts on); returns more path params (e.g. a row's id).
    setup: Callable[[Svc, str, dict[str, str]], dict[str, str]] | None = None
    # What a write is (docs/api.md "Roles"): the annotator and reviewer cells expect 403 unless it is theirs.
    action: Action = "manage"
    # The body, given the setup's params (instead of `json`): a write that needs a fresh row per caller.
    body: Callable[[dict[str, str]], Any] | None = None
    # A claim is the caller's own: `caller_setup(svc, handle, owner, caller)` runs before each cell of the
    # owner, the annotator and the reviewer, so each finds a text it may claim or a claim of its own.
    caller_setup: Callable[[Svc, str, dict[str, str], dict[str, str]], dict[str, str]] | None = None

    @property
    def writes(self) -> bool:
        return self.kind in ("write", "create", "claim", "ns_write")

    def expected(self, who: Who, vis: Visibility) -> int:
        if who in ("no_key", "bad_key"):
            return 401
        if who == "owner":
            return self.status
        if self.kind in ("ns_read", "ns_write"):  # a namespace's people: its owners only
            return 403
        if who in ROLE_KEYS:  # the namespace's annotator or reviewer: reads as the owner, writes by role
            if self.kind == "audit" or (self.writes and not role_allows(who, self.action)):
                return 403
            return self.status
        if self.kind == "any_key":
            return 200
        if who == "scoring":
            return _SCORING[self.kind]
        return (_OTHER_PUBLIC if vis == "public" else _OTHER_PRIVATE)[self.kind]


M = "/v1/models/{handle}"


def first_sample(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    page = check(svc.client.get(f"/v1/models/{handle}/samples", headers=owner), 200)
    return {"sample_id": str(page["items"][0]["id"])}


EVAL_ITEMS = [
    {"trait": "formality", "text": "We should be grateful for your reply.", "quality": 1},
    {"trait": "formality", "text": "lol whatever dude", "quality": 0},
]


def eval_set(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    body = {"items": EVAL_ITEMS}
    check(svc.client.post(f"/v1/models/{handle}/evaluation-set", json=body, headers=owner), 201)
    return {}


def evaluated(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    eval_set(svc, handle, owner)
    check(svc.client.post(f"/v1/models/{handle}/versions/v1/evaluate", headers=owner), 202)
    wait_settled(svc.client, handle, owner)
    return {}


def pool_text(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    body = {"texts": ["An unlabelled text.", "Another one, quite different."]}
    check(svc.client.post(f"/v1/models/{handle}/pool", json=body, headers=owner), 201)
    page = check(svc.client.get(f"/v1/models/{handle}/pool", headers=owner), 200)
    return {"text_id": str(page["items"][0]["id"])}


_fresh = itertools.count()


def unclaimed_text(svc: Svc, handle: str, owner: dict[str, str], caller: dict[str, str]) -> dict[str, str]:
    """A text in the pool nobody has claimed (the texts before it may be claimed by earlier callers)."""
    body = {"texts": [f"An unclaimed text, number {next(_fresh)}."]}
    check(svc.client.post(f"/v1/models/{handle}/pool", json=body, headers=owner), 201)
    return {}


def fresh_text(svc: Svc, handle: str, owner: dict[str, str], caller: dict[str, str]) -> dict[str, str]:
    """A text new to the pool: nobody voted on it (a text a colleague's vote filled is no longer labelled)."""
    body = {"texts": [f"A fresh text, number {next(_fresh)}."]}
    [text_id] = check(svc.client.post(f"/v1/models/{handle}/pool", json=body, headers=owner), 201)["ids"]
    return {"text_id": str(text_id)}


def claimed_text(svc: Svc, handle: str, owner: dict[str, str], caller: dict[str, str]) -> dict[str, str]:
    """A text claimed by the caller."""
    unclaimed_text(svc, handle, owner, caller)
    body = {"trait": "formality", "k": 1, "claim": True}
    [item] = check(svc.client.post(f"/v1/models/{handle}/pool/suggest", json=body, headers=caller), 200)[
        "items"
    ]
    return {"text_id": str(item["id"])}


def buffered_feedback(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    body = {"content": "Kindly find the report attached.", "feedback": FEEDBACK}
    check(svc.client.post(f"/v1/models/{handle}/score", json=body, headers=owner), 200)
    page = check(svc.client.get(f"/v1/models/{handle}/feedback", headers=owner), 200)
    return {"label_id": str(page["items"][0]["id"])}


_CONTESTED = iter(range(1_000_000))


def contested(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    """A text two votes disagree on, new each time (a text is settled once)."""
    text = f"Contested text number {next(_CONTESTED)}."
    votes = [{"trait": "formality", "text": text, "quality": 1}, {"trait": "formality", "text": text,
             "quality": 0, "annotator": "rater-9"}]  # fmt: skip
    check(svc.client.post(f"/v1/models/{handle}/samples", json={"samples": votes}, headers=owner), 201)
    return {"text": text}


def thresholded(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    evaluated(svc, handle, owner)
    url = f"/v1/models/{handle}/versions/v1/thresholds/formality"
    check(svc.client.put(url, json={"target": "recall", "value": 1.0}, headers=owner), 200)
    return {}


def unsure_mark(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    """The owner's unsure mark on a text: a colleague's, to the annotator and the reviewer."""
    body = {"trait": "formality", "text": "Formal, or not quite?"}
    return {"mark_id": str(check(svc.client.post(f"/v1/models/{handle}/unsure", json=body, headers=owner),
                                 201)["id"])}  # fmt: skip


def comment(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    """The owner's comment on a text: a colleague's, to the annotator and the reviewer."""
    body = {"trait": "formality", "text": "Formal, or not quite?", "body": "Ask the style guide."}
    resp = svc.client.post(f"/v1/models/{handle}/comments", json=body, headers=owner)
    return {"comment_id": str(check(resp, 201)["id"])}


def member(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    url = f"/v1/namespaces/{handle.split('.')[0]}/people/pat@example.com"
    check(svc.client.put(url, json={"role": "reviewer"}, headers=owner), 200)
    return {"member": "pat@example.com"}


PEOPLE = "/v1/namespaces/{namespace}/people"

# fmt: off
OPERATIONS: list[Op] = [
    Op("current_key", "GET", "/v1/keys/current", "any_key", "none", 200),
    Op("list_catalog", "GET", "/v1/models", "any_key", "none", 200),
    Op("list_namespace", "GET", "/v1/models", "list_namespace", "none", 200,
       query=lambda ns: {"namespace": ns}),
    Op("create", "POST", "/v1/models", "create", "none", 201, json=lambda ns: {"handle": f"{ns}.created"}),
    Op("get", "GET", M, "read", "ready", 200),
    Op("patch", "PATCH", M, "write", "ready", 200, json=lambda _: {"description": "changed"}),
    Op("patch_zdr", "PATCH", M, "write", "ready", 200, json=lambda _: {"zero_data_retention": True}),
    Op("delete", "DELETE", M, "write", "ready", 200),
    Op("reopen", "POST", M + "/reopen", "write", "ready", 200),
    Op("list_traits", "GET", M + "/traits", "read", "draft", 200),
    Op("add_traits", "POST", M + "/traits", "write", "draft", 201,
       json=lambda _: {"traits": [{"name": "Tone", "positive_label": "warm", "negative_label": "cold"}]}),
    Op("patch_trait", "PATCH", M + "/traits/{key}", "write", "draft", 200,
       json=lambda _: {"description": "changed"}, params={"key": "formality"}),
    Op("delete_trait", "DELETE", M + "/traits/{key}", "write", "draft", 200, params={"key": "formality"}),
    Op("add_samples", "POST", M + "/samples", "write", "draft", 201, action="label",
       json=lambda _: {"samples": [{"trait": "formality", "text": "Yours faithfully.", "quality": 1}]}),
    Op("add_samples_imported", "POST", M + "/samples", "write", "draft", 201,
       json=lambda _: {"samples": [{"trait": "formality", "text": "Yours faithfully.", "quality": 1,
                                    "provenance": "imported"}]}),
    Op("settle", "POST", M + "/samples", "write", "draft", 201, action="review", setup=contested,
       body=lambda x: {"samples": [{"trait": "formality", "text": x["text"], "quality": 1,
                                    "adjudicated": True}]}),
    Op("list_samples", "GET", M + "/samples", "author_read", "draft", 200),
    Op("patch_sample", "PATCH", M + "/samples/{sample_id}", "write", "draft", 200,
       json=lambda _: {"quality": 0.25}, setup=first_sample),
    Op("delete_sample", "DELETE", M + "/samples/{sample_id}", "write", "draft", 200, setup=first_sample),
    Op("add_pool", "POST", M + "/pool", "write", "draft", 201, json=lambda _: {"texts": ["Unlabelled."]}),
    Op("list_pool", "GET", M + "/pool", "author_read", "draft", 200, setup=pool_text),
    Op("delete_pool_text", "DELETE", M + "/pool/{text_id}", "write", "draft", 200, setup=pool_text),
    Op("clear_pool", "DELETE", M + "/pool", "write", "draft", 200, setup=pool_text),
    Op("suggest", "POST", M + "/pool/suggest", "author_read", "draft", 200,
       json=lambda _: {"trait": "formality"}, setup=pool_text),
    Op("suggest_claim", "POST", M + "/pool/suggest", "claim", "draft", 200, action="label",
       json=lambda _: {"trait": "formality", "claim": True}, setup=pool_text, caller_setup=unclaimed_text),
    Op("release_claim", "DELETE", M + "/pool/{text_id}/claim", "write", "draft", 200, action="label",
       setup=pool_text, caller_setup=claimed_text),
    Op("label_pool_text", "POST", M + "/pool/{text_id}/label", "write", "draft", 201, action="label",
       json=lambda _: {"trait": "formality", "quality": 1.0}, setup=pool_text, caller_setup=fresh_text),
    Op("label_pool_text_ready", "POST", M + "/pool/{text_id}/label", "write", "ready", 201, action="label",
       json=lambda _: {"trait": "formality", "quality": 1.0}, setup=pool_text, caller_setup=fresh_text),
    Op("patch_campaign", "PATCH", M, "write", "ready", 200,
       json=lambda _: {"votes_wanted": 2, "auto_retrain": False}),
    Op("train", "POST", M + "/train", "write", "draft", 202, json=lambda _: {"effort": "low"}),
    Op("retune", "POST", M + "/train", "write", "ready", 202, json=lambda _: {"reoptimize_params": True}),
    Op("discover", "POST", M + "/traits/discover", "write", "draft", 202, json=lambda _: {"effort": "low"}),
    Op("synthesize", "POST", M + "/samples/synthesize", "write", "draft", 202,
       json=lambda _: {"effort": "low"}),
    Op("list_versions", "GET", M + "/versions", "read", "ready", 200),
    Op("get_version", "GET", M + "/versions/{ref}", "read", "ready", 200, params={"ref": "v1"}),
    Op("tag", "POST", M + "/versions/{ref}", "write", "ready", 200, params={"ref": "matrix"}),
    Op("tag_named_version", "POST", M + "/versions/{ref}", "write", "ready", 200, params={"ref": "matrix"},
       json=lambda _: {"version": "v1"}),
    Op("untag", "DELETE", M + "/versions/{ref}", "write", "ready", 200, params={"ref": "prod"}),
    Op("score", "POST", M + "/score", "read", "ready", 200, json=lambda _: {"content": "Dear Sir, regards."}),
    Op("score_text", "POST", M + "/score", "read", "ready", 200, content=b"Dear Sir, regards.",
       headers={"Content-Type": "text/plain", "Accept": "text/plain"}),
    Op("score_feedback", "POST", M + "/score", "write", "ready", 200, action="label",
       json=lambda _: {"content": "Dear Sir, regards.", "feedback": FEEDBACK}),
    Op("score_feedback_text_view", "POST", M + "/score", "write", "ready", 200, action="label",
       json=lambda _: {"content": "Dear Sir, regards.", "feedback": FEEDBACK},
       headers={"Accept": "text/plain"}),
    Op("list_feedback", "GET", M + "/feedback", "owner_read", "ready", 200, setup=buffered_feedback),
    Op("withdraw_feedback", "DELETE", M + "/feedback/{label_id}", "write", "ready", 200, action="review",
       setup=buffered_feedback),  # the owner's label: a colleague's, to the annotator and the reviewer
    Op("history", "GET", M + "/history", "read", "ready", 200),
    Op("add_eval_items", "POST", M + "/evaluation-set", "write", "ready", 201,
       json=lambda _: {"items": EVAL_ITEMS}),
    Op("get_eval_set", "GET", M + "/evaluation-set", "author_read", "ready", 200, setup=eval_set),
    Op("clear_eval_set", "DELETE", M + "/evaluation-set", "write", "ready", 200, setup=eval_set),
    Op("evaluate", "POST", M + "/versions/{ref}/evaluate", "write", "ready", 202, params={"ref": "v1"},
       setup=eval_set),
    Op("get_evaluation", "GET", M + "/versions/{ref}/evaluation", "read", "ready", 200, params={"ref": "v1"},
       setup=evaluated),
    Op("compare", "POST", M + "/score/compare", "read", "ready", 200,
       json=lambda _: {"a": "Dear Sir, regards.", "b": "hey lol"}),
    Op("preview_trait", "POST", M + "/traits/preview", "author_read", "ready", 200,
       json=lambda _: {"trait": {"name": "Mood", "positive_label": "happy", "negative_label": "sad"},
                       "texts": ["What a lovely day!"]}),
    Op("pr_curve", "GET", M + "/versions/{ref}/pr-curve", "read", "ready", 200, params={"ref": "v1"},
       setup=evaluated),
    Op("get_thresholds", "GET", M + "/versions/{ref}/thresholds", "read", "ready", 200, params={"ref": "v1"}),
    Op("set_threshold", "PUT", M + "/versions/{ref}/thresholds/{trait}", "write", "ready", 200,
       params={"ref": "v1", "trait": "formality"}, json=lambda _: {"target": "recall", "value": 1.0},
       setup=evaluated),
    Op("delete_threshold", "DELETE", M + "/versions/{ref}/thresholds/{trait}", "write", "ready", 200,
       params={"ref": "v1", "trait": "formality"}, setup=thresholded),
    Op("compare_evaluations", "GET", M + "/evaluation/compare", "author_read", "ready", 200,
       query=lambda _: {"a": "v1", "b": "prod"}, setup=evaluated),
    Op("agreement", "GET", M + "/agreement", "author_read", "draft", 200),
    Op("agreement_one_trait", "GET", M + "/agreement", "author_read", "ready", 200,
       query=lambda _: {"trait": "formality", "limit": "5"}),
    Op("suggest_overlap", "POST", M + "/pool/suggest", "author_read", "draft", 200,
       json=lambda _: {"trait": "formality", "k": 5, "overlap": 0.4}, setup=pool_text),
    Op("add_samples_adjudicated", "POST", M + "/samples", "write", "draft", 201,
       json=lambda _: {"samples": [{"trait": "formality", "text": "Yours faithfully.", "quality": 1,
                                    "annotator": "rater-7", "adjudicated": True}]}),
    Op("add_eval_items_annotated", "POST", M + "/evaluation-set", "write", "ready", 201,
       json=lambda _: {"items": [{**EVAL_ITEMS[0], "annotator": "rater-7"}]}),
    Op("team_progress", "GET", M + "/team", "owner_read", "ready", 200),
    Op("votes", "GET", M + "/votes", "owner_read", "ready", 200, query=lambda _: {"limit": "5"}),
    Op("mark_unsure", "POST", M + "/unsure", "write", "ready", 201, action="label",
       json=lambda _: {"trait": "formality", "text": "Formal, or not quite?"}),
    Op("list_unsure", "GET", M + "/unsure", "owner_read", "draft", 200, setup=unsure_mark),
    Op("delete_unsure", "DELETE", M + "/unsure/{mark_id}", "write", "draft", 200, action="review",
       setup=unsure_mark),  # the owner's mark: a colleague's, to the annotator and the reviewer
    Op("add_comment", "POST", M + "/comments", "write", "ready", 201, action="label",
       json=lambda _: {"trait": "formality", "text": "Formal?", "body": "Hard to say."}),
    Op("list_comments", "GET", M + "/comments", "owner_read", "draft", 200, setup=comment,
       query=lambda _: {"trait": "formality"}),
    Op("delete_comment", "DELETE", M + "/comments/{comment_id}", "write", "draft", 200, action="review",
       setup=comment),
    Op("audit", "GET", "/v1/namespaces/{namespace}/audit", "audit", "none", 200),
    Op("audit_page", "GET", "/v1/namespaces/{namespace}/audit", "audit", "none", 200,
       query=lambda _: {"limit": "5"}),
    Op("list_people", "GET", PEOPLE, "ns_read", "none", 200),
    Op("set_person", "PUT", PEOPLE + "/{member}", "ns_write", "none", 200,
       json=lambda _: {"role": "annotator"}, params={"member": "pat@example.com"}),
    Op("change_role", "PUT", PEOPLE + "/{member}", "ns_write", "none", 200, json=lambda _: {"role": "owner"},
       setup=member),
    Op("remove_person", "DELETE", PEOPLE + "/{member}", "ns_write", "none", 200, setup=member),
]
# fmt: on
UNAUTHENTICATED = {("GET", "/v1/health"), ("GET", "/v1/openapi.json"), ("GET", "/v1/docs")}
# Perspective's discovery document is public, as Google's is (test_perspective.py reads it without a key).
UNAUTHENTICATED |= {("GET", "/$discovery/rest"), ("GET", "/discovery/v1/apis/commentanalyzer/v1alpha1/rest")}
# Perspective's surface answers in Google's error shape, not the envelope: its key rules (any reader may
# analyze, only the owner's authoring key may suggest) are tested in test_perspective.py.
OWN_ERROR_SHAPE = {("POST", "/v1alpha1/comments:analyze"), ("POST", "/v1alpha1/comments:suggestscore")}


def snapshot(svc: Svc) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of the database (and of the SQLite queue file, when there is one)."""
    urls = [svc.ctx.settings.database_url]
    queue_file = svc.ctx.settings.data_dir / "huey.sqlite"
    if svc.ctx.settings.is_sqlite and queue_file.exists():
        urls.append(f"sqlite:///{queue_file}")
    out: dict[str, list[tuple[Any, ...]]] = {}
    for url in urls:
        engine = svc.ctx.engine if url == svc.ctx.settings.database_url else create_engine(url)
        with engine.connect() as conn:
            # The driver's own cursor: raw values (no JSON parsing), without SQLAlchemy's result objects,
            # about a third less time for each of the matrix's ~2,000 snapshots.
            cursor = conn.connection.cursor()
            try:
                for name in inspect(conn).get_table_names():
                    cursor.execute(f'SELECT * FROM "{name}"')
                    out[f"{url}|{name}"] = sorted((tuple(r) for r in cursor.fetchall()), key=repr)
            finally:
                cursor.close()
        if engine is not svc.ctx.engine:
            engine.dispose()
    return out


@dataclass
class World:
    handles: dict[Visibility, str]
    keys: dict[tuple[Visibility, Who], dict[str, str]]


def build(svc: Svc, target: str) -> World:
    c = svc.client
    namespaces: dict[Visibility, str] = {"public": "public", "private": "acme"}
    owners: dict[Visibility, dict[str, str]] = {"public": svc.publisher, "private": svc.author}
    scorers: dict[Visibility, dict[str, str]] = {
        "public": svc.key(["public"], "scoring"),
        "private": svc.scorer,
    }
    handles: dict[Visibility, str] = {}
    keys: dict[tuple[Visibility, Who], dict[str, str]] = {}
    for vis, ns in namespaces.items():
        handle = handles[vis] = f"{ns}.m{target}"
        if target != "none":
            make_model(c, owners[vis], handle)
        if target == "ready":
            train_ready(c, owners[vis], handle)
            check(c.post(f"/v1/models/{handle}/versions/prod", headers=owners[vis]), 200)
        keys.update({
            (vis, "no_key"): {}, (vis, "bad_key"): BAD_KEY, (vis, "scoring"): scorers[vis],
            (vis, "other"): svc.other, (vis, "owner"): owners[vis],
        })  # fmt: skip
        with transaction(svc.ctx.sessions) as s:  # the namespace's annotator and reviewer
            keys.update(
                {(vis, role): auth(create_key(s, [ns], "authoring", role=role)) for role in ROLE_KEYS}
            )
    return World(handles, keys)


def settle(svc: Svc, headers: dict[str, str]) -> None:
    for ns in check(svc.client.get("/v1/keys/current", headers=headers), 200)["namespaces"]:
        page = check(svc.client.get("/v1/models", params={"namespace": ns}, headers=headers), 200)
        for model in page["items"]:
            wait_settled(svc.client, model["handle"], headers)


def call(svc: Svc, op: Op, handle: str, headers: dict[str, str], extra: dict[str, str]) -> httpx.Response:
    ns = handle.split(".")[0]
    return svc.client.request(
        op.method,
        op.path.format(handle=handle, namespace=ns, **op.params, **extra),
        json=op.body(extra) if op.body else op.json(ns) if op.json else None,
        content=op.content,
        params=op.query(ns) if op.query else None,
        headers={**op.headers, **headers},
    )


def _shares_world(op: Op) -> bool:
    """A read with no setup leaves the database as it found it (each cell asserts so, for every caller), so
    such cells can share one world instead of building and training their own."""
    return not op.writes and op.setup is None


# Every operation runs on SQLite. Who may do what is decided before any database-specific code runs; what
# differs between the databases under writes (row locks, transactions) has its own tests on PostgreSQL
# (test_feedback_race, tests/scale), and every other service test runs on both.
OWN_WORLD = [pytest.param(op, "sqlite", id=op.name) for op in OPERATIONS if not _shares_world(op)]
SHARED_WORLD = [pytest.param(op, id=op.name) for op in OPERATIONS if _shares_world(op)]


@pytest.fixture(scope="module")
def shared_worlds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], tuple[Svc, World]]]:
    """One service on SQLite whose worlds (one per target state, built on first use) the read cells share."""
    data_dir = tmp_path_factory.mktemp("auth-matrix")
    url = f"sqlite:///{data_dir / 'scoring.sqlite'}"
    _migrate(url)
    worlds: dict[str, World] = {}
    with running(data_dir, database_url=url) as svc:

        def world(target: str) -> tuple[Svc, World]:
            if target not in worlds:
                worlds[target] = build(svc, target)
            return svc, worlds[target]

        yield world


@pytest.mark.parametrize(("op", "database_url"), OWN_WORLD, indirect=["database_url"])
def test_auth_matrix(svc: Svc, op: Op) -> None:
    check_cells(svc, build(svc, op.target), op)


@pytest.mark.parametrize("op", SHARED_WORLD)
def test_auth_matrix_reads(shared_worlds: Callable[[str], tuple[Svc, World]], op: Op) -> None:
    check_cells(*shared_worlds(op.target), op)


def check_cells(svc: Svc, world: World, op: Op) -> None:
    for vis in ("public", "private"):
        handle = world.handles[vis]
        extra = op.setup(svc, handle, world.keys[(vis, "owner")]) if op.setup else {}
        for who in WHO:
            if op.caller_setup and who in ("owner", *ROLE_KEYS):
                extra = op.caller_setup(svc, handle, world.keys[(vis, "owner")], world.keys[(vis, who)])
            before = snapshot(svc)
            resp = call(svc, op, handle, world.keys[(vis, who)], extra)
            want = op.expected(who, vis)
            cell = f"{op.name} on {vis} model as {who}"
            assert resp.status_code == want, f"{cell}: {resp.status_code} != {want}: {resp.text[-300:]}"
            if want >= 400:
                code = error_code(resp, want)
                assert code == {401: "unauthorized", 403: "forbidden", 404: "model_not_found"}[want], cell
            changed = snapshot(svc) != before
            # A claim asked by a key outside the namespace is answered unclaimed: a read, no write.
            if want < 400 and op.writes and who in ("owner", *ROLE_KEYS):
                assert changed, f"{cell}: the {who}'s write changed nothing (the snapshot cannot see it?)"
                settle(svc, world.keys[(vis, who)])  # a run it started must not write during the next cell
                if who != "owner" and op.setup:  # what it acted on may be gone: the next caller's, anew
                    extra = op.setup(svc, handle, world.keys[(vis, "owner")])
            else:
                assert not changed, f"{cell}: a request that must not write changed the database"


def test_every_route_is_in_the_matrix(svc: Svc) -> None:
    routes = {
        (method, route.path_format)  # `{sample_id:int}` is documented as `{sample_id}`
        for route in svc.app.routes
        if isinstance(route, APIRoute)
        for method in route.methods
    }
    covered = {(op.method, op.path) for op in OPERATIONS}
    missing = routes - covered - UNAUTHENTICATED - OWN_ERROR_SHAPE
    assert not missing, f"add these operations to OPERATIONS in {Path(__file__).name}: {sorted(missing)}"
    assert not covered - routes, "OPERATIONS names routes the app does not have"


def test_scoring_a_public_model_without_feedback_is_open_to_every_key(svc: Svc) -> None:
    """The other half of the feedback rule: reading and scoring the public catalog needs no ownership."""
    build(svc, "ready")
    for key in (svc.other, svc.scorer, svc.author):
        resp = svc.client.post("/v1/models/public.mready/score", json={"content": "hi"}, headers=key)
        out = check(resp, 200)
        assert out["scores"] and "feedback_buffered" not in out
    model = check(svc.client.get("/v1/models/public.mready", headers=svc.publisher), 200)
    assert model["buffered_feedback"] == 0 and model["version_no"] == 1


# -- rate limits and claims: rules per key and role --------------------------------------------------------


def test_each_key_has_its_own_buckets_and_no_role_escapes_them(tmp_path: Path, database_url: str) -> None:
    """Rate limits are per caller (key or person) and namespace, the same for every role: the owner's empty
    write bucket refuses the owner alone, with 429 before any role check; a caller with no valid key gets
    401, never 429; a scoring key's scoring has a bucket of its own."""
    settings = {"write_rate_per_s": 0.001, "write_burst": 2, "score_rate_per_s": 0.001, "score_burst": 2}
    with running(tmp_path, database_url=database_url, **settings) as svc:
        c = svc.client
        with transaction(svc.ctx.sessions) as s:
            keys = {role: auth(create_key(s, ["acme"], "authoring", role, role=role)) for role in ROLE_KEYS}
        owner = svc.author
        check(c.post("/v1/models", json={"handle": "acme.rl"}, headers=owner), 201)  # bucket of creations
        note = {"trait": "formality", "text": "Dear Sir", "body": "formal"}
        traits = {"traits": [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}]}
        check(c.post("/v1/models/acme.rl/traits", json=traits, headers=owner), 201)
        check(c.post("/v1/models/acme.rl/comments", json=note, headers=owner), 201)
        refused = c.post("/v1/models/acme.rl/comments", json=note, headers=owner)
        assert error_code(refused, 429) == "rate_limited"
        patch = c.patch("/v1/models/acme.rl", json={"description": "x"}, headers=owner)
        assert error_code(patch, 429) == "rate_limited"
        for role in ROLE_KEYS:  # colleagues of every role keep their own buckets
            for _ in range(2):
                check(c.post("/v1/models/acme.rl/comments", json=note, headers=keys[role]), 201)
            assert error_code(c.post("/v1/models/acme.rl/comments", json=note, headers=keys[role]), 429)
        for headers in ({}, BAD_KEY):
            assert c.post("/v1/models/acme.rl/comments", json=note, headers=headers).status_code == 401
        # A scoring key's writes are refused by scope (403) while its bucket lasts, then 429.
        assert c.post("/v1/models/acme.rl/comments", json=note, headers=svc.scorer).status_code == 403
        check(c.get("/v1/models/acme.rl/comments", headers=owner), 200)  # reads are never counted


def test_a_text_a_colleague_holds_is_theirs_whatever_the_roles(svc: Svc) -> None:
    """No role labels past a colleague's claim: a reviewer's or an owner's vote on a text an annotator
    holds (one vote wanted) is refused as anyone's would be, and the annotator's own label is stored."""
    c = svc.client
    with transaction(svc.ctx.sessions) as s:
        keys = {
            role: auth(create_key(s, ["acme"], "authoring", f"h-{role}", role=role)) for role in ROLE_KEYS
        }
    make_model(c, svc.author, "acme.held")
    check(c.post("/v1/models/acme.held/pool", json={"texts": ["One text to hold."]}, headers=svc.author), 201)
    body = {"trait": "formality", "k": 1, "claim": True}
    [item] = check(c.post("/v1/models/acme.held/pool/suggest", json=body, headers=keys["annotator"]), 200)[
        "items"
    ]
    url, label = f"/v1/models/acme.held/pool/{item['id']}/label", {"trait": "formality", "quality": 1.0}
    for other in (keys["reviewer"], svc.author):
        assert error_code(c.post(url, json=label, headers=other), 409) == "pool_text_taken"
    assert check(c.post(url, json=label, headers=keys["annotator"]), 201)["votes"] == 1
