"""A first training waits for no int8 graph it does not need: while mpnet-base's graph is being built by
another process, a default (`auto`) model trains on e5-small alone and says so from its first report and on
the version, and a model pinned to e5-small trains as if nothing were being built."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.ui.graphs import both_embedders_ready, building_note
from core.client import Health
from core.client.models import Version as ClientVersion
from core.embedder_words import GRAPH_NOT_BUILT
from core.embedders.blend import BLEND_ID
from core.embedders.e5_quantized import E5_QINT8_ID
from core.embedders.graphs import build_code_version, lock_path, manifest_path
from core.embedders.mpnet_quantized import MPNET_QINT8_ID
from core.embedders.prebuild import graph_of, is_building, is_built, waiting_words
from service.store.schema import Run
from tests.support.checkpoints import on_progress
from tests.support.service import TRAITS, Svc, check, make_model

# Rules beside the store: the SQLite cases cover them (tests/service/conftest.py).
pytestmark = pytest.mark.database_free

ROOT = Path(__file__).resolve().parents[2]
# Another process building mpnet-base's graph: it holds the graph's lock until its stdin closes.
HOLD = """
import sys
from filelock import FileLock
with FileLock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
"""


@pytest.fixture
def mpnet_building(tmp_path: Path, embedder_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A graphs' cache holding e5-small's graph (the suite's, linked) and not mpnet-base's, whose build
    another process holds the lock of."""
    monkeypatch.setenv("SCORING_EMBEDDER_DIR", str(tmp_path / "graphs"))
    e5 = graph_of(E5_QINT8_ID, embedder_dir)
    assert is_built(E5_QINT8_ID, embedder_dir)  # `make test` built it (tests/support/embedders.py)
    here = tmp_path / "graphs" / build_code_version()
    here.mkdir(parents=True)
    for path in (e5, manifest_path(e5)):
        (here / path.name).symlink_to(path)
    mpnet = graph_of(MPNET_QINT8_ID)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock_path(mpnet))],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert is_built(E5_QINT8_ID) and not is_built(MPNET_QINT8_ID) and is_building(MPNET_QINT8_ID)
        yield
    finally:
        holder.communicate("")  # closes its stdin: it lets go of the lock and ends
    assert not mpnet.exists()  # nothing here built it


def _long_samples(per_pole: int) -> list[dict[str, object]]:
    """Reviews of 12+ words in English: `auto` would train on both embedders."""
    good = "was lovely from start to end, and I will happily come back next month"
    bad = "was filthy from start to end, and I will never set foot in it again"
    return [
        {"trait": "sentiment", "text": f"Our visit number {i} to the hotel {verdict}.", "quality": q}
        for i in range(per_pole)
        for verdict, q in ((good, 1.0), (bad, 0.0))
    ]


def _train(svc: Svc, handle: str) -> list[str | None]:
    """Train `handle` on the executor, returning the run's progress message at each engine step."""
    c, h = svc.client, svc.author
    run_id = check(c.post(f"/v1/models/{handle}/train", json={"effort": "low"}, headers=h), 202)["run_id"]
    said: list[str | None] = []

    def read(_: str) -> None:
        with svc.ctx.sessions() as s:
            run = s.get(Run, run_id)
            assert run is not None
            said.append(run.progress.get("message"))

    with on_progress(svc.ctx.executor, read):
        svc.ctx.executor.execute(run_id)
    assert check(c.get(f"/v1/models/{handle}", headers=h), 200)["state"] == "ready"
    return said


def _health(svc: Svc) -> Health:
    return Health.model_validate(check(svc.client.get("/v1/health"), 200))


def test_a_first_default_training_takes_e5_alone_while_mpnet_is_built(
    idle_svc: Svc, mpnet_building: None, embedder_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c, h = idle_svc.client, idle_svc.author
    states = {g.name: g.state for g in _health(idle_svc).embedders}
    assert states == {"e5-small-qint8": "built", "mpnet-base": "building"}
    # What a training that needs mpnet-base's graph says from its first report (service/runs/train.py).
    assert waiting_words(E5_QINT8_ID) is None
    assert (
        waiting_words(BLEND_ID)
        == waiting_words(MPNET_QINT8_ID)
        == ("waiting for mpnet-base's int8 graph, being built on this machine (once for every user)")
    )
    note = str(building_note(_health(idle_svc)))
    assert note.startswith("mpnet-base: its int8 graph is being built on this machine"), note
    make_model(c, h, "acme.graph-auto", with_data=False, embedder="auto")
    check(c.post("/v1/models/acme.graph-auto/traits", json={"traits": TRAITS[1:]}, headers=h), 201)
    rows = {"samples": _long_samples(6)}
    check(c.post("/v1/models/acme.graph-auto/samples", json=rows, headers=h), 201)
    said = _train(idle_svc, "acme.graph-auto")
    # Its first report, before any step of the engine, says what it trains on and why.
    assert said[0] == (
        "training on e5-small alone: mpnet-base's int8 graph is being built on this machine; once it is, "
        "the Training page offers both embedders"
    )
    version = check(c.get("/v1/models/acme.graph-auto/versions/v1", headers=h), 200)
    kept = version["embedder"]
    assert kept["embedder"] == E5_QINT8_ID and kept["not_compared_because"] == GRAPH_NOT_BUILT
    assert kept["not_compared"] == [{"embedder": BLEND_ID, "name": "blend"}]
    versions = [ClientVersion.model_validate(version)]
    assert versions[0].embedder_words.endswith(f"not on both embedders: {GRAPH_NOT_BUILT})")
    assert not both_embedders_ready(_health(idle_svc), versions, 1)  # not while it is being built

    # A model pinned to e5-small trains meanwhile, its graph checked without waiting for mpnet-base's lock.
    make_model(c, h, "acme.graph-e5", with_data=False, embedder="e5-small-qint8")
    check(c.post("/v1/models/acme.graph-e5/traits", json={"traits": TRAITS[1:]}, headers=h), 201)
    check(c.post("/v1/models/acme.graph-e5/samples", json=rows, headers=h), 201)
    assert "graph" not in str(_train(idle_svc, "acme.graph-e5")[0])  # nothing waited for: the phase's words
    pinned = check(c.get("/v1/models/acme.graph-e5/versions/v1", headers=h), 200)
    assert pinned["embedder"]["embedder"] == E5_QINT8_ID

    # The Training page offers both embedders once the graph is built (the owner's choice), not before.
    monkeypatch.setenv("SCORING_EMBEDDER_DIR", str(embedder_dir.parent))  # where every graph is built
    assert both_embedders_ready(_health(idle_svc), versions, 1)
