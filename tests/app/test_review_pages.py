"""The Team page's review with AppTest against the real local service: a reviewer corrects an annotator's
label, is told so, and reads the text's history in plain words (who voted, who corrected it, from what to
what); the service trains the corrected quality. And the history's wording alone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.ui.text_history import history_lines
from core.client import Client
from core.client.team import Correction, TextHistory, VoteRecord
from core.local import LocalService
from tests.support.app import CASUAL, FORMALITY, named_key, new_handle, new_key_name
from tests.support.apptest import no_exception, page, shown

WRONG = CASUAL[0]


def _as(monkeypatch: pytest.MonkeyPatch, local_service: LocalService, key: str) -> None:
    monkeypatch.setenv("SCORING_API_URL", local_service.url)
    monkeypatch.setenv("SCORING_API_KEY", key)
    monkeypatch.setenv("SCORING_NAMESPACE", local_service.namespace)
    monkeypatch.setenv("SCORING_EMBEDDER", "hashing")


def _team_keys(local_service: LocalService) -> dict[str, str]:
    """A key of its own for an owner, an annotator and a reviewer of the service's namespace, by role."""
    return {
        role: named_key(local_service.data_dir, local_service.namespace, new_key_name(role[:3]), role=role)
        for role in ("owner", "annotator", "reviewer")
    }


def _vote(**fields: object) -> VoteRecord:
    """A vote of the one text, given at 22:40."""
    at = datetime(2026, 11, 28, 22, 40, tzinfo=UTC)
    return VoteRecord.model_validate({"trait": "formality", "text": WRONG, "created_at": at, **fields})


def test_the_history_says_who_did_what_and_when_in_plain_words() -> None:
    later = datetime(2026, 11, 28, 23, 5, tzinfo=UTC)
    history = TextHistory(
        handle="acme.x",
        trait="formality",
        text=WRONG,
        items=[
            _vote(kind="sample", id=7, annotator="ann", quality=0.0),
            _vote(kind="unsure", id=2, annotator="bob", unsure=True),
            _vote(kind="sample", id=9, annotator="rita", quality=0.0, adjudicated=True),
        ],
        corrections=[
            Correction(
                id=7,
                annotator="ann",
                before=1.0,
                after=0.0,
                corrected_by="rita",
                created_at=later,
                comment="casual",
            ),
        ],  # fmt: skip
    )
    assert history_lines(history) == [
        "2026-11-28 22:40 UTC: ann voted 1.00",  # what she gave: the service answers the corrected 0
        "2026-11-28 22:40 UTC: bob marked it unsure",
        "2026-11-28 22:40 UTC: rita settled it at 0.00",
        "2026-11-28 23:05 UTC: rita corrected ann's label from 1.00 to 0.00: “casual”",
    ]


def test_a_reviewer_corrects_a_label_on_the_team_page_and_reads_its_history(
    local_service: LocalService, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = _team_keys(local_service)
    handle = new_handle(local_service, "fix")
    with Client(local_service.url, keys["owner"]) as owner:
        owner.create_model(handle)
        owner.add_traits(handle, [FORMALITY])
    with Client(local_service.url, keys["annotator"]) as ann:
        ann_name = ann.current_key().name
        ann.add_samples(handle, [{"trait": "formality", "text": WRONG, "quality": 1.0}])
    with Client(local_service.url, keys["reviewer"]) as rev:
        rev_name = rev.current_key().name
        [label] = list(rev.list_review(handle))

    _as(monkeypatch, local_service, keys["reviewer"])
    team = page("team", handle)
    team.run()
    no_exception(team)
    assert team.selectbox(key="review_fix_pick").value == f"sample:{label.id:d}"
    # The picked label's history before any correction: its vote alone.
    assert f"{ann_name} voted 1.00" in " ".join(shown(team.markdown))
    team.slider(key=f"review_fix_pick_sample:{label.id:d}").set_value(0.0)
    team.text_input(key="review_fix_comment").input("casual: see the guidelines")
    team.button(key="review_fix").click().run()
    no_exception(team)
    assert f"Corrected {ann_name}'s label: 1.00 → 0.00" in " ".join(shown(team.success))
    history = " ".join(shown(team.markdown))
    assert f"{ann_name} voted 1.00" in history  # what she gave; the next line what it became
    assert (
        f"{rev_name} corrected {ann_name}'s label from 1.00 to 0.00: “casual: see the guidelines”" in history
    )
    assert "No label waits for review." in " ".join(shown(team.caption))

    with Client(local_service.url, keys["owner"]) as owner:
        [vote] = [v for v in owner.votes(handle) if v.text == WRONG]
        assert (vote.id, vote.quality, vote.annotator) == (label.id, 0.0, ann_name)
        [item] = list(owner.list_review(handle, "accepted"))
        assert (item.original_quality, item.corrected_by, item.status) == (1.0, rev_name, "accepted")


def test_a_contested_texts_card_shows_its_history_when_asked(
    local_service: LocalService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Samples page's disagreement cards read a text's history only once its toggle is on: a page of
    twenty cards reads no history it does not show."""
    keys = _team_keys(local_service)
    handle = new_handle(local_service, "hist")
    with Client(local_service.url, keys["owner"]) as owner:
        owner.create_model(handle)
        owner.update_model(handle, review=False)  # votes count as given: the text is contested at once
        owner.add_traits(handle, [FORMALITY])
        owner.add_samples(handle, [{"trait": "formality", "text": WRONG, "quality": 1.0}])
    with Client(local_service.url, keys["annotator"]) as ann:
        ann_name = ann.current_key().name
        ann.add_samples(handle, [{"trait": "formality", "text": WRONG, "quality": 0.0}])
    with Client(local_service.url, keys["reviewer"]) as rev:
        rev_name = rev.current_key().name
        rev.settle(handle, "formality", WRONG, 0.0)
        [first] = [v.id for v in rev.votes(handle) if v.text == WRONG][:1]

    _as(monkeypatch, local_service, keys["reviewer"])
    at = page("samples", handle)
    at.run()
    no_exception(at)
    assert "settled it at" not in " ".join(shown(at.markdown))
    at.toggle(key=f"disagree_history_{first:d}").set_value(True).run()
    no_exception(at)
    said = " ".join(shown(at.markdown))
    assert f"{ann_name} voted 0.00" in said and f"{rev_name} settled it at 0.00" in said, said
