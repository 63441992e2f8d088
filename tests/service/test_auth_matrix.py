"""Every operation of the API x (no key, bad key, scoring key, other-namespace authoring key, and the
namespace's annotator, reviewer and owner).

Each cell asserts the status; every cell that must not write (refusals, and reads) also asserts that nothing
was committed to the database (nor to the queue). The writes a caller's role allows (the owner's, and an
annotator's or reviewer's where `Op.action` lets them) must commit something, which shows the watch can see a
write.
An operation is one row of OPERATIONS; a route of the app missing from it fails
`test_every_route_is_in_the_matrix`, so a new endpoint cannot skip this matrix.
"""

from __future__ import annotations

import itertools
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from fastapi.routing import APIRoute
from sqlalchemy import event, func, select
from sqlalchemy.engine import Connection

from core.contract import AUDIT_KINDS, Action, least_role, role_allows
from harness.waiting import wait_until
from service.errors import MAX_BODY_BYTES
from service.http.refusals import WRITE_ACTIONS
from service.store import ledger
from service.store.api_keys import NameTaken, create_key
from service.store.audit import SERVICE
from service.store.db import transaction
from service.store.schema import AuditEvent, Model, Person
from tests.support.idp import CLIENT_ID, Idp, running_idp
from tests.support.service import (
    Svc,
    _migrate,
    auth,
    check,
    error_code,
    make_model,
    running,
    train_ready,
    wait_settled,
)

