"""`python -m service backup` of a live service under write load, `restore` into a fresh data directory: every
model, sample, version, tag and score of the backup's moment comes back equal."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.service import auth, check, cli, cli_key, make_model, served, train_ready

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own

TEXTS = ["Dear Sir, kindly review the enclosed report.", "lol that was wild dude", "What a wonderful day!"]


def every(client: httpx.Client, path: str, **params: Any) -> list[dict[str, Any]]:
    """All items of a paginated list."""
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = check(
            client.get(path, params={**params, "limit": 200, **({"cursor": cursor} if cursor else {})}), 200
        )
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def content(client: httpx.Client, handle: str) -> dict[str, Any]:
    """What a backup must keep of a model: its body (bar run progress), samples, traits, versions and tags."""
    model = check(client.get(f"/v1/models/{handle}"), 200)
    model.pop("last_operation")
    return {
        "model": model,
        "samples": every(client, f"/v1/models/{handle}/samples"),
        "traits": check(client.get(f"/v1/models/{handle}/traits"), 200),
        "versions": every(client, f"/v1/models/{handle}/versions"),
    }


def scores(client: httpx.Client, handle: str) -> list[list[float]]:
    out = []
    for text in TEXTS:
        body = check(client.post(f"/v1/models/{handle}/score", json={"content": text}), 200)
        out.append([s["score"] for s in body["scores"]])
    return out


def test_backup_under_write_load_restores_equal(tmp_path: Path) -> None:
    live_dir, fresh_dir, backup_dir = tmp_path / "live", tmp_path / "fresh", tmp_path / "backup"
    live_dir.mkdir()
    headers = auth(cli_key(live_dir))
    written: list[str] = []  # handles whose samples were acknowledged, in order
    stop = threading.Event()

    def write_load(root: str) -> None:
        with httpx.Client(base_url=root, headers=headers, timeout=60) as client:
            i = 0
            while not stop.is_set():
                make_model(client, headers, f"acme.load{i}")
                written.append(f"acme.load{i}")
                i += 1
                # Three writes a model, under the default 10 a second: as fast, the burst of 120 ran out on
                # a fast machine before the backup ended, and the load stopped at a 429.
                stop.wait(0.4)

    # Runs in a thread of the API process, not a worker child: a process start fewer; what is backed up is
    # the same.
    with served(live_dir, None, "--in-process-worker") as (base, _proc, _log):
        root = base.removesuffix("/v1")
        with httpx.Client(base_url=root, headers=headers, timeout=60) as c:
            for handle in ("acme.one", "acme.two"):
                make_model(c, headers, handle)
                train_ready(c, headers, handle)
            check(c.post("/v1/models/acme.one/versions/prod"), 200)
            train_ready(c, headers, "acme.one", reoptimize_params=True)  # v2; the tag stays on v1
            loader = threading.Thread(target=write_load, args=(root,), daemon=True)
            loader.start()
            while len(written) < 3 and loader.is_alive():
                stop.wait(0.05)
            before = list(written)
            done = cli(live_dir, "backup", str(backup_dir))
            assert done.returncode == 0, done.stderr
            after = list(written)
            while len(written) < len(after) + 2 and loader.is_alive():  # writes go on after the backup
                stop.wait(0.05)
            assert loader.is_alive(), "the write load stopped (its error is reported with the test)"
            stop.set()
            loader.join(60)
            live = {m["handle"]: content(c, m["handle"]) for m in every(c, "/v1/models", namespace="acme")}
            live_scores = {h: scores(c, h) for h in ("acme.one", "acme.two")}
            cursor = check(c.get("/v1/models", params={"namespace": "acme", "limit": 1}), 200)["next_cursor"]

    manifest = json.loads((backup_dir / "backup.json").read_text())
    assert set(manifest["files"]) == {"scoring.sqlite", "cursor_secret", "embeddings.sqlite"}
    done = cli(fresh_dir, "restore", str(backup_dir))
    assert done.returncode == 0, done.stderr
    with (
        served(fresh_dir, None, "--no-worker") as (base, _proc, _log),  # it reads and scores only
        httpx.Client(base_url=base.removesuffix("/v1"), headers=headers, timeout=60) as c,
    ):
        handles = [m["handle"] for m in every(c, "/v1/models", namespace="acme")]
        restored = {h: content(c, h) for h in handles}
        restored_scores = {h: scores(c, h) for h in ("acme.one", "acme.two")}
        # The cursor secret came along: a page cursor from the live service reads on.
        check(c.get("/v1/models", params={"namespace": "acme", "limit": 1, "cursor": cursor}), 200)

    assert manifest["counts"]["models"] == len(handles)
    assert manifest["counts"]["samples"] == sum(len(m["samples"]) for m in restored.values())
    # Everything acknowledged before the backup began is in it; nothing written after the backup ended is.
    assert (
        {"acme.one", "acme.two", *before}
        <= set(handles)
        <= {"acme.one", "acme.two", *after, f"acme.load{len(after)}"}
    )
    for handle, got in restored.items():
        if handle in ("acme.one", "acme.two", *before):
            assert got == live[handle], handle  # model, samples, traits, versions with snapshots and tags
        else:  # created while the backup ran: exactly as live, or caught between its create and its samples
            assert got == live[handle] or (got["samples"] == [] and got["model"]["handle"] == handle), handle
    assert [v["tags"] for v in restored["acme.one"]["versions"]] == [[], ["prod"]]
    for handle, expected in live_scores.items():
        for got_row, want_row in zip(restored_scores[handle], expected, strict=True):
            assert got_row == pytest.approx(want_row, rel=1e-9, abs=1e-12)
