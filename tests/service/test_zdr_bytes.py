"""Zero-data-retention, byte for byte: after a purge, and after scoring a ZDR model, no byte of the texts
(UTF-8) nor of their sha256 (hex or raw digest) is left in any file of the data directory: the database, its
-wal and -shm, the queue, the embedding cache, and (with a real `python -m service serve`) the log.

Every scan has a positive control beside it (the same scanner finds the text, or its hash, where it must be),
so a scanner that cannot see would fail. On PostgreSQL the documented guarantee (docs/service-writes.md) is
checked: no row holds the text, and after `VACUUM (FULL)` + `CHECKPOINT` the database's data files do not
either.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.service import serve_command
from harness.waiting import wait_until
from tests.support.service import ROOT, TRAITS, auth, check, cli_key, free_port, running, samples, train_ready

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own

Client = Any  # a TestClient or an httpx.Client: the scenario speaks paths under /v1 to either


def needles(texts: list[str]) -> dict[bytes, str]:
    """What must not be found: each text, its sha256 in hex, its raw sha256 digest, and the 8 bytes a
    version's record of its training texts keeps of it (service/store/heldout.py)."""
    out: dict[bytes, str] = {}
    for t in texts:
        digest = hashlib.sha256(t.encode("utf-8"))
        out[t.encode("utf-8")] = f"text {t[:40]!r}"
        out[digest.hexdigest().encode()] = f"sha256 hex of {t[:40]!r}"
        out[digest.digest()] = f"raw sha256 of {t[:40]!r}"
        out[digest.digest()[:8]] = f"content key of {t[:40]!r}"
    return out


def scan(data_dir: Path, wanted: dict[bytes, str]) -> list[str]:
    """Every (file, needle) found in the raw bytes of every file under the data directory."""
    found = []
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file()):
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # a -journal or temp file that came and went
            continue
        found += [
            f"{path.relative_to(data_dir)}: {what}" for needle, what in wanted.items() if needle in data
        ]
    return found


def eventually_absent(data_dir: Path, texts: list[str], timeout: float = 15.0) -> None:
    """A run's purge is committed (the model reads `ready`) a moment before its WAL is truncated."""
    try:
        wait_until(
            lambda: not scan(data_dir, needles(texts)), timeout, "the purged bytes to go", interval=0.1
        )
    except TimeoutError:
        left = scan(data_dir, needles(texts))
        raise AssertionError(f"zero-data-retention left bytes behind: {left[:10]}") from None


def marked(marker: str) -> list[dict[str, Any]]:
    return [{**s, "text": f"{s['text']} ref {marker}-{i}"} for i, s in enumerate(samples())]


def new_marker(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex}"


def make(c: Client, h: dict[str, str], handle: str, rows: list[dict[str, Any]], **fields: Any) -> None:
    check(c.post("/v1/models", json={"handle": handle, **fields}, headers=h), 201)
    check(c.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}, headers=h), 201)
    check(c.post(f"/v1/models/{handle}/samples", json={"samples": rows}, headers=h), 201)


def scenario(c: Client, h: dict[str, str], data_dir: Path) -> None:
    # 1. Under zero-data-retention from the start: purged when the training completes.
    rows = marked(new_marker("zdrtrain"))
    texts = [r["text"] for r in rows]
    make(c, h, "acme.zdr", rows, zero_data_retention=True)
    assert scan(data_dir, {texts[0].encode(): "text"}), "control: the stored samples are visible to the scan"
    train_ready(c, h, "acme.zdr")
    eventually_absent(data_dir, texts)

    # 2. Content scored with a ZDR model, every way there is: nothing, anywhere.
    scored = [f"Dear Sir, {new_marker('zdrscore')} regards." for _ in range(6)]
    path = "/v1/models/acme.zdr/score"
    check(c.post(path, json={"content": scored[0], "explain": True}, headers=h), 200)
    check(c.post(path, json={"content": scored[1:3]}, headers=h), 200)
    check(c.post(path, content=scored[3].encode(), headers={**h, "Content-Type": "text/plain"}), 200)
    check(c.post(path, json={"content": scored[4]}, headers={**h, "Accept": "text/plain"}), 200)
    check(c.post(path + "/compare", json={"a": scored[5], "b": scored[0]}, headers=h), 200)
    refused = c.post(
        path, json={"content": scored[0], "feedback": [{"trait": "formality", "quality": 1}]}, headers=h
    )
    check(refused, 409)
    assert not scan(data_dir, needles(scored)), "scored ZDR content left bytes behind"

    # 3. Turning ZDR on later: the samples, their cached embeddings and the buffered feedback go.
    rows = marked(new_marker("zdrlate"))
    texts = [r["text"] for r in rows]
    make(c, h, "acme.late", rows)
    train_ready(c, h, "acme.late")  # not yet ZDR: the embeddings of the samples are cached
    control = f"Kind regards, {new_marker('kept')}."
    check(c.post("/v1/models/acme.late/score", json={"content": control}, headers=h), 200)
    feedback = f"Yours sincerely, {new_marker('zdrfeedback')}."
    body = {"content": feedback, "feedback": [{"trait": "formality", "quality": 1.0}]}
    check(c.post("/v1/models/acme.late/score", json=body, headers=h), 200)
    assert scan(data_dir, {hashlib.sha256(texts[0].encode()).hexdigest().encode(): "hash"}), "control: cached"
    key = hashlib.sha256(texts[0].encode()).digest()[:8]
    assert scan(data_dir, {key: "content key"}), "control: the version's record of its training texts"
    assert scan(data_dir, {feedback.encode(): "text"}), (
        "control: the buffered feedback is visible to the scan"
    )
    patched = check(c.patch("/v1/models/acme.late", json={"zero_data_retention": True}, headers=h), 200)
    assert patched["sample_count"] == 0 and patched["buffered_feedback"] == 0
    left = scan(data_dir, needles([*texts, feedback]))
    assert not left, f"turning zero-data-retention on left bytes behind: {left[:10]}"
    # Retained content is untouched: the scan can see a cached hash when there is one.
    assert scan(data_dir, {hashlib.sha256(control.encode()).hexdigest().encode(): "hash"})


