"""The real thing: `python -m service` subprocesses (migrate and keys CLI, uvicorn on loopback, backfill)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from alembic.script import ScriptDirectory

from core.contract import MAX_REFUSED_SIGN_INS_PER_SOURCE
from harness.waiting import wait_until
from service.__main__ import main as service_main
from service.store.db import alembic_config
from tests.support.idp import CLIENT_ID, running_idp
from tests.support.service import TRAITS, auth, check, cli, cli_key, error_code, running, samples, served

pytestmark = pytest.mark.usefixtures("server_process")  # starts a service process of its own


@contextmanager
def server(data_dir: Path) -> Iterator[str]:
    with served(data_dir) as (base, _proc, _log):
        yield base


def in_dir(data_dir: Path) -> list[str]:
    """`keys create` on `data_dir`'s SQLite file, whatever database the environment names."""
    database = f"sqlite:///{data_dir / 'scoring.sqlite'}"
    return ["keys", "create", "--data-dir", str(data_dir), "--database-url", database]


def test_keys_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    migrated = cli(tmp_path, "migrate")
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert migrated.returncode == 0, migrated.stderr
    assert f"Database schema at revision {head}" in migrated.stdout, migrated.stdout
    out = cli(tmp_path, "keys", "create", "--namespace", "acme", "--namespace", "lab", "--scope", "scoring")
    assert out.returncode == 0, out.stderr
    key = out.stdout.strip().splitlines()[-1]
    assert key.startswith("sk_") and " " not in key
    # Refused arguments, in this process: a process of their own would only import the service once more.
    capsys.readouterr()
    assert service_main([*in_dir(tmp_path), "--namespace", "Bad NS", "--scope", "authoring"]) != 0
    assert "invalid namespace" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        service_main([*in_dir(tmp_path), "--namespace", "acme", "--scope", "admin"])
    assert refused.value.code != 0
    # The key is stored only as a hash.
    assert key.split("_", 2)[2].encode() not in (tmp_path / "scoring.sqlite").read_bytes()


def test_full_flow_over_loopback_and_backfill(tmp_path: Path) -> None:
    h = auth(cli_key(tmp_path))
    with server(tmp_path) as base, httpx.Client(base_url=base, timeout=30) as c:
        assert check(c.get("/health"), 200)["status"] == "ok"
        assert check(c.get("/openapi.json"), 200)["info"]["title"] == "Model Scoring Service"
        check(c.post("/models", json={"handle": "acme.live"}, headers=h), 201)
        check(c.post("/models/acme.live/traits", json={"traits": TRAITS}, headers=h), 201)
        check(c.post("/models/acme.live/samples", json={"samples": samples()}, headers=h), 201)
        run_id = check(c.post("/models/acme.live/train", json={"effort": "low"}, headers=h), 202)["run_id"]

        def settled() -> dict[str, Any] | None:
            now: dict[str, Any] = check(c.get("/models/acme.live", headers=h), 200)
            return now if now["state"] != "busy" else None

        model = wait_until(settled, 60, "acme.live to settle", interval=0.1)
        assert model["state"] == "ready" and model["last_operation"]["run_id"] == run_id
        scored = check(
            c.post("/models/acme.live/score", json={"content": "Dear Sir, kind regards."}, headers=h), 200
        )
        assert scored["version_no"] == 1 and len(scored["scores"]) == 2
        chart = c.post(
            "/models/acme.live/score",
            content=b"lol dude",
            headers={**h, "Content-Type": "text/plain", "Accept": "text/plain"},
        )
        assert chart.status_code == 200 and "casual [" in chart.text
        resp = c.get("/models/acme.live", headers={**h, "X-Request-Id": "loopback-1"})
        assert resp.headers["X-Request-Id"] == "loopback-1"

    # Backfill (server stopped): every ready model retrained, versions say triggered_by backfill.
    out = cli(tmp_path, "backfill")
    assert out.returncode == 0, out.stderr
    assert "acme.live: v2 (backfill)" in out.stdout
    # What the backfill stored, read in this process: a second served process would only start once more.
    with running(tmp_path, database_url=f"sqlite:///{tmp_path / 'scoring.sqlite'}") as svc:
        c = svc.client
        v2 = check(c.get("/v1/models/acme.live/versions/v2", headers=h), 200)
        assert v2["triggered_by"] == "backfill" and v2["run_id"]
        assert check(c.get("/v1/models/acme.live", headers=h), 200)["version_no"] == 2
        started = [e for e in check(c.get("/v1/namespaces/acme/audit", headers=h), 200)["items"]
                   if e["kind"] == "run_started" and e["detail"]["run_kind"] == "backfill"]  # fmt: skip
        assert [(e["actor"], e["detail"]["run_id"]) for e in started] == [("operator", v2["run_id"])]


