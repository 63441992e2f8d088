"""Imports cost what the batch holds, not what the model holds: the SQL statements of a batch of
samples, pool texts, evaluation items or feedback are the same at 500 stored rows as at 5,000. And the
duplicate rules stay: a label stored once (same trait, text, quality), ids in input order."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event, func, select, text

from service.domain.training import _has_several_votes
from service.store.db import transaction
from service.store.schema import CONTENT_KEY_CHARS, Model, SampleRow, Trait, content_key, key_of
from tests.support.service import TRAITS, Svc, check, train_ready, wait_settled

BATCH = 500
EXTRA = {"name": "Length", "positive_label": "long", "negative_label": "short"}


@dataclass
class Cost:
    statements: list[str] = field(default_factory=list)  # the first word of each (an executemany counts once)
    steps: int = 0  # SQLite only: virtual machine instructions (they grow with the rows visited, not time)


STEP = 1  # SQLite counts toward the handler within one step of a statement: short statements never reach more


@contextmanager
def counted(svc: Svc) -> Iterator[Cost]:
    """The SQL statements the service sends while the block runs, and on SQLite the work they cost: its
    virtual machine instructions grow with the rows a statement visits, whatever the machine's speed."""
    cost = Cost()
    touched: list[Any] = []

    def step() -> int:
        cost.steps += 1
        return 0

    def record(conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        cost.statements.append(statement.split(None, 1)[0].upper())
        if conn.dialect.name == "sqlite":
            raw = conn.connection.driver_connection
            raw.set_progress_handler(step, STEP)
            touched.append(raw)

    event.listen(svc.ctx.engine, "before_cursor_execute", record)
    try:
        yield cost
    finally:
        event.remove(svc.ctx.engine, "before_cursor_execute", record)
        for raw in touched:
            raw.set_progress_handler(None, STEP)


def same_cost(small: Cost, large: Cost) -> None:
    """The same statements, and (SQLite) about the same work: an index seek costs the same instructions in a
    larger B-tree; a scan of the stored rows would cost ten times more at ten times the rows."""
    assert small.statements == large.statements
    assert large.steps <= 1.25 * small.steps + 100, (small.steps, large.steps)


def samples(start: int, n: int, trait: str = "formality") -> list[dict[str, Any]]:
    return [
        {"trait": trait, "text": f"Sample text number {i}.", "quality": float(i % 2)}
        for i in range(start, start + n)
    ]


def fill(post: Callable[[int, int], Any], total: int, step: int) -> None:
    for start in range(0, total, step):
        post(start, step)


def test_a_batch_of_samples_costs_the_same_statements_at_500_and_5000_stored(svc: Svc) -> None:
    c, h = svc.client, svc.author
    costs: dict[int, list[Cost]] = {}
    for handle, stored in (("acme.small", 500), ("acme.large", 5_000)):
        check(c.post("/v1/models", json={"handle": handle}, headers=h), 201)
        check(c.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}, headers=h), 201)
        url = f"/v1/models/{handle}/samples"

        def post(start: int, n: int, url: str = url) -> list[int]:
            return check(c.post(url, json={"samples": samples(start, n)}, headers=h), 201)["ids"]

        fill(post, stored, BATCH)
        with counted(svc) as new:
            ids = post(stored, BATCH)
        with counted(svc) as again:  # every one a duplicate
            assert post(stored, BATCH) == ids
        costs[stored] = [new, again]
        assert check(c.get(f"/v1/models/{handle}", headers=h), 200)["sample_count"] == stored + BATCH
    for small, large in zip(costs[500], costs[5_000], strict=True):
        same_cost(small, large)
    assert len(costs[500][0].statements) < 20, costs[500][0]  # a few per batch, not one or two per sample


