"""The fleet as docs/deployment.md starts it: a fresh clone, deploy/.env from deploy/.env.example,
`honcho run` for the migration and the key, then `honcho -f deploy/Procfile -e deploy/.env start -c
api=2,worker=1` from the project root (the Procfile's `.venv/bin/python` is the clone's .venv, a link to
this venv). It scores through both API processes, follows a cursor from one to the other, and on SIGTERM
during a run the worker hands the run back within honcho's 5 s kill timeout (no SIGKILL), so the next start
continues it at once instead of after the heartbeat timeout."""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from harness.faults import faults_env
from harness.pgcluster import PgCluster
from harness.ports import free_port
from harness.waiting import wait_until
from service.store.db import make_engine
from service.store.schema import Run
from tests.support.deploy import REPO
from tests.support.service import TRAITS, check, samples

pytestmark = pytest.mark.usefixtures("server_process")  # starts a fleet of service processes

SLOW_HANDLE = "acme.slow-deploy"
SLOW_RUN_S = 10.0  # longer than the Procfile's 3 s grace: the run is still going when honcho stops it
AWKWARD_PASSWORD = "p@ss/w:rd#?%x"
START = ["-f", "deploy/Procfile", "-e", "deploy/.env"]  # docs/deployment.md, from the project root


class Clone:
    def __init__(self, root: Path, database_url: str, port: int) -> None:
        self.root = root
        self.database_url = database_url
        self.port = port
        # What an operator exports besides deploy/.env: here, the test embedder and a slow run.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("SCORING_", "PG", "PYTHON"))}
        # The first attempt only: the retry after the restart runs at full speed, not another SLOW_RUN_S.
        hooks = {"slow_run": {"handle_prefix": SLOW_HANDLE, "seconds": SLOW_RUN_S, "attempt": 1}}
        self.env.update(
            {
                "PORT": str(port),
                "SCORING_EMBEDDER": "hashing",
                "PYTHONUNBUFFERED": "1",
                **faults_env(hooks, base={}),
            }
        )

    def honcho(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [".venv/bin/honcho", *START, *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    @contextmanager
    def fleet(self, log: Path) -> Iterator[subprocess.Popen[bytes]]:
        with log.open("ab") as out:
            proc = subprocess.Popen(
                [".venv/bin/honcho", *START, "start", "-c", "api=2,worker=1"],
                cwd=self.root,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            yield proc
        finally:
            if proc.poll() is None:  # teardown after a failure: honcho stops its processes (own sessions)
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=30)

    def wait_ready(self, proc: subprocess.Popen[bytes], log: Path, offset: int = 0) -> None:
        """Both API processes and the worker of this start (the log from `offset`) are ready."""

        def ready() -> bool:
            text = log.read_text()[offset:]
            assert proc.poll() is None, f"honcho exited:\n{text[-3000:]}"
            return text.count("Scoring service ready") == 2 and "Scoring worker ready" in text

        wait_until(ready, 120, "the fleet to be ready", interval=0.2)


@pytest.fixture
def clone(tmp_path: Path, pg_cluster: PgCluster) -> Iterator[Clone]:
    root = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(root)], check=True)
    (root / ".venv").symlink_to(Path(sys.prefix))  # the project's venv where the docs expect it
    name = f"procfile_{uuid.uuid4().hex[:12]}"
    url = pg_cluster.create_database(name)
    example = (root / "deploy" / ".env.example").read_text()
    filled = {
        "SCORING_DATABASE_PASSWORD": AWKWARD_PASSWORD,
        "SCORING_CURSOR_SECRET": secrets.token_hex(32),
        "SCORING_DATABASE_URL": url,
    }
    for key, value in filled.items():
        example, n = re.subn(rf"^{key}='[^']*'$", f"{key}='{value}'", example, flags=re.M)
        assert n == 1, key
    (root / "deploy" / ".env").write_text(example)
    assert (
        "deploy/.env"
        not in subprocess.run(
            ["git", "status", "--porcelain"], cwd=root, text=True, capture_output=True
        ).stdout
    )  # git-ignored
    yield Clone(root, url, free_port(consecutive=2))
    pg_cluster.drop_database(name)


