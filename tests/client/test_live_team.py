"""A team through the client against the real service: named keys, votes, agreement, overlap, the ceiling."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from core.client import Agreement, Client, ConflictError, PermissionDeniedError, ValidationError
from harness.texts import WORDS
from service.store.api_keys import create_key
from service.store.db import transaction
from tests.support.client import NAMESPACE, NEGATIVE, POSITIVE, Service, make_draft

TEXTS = POSITIVE + NEGATIVE
# Evaluation texts the draft's samples do not hold: an evaluation leaves out what its version trained on.
HELD_OUT = [f"Quoted again: {t}" for t in TEXTS]
RATERS = {
    "ann": [1.0, 1.0, 0.8, 1.0, 0.3, 1.0, 0.0, 0.2, 0.0, 0.0, 0.6, 0.0],
    "ben": [0.9, 0.6, 1.0, 1.0, 1.0, 0.7, 0.1, 0.0, 0.5, 0.0, 0.0, 0.2],
    "cat": [1.0, 1.0, 1.0, 0.2, 0.9, 1.0, 0.0, 0.0, 0.0, 0.8, 0.1, 0.0],
}


def named_client(service: Service, name: str) -> Client:
    with transaction(service.ctx.sessions) as s:
        key = create_key(s, [NAMESPACE], "authoring", name)
    return service.client(key)


def test_three_named_keys_label_one_model_and_agree_as_the_package_says(service: Service) -> None:
    clients = {name: named_client(service, f"{name}-{service.handle('k').split('-')[-1]}") for name in RATERS}
    first = next(iter(clients.values()))
    handle = make_draft(first, service.handle("team"), samples=False)
    names: dict[str, str] = {}
    for name, c in clients.items():
        key_name = c.current_key().name
        assert key_name is not None and key_name.startswith(name)
        names[name] = key_name
        rows = [
            {"trait": "formality", "text": t, "quality": q} for t, q in zip(TEXTS, RATERS[name], strict=True)
        ]
        assert len(c.add_samples(handle, rows)) == 12
    stored = list(first.list_samples(handle))
    assert {s.annotator for s in stored} == set(names.values()) and not any(s.adjudicated for s in stored)

    got = first.agreement(handle)
    assert isinstance(got, Agreement) and got.stored_at is None
    trait = got.traits["formality"]
    matrix = np.array([RATERS[n] for n in sorted(RATERS, key=lambda n: names[n])])
    want = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
    assert trait.krippendorff_alpha_interval == pytest.approx(want, abs=1e-6)
    nominal = krippendorff.alpha(
        reliability_data=np.sign(matrix - 0.5),
        level_of_measurement="nominal",  # ben's 0.5: neutral
    )
    assert trait.krippendorff_alpha_nominal == pytest.approx(nominal, abs=1e-6)
    assert [a.annotator for a in trait.annotators] == sorted(names.values())
    assert len(trait.pairwise) == 3 and all(p.texts == 12 for p in trait.pairwise)
    assert trait.disagreed and trait.disagreed[0].votes[0].sample_id is not None

    # A reviewer settles the most disagreed text: their vote decides, the votes stay.
    worst = trait.disagreed[0]
    first.add_samples(
        handle, [{"trait": "formality", "text": worst.text, "quality": 1.0, "adjudicated": True}]
    )
    again = first.agreement(handle, trait="formality", limit=100).traits["formality"]
    settled = next(d for d in again.disagreed if d.text == worst.text)
    assert settled.adjudicated and not settled.contested and settled.quality == 1.0
    assert again.krippendorff_alpha_interval == trait.krippendorff_alpha_interval  # adjudication not counted

    # Overlap: another key is routed to texts its colleagues labelled.
    first.add_pool_texts(handle, [*TEXTS, *(f"an unlabelled note number {i}" for i in range(30))])
    with named_client(service, f"dan-{service.handle('k').split('-')[-1]}") as dan:
        picks = dan.suggest(handle, "formality", k=10, overlap=0.5)
        assert sum(s.overlap for s in picks.items) == 5
        assert {s.text for s in picks.items if s.overlap} <= set(TEXTS)
        assert first.update_model(handle, overlap=0.3).overlap == 0.3  # the owner's campaign setting
        campaign = dan.suggest(handle, "formality", k=10)  # no overlap of its own: the model's
        assert sum(s.overlap for s in campaign.items) == 3 and dan.get_model(handle).overlap == 0.3
        with pytest.raises(ValidationError):
            dan.suggest(handle, "formality", overlap=0.8)
        with pytest.raises(ValidationError) as refused:  # posting as a colleague
            dan.add_samples(
                handle, [{"trait": "formality", "text": "Hi.", "quality": 0.0, "annotator": names["ann"]}]
            )
        assert refused.value.code == "annotator_reserved"

    first.train(handle, effort="low")
    first.wait(handle)
    version = first.get_version(handle, 1)
    assert version.trait_metrics["formality"]["texts"] == 12
    # The reviewer had voted on the text they settled: their latest vote (the adjudication) replaces it.
    assert version.trait_metrics["formality"]["votes"] == 12 * 3
    assert version.sample_count == 12 * 3 + 1
    with pytest.raises(ConflictError):  # settling is a sample edit: drafts only
        first.add_samples(
            handle, [{"trait": "formality", "text": TEXTS[0], "quality": 0.0, "adjudicated": True}]
        )
    for c in clients.values():
        c.close()


def test_external_raters_votes_and_the_human_ceiling(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("ceiling"))
    client.train(handle, effort="low")
    client.wait(handle)
    rows = [
        {"trait": "formality", "text": t, "quality": q, "annotator": f"turk-{name}"}
        for name, qualities in RATERS.items()
        for t, q in zip(HELD_OUT, qualities, strict=True)
    ]
    added = client.add_evaluation_items(handle, rows)
    assert added.added == 36
    client.evaluate(handle, 1)
    client.wait(handle)
    trait = client.get_evaluation(handle, 1).traits["formality"]
    assert trait.items == 12 and trait.votes == 36
    assert trait.human_ceiling is not None and trait.human_ceiling.annotators == 3
    assert trait.human_ceiling.pairs == 36 and trait.model_agreement is not None
    assert trait.share_of_ceiling is not None
    assert trait.share_of_ceiling.value == pytest.approx(
        trait.model_agreement.value / trait.human_ceiling.value, abs=1e-4
    )
    compared = client.compare_evaluations(handle, 1, 1).traits["formality"]
    assert compared.share_of_ceiling_a == compared.share_of_ceiling_b == trait.share_of_ceiling


def test_sample_input_checks_the_annotator_before_sending(client: Client, service: Service) -> None:
    from core.client import SampleInput

    # A CSV's id column arrives as numbers; the model's validator takes them (hence the ignores).
    assert SampleInput(trait="t", text="x", quality=1, annotator=17.0).annotator == "17"  # type: ignore[arg-type]
    assert SampleInput(trait="t", text="x", quality=1, annotator=float("nan")).annotator is None  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="annotator"):
        SampleInput(trait="t", text="x", quality=1, annotator="two words")


def test_roles_through_the_client_settle_once_audit_and_imported_rows(service: Service) -> None:
    n = service.handle("k").split("-")[-1]
    with transaction(service.ctx.sessions) as s:
        keys = {r: create_key(s, [NAMESPACE], "authoring", f"{r}-{n}", r) for r in ("annotator", "reviewer")}
    ann, rev, owner = service.client(keys["annotator"]), service.client(keys["reviewer"]), service.client()
    assert ann.current_key().role == "annotator" and ann.current_key().may("label")
    assert not ann.current_key().may("review") and rev.current_key().may("review")
    handle = make_draft(owner, service.handle("roles"), samples=False)
    rows = [{"trait": "formality", "text": t, "quality": float(i < 6)} for i, t in enumerate(TEXTS)]
    report = owner.import_samples(handle, rows, provenance="imported")
    assert report.stored == 12 and not report.errors
    stored = list(owner.list_samples(handle, provenance="imported"))
    assert len(stored) == 12 and {s.annotator for s in stored} == {None}  # nobody's votes
    ann.add_samples(handle, [{"trait": "formality", "text": TEXTS[0], "quality": 0.0}])
    with pytest.raises(PermissionDeniedError):
        ann.import_samples(handle, rows[:1], provenance="imported")
    rev.add_samples(handle, [{"trait": "formality", "text": TEXTS[0], "quality": 1.0, "adjudicated": True}])
    with pytest.raises(ConflictError) as refused:
        owner.add_samples(
            handle, [{"trait": "formality", "text": TEXTS[0], "quality": 0.0, "adjudicated": True}]
        )
    assert refused.value.code == "already_settled" and f"by reviewer-{n}" in refused.value.message
    events = list(owner.audit(NAMESPACE, page_size=1))
    owner_name = owner.current_key().name
    mine = [e for e in events if e.handle == handle and e.kind in ("settled", "samples_imported")]
    assert [(e.kind, e.actor) for e in mine] == [
        ("settled", f"reviewer-{n}"),
        ("samples_imported", owner_name),
    ]
    assert mine[0].detail["trait"] == "formality" and mine[1].detail["rows"] == 12
    denied = [e for e in events if e.kind == "access_refused" and e.actor == f"annotator-{n}"]
    assert len(denied) == 1 and "owner role" in denied[0].detail["reason"]  # ann's import
    with pytest.raises(PermissionDeniedError):
        rev.audit_page(NAMESPACE)


def test_claims_labels_and_the_campaign_settings_through_the_client(service: Service) -> None:
    suffix = service.handle("k").split("-")[-1]
    ann, ben = named_client(service, f"ann-c{suffix}"), named_client(service, f"ben-c{suffix}")
    owner = service.client()
    handle = make_draft(owner, service.handle("campaign"))
    words = WORDS[:14]
    pool = [f"{words[i]} {words[(i * 5 + 3) % 14]} {words[(i * 3 + 7) % 14]} campaign" for i in range(12)]
    ids = owner.add_pool_texts(handle, pool)
    mine = ann.suggest(handle, "formality", k=4, claim=True)
    theirs = ben.suggest(handle, "formality", k=20, claim=True)
    assert len(mine.items) == 4 and all(i.claimed_until is not None for i in mine.items)
    assert not {i.id for i in mine.items} & {i.id for i in theirs.items}
    skipped = mine.items[0].id
    released = ann.release_claim(handle, skipped, "formality")
    assert (released.id, released.trait, released.released) == (skipped, "formality", 1)
    assert ann.release_claim(handle, skipped).released == 0
    got = ann.label_pool_text(handle, mine.items[1].id, "formality", 1.0)
    assert (got.stored_as, got.buffered, got.version_no, got.votes) == ("sample", False, 1, 1)
    assert ann.label_pool_text(handle, mine.items[1].id, "formality", 1.0).id == got.id  # a repeat
    with pytest.raises(ValidationError):
        ann.label_pool_text(handle, ids[0], "formality", 2.0)
    model = owner.update_model(handle, votes_wanted=3, auto_retrain=False)
    assert (model.votes_wanted, model.auto_retrain) == (3, False)
    assert owner.get_model(handle).votes_wanted == 3
