"""The evaluation set is held out, as the client reports it against the real service: texts a pool import left
out, sample rows that are evaluation texts, the samples an evaluation import overlaps, and the evaluation
texts a version trained on (one trained before the set had them; a later one leaves them out)."""

from __future__ import annotations

from typing import Any

from tests.support.client import NEGATIVE, POSITIVE, Service, make_draft

# Held-out variations of the training poles: (text, quality).
HELD = [(f"{t} (held {i})", 1.0) for i in range(2) for t in POSITIVE[:3]] + [
    (f"{t} (held {i})", 0.0) for i in range(2) for t in NEGATIVE[:3]
]
TRAINED = [(POSITIVE[0], 1.0), (NEGATIVE[0], 0.0)]  # training samples of make_draft's model


def _items(labelled: list[tuple[str, float]]) -> list[dict[str, Any]]:
    return [{"trait": "formality", "text": t, "quality": q} for t, q in labelled]


def test_imports_report_the_evaluation_texts_over_every_batch(service: Service) -> None:
    with service.client() as c:
        handle = make_draft(c, service.handle("heldimport"))
        c.add_evaluation_items(handle, _items(HELD[:4]))
        held = [t for t, _ in HELD]
        texts = ["first pool text", held[0], "second pool text", held[1], held[2], "third pool text"]
        pool = c.import_pool(handle, texts, batch_size=2)  # three batches, each with its share
        assert pool.complete and pool.batches == 3
        assert pool.in_evaluation_set == 3 and pool.added == 3 and len(pool.ids) == 3
        assert {p.text for p in c.list_pool(handle)} == {
            "first pool text",
            "second pool text",
            "third pool text",
        }
        rows = [{"trait": "formality", "text": t, "quality": 1.0} for t in (held[3], "a new sample", held[0])]
        report = c.import_samples(handle, rows, batch_size=2)
        assert report.ok and report.stored == 3 and report.in_evaluation_set == 2


def test_an_evaluation_reports_the_texts_each_version_trained_on(service: Service) -> None:
    with service.client() as c:
        handle = make_draft(c, service.handle("heldeval"))
        c.wait(handle, c.train(handle, effort="low").run_id, timeout=60)
        added = c.add_evaluation_items(handle, _items(HELD + TRAINED))  # v1 trained on TRAINED before
        assert (added.in_samples, added.in_pool) == (len(TRAINED), 0)
        c.wait(handle, c.evaluate(handle, 1).run_id, timeout=60)
        result = c.get_evaluation(handle, 1)
        formality = result.traits["formality"]
        assert (formality.excluded_trained, formality.items, result.items) == (2, len(HELD), len(HELD))
        c.wait(handle, c.train(handle, effort="low", reoptimize_params=True).run_id, timeout=60)
        c.wait(handle, c.evaluate(handle, 2).run_id, timeout=60)
        out = c.compare_evaluations(handle, 1, 2).traits["formality"]
        # v2 trained after the set had them: it left them out.
        assert (out.excluded_trained_a, out.excluded_trained_b, out.items) == (2, 0, len(HELD))
