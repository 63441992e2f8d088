"""The Training, Versions and Settings pages say which embedder a version was trained on and which embedders
this installation has, and how to fetch the second embedder where it is missing (AppTest, real local service
on the hashing embedder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.embedders import mpnet_source
from tests.support.apptest import no_exception, page, shown

pytestmark = pytest.mark.usefixtures("app_env")


def test_the_pages_say_the_embedder_in_words(
    trained: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page("training", trained)
    at.run()
    no_exception(at)
    assert any(c.startswith("trained on hashing · effort low") for c in shown(at.caption)), shown(at.caption)

    at = page("versions", trained)
    at.run()
    no_exception(at)
    table = next(d.value for d in at.dataframe if "trained on" in d.value.columns)
    assert list(table["trained on"]) == ["hashing", "hashing"]

    # The note where the second embedder's weights are installed, then where they are not: the parts are
    # looked for in the environment (sparse files of their sizes stand in for them here).
    with_parts, without = tmp_path / "parts", tmp_path / "none"
    with_parts.mkdir()
    for i, size in enumerate(mpnet_source.PART_SIZES, start=1):
        with (with_parts / f"all-mpnet-base-v2.zip.{i:03d}").open("wb") as part:
            part.truncate(size)
    for parts, mpnet in (
        (with_parts, ", `mpnet-base` (weights fetched at install)"),
        (without, f"; `mpnet-base` is not installed ({mpnet_source.INSTALL_HINT})"),
    ):
        monkeypatch.setattr(mpnet_source, "PARTS_DIR", parts)
        at = page("settings")
        at.run()
        no_exception(at)
        note = next(c for c in shown(at.caption) if c.startswith("Embedders installed here"))
        assert note.startswith(f"Embedders installed here: `e5-small-qint8`{mpnet}."), note
