"""`make run`'s banner and the rule that decides which requests drop the workbench's cached reads."""

from __future__ import annotations

import re
import socket
import sys

from app.banner import banner
from app.shell.reads import is_write
from core.client import Client
from core.local import LocalService
from harness.ports import free_port
from tests.support.app import make_draft, new_handle
from tests.support.processes import RunProgram


def test_banner_says_where_and_what_the_first_visit_does() -> None:
    text = banner(8502, {})
    assert "http://localhost:8502" in text
    assert "starts a local scoring service" in text and "demo models" in text and "background" in text
    assert "demo models" not in banner(8502, {"SCORING_DEMO": "0"})
    remote = banner(8501, {"SCORING_API_URL": "https://scoring.example.com/v1", "SCORING_API_KEY": "k"})
    assert "https://scoring.example.com/v1" in remote and "local scoring service" not in remote


def test_banner_runs_as_make_run_calls_it(run_program: RunProgram) -> None:
    port = free_port()
    out = run_program([sys.executable, "-m", "app.banner", str(port)])
    assert f"http://localhost:{port}" in out.stdout and not out.stderr


def test_a_port_in_use_is_said_before_any_banner(run_program: RunProgram) -> None:
    """`make run PORT=8611` with the port taken printed "open http://localhost:8611 … ready in a few seconds"
    and only then Streamlit's "Port 8611 is not available". Now the check comes first and says what to do."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other_program:
        other_program.bind(("127.0.0.1", 0))
        other_program.listen()
        port = other_program.getsockname()[1]
        out = run_program([sys.executable, "-m", "app.banner", str(port)], check=False)
    assert out.returncode == 1  # make stops: Streamlit is never started
    assert out.stdout == ""  # no banner promising an address that will not answer
    said = " ".join(out.stderr.split())
    assert f"Port {port} is in use by another program" in said, said
    suggested = re.search(r"make run PORT=(\d+) \((\d+) is free\)", said)
    assert suggested and suggested.group(1) == suggested.group(2) != str(port), said
    assert "Stop that program, or start on another port" in said


def test_a_port_that_is_not_a_number_is_said(run_program: RunProgram) -> None:
    out = run_program([sys.executable, "-m", "app.banner", "86x1"], check=False)
    assert out.returncode == 1 and out.stdout == "" and "PORT=86x1 is not a port number" in out.stderr


def test_writes_drop_the_cache_reads_do_not() -> None:
    assert is_write("POST", "/v1/models/a.b/traits") and is_write("PATCH", "/v1/models/a.b")
    assert is_write("DELETE", "/v1/models/a.b/traits/t") and is_write("POST", "/v1/models/a.b/train")
    assert not is_write("GET", "/v1/models/a.b")
    for path in ("/v1/models/a.b/score", "/v1/models/a.b/score/compare", "/v1/models/a.b/traits/preview"):
        assert not is_write("POST", path, b'{"texts": ["a"]}'), path
    assert is_write("POST", "/v1/models/a.b/score", b'{"text": "a", "feedback": {"t": 1.0}}')


def test_a_workbench_write_drops_cached_reads(local_service: LocalService, client: Client) -> None:
    from app.shell import reads

    handle = make_draft(client, new_handle(local_service, "reads"))
    with reads.watched_client(local_service.url, local_service.api_key) as watched:
        assert [t.key for t in reads.traits(watched, handle)] == ["formality"]
        client.add_traits(handle, [{"name": "Energy", "positive_label": "lively", "negative_label": "calm"}])
        # Another client's write: the cached read stands until its TTL (or a run's end changes the model).
        assert [t.key for t in reads.traits(watched, handle)] == ["formality"]
        watched.delete_trait(handle, "energy")
        watched.add_traits(handle, [{"name": "Warmth", "positive_label": "warm", "negative_label": "cold"}])
        assert [t.key for t in reads.traits(watched, handle)] == ["formality", "warmth"]
