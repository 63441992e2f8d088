"""A full disk: scoring keeps answering, writes get 507 `storage_full` (retryable) and succeed once
space is freed, and a run that could not record its failure is recovered without loss.

The data directory lives on a small tmpfs filled to the last byte; where mounting is not allowed (not root,
no CAP_SYS_ADMIN) the tests skip.
"""

from __future__ import annotations

import errno
import logging
import sqlite3
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from core.embedders.cache import SqliteStore, truncate_wal
from service.store.db import truncate_wal as truncate_database_wal
from service.store.schema import Person, Run, SampleRow, Version, utcnow
from tests.support.checkpoints import on_progress
from tests.support.idp import CLIENT_ID, running_idp
from tests.support.service import Svc, auth, check, error_code, make_model, running, train_ready

DISK_MB = 24
HEARTBEAT_TIMEOUT_S = 1.0  # also how long a run's bookkeeping waits out the full disk before failing


class SmallDisk:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.filler = root / "filler"

    def fill(self, svc: Svc) -> None:
        """Every SQLite file's WAL emptied (so the next write must grow a file), then the disk filled."""
        assert truncate_database_wal(svc.ctx.engine)
        for path in self.root.rglob("*.sqlite"):
            with sqlite3.connect(path) as conn:
                assert truncate_wal(conn)
        chunk = b"\0" * (1 << 20)
        with open(self.filler, "wb", buffering=0) as f:
            try:
                while True:
                    f.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        with open(self.filler, "ab", buffering=0) as f:  # the last partial block
            try:
                while True:
                    f.write(b"\0" * 512)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC

    def free(self) -> None:
        self.filler.unlink()


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    root = tmp_path / "disk"
    root.mkdir()
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m", "tmpfs", str(root)], capture_output=True, text=True
    )
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mount.stderr.strip()}); the full-disk tests need one")
    try:
        yield SmallDisk(root)
    finally:
        subprocess.run(["umount", "-l", str(root)], check=False)


def cache_store(svc: Svc) -> SqliteStore:
    store = svc.ctx.embedders._store  # the one cache file of the process
    assert isinstance(store, SqliteStore)
    return store


def test_full_disk_scores_and_refuses_writes_retryably(
    small_disk: SmallDisk, caplog: pytest.LogCaptureFixture
) -> None:
    with running(small_disk.root / "data") as svc:  # the default settings, rate limits included
        c, h = svc.client, svc.author
        make_model(c, h, "acme.full")
        train_ready(c, h, "acme.full")
        make_model(c, h, "acme.more")  # a draft, to add samples to
        check(c.post("/v1/models/acme.full/score", json={"content": "cached text"}, headers=h), 200)
        small_disk.fill(svc)

        # Scoring is a read: cached texts score, uncached texts are encoded and scored; only the cache write
        # is skipped, said once in the log.
        with caplog.at_level(logging.WARNING, logger="core"):
            for content in ("cached text", "fresh text 0", "fresh text 1", "fresh text 2", "cached text"):
                body = check(c.post("/v1/models/acme.full/score", json={"content": content}, headers=h), 200)
                assert {s["trait"] for s in body["scores"]} == {"formality", "sentiment"}
        assert cache_store(svc).full
        said = f"embedding cache {cache_store(svc).path}: the disk is full; not caching new vectors"
        assert [r.getMessage().startswith(said) for r in caplog.records].count(True) == 1

        big = [
            {"trait": "formality", "text": f"sample {i} " + "x" * 2000, "quality": 1.0} for i in range(200)
        ]
        resp = c.post("/v1/models/acme.more/samples", json={"samples": big}, headers=h)
        assert error_code(resp, 507) == "storage_full"
        err = resp.json()["error"]
        assert err["retryable"] is True and "free space" in err["message"].lower()
        assert "embeddings.sqlite" in err["message"]
        check(c.get("/v1/models/acme.full", headers=h), 200)  # reads go on

        small_disk.free()
        check(c.post("/v1/models/acme.more/samples", json={"samples": big}, headers=h), 201)
        check(c.post("/v1/models/acme.full/score", json={"content": "fresh text 99"}, headers=h), 200)
        assert not cache_store(svc).full  # caching resumed
        with svc.ctx.sessions() as s:
            assert s.scalar(select(func.count()).select_from(SampleRow)) == 24 + 24 + 200


