"""The demo models in sample_data/: well-formed, balanced, and separable by the local engine."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sklearn.metrics import roc_auc_score

from core.contract import pole_of
from core.demo import (
    SAMPLE_DATA_DIR,
    DemoDataError,
    DemoModel,
    demo_slugs,
    read_demo_model,
    read_manifest,
)

MIN_PER_POLE = 40
MIN_AUC = 0.75
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
SLUGS = demo_slugs()


def trait_key(name: str) -> str:
    """The service's key rule (docs/api.md), so engine metrics are keyed as the service keys them."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:48] or "trait"


@pytest.fixture(scope="module", params=SLUGS)
def demo(request: pytest.FixtureRequest) -> DemoModel:
    return read_demo_model(request.param)


def test_manifest_lists_every_folder_with_one_draft() -> None:
    entries = read_manifest()
    folders = sorted(p.name for p in SAMPLE_DATA_DIR.iterdir() if p.is_dir())
    assert sorted(SLUGS) == folders
    assert len(set(SLUGS)) == len(SLUGS) == 3
    roles = [e.on_first_start for e in entries]
    assert roles.count("draft") == 1
    assert roles.count("train_and_tag") >= 1
    for entry in entries:
        if entry.on_first_start == "train_and_tag":
            # Tag rule from docs/api.md: not of the form v<digits>.
            assert entry.tag and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", entry.tag)
            assert not re.fullmatch(r"v\d+", entry.tag)


def test_model_json_is_complete(demo: DemoModel) -> None:
    assert NAME_RE.match(demo.name)
    assert demo.description.strip() and demo.readme_markdown.strip()
    names = [t["name"] for t in demo.traits]
    assert len(names) == len(set(names)) >= 2
    for trait in demo.traits:
        for field in ("name", "positive_label", "negative_label"):
            assert 1 <= len(trait[field]) <= 100
        assert trait["positive_label"] != trait["negative_label"]
        assert trait["description"].strip()
    # Trait keys must not collide, or the service would rename one with a _2 suffix.
    assert len({trait_key(n) for n in names}) == len(names)


def test_every_trait_has_both_poles(demo: DemoModel) -> None:
    for trait in demo.traits:
        qualities = [s["quality"] for s in demo.samples if s["trait"] == trait["name"]]
        poles = [pole_of(q) for q in qualities]  # as the API counts them
        assert poles.count("positive") >= MIN_PER_POLE, trait["name"]
        assert poles.count("negative") >= MIN_PER_POLE, trait["name"]
    assert {s["trait"] for s in demo.samples} == {t["name"] for t in demo.traits}


def test_samples_are_clean(demo: DemoModel) -> None:
    for s in demo.samples:
        assert 0.0 <= s["quality"] <= 1.0
        text = s["text"]
        assert text and text == text.strip() and "\n" not in text
        assert len(text) <= 400  # one to three sentences


def test_texts_are_unique_across_all_demo_models() -> None:
    texts = [s["text"].lower() for slug in SLUGS for s in read_demo_model(slug).samples]
    duplicates = sorted({t for t in texts if texts.count(t) > 1})
    assert not duplicates


def test_length_alone_does_not_predict_the_pole(demo: DemoModel) -> None:
    for trait in demo.traits:
        rows = [s for s in demo.samples if s["trait"] == trait["name"]]
        poles = [pole_of(s["quality"]) for s in rows]
        on = [(p == "positive", len(s["text"])) for p, s in zip(poles, rows, strict=True) if p != "neutral"]
        auc = roc_auc_score([positive for positive, _ in on], [length for _, length in on])
        assert 0.2 <= auc <= 0.8, (trait["name"], auc)


@pytest.mark.parametrize("effort", ["low", "medium"])
def test_local_engine_separates_every_trait(demo: DemoModel, effort: str) -> None:
    from core.embedders import get_embedder
    from core.engine import train
    from core.engine.types import Sample, TraitSpec

    specs = [
        TraitSpec(
            key=trait_key(t["name"]),
            name=t["name"],
            positive_label=t["positive_label"],
            negative_label=t["negative_label"],
            description=t["description"],
        )
        for t in demo.traits
    ]
    key_of = {spec.name: spec.key for spec in specs}
    samples = [Sample(trait=key_of[s["trait"]], text=s["text"], quality=s["quality"]) for s in demo.samples]
    result = train(specs, samples, embedder=get_embedder("hashing"), effort=effort)
    aucs = {spec.name: result.metrics[spec.key]["roc_auc"] for spec in specs}
    assert all(auc is not None and auc >= MIN_AUC for auc in aucs.values()), aucs
    # Held-out scores of the positive pole sit above those of the negative pole on average.
    assert all(result.metrics[spec.key]["discrimination"] > 0.1 for spec in specs)


def _write_model(root: Path, csv_text: str, *, quality_header: str = "quality") -> None:
    folder = root / "tiny"
    folder.mkdir(parents=True)
    traits = [{"name": "Tone", "positive_label": "warm", "negative_label": "cold", "description": ""}]
    doc = {"name": "tiny", "description": "d", "readme_markdown": "r", "traits": traits}
    (folder / "model.json").write_text(json.dumps(doc), encoding="utf-8")
    (folder / "samples.csv").write_text(f"trait,text,{quality_header}\n{csv_text}", encoding="utf-8")
    manifest = {"models": [{"slug": "tiny", "on_first_start": "draft"}]}
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_read_demo_model_from_another_folder(tmp_path: Path) -> None:
    _write_model(tmp_path, 'Tone,"Hello, friend!",1.0\nTone,Go away.,0\n')
    assert demo_slugs(tmp_path) == ["tiny"]
    model = read_demo_model("tiny", tmp_path)
    assert model.samples == [
        {"trait": "Tone", "text": "Hello, friend!", "quality": 1.0},
        {"trait": "Tone", "text": "Go away.", "quality": 0.0},
    ]


@pytest.mark.parametrize(
    ("rows", "header", "message"),
    [
        ("Mood,Hi.,1.0\n", "quality", "not in model.json"),
        ("Tone,Hi.,high\n", "quality", "not a number"),
        ("Tone,Hi.,1.0\n", "score", "header"),
    ],
)
def test_malformed_files_are_rejected(tmp_path: Path, rows: str, header: str, message: str) -> None:
    _write_model(tmp_path, rows, quality_header=header)
    with pytest.raises(DemoDataError, match=message):
        read_demo_model("tiny", tmp_path)


def test_manifest_roles_are_checked(tmp_path: Path) -> None:
    _write_model(tmp_path, "Tone,Hi.,1.0\n")
    (tmp_path / "manifest.json").write_text(
        json.dumps({"models": [{"slug": "tiny", "on_first_start": "train_and_tag"}]}), encoding="utf-8"
    )
    with pytest.raises(DemoDataError, match="names no tag"):
        read_manifest(tmp_path)
