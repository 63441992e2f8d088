"""Limits a flood meets: token buckets per key or person and namespace (writes, scoring), feedback labels
per request, automatic retrainings per hour, comments per person. Nothing here waits for time to pass:
buckets are tiny (one token in 1,000 s), the store's clock is an argument, the hour is moved in the database.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from sqlalchemy import func, select, update

from core.contract import (
    DEFAULT_IMPORT_BURST,
    DEFAULT_IMPORT_RATE_PER_S,
    DEFAULT_SCORE_RATE_PER_S,
    DEFAULT_WRITE_BURST,
    DEFAULT_WRITE_RATE_PER_S,
    MAX_COMMENTS_PER_PERSON,
    MAX_COMMENTS_PER_TEXT,
    SMALL_IMPORT_ROWS,
)
from service.http import ratelimit
from service.store.api_keys import create_key
from service.store.campaign_schema import TextComment
from service.store.db import transaction
from service.store.rate_limits import Rate, take
from service.store.schema import FeedbackLabel, Model, Run, Trait, utcnow
from tests.support.idp import CLIENT_ID, running_idp
from tests.support.service import (
    TRAITS,
    Svc,
    auth,
    check,
    error_code,
    loopback,
    make_model,
    running,
    train_ready,
    wait_settled,
)

SLOW = 0.001  # a token every 1,000 s: none comes back while a test runs


@pytest.fixture
def limited(tmp_path: Path, database_url: str) -> Iterator[Svc]:
    """Writes and scoring limited to 3 at once per key or person and namespace; one automatic retraining an
    hour."""
    with running(
        tmp_path,
        database_url=database_url,
        write_rate_per_s=SLOW,
        write_burst=3,
        score_rate_per_s=SLOW,
        score_burst=3,
        retrains_per_hour=1,
    ) as s:
        yield s


def test_a_bucket_gives_its_burst_then_its_rate(svc: Svc) -> None:
    rate = Rate(per_s=2.0, burst=3)
    with transaction(svc.ctx.sessions) as s:
        assert [take(s, "write|acme|key:1", rate, 100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
        assert take(s, "write|acme|key:1", rate, 100.0) == pytest.approx(0.5)  # empty: half a second
        assert take(s, "write|acme|key:2", rate, 100.0) == 0.0  # another caller's bucket is full
        assert take(s, "write|acme|key:1", rate, 100.25) == pytest.approx(0.25)  # half a token back
        assert take(s, "write|acme|key:1", rate, 100.5) == 0.0
        assert take(s, "write|acme|key:1", rate, 99.0) == pytest.approx(0.5)  # a clock behind adds nothing
        assert [take(s, "write|acme|key:1", rate, 1e6) for _ in range(4)][-1] > 0  # full is `burst`


def _comments(svc: Svc) -> int:
    with transaction(svc.ctx.reads) as s:
        return s.scalar(select(func.count()).select_from(TextComment)) or 0


def test_a_flooding_key_gets_429_with_retry_after_and_stores_nothing(limited: Svc) -> None:
    c, h = limited.client, "acme.flood"
    with transaction(limited.ctx.sessions) as s:
        flooder = auth(create_key(s, ["acme", "lab"], "authoring", "flooder"))
        colleague = auth(create_key(s, ["acme"], "authoring", "colleague"))
    check(c.post("/v1/models", json={"handle": h}, headers=colleague), 201)
    traits = [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}]
    check(c.post(f"/v1/models/{h}/traits", json={"traits": traits}, headers=colleague), 201)
    body = {"trait": "formality", "text": "see the guidelines", "body": "x" * 900}
    for _ in range(3):
        check(c.post(f"/v1/models/{h}/comments", json=body, headers=flooder), 201)
    refused = c.post(f"/v1/models/{h}/comments", json=body, headers=flooder)
    assert error_code(refused, 429) == "rate_limited"
    assert refused.json()["error"]["retryable"] is True
    assert int(refused.headers["Retry-After"]) >= 1 and refused.headers["X-Request-Id"]
    assert _comments(limited) == 3
    # Reads are not counted; a colleague's bucket and the flooder's in another namespace are their own.
    check(c.get(f"/v1/models/{h}/comments", headers=flooder), 200)
    check(c.post(f"/v1/models/{h}/comments", json=body, headers=colleague), 201)
    check(c.post("/v1/models", json={"handle": "lab.own"}, headers=flooder), 201)
    assert _comments(limited) == 4


def test_scoring_has_its_own_bucket_counted_only_beside_another_caller(limited: Svc) -> None:
    """A caller alone is never refused scoring, past any rate; while another caller has scoring in flight
    (held here in the process's fair share), the caller's scoring bucket counts and runs out."""
    c, h = limited.client, limited.author
    make_model(c, h, "acme.scored")
    train_ready(c, h, "acme.scored")  # three writes in acme (creating one counts where no handle is)
    for _ in range(6):  # twice the burst, alone
        check(c.post("/v1/models/acme.scored/score", json={"content": "Dear Sir"}, headers=h), 200)
    with limited.app.state.share.admitted("key:a colleague", 1):
        for _ in range(3):
            check(c.post("/v1/models/acme.scored/score", json={"content": "Dear Sir"}, headers=h), 200)
        refused = c.post("/v1/models/acme.scored/score/compare", json={"a": "hi", "b": "Dear Sir"}, headers=h)
        assert error_code(refused, 429) == "rate_limited" and "Retry-After" in refused.headers
        note = {"trait": "formality", "text": "Dear Sir", "body": "formal"}
        assert (
            error_code(c.post("/v1/models/acme.scored/comments", json=note, headers=h), 429) == "rate_limited"
        )


def test_one_request_s_feedback_names_each_trait_once(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.dup")
    train_ready(c, h, "acme.dup")
    items = [{"trait": "formality", "quality": 1.0}] * 50
    refused = c.post("/v1/models/acme.dup/score", json={"content": "Dear Sir", "feedback": items}, headers=h)
    assert error_code(refused, 422) == "validation_error"
    assert refused.json()["error"]["details"][0]["loc"] == ["body", "feedback", 1, "trait"]
    model = check(c.get("/v1/models/acme.dup", headers=h), 200)
    assert (model["buffered_feedback"], model["version_no"]) == (0, 1)


def test_automatic_retrainings_are_bounded_per_hour_and_the_buffer_waits(
    tmp_path: Path, database_url: str
) -> None:
    with running(tmp_path, database_url=database_url, retrains_per_hour=1, write_rate_per_s=0) as svc:
        c, h, handle = svc.client, svc.author, "acme.hourly"
        make_model(c, h, handle)
        train_ready(c, h, handle)

        def feedback(n: int) -> None:
            for i in range(n):
                body = {"content": f"text {i} {n}", "feedback": [{"trait": "formality", "quality": i % 2}]}
                check(c.post(f"/v1/models/{handle}/score", json=body, headers=h), 200)

        feedback(3)  # retrain_buffer is 3: the hour's one automatic retraining
        assert wait_settled(c, handle, h)["version_no"] == 2
        feedback(4)  # a full buffer and more: it waits
        model = wait_settled(c, handle, h)
        assert (model["version_no"], model["buffered_feedback"]) == (2, 4)
        with transaction(svc.ctx.sessions) as s:  # an hour later
            s.execute(update(Run).values(created_at=utcnow() - timedelta(hours=1, seconds=1)))
        feedback(1)
        model = wait_settled(c, handle, h)
        assert (model["version_no"], model["buffered_feedback"]) == (3, 0)


def test_a_person_s_comments_are_bounded_per_text_and_per_model(svc: Svc) -> None:
    c, h, handle = svc.client, svc.author, "acme.chatty"
    make_model(c, h, handle)
    body = {"trait": "formality", "text": "one text", "body": "a note"}
    for _ in range(MAX_COMMENTS_PER_TEXT):
        check(c.post(f"/v1/models/{handle}/comments", json=body, headers=h), 201)
    refused = c.post(f"/v1/models/{handle}/comments", json=body, headers=h)
    assert error_code(refused, 409) == "too_many_comments"
    other = {**body, "text": "another text"}
    author = check(c.post(f"/v1/models/{handle}/comments", json=other, headers=h), 201)["author"]
    with transaction(svc.ctx.sessions) as s:  # the rest of the person's allowance, on other texts
        model_id = s.scalar(select(Model.id).where(Model.handle == handle))
        trait_id = s.scalar(select(Trait.id).where(Trait.model_id == model_id))
        assert model_id is not None and trait_id is not None
        for i in range(MAX_COMMENTS_PER_PERSON - MAX_COMMENTS_PER_TEXT - 1):
            s.add(
                TextComment(
                    model_id=model_id,
                    trait_id=trait_id,
                    text=f"t{i}",
                    content_sha256=f"{i:064d}",
                    author=author,
                    body="b",
                )
            )
    refused = c.post(f"/v1/models/{handle}/comments", json={**body, "text": "a third text"}, headers=h)
    assert error_code(refused, 409) == "too_many_comments"
    assert _comments(svc) == MAX_COMMENTS_PER_PERSON
    with transaction(svc.ctx.reads) as s:
        assert s.scalar(select(func.count()).select_from(FeedbackLabel)) == 0


def test_two_api_processes_on_one_database_share_the_buckets(tmp_path: Path, database_url: str) -> None:
    """A fleet's processes each have their own memory: the buckets are in the database they share, so a
    caller spreading requests over two processes gets no more than through one."""
    settings = {"database_url": database_url, "write_rate_per_s": SLOW, "write_burst": 3}
    with running(tmp_path / "a", **settings) as a, running(tmp_path / "b", **settings) as b:
        key = a.author  # one key, known to both (one database)
        check(a.client.post("/v1/models", json={"handle": "acme.fleet"}, headers=key), 201)
        traits = {"traits": [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}]}
        check(b.client.post("/v1/models/acme.fleet/traits", json=traits, headers=key), 201)
        note = {"trait": "formality", "text": "Dear Sir", "body": "formal"}
        check(a.client.post("/v1/models/acme.fleet/comments", json=note, headers=key), 201)
        check(b.client.post("/v1/models/acme.fleet/comments", json=note, headers=key), 201)
        for svc in (a, b):
            refused = svc.client.post("/v1/models/acme.fleet/comments", json=note, headers=key)
            assert error_code(refused, 429) == "rate_limited"


def test_the_openapi_document_lists_429_on_every_limited_operation(svc: Svc) -> None:
    doc = check(svc.client.get("/v1/openapi.json"), 200)
    comments = doc["paths"]["/v1/models/{handle}/comments"]
    assert "429" in comments["post"]["responses"] and "429" not in comments["get"]["responses"]
    score = doc["paths"]["/v1/models/{handle}/score"]["post"]["responses"]["429"]
    assert "Retry-After" in score["headers"]


def test_a_bucket_behind_a_held_sqlite_lock_answers_503_database_busy(tmp_path: Path) -> None:
    """Taking a token is a write: behind another process's write lock it is the usual retryable 503."""
    with running(tmp_path, run_worker=False, lock_timeout_s=0.3, write_rate_per_s=SLOW) as svc:
        make_model(svc.client, svc.author, "acme.locked")
        holder = sqlite3.connect(tmp_path / "scoring.sqlite", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            resp = svc.client.patch("/v1/models/acme.locked", json={"description": "x"}, headers=svc.author)
            assert error_code(resp, 503) == "database_busy" and resp.headers["Retry-After"] == "1"
        finally:
            holder.rollback()
            holder.close()
        check(svc.client.patch("/v1/models/acme.locked", json={"description": "x"}, headers=svc.author), 200)


def test_a_person_has_one_bucket_whichever_token_they_send(tmp_path: Path, database_url: str) -> None:
    """A person signed in twice (two browsers: two ID tokens) takes from one bucket, so signing in again
    never multiplies what a person may send."""
    with (
        running_idp() as idp,
        running(
            tmp_path,
            database_url=database_url,
            oidc_issuer=idp.issuer,
            oidc_audience=CLIENT_ID,
            write_rate_per_s=SLOW,
            write_burst=2,
        ) as svc,
    ):
        # The owner's two writes in acme (its bucket is then empty): bob and carol join; the model is made
        # by another owner key.
        for member in ("bob", "carol"):
            url = f"/v1/namespaces/acme/people/{member}@example.com"
            check(svc.client.put(url, json={"role": "annotator"}, headers=svc.author), 200)
        owner = svc.key(["acme"], "authoring")
        make_model(svc.client, owner, "acme.people", with_data=False)
        traits = {"traits": [{"name": "Formality", "positive_label": "formal", "negative_label": "casual"}]}
        check(svc.client.post("/v1/models/acme.people/traits", json=traits, headers=owner), 201)
        idp.set_user("bob", email="bob@example.com", email_verified=True, name="Bob")
        first, second = auth(idp.id_token("bob")), auth(idp.id_token("bob"))
        note = {"trait": "formality", "text": "Dear Sir", "body": "formal"}
        for headers in (first, second):
            check(svc.client.post("/v1/models/acme.people/comments", json=note, headers=headers), 201)
        for headers in (first, second):
            refused = svc.client.post("/v1/models/acme.people/comments", json=note, headers=headers)
            assert error_code(refused, 429) == "rate_limited"
        # A colleague signed in the same way has a bucket of her own.
        idp.set_user("carol", email="carol@example.com", email_verified=True, name="Carol")
        carol = auth(idp.id_token("carol"))
        check(svc.client.post("/v1/models/acme.people/comments", json=note, headers=carol), 201)


def test_perspective_s_routes_take_from_the_scoring_bucket(limited: Svc) -> None:
    """Perspective's analyze and suggestscore count as scoring, refused in Google's error shape (beside
    another caller's scoring: a caller alone is never refused)."""
    c, key = limited.client, limited.author
    body = {"comment": {"text": "hello"}, "requestedAttributes": {"TOXICITY": {}}}
    with limited.app.state.share.admitted("key:a colleague", 1):
        for route in ("analyze", "analyze", "suggestscore"):
            resp = c.post(f"/v1alpha1/comments:{route}", json=body, headers=key)
            assert resp.status_code != 429, resp.text  # no model to score with yet: refused otherwise
        refused = c.post("/v1alpha1/comments:analyze", json=body, headers=key)
    assert refused.status_code == 429 and refused.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert refused.json()["error"]["details"][0]["reason"] == "rate_limited"
    assert int(refused.headers["Retry-After"]) >= 1


def test_batched_imports_at_client_speed_meet_no_429_while_one_row_writes_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the default limits, served on loopback: a client posting more batches in a row than the
    writes bucket holds gets every one stored (that bucket, 120 at once, used to refuse them); the same
    client sending one-row imports, or single labels, still meets 429. The buckets' clock stands still, so
    no token comes back while the test sends unless it moves the clock: the client is as fast as any (and
    the outcome does not hang on this machine's speed). SQLite only: the buckets' store is shared, and
    tested on both databases above."""
    now = [1e9]
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: now[0]))
    defaults = {
        "write_rate_per_s": DEFAULT_WRITE_RATE_PER_S,
        "import_rate_per_s": DEFAULT_IMPORT_RATE_PER_S,
        "score_rate_per_s": DEFAULT_SCORE_RATE_PER_S,
    }
    h = "acme.bulk"
    with (
        running(tmp_path, **defaults) as svc,
        loopback(svc) as base,
        httpx.Client(base_url=base, headers=svc.author, timeout=60, trust_env=False) as c,
    ):
        make_model(c, svc.author, h, with_data=False)
        check(c.post(f"/v1/models/{h}/traits", json={"traits": TRAITS}), 201)
        statuses: Counter[int] = Counter()
        batches = DEFAULT_WRITE_BURST + 1  # within the import bucket's burst
        assert batches <= DEFAULT_IMPORT_BURST
        for batch in range(batches):
            texts = [f"Bulk text {batch}-{i}" for i in range(SMALL_IMPORT_ROWS)]
            statuses[c.post(f"/v1/models/{h}/pool", json={"texts": texts}).status_code] += 1
        assert statuses == {201: batches}
        pool = check(c.get(f"/v1/models/{h}/pool", params={"limit": 500}), 200)
        assert pool["total"] == batches * SMALL_IMPORT_ROWS

        def flood(send: Callable[[int], httpx.Response]) -> Counter[int]:
            """Send until the first 429 (at most the writes bucket's burst three times)."""
            seen: Counter[int] = Counter()
            for i in range(3 * DEFAULT_WRITE_BURST):
                seen[(resp := send(i)).status_code] += 1
                if resp.status_code == 429:
                    assert error_code(resp, 429) == "rate_limited"
                    break
            return seen

        # One-row imports take write tokens: a flood of them is refused once the writes bucket is empty
        # (two seconds later: the import bucket is full again, the writes bucket was).
        now[0] += 2.0
        one = {"samples": [{"trait": "formality", "text": "Dear Sir", "quality": 1.0}]}
        sent = flood(lambda _: c.post(f"/v1/models/{h}/samples", json=one))
        assert sent[429] == 1 and set(sent) == {201, 429}
        # A flood of single labels is refused too (a minute later: the writes bucket is full again).
        now[0] += 60.0
        label = {"trait": "formality", "quality": 1.0}
        ids = [item["id"] for item in pool["items"]]
        sent = flood(lambda i: c.post(f"/v1/models/{h}/pool/{ids[i]}/label", json=label))
        assert sent[429] == 1 and set(sent) <= {201, 429}
