"""Traits and samples against the real service, including bulk import and sample paging."""

from __future__ import annotations

import pydantic
import pytest

from core.client import Client, ConflictError, Sample, SampleInput, TraitInput, ValidationError
from core.contract import MAX_SOURCE_ID_CHARS
from tests.support.client import Service, formality_rows, make_draft


def test_trait_lifecycle(client: Client, service: Service) -> None:
    handle = service.handle("traits")
    client.create_model(handle)
    added = client.add_traits(
        handle,
        [
            TraitInput(name="Formality", positive_label="formal", negative_label="casual"),
            {"name": "Formality!", "positive_label": "a", "negative_label": "b", "aggregation": "max"},
        ],
    )
    assert [t.key for t in added][-2:] == ["formality", "formality_2"]
    assert added[-1].aggregation == "max" and added[-1].kind == "extrinsic"

    renamed = client.update_trait(handle, "formality", name="Register", description="how formal")
    by_key = {t.key: t for t in renamed}
    assert by_key["formality"].name == "Register" and by_key["formality"].description == "how formal"

    assert client.delete_trait(handle, "formality_2").deleted is True
    assert [t.key for t in client.list_traits(handle)] == ["formality"]
    assert client.get_model(handle).traits == ["Register"]


def test_bad_trait_input_fails_before_sending(client: Client, service: Service) -> None:
    handle = service.handle("badtrait")
    client.create_model(handle)
    with pytest.raises(pydantic.ValidationError):
        client.add_traits(handle, [{"name": "X", "positive_label": "a", "negative_label": "b", "kind": "x"}])
    assert client.list_traits(handle) == []


def test_add_samples_dedupes_and_limits(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("samples"), samples=False)
    ids = client.add_samples(handle, [SampleInput(trait="formality", text="Dear Sir", quality=1.0)])
    again = client.add_samples(handle, [{"trait": "Formality", "text": "  Dear Sir  ", "quality": 1}])
    assert len(ids) == 1 and again == ids  # identical sample: the stored id, nothing new
    with pytest.raises(ValueError, match="1 to 500"):
        client.add_samples(handle, [])
    with pytest.raises(ValueError, match="1 to 500"):
        client.add_samples(handle, [{"trait": "formality", "text": "t", "quality": 1}] * 501)


def test_list_samples_pages_and_filters(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("listing"), samples=False)
    client.add_traits(handle, [{"name": "Warmth", "positive_label": "warm", "negative_label": "cold"}])
    rows = [{"trait": "formality", "text": f"formal text {i}", "quality": i % 2} for i in range(23)]
    rows += [{"trait": "warmth", "text": f"warm text {i}", "quality": 0.5} for i in range(4)]
    stored = client.add_samples(handle, rows)

    everything = list(client.list_samples(handle, page_size=10))
    assert [s.id for s in everything] == sorted(stored)  # id order, all three pages
    assert all(isinstance(s, Sample) and s.provenance == "authored" and s.content_sha256 for s in everything)

    page = client.list_samples_page(handle, limit=10)
    assert len(page.items) == 10 and page.next_cursor
    assert {s.trait for s in client.list_samples(handle, trait="warmth", page_size=3)} == {"warmth"}
    assert len(list(client.list_samples(handle, trait="warmth", page_size=3))) == 4
    assert list(client.list_samples(handle, provenance="synthesized")) == []


def test_import_reports_local_and_server_rejections(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("import"), samples=False)
    rows = formality_rows()
    rows.insert(2, {"trait": "formality", "text": "", "quality": 1.0})  # empty text: caught here
    rows.insert(5, {"trait": "formality", "text": "x", "quality": float("nan")})  # NaN: caught here
    rows.append({"trait": "no-such-trait", "text": "orphan", "quality": 1.0})  # only the server knows
    calls: list[tuple[int, int]] = []

    report = client.import_samples(
        handle, rows, batch_size=5, progress=lambda d, t: calls.append((d, t)), strict=False
    )

    assert report.total == len(rows) == 15
    assert [e.index for e in report.invalid] == [2, 5]
    assert [e.index for e in report.rejected] == [14]
    assert report.rejected[0].row["trait"] == "no-such-trait"
    assert report.stored == 12 and len(set(report.ids)) == 12 and not report.ok
    assert calls[0] == (2, 15) and calls[-1] == (15, 15)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(list(client.list_samples(handle))) == 12

    again = client.import_samples(handle, formality_rows())  # re-importing is harmless
    assert again.ok and sorted(again.ids) == sorted(report.ids)