def test_zero_data_retention_leaves_no_bytes_in_process(tmp_path: Path) -> None:
    """SQLite, the app in-process on real files (worker thread included)."""
    with running(tmp_path) as svc:
        scenario(svc.client, svc.author, tmp_path)
    assert not scan(tmp_path, {b"zdrtrain": "marker", b"zdrlate": "marker", b"zdrscore": "marker"})


@contextmanager
def served(data_dir: Path, log: Path) -> Iterator[str]:
    """`python -m service serve` on SQLite, logging at INFO into a file of the data directory."""
    port = free_port()
    env = {
        **os.environ,
        "SCORING_EMBEDDER": "hashing",
        "SCORING_RETRAIN_BUFFER": "3",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("SCORING_DATABASE_URL", None)
    with log.open("wb") as out:
        proc = subprocess.Popen(serve_command(port, data_dir), cwd=ROOT, env=env, stdout=out, stderr=out)
    base = f"http://127.0.0.1:{port}"
    try:

        def ready() -> bool:
            assert proc.poll() is None, log.read_text()[-2000:]
            return b"Scoring service ready" in log.read_bytes()

        wait_until(ready, 60, "the service to be ready", interval=0.1)
        yield base
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def test_zero_data_retention_leaves_no_bytes_with_a_real_server(tmp_path: Path) -> None:
    """The same through a real server process, whose log file is scanned too (it logs at INFO)."""
    key = cli_key(tmp_path)
    log = tmp_path / "service.log"
    with served(tmp_path, log) as base, httpx.Client(base_url=base, timeout=60) as c:
        scenario(c, auth(key), tmp_path)
    assert b"run " in log.read_bytes(), "control: the log file holds the server's log lines"
    assert not scan(tmp_path, {b"zdrtrain": "marker", b"zdrlate": "marker", b"zdrscore": "marker"})


# ---- PostgreSQL: the documented guarantee ----------------------------------------------------------------


def pg_base_dir(cluster: Any, url: str) -> Path:
    import psycopg2

    with psycopg2.connect(url) as conn, conn.cursor() as cur:
        cur.execute("SELECT oid FROM pg_database WHERE datname = current_database()")
        row = cur.fetchone()
        assert row is not None
        (oid,) = row
    conn.close()
    return Path(cluster.data_dir) / "base" / str(oid)


def pg_sql(url: str, *statements: str, fetch: Callable[[Any], Any] | None = None) -> Any:
    import psycopg2

    conn = psycopg2.connect(url)
    conn.autocommit = True  # VACUUM cannot run in a transaction
    try:
        with conn.cursor() as cur:
            for statement in statements:
                cur.execute(statement)
            return fetch(cur) if fetch else None
    finally:
        conn.close()


def rows_holding(url: str, marker: str) -> dict[str, int]:
    tables = pg_sql(
        url,
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'",
        fetch=lambda cur: [r[0] for r in cur.fetchall()],
    )
    counts = {}
    for table in tables:
        n = pg_sql(
            url,
            f"SELECT count(*) FROM \"{table}\" t WHERE t::text LIKE '%{marker}%'",
            fetch=lambda c: c.fetchone()[0],
        )
        if n:
            counts[table] = n
    return counts


@pytest.mark.postgres
def test_postgres_guarantee(tmp_path: Path, pg_cluster: Any) -> None:
    """docs/service-writes.md: the rows are gone at once; the bytes leave the data files at VACUUM (FULL)."""
    with pg_cluster.fresh_database() as url, running(tmp_path, database_url=url) as svc:
        c, h = svc.client, svc.author
        base = pg_base_dir(pg_cluster, url)
        if not os.access(base, os.R_OK):
            pytest.skip("the cluster's data directory is not readable here")
        marker = new_marker("zdrpg")
        rows = marked(marker)
        make(c, h, "acme.zdr", rows, zero_data_retention=True)
        pg_sql(url, "CHECKPOINT")
        assert scan(base, {marker.encode(): "marker"}), "control: the stored samples are in the data files"
        train_ready(c, h, "acme.zdr")
        assert rows_holding(url, marker) == {}, "a row still holds a purged text"
        pg_sql(url, "VACUUM (FULL) samples, feedback_labels", "CHECKPOINT")
        left = scan(base, needles([r["text"] for r in rows]))
        assert not left, f"after VACUUM (FULL), the data files still hold: {left[:10]}"
