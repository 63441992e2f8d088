"""Offline synthesis with the hashing embedder, and the optional generator over real loopback HTTP."""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np
import pytest

from core.embedders import get_embedder
from core.engine.errors import (
    GeneratorError,
    InvalidEffortError,
    InvalidQualityError,
    InvalidSynthTypeError,
    NoSamplesError,
    NoTraitsError,
)
from core.engine.generators import (
    OpenAICompatibleGenerator,
    normalise_punctuation,
    parse_lines,
    variation_candidates,
)
from core.engine.synthesis import (
    MAX_VARIANTS_BY_EFFORT,
    PER_POLE_BY_EFFORT,
    label_anchor_texts,
    synthesis_source,
    synthesize,
)
from core.engine.text_utils import dedup_key
from core.engine.types import Sample, TraitSpec
from tests.support.loopback import serving
from tests.support.processes import FreshPython

COMPLAINTS = [
    "My refund has been delayed for three weeks and nobody answers. I am done waiting.",
    "Still waiting on the refund, the delay is unacceptable.",
    "The package delay ruined the gift and the refund never came.",
    "I asked for a refund twice and got another delay notice. Nobody cares.",
    "Refund request ignored, shipping delay again.",
    "Another delay, another week without my refund.",
    "Why does a simple refund take a month of delays?",
    "The delivery delay was endless and the refund is still pending.",
    "Delay after delay, and the refund form keeps failing. It is a joke.",
    "I want my refund now, this delay has cost me money.",
]
PRAISE = [
    "The staff were so friendly and helpful. Great praise to them.",
    "Lovely friendly staff, I have nothing but praise.",
    "Praise for the cheerful staff who made my day.",
    "The friendly team deserves all the praise. We will be back.",
    "Wonderful staff, friendly smiles everywhere.",
    "Staff were warm and friendly, high praise.",
    "I want to praise the friendly staff at the front desk.",
    "Such friendly staff, truly worth the praise.",
    "The staff were friendly and the praise is deserved. Thank you all.",
    "Great friendly staff who went above and beyond.",
]
TONE = TraitSpec(
    "tone", "Tone", "praise, friendly", "refund, delay", "How the customer feels about the service"
)
POLITE = TraitSpec("politeness", "Politeness", "polite", "rude", "How courteous the reply is")


@pytest.fixture(scope="module")
def embedder():
    return get_embedder("hashing")


def _tone_seeds() -> list[Sample]:
    return [Sample("tone", t, 1.0) for t in PRAISE] + [Sample("tone", t, 0.0) for t in COMPLAINTS]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def _sample_axis_side(embedder, seeds: list[Sample], texts: list[str]) -> np.ndarray:
    """Independent pole check: side of the midpoint along (mean positive - mean negative)."""
    pos = embedder.encode([s.text for s in seeds if s.quality >= 0.5]).astype(np.float64).mean(axis=0)
    neg = embedder.encode([s.text for s in seeds if s.quality < 0.5]).astype(np.float64).mean(axis=0)
    axis, mid = pos - neg, (pos + neg) / 2
    return np.sign((embedder.encode(texts).astype(np.float64) - mid) @ axis)


# ----------------------------------------------------------------------------------------- from_traits


def test_from_traits_counts_grow_with_effort(embedder) -> None:
    counts = []
    for effort in ("low", "medium", "high"):
        out = synthesize([TONE, POLITE], _tone_seeds(), effort=effort, embedder=embedder)
        per_pole = PER_POLE_BY_EFFORT[effort]
        for trait in (TONE, POLITE):
            for quality in (1.0, 0.0):
                n = sum(s.trait == trait.key and s.quality == quality for s in out)
                assert n == per_pole, (effort, trait.key, quality, n)
        counts.append(len(out))
    assert counts[0] < counts[1] < counts[2]


def test_from_traits_samples_lie_on_their_pole_of_the_sample_axis(embedder) -> None:
    seeds = _tone_seeds()
    out = synthesize([TONE], seeds, effort="high", embedder=embedder)
    side = _sample_axis_side(embedder, seeds, [s.text for s in out])
    assert all(side[i] == (1 if s.quality == 1.0 else -1) for i, s in enumerate(out))
    # The exemplars are built from the trait's own words.
    pos_text = " ".join(s.text for s in out if s.quality == 1.0).lower()
    neg_text = " ".join(s.text for s in out if s.quality == 0.0).lower()
    assert "friendly" in pos_text and "praise" in pos_text
    assert "refund" in neg_text and "delay" in neg_text