def test_import_keeps_each_row_s_source_id(client: Client, service: Service) -> None:
    """The id of a row in its file comes back on the listed sample: a number as its text (an id column with
    gaps reads as floats), a blank cell as none; one too long is refused here, before anything is sent."""
    handle = make_draft(client, service.handle("source-ids"), samples=False)
    rows = formality_rows()[:4]
    given: list[object] = [17.0, " a-1 ", float("nan"), "x" * (MAX_SOURCE_ID_CHARS + 1)]
    given_rows = [{**r, "source_id": i} for r, i in zip(rows, given, strict=True)]
    report = client.import_samples(handle, given_rows, strict=False)
    assert [e.index for e in report.invalid] == [3] and "source_id" in report.invalid[0].message
    listed = {s.text: s.source_id for s in client.list_samples(handle)}
    assert listed == {rows[0]["text"]: "17", rows[1]["text"]: "a-1", rows[2]["text"]: None}
    assert (
        SampleInput.model_validate({"trait": "t", "text": "x", "quality": 1, "source_id": 7}).source_id == "7"
    )


def test_import_many_rows_in_batches(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("bulk"), samples=False)
    rows = ({"trait": "formality", "text": f"sample number {i}", "quality": (i % 5) / 4} for i in range(1203))
    report = client.import_samples(handle, rows)  # a generator, 3 batches of up to 500
    assert report.ok and report.stored == 1203 and report.batches == 3
    assert client.get_model(handle).sample_count == 1203


def test_import_raises_what_is_not_about_rows(idle_service: Service) -> None:
    with idle_service.client() as idle:
        handle = make_draft(idle, idle_service.handle("busyimport"))
        idle.train(handle)  # no worker: stays busy
        new = {"trait": "formality", "text": "Kind regards, the team.", "quality": 1.0}
        with pytest.raises(ConflictError) as err:  # a new row: stored rows alone would be duplicates
            idle.import_samples(handle, [*formality_rows(), new])
        assert err.value.code == "model_busy" and err.value.retryable


def test_server_rejects_bad_samples_in_add_samples(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("reject"), samples=False)
    with pytest.raises(ValidationError) as err:
        client.add_samples(handle, [{"trait": "unknown", "text": "hello", "quality": 1.0}])
    assert err.value.status == 422 and err.value.request_id


def test_update_and_delete_samples(client: Client, service: Service) -> None:
    from core.client import NotFoundError, PermissionDeniedError

    handle = make_draft(client, service.handle("edits"))
    first, second = list(client.list_samples(handle))[:2]
    fixed = client.update_sample(handle, first.id, quality=0.0)
    assert fixed.id == first.id and fixed.quality == 0.0 and fixed.text == first.text
    merged = client.update_sample(handle, second.id, text=first.text, quality=0.0)
    assert merged.id == first.id  # identical to a stored sample: only that one is kept
    assert client.delete_sample(handle, first.id).model_dump(include={"id", "deleted"}) == {
        "id": first.id,
        "deleted": True,
    }
    left = {s.id for s in client.list_samples(handle)}
    assert first.id not in left and second.id not in left
    with pytest.raises(NotFoundError) as missing:
        client.delete_sample(handle, first.id)
    assert missing.value.code == "sample_not_found"
    third = sorted(left)[0]
    with service.client("scorer") as scorer, pytest.raises(PermissionDeniedError):
        scorer.update_sample(handle, third, quality=0.5)
    client.train(handle, effort="low")
    client.wait(handle)
    with pytest.raises(ConflictError) as frozen:
        client.delete_sample(handle, third)
    assert frozen.value.code == "model_not_draft"


def test_preview_trait_scores_probe_texts_zero_shot(client: Client, service: Service) -> None:
    handle = service.handle("preview")
    client.create_model(handle)
    trait = TraitInput(name="Mood", positive_label="happy, cheerful", negative_label="sad, gloomy")
    preview = client.preview_trait(handle, trait, ["A happy, cheerful morning!", "A sad and gloomy evening."])
    assert len(preview.scores) == 2 and preview.scores[1] < 0.5 < preview.scores[0]
    assert preview.embedder and preview.positive_texts and preview.negative_texts
    assert client.list_traits(handle) == []  # a preview stores nothing
    with pytest.raises(ValidationError):
        client.preview_trait(handle, trait, [])
