"""docs/api/limits.md is rendered from core.contract, so the API's reference states every bound as the code
holds it: a bound changed in core/contract.py fails here until the page is rendered again
(`python -m harness.contract_reference`)."""

from __future__ import annotations

import importlib
import re

import pytest

import harness.contract_reference as reference
from core import contract
from harness.contract_reference import PAGE, SECTIONS, render


def test_the_committed_page_is_the_rendered_one() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "docs/api/limits.md is out of date: run `python -m harness.contract_reference` and commit it"
    )


def test_every_row_names_constants_the_contract_has() -> None:
    named = [name for _, rows in SECTIONS for _, _, names in rows for name in names.split(", ")]
    assert [name for name in named if not hasattr(contract, name)] == []


def test_a_changed_bound_shows_in_the_rendered_page(monkeypatch: pytest.MonkeyPatch) -> None:
    before = render()
    monkeypatch.setattr(contract, "MAX_TRAITS", contract.MAX_TRAITS + 1)
    try:
        changed = importlib.reload(reference).render()  # the table is read from the contract at import
    finally:
        monkeypatch.undo()
        importlib.reload(reference)
    assert changed != before
    assert re.search(rf"\| traits per model \| at most {contract.MAX_TRAITS + 1} \|", changed)
