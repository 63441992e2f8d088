"""core.contract: the API's shared rules, their bounds, and that the layers and docs use them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from core import contract
from core.contract import MAX_TRAIT_KEY, RUN_KINDS, is_positive, trait_key, unique_trait_key

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Politeness", "politeness"),
        ("  Tone / Voice!! ", "tone_voice"),
        ("Ünïcode ñame", "n_code_ame"),
        ("!!!", "trait"),
        ("", "trait"),
        ("a" * 47 + " b", "a" * 47),  # cut at 48 (the `_`), then trimmed
        ("x" * 60, "x" * 48),
    ],
)
def test_trait_key_of_a_name(name: str, key: str) -> None:
    assert trait_key(name) == key
    assert len(trait_key(name)) <= MAX_TRAIT_KEY


def test_a_taken_key_gets_a_suffix_and_stays_within_48_characters() -> None:
    long = "k" * 48
    taken = {long}
    for n in range(2, 120):  # past _9 and _99 the suffix grows and the key shrinks to fit
        key = unique_trait_key(long, taken)
        assert key == "k" * (48 - len(f"_{n}")) + f"_{n}"
        assert len(key) == MAX_TRAIT_KEY
        taken.add(key)
    assert unique_trait_key("short", {"short", "short_2"}) == "short_3"
    assert unique_trait_key("free", {"other"}) == "free"


def test_docs_state_the_same_key_and_text_limits() -> None:
    api = (ROOT / "docs" / "api.md").read_text()
    assert f"{MAX_TRAIT_KEY} characters" in api
    assert f"{contract.MAX_TEXT_CHARS:,} characters" in api


def test_the_pole_rule() -> None:
    assert is_positive(0.5) and is_positive(1.0)
    assert not is_positive(0.4999) and not is_positive(0.0)


def test_the_openapi_document_lists_the_contract_s_values(tmp_path: Path) -> None:
    from service.app import create_app
    from service.settings import Settings

    doc = create_app(Settings.from_env(data_dir=tmp_path, embedder="hashing")).openapi()
    schemas = doc["components"]["schemas"]

    def enum_of(schema: str, field: str) -> tuple[str, ...]:
        prop = schemas[schema]["properties"][field]
        options = prop.get("enum") or next(o["enum"] for o in prop.get("anyOf", []) if "enum" in o)
        return tuple(options)

    assert enum_of("TrainIn", "effort") == contract.TRAIN_EFFORTS
    assert enum_of("DiscoverIn", "effort") == contract.DISCOVER_EFFORTS
    assert enum_of("SynthesizeIn", "synth_type") == contract.SYNTH_TYPES
    assert enum_of("TraitIn", "aggregation") == contract.AGGREGATIONS
    text = schemas["SampleIn"]["properties"]["text"]
    assert text["maxLength"] == contract.MAX_TEXT_CHARS
    assert schemas["SamplesIn"]["properties"]["samples"]["maxItems"] == contract.MAX_SAMPLES_PER_REQUEST


def test_the_contract_imports_nothing_but_the_standard_library() -> None:
    code = (
        "import sys, core.contract; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('core', 'numpy', 'pydantic', 'httpx')))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['core', 'core.contract']"


def _restating(pattern: str) -> list[str]:
    hits = []
    for folder in ("core", "service", "app", "pages"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name != "contract.py" and re.search(pattern, path.read_text()):
                hits.append(str(path.relative_to(ROOT)))
    return hits


def test_no_layer_restates_the_text_limit_or_the_name_patterns() -> None:
    """These rules live in core.contract only: a second literal is how the old copies drifted apart."""
    assert _restating(r"\b20_?000\b") == []
    assert _restating(re.escape("[a-z0-9][a-z0-9_-]{0,62}")) == []  # namespaces and handles


def test_every_run_kind_has_its_module_and_nothing_else_is_dispatched() -> None:
    from service.runs.executor import KINDS

    assert set(KINDS) == set(RUN_KINDS)