def run_row(database_url: str, run_id: str) -> tuple[str, int]:
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            status, attempts = conn.execute(select(Run.status, Run.attempts).where(Run.id == run_id)).one()
    finally:
        engine.dispose()
    return status, attempts


def settled(c: httpx.Client, handle: str) -> dict:
    def done() -> dict | None:
        model = check(c.get(f"/v1/models/{handle}"), 200)
        return None if model["state"] == "busy" else model

    return wait_until(done, 120, f"{handle} to settle", interval=0.2)


def test_documented_procfile_fleet_scores_and_hands_runs_back_on_sigterm(
    clone: Clone, tmp_path: Path
) -> None:
    migrated = clone.honcho("run", ".venv/bin/python", "-m", "service", "migrate")
    assert migrated.returncode == 0, migrated.stderr
    created = clone.honcho(
        "run",
        ".venv/bin/python",
        "-m",
        "service",
        "keys",
        "create",
        "--namespace",
        "acme",
        "--scope",
        "authoring",
    )
    assert created.returncode == 0, created.stderr
    headers = {"Authorization": f"Bearer {created.stdout.strip().splitlines()[-1]}"}
    urls = [f"http://127.0.0.1:{clone.port + i}" for i in range(2)]
    log = tmp_path / "honcho.log"

    with clone.fleet(log) as honcho:
        clone.wait_ready(honcho, log)
        assert (clone.root / ".data" / f"api-{clone.port}").is_dir()  # data under the project root
        with (
            httpx.Client(base_url=urls[0], headers=headers, timeout=60) as a,
            httpx.Client(base_url=urls[1], headers=headers, timeout=60) as b,
        ):
            for handle in ("acme.tone", "acme.tone2", SLOW_HANDLE):
                check(a.post("/v1/models", json={"handle": handle}), 201)
                check(a.post(f"/v1/models/{handle}/traits", json={"traits": TRAITS}), 201)
                check(b.post(f"/v1/models/{handle}/samples", json={"samples": samples()}), 201)
            check(a.post("/v1/models/acme.tone/train", json={"effort": "low"}), 202)
            assert settled(b, "acme.tone")["state"] == "ready"
            for c in (a, b):
                scored = check(
                    c.post("/v1/models/acme.tone/score", json={"content": "Thanks, that helps!"}), 200
                )
                assert scored["scores"]
            # A cursor minted by one API process is accepted by the other: one secret, from deploy/.env.
            page = check(a.get("/v1/models", params={"namespace": "acme", "limit": 1}), 200)
            assert page["next_cursor"]
            check(
                b.get("/v1/models", params={"namespace": "acme", "limit": 1, "cursor": page["next_cursor"]}),
                200,
            )

            run_id = check(a.post(f"/v1/models/{SLOW_HANDLE}/train", json={"effort": "low"}), 202)["run_id"]
            wait_until(lambda: f"of {SLOW_HANDLE} sleeping" in log.read_text(), 60, "the slow run to start")

        honcho.send_signal(signal.SIGTERM)  # what Ctrl-C or a service manager's stop does
        honcho.wait(timeout=60)
    first = log.read_text()
    assert f"handed run {run_id} back to the queue" in first
    assert "sending SIGKILL" not in first  # the worker finished its stop within honcho's 5 s
    assert run_row(clone.database_url, run_id) == ("queued", 1)  # handed back, not left "running"

    # The next start continues the run at once (a run left "running" would wait for the 60 s heartbeat).
    offset = log.stat().st_size
    with clone.fleet(log) as honcho:
        clone.wait_ready(honcho, log, offset)
        with httpx.Client(base_url=urls[1], headers=headers, timeout=60) as b:
            model = settled(b, SLOW_HANDLE)
        assert model["state"] == "ready" and model["last_operation"]["run_id"] == run_id
        assert run_row(clone.database_url, run_id) == ("succeeded", 2)
        honcho.send_signal(signal.SIGTERM)
        honcho.wait(timeout=60)
    assert "sending SIGKILL" not in log.read_text()[offset:]
