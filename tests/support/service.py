"""The service tests' app (`Svc`, `running`), shared data, small HTTP helpers and loopback servers."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

import httpx
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from harness.pgcluster import PgClusterError, find_pg_bin
from harness.ports import free_port
from harness.processes import stop
from harness.service import serve_command
from harness.waiting import wait_until
from service.config.settings import Settings
from service.context import Context
from service.domain.needs import LOGGED, Checkpoints
from service.process.api import create_app
from service.store.api_keys import KEY_RE, create_key
from service.store.db import make_engine, make_session_factory, migrate, transaction
from service.store.schema import ApiKey

FORMAL = [
    "Dear Sir, I am writing to formally request the quarterly report.",
    "We respectfully submit the enclosed documentation for your review.",
    "Please accept our sincere apologies for the inconvenience caused.",
    "Kindly find attached the signed agreement for your records.",
    "I would be grateful if you could confirm receipt of this letter.",
    "The committee shall convene on Monday to deliberate the proposal.",
]
CASUAL = [
    "hey whats up, wanna grab pizza later?",
    "lol that movie was kinda wild",
    "gonna crash early tonight, so tired",
    "yo can u send me that pic",
    "omg this is sooo cool haha",
    "nah im good, maybe next time dude",
]
POSITIVE = [
    "I absolutely love this wonderful product, it is fantastic!",
    "What a great day, everything went perfectly.",
    "The team did an amazing job, I am thrilled.",
    "This is the best meal I have ever had.",
    "Such a delightful and happy experience.",
    "Brilliant work, I am very pleased.",
]
NEGATIVE = [
    "This is terrible, I hate it and want a refund.",
    "What an awful day, everything went wrong.",
    "The service was horrible and rude.",
    "This is the worst meal I have ever had.",
    "Such a disappointing and sad experience.",
    "Dreadful work, I am very upset.",
]

TRAITS = [
    {"name": "Formality", "positive_label": "formal", "negative_label": "casual"},
    {"name": "Sentiment", "positive_label": "positive", "negative_label": "negative"},
]


def samples() -> list[dict[str, Any]]:
    out = [{"trait": "formality", "text": t, "quality": 1.0} for t in FORMAL]
    out += [{"trait": "formality", "text": t, "quality": 0.0} for t in CASUAL]
    out += [{"trait": "sentiment", "text": t, "quality": 1.0} for t in POSITIVE]
    out += [{"trait": "sentiment", "text": t, "quality": 0.0} for t in NEGATIVE]
    return out


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def check(resp: httpx.Response, status: int) -> Any:
    assert resp.status_code == status, f"{resp.status_code} != {status}: {resp.text[:2000]}"
    if resp.headers.get("content-type", "").startswith("application/json"):
        return resp.json()
    return resp.text


def error_code(resp: httpx.Response, status: int) -> str:
    body = check(resp, status)
    err = body["error"]
    assert set(err) >= {"code", "message", "request_id", "retryable", "details"}
    assert err["request_id"] == resp.headers["X-Request-Id"]
    return str(err["code"])


def wait_settled(client: Any, handle: str, headers: dict[str, str], timeout: float = 300.0) -> dict[str, Any]:
    """Poll GET /models/{handle} until the model is no longer busy. `timeout` only guards against a run that
    never ends: a training of seconds takes minutes on a machine busy with other work."""

    def settled() -> dict[str, Any] | None:
        model: dict[str, Any] = check(client.get(f"/v1/models/{handle}", headers=headers), 200)
        return model if model["state"] != "busy" else None

    return wait_until(settled, timeout, f"{handle} to settle")


def make_model(
    client: Any, headers: dict[str, str], handle: str, *, with_data: bool = True, **fields: Any
) -> dict[str, Any]:
    model = check(client.post("/v1/models", json={"handle": handle, **fields}, headers=headers), 201)
    if with_data:
        check(client.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}, headers=headers), 201)
        check(client.post(f"/v1/models/{handle}/samples", json={"samples": samples()}, headers=headers), 201)
    return model


def evaluate_version(client: Any, headers: dict[str, str], handle: str, ref: str = "v1") -> dict[str, Any]:
    """Evaluate a version on the model's evaluation set, wait for the run to succeed, return the result."""
    check(client.post(f"/v1/models/{handle}/versions/{ref}/evaluate", headers=headers), 202)
    model = wait_settled(client, handle, headers)
    assert model["last_operation"]["status"] == "succeeded", model["last_operation"]
    result: dict[str, Any] = check(
        client.get(f"/v1/models/{handle}/versions/{ref}/evaluation", headers=headers), 200
    )
    return result


