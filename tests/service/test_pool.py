"""The unlabelled pool and suggestions through the real service: import, paging, delete, auth, ZDR."""

from __future__ import annotations

from typing import Any

from core.embedders import CachedEmbedder, cache_key
from service.domain.pool_index import parse_embedding_step
from tests.support.service import CASUAL, FORMAL, Svc, check, error_code, make_model, train_ready

UNLABELLED = [
    "Dear colleagues, the board requests your attendance at the annual meeting.",
    "We kindly ask that you submit the signed forms by Friday.",
    "Yours faithfully, the management.",
    "sup dude, pizza tonight?",
    "haha no way, thats nuts",
    "brb grabbing coffee lol",
    "The weather report for tomorrow predicts rain in the north.",
    "Invoice 4471 is attached; payment is due within thirty days.",
]


def _pool(svc: Svc, handle: str, **params: Any) -> dict[str, Any]:
    return check(svc.client.get(f"/v1/models/{handle}/pool", params=params, headers=svc.author), 200)


def test_import_page_and_delete(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.pool", with_data=False)
    texts = [f"unlabelled text number {i}" for i in range(25)]
    added = check(c.post("/v1/models/acme.pool/pool", json={"texts": texts}, headers=h), 201)
    assert added["added"] == 25 and len(set(added["ids"])) == 25
    # Re-importing (trimmed the same) adds nothing and returns the stored ids, in input order.
    again = check(
        c.post(
            "/v1/models/acme.pool/pool", json={"texts": [f"  {texts[3]} ", texts[0], texts[0]]}, headers=h
        ),
        201,
    )
    assert again == {
        "ids": [added["ids"][3], added["ids"][0], added["ids"][0]],
        "added": 0,
        "in_evaluation_set": 0,
        "duplicates": [0, 1, 2],  # in the pool before (each position that added nothing)
        "labelled": 0,
    }

    seen: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = _pool(svc, "acme.pool", limit=10, **({"cursor": cursor} if cursor else {}))
        assert page["total"] == 25 and page["limit"] == 10
        seen += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert [p["text"] for p in seen] == texts and [p["id"] for p in seen] == added["ids"]
    assert error_code(c.get("/v1/models/acme.pool/pool", params={"cursor": "forged"}, headers=h), 400) == (
        "invalid_cursor"
    )

    first = added["ids"][0]
    assert check(c.delete(f"/v1/models/acme.pool/pool/{first}", headers=h), 200) == {
        "handle": "acme.pool",
        "id": first,
        "deleted": True,
    }
    assert error_code(c.delete(f"/v1/models/acme.pool/pool/{first}", headers=h), 404) == "pool_text_not_found"
    assert _pool(svc, "acme.pool")["total"] == 24
    assert check(c.delete("/v1/models/acme.pool/pool", headers=h), 200) == {
        "handle": "acme.pool",
        "deleted": 24,
    }
    empty = {"items": [], "limit": 100, "next_cursor": None, "total": 0, "in_evaluation_set": 0}
    assert _pool(svc, "acme.pool") == empty


def test_bad_imports_store_nothing(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.badpool", with_data=False)
    for body, code in (
        ({"texts": []}, "validation_error"),
        ({"texts": ["fine", "   "]}, "empty_text"),
        ({"texts": ["fine", "x" * 20_001]}, "text_too_long"),
        ({"texts": ["fine", 3]}, "validation_error"),
        ({"texts": ["t"] * 1001}, "validation_error"),
        ({"texts": ["fine"], "extra": 1}, "unknown_field"),
    ):
        resp = c.post("/v1/models/acme.badpool/pool", json=body, headers=h)
        assert error_code(resp, 422) == code, body
    bad = c.post("/v1/models/acme.badpool/pool", json={"texts": ["fine", "   "]}, headers=h)
    assert bad.json()["error"]["details"][0]["loc"] == ["body", "texts", 1]
    assert _pool(svc, "acme.badpool")["total"] == 0


def test_pool_auth(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.guarded")
    url = "/v1/models/acme.guarded/pool"
    body = {"texts": ["a text to label"]}
    suggest = {"trait": "formality"}
    assert error_code(c.post(url, json=body), 401) == "unauthorized"
    assert error_code(c.get(url), 401) == "unauthorized"
    assert error_code(c.delete(url), 401) == "unauthorized"
    assert error_code(c.post(f"{url}/suggest", json=suggest), 401) == "unauthorized"
    for resp in (
        c.post(url, json=body, headers=svc.scorer),
        c.get(url, headers=svc.scorer),
        c.delete(url, headers=svc.scorer),
        c.delete(f"{url}/1", headers=svc.scorer),
        c.post(f"{url}/suggest", json=suggest, headers=svc.scorer),
    ):
        assert error_code(resp, 403) == "forbidden"
    for resp in (
        c.post(url, json=body, headers=svc.other),
        c.get(url, headers=svc.other),
        c.delete(url, headers=svc.other),
        c.post(f"{url}/suggest", json=suggest, headers=svc.other),
    ):
        assert error_code(resp, 404) == "model_not_found"
    make_model(c, svc.publisher, "public.pooled")
    assert error_code(c.post("/v1/models/public.pooled/pool", json=body, headers=h), 403) == "forbidden"
    assert error_code(c.delete("/v1/models/public.pooled/pool", headers=h), 403) == "forbidden"
    assert _pool(svc, "acme.guarded")["total"] == 0


def test_zero_data_retention_refuses_and_purges(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.zdrpool", with_data=False, zero_data_retention=True)
    resp = c.post("/v1/models/acme.zdrpool/pool", json={"texts": ["secret"]}, headers=h)
    assert error_code(resp, 409) == "zero_data_retention"
    assert _pool(svc, "acme.zdrpool")["total"] == 0

    make_model(c, h, "acme.laterzdr", with_data=False)
    check(c.post("/v1/models/acme.laterzdr/pool", json={"texts": UNLABELLED}, headers=h), 201)
    assert _pool(svc, "acme.laterzdr")["total"] == len(UNLABELLED)
    check(c.patch("/v1/models/acme.laterzdr", json={"zero_data_retention": True}, headers=h), 200)
    assert _pool(svc, "acme.laterzdr")["total"] == 0


def test_suggestions_exclude_labelled_and_near_duplicates(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.suggest")
    labelled = FORMAL[:2] + CASUAL[:2]
    pool = UNLABELLED + labelled + [UNLABELLED[0] + " ", UNLABELLED[1].upper()]
    added = check(c.post("/v1/models/acme.suggest/pool", json={"texts": pool}, headers=h), 201)
    assert added["added"] == len(pool) - 1  # the trimmed copy is the same text

    url = "/v1/models/acme.suggest/pool/suggest"
    for mode in ("auto", "typical", "diverse", "uncertain", "positive", "negative"):
        got = check(c.post(url, json={"trait": "formality", "k": 20, "mode": mode}, headers=h), 200)
        texts = [item["text"] for item in got["items"]]
        assert got["trait"] == "formality" and got["pool_size"] == len(pool) - 1 and got["labelled"] == 12
        assert got["unlabelled"] == len(pool) - 1 - len(labelled)  # the pool texts left to label
        assert not set(texts) & set(labelled), mode  # labelled texts are never suggested
        assert len(texts) == len(set(texts))
        assert not (UNLABELLED[1] in texts and UNLABELLED[1].upper() in texts), mode  # near-duplicates once
        # `auto` answers with what it used: typical texts, margins, or a mix of both ("auto").
        assert got["mode"] in ({"typical", "uncertain", "auto"} if mode == "auto" else {mode})
        assert all(item["score"] is not None for item in got["items"])  # both poles labelled: a fit
    positive = check(c.post(url, json={"trait": "formality", "k": 2, "mode": "positive"}, headers=h), 200)
    negative = check(c.post(url, json={"trait": "formality", "k": 2, "mode": "negative"}, headers=h), 200)
    assert positive["items"][0]["score"] > negative["items"][0]["score"]
    uncertain = check(c.post(url, json={"trait": "formality", "k": 4, "mode": "uncertain"}, headers=h), 200)
    for side in (True, False):  # the two sides of the boundary alternate, each in margin order
        margins = [abs(i["score"] - 0.5) for i in uncertain["items"] if (i["score"] > 0.5) == side]
        assert margins and margins == sorted(margins)

    # A label given to a suggestion removes it from the next suggestions.
    first = check(c.post(url, json={"trait": "formality", "k": 1}, headers=h), 200)["items"][0]
    check(
        c.post(
            "/v1/models/acme.suggest/samples",
            json={"samples": [{"trait": "formality", "text": first["text"], "quality": 1.0}]},
            headers=h,
        ),
        201,
    )
    after = check(c.post(url, json={"trait": "formality", "k": 20}, headers=h), 200)
    assert first["id"] not in {i["id"] for i in after["items"]} and after["labelled"] == 13
    assert after["unlabelled"] == len(pool) - 1 - len(labelled) - 1  # one fewer left to label

    assert error_code(c.post(url, json={"trait": "nope"}, headers=h), 422) == "unknown_trait"
    assert (
        error_code(c.post(url, json={"trait": "formality", "mode": "best"}, headers=h), 422)
        == "validation_error"
    )
    assert error_code(c.post(url, json={"trait": "formality", "k": 0}, headers=h), 422) == "validation_error"


def test_ready_model_keeps_a_pool_and_counts_feedback(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.readypool")
    train_ready(c, h, "acme.readypool")
    check(c.post("/v1/models/acme.readypool/pool", json={"texts": UNLABELLED}, headers=h), 201)
    target = UNLABELLED[2]
    check(
        c.post(
            "/v1/models/acme.readypool/score",
            json={"content": target, "feedback": [{"trait": "formality", "quality": 1.0}]},
            headers=h,
        ),
        200,
    )
    got = check(
        c.post("/v1/models/acme.readypool/pool/suggest", json={"trait": "formality", "k": 20}, headers=h), 200
    )
    assert target not in {i["text"] for i in got["items"]}
    assert got["labelled"] == 13


def test_import_stores_at_once_and_the_worker_embeds_later(idle_svc: Svc, monkeypatch: Any) -> None:
    """An import stores its texts and answers without embedding one (embedding took twenty times as long as
    storing, in the request); it leaves the worker one step that puts the new texts in the embedding cache.
    Suggestions are right before that step has run (they embed what is missing) and after it (every pool text
    is read from the cache)."""
    svc = idle_svc
    c, h = svc.client, svc.author
    make_model(c, h, "acme.later")
    encoded: list[str] = []
    real_get = svc.ctx.embedders.get

    class Probe:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

        def encode(self, texts: list[str]) -> Any:
            encoded.extend(texts)
            return self.inner.encode(texts)

    monkeypatch.setattr(svc.ctx.embedders, "get", lambda *a, **k: Probe(real_get(*a, **k)))
    first, rest = UNLABELLED[:4], UNLABELLED[4:]
    check(c.post("/v1/models/acme.later/pool", json={"texts": first}, headers=h), 201)
    assert encoded == []
    url = "/v1/models/acme.later/pool/suggest"
    early = check(c.post(url, json={"trait": "formality", "k": 20}, headers=h), 200)
    assert {i["text"] for i in early["items"]} == set(first) and early["pool_size"] == len(first)

    encoded.clear()
    added = check(c.post("/v1/models/acme.later/pool", json={"texts": rest + first[:1]}, headers=h), 201)
    assert added["added"] == len(rest) and encoded == []
    new_ids = added["ids"][: len(rest)]
    steps = [parse_embedding_step(t.args[0]) for t in svc.ctx.huey.pending()]
    assert steps[-1] is not None and steps[-1][1:] == (min(new_ids), max(new_ids))  # only the texts added
    cached = real_get()
    assert isinstance(cached, CachedEmbedder)
    keys = [cache_key(cached.id, t) for t in rest]
    assert not cached.store.get_many(keys)
    for task in svc.ctx.huey.pending():
        svc.ctx.executor.execute(task.args[0])
    assert set(cached.store.get_many(keys)) == set(keys)

    misses = cached.misses
    late = check(c.post(url, json={"trait": "formality", "k": 20}, headers=h), 200)
    assert {i["text"] for i in late["items"]} == set(UNLABELLED) and late["pool_size"] == len(UNLABELLED)
    assert cached.misses == misses  # nothing left to embed


def test_an_import_counts_the_texts_labelled_already(svc: Svc) -> None:
    """Texts of the model's samples go into the pool all the same, and the answer says how many of those
    added are labelled already (they are never suggested for the trait they are labelled for)."""
    c, h = svc.client, svc.author
    make_model(c, h, "acme.known")
    labelled = FORMAL[:2] + CASUAL[:1]
    added = check(
        c.post(
            "/v1/models/acme.known/pool", json={"texts": [*labelled, UNLABELLED[0], labelled[0]]}, headers=h
        ),
        201,
    )
    assert (added["added"], added["labelled"], added["duplicates"]) == (4, 3, [4])
    again = check(c.post("/v1/models/acme.known/pool", json={"texts": labelled}, headers=h), 201)
    assert (again["added"], again["labelled"]) == (0, 0)  # counted among the texts added, once
