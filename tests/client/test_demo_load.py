"""The demo models' first load against a service whose one worker is taken (the user's own training): every
model is created and its training queued at once, and the load waits its turn, with no deadline, rather
than give up after the client's usual ten minutes with the later models never created."""

from __future__ import annotations

import csv
import json
import threading
from pathlib import Path

from core.client import Client, RunCancelledError
from core.demo import load_demo_models
from tests.support.client import NAMESPACE, Service


def _demo_dir(tmp_path: Path, names: list[str], roles: list[dict[str, str]]) -> Path:
    for name, entry in zip(names, roles, strict=True):
        folder = tmp_path / entry["slug"]
        folder.mkdir()
        trait = {"name": "Tone", "positive_label": "warm", "negative_label": "cold", "description": ""}
        (folder / "model.json").write_text(json.dumps({"name": name, "traits": [trait]}))
        with (folder / "samples.csv").open("w", newline="") as f:
            rows = csv.writer(f)
            rows.writerow(["trait", "text", "quality"])
            rows.writerows([["Tone", f"warm words {n}", 1.0] for n in range(3)])
            rows.writerows([["Tone", f"cold words {n}", 0.0] for n in range(3)])
    (tmp_path / "manifest.json").write_text(json.dumps({"models": roles}))
    return tmp_path


def test_every_demo_model_is_created_while_the_worker_is_taken(idle_service: Service, tmp_path: Path) -> None:
    names = [idle_service.handle("demo").split(".", 1)[1] for _ in range(3)]
    roles = [
        {"slug": "tagged", "on_first_start": "train_and_tag", "tag": "demo"},
        {"slug": "trained", "on_first_start": "train"},
        {"slug": "draft", "on_first_start": "draft"},
    ]
    data_dir = _demo_dir(tmp_path, names, roles)
    outcome: list[BaseException | list[str]] = []
    steps: list[str] = []
    created_all = threading.Event()

    def progress(message: str, fraction: float) -> None:
        steps.append(message)
        if message == f"{NAMESPACE}.{names[2]} ready":
            created_all.set()

    def load() -> None:
        with idle_service.client() as c:
            try:
                outcome.append(load_demo_models(c, NAMESPACE, data_dir=data_dir, progress=progress))
            except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
                outcome.append(exc)

    loader = threading.Thread(target=load, daemon=True)
    loader.start()
    # No worker runs here: the two trainings stay queued, as behind a user's training on a one-worker service.
    assert created_all.wait(120), steps
    handles = [f"{NAMESPACE}.{name}" for name in names]
    client: Client
    with idle_service.client() as client:
        states = [client.get_model(h).state for h in handles]
        assert states[:2] == ["busy", "busy"] and states[2] == "draft", states
        assert loader.is_alive() and not outcome  # still waiting its turn, not given up
        for handle in handles[:2]:
            op = client.get_model(handle).last_operation
            assert op is not None and op.run_id is not None
            client.cancel(handle, op.run_id)
    loader.join(60)
    # Cancelled here to end the test: the load reports it rather than wait on a run that will never end.
    assert len(outcome) == 1 and isinstance(outcome[0], RunCancelledError), outcome
