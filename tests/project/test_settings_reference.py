"""docs/settings.md is rendered from the settings classes, so it names every variable with its default and
meaning as the code has them: a setting added, changed or described anew fails here until the page is
rendered again (`python -m harness.settings_reference`)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from harness.settings_reference import PAGE, render, rows
from tests.project.test_environment_reads import ROOT


def test_the_committed_page_is_the_rendered_one() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "docs/settings.md is out of date: run `python -m harness.settings_reference` and commit it"
    )


def test_a_setting_without_a_meaning_is_refused() -> None:
    class Undocumented(BaseModel):
        documented: int = Field(1, description="Said.")
        silent: int = 2

    with pytest.raises(ValueError, match="Undocumented.silent has no description"):
        rows(Undocumented, None)


def test_the_other_docs_link_the_page_instead_of_listing_variables() -> None:
    api_pages = sorted((ROOT / "docs" / "api").glob("*.md"))
    assert api_pages, "the API's topic pages are under docs/api/"
    for doc in (ROOT / "docs" / "deployment.md", ROOT / "docs" / "service.md", *api_pages):
        text = doc.read_text(encoding="utf-8")
        if doc in api_pages and "SCORING_" not in text:
            continue  # a topic page that names no setting need not link them
        assert "settings.md" in text, doc
