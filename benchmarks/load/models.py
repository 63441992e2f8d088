"""Models the load benchmarks score and train, set up over HTTP as a client would."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from benchmarks.load.fleet import NAMESPACE
from core.contract import MAX_SAMPLES_PER_REQUEST
from core.demo import DemoModel
from harness.waiting import wait_until

BATCH = MAX_SAMPLES_PER_REQUEST  # samples a request


def check(resp: httpx.Response, *expected: int) -> Any:
    """The response's JSON body; any other status than `expected` raises with the request and the answer."""
    if resp.status_code not in expected:
        request = resp.request
        raise RuntimeError(f"{request.method} {request.url} -> {resp.status_code}: {resp.text[:500]}")
    return resp.json()


def handle_of(model: DemoModel) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", model.name.lower()).strip("_")[:50] or "model"
    return f"{NAMESPACE}.{slug}"


def create(client: httpx.Client, handle: str, model: DemoModel, samples: list[dict[str, Any]]) -> None:
    """The model with `model`'s description and traits, and `samples`."""
    check(client.post("/v1/models", json={"handle": handle, "description": model.description}), 201)
    check(client.post(f"/v1/models/{handle}/traits", json={"traits": model.traits}), 201)
    for start in range(0, len(samples), BATCH):
        chunk = samples[start : start + BATCH]
        check(client.post(f"/v1/models/{handle}/samples", json={"samples": chunk}), 201)


def build_and_train(client: httpx.Client, model: DemoModel, effort: str, timeout: float) -> tuple[str, dict]:
    """Create, fill and train the model; returns (handle, the active version with its snapshot)."""
    handle = handle_of(model)
    create(client, handle, model, model.samples)
    check(client.post(f"/v1/models/{handle}/train", json={"effort": effort}), 202)

    def trained() -> dict[str, Any] | None:
        state = check(client.get(f"/v1/models/{handle}"), 200)
        if state["state"] == "failed":
            raise RuntimeError(f"training failed: {json.dumps(state.get('last_operation'))}")
        return state if state["state"] == "ready" else None

    state = wait_until(trained, timeout, f"{handle}'s training", interval=0.5)
    version = check(client.get(f"/v1/models/{handle}/versions/v{state['version_no']}"), 200)
    if "snapshot" not in version:
        raise RuntimeError("the version read carries no snapshot (is the key an authoring key?)")
    return handle, version


def untrained_copies(client: httpx.Client, model: DemoModel, n: int) -> list[str]:
    """`n` untrained copies of the model, each with texts of its own (a suffix), so every training embeds
    texts new to the service, as a new user's models would."""
    handles = []
    for i in range(n):
        handle = f"{NAMESPACE}.mixed_{i}"
        create(client, handle, model, [{**s, "text": f"{s['text']} (copy {i})"} for s in model.samples])
        handles.append(handle)
    return handles