def test_duplicates_in_a_batch_and_across_batches_are_stored_once(svc: Svc) -> None:
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": "acme.dup"}, headers=h), 201)
    check(c.post("/v1/models/acme.dup/traits", json={"traits": TRAITS}, headers=h), 201)
    url = "/v1/models/acme.dup/samples"
    first = [
        {"trait": "formality", "text": "Dear Sir.", "quality": 1.0},
        {"trait": "sentiment", "text": "Dear Sir.", "quality": 1.0},  # another trait: another sample
        {"trait": "formality", "text": "Dear Sir.", "quality": 0.8},  # another quality: another sample
        {"trait": "Formality", "text": "  Dear Sir.  ", "quality": 1.0, "source_url": "https://x.org/a"},
    ]
    ids = check(c.post(url, json={"samples": first}, headers=h), 201)["ids"]
    assert len(set(ids)) == 3 and ids[3] == ids[0]
    # A later batch: stored ones answer with their ids, a stored sample without a URL gets the one given now.
    second = [
        {"trait": "formality", "text": "yo", "quality": 0.0},
        {"trait": "sentiment", "text": "Dear Sir.", "quality": 1.0, "source_url": "https://x.org/b"},
        {"trait": "formality", "text": "Dear Sir.", "quality": 1.0, "source_url": "https://x.org/c"},
    ]
    again = check(c.post(url, json={"samples": second}, headers=h), 201)["ids"]
    assert again[1:] == [ids[1], ids[0]] and again[0] not in ids
    items = {s["id"]: s for s in check(c.get(url, headers=h), 200)["items"]}
    assert len(items) == 4
    assert items[ids[0]]["source_url"] == "https://x.org/a"  # the first URL it got stays
    assert items[ids[1]]["source_url"] == "https://x.org/b"
    assert items[ids[2]]["source_url"] is None


def test_pool_and_evaluation_batches_cost_the_same_statements_at_1000_and_5000_stored(idle_svc: Svc) -> None:
    """The models hold as many samples as pool texts and items: a pool batch reads whether its texts are
    labelled already, through the samples' index. Without a worker: it embeds a pool import's texts
    afterwards, and its reads would count here."""
    svc = idle_svc
    c, h = svc.client, svc.author
    pool_costs: list[list[Cost]] = []
    eval_costs: list[list[Cost]] = []
    for handle, stored in (("acme.p1", 1_000), ("acme.p5", 5_000)):
        check(c.post("/v1/models", json={"handle": handle}, headers=h), 201)
        check(c.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}, headers=h), 201)

        def pool(start: int, n: int, handle: str = handle) -> dict[str, Any]:
            texts = [f"Pool text number {i}." for i in range(start, start + n)]
            return check(c.post(f"/v1/models/{handle}/pool", json={"texts": texts}, headers=h), 201)

        def items(start: int, n: int, handle: str = handle) -> dict[str, Any]:
            url = f"/v1/models/{handle}/evaluation-set"
            return check(c.post(url, json={"items": samples(start, n)}, headers=h), 201)

        def labelled(start: int, n: int, handle: str = handle) -> dict[str, Any]:
            url = f"/v1/models/{handle}/samples"
            return check(c.post(url, json={"samples": samples(start, n)}, headers=h), 201)

        fill(labelled, stored, BATCH)
        fill(pool, stored, 1_000)
        fill(items, stored, BATCH)
        with counted(svc) as pool_new:
            added = pool(stored, 1_000)
        assert added["added"] == 1_000 and len(set(added["ids"])) == 1_000
        with counted(svc) as pool_again:
            again = pool(stored, 1_000)
        assert again == {
            "ids": added["ids"],
            "added": 0,
            "in_evaluation_set": 0,
            "duplicates": list(range(1_000)),
            "labelled": 0,
        }
        with counted(svc) as eval_new:
            new = items(stored, BATCH)
            assert new == {
                "added": BATCH,
                "total": stored + BATCH,
                "duplicates": [],
                "gold_texts": [],
                "in_pool": 0,
                "in_samples": 0,
            }
        with counted(svc) as eval_again:
            again = items(stored, BATCH)
        assert again == {
            "added": 0,
            "total": stored + BATCH,
            "duplicates": list(range(BATCH)),
            "gold_texts": [],
            "in_pool": 0,
            "in_samples": 0,
        }
        pool_costs.append([pool_new, pool_again])
        eval_costs.append([eval_new, eval_again])
    for small, large in [*zip(*pool_costs, strict=True), *zip(*eval_costs, strict=True)]:
        same_cost(small, large)