def train_ready(client: Any, headers: dict[str, str], handle: str, **body: Any) -> dict[str, Any]:
    started = check(
        client.post(f"/v1/models/{handle}/train", json={"effort": "low", **body}, headers=headers), 202
    )
    assert started["state"] == "busy" and started["run_id"].startswith("run_")
    model = wait_settled(client, handle, headers)
    assert model["state"] == "ready", model["last_operation"]
    assert model["last_operation"]["run_id"] == started["run_id"]
    return model


# -- real servers on loopback ------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SCORING_EMBEDDER": "hashing"}
    env.pop("SCORING_DATABASE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "service", *args, "--data-dir", str(data_dir)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def cli_key(data_dir: Path, *options: str) -> str:
    """`keys create --namespace acme --scope authoring` (and `options`) on `data_dir`'s SQLite file, run in
    this process, as a served test's first step: a process of its own would only import the service once
    more (tests/service/test_server.py runs the command as one)."""
    from service.__main__ import main

    database = f"sqlite:///{data_dir / 'scoring.sqlite'}"
    args = ["keys", "create", "--data-dir", str(data_dir), "--database-url", database]
    out = io.StringIO()
    with redirect_stdout(out):
        assert main([*args, "--namespace", "acme", "--scope", "authoring", *options]) == 0
    return out.getvalue().strip().splitlines()[-1]


@contextmanager
def served(
    data_dir: Path, settings: dict[str, str] | None = None, *options: str
) -> Iterator[tuple[str, subprocess.Popen[str], list[str]]]:
    """`python -m service serve` on loopback: its base URL, its process and its output lines so far.
    `settings`: more environment variables (`SCORING_…`); `options`: more of `serve`'s options (a test that
    starts no run passes `--no-worker`: a worker child process is a second import of the service)."""
    port = free_port()
    # The default rate limits, as every service test runs (make_settings).
    env = {**os.environ, "SCORING_EMBEDDER": "hashing", "PYTHONUNBUFFERED": "1", **(settings or {})}
    env.pop("SCORING_DATABASE_URL", None)
    proc = subprocess.Popen(
        serve_command(port, data_dir, "--log-level", "warning", *options),
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}/v1"
    reader = None
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        seen: list[str] = []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                raise AssertionError(f"server exited: {''.join(seen)}")
            seen.append(line)
            if line.strip() == f"Scoring service ready on {base}":
                break
        else:
            raise AssertionError(f"server not ready: {''.join(seen)}")
        # Keep reading its output, so a chatty server never blocks on a full pipe; the reader closes the pipe
        # at its end (closing it here could block on the reader's read while a worker child still holds it).
        reader = threading.Thread(target=_drain, args=(proc.stdout, seen), daemon=True)
        reader.start()
        yield base, proc, seen
    finally:
        stop(proc)
        if reader is not None:
            reader.join(30)
        elif proc.stdout is not None:  # not ready: nothing reads it
            proc.stdout.close()


def _drain(pipe: IO[str], lines: list[str]) -> None:
    with pipe:
        lines.extend(pipe)


@contextmanager
def serving(app: FastAPI, receive_buffer: int | None = None) -> Iterator[tuple[str, int]]:
    """`app` (its lifespan already run by the test client) served by uvicorn on 127.0.0.1: (host, port).
    `receive_buffer` fixes SO_RCVBUF of the connections it accepts, which the kernel otherwise grows as it
    likes (a test that counts what a client could send before the answer needs it fixed)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer is not None:  # the sockets it accepts inherit it
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    # Bound here, not a free port looked up first: no other process can take it meanwhile.
    listener.bind(("127.0.0.1", 0))
    # ws="none": no websockets here; uvicorn's default imports websockets' deprecated legacy server
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning", ws="none"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started or not thread.is_alive(), 30, "uvicorn to start", interval=0.02)
        assert server.started, "uvicorn did not start"
        yield "127.0.0.1", listener.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(30)
        listener.close()


@contextmanager
def loopback(svc: Svc) -> Iterator[str]:
    """The test's app served by uvicorn on 127.0.0.1: its base URL."""
    with serving(svc.app) as (host, port):
        yield f"http://{host}:{port}"


# -- the app in-process (the `svc` fixtures of tests/service/conftest.py) ---------------------------------


def _migrate(url: str) -> None:
    engine = make_engine(url)
    migrate(engine)
    engine.dispose()


def new_key(sessions: sessionmaker[Session], namespaces: list[str], scope: str) -> dict[str, str]:
    """A new key's Authorization header."""
    with transaction(sessions) as s:
        return auth(create_key(s, namespaces, scope))


@dataclass(frozen=True)
class Keys:
    """The four keys every `svc` starts with (Svc's fields of the same names)."""

    author: dict[str, str]
    scorer: dict[str, str]
    other: dict[str, str]
    publisher: dict[str, str]

    @property
    def prefix(self) -> str:
        """The authoring key's prefix, stored in clear: it finds these keys in a copy of their database."""
        match = KEY_RE.match(self.author["Authorization"].removeprefix("Bearer "))
        assert match is not None
        return match.group(1)


def _create_keys(sessions: sessionmaker[Session]) -> Keys:
    return Keys(
        new_key(sessions, ["acme", "lab"], "authoring"), new_key(sessions, ["acme"], "scoring"),
        new_key(sessions, ["other"], "authoring"), new_key(sessions, ["public"], "authoring"),
    )  # fmt: skip


_TEMPLATE_KEYS: dict[str, Keys] = {}  # Keys.prefix -> the keys a template database holds


def prepare_template(url: str) -> None:
    """The template each `svc` database is copied from: migrated, with the four keys already in it, so a
    test does not pay for creating them again."""
    engine = make_engine(url)
    try:
        migrate(engine)
        keys = _create_keys(make_session_factory(engine))
    finally:
        engine.dispose()
    _TEMPLATE_KEYS[keys.prefix] = keys


def _keys_of(ctx: Context) -> Keys:
    """The template's keys if the database is a copy of one (prepare_template), else four new keys."""
    with ctx.reads() as s:
        found = s.scalar(select(ApiKey.prefix).where(ApiKey.prefix.in_(_TEMPLATE_KEYS)).limit(1))
    return _TEMPLATE_KEYS[found] if found is not None else _create_keys(ctx.sessions)


def default_backends() -> tuple[str, ...]:
    """Both databases when the PostgreSQL binaries are installed (CI and these machines), else SQLite."""
    try:
        find_pg_bin()
    except PgClusterError:
        return ("sqlite",)
    return ("sqlite", "postgres")


# A file marked `database_free` tests rules that stand beside the store (request parsing, auth errors, the
# guard, the embedders, Perspective's shapes): its PostgreSQL cases would run the SQLite cases' code again
# through the same SQLAlchemy statements, so a full run deselects them (a PostgreSQL-only run keeps them).
# Tests of what the database decides (cursors, ordering, locks, concurrent writes, the auth matrix's rows)
# stay on both.
DATABASE_FREE = "database_free"


@dataclass
class Svc:
    app: FastAPI
    ctx: Context
    client: TestClient
    author: dict[str, str]  # authoring key for namespaces acme and lab
    scorer: dict[str, str]  # scoring key for acme
    other: dict[str, str]  # authoring key for namespace other
    publisher: dict[str, str]  # authoring key that owns the public catalog

    def key(self, namespaces: list[str], scope: str) -> dict[str, str]:
        return new_key(self.ctx.sessions, namespaces, scope)


def make_settings(data_dir: Path, **overrides: object) -> Settings:
    base: dict[str, object] = {
        "embedder": "hashing",
        "heartbeat_interval_s": 0.5,
        "recovery_interval_s": 3600.0,
        "retrain_buffer": 3,
        # The rate limits are the defaults users get; a test of a flood lowers them, and one that needs them
        # off says why where it turns them off.
    }
    base.update(overrides)
    return Settings.from_env(data_dir=data_dir, **base)


@contextmanager
def running(data_dir: Path, **overrides: object) -> Iterator[Svc]:
    """The app on `data_dir` with the test settings and `overrides`; `checkpoints=`: a fault test's
    (harness/faults.py)."""
    checkpoints = cast(Checkpoints, overrides.pop("checkpoints", LOGGED))
    settings = make_settings(data_dir, **overrides)
    app = create_app(settings, context=Context.build(settings, checkpoints))
    ctx: Context = app.state.ctx
    with TestClient(app, raise_server_exceptions=False) as client:
        keys = _keys_of(ctx)
        yield Svc(app, ctx, client, keys.author, keys.scorer, keys.other, keys.publisher)
