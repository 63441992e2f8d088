"""The database under the routes (service/store/db.py): a write that waits out SQLite's lock is a 503 to
retry, and no database error carries the values it was bound to (a sample's text) into a message or a log."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy.exc import DBAPIError

from service.store.db import transaction
from service.store.schema import SampleRow, utcnow
from tests.support.service import Svc, check, error_code, make_model, running

MARKER = "private-marker-5c1e"  # a sample text that must appear in no message or log


def test_locked_sqlite_is_503_retry_after_and_no_content_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # SQLite only: PostgreSQL writers wait on row locks, not on a database-wide write lock.
    with running(tmp_path, run_worker=False, lock_timeout_s=0.3) as svc:
        c, h = svc.client, svc.author
        make_model(c, h, "acme.h")
        caplog.set_level(logging.DEBUG)
        holder = sqlite3.connect(tmp_path / "scoring.sqlite", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process holding the write lock
        try:
            body = {"samples": [{"trait": "formality", "text": f"{MARKER} text", "quality": 1}]}
            resp = c.post("/v1/models/acme.h/samples", json=body, headers=h)
            assert error_code(resp, 503) == "database_busy"
            assert resp.json()["error"]["retryable"] is True
            assert resp.headers["Retry-After"] == "1"
            resp = c.patch("/v1/models/acme.h", json={"description": MARKER}, headers=h)
            assert error_code(resp, 503) == "database_busy"
            # Reads do not wait for the writer.
            assert check(c.get("/v1/models/acme.h", headers=h), 200)["description"] == ""
        finally:
            holder.rollback()
            holder.close()
        assert MARKER not in caplog.text
        check(c.post("/v1/models/acme.h/samples", json=body, headers=h), 201)  # the retry succeeds


def test_database_errors_hide_bound_parameters(svc: Svc) -> None:
    """A failing INSERT of sample text (no such model) on either database: the message names no value."""
    with pytest.raises(DBAPIError) as caught, transaction(svc.ctx.sessions) as s:
        s.add(
            SampleRow(
                model_id=987_654,
                trait_id=987_654,
                text=f"{MARKER} private text",
                quality=1.0,
                provenance="authored",
                content_sha256="0" * 64,
                created_at=utcnow(),
            )
        )
    assert MARKER not in str(caught.value)
    assert "hidden" in str(caught.value)
