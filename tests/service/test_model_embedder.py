"""The embedder chosen per model at create time: recorded, refused when unknown, fixed, and served side by
side with models of another embedder (the service's default here is the hashing embedder)."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update

from core.client.models import Version as ClientVersion
from core.embedders import MINILM_ID, CachedEmbedder, cache_key, get_embedder
from core.embedders.blend import BLEND_ID
from core.embedders.e5 import E5_ID
from core.embedders.e5_quantized import E5_QINT8_ID
from core.embedders.mpnet_quantized import MPNET_QINT8_ID
from core.engine import Scorer
from service.domain.pool_index import parse_embedding_step
from service.store.schema import Model, Version
from tests.support.service import FORMAL, TRAITS, Svc, check, error_code, make_model, train_ready

# Rules beside the store: the SQLite cases cover them (tests/service/conftest.py).
pytestmark = pytest.mark.database_free

TEXTS = [FORMAL[0], "hey whats up, wanna grab pizza later?", "What an awful day, everything went wrong."]


def _scores(svc: Svc, handle: str, version: str | None = None) -> list[dict[str, float]]:
    out = []
    for text in TEXTS:
        body = {"content": text, **({"version": version} if version else {})}
        resp = check(svc.client.post(f"/v1/models/{handle}/score", json=body, headers=svc.scorer), 200)
        out.append({s["trait"]: s["score"] for s in resp["scores"]})
    return out


def _local(svc: Svc, handle: str, version_no: int, embedder_id: str) -> list[dict[str, float]]:
    """The same version scored by the engine directly with the named embedder."""
    v = check(svc.client.get(f"/v1/models/{handle}/versions/v{version_no}", headers=svc.author), 200)
    scorer = Scorer.from_snapshot(v["snapshot"], embedder=get_embedder(embedder_id))
    return [{t: round(x, 6) for t, x in row.items()} for row in scorer.score_dicts(TEXTS)]  # as the API


@pytest.mark.slow
def test_two_models_of_different_embedders_score_side_by_side(svc: Svc) -> None:
    c, h = svc.client, svc.author
    default = make_model(c, h, "acme.emb-default")
    chosen = make_model(c, h, "acme.emb-minilm", embedder="minilm")
    assert default["embedder"] == "hashing-v1-512" and chosen["embedder"] == MINILM_ID
    assert check(c.get("/v1/models/acme.emb-minilm", headers=h), 200)["embedder"] == MINILM_ID

    train_ready(c, h, "acme.emb-default")
    before = _scores(svc, "acme.emb-default")
    train_ready(c, h, "acme.emb-minilm")
    metrics = {
        handle: check(c.get(f"/v1/models/{handle}/versions/v1", headers=h), 200)["metrics"]
        for handle in ("acme.emb-default", "acme.emb-minilm")
    }
    assert metrics["acme.emb-default"]["embedder"] == "hashing-v1-512"
    assert metrics["acme.emb-minilm"]["embedder"] == MINILM_ID

    # Each model scores with its own embedder, exactly as the engine does locally with that embedder.
    minilm_scores = _scores(svc, "acme.emb-minilm")
    local = _local(svc, "acme.emb-minilm", 1, MINILM_ID)  # the service's 1-thread session: last bits may vary
    assert [sorted(r) for r in minilm_scores] == [sorted(r) for r in local]
    for got, want in zip(minilm_scores, local, strict=True):
        assert got == pytest.approx(want, abs=2e-6)
    assert _scores(svc, "acme.emb-default") == before == _local(svc, "acme.emb-default", 1, "hashing")
    assert minilm_scores != before  # different vectors, so different scores
    # The MiniLM model's own training embedded with MiniLM: formal text scores high on formality there.
    assert minilm_scores[0]["formality"] > minilm_scores[1]["formality"]


def test_a_model_from_before_the_field_keeps_the_default_and_its_scores(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.emb-old")
    with svc.ctx.sessions() as s, s.begin():  # as the migration leaves rows created before the field
        s.execute(update(Model).where(Model.handle == "acme.emb-old").values(embedder=None))
    assert check(c.get("/v1/models/acme.emb-old", headers=h), 200)["embedder"] is None
    train_ready(c, h, "acme.emb-old")
    v1 = _scores(svc, "acme.emb-old", "v1")
    metrics = check(c.get("/v1/models/acme.emb-old/versions/v1", headers=h), 200)["metrics"]
    assert metrics["embedder"] == "hashing-v1-512"  # the service's default
    make_model(c, h, "acme.emb-new")  # created with the field: the same default, named
    train_ready(c, h, "acme.emb-new")
    assert _scores(svc, "acme.emb-new") == v1  # same embedder, same samples: the same version
    assert _scores(svc, "acme.emb-old", "v1") == v1


def test_a_version_names_its_embedder_and_the_embedders_training_compared(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.emb-embedder")
    train_ready(c, h, "acme.emb-embedder")
    traits = check(c.get("/v1/models/acme.emb-embedder/versions/v1", headers=h), 200)["metrics"]["traits"]
    figures = {
        f: sum(t[f] for t in traits.values()) / len(traits) for f in ("roc_auc", "roc_auc_se")
    }  # the version's out-of-fold figure and its standard error: the mean over its traits
    one_embedder: dict[str, object] = {
        "embedder": "hashing-v1-512",
        "name": "hashing",
        "candidates": None,
        "left_out_for_language": [],
        "not_compared": [],
        "not_compared_because": None,
        "compared_on": None,
        "tie": None,
        **figures,
    }
    one = check(c.get("/v1/models/acme.emb-embedder/versions/v1", headers=h), 200)
    assert one["embedder"] == one_embedder and one["body"] == one_embedder  # `body`: its first name, kept
    assert (
        check(c.get("/v1/models/acme.emb-embedder/versions", headers=h), 200)["items"][0]["embedder"]
        == one_embedder
    )
    # A version trained on the embedder training chose records the choice in its metrics
    # (ChosenEmbedder.as_json): here one stored before the blend (as `body_choice`), where e5-small was kept
    # on a lead of mpnet-base within the tie, and on labels so few that the figure's standard error is about
    # 0.1.
    choice = {
        "chosen": E5_QINT8_ID,
        "tie": 0.02,
        "candidates": [
            {"embedder": E5_QINT8_ID, "roc_auc": 0.811, "roc_auc_se": 0.1},
            {"embedder": MPNET_QINT8_ID, "roc_auc": 0.813},
        ],
        "left_out_for_language": [],
    }
    with svc.ctx.sessions() as s, s.begin():
        version = s.scalar(select(Version).join(Model).where(Model.handle == "acme.emb-embedder"))
        assert version is not None
        version.metrics = {**version.metrics, "embedder": E5_QINT8_ID, "body_choice": choice}
    embedder = check(c.get("/v1/models/acme.emb-embedder/versions/v1", headers=svc.scorer), 200)["embedder"]
    assert embedder == {
        "embedder": E5_QINT8_ID,
        "name": "e5-small-qint8",
        "candidates": [
            {"embedder": E5_QINT8_ID, "name": "e5-small-qint8", "roc_auc": 0.811, "roc_auc_se": 0.1},
            {"embedder": MPNET_QINT8_ID, "name": "mpnet-base", "roc_auc": 0.813, "roc_auc_se": None},
        ],
        "left_out_for_language": [],
        "not_compared": [],
        "not_compared_because": None,
        "compared_on": None,
        "tie": 0.02,
        **figures,
    }
    parsed = ClientVersion.model_validate(
        check(c.get("/v1/models/acme.emb-embedder/versions/v1", headers=h), 200)
    )
    assert parsed.embedder_words == (
        "trained on e5-small-qint8: out-of-fold 0.81 against 0.81 on mpnet-base (mpnet-base led by 0.002, "
        "under the 0.02 a switch needs; few labels: the out-of-fold figure is ± 0.10, a rough guide)"
    )
    # One stored then that compared nothing (its own figure recorded as the one candidate, with a tie and a
    # count) reads as what was done: the version's figure, no comparison.
    kept = {**choice, "candidates": choice["candidates"][:1], "compared_on": 24}  # type: ignore[index]
    kept |= {"not_compared": [MPNET_QINT8_ID], "not_compared_because": "short texts"}
    with svc.ctx.sessions() as s, s.begin():
        version = s.scalar(select(Version).join(Model).where(Model.handle == "acme.emb-embedder"))
        assert version is not None
        version.metrics = {**version.metrics, "body_choice": kept}
    embedder = check(c.get("/v1/models/acme.emb-embedder/versions/v1", headers=svc.scorer), 200)["embedder"]
    assert embedder["candidates"] == [
        {"embedder": E5_QINT8_ID, "name": "e5-small-qint8", "roc_auc": 0.811, "roc_auc_se": 0.1}
    ]
    assert embedder["tie"] is None and embedder["compared_on"] is None
    assert embedder["not_compared_because"] == "short texts"


def test_e5_small_is_a_choice_by_name_or_id(svc: Svc) -> None:
    c, h = svc.client, svc.author
    by_name = make_model(c, h, "acme.emb-e5", with_data=False, embedder="e5-small")
    by_id = make_model(c, h, "acme.emb-e5-id", with_data=False, embedder=E5_ID)
    assert by_name["embedder"] == by_id["embedder"] == E5_ID == "e5-small-q4@1571fc98"
    assert check(c.get("/v1/models/acme.emb-e5", headers=h), 200)["embedder"] == E5_ID
    prop = svc.app.openapi()["components"]["schemas"]["ModelCreate"]["properties"]["embedder"]
    assert {"e5-small", E5_ID} <= set(next(o["enum"] for o in prop["anyOf"] if "enum" in o))


@pytest.mark.parametrize(
    "value",
    [
        "bge-small-en-v1.5",
        "default",
        "",
        "MINILM",
        3,
        "hashing-v1-64",
        "e5-small-q4@00000000",
        "e5",
        "hashing",
    ],
)
def test_unknown_embedders_are_refused(svc: Svc, value: object) -> None:
    body = {"handle": "acme.emb-bad", "embedder": value}
    resp = svc.client.post("/v1/models", json=body, headers=svc.author)
    assert error_code(resp, 422) == "validation_error"
    assert any("embedder" in d["loc"] for d in resp.json()["error"]["details"])
    assert svc.client.get("/v1/models/acme.emb-bad", headers=svc.author).status_code == 404


def test_the_embedder_cannot_be_patched(svc: Svc) -> None:
    c, h = svc.client, svc.author
    make_model(c, h, "acme.emb-fixed", with_data=False)  # the service's embedder: the tests' hashing
    resp = c.patch("/v1/models/acme.emb-fixed", json={"embedder": "minilm"}, headers=h)
    assert error_code(resp, 422) == "immutable_field"
    assert check(c.get("/v1/models/acme.emb-fixed", headers=h), 200)["embedder"] == "hashing-v1-512"


# Texts of 12+ words: an `auto` model trains on both embedders
# (core.engine.embedder_choice.blend_refused_because).
_PLACES = ["hotel", "cafe", "bakery", "museum", "cinema", "garage", "library", "gym", "market", "clinic"]
_GOOD = ["lovely", "helpful", "spotless", "friendly", "quick"]
_BAD = ["rude", "filthy", "slow", "broken", "useless"]


def _long(place: str, word: str, i: int, good: bool) -> str:
    verdict = "I will happily come back next month" if good else "I will never set foot in it again"
    return f"Our visit number {i} to the {place} was {word} from start to end, and {verdict}."


def _long_samples(per_pole: int) -> list[dict[str, object]]:
    out = []
    for i in range(per_pole):
        place = _PLACES[i % len(_PLACES)]
        out.append({"trait": "sentiment", "text": _long(place, _GOOD[i % 5], i, True), "quality": 1.0})
        out.append({"trait": "sentiment", "text": _long(place, _BAD[i % 5], i, False), "quality": 0.0})
    return out


def _short_samples() -> list[dict[str, object]]:
    """Texts of one or two words: `auto` keeps e5-small alone."""
    good = ["great", "lovely", "so kind", "perfect", "thanks", "brilliant"]
    bad = ["awful", "rude", "so slow", "broken", "useless", "terrible"]
    return [{"trait": "sentiment", "text": t, "quality": 1.0} for t in good] + [
        {"trait": "sentiment", "text": t, "quality": 0.0} for t in bad
    ]


def _embedder(svc: Svc, handle: str) -> dict[str, object]:
    embedder: dict[str, object] = check(
        svc.client.get(f"/v1/models/{handle}/versions/v1", headers=svc.author), 200
    )["embedder"]
    return embedder


def test_an_auto_model_on_short_texts_keeps_e5_without_embedding_with_mpnet(svc: Svc) -> None:
    """`auto` is a setting the model keeps; on texts of one or two words training keeps e5-small and says
    why it did not take both embedders; suggestions and previews then read texts with the embedder the version
    serves on."""
    from core.embedders.mpnet_source import installed

    assert installed()  # the install fetched the second embedder (Makefile, docs/embedders.md)
    c, h = svc.client, svc.author
    assert make_model(c, h, "acme.emb-auto", with_data=False, embedder="auto")["embedder"] == "auto"
    check(c.post("/v1/models/acme.emb-auto/traits", json={"traits": TRAITS[1:]}, headers=h), 201)
    check(c.post("/v1/models/acme.emb-auto/samples", json={"samples": _short_samples()}, headers=h), 201)
    train_ready(c, h, "acme.emb-auto")
    assert check(c.get("/v1/models/acme.emb-auto", headers=h), 200)["embedder"] == "auto"
    embedder = _embedder(svc, "acme.emb-auto")
    assert embedder["embedder"] == E5_QINT8_ID and embedder["not_compared"] == [
        {"embedder": BLEND_ID, "name": "blend"}
    ]
    assert embedder["not_compared_because"] == "short texts: a median of 1 words, under 3"
    candidates = embedder["candidates"]
    assert isinstance(candidates, list) and [x["embedder"] for x in candidates] == [E5_QINT8_ID]
    assert 0.5 <= candidates[0]["roc_auc"] <= 1.0  # the one embedder's out-of-fold figure
    version = ClientVersion.model_validate(
        check(c.get("/v1/models/acme.emb-auto/versions/v1", headers=h), 200)
    )
    se = candidates[0]["roc_auc_se"]  # the words say few labels only where the figure is that loose
    few = f"few labels: the out-of-fold figure is ± {se:.2f}, a rough guide; " if se and se > 0.05 else ""
    assert version.embedder_words == (
        f"trained on e5-small-qint8 ({few}not on both embedders: short texts: a median of 1 words, under 3)"
    )
    local = _local(svc, "acme.emb-auto", 1, E5_QINT8_ID)  # the service's 1-thread session: last bits vary
    for got, want in zip(_scores(svc, "acme.emb-auto"), local, strict=True):
        assert got == pytest.approx(want, abs=2e-6)
    preview = {
        "trait": {"name": "Tone", "positive_label": "calm", "negative_label": "angry"},
        "texts": ["ok"],
    }
    answer = check(c.post("/v1/models/acme.emb-auto/traits/preview", json=preview, headers=h), 200)
    assert answer["embedder"] == E5_QINT8_ID


@pytest.mark.slow
def test_an_auto_model_on_long_english_texts_trains_on_both_embedders(svc: Svc) -> None:
    """With 40 labelled reviews a pole of 12+ words, training trains a model on each embedder and serves the
    mean of their scores, through the score route and Perspective's `analyze` alike, as the local engine
    scores the version's snapshot offline; the version says so with each embedder's figure."""
    c, h = svc.client, svc.author
    make_model(c, h, "acme.emb-long", with_data=False, embedder="auto")
    check(c.post("/v1/models/acme.emb-long/traits", json={"traits": TRAITS[1:]}, headers=h), 201)
    check(c.post("/v1/models/acme.emb-long/samples", json={"samples": _long_samples(40)}, headers=h), 201)
    train_ready(c, h, "acme.emb-long")
    embedder = _embedder(svc, "acme.emb-long")
    candidates = embedder["candidates"]
    assert embedder["embedder"] == BLEND_ID and embedder["name"] == "blend"
    assert isinstance(candidates, list) and [x["embedder"] for x in candidates] == [
        BLEND_ID,
        E5_QINT8_ID,
        MPNET_QINT8_ID,
    ]
    assert all(0.5 <= x["roc_auc"] <= 1.0 for x in candidates) and embedder["not_compared_because"] is None
    version = check(c.get("/v1/models/acme.emb-long/versions/v1", headers=h), 200)
    assert (
        version["metrics"]["embedder"] == BLEND_ID
        and version["snapshot"]["scoring_method"] == "blend_of_embedders"
    )
    # Nothing was compared: the record keeps the version's figures, no tie or count of a comparison.
    assert not {"candidates", "tie", "compared_on"} & version["metrics"]["embedder_choice"].keys()
    assert embedder["tie"] is None and embedder["compared_on"] is None
    words = ClientVersion.model_validate(version).embedder_words
    assert words.startswith(
        "trained on both embedders (e5-small-qint8 and mpnet-base, the mean of their scores)"
    )
    new = "The staff at the bakery were friendly and quick, and I will happily come back next month."
    out = check(c.post("/v1/models/acme.emb-long/score", json={"content": new}, headers=svc.scorer), 200)
    offline = Scorer.from_snapshot(version["snapshot"]).score([new])[0, 0]  # the registry's own embedders
    assert out["scores"][0]["score"] == pytest.approx(offline, abs=2e-6) and offline > 0.5
    request = {
        "comment": {"text": new},
        "requestedAttributes": {"SENTIMENT": {}},
        "model": "acme.emb-long",
        "languages": ["en"],
    }
    analyzed = check(c.post("/v1alpha1/comments:analyze", json=request, headers=svc.scorer), 200)
    assert analyzed["attributeScores"]["SENTIMENT"]["summaryScore"]["value"] == out["scores"][0]["score"]
    request["languages"] = ["de"]  # the blend reads English only, as mpnet-base does
    assert c.post("/v1alpha1/comments:analyze", json=request, headers=svc.scorer).status_code == 400


def test_an_auto_model_of_another_language_keeps_e5_alone(svc: Svc) -> None:
    """Long samples, but in German: mpnet-base reads English only, so training keeps e5-small alone and the
    version says why; nothing is embedded with mpnet-base."""
    c, h = svc.client, svc.author
    make_model(c, h, "acme.emb-de", with_data=False, embedder="auto")
    check(c.post("/v1/models/acme.emb-de/traits", json={"traits": TRAITS[1:]}, headers=h), 201)
    good = (
        "Der Besuch im Hotel war von Anfang bis Ende wunderbar und ich komme gerne im nächsten Monat wieder"
    )
    bad = "Der Besuch im Hotel war von Anfang bis Ende schrecklich und ich werde nie wieder dorthin gehen"
    rows = [{"trait": "sentiment", "text": f"{good}, Nummer {i}.", "quality": 1.0} for i in range(32)]
    rows += [{"trait": "sentiment", "text": f"{bad}, Nummer {i}.", "quality": 0.0} for i in range(32)]
    check(c.post("/v1/models/acme.emb-de/samples", json={"samples": rows}, headers=h), 201)
    train_ready(c, h, "acme.emb-de")
    embedder = _embedder(svc, "acme.emb-de")
    assert embedder["embedder"] == E5_QINT8_ID and embedder["not_compared"] == [
        {"embedder": BLEND_ID, "name": "blend"}
    ]
    assert embedder["not_compared_because"] == "most samples are not in English, which mpnet-base reads"


def test_an_auto_model_in_a_new_embedder_has_its_pool_embedded_again(idle_svc: Svc) -> None:
    """When a training moves an `auto` model to another embedder, the workers embed its pool again in that
    embedder, as after an import, so its next suggestions read the pool from the cache."""
    svc = idle_svc
    c, h = svc.client, svc.author

    def train() -> None:
        run = check(c.post("/v1/models/acme.emb-move/train", json={"effort": "low"}, headers=h), 202)
        svc.ctx.executor.execute(run["run_id"])

    make_model(c, h, "acme.emb-move", with_data=False, embedder="auto")
    check(c.post("/v1/models/acme.emb-move/traits", json={"traits": TRAITS[1:]}, headers=h), 201)
    check(c.post("/v1/models/acme.emb-move/samples", json={"samples": _short_samples()}, headers=h), 201)
    train()  # short texts: kept on e5-small, as before it had a version
    assert not [t for t in svc.ctx.huey.pending() if parse_embedding_step(t.args[0])]
    with svc.ctx.sessions() as s, s.begin():  # as if v1 had kept another embedder
        version = s.scalar(select(Version).join(Model).where(Model.handle == "acme.emb-move"))
        assert version is not None
        version.metrics = {**version.metrics, "embedder": "hashing-v1-512"}
    pool = [f"A text of the pool, number {i}, waiting for its label." for i in range(5)]
    ids = check(c.post("/v1/models/acme.emb-move/pool", json={"texts": pool}, headers=h), 201)["ids"]
    e5 = svc.ctx.embedders.get(E5_QINT8_ID)
    assert isinstance(e5, CachedEmbedder)
    keys = [cache_key(E5_QINT8_ID, t) for t in pool]
    for task in svc.ctx.huey.pending():  # the import's step: in the embedder v1 serves on
        svc.ctx.executor.execute(task.args[0])
    svc.ctx.huey.flush()
    assert not e5.store.get_many(keys)

    new = {"trait": "sentiment", "text": "superb", "quality": 1.0}
    check(c.post("/v1/models/acme.emb-move/reopen", headers=h), 200)
    check(c.post("/v1/models/acme.emb-move/samples", json={"samples": [new]}, headers=h), 201)
    train()  # e5-small again: another embedder than v1's
    steps = [t.args[0] for t in svc.ctx.huey.pending() if parse_embedding_step(t.args[0])]
    assert [parse_embedding_step(step)[1:] for step in steps] == [(min(ids), max(ids))]  # type: ignore[index]
    for step in steps:
        svc.ctx.executor.execute(step)
    assert set(e5.store.get_many(keys)) == set(keys)
