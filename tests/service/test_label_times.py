"""A vote's `created_at` is when it was given: through the feedback buffer, the retraining that folds it in,
the votes export and the Team page's pace (docs/engine-labels.md, "Votes")."""

from __future__ import annotations

import itertools
import statistics
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select, update

from service.store.api_keys import create_key
from service.store.db import transaction
from service.store.samples import fold_feedback
from service.store.schema import FeedbackLabel, Model, Run, SampleRow, Version
from tests.support.service import TRAITS, Svc, auth, check, make_model, train_ready, wait_settled

H = "acme.times"
M = f"/v1/models/{H}"


def test_buffered_labels_keep_when_they_were_given_through_the_retraining(svc: Svc) -> None:
    """Three labels of a trained model (the buffer retrains at 3): the first two given 100 s and 60 s ago.
    After the retraining folds them in, the export and the Team page read those times, not the
    retraining's (which gave every folded label one time, and the pace 0 s)."""
    c, h = svc.client, svc.author
    # The owner's choices: a team's model has automatic retraining off and review on by default.
    make_model(c, h, H, auto_retrain=True, review=False)
    train_ready(c, h, H)
    with transaction(svc.ctx.sessions) as s:
        alice = auth(create_key(s, ["acme"], "authoring", "alice", role="annotator"))
    texts = [f"A text to label, number {i}." for i in range(3)]
    ids = check(c.post(f"{M}/pool", json={"texts": texts}, headers=h), 201)["ids"]
    now = datetime.now(UTC)
    given = [now - timedelta(seconds=100), now - timedelta(seconds=60)]
    for pool_id, quality in zip(ids[:2], (1.0, 0.0), strict=True):
        out = check(c.post(f"{M}/pool/{pool_id}/label", json={"trait": "formality", "quality": quality},
                           headers=alice), 201)  # fmt: skip
        assert out["stored_as"] == "feedback"
    with transaction(svc.ctx.sessions) as s:  # as if given then, after the first version's training
        trained = now - timedelta(seconds=200)
        model_id = select(Model.id).where(Model.handle == H).scalar_subquery()
        s.execute(update(Run).where(Run.model_id == model_id).values(started_at=trained))
        s.execute(update(Version).values(created_at=trained))
        for when, text in zip(given, texts, strict=False):
            s.execute(update(FeedbackLabel).where(FeedbackLabel.text == text).values(created_at=when))
    body = {"trait": "formality", "quality": 1.0}
    last = check(c.post(f"{M}/pool/{ids[2]}/label", json=body, headers=alice), 201)
    assert last["retraining"] is True
    wait_settled(c, H, h)
    assert check(c.get(M, headers=h), 200)["version_no"] == 2

    votes = check(c.get(f"{M}/votes", params={"limit": 1000}, headers=h), 200)["items"]
    folded = {x["text"]: x for x in votes if x["kind"] == "sample" and x["provenance"] == "feedback"}
    assert sorted(folded) == texts
    times = [datetime.fromisoformat(folded[t]["created_at"]) for t in texts]
    assert times[:2] == given
    assert given[1] < times[2] <= datetime.now(UTC)
    assert {folded[t]["version_no"] for t in texts} == {2}  # the retraining that took them in

    progress = check(c.get(f"{M}/team", headers=h), 200)
    (alice,) = [p for p in progress["people"] if p["trait"] == "formality" and p["annotator"] == "alice"]
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    assert gaps[0] == 40.0 and gaps[1] > 0  # not 0: one retraining's time for all
    assert alice["median_seconds"] == statistics.median(gaps)


_counter = itertools.count()
_label = st.tuples(
    st.integers(0, 3),  # which text
    st.sampled_from([0.0, 0.25, 0.5, 1.0]),
    st.sampled_from(["alice", "bob"]),
    st.integers(1, 3_600),  # seconds after the label before it
)


def _order(row: tuple[str, float, str | None, Any]) -> tuple[str, float, str, str]:
    return row[0], row[1], row[2] or "", str(row[3])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_label, min_size=1, max_size=12))
def test_folding_the_buffer_keeps_each_label_s_time(
    svc: Svc, labels: list[tuple[int, float, str, int]]
) -> None:
    """Any buffer (repeats of one person's label included) folds into samples, one a label (a label keeps its
    id for life), each with the `created_at` it was given at."""
    handle = f"acme.fold{next(_counter)}"
    make_model(svc.client, svc.author, handle, with_data=False)
    check(svc.client.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}, headers=svc.author), 201)
    when = datetime(2026, 1, 1, tzinfo=UTC)
    given: list[tuple[str, float, str | None, datetime]] = []
    with transaction(svc.ctx.sessions) as s:
        model = s.scalar(select(Model).where(Model.handle == handle))
        assert model is not None
        rows = []
        for text_no, quality, who, after in labels:
            when += timedelta(seconds=after)
            text = f"Text {text_no}."
            given.append((text, quality, who, when))
            row = FeedbackLabel(model_id=model.id, trait_key="formality", text=text, quality=quality,
                                annotator=who, created_at=when)  # fmt: skip
            s.add(row)
            rows.append(row)
        s.flush()
        fold_feedback(s, model.id, rows)
        stored = [
            (r.text, r.quality, r.annotator, r.created_at)
            for r in s.scalars(select(SampleRow).where(SampleRow.model_id == model.id))
        ]
    assert sorted(stored, key=_order) == sorted(given, key=_order)
