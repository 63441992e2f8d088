"""A notebook's `svc.embedder()` and `svc.scorer()` read the int8 graphs of the local service they talk to, in
its embedders directory, never a second build of their own (minutes of CPU and GBs for mpnet-base)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.client.local_vectors import EMBEDDING_CACHE
from core.embedders import CachedEmbedder, SqliteStore
from core.embedders.blend import BLEND_ID, BlendEmbedder
from core.embedders.e5_quantized import E5_QINT8_ID
from core.embedders.quantized import embedders_dir
from core.embedders.registry import get_embedder, get_embedder_in
from core.local import LocalService


def _service(data_dir: Path) -> LocalService:
    done = subprocess.Popen(["true"])  # a process that has exited: nothing here talks to it
    done.wait()
    return LocalService(done, "http://127.0.0.1:9", "key", "me", data_dir, None, detached=True)


def test_the_services_embedders_directory_is_where_its_graphs_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With SCORING_EMBEDDER_DIR (the tests set one) the service and the notebook share it.
    monkeypatch.setenv("SCORING_EMBEDDER_DIR", str(tmp_path / "shared"))
    assert _service(tmp_path / "data").embedders_dir == tmp_path / "shared"
    # Without it a service keeps its graphs in its data directory, which need not be the notebook's default.
    monkeypatch.delenv("SCORING_EMBEDDER_DIR")
    svc = _service(tmp_path / "data")
    assert svc.embedders_dir == tmp_path / "data" / "embedders" != embedders_dir()
    (tmp_path / "data").mkdir()
    SqliteStore(tmp_path / "data" / EMBEDDING_CACHE).close()  # the service's cache of vectors, read first
    # Each embedder the notebook embeds with reads (or builds once) its graph there; nothing is loaded yet.
    blend = svc.embedder("blend")
    assert isinstance(blend, BlendEmbedder) and blend.id == BLEND_ID
    for part in [*blend.parts, svc.embedder(E5_QINT8_ID)]:
        assert isinstance(part, CachedEmbedder) and not part.write  # reads the service's cache, never writes
        assert part.embedder.directory == tmp_path / "data" / "embedders"  # type: ignore[attr-defined]


def test_the_process_embedders_directory_gives_the_process_wide_embedder() -> None:
    assert get_embedder_in(E5_QINT8_ID, embedders_dir()) is get_embedder(E5_QINT8_ID)
    assert get_embedder_in("hashing", Path("/nowhere")) is get_embedder("hashing")  # no graph to place