def test_from_traits_without_samples_uses_the_labels(embedder) -> None:
    out = synthesize([POLITE], [], effort="medium", embedder=embedder)
    assert len(out) == 2 * PER_POLE_BY_EFFORT["medium"]
    # Independent check on the documented label anchors.
    pos = embedder.encode(label_anchor_texts(POLITE, True)).astype(np.float64).mean(axis=0)
    neg = embedder.encode(label_anchor_texts(POLITE, False)).astype(np.float64).mean(axis=0)
    proj = (embedder.encode([s.text for s in out]).astype(np.float64) - (pos + neg) / 2) @ (pos - neg)
    assert all((p > 0) == (s.quality == 1.0) for p, s in zip(proj, out, strict=True))
    kinds = [s.text for s in out]
    assert any(t.endswith("?") for t in kinds) and any(
        re.match(r"^(I |I'|Honestly, I|My )", t) for t in kinds
    )
    assert all(("polite" in t.lower()) == (s.quality == 1.0) for t, s in zip(kinds, out, strict=True))


def test_pole_check_drops_candidates_on_the_wrong_side(embedder) -> None:
    # Seeds say the opposite of the labels: praise texts sit on the negative pole. Templated
    # "friendly"/"praise" sentences then claim the positive pole but lie on the negative side.
    flipped = [Sample("tone", s.text, 1.0 - s.quality) for s in _tone_seeds()]
    out = synthesize([TONE], flipped, effort="medium", embedder=embedder)
    per_pole = PER_POLE_BY_EFFORT["medium"]
    assert sum(s.quality == 1.0 for s in out) < per_pole
    side = _sample_axis_side(embedder, flipped, [s.text for s in out]) if out else np.array([])
    assert all(side[i] == (1 if s.quality == 1.0 else -1) for i, s in enumerate(out))


def test_from_traits_is_deterministic_and_order_free(embedder) -> None:
    seeds = _tone_seeds()
    first = synthesize([TONE, POLITE], seeds, effort="medium", embedder=embedder)
    shuffled = seeds[:]
    random.Random(3).shuffle(shuffled)
    again = synthesize([TONE, POLITE], shuffled, effort="medium", embedder=embedder)
    assert first == again


def test_no_duplicates_of_existing_or_generated_texts(embedder) -> None:
    first = synthesize([POLITE], [], effort="low", embedder=embedder)
    # Store the first batch (with different case and punctuation) and ask again: nothing repeats.
    stored = [Sample(s.trait, s.text.upper().rstrip(".?") + " !", s.quality) for s in first]
    second = synthesize([POLITE], stored, effort="low", embedder=embedder)
    keys = [dedup_key(s.text) for s in first + second]
    assert len(keys) == len(set(keys))
    assert all(s.id is None for s in second)


# ----------------------------------------------------------------------------------------- diversify


def test_diversify_keeps_the_seed_words_and_quality(embedder) -> None:
    seeds = _tone_seeds()
    out = synthesize([TONE], seeds, synth_type="diversify", effort="medium", embedder=embedder)
    assert len(out) >= len(seeds)  # at least about one variant per seed at medium
    by_key = {dedup_key(s.text): s for s in seeds}
    for variant in out:
        assert dedup_key(variant.text) not in by_key
        words = set(_words(variant.text))
        # Its seed: the one whose words it keeps best.
        seed = max(seeds, key=lambda s: len(set(_words(s.text)) & words) / len(set(_words(s.text))))
        kept = len(set(_words(seed.text)) & words) / len(set(_words(seed.text)))
        assert kept >= 0.6, (seed.text, variant.text)
        assert variant.quality == seed.quality
    side = _sample_axis_side(embedder, seeds, [s.text for s in out])
    assert all(side[i] == (1 if s.quality >= 0.5 else -1) for i, s in enumerate(out))
    keys = [dedup_key(s.text) for s in out]
    assert len(keys) == len(set(keys))


def test_diversify_counts_grow_with_effort_and_respect_the_cap(embedder) -> None:
    seeds = _tone_seeds()
    counts = [
        len(synthesize([TONE], seeds, synth_type="diversify", effort=e, embedder=embedder))
        for e in ("low", "medium", "high")
    ]
    assert counts[0] < counts[1] < counts[2]
    # 120 seeds over two traits, low effort: capped in total, and both traits get variants.
    many = [Sample("tone", f"{t} Order {i}.", s.quality) for i in range(3) for s in seeds for t in [s.text]]
    many += [Sample("politeness", f"Thank you kindly for the reply number {i}.", 1.0) for i in range(30)]
    many += [Sample("politeness", f"Get lost, stop sending reply number {i}.", 0.0) for i in range(30)]
    out = synthesize([TONE, POLITE], many, synth_type="diversify", effort="low", embedder=embedder)
    assert len(out) == MAX_VARIANTS_BY_EFFORT["low"]
    assert {s.trait for s in out} == {"tone", "politeness"}