Kind = Literal[
    "read",
    "author_read",
    "owner_read",
    "review_read",
    "write",
    "create",
    "list_namespace",
    "any_key",
    "audit",
    "claim",
    "ns_read",
    "ns_write",
    "person",
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
# `review_read`: a read of what an annotator must not see (gold items and the answers to them): a reviewer's
# and an owner's, refused to everyone else as `owner_read` is.
_SCORING = {
    "review_read": 403,
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
_OTHER_PUBLIC = {"claim": 200, "read": 200, "author_read": 200, "owner_read": 403, "review_read": 403,
                 "write": 403,
                 "create": 403, "list_namespace": 200, "audit": 403}  # fmt: skip
_OTHER_PRIVATE = {"claim": 404, "read": 404, "author_read": 404, "owner_read": 404, "review_read": 404,
                  "write": 404,
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
        if self.kind == "person":  # a person's own sign-in (sign-out): no key has one
            return 403
        if who == "owner":
            return self.status
        if self.kind in ("ns_read", "ns_write"):  # a namespace's people: its owners only
            return 403
        if who in ROLE_KEYS:  # the namespace's annotator or reviewer: reads as the owner, writes by role
            if self.kind == "audit" or (self.writes and not role_allows(who, self.action)):
                return 403
            if self.kind == "review_read" and not role_allows(who, "review"):
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


def first_label(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    return {"label_id": first_sample(svc, handle, owner)["sample_id"]}


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


_UNSETTLED = iter(range(1_000_000))


def unsettled(svc: Svc, handle: str, owner: dict[str, str], caller: dict[str, str]) -> dict[str, str]:
    return {"text": f"A text to settle, number {next(_UNSETTLED)}."}


def gold_item(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    """A gold item of the owner's, new each time (a delete takes it)."""
    body = {"items": [{"trait": "formality", "text": f"A gold text, number {next(_fresh)}.", "quality": 1.0}]}
    check(svc.client.post(f"/v1/models/{handle}/gold", json=body, headers=owner), 201)
    items = check(svc.client.get(f"/v1/models/{handle}/gold", headers=owner), 200)["items"]
    return {"gold_id": str(items[-1]["id"])}


def settled_text(svc: Svc, handle: str, owner: dict[str, str], caller: dict[str, str]) -> dict[str, str]:
    """A settled text not gold yet, for the caller to promote."""
    row = {"trait": "formality", "text": f"A settled text, number {next(_fresh)}.", "quality": 1.0,
           "adjudicated": True}  # fmt: skip
    check(svc.client.post(f"/v1/models/{handle}/samples", json={"samples": [row]}, headers=owner), 201)
    return {}


def removed_labels(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    """The owner's buffered label removed in bulk: the token that undoes it."""
    buffered_feedback(svc, handle, owner)
    name = check(svc.client.get("/v1/keys/current", headers=owner), 200)["name"]
    out = check(
        svc.client.delete(f"/v1/models/{handle}/labels", params={"annotator": name}, headers=owner), 200
    )
    return {"undo": out["undo"]}


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


def queued_run(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    """A retune queued and never enqueued: it stays in flight, for the cancel, whatever the worker does."""
    with transaction(svc.ctx.sessions) as s:
        model = s.scalar(select(Model).where(Model.handle == handle))
        assert model is not None
        return {"run_id": ledger.create_run(s, model, "train", {"triggered_by": "retune"}).id}


def member(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    url = f"/v1/namespaces/{handle.split('.')[0]}/people/pat@example.com"
    check(svc.client.put(url, json={"role": "reviewer"}, headers=owner), 200)
    return {"member": "pat@example.com"}


def assigned_to_pat(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    """A pool text of pat's, not labelled yet: something to unassign or move."""
    ids = pool_text(svc, handle, owner)
    body = {"annotator": "pat", "ids": [int(ids["text_id"])]}
    check(svc.client.post(f"/v1/models/{handle}/assignments", json=body, headers=owner), 201)
    return {}


_OWN = itertools.count()


def own_label(svc: Svc, handle: str, owner: dict[str, str], caller: dict[str, str]) -> dict[str, str]:
    """A label of the caller's own, new each time (a change or withdrawal acts on one's own only)."""
    body = {"samples": [{"trait": "formality", "text": f"My own label, number {next(_OWN)}.", "quality": 1}]}
    [sid] = check(svc.client.post(f"/v1/models/{handle}/samples", json=body, headers=caller), 201)["ids"]
    return {"label_id": str(sid)}


def owners_label(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    return own_label(svc, handle, owner, owner)


def own_pool_label(svc: Svc, handle: str, owner: dict[str, str], caller: dict[str, str]) -> dict[str, str]:
    """A pool text new to the pool, labelled by the caller (an undo names the text)."""
    text = fresh_text(svc, handle, owner, caller)
    body = {"trait": "formality", "quality": 1.0}
    check(
        svc.client.post(f"/v1/models/{handle}/pool/{text['text_id']}/label", json=body, headers=caller), 201
    )
    return text


def owners_pool_label(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    return own_pool_label(svc, handle, owner, owner)


def guidelines(svc: Svc, handle: str, owner: dict[str, str]) -> dict[str, str]:
    body = {"markdown": "# Formality\n\nFormal: letters."}
    check(svc.client.put(f"/v1/models/{handle}/guidelines", json=body, headers=owner), 200)
    return {}


PEOPLE = "/v1/namespaces/{namespace}/people"

# fmt: off
OPERATIONS: list[Op] = [
    Op("current_key", "GET", "/v1/keys/current", "any_key", "none", 200),
    Op("sign_out", "POST", "/v1/keys/current/sign-out", "person", "none", 403),
    Op("list_catalog", "GET", "/v1/models", "any_key", "none", 200),
    Op("list_namespace", "GET", "/v1/models", "list_namespace", "none", 200,
       query=lambda ns: {"namespace": ns}),
    Op("create", "POST", "/v1/models", "create", "none", 201, json=lambda ns: {"handle": f"{ns}.created"}),
    Op("get", "GET", M, "read", "ready", 200),
    Op("patch", "PATCH", M, "write", "ready", 200, json=lambda _: {"description": "changed"}),
    Op("patch_zdr", "PATCH", M, "write", "ready", 200, json=lambda _: {"zero_data_retention": True}),
    Op("delete", "DELETE", M, "write", "ready", 200),
    Op("purge", "DELETE", M, "write", "ready", 200, query=lambda _: {"purge": "true"}),
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
    Op("patch_overlap", "PATCH", M, "write", "ready", 200, json=lambda _: {"overlap": 0.3}),
    Op("train", "POST", M + "/train", "write", "draft", 202, json=lambda _: {"effort": "low"}),
    Op("retune", "POST", M + "/train", "write", "ready", 202, json=lambda _: {"reoptimize_params": True}),
    Op("discover", "POST", M + "/traits/discover", "write", "draft", 202, json=lambda _: {"effort": "low"}),
    Op("synthesize", "POST", M + "/samples/synthesize", "write", "draft", 202,
       json=lambda _: {"effort": "low"}),
    Op("cancel", "POST", M + "/runs/{run_id}/cancel", "write", "ready", 200, setup=queued_run),
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
    Op("list_review", "GET", M + "/review", "owner_read", "ready", 200, setup=buffered_feedback),
    # Accepting a label is a reviewer's: an annotator never accepts one, their own or a colleague's.
    Op("review_labels", "POST", M + "/review", "write", "ready", 200, action="review",
       setup=buffered_feedback,
       body=lambda p: {"decision": "accept", "items": [{"kind": "feedback", "id": int(p["label_id"])}]}),
    # Correcting a label is a reviewer's too: a new quality for each caller, so each correction changes it.
    Op("correct_label", "POST", M + "/labels/{label_id}/correct", "write", "ready", 200, action="review",
       setup=first_label, body=lambda _: {"quality": 0.1 + (next(_fresh) % 800) / 1000}),
    # Settling is a reviewer's, on a trained model too (a text of its own for each caller: settled once).
    Op("settle_text", "POST", M + "/settle", "write", "ready", 200, action="review", caller_setup=unsettled,
       body=lambda p: {"trait": "formality", "text": p.get("text", "Nobody settles this."), "quality": 1.0}),
    # Removing every label of one person, and undoing it, are an owner's.
    Op("remove_labels", "DELETE", M + "/labels", "write", "ready", 200, setup=buffered_feedback,
       query=lambda _: {"annotator": "someone"}),
    Op("restore_labels", "POST", M + "/labels/restore", "write", "ready", 200, setup=removed_labels,
       body=lambda p: {"undo": p["undo"]}),
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
    Op("text_history", "GET", M + "/labels/{label_id}/history", "owner_read", "ready", 200,
       setup=first_label),
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
    Op("patch_gold_rate", "PATCH", M, "write", "ready", 200,
       json=lambda _: {"gold_rate": 0.1, "gold_threshold": 0.8}),
    # Gold items are a reviewer's (who settles texts) and an owner's; an annotator never sees them.
    Op("add_gold", "POST", M + "/gold", "write", "draft", 201, action="review", caller_setup=unsettled,
       body=lambda p: {"items": [{"trait": "formality", "text": p.get("text", "Gold for the owner."),
                                  "quality": 1.0}]}),
    Op("promote_gold", "POST", M + "/gold/promote", "write", "draft", 200, action="review",
       caller_setup=settled_text, json=lambda _: {"trait": "formality", "count": 1}),
    Op("list_gold", "GET", M + "/gold", "review_read", "draft", 200, setup=gold_item),
    Op("delete_gold", "DELETE", M + "/gold/{gold_id}", "write", "draft", 200, action="review",
       setup=gold_item),
    Op("gold_accuracy", "GET", M + "/gold/accuracy", "review_read", "ready", 200),
    Op("list_my_labels", "GET", M + "/my-labels", "author_read", "draft", 200,
       query=lambda _: {"q": "label", "limit": "5"}),
    Op("change_my_label", "PATCH", M + "/my-labels/{kind}/{label_id}", "write", "draft", 200,
       action="label", params={"kind": "sample"}, json=lambda _: {"quality": 0.25}, setup=owners_label,
       caller_setup=own_label),
    Op("withdraw_my_label", "DELETE", M + "/my-labels/{kind}/{label_id}", "write", "draft", 200,
       action="label", params={"kind": "sample"}, setup=owners_label, caller_setup=own_label),
    Op("withdraw_pool_label", "DELETE", M + "/pool/{text_id}/label", "write", "draft", 200, action="label",
       query=lambda _: {"trait": "formality"}, setup=owners_pool_label, caller_setup=own_pool_label),
    Op("get_guidelines", "GET", M + "/guidelines", "author_read", "ready", 200, setup=guidelines),
    Op("save_guidelines", "PUT", M + "/guidelines", "write", "ready", 200,
       json=lambda _: {"markdown": "# Rules", "note": "first"}),
    Op("list_guidelines_versions", "GET", M + "/guidelines/versions", "author_read", "ready", 200,
       setup=guidelines),
    Op("mark_guidelines_read", "POST", M + "/guidelines/read", "write", "ready", 200, action="label",
       json=lambda _: {"version_no": 1}, setup=guidelines),
    Op("audit", "GET", "/v1/namespaces/{namespace}/audit", "audit", "none", 200),
    Op("audit_page", "GET", "/v1/namespaces/{namespace}/audit", "audit", "none", 200,
       query=lambda _: {"limit": "5"}),
    Op("list_people", "GET", PEOPLE, "ns_read", "none", 200),
    Op("set_person", "PUT", PEOPLE + "/{member}", "ns_write", "none", 200,
       json=lambda _: {"role": "annotator"}, params={"member": "pat@example.com"}),
    Op("change_role", "PUT", PEOPLE + "/{member}", "ns_write", "none", 200, json=lambda _: {"role": "owner"},
       setup=member),
    Op("remove_person", "DELETE", PEOPLE + "/{member}", "ns_write", "none", 200, setup=member),
    Op("assign", "POST", M + "/assignments", "write", "draft", 201, setup=pool_text,
       json=lambda _: {"annotator": "pat", "count": 1}),
    Op("list_assignments", "GET", M + "/assignments", "owner_read", "draft", 200),
    Op("unassign", "DELETE", M + "/assignments/{annotator}", "write", "draft", 200, setup=assigned_to_pat,
       params={"annotator": "pat"}),
    Op("reassign", "POST", M + "/assignments/{annotator}/reassign", "write", "draft", 200,
       setup=assigned_to_pat, params={"annotator": "pat"}, json=lambda _: {"to": "sam"}),
    Op("set_target", "PUT", M + "/assignments/{annotator}/target", "write", "draft", 200,
       params={"annotator": "pat"}, json=lambda _: {"count": 20, "period": "day"}),
    # One label for a selection is a reviewer's (or the owner's): a text of its own for each caller.
    Op("label_pool_texts", "POST", M + "/pool/label", "write", "draft", 201, action="review",
       caller_setup=fresh_text,
       body=lambda p: {"trait": "formality", "quality": 1.0, "ids": [int(p.get("text_id", "1"))]}),
]
# fmt: on
# The audit log (docs/api.md, "Audit log"): the event each write leaves, checked in every cell that writes.
AUDITED: dict[str, str] = {
    "sign_out": "signed_out",  # a person's: test_signing_out_ends_every_tab_and_copied_cookie_at_once
    "create": "model_created",
    "patch": "model_changed",
    "patch_zdr": "model_changed",
    "patch_campaign": "model_changed",
    "patch_overlap": "model_changed",
    "patch_gold_rate": "model_changed",
    "add_gold": "gold_changed",
    "promote_gold": "gold_changed",
    "delete_gold": "gold_changed",
    "delete": "model_deleted",
    "purge": "model_purged",
    "reopen": "model_reopened",
    "add_traits": "traits_changed",
    "patch_trait": "traits_changed",
    "delete_trait": "traits_changed",
    "add_samples_imported": "samples_imported",
    "add_samples_adjudicated": "settled",
    "settle": "settled",
    "patch_sample": "vote_edited",
    "delete_sample": "vote_deleted",
    "add_pool": "pool_added",
    "delete_pool_text": "pool_deleted",
    "clear_pool": "pool_deleted",
    "train": "run_started",
    "cancel": "run_cancelled",
    "review_labels": "labels_reviewed",
    "correct_label": "label_corrected",
    "remove_labels": "labels_removed",
    "restore_labels": "labels_restored",
    "settle_text": "settled",
    "retune": "run_started",
    "discover": "run_started",
    "synthesize": "run_started",
    "evaluate": "run_started",
    "change_my_label": "vote_edited",
    "withdraw_my_label": "vote_deleted",
    "withdraw_pool_label": "vote_deleted",
    "save_guidelines": "guidelines_changed",
    "tag": "tag_moved",
    "tag_named_version": "tag_moved",
    "untag": "tag_moved",
    "withdraw_feedback": "feedback_withdrawn",
    "add_eval_items": "evaluation_set_changed",
    "add_eval_items_annotated": "evaluation_set_changed",
    "clear_eval_set": "evaluation_set_changed",
    "set_threshold": "threshold_changed",
    "delete_threshold": "threshold_changed",
    "delete_unsure": "note_deleted",
    "delete_comment": "note_deleted",
    "set_person": "role_changed",
    "change_role": "role_changed",
    "remove_person": "role_changed",
    "assign": "assignments_changed",
    "unassign": "assignments_changed",
    "reassign": "assignments_changed",
    "set_target": "assignments_changed",
    "label_pool_texts": "pool_labelled",
}
# A label's own writes: its row names its author and time (GET …/votes exports them), so the log does not
# repeat every vote; what a label starts (a retraining) is an event of its own.
LABELS = frozenset({
    "add_samples", "suggest_claim", "release_claim", "label_pool_text", "label_pool_text_ready",
    "score_feedback", "score_feedback_text_view", "mark_unsure", "add_comment", "mark_guidelines_read",
})  # fmt: skip
AUDIT_TABLE = AuditEvent.__tablename__
UNAUTHENTICATED = {("GET", "/v1/health"), ("GET", "/v1/openapi.json"), ("GET", "/v1/docs")}
# Perspective's discovery document is public, as Google's is (test_perspective.py reads it without a key).
UNAUTHENTICATED |= {("GET", "/$discovery/rest"), ("GET", "/discovery/v1/apis/commentanalyzer/v1alpha1/rest")}
# Perspective's surface answers in Google's error shape, not the envelope: its key rules (any reader may
# analyze, only the owner's authoring key may suggest) are tested in test_perspective.py.
OWN_ERROR_SHAPE = {("POST", "/v1alpha1/comments:analyze"), ("POST", "/v1alpha1/comments:suggestscore")}


class Writes:
    """Whether anything but the audit log (and the write limits' buckets) was committed to the database, or
    anything to the SQLite queue file, since the last look.

    The database: every statement the service's engine executes is seen (SQLAlchemy's events), and a
    transaction that changed a table other than the audit log counts when it commits (a rolled-back one does
    not): refused requests leave an `access_refused` event, which `check_events` checks apart, and a refused
    write took its rate-limit token too. The queue file,
    written by huey's own connection: SQLite's `PRAGMA data_version`, which moves with every commit made by
    another connection, read on one connection kept open. A look costs a counter and one pragma, where a copy
    of every row of every table cost a new engine and a full read (the matrix takes ~2,000 looks)."""

    _READS = ("SELECT", "PRAGMA", "BEGIN", "SAVEPOINT", "RELEASE", "ROLLBACK", "COMMIT", "WITH")

    def __init__(self, svc: Svc) -> None:
        settings = svc.ctx.settings
        self._engine = svc.ctx.engine
        self._queue = settings.data_dir / "huey.sqlite"
        self._watcher: sqlite3.Connection | None = None
        self._commits = 0
        event.listen(self._engine, "after_cursor_execute", self._executed)
        event.listen(self._engine, "commit", self._committed)
        event.listen(self._engine, "rollback", self._rolled_back)

    def _executed(self, conn: Connection, _cursor: object, statement: str, *_args: object) -> None:
        words = statement.lstrip().split(None, 3)
        if not words or words[0].upper() in self._READS:
            return
        if not {w.strip('"') for w in words[1:3]} & {AUDIT_TABLE, "rate_buckets"}:
            conn.info["wrote"] = True

    def _committed(self, conn: Connection) -> None:
        if conn.info.pop("wrote", False):
            self._commits += 1

    def _rolled_back(self, conn: Connection) -> None:
        conn.info.pop("wrote", None)

    def look(self) -> tuple[int, int | None]:
        return self._commits, self._queue_version()

    def _queue_version(self) -> int | None:
        if self._watcher is None:
            if not self._queue.exists():
                return None  # the queue file appears with the first job: a change too
            self._watcher = sqlite3.connect(self._queue, isolation_level=None)
        version: int = self._watcher.execute("PRAGMA data_version").fetchone()[0]
        return version

    def close(self) -> None:
        event.remove(self._engine, "after_cursor_execute", self._executed)
        event.remove(self._engine, "commit", self._committed)
        event.remove(self._engine, "rollback", self._rolled_back)
        if self._watcher is not None:
            self._watcher.close()


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
    drained(svc)


def drained(svc: Svc) -> None:
    """Wait until the worker has taken every queued message: a pool import queues its texts' embedding,
    which the worker takes later, writing the queue file in the middle of the next cell otherwise."""
    wait_until(lambda: svc.ctx.huey.pending_count() == 0, 60, "the worker to take the queued messages")


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
OWN_WORLD = [pytest.param(op, id=op.name) for op in OPERATIONS if not _shares_world(op)]
SHARED_WORLD = [pytest.param(op, id=op.name) for op in OPERATIONS if _shares_world(op)]


def sqlite_url(data_dir: Path) -> str:
    return f"sqlite:///{data_dir / 'scoring.sqlite'}"


@pytest.fixture(scope="module")
def world_templates(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], tuple[Path, World]]:
    """Each target state's world (its models trained, its keys made) built once into a data directory of its
    own, which each cell that writes copies: every such operation starts from the same world, without
    training two models anew."""
    built: dict[str, tuple[Path, World]] = {}

    def template(target: str) -> tuple[Path, World]:
        if target not in built:
            data_dir = tmp_path_factory.mktemp(f"world-{target}")
            _migrate(sqlite_url(data_dir))
            with running(data_dir, database_url=sqlite_url(data_dir)) as svc:
                built[target] = (data_dir, build(svc, target))
        return built[target]

    return template


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


@pytest.mark.parametrize("op", OWN_WORLD)
def test_auth_matrix(world_templates: Callable[[str], tuple[Path, World]], tmp_path: Path, op: Op) -> None:
    template, world = world_templates(op.target)
    data_dir = tmp_path / "data"
    shutil.copytree(template, data_dir)
    with running(data_dir, database_url=sqlite_url(data_dir)) as svc:
        check_cells(svc, world, op)


@pytest.mark.parametrize("op", SHARED_WORLD)
def test_auth_matrix_reads(shared_worlds: Callable[[str], tuple[Svc, World]], op: Op) -> None:
    check_cells(*shared_worlds(op.target), op)


def last_event(svc: Svc) -> int:
    with transaction(svc.ctx.sessions) as s:
        return s.scalar(select(func.max(AuditEvent.id))) or 0


def new_events(svc: Svc, after: int) -> list[tuple[str, str]]:
    """(kind, namespace) of the audit events added since event `after`."""
    with transaction(svc.ctx.sessions) as s:
        rows = s.scalars(select(AuditEvent).where(AuditEvent.id > after).order_by(AuditEvent.id)).all()
        return [(e.kind, e.namespace) for e in rows]


def check_events(op: Op, who: Who, want: int, ns: str, added: list[tuple[str, str]], cell: str) -> None:
    """What a cell adds to the audit log: an allowed write its event (AUDITED), a label nothing required;
    a 403 one `access_refused`, in the namespace's log for its keys, else in the service-wide stream
    (at most one: each process records a bounded number a minute per caller, and the read cells share a
    process); any other answer nothing."""
    if want < 400 and op.writes and who in ("owner", *ROLE_KEYS):
        if op.name in AUDITED:
            assert (AUDITED[op.name], ns) in added, f"{cell}: no {AUDITED[op.name]} event: {added}"
        return
    if want == 403:
        # The namespace's keys (its scoring key too) are its members; a path without the namespace may leave
        # it unknown (a scoring key's POST /models: refused before the body is read).
        member = who in ("scoring", *ROLE_KEYS)
        names_it = "{handle}" in op.path or "{namespace}" in op.path
        where = {ns} if member and names_it else {ns, SERVICE} if member else {SERVICE}
        assert {k for k, _ in added} <= {"access_refused"} and len(added) <= 1, f"{cell}: {added}"
        assert all(n in where for _, n in added), f"{cell}: {added} not in {where}"
        assert added or _shares_world(op), f"{cell}: the refusal left no event"
        return
    assert not added, f"{cell}: a request that must not write added to the audit log: {added}"


def check_cells(svc: Svc, world: World, op: Op) -> None:
    writes = Writes(svc)
    try:
        _check_cells(svc, world, op, writes)
    finally:
        writes.close()


def _check_cells(svc: Svc, world: World, op: Op, writes: Writes) -> None:
    for vis in ("public", "private"):
        handle = world.handles[vis]
        extra = op.setup(svc, handle, world.keys[(vis, "owner")]) if op.setup else {}
        for who in WHO:
            if op.caller_setup and who in ("owner", *ROLE_KEYS):
                extra = op.caller_setup(svc, handle, world.keys[(vis, "owner")], world.keys[(vis, who)])
            if op.setup or op.caller_setup:
                drained(svc)
            before, logged = writes.look(), last_event(svc)
            resp = call(svc, op, handle, world.keys[(vis, who)], extra)
            want = op.expected(who, vis)
            cell = f"{op.name} on {vis} model as {who}"
            check_events(op, who, want, handle.split(".")[0], new_events(svc, logged), cell)
            assert resp.status_code == want, f"{cell}: {resp.status_code} != {want}: {resp.text[-300:]}"
            if want >= 400:
                code = error_code(resp, want)
                assert code == {401: "unauthorized", 403: "forbidden", 404: "model_not_found"}[want], cell
            changed = writes.look() != before
            # A claim asked by a key outside the namespace is answered unclaimed: a read, no write.
            if want < 400 and op.writes and who in ("owner", *ROLE_KEYS):
                assert changed, f"{cell}: the {who}'s write changed nothing (the watch cannot see it?)"
                settle(svc, world.keys[(vis, who)])  # a run it started must not write during the next cell
                if who != "owner" and op.setup:  # what it acted on may be gone: the next caller's, anew
                    extra = op.setup(svc, handle, world.keys[(vis, "owner")])
            else:
                assert not changed, f"{cell}: a request that must not write changed the database"


@pytest.mark.database_free  # the app's routes and the guard: no database decides
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


def test_every_write_leaves_an_audit_event_or_is_a_label() -> None:
    """A new operation that writes names the event it leaves (AUDITED, which the cells check) or is a label's
    own write (LABELS); so a new write route cannot skip the audit log, as it cannot skip the matrix."""
    writes = {op.name for op in OPERATIONS if op.writes or op.kind == "person"}
    assert not writes - set(AUDITED) - LABELS, (
        f"say what these leave in the audit log: {writes - set(AUDITED) - LABELS}"
    )
    assert not (set(AUDITED) | LABELS) - writes, "AUDITED or LABELS names an operation that does not write"
    assert not set(AUDITED) & LABELS
    assert set(AUDITED.values()) <= set(AUDIT_KINDS)


def test_scoring_a_public_model_without_feedback_is_open_to_every_key(svc: Svc) -> None:
    """The other half of the feedback rule: reading and scoring the public catalog needs no ownership."""
    build(svc, "ready")
    for key in (svc.other, svc.scorer, svc.author):
        resp = svc.client.post("/v1/models/public.mready/score", json={"content": "hi"}, headers=key)
        out = check(resp, 200)
        assert out["scores"] and "feedback_buffered" not in out
    model = check(svc.client.get("/v1/models/public.mready", headers=svc.publisher), 200)
    assert model["buffered_feedback"] == 0 and model["version_no"] == 1


# -- Who the caller is: keys and bodies, people and their sessions ------------------------------------------


@pytest.mark.database_free  # the app's routes and the guard: no database decides
def test_a_body_over_the_limit_without_a_valid_key_is_401_not_413(svc: Svc) -> None:
    """The key is checked before anything of the body, its declared length included: a caller without a
    key learns nothing more than 401."""
    body = b"x" * (MAX_BODY_BYTES + 1)
    for headers in ({}, BAD_KEY):
        resp = svc.client.post("/v1/models", content=body, headers=headers)
        assert error_code(resp, 401) == "unauthorized"
    assert error_code(svc.client.post("/v1/models", content=body, headers=svc.author), 413) == (
        "payload_too_large"
    )


def test_a_write_the_role_may_not_do_is_403_before_the_body_s_size(svc: Svc) -> None:
    """An annotator's (or a scoring key's) body over the limit on a write their role may not do is refused
    for the role (403), as its small body would be, before its size (413); the owner's gets 413; the refusal
    is an audit event, and nothing else is stored."""
    make_model(svc.client, svc.author, "acme.big")
    with transaction(svc.ctx.sessions) as s:
        annotator = auth(create_key(s, ["acme"], "authoring", "ann", "annotator"))
    body = b"x" * (MAX_BODY_BYTES + 1024 * 1024)  # 17 MiB
    json_type = {"Content-Type": "application/json"}
    for method, path in (
        ("POST", "/v1/models/acme.big/evaluation-set"),
        ("POST", "/v1/models/acme.big/pool"),
        ("PUT", "/v1/models/acme.big/guidelines"),
    ):
        writes = Writes(svc)
        before, logged = writes.look(), last_event(svc)
        for who in (annotator, svc.scorer):
            resp = svc.client.request(method, path, content=body, headers={**who, **json_type})
            assert error_code(resp, 403) == "forbidden", path
        assert writes.look() == before
        writes.close()
        assert new_events(svc, logged) == [("access_refused", "acme")] * 2
        resp = svc.client.request(method, path, content=body, headers={**svc.author, **json_type})
        assert error_code(resp, 413) == "payload_too_large"
    # Creating names its namespace in the body: a caller who manages no namespace is refused before it.
    writes = Writes(svc)
    before, logged = writes.look(), last_event(svc)
    resp = svc.client.post("/v1/models", content=body, headers={**annotator, **json_type})
    assert error_code(resp, 403) == "forbidden"
    assert writes.look() == before
    assert new_events(svc, logged) == [("access_refused", "acme")]
    writes.close()


@pytest.mark.database_free  # the app's routes and the guard: no database decides
def test_the_guard_s_early_role_check_never_refuses_what_the_route_allows(svc: Svc) -> None:
    """WRITE_ACTIONS (the role a write needs, known before its body) names routes the app has, and asks no
    more than the operation's own rule: every role the matrix lets write it passes the early check."""
    routes = {(m, r.path_format) for r in svc.app.routes if isinstance(r, APIRoute) for m in r.methods}
    assert set(WRITE_ACTIONS) <= routes
    for op in OPERATIONS:
        early = WRITE_ACTIONS.get((op.method, op.path))
        if early is not None and op.writes:
            assert role_allows(least_role(op.action), early), op.name


@pytest.fixture(scope="module")
def idp() -> Iterator[Idp]:
    with running_idp() as provider:
        yield provider


@pytest.fixture
def team(tmp_path: Path, database_url: str, idp: Idp) -> Iterator[Svc]:
    """The service with the loopback identity provider; `acme` has alice (owner) and bob (annotator)."""
    with running(tmp_path, database_url=database_url, oidc_issuer=idp.issuer, oidc_audience=CLIENT_ID) as svc:
        for member, role in (("alice@example.com", "owner"), ("bob@example.com", "annotator")):
            check(svc.client.put(f"/v1/namespaces/acme/people/{member}", json={"role": role},
                                 headers=svc.author), 200)  # fmt: skip
        yield svc


def signed_in(idp: Idp, sub: str, email: str | None = None, **claims: Any) -> dict[str, str]:
    """`sub` signed in at the provider: a real signed token, with a verified `email` unless told."""
    claims = {"email": email or f"{sub}@example.com", "email_verified": True, **claims}
    return auth(idp.token(sub, **claims))


def me(svc: Svc, headers: dict[str, str]) -> httpx.Response:
    return svc.client.get("/v1/keys/current", headers=headers)


def promote(svc: Svc, headers: dict[str, str], member: str = "dave@example.com") -> httpx.Response:
    return svc.client.put(f"/v1/namespaces/acme/people/{member}", json={"role": "owner"}, headers=headers)


def test_a_person_is_their_account_not_the_email_a_token_shows(team: Svc, idp: Idp) -> None:
    """nOAuth: another account showing the owner's email, verified or not and in any letter case, is not
    the owner; nor is a member who changes their own email to the owner's at the provider."""
    alice = signed_in(idp, "alice")
    assert check(me(team, alice), 200)["roles"] == {"acme": "owner"}
    bob = signed_in(idp, "bob")
    assert check(me(team, bob), 200)["roles"] == {"acme": "annotator"}
    forgeries = {
        "verified": signed_in(idp, "mallory", "alice@example.com"),
        "other case": signed_in(idp, "mallory2", "ALICE@Example.COM"),
        "unverified": signed_in(idp, "mallory3", "alice@example.com", email_verified=False),
        "unsaid": auth(idp.token("mallory4", email="alice@example.com")),  # no email_verified at all
    }
    for name, token in forgeries.items():
        resp = promote(team, token)
        assert error_code(resp, 403) == "forbidden", name
        assert error_code(me(team, token), 403) == "forbidden", name
    # Bob makes his provider email alice's: still bob, an annotator who labels as bob@example.com.
    bob_as_alice = signed_in(idp, "bob", "alice@example.com")
    assert error_code(promote(team, bob_as_alice), 403) == "forbidden"
    again = check(me(team, bob_as_alice), 200)
    assert (again["roles"], again["name"]) == ({"acme": "annotator"}, "bob@example.com")
    members = check(team.client.get("/v1/namespaces/acme/people", headers=team.author), 200)["items"]
    roles = {m["member"]: m["role"] for m in members}
    assert roles == {"alice@example.com": "owner", "bob@example.com": "annotator"}
    # Alice's own change names her account in the audit log, beside her email.
    check(promote(team, alice), 200)
    event = check(team.client.get("/v1/namespaces/acme/audit", headers=alice), 200)["items"][0]
    assert event["actor"] == "alice@example.com"
    account = {"issuer": idp.issuer, "subject": "alice", "email": "alice@example.com"}
    assert event["detail"]["account"] == account


def test_a_membership_binds_the_first_account_with_the_email_verified(team: Svc, idp: Idp) -> None:
    check(team.client.put("/v1/namespaces/acme/people/carol@example.com", json={"role": "reviewer"},
                          headers=team.author), 200)  # fmt: skip
    # An account showing carol's email unverified binds nothing (and has no name to label under).
    assert error_code(me(team, signed_in(idp, "early", "carol@example.com", email_verified=False)), 403)
    carol = signed_in(idp, "carol")
    assert check(me(team, carol), 200)["roles"] == {"acme": "reviewer"}
    # Bound: a later account with carol's email verified gets nothing; carol keeps it under a new email.
    assert error_code(me(team, signed_in(idp, "carol-2", "carol@example.com")), 403) == "forbidden"
    moved = check(me(team, signed_in(idp, "carol", "carol@elsewhere.example")), 200)
    # The key's email is the person's stored identity, never the address the latest token carries.
    assert (moved["roles"], moved["name"], moved["email"]) == (
        {"acme": "reviewer"},
        "carol@example.com",
        "carol@example.com",
    )


def test_a_provider_marked_as_verifying_emails_binds_without_the_claim(
    tmp_path: Path, database_url: str, idp: Idp
) -> None:
    """Entra ID sends no `email_verified`: the operator's setting says its emails are verified; an explicit
    `email_verified: false` still binds nothing."""
    with running(tmp_path, database_url=database_url, oidc_issuer=idp.issuer, oidc_audience=CLIENT_ID,
                 oidc_emails_verified=True) as svc:  # fmt: skip
        check(svc.client.put("/v1/namespaces/acme/people/erin@example.com", json={"role": "owner"},
                             headers=svc.author), 200)  # fmt: skip
        unverified = auth(idp.token("erin-other", email="erin@example.com", email_verified=False))
        assert error_code(me(svc, unverified), 403) == "forbidden"
        erin = auth(idp.token("erin", email="erin@example.com"))
        assert check(me(svc, erin), 200)["roles"] == {"acme": "owner"}


def test_a_person_never_takes_a_key_s_name(team: Svc, idp: Idp) -> None:
    """A provider sending `email: "k_ann"` (no email), or a key's name as an email, gives no name to label
    under: a person's vote never replaces a key's; no member or key may take the other's name either."""
    with transaction(team.ctx.sessions) as s:
        create_key(s, ["acme"], "authoring", name="k_ann", role="annotator")
        create_key(s, ["acme"], "authoring", name="ann@example.com", role="annotator")
    for sub, email in (("ann", "k_ann"), ("ann2", "ann@example.com"), ("ann3", "Ann@Example.com")):
        resp = me(team, signed_in(idp, sub, email))
        assert error_code(resp, 403) == "forbidden", email
    for member in ("k_ann", "ann@example.com"):
        resp = promote(team, team.author, member)
        assert error_code(resp, 422) == "validation_error", member
    check(me(team, signed_in(idp, "alice")), 200)
    with transaction(team.ctx.sessions) as s, pytest.raises(NameTaken):
        create_key(s, ["acme"], "authoring", name="alice@example.com")


def test_a_token_issued_to_another_client_is_refused_though_its_aud_lists_ours(team: Svc, idp: Idp) -> None:
    both = [CLIENT_ID, "another-app"]
    refused = {
        "azp another": signed_in(idp, "alice", aud=both, azp="another-app"),
        "no azp": signed_in(idp, "alice", aud=both),
        "one aud, azp another": signed_in(idp, "alice", azp="another-app"),
    }
    for name, token in refused.items():
        assert error_code(me(team, token), 401) == "unauthorized", name
    ours = signed_in(idp, "alice", aud=both, azp=CLIENT_ID)
    assert check(me(team, ours), 200)["roles"] == {"acme": "owner"}


def test_signing_out_ends_every_tab_and_copied_cookie_at_once(team: Svc, idp: Idp) -> None:
    """Two browsers (or tabs, or a copied cookie) hold alice's tokens; she signs out in one: both are
    refused from then on, for reads and writes; a new sign-in works; a key cannot sign out."""
    first, copied = signed_in(idp, "alice"), signed_in(idp, "alice")
    check(me(team, copied), 200)
    out = check(team.client.post("/v1/keys/current/sign-out", headers=first), 200)
    assert out["signed_out_at"]
    for token in (first, copied):
        resp = me(team, token)
        assert error_code(resp, 401) == "unauthorized" and "signed out" in resp.json()["error"]["message"]
        assert error_code(promote(team, token), 401) == "unauthorized"
    later = int(time.time()) + 2  # a sign-in after this one (iat has whole seconds)
    again = signed_in(idp, "alice", iat=later)
    assert check(me(team, again), 200)["roles"] == {"acme": "owner"}
    assert error_code(me(team, first), 401) == "unauthorized"
    with transaction(team.ctx.sessions) as s:  # in the log of each namespace alice belongs to
        out_events = s.scalars(select(AuditEvent).where(AuditEvent.kind == "signed_out")).all()
        assert [(e.namespace, e.actor) for e in out_events] == [("acme", "alice@example.com")]
    resp = team.client.post("/v1/keys/current/sign-out", headers=team.author)
    assert error_code(resp, 403) == "forbidden"
    # Someone in no namespace may still sign out (as they may still ask who they are).
    check(team.client.post("/v1/keys/current/sign-out", headers=signed_in(idp, "zed")), 200)


def test_a_person_in_no_namespace_is_refused_in_the_operator_s_stream(team: Svc, idp: Idp) -> None:
    """A signed-in person in no namespace is refused everything but who they are, and each refusal is an
    `access_refused` event in the service-wide stream (the operator's), as an outsider's key's is: it names
    the route and the namespace asked about; asking who they are is no refusal."""
    zed = signed_in(idp, "zed", iat=int(time.time()))
    logged = last_event(team)
    check(me(team, zed), 200)
    assert error_code(team.client.get("/v1/models/acme.anything", headers=zed), 403) == "forbidden"
    body = b"x" * (MAX_BODY_BYTES + 1)
    resp = team.client.put("/v1/models/acme.anything/guidelines", content=body, headers=zed)
    assert error_code(resp, 403) == "forbidden"
    with transaction(team.ctx.sessions) as s:
        rows = s.scalars(select(AuditEvent).where(AuditEvent.id > logged).order_by(AuditEvent.id)).all()
        refused = [(e.namespace, e.actor, e.detail) for e in rows if e.kind == "access_refused"]
    assert [(ns, actor) for ns, actor, _ in refused] == [(SERVICE, "zed@example.com")] * 2
    assert [d["route"] for _, _, d in refused] == ["/v1/models/{handle}", "/v1/models/{handle}/guidelines"]
    assert {d["namespace"] for _, _, d in refused} == {"acme"}


def test_one_person_holds_one_membership_of_a_namespace(team: Svc, idp: Idp) -> None:
    """A second membership for an account a namespace has already (by its subject beside its email) is
    409 `already_member`, nothing stored; two waiting for one account (email and subject, added before the
    first sign-in) become one at the sign-in, with the stronger role, and the merge is in the audit log."""
    c, people = team.client, "/v1/namespaces/acme/people"
    check(me(team, signed_in(idp, "bob")), 200)  # binds bob@example.com (annotator)
    resp = c.put(f"{people}/bob", json={"role": "owner"}, headers=team.author)  # bob's subject
    assert error_code(resp, 409) == "already_member" and "bob@example.com" in resp.json()["error"]["message"]
    check(c.put(f"{people}/carol@example.com", json={"role": "annotator"}, headers=team.author), 200)
    check(c.put(f"{people}/carol", json={"role": "reviewer"}, headers=team.author), 200)
    assert check(me(team, signed_in(idp, "carol")), 200)["roles"] == {"acme": "reviewer"}
    members = [(m["member"], m["role"]) for m in check(c.get(people, headers=team.author), 200)["items"]]
    assert [m for m in members if m[0] in ("bob", "bob@example.com")] == [("bob@example.com", "annotator")]
    assert [m for m in members if m[0].startswith("carol")] == [("carol@example.com", "reviewer")]
    log = check(c.get("/v1/namespaces/acme/audit", headers=team.author), 200)["items"]
    merged = [e["detail"] for e in log if e["detail"].get("merged_into")]
    assert merged == [{"member": "carol", "from": "reviewer", "to": None, "merged_into": "carol@example.com"}]


def test_an_idle_or_old_sign_in_is_refused(team: Svc, idp: Idp) -> None:
    """After the idle timeout (default 8 h) without a request, the tokens from before are refused and a new
    sign-in is needed; a token older than the longest session (12 h) is refused whatever its `exp`."""
    now = int(time.time())
    old = signed_in(idp, "alice", iat=now - 10 * 3600, exp=now + 3600)  # signed in ten hours ago
    check(me(team, old), 200)
    with transaction(team.ctx.sessions) as s:  # nine hours pass without a request
        for row in s.scalars(select(Person)):
            assert row.last_seen_at is not None
            row.last_seen_at -= timedelta(hours=9)
    resp = me(team, old)
    assert error_code(resp, 401) == "unauthorized" and "without activity" in resp.json()["error"]["message"]
    fresh = signed_in(idp, "alice", iat=int(time.time()) + 2)
    check(me(team, fresh), 200)
    assert error_code(me(team, old), 401) == "unauthorized"  # the new sign-in does not revive the old one
    ancient = signed_in(idp, "alice", iat=now - 13 * 3600, exp=now + 3600)
    resp = me(team, ancient)
    assert error_code(resp, 401) == "unauthorized" and "older than 12 h" in resp.json()["error"]["message"]


# Blind labelling (docs/api.md, "Blind labelling"): each route that returns votes or notes, and where in its
# answer a text's votes and notes are.
BLIND_READS: dict[str, Callable[[Any], list[str]]] = {
    "samples": lambda body: [i["text"] for i in body["items"]],
    "votes": lambda body: [i["text"] for i in body["items"]],
    "feedback": lambda body: [i["text"] for i in body["items"]],
    "comments": lambda body: [i["text"] for i in body["items"]],
    "unsure": lambda body: [i["text"] for i in body["items"]],
    "agreement": lambda body: [t["text"] for t in body["traits"]["formality"]["disagreed"]],
}


def test_blind_labelling_hides_colleagues_votes_from_annotators_until_they_voted(svc: Svc) -> None:
    """The owner's `blind_labelling`: on every route that returns votes or notes, an annotator sees a
    colleague's vote, unsure mark or comment on a text only once they voted on it; reviewers and owners see
    all of it; off, annotators see all of it too."""
    c, h = svc.client, "acme.blind"
    make_model(c, svc.author, h)
    with transaction(svc.ctx.sessions) as s:
        ann, carol, rev = (
            auth(create_key(s, ["acme"], "authoring", name, role))
            for name, role in (("ann", "annotator"), ("carol", "annotator"), ("rev", "reviewer"))
        )
    secret, shared = "Carol's text, not yet Ann's.", "A text both labelled."
    for key, text, q in ((carol, secret, 1.0), (carol, shared, 1.0), (ann, shared, 0.0)):
        body = {"samples": [{"trait": "formality", "text": text, "quality": q}]}
        check(c.post(f"/v1/models/{h}/samples", json=body, headers=key), 201)
    for text in (secret, shared):
        note = {"trait": "formality", "text": text}
        check(c.post(f"/v1/models/{h}/comments", json={**note, "body": "Hm."}, headers=carol), 201)
        check(c.post(f"/v1/models/{h}/unsure", json=note, headers=carol), 201)
    body = {"samples": [{"trait": "formality", "text": secret, "quality": 0.0, "annotator": "rater-x"}]}
    check(c.post(f"/v1/models/{h}/samples", json=body, headers=svc.author), 201)  # so `secret` is disagreed
    train_ready(c, svc.author, h)  # buffered feedback needs a version to score
    for text in (secret, shared):
        score = {"content": text, "feedback": FEEDBACK}
        check(c.post(f"/v1/models/{h}/score", json=score, headers=carol), 200)
    check(c.post(f"/v1/models/{h}/reopen", headers=svc.author), 200)  # a draft takes votes; labels stay

    def texts(key: dict[str, str], route: str) -> set[str]:
        return set(BLIND_READS[route](check(c.get(f"/v1/models/{h}/{route}", headers=key), 200)))

    for blind in (False, True):
        patched = check(c.patch(f"/v1/models/{h}", json={"blind_labelling": blind}, headers=svc.author), 200)
        assert patched["blind_labelling"] is blind
        for route in BLIND_READS:
            for who, key in (("carol", carol), ("rev", rev), ("owner", svc.author)):
                assert secret in texts(key, route), (route, who)
            assert shared in texts(ann, route), route  # ann voted on it: she sees its votes and notes
            assert (secret in texts(ann, route)) is not blind, (route, blind)
    check(c.post(f"/v1/models/{h}/samples", json={"samples": [{**body["samples"][0], "annotator": None}]},
                 headers=ann), 201)  # fmt: skip
    for route in BLIND_READS:  # now that ann voted on it
        assert secret in texts(ann, route), route


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
