"""Every `python` block of the client's pages (docs/client.md, then client-methods.md and client-errors.md)
runs as written, in order, as the cells of one notebook, against a local service (its default data directory
and embedder set by the environment, as a user's would be), the quickstart block twice as its text promises;
a block marked `<!-- not run: why -->` says why it is not."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.client import NEGATIVE, POSITIVE

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"(?:<!-- not run: (?P<why>[^>]*?) -->\n)?```python\n(?P<code>.*?)```", re.S)


#: The client's pages in reading order: the guide, then the reference its blocks build on.
PAGES = ("client.md", "client-methods.md", "client-errors.md")


def doc_blocks() -> tuple[list[str], list[str]]:
    """The blocks to run, in order, and the reasons of those left out."""
    found = [m for page in PAGES for m in BLOCK.finditer((ROOT / "docs" / page).read_text())]
    return [m["code"] for m in found if m["why"] is None], [m["why"] for m in found if m["why"] is not None]


def test_the_client_guide_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert sorted(p.name for p in (ROOT / "docs").glob("client*.md")) == sorted(PAGES)  # none left unrun
    run, left_out = doc_blocks()
    assert len(run) >= 5 and all(why.strip() for why in left_out)
    labels = [1.0] * len(POSITIVE) + [0.0] * len(NEGATIVE)
    lines = ["reply,label", *(f'"{t}",{q}' for t, q in zip(POSITIVE + NEGATIVE, labels, strict=True))]
    (tmp_path / "replies.csv").write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCORING_DATA_DIR", str(tmp_path / "home"))  # start_local_service's default directory
    monkeypatch.setenv(
        "SCORING_EMBEDDER", "hashing"
    )  # the service's embedder when none is named (the default
    # is slow here)
    cells: dict[str, object] = {}
    try:
        for number, code in enumerate([run[0], *run]):  # the quickstart's cells, then every block in order
            exec(compile(code, f"docs/client*.md python block {number}", "exec"), cells)  # noqa: S102 - the doc
        client, handle, report = cells["client"], cells["handle"], cells["report"]
        assert (report.stored, len(report.duplicates)) == (0, 12)  # type: ignore[attr-defined]
        assert client.get_model(handle).state == "ready"  # type: ignore[attr-defined]
        assert client.get_model(cells["scratch"]).state == "draft"  # type: ignore[attr-defined]
        assert "ImportReport(total=12, stored=0, duplicates=12" in capsys.readouterr().out
    finally:
        if "client" in cells:
            cells["client"].close()  # type: ignore[attr-defined]
        if "svc" in cells:
            cells["svc"].stop()  # type: ignore[attr-defined]