def test_diversify_is_deterministic_and_order_free(embedder) -> None:
    seeds = _tone_seeds()
    first = synthesize([TONE], seeds, synth_type="diversify", embedder=embedder)
    shuffled = seeds[::-1]
    assert synthesize([TONE], shuffled, synth_type="diversify", embedder=embedder) == first


def test_diversify_needs_seeds(embedder) -> None:
    with pytest.raises(NoSamplesError, match="diversify needs seed samples"):
        synthesize([POLITE], _tone_seeds(), synth_type="diversify", embedder=embedder)


def test_variation_edits() -> None:
    rng = random.Random(0)
    text = "I do not like it. The reply was late. It is not what we are used to."
    variants = list(variation_candidates(text, rng))
    assert len(variants) == len(set(variants)) >= 10
    assert any("don't" in v for v in variants)  # contracted
    assert any(v.split(". ")[0] != text.split(". ")[0] for v in variants)  # reordered or prefixed
    expanded = [v for v in variation_candidates("I don't mind. It's fine.", random.Random(1))]
    assert any("do not" in v and "It is" in v for v in expanded)
    # A capitalised first word that may be a name is never lower-cased behind a prefix.
    for v in variation_candidates("Amazon lost my parcel again.", random.Random(2)):
        assert "amazon" not in v
    assert normalise_punctuation("so  good !!!  really ,right") == "so good! really, right."


# ----------------------------------------------------------------------------------------- errors


def test_bad_arguments_are_clear_errors(embedder) -> None:
    with pytest.raises(InvalidSynthTypeError, match="'enrich'.*from_traits, diversify") as info:
        synthesize([TONE], [], synth_type="enrich", embedder=embedder)
    assert info.value.code == "invalid_synth_type"
    with pytest.raises(InvalidEffortError, match="'huge'"):
        synthesize([TONE], [], effort="huge", embedder=embedder)
    with pytest.raises(NoTraitsError):
        synthesize([], [], embedder=embedder)
    with pytest.raises(InvalidQualityError, match="seed 0"):
        synthesize([TONE], [Sample("tone", "fine", float("nan"))], embedder=embedder)
    with pytest.raises(GeneratorError, match="generate"):
        synthesize([TONE], [], embedder=embedder, generator=object())  # type: ignore[arg-type]  # not one: the error


def test_seeds_of_other_traits_are_ignored(embedder) -> None:
    other = [Sample("unrelated", "Anything at all.", 2.0)]  # would be invalid if it were looked at
    out = synthesize([POLITE], other, effort="low", embedder=embedder)
    assert {s.trait for s in out} == {"politeness"}


def test_progress_is_reported(embedder) -> None:
    calls: list[tuple[float, str]] = []
    synthesize([TONE, POLITE], [], embedder=embedder, progress=lambda f, p: calls.append((f, p)))
    assert calls[-1] == (1.0, "done")
    assert [f for f, _ in calls] == sorted(f for f, _ in calls)
    assert {"generating", "checking"} <= {p for _, p in calls}


# ----------------------------------------------------------------------------------------- generator


