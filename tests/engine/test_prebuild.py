"""core/embedders/prebuild.py: the int8 graphs built ahead of use are found built after, and never again;
an id with no int8 graph is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.embedders.e5_quantized import E5_QINT8_ID, built_path
from core.embedders.mpnet_quantized import MPNET_QINT8_ID
from core.embedders.prebuild import build_missing, buildable, is_built
from core.embedders.quantized import QINT8V2_ID
from core.errors import EmbedderUnavailableError


def test_a_graph_built_ahead_is_found_built_and_not_built_again(embedder_dir: Path, tmp_path: Path) -> None:
    # `make test` built it before the suite (tests/support/embedders.py); run alone, the first call builds it.
    build_missing([E5_QINT8_ID], directory=embedder_dir)
    lines: list[str] = []
    (again,) = build_missing([E5_QINT8_ID], directory=embedder_dir, progress=lines.append)
    assert again.id == E5_QINT8_ID and not again.built and again.seconds == 0.0
    assert again.path == built_path(embedder_dir) and again.path.is_file()
    assert lines == [f"{E5_QINT8_ID}: already built in {embedder_dir}"]
    assert is_built(E5_QINT8_ID, embedder_dir) and not is_built(E5_QINT8_ID, tmp_path)


def test_every_embedder_the_suite_uses_is_buildable_here_and_an_id_without_a_graph_is_refused() -> None:
    assert buildable() == [E5_QINT8_ID, MPNET_QINT8_ID, QINT8V2_ID]  # the install fetched mpnet's weights
    with pytest.raises(EmbedderUnavailableError, match=rf"'hashing-v1-512' has no int8 graph.*{E5_QINT8_ID}"):
        build_missing(["hashing-v1-512"])