def test_a_feedback_label_costs_the_same_statements_with_few_or_many_buffered(svc: Svc) -> None:
    """A reopened draft keeps buffering feedback (no retraining starts): the 6th and the 300th label cost the
    same (the buffer is counted up to its size only)."""
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": "acme.fb"}, headers=h), 201)
    check(c.post("/v1/models/acme.fb/traits", json={"traits": TRAITS}, headers=h), 201)
    check(c.post("/v1/models/acme.fb/samples", json={"samples": samples(0, 40)}, headers=h), 201)
    check(c.post("/v1/models/acme.fb/samples", json={"samples": samples(0, 40, "sentiment")}, headers=h), 201)
    train_ready(c, h, "acme.fb")
    check(c.post("/v1/models/acme.fb/reopen", headers=h), 200)

    def feedback(i: int) -> None:
        body = {"content": f"Scored text {i}.", "feedback": [{"trait": "formality", "quality": 1.0}]}
        out = check(c.post("/v1/models/acme.fb/score", json=body, headers=h), 200)
        assert out["feedback_buffered"] == 1

    costs: list[Cost] = []
    for i in range(300):
        if i in (5, 299):
            with counted(svc) as seen:
                feedback(i)
            costs.append(seen)
        else:
            feedback(i)
    same_cost(*costs)
    model = check(c.get("/v1/models/acme.fb", headers=h), 200)
    assert (model["state"], model["buffered_feedback"]) == ("draft", 300)


Counts = tuple[int, int, int]  # samples, positive samples, neutral samples (quality 0.5: on neither pole)


def stored_counts(svc: Svc, handle: str) -> dict[str, Counts]:
    """{trait key: (samples, positive, neutral)} counted in the database."""
    with transaction(svc.ctx.reads) as s:
        model_id = s.scalar(select(Model.id).where(Model.handle == handle))
        rows = s.execute(
            select(
                Trait.key,
                func.count(SampleRow.id),
                func.count(SampleRow.id).filter(SampleRow.quality > 0.5),
                func.count(SampleRow.id).filter(SampleRow.quality == 0.5),
            )
            .outerjoin(SampleRow, SampleRow.trait_id == Trait.id)
            .where(Trait.model_id == model_id)
            .group_by(Trait.key)
        ).all()
    return {key: (n, positive, neutral) for key, n, positive, neutral in rows}


def shown_counts(svc: Svc, handle: str) -> dict[str, Counts]:
    """What GET …/traits and GET …/{handle} say (kept counts, not counted on read)."""
    c, h = svc.client, svc.author
    traits = check(c.get(f"/v1/models/{handle}/traits", headers=h), 200)["traits"]
    shown = {t["key"]: (t["sample_count"], t["positive_samples"], t["neutral_samples"]) for t in traits}
    for t in traits:
        assert t["negative_samples"] == t["sample_count"] - t["positive_samples"] - t["neutral_samples"]
    total = check(c.get(f"/v1/models/{handle}", headers=h), 200)["sample_count"]
    assert total == sum(n for n, _, _ in shown.values())
    return shown


def test_the_kept_counts_follow_every_change_of_the_samples(svc: Svc) -> None:
    c, h = svc.client, svc.author
    handle = "acme.counts"

    def same() -> dict[str, Counts]:
        shown = shown_counts(svc, handle)
        assert shown == stored_counts(svc, handle)
        return shown

    check(c.post("/v1/models", json={"handle": handle}, headers=h), 201)
    check(c.post(f"/v1/models/{handle}/traits", json={"traits": [*TRAITS, EXTRA]}, headers=h), 201)
    assert same() == {"formality": (0, 0, 0), "sentiment": (0, 0, 0), "length": (0, 0, 0)}
    url = f"/v1/models/{handle}/samples"
    batch = samples(0, 40) + samples(0, 40, "sentiment") + samples(0, 10, "length")
    ids = check(c.post(url, json={"samples": batch + batch[:5]}, headers=h), 201)["ids"]  # duplicates too
    assert same() == {"formality": (40, 20, 0), "sentiment": (40, 20, 0), "length": (10, 5, 0)}
    check(c.post(url, json={"samples": batch}, headers=h), 201)  # all stored already
    same()
    check(c.patch(f"{url}/{ids[0]}", json={"quality": 1.0}, headers=h), 200)  # to the other pole
    check(c.patch(f"{url}/{ids[1]}", json={"trait": "sentiment"}, headers=h), 200)  # to another trait
    check(c.patch(f"{url}/{ids[2]}", json={"text": batch[4]["text"]}, headers=h), 200)  # merged into #4
    check(c.delete(f"{url}/{ids[3]}", headers=h), 200)
    check(c.patch(f"{url}/{ids[5]}", json={"quality": 0.5}, headers=h), 200)  # to neither pole
    assert same() == {"formality": (37, 18, 1), "sentiment": (40, 20, 0), "length": (10, 5, 0)}
    check(c.delete(f"/v1/models/{handle}/traits/length", headers=h), 200)
    same()
    train_ready(c, h, handle)
    # The buffer (3 here) retrains, and the feedback becomes samples.
    for i, quality in enumerate((1.0, 1.0, 0.5)):
        body = {"content": f"Feedback text {i}.", "feedback": [{"trait": "formality", "quality": quality}]}
        check(c.post(f"/v1/models/{handle}/score", json=body, headers=h), 200)
    model = wait_settled(c, handle, h)
    assert model["version_no"] == 2 and same()["formality"] == (40, 20, 2)
    check(c.patch(f"/v1/models/{handle}", json={"zero_data_retention": True}, headers=h), 200)
    # Zero-data-retention purged the samples.
    assert same() == {"formality": (0, 0, 0), "sentiment": (0, 0, 0)}