class _Canned(BaseHTTPRequestHandler):
    content = ""
    status = 200
    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
        )
        if self.status != 200:
            payload = b'{"error": "overloaded"}'
        else:
            choice = {"index": 0, "message": {"role": "assistant", "content": self.content}}
            payload = json.dumps({"id": "x", "object": "chat.completion", "choices": [choice]}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[str]:
    _Canned.requests = []
    _Canned.status = 200
    with serving(_Canned) as url:
        yield url


def test_generator_candidates_still_pass_the_pole_check(embedder, server: str) -> None:
    _Canned.content = (
        "1. The staff were friendly and full of praise for us.\n"
        "2) Such friendly staff, praise all round!\n"
        '- "My refund is delayed again, what a delay."\n'
        "\n"
        "* Lovely friendly staff and a warm welcome."
    )
    gen = OpenAICompatibleGenerator(server, "sk-test", "tiny-model", timeout=5)
    out = synthesize([TONE], _tone_seeds(), embedder=embedder, generator=gen, effort="low")
    positives = sorted(s.text for s in out if s.quality == 1.0)
    assert positives == [
        "Lovely friendly staff and a warm welcome.",
        "Such friendly staff, praise all round!",
        "The staff were friendly and full of praise for us.",
    ]
    # The same canned answer for the negative pole: only the complaint fits there.
    assert [s.text for s in out if s.quality == 0.0] == ["My refund is delayed again, what a delay."]
    assert len(_Canned.requests) == 2
    first = _Canned.requests[0]
    assert first["path"] == "/v1/chat/completions"
    assert first["auth"] == "Bearer sk-test"
    assert first["body"]["model"] == "tiny-model"
    prompt = first["body"]["messages"][-1]["content"]
    assert "praise, friendly" in prompt and "refund, delay" in prompt


def test_generated_near_duplicates_are_kept_once_and_the_pool_shows_the_style(embedder, server: str) -> None:
    first = "Such friendly staff, full of praise for the whole friendly team today."
    _Canned.content = "\n".join(
        [first, f"{first[:-1]}, really.", "Lovely friendly staff and a warm welcome, praise all round."]
    )
    pool = ["Booked a room for two nights in May.", "The lift was out of order on Sunday."]
    gen = OpenAICompatibleGenerator(server, None, "m")
    out = synthesize([TONE], [], embedder=embedder, generator=gen, pool=pool, effort="low")
    # The second text is the first with a filler (cosine above 0.92): kept once; no pool text is a sample.
    assert sorted(s.text for s in out if s.quality == 1.0) == sorted([first, _Canned.content.splitlines()[2]])
    assert not {s.text for s in out} & set(pool)
    assert synthesis_source(pool, gen) == "generator"
    prompt = _Canned.requests[0]["body"]["messages"][-1]["content"]
    assert all(text in prompt for text in pool) and "Tone" in prompt and "How the customer feels" in prompt


def test_generator_for_diversify(embedder, server: str) -> None:
    seed = Sample("tone", PRAISE[1], 1.0)
    _Canned.content = (
        "Honestly, lovely friendly staff, I have nothing but praise.\nRefund delay, refund delay."
    )
    gen = OpenAICompatibleGenerator(server, None, "m")
    out = synthesize(
        [TONE],
        [seed, *_tone_seeds()[10:]],
        synth_type="diversify",
        embedder=embedder,
        generator=gen,
        effort="low",
    )
    assert [s.text for s in out if s.quality == 1.0] == [
        "Honestly, lovely friendly staff, I have nothing but praise."
    ]
    assert _Canned.requests[0]["auth"] is None
    assert any(PRAISE[1] in r["body"]["messages"][-1]["content"] for r in _Canned.requests)


def test_generator_failures_are_clear_errors(server: str) -> None:
    _Canned.status = 503
    with pytest.raises(GeneratorError, match="HTTP 503"):
        OpenAICompatibleGenerator(server, "secret-key", "m").generate("hi", 2)
    with pytest.raises(GeneratorError, match="unreachable") as info:
        OpenAICompatibleGenerator("http://127.0.0.1:9", "secret-key", "m", timeout=2).generate("hi", 2)
    assert "secret-key" not in str(info.value)


def test_parse_lines() -> None:
    assert parse_lines("1. one\n 2) two \n- 'three'\n\n• four\n(5) five") == [
        "one",
        "two",
        "three",
        "four",
        "five",
    ]


_DIGEST_SCRIPT = """
import hashlib
from core.embedders import get_embedder
from core.engine.synthesis import synthesize
from core.engine.types import Sample, TraitSpec
trait = TraitSpec("tone", "Tone", "praise, friendly", "refund, delay", "How the customer feels")
seeds = [Sample("tone", "Lovely friendly staff. I have nothing but praise.", 1.0),
         Sample("tone", "I do not want another delay. Where is my refund?", 0.0)]
emb = get_embedder("hashing")
out = synthesize([trait], seeds, effort="high", embedder=emb)
out += synthesize([trait], seeds, synth_type="diversify", effort="max", embedder=emb)
print(hashlib.sha256(repr(out).encode()).hexdigest(), len(out))
"""


def test_same_output_in_another_process(fresh_python: FreshPython) -> None:
    digests = set()
    for hash_seed in ("1", "2"):
        done = fresh_python(_DIGEST_SCRIPT, env={**os.environ, "PYTHONHASHSEED": hash_seed})
        digests.add(done.stdout.strip())
    assert len(digests) == 1
    assert int(digests.pop().split()[1]) > 32
