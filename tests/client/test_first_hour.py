"""A new user's first hour in a notebook, as they typed it: `import core` reaches every public module,
evaluation rows are read as sample rows are, an archived model says how to start over, a training of traits
without samples says so, and what a cell prints is short."""

from __future__ import annotations

import logging

import pandas as pd
import pytest

from core.client import Client, ConflictError
from tests.support.client import NEGATIVE, POSITIVE, Service, formality_rows, make_draft


def test_import_core_reaches_its_modules_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """`import core` then `core.tables.read_file` and `core.engine.Scorer` work as the docs write them: a
    public module not imported yet loads when first named; `core.errors` stays the client's exceptions even
    after the engine's own `core/errors.py` was imported."""
    import core.engine.scorer
    import core.tables

    for name in ("tables", "engine"):
        monkeypatch.delitem(vars(core), name)  # as in a fresh kernel: not yet an attribute of `core`
    assert core.tables.read_file is core.tables.read_file and core.engine.Scorer is core.engine.scorer.Scorer
    assert core.errors.NotFoundError is core.NotFoundError
    assert {"tables", "engine", "local", "errors", "Client"} <= set(dir(core))
    with pytest.raises(AttributeError, match="no attribute 'tabels'"):
        core.tabels  # noqa: B018 - the typo under test


def test_evaluation_items_take_rows_as_an_import_does(client: Client, service: Service) -> None:
    """`add_evaluation_items` takes `labels=` and, on a one-trait model, rows without a trait, as
    `import_samples` does; a row that still lacks a field is a `ValueError` saying which argument to pass,
    before anything is sent."""
    handle = make_draft(client, service.handle("evalrows"), samples=False)
    held = pd.DataFrame(
        {"Sentence": [f"{t} (held out)" for t in POSITIVE[:2] + NEGATIVE[:2]], "Label": ["F", "F", "C", "C"]}
    )
    added = client.add_evaluation_items(
        handle, held, text="Sentence", quality="Label", labels={"F": 1, "C": 0}
    )
    assert (added.added, added.total) == (4, 4)
    assert client.evaluation_set(handle).traits["formality"].positive == 2
    with pytest.raises(ValueError, match=r"does not name every label of the quality column: 'X' \(1 row\)"):
        client.add_evaluation_items(
            handle,
            held.assign(Label=["F", "X", "C", "C"]),
            text="Sentence",
            quality="Label",
            labels={"F": 1, "C": 0},
        )
    client.add_traits(handle, [{"name": "Politeness", "positive_label": "polite", "negative_label": "rude"}])
    with pytest.raises(ValueError, match=r"item 0 of .* has no trait: name the trait column with trait="):
        client.add_evaluation_items(handle, [{"text": "Dear Sir", "quality": 1.0}])
    assert client.evaluation_set(handle).total == 4  # nothing sent


def test_an_archived_model_says_how_to_start_over(client: Client, service: Service) -> None:
    """`get_or_create_model` on an archived handle refuses with the way on (`purge=True`) instead of
    answering a model every write then refuses; a write to it says the same; once purged, the cell creates it
    anew."""
    handle = make_draft(client, service.handle("archived"), samples=False)
    client.delete_model(handle)
    with pytest.raises(
        ConflictError, match=r"model_archived.*delete_model\('acme\.archived-\d+', purge=True\)"
    ):
        client.get_or_create_model(handle, description="again")
    with pytest.raises(ConflictError, match=r"purge=True"):
        client.import_samples(handle, formality_rows())
    client.delete_model(handle, purge=True)
    assert client.get_or_create_model(handle, description="again").state == "draft"


def test_training_traits_without_samples_says_so(
    client: Client, service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    """A trait without samples trains zero-shot (the service allows it); `train` names such traits in its
    answer and logs a warning, because after a failed import that is rarely what was meant. A trait with
    samples is not named."""
    handle = make_draft(client, service.handle("empty"), samples=False)
    with caplog.at_level(logging.WARNING, logger="core.client"):
        run = client.train(handle, effort="low")
    assert run.zero_shot == ["formality"] and "no samples" in (run.note or "")
    assert run.note in caplog.messages
    client.wait(handle, run.run_id, timeout=120)
    full = make_draft(client, service.handle("full"))
    ref = client.train(full, effort="low")
    assert ref.zero_shot == [] and ref.note is None
    client.wait(full, ref.run_id, timeout=120)


def test_what_a_cell_prints_is_short(client: Client, service: Service) -> None:
    """`print(report)` shows counts and the first refused rows, not every stored id; a `Model` shows as one
    short line (handle, state, version, traits)."""
    handle = make_draft(client, service.handle("short"), samples=False)
    rows = formality_rows() * 3 + [{"trait": "formality", "text": "", "quality": 1.0}] * 7
    report = client.import_samples(handle, rows, strict=False)
    printed = str(report)
    assert printed.splitlines()[0] == repr(report) and "row 36:" in printed and "… and 2 more" in printed
    assert len(printed.splitlines()) == 7 and "ids" not in printed
    model = client.get_model(handle)
    assert repr(model) == str(model) and len(repr(model)) < 200
    assert repr(model).startswith(f"Model('{handle}', draft, traits: Formality, 12 samples")