def refused_sources(
    data_dir: Path, proxies: str | None, capsys: pytest.CaptureFixture[str]
) -> list[tuple[str, int]]:
    """The sources a served process records for forged ID tokens sent from loopback with a made-up
    `X-Forwarded-For` (one more than the cap per address), `SCORING_TRUSTED_PROXIES` set to `proxies`, each
    with the minute of the clock it was recorded in (the cap counts per minute of the clock)."""
    with running_idp() as idp:
        settings = {"SCORING_OIDC_ISSUER": idp.issuer, "SCORING_OIDC_AUDIENCE": CLIENT_ID}
        if proxies is not None:
            settings["SCORING_TRUSTED_PROXIES"] = proxies
        with served(data_dir, settings, "--no-worker") as (base, _proc, _log):  # no runs: no worker
            forged = idp.token("mallory", email="mallory@example.com", email_verified=True) + "x"
            for i in range(MAX_REFUSED_SIGN_INS_PER_SOURCE + 1):
                headers = {**auth(forged), "X-Forwarded-For": f"203.0.113.{i}"}
                assert httpx.get(f"{base}/keys/current", headers=headers, timeout=30).status_code == 401
    # The operator's `audit` command, run here (the served process wrote the stream, not this one): a process
    # of its own would only import the service once more.
    capsys.readouterr()
    database = f"sqlite:///{data_dir / 'scoring.sqlite'}"
    assert service_main(["audit", "--data-dir", str(data_dir), "--database-url", database]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    refused = [e for e in events if e["kind"] == "sign_in_refused"]
    return [(e["detail"]["source"], int(datetime.fromisoformat(e["at"]).timestamp() // 60)) for e in refused]


def test_client_addresses_come_from_the_socket_unless_a_proxy_is_trusted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """By default a header names no client: every forged attempt from loopback is 127.0.0.1's, so the cap of
    5 a minute per address holds (the sixth is counted, not recorded). With the proxy named, its
    `X-Forwarded-For` is the source."""
    default = refused_sources(tmp_path / "default", None, capsys)
    assert {source for source, _ in default} == {"127.0.0.1"}
    per_minute = Counter(minute for _, minute in default)
    assert max(per_minute.values()) <= MAX_REFUSED_SIGN_INS_PER_SOURCE, per_minute
    if len(per_minute) == 1:  # all in one minute of the clock: the sixth was counted, not recorded
        assert len(default) == MAX_REFUSED_SIGN_INS_PER_SOURCE
    # else a busy machine's six attempts straddled a new minute, whose cap starts afresh
    behind = refused_sources(tmp_path / "proxied", "127.0.0.1", capsys)
    expected = sorted(f"203.0.113.{i}" for i in range(MAX_REFUSED_SIGN_INS_PER_SOURCE + 1))
    assert sorted(source for source, _ in behind) == expected


def test_a_stop_with_a_suggestion_in_flight_exits_within_the_grace(tmp_path: Path) -> None:
    """SIGTERM while a suggestion embeds a draft's long labelled texts (three hundred full windows of
    e5-small: a minute of a core or more): the suggestion answers 503 `shutting_down` at its next piece and
    the process exits 0 within the grace and 10 s (docs/service.md), not once the embedding is done."""
    h = auth(cli_key(tmp_path))
    grace = 2
    long = [" ".join(f"word{(i * 7 + j) % 97}" for j in range(2_600))[:20_000] for i in range(300)]
    labels = [{"trait": "formality", "text": t, "quality": float(i % 2)} for i, t in enumerate(long)]
    settings = {"SCORING_SHUTDOWN_GRACE_S": str(grace)}
    with served(tmp_path, settings) as (base, proc, _log), httpx.Client(base_url=base, timeout=60) as c:
        check(c.post("/models", json={"handle": "acme.stop", "embedder": "e5-small-qint8"}, headers=h), 201)
        check(c.post("/models/acme.stop/traits", json={"traits": TRAITS}, headers=h), 201)
        check(c.post("/models/acme.stop/samples", json={"samples": labels}, headers=h), 201)
        check(c.post("/models/acme.stop/pool", json={"texts": ["one to suggest", "and two"]}, headers=h), 201)
        server = psutil.Process(proc.pid)
        idle = sum(server.cpu_times()[:2])
        answers: list[httpx.Response] = []

        def suggest() -> None:
            body = {"trait": "formality", "k": 2}
            answers.append(c.post("/models/acme.stop/pool/suggest", json=body, headers=h, timeout=600))

        thread = threading.Thread(target=suggest)
        thread.start()
        wait_until(lambda: sum(server.cpu_times()[:2]) > idle + 2, 120, "the suggestion to be embedding")
        proc.terminate()
        assert proc.wait(grace + 10) == 0
        thread.join(60)
    assert error_code(answers[0], 503) == "shutting_down"