def test_texts_that_share_a_content_key_stay_apart(svc: Svc) -> None:
    """The duplicate checks find a text's rows by the first 64 bits of its hash: a stored row of another text
    with the same key (forged here; about once in 10^7 million-sample traits in life) is neither a duplicate
    of it nor a vote on it."""
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": "acme.twins"}, headers=h), 201)
    check(c.post("/v1/models/acme.twins/traits", json={"traits": TRAITS}, headers=h), 201)
    url = "/v1/models/acme.twins/samples"
    label = {"trait": "formality", "text": "Dear Sir.", "quality": 1.0}
    (first,) = check(c.post(url, json={"samples": [label]}, headers=h), 201)["ids"]
    with transaction(svc.ctx.sessions) as s:
        row = s.get(SampleRow, first)
        assert row is not None
        twin = SampleRow(
            model_id=row.model_id,
            trait_id=row.trait_id,
            text="A forged twin.",
            quality=1.0,
            content_sha256=key_of(row.content_sha256) + "0" * (64 - CONTENT_KEY_CHARS),
        )
        s.add(twin)
        s.flush()
        twin_id, model_id, trait_id = twin.id, row.model_id, row.trait_id
        assert twin.content_sha256 != row.content_sha256
    assert check(c.post(url, json={"samples": [label]}, headers=h), 201)["ids"] == [first]
    with transaction(svc.ctx.reads) as s:
        assert not _has_several_votes(s, model_id, trait_id)  # two texts, one vote each
    vote = label | {"annotator": "rater-7"}
    (second,) = check(c.post(url, json={"samples": [vote]}, headers=h), 201)["ids"]
    assert second not in (first, twin_id)
    with transaction(svc.ctx.reads) as s:
        assert _has_several_votes(s, model_id, trait_id)  # "Dear Sir." has two votes now


def test_a_big_trait_is_read_by_its_keys_from_the_first_minute(svc: Svc) -> None:
    """A trait of 10,000 samples: SQLite seeks a batch's keys in the content-key index; PostgreSQL has
    statistics at once, also in a database too new for autovacuum to have gathered any (without them its
    planner took the trait for one row and filtered all of it, 176 ms a batch at 100,000)."""
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": "acme.big"}, headers=h), 201)
    check(c.post("/v1/models/acme.big/traits", json={"traits": TRAITS}, headers=h), 201)
    url = "/v1/models/acme.big/samples"
    fill(
        lambda start, n: check(c.post(url, json={"samples": samples(start, n)}, headers=h), 201),
        10_000,
        BATCH,
    )
    with transaction(svc.ctx.reads) as s:
        model_id, trait_id = s.execute(
            select(SampleRow.model_id, SampleRow.trait_id).order_by(SampleRow.id.desc()).limit(1)
        ).one()
        keys = [key_of(k) for k in s.scalars(select(SampleRow.content_sha256).limit(BATCH))]
        lookup = select(SampleRow.id).where(
            SampleRow.model_id == model_id,
            SampleRow.trait_id == trait_id,
            content_key(SampleRow.content_sha256).in_(keys),
        )
        sql = str(lookup.compile(s.get_bind(), compile_kwargs={"literal_binds": True}))
        if s.get_bind().dialect.name == "sqlite":
            plan = " ".join(str(row[-1]) for row in s.execute(text(f"EXPLAIN QUERY PLAN {sql}")))
            assert "ix_samples_model_trait_key" in plan, plan
        else:  # the planner knows what a batch finds (500 rows; it said 1 before), so its plan scales
            top = s.execute(text(f"EXPLAIN {sql}")).scalars().first() or ""
            assert int(re.findall(r"rows=(\d+)", top)[0]) >= BATCH / 2, top
