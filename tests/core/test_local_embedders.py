"""A notebook's `svc.embedder()` and `svc.scorer()` read the int8 graphs of the local service they talk to, in
the graphs' cache every data directory shares, never a second build of their own (minutes of CPU for
mpnet-base)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.client.local_vectors import EMBEDDING_CACHE
from core.embedders import CachedEmbedder, SqliteStore
from core.embedders.blend import BLEND_ID, BlendEmbedder
from core.embedders.e5_quantized import E5_QINT8_ID
from core.embedders.graphs import build_code_version, graphs_dir
from core.embedders.registry import get_embedder, get_embedder_in
from core.local import LocalService


def _service(data_dir: Path) -> LocalService:
    done = subprocess.Popen(["true"])  # a process that has exited: nothing here talks to it
    done.wait()
    return LocalService(done, "http://127.0.0.1:9", "key", "me", data_dir, None, detached=True)


def test_every_data_directory_reads_its_graphs_from_the_one_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SCORING_EMBEDDER_DIR (the tests set the user's cache) points every user of a machine at one folder.
    monkeypatch.setenv("SCORING_EMBEDDER_DIR", str(tmp_path / "shared"))
    mine = tmp_path / "shared" / build_code_version()
    assert _service(tmp_path / "a").embedders_dir == _service(tmp_path / "b").embedders_dir == mine
    # Without it, the user's cache directory: still no data directory of its own.
    monkeypatch.delenv("SCORING_EMBEDDER_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    svc = _service(tmp_path / "data")
    assert svc.embedders_dir == tmp_path / "cache" / "scoring-workbench" / "embedders" / build_code_version()
    assert svc.embedders_dir == graphs_dir()
    (tmp_path / "data").mkdir()
    SqliteStore(tmp_path / "data" / EMBEDDING_CACHE).close()  # the service's cache of vectors, read first
    # Each embedder the notebook embeds with is the process's own, reading the shared graphs; nothing loaded.
    blend = svc.embedder("blend")
    assert isinstance(blend, BlendEmbedder) and blend.id == BLEND_ID
    for part in [*blend.parts, svc.embedder(E5_QINT8_ID)]:
        assert isinstance(part, CachedEmbedder) and not part.write  # reads the service's cache, never writes
        assert part.embedder is get_embedder(part.id)


def test_the_process_embedders_directory_gives_the_process_wide_embedder() -> None:
    assert get_embedder_in(E5_QINT8_ID, graphs_dir()) is get_embedder(E5_QINT8_ID)
    assert get_embedder_in("hashing", Path("/nowhere")) is get_embedder("hashing")  # no graph to place
