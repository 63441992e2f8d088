"""The Demo and Score pages show the version the presenter chooses: the `demo` tag by default, else the active
version; the Demo page puts two versions side by side on one text, and its shared link carries them. The
examples are, of each trait's samples labelled furthest towards a pole, the most confidently scored, then the
one the model finds hardest, and they follow the model opened."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from app.scoring.demo import (
    ACTIVE,
    CANDIDATE_EXAMPLES,
    DEMO_TAG,
    HARDEST_WITHIN,
    MAX_PRESET_CHARS,
    default_version,
    demo_examples,
    other_version,
    version_options,
)
from core.client import Client, Sample, Trait, Version
from core.contract import SCORE_MIDPOINT, pole_of
from core.local import LocalService
from tests.support.app import FORMALITY, make_draft, new_handle
from tests.support.apptest import no_exception, page

pytestmark = pytest.mark.usefixtures("app_env")

TRAIT = Trait(key="formality", name="Formality", positive_label="formal", negative_label="casual")

_samples = st.lists(
    st.tuples(
        st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]),  # few values: ties at the extremes
        st.floats(0.0, 1.0),  # the model's score of the text
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(_samples)
def test_examples_are_the_extremes_then_the_hardest(rows: list[tuple[float, float]]) -> None:
    samples = [Sample(id=i, trait="formality", text=f"text {i}", quality=q) for i, (q, _) in enumerate(rows)]
    scores = {s.text: score for s, (_, score) in zip(samples, rows, strict=True)}
    asked: list[list[str]] = []

    def score(texts: list[str]) -> list[dict[str, float]]:
        asked.append(texts)
        return [{"formality": scores[t]} for t in texts]

    examples = demo_examples(samples, [TRAIT], score)
    assert len(asked) <= 1  # one scoring request at most (none when no sample is an example)
    by_text = {s.text: s for s in samples}
    labelled = [s for s in samples if pole_of(s.quality) != "neutral"]
    if not labelled:
        assert all(e.note == "" for e in examples)  # nothing to demo: the generic texts
        return
    picked = iter(examples)
    for pole, sign in (("positive", 1), ("negative", -1)):
        own = [s for s in labelled if pole_of(s.quality) == pole]
        if not own:
            continue
        ranked = sorted(own, key=lambda s: s.quality, reverse=pole == "positive")[:CANDIDATE_EXAMPLES]
        example = by_text[next(picked).text]
        assert example in ranked  # among the labels furthest towards the pole
        assert sign * scores[example.text] == max(sign * scores[s.text] for s in ranked)  # most confident
    rest = list(picked)
    chosen = {e.text for e in examples[: len(examples) - len(rest)]}
    # The hardest: the other sample scored nearest the middle, when the model is unsure of it; a sample it is
    # sure of (0.03) is no hard example, whatever the others are.
    unsure = [
        s for s in labelled if s.text not in chosen if abs(scores[s.text] - SCORE_MIDPOINT) < HARDEST_WITHIN
    ]
    if unsure:
        (hardest,) = rest
        nearest = min(abs(scores[s.text] - SCORE_MIDPOINT) for s in unsure)
        assert abs(scores[hardest.text] - SCORE_MIDPOINT) == nearest and hardest.note.startswith("hardest")
    else:
        assert rest == []


def test_one_pole_label_does_not_replace_the_example_on_its_own() -> None:
    """A key press on the Label page stores the pole (1.0) while the imported labels top at 0.85: the example
    stays the sample the model scores most formal, not the one label of the highest quality."""
    imported = [Sample(id=i, trait="formality", text=f"Dear client {i}.", quality=0.85) for i in range(5)]
    imported.append(Sample(id=9, trait="formality", text="yo", quality=0.1))
    pressed = Sample(id=10, trait="formality", text="Regards, team.", quality=1.0)
    scores = {f"Dear client {i}.": 0.7 + i / 100 for i in range(5)} | {"yo": 0.1, "Regards, team.": 0.6}

    def score(texts: list[str]) -> list[dict[str, float]]:
        return [{"formality": scores[t]} for t in texts]

    before = demo_examples(imported, [TRAIT], score)
    after = demo_examples([*imported, pressed], [TRAIT], score)
    assert before[0].text == after[0].text == "Dear client 4."
    # Scored furthest towards the pole, the pressed label is the example: the model finds it most formal.
    scores["Regards, team."] = 0.95
    assert demo_examples([*imported, pressed], [TRAIT], score)[0].text == "Regards, team."


def test_a_sample_the_model_is_sure_of_is_no_hardest_example() -> None:
    """The samples a version trained on score near their poles: the nearest the middle, scored 0.03, is a
    plainly casual text, never shown as the one the model finds hard."""
    samples = [
        Sample(id=1, trait="formality", text="Dear sir.", quality=1.0),
        Sample(id=2, trait="formality", text="yo", quality=0.0),
        Sample(id=3, trait="formality", text="nah", quality=0.0),
    ]
    scores = {"Dear sir.": 0.99, "yo": 0.01, "nah": 0.03}

    def score(texts: list[str]) -> list[dict[str, float]]:
        return [{"formality": scores[t]} for t in texts]

    assert [e.text for e in demo_examples(samples, [TRAIT], score)] == ["Dear sir.", "yo"]
    scores["nah"] = 0.62
    assert demo_examples(samples, [TRAIT], score)[-1].note == "hardest: Formality scored 0.62"


def test_examples_leave_out_neutral_and_long_texts() -> None:
    samples = [
        Sample(id=1, trait="formality", text="x" * (MAX_PRESET_CHARS + 1), quality=1.0),
        Sample(id=2, trait="formality", text="Dear sir.", quality=0.9),
        Sample(id=3, trait="formality", text="meh", quality=0.5),
        Sample(id=4, trait="formality", text="yo", quality=0.0),
    ]
    examples = demo_examples(samples, [TRAIT], lambda texts: [{"formality": 0.5} for _ in texts])
    assert [e.text for e in examples] == ["Dear sir.", "yo"]
    assert [e.note for e in examples] == ["Formality: most formal", "Formality: most casual"]


def test_the_demo_tag_is_the_default_and_side_by_side_shows_the_other() -> None:
    v1, v2 = Version(version_id=1, version_no=1, tags=[DEMO_TAG]), Version(version_id=2, version_no=2)
    assert default_version([v2, v1]) == DEMO_TAG and default_version([v2]) == ACTIVE
    assert version_options([v2, v1]) == [ACTIVE, DEMO_TAG, "v2", "v1"]
    assert other_version(DEMO_TAG, [v2, v1], 2) == ACTIVE  # v1 shown: beside it the active v2
    assert other_version(ACTIVE, [v2, v1], 2) == "v1"  # the active v2 shown: beside it v1
    assert other_version(ACTIVE, [v1], 1) is None  # one version: nothing to compare


@pytest.fixture(scope="module")
def two_versions(local_service: LocalService, client: Client) -> str:
    """A model with two versions: v1 tagged `demo`, v2 active."""
    handle = make_draft(client, new_handle(local_service, "demo-versions"), (FORMALITY,))
    client.wait(handle, client.train(handle, "low").run_id, timeout=120)
    client.tag_version(handle, DEMO_TAG)
    client.wait(handle, client.train(handle, "low", reoptimize_params=True).run_id, timeout=120)
    return handle


def _scored_by(at: AppTest) -> list[str]:
    """Which version each chart says scored: "v1 (demo)" (its tags escaped as user text is, read back)."""
    lines = [m.value for m in at.markdown if "Scored by" in m.value]
    return [re.sub(r"\\(.)", r"\1", line.split("Scored by ")[1].split("**")[0]) for line in lines]


def test_demo_shows_the_demo_tag_then_two_versions_side_by_side(two_versions: str) -> None:
    at = page("demo", two_versions, text="Dear colleague, kindly review the attached document.")
    at.run()
    no_exception(at)
    assert at.selectbox(key="demo_version").value == DEMO_TAG
    assert _scored_by(at) == ["v1 (demo)"]
    # Under the bars, what a score is: how sure the model is, not how much of the trait the text shows.
    assert any("not how strongly the text shows the trait" in c.value for c in at.caption)
    (link,) = (c.value for c in at.code)
    assert parse_qs(urlsplit(link).query)["version"] == [DEMO_TAG]

    at.toggle(key="demo_side").set_value(True).run()  # one click: v1 vs the active v2
    no_exception(at)
    assert _scored_by(at) == ["v1 (demo)", "v2"]
    charts = [c for c in at.get("plotly_chart") if "demo_chart" in c.proto.id]
    assert len(charts) == 2
    words = [h.value for h in at.html if "kindly" in h.value]
    assert len(words) == 2  # each version colours the words
    (link,) = (c.value for c in at.code)
    query = parse_qs(urlsplit(link).query)
    assert query["version"] == [DEMO_TAG] and query["vs"] == [ACTIVE]

    # The link opens the same view.
    shared = page("demo", None, **{k: v[0] for k, v in query.items()})
    shared.run()
    no_exception(shared)
    assert _scored_by(shared) == ["v1 (demo)", "v2"]


def test_a_link_names_the_version_shown(two_versions: str) -> None:
    at = page("demo", None, model=two_versions, text="ok see ya", version="v2")
    at.run()
    no_exception(at)
    assert at.selectbox(key="demo_version").value == "v2"
    assert _scored_by(at) == ["v2"]


def test_opening_another_model_empties_the_box(two_versions: str, trained: str) -> None:
    at = page("demo", two_versions, text="Dear colleague, kindly review the attached document.")
    at.run()
    assert at.session_state["demo_text"]
    at.session_state["model"] = trained  # the sidebar's picker
    at.run()
    no_exception(at)
    assert at.session_state["demo_text"] == ""


def test_score_uses_the_demo_tag_and_says_which_version_scored(two_versions: str) -> None:
    at = page("score", two_versions)
    at.run()
    no_exception(at)
    assert at.selectbox(key="score_version").value == DEMO_TAG
    at.text_area(key="score_text").set_value("Dear colleague, kindly find the report enclosed.")
    at.button(key="score_go").click()
    at.run()
    no_exception(at)
    assert _scored_by(at) == ["v1 (demo)"]
    at.selectbox(key="score_version").set_value(ACTIVE)
    at.button(key="score_go").click()
    at.run()
    assert _scored_by(at) == ["v2"]