def test_a_signed_in_person_scores_on_a_full_disk(small_disk: SmallDisk) -> None:
    """A person's request a minute after the last one recorded owes a last-seen stamp: on a full disk it waits
    for space, and the read or score goes on."""
    with (
        running_idp() as idp,
        running(small_disk.root / "data", oidc_issuer=idp.issuer, oidc_audience=CLIENT_ID) as svc,
    ):
        c = svc.client
        check(
            c.put(
                "/v1/namespaces/acme/people/bob@example.com", json={"role": "annotator"}, headers=svc.author
            ),
            200,
        )
        make_model(c, svc.author, "acme.seen")
        train_ready(c, svc.author, "acme.seen")
        idp.set_user("bob", email="bob@example.com", email_verified=True, name="Bob")
        bob = auth(idp.id_token("bob"))
        check(c.get("/v1/models/acme.seen", headers=bob), 200)  # the sign-in, recorded
        with svc.ctx.sessions.begin() as s:  # two minutes ago: the next request owes its stamp
            s.execute(update(Person).values(last_seen_at=utcnow() - timedelta(minutes=2)))
        small_disk.fill(svc)

        check(c.post("/v1/models/acme.seen/score", json={"content": "Dear Sir"}, headers=bob), 200)
        check(c.get("/v1/models/acme.seen", headers=bob), 200)

        small_disk.free()
        check(c.get("/v1/models/acme.seen", headers=bob), 200)
        with svc.ctx.sessions() as s:  # the stamp, written once there is room
            seen = s.scalar(select(Person.last_seen_at))
            assert seen is not None and utcnow() - seen < timedelta(minutes=1)


def test_run_that_cannot_record_its_failure_is_recovered_once_space_returns(small_disk: SmallDisk) -> None:
    with running(small_disk.root / "data", run_worker=False, heartbeat_timeout_s=HEARTBEAT_TIMEOUT_S) as svc:
        c, h = svc.client, svc.author
        make_model(c, h, "acme.stuck")
        run_id = check(c.post("/v1/models/acme.stuck/train", json={"effort": "low"}, headers=h), 202)[
            "run_id"
        ]
        filled: list[str] = []

        def fill_once(phase: str) -> None:
            if not filled:
                filled.append(phase)
                small_disk.fill(svc)

        # Neither progress, nor the version, nor the failure stored.
        with on_progress(svc.ctx.executor, fill_once), pytest.raises(Exception) as failed:
            svc.ctx.executor.execute(run_id)
        assert "full" in str(failed.value)
        model = check(c.get("/v1/models/acme.stuck", headers=h), 200)
        assert model["state"] == "busy" and model["last_operation"]["status"] == "running"
        # The worker is gone without waiting out the heartbeat timeout: nobody holds the run's lock, which is
        # how the sweep tells a dead worker from a slow one (service/runs/locks.py).
        assert not svc.ctx.run_locks.held(run_id)
        with pytest.raises(Exception, match="full"):
            svc.ctx.recover()  # the sweep cannot write either ("run recovery failed", retried next round)

        small_disk.free()
        assert svc.ctx.recover() == [run_id]
        svc.ctx.executor.execute(run_id)
        model = check(c.get("/v1/models/acme.stuck", headers=h), 200)
        assert model["state"] == "ready" and model["version_no"] == 1
        assert model["last_operation"]["status"] == "succeeded"
        with svc.ctx.sessions() as s:
            assert s.scalar(select(func.count()).select_from(SampleRow)) == 24
            assert s.scalar(select(func.count()).select_from(Version)) == 1
            run = s.get(Run, run_id)
            assert run is not None and run.attempts == 2
