"""Synthesis through the deployment's OpenAI-compatible generator: a loopback server of the test's own
answers POST /v1/chat/completions, the served service is pointed at it by its settings."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import serving
from tests.support.processes import FreshPython
from tests.support.service import Svc, check, running, wait_settled

# Rules beside the store: the SQLite cases cover them (tests/service/conftest.py).
pytestmark = pytest.mark.database_free

KEY = "sk-test-0123456789abcdef"
TRAIT = {
    "name": "Formality",
    "positive_label": "formal",
    "negative_label": "casual",
    "description": "How formal a letter to the council is",
}
POOL = ["Dear council, the bins on Elm Street were not emptied.", "hey, the park gate is broken again"]
# Per pole asked for: two texts of the pole, a repeat of the first (not kept twice) and one of the other
# pole, which the pole check drops.
ANSWERS = {
    "formal": [
        "A formal letter, formal and proper in every formal word.",
        "With formal regards, I remain your formal correspondent.",
        "A formal letter, formal and proper in every formal word!",
        "lol so casual, casual vibes, casual chat",
    ],
    "casual": [
        "so casual lol, casual vibes all day",
        "casual chat, nothing fancy, casual as ever",
        "Formal, formal, formal: a formal notice.",
    ],
}


class _OpenAI(BaseHTTPRequestHandler):
    """A chat-completions endpoint whose answer follows the pole the prompt asks for."""

    mode = "ok"  # "ok", or "bad_json": a 200 answer that is not a chat completion
    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][-1]["content"]
        auth = self.headers.get("Authorization")
        type(self).requests.append({"path": self.path, "auth": auth, "body": body})
        if self.mode == "bad_json":
            payload = b"<html>upstream says no</html>"
        else:
            pole = "formal" if "clearly 'formal'" in prompt else "casual"
            choice = {"index": 0, "message": {"role": "assistant", "content": "\n".join(ANSWERS[pole])}}
            answer = {"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"]}
            payload = json.dumps({**answer, "choices": [choice]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def openai_url() -> Iterator[str]:
    with serving(_OpenAI) as url:
        yield url


@pytest.fixture
def gen_svc(tmp_path: Path, database_url: str, openai_url: str) -> Iterator[Svc]:
    _OpenAI.mode, _OpenAI.requests = "ok", []
    settings = {"generator_url": openai_url, "generator_model": "tiny-model", "generator_key": KEY}
    with running(tmp_path, database_url=database_url, **settings) as s:
        yield s


def _model(svc: Svc, handle: str) -> None:
    c, h = svc.client, svc.author
    check(c.post("/v1/models", json={"handle": handle}, headers=h), 201)
    check(c.post(f"/v1/models/{handle}/traits", json={"traits": [TRAIT]}, headers=h), 201)
    check(c.post(f"/v1/models/{handle}/pool", json={"texts": POOL}, headers=h), 201)


def _synthesize(svc: Svc, handle: str, **body: str) -> dict[str, Any]:
    c, h = svc.client, svc.author
    check(c.post(f"/v1/models/{handle}/samples/synthesize", json={"effort": "low", **body}, headers=h), 202)
    return wait_settled(c, handle, h)


def _made(svc: Svc, handle: str) -> list[dict[str, Any]]:
    params = {"provenance": "synthesized"}
    items: list[dict[str, Any]] = check(
        svc.client.get(f"/v1/models/{handle}/samples", params=params, headers=svc.author), 200
    )["items"]
    return items


def test_from_traits_asks_the_generator_and_keeps_texts_on_their_pole(gen_svc: Svc) -> None:
    _model(gen_svc, "acme.gen")
    model = _synthesize(gen_svc, "acme.gen")
    op = model["last_operation"]
    assert op["status"] == "succeeded" and "tiny-model" in op["progress"]["message"]
    made = {s["text"]: s for s in _made(gen_svc, "acme.gen")}
    # Each pole's own texts, once each; the other pole's text in each answer was dropped by the pole check.
    assert {t: s["quality"] for t, s in made.items()} == {
        ANSWERS["formal"][0]: 1.0,
        ANSWERS["formal"][1]: 1.0,
        ANSWERS["casual"][0]: 0.0,
        ANSWERS["casual"][1]: 0.0,
    }
    assert all(s["source"] == "generator" and s["generator_model"] == "tiny-model" for s in made.values())
    # One request per pole, with the key, the model, the trait, its poles and the pool's texts as examples.
    assert len(_OpenAI.requests) == 2
    for request in _OpenAI.requests:
        assert request["path"] == "/v1/chat/completions" and request["auth"] == f"Bearer {KEY}"
        assert request["body"]["model"] == "tiny-model"
        prompt = request["body"]["messages"][-1]["content"]
        assert "Formality" in prompt and TRAIT["description"] in prompt and "'casual'" in prompt
        assert all(text in prompt for text in POOL)
    # The key is in no answer.
    assert KEY not in json.dumps(model) and KEY not in json.dumps(list(made.values()))


def test_diversify_asks_for_paraphrases_of_each_seed(gen_svc: Svc) -> None:
    c, h = gen_svc.client, gen_svc.author
    _model(gen_svc, "acme.genvar")
    texts = {"Dear council, I write to formally request a formal reply.": 1.0, "hey council, whats up": 0.0}
    seeds = [{"trait": "formality", "text": t, "quality": q} for t, q in texts.items()]
    check(c.post("/v1/models/acme.genvar/samples", json={"samples": seeds}, headers=h), 201)
    op = _synthesize(gen_svc, "acme.genvar", synth_type="diversify")["last_operation"]
    assert op["status"] == "succeeded"
    # One request per seed, carrying it.
    prompts = [r["body"]["messages"][-1]["content"] for r in _OpenAI.requests]
    assert len(prompts) == 2 and all("Paraphrase" in p for p in prompts)
    assert all(any(text in p for p in prompts) for text in texts)
    made = _made(gen_svc, "acme.genvar")
    assert made and all(s["source"] == "generator" for s in made)
    # A variant keeps its seed's label: each is on the seed's side, never the other pole's text.
    assert {(s["text"], s["quality"]) for s in made} <= {
        *((t, 1.0) for t in ANSWERS["formal"]),
        *((t, 0.0) for t in ANSWERS["casual"]),
    }


@pytest.mark.parametrize("failure", ["bad_json", "down"])
def test_a_failing_generator_fails_the_run_and_stores_nothing(
    tmp_path: Path, database_url: str, openai_url: str, failure: str
) -> None:
    _OpenAI.mode, _OpenAI.requests = failure, []
    # "down": a port nothing listens on (the server's own, closed once it is known).
    url = openai_url if failure == "bad_json" else _closed_port_url()
    settings = {"generator_url": url, "generator_model": "tiny-model", "generator_key": KEY}
    with running(tmp_path, database_url=database_url, **settings) as svc:
        _model(svc, "acme.genfail")
        op = _synthesize(svc, "acme.genfail")["last_operation"]
        assert op["status"] == "failed" and op["error"]["code"] == "generator_failed"
        assert ("no chat completion" if failure == "bad_json" else "unreachable") in op["error"]["message"]
        assert KEY not in json.dumps(op)
        assert _made(svc, "acme.genfail") == []
        model = check(svc.client.get("/v1/models/acme.genfail", headers=svc.author), 200)
        assert model["state"] == "draft"


def _closed_port_url() -> str:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _OpenAI)
    port = httpd.server_address[1]
    httpd.server_close()
    return f"http://127.0.0.1:{port}/v1"


def test_without_a_generator_the_openai_package_is_never_imported(fresh_python: FreshPython) -> None:
    # A fresh interpreter: the service's app, its runs and a synthesis through them, without a generator.
    code = (
        "import sys\n"
        "from core.embedders import get_embedder\n"
        "from core.engine import synthesize\n"
        "from core.engine.types import TraitSpec\n"
        "import service.process.api, service.runs.synthesize\n"
        "t = TraitSpec('formality', 'Formality', 'formal', 'casual', '')\n"
        "assert synthesize([t], [], embedder=get_embedder('hashing'), pool=['a text', 'another text'])\n"
        "assert 'openai' not in sys.modules\n"
    )
    fresh_python(code)


def test_generator_settings_go_together_and_keep_the_key_out_of_sight(tmp_path: Path) -> None:
    from service.config.settings import Settings

    with pytest.raises(ValueError, match="set both or neither"):
        Settings.from_env(data_dir=tmp_path, generator_url="http://127.0.0.1:8000/v1")
    with pytest.raises(ValueError, match="absolute http"):
        Settings.from_env(data_dir=tmp_path, generator_url="127.0.0.1:8000", generator_model="m")
    settings = Settings.from_env(
        data_dir=tmp_path, generator_url="http://127.0.0.1:8000/v1", generator_model="m", generator_key=KEY
    )
    assert KEY not in repr(settings) and KEY not in str(settings.model_dump())


def test_synthesizing_again_once_a_generator_is_named_is_a_new_run(
    tmp_path: Path, database_url: str, openai_url: str
) -> None:
    _OpenAI.mode, _OpenAI.requests = "ok", []
    with running(tmp_path, database_url=database_url) as svc:
        _model(svc, "acme.genlater")
        first = _synthesize(svc, "acme.genlater")["last_operation"]
        assert first["status"] == "succeeded" and {s["source"] for s in _made(svc, "acme.genlater")} == {
            "pool"
        }
    settings = {"generator_url": openai_url, "generator_model": "tiny-model"}
    with running(tmp_path, database_url=database_url, **settings) as svc:
        again = _synthesize(svc, "acme.genlater")["last_operation"]
        assert again["run_id"] != first["run_id"] and again["status"] == "succeeded"
        assert "generator" in {s["source"] for s in _made(svc, "acme.genlater")}
        assert _OpenAI.requests and _OpenAI.requests[0]["auth"] is None  # no key: no Authorization header
