"""Presentation helpers of the Demo page: preset texts, large bars, the shareable URL."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

import plotly.graph_objects as go
import streamlit as st

from app.config import workbench_settings
from app.ui.inert import escape_md
from core.client import Client, Sample, ScoreResult, Trait, Version
from core.contract import MAX_SCORE_TEXTS, SCORE_MIDPOINT, Pole, pole_of

MAX_URL_TEXT = 1500  # keep shared links a sane length
DEMO_TAG = "demo"  # the version a demo shows unless the presenter picks another
ACTIVE = "active"  # the choice of the model's active version (what its scores use by default)
CANDIDATE_EXAMPLES = 20  # of the samples labelled furthest towards a pole, how many are scored to pick one
MAX_PRESET_CHARS = 280  # an example longer than this makes no button
# The hardest example is shown only when the model is unsure of it: scored within this of the middle. Of the
# samples a version trained on, each scored near its pole, the nearest the middle may still be scored 0.03:
# called "hardest", a plainly negative text would read as a text the model finds hard.
HARDEST_WITHIN = 0.25
EXAMPLE_POLES: tuple[Pole, Pole] = ("positive", "negative")  # each trait's examples, in this order
PUBLIC_URL_KEY = "public_url"  # session_state: the same, entered on the Settings page
GENERIC_PRESETS = [
    "Thank you for reaching out. I have refunded the charge and it will appear within three days.",
    "ugh, this is the third time it broke. not buying again.",
    "The committee approved the budget on Tuesday after a lengthy debate.",
    "Absolutely love it!!! Works perfectly, five stars, would recommend to everyone.",
]


@dataclass(frozen=True)
class Example:
    text: str
    note: str  # why it is an example: "Politeness: most polite", "hardest: Politeness scored 0.52"


ScoreTexts = Callable[[list[str]], list[dict[str, float]]]  # texts → each text's {trait key: score}


def demo_examples(
    samples: Sequence[Sample], traits: Sequence[Trait], score: ScoreTexts, per_trait_limit: int = 3
) -> list[Example]:
    """Example texts that demo each trait: of its `CANDIDATE_EXAMPLES` samples labelled furthest towards each
    pole, the one the model scores furthest towards it (its most typical), then the one labelled sample the
    model finds hardest (its score on its own trait nearest the middle, within `HARDEST_WITHIN`). Neutral
    samples and texts too long for a button are never examples. One scoring request: those candidates and an
    even spread of the samples.

    Not the one sample of the most extreme quality: a single label pressed on the Label page stores the pole
    itself (1.0), above imported labels that top at 0.85, and would replace the example on its own."""
    eligible = [
        s for s in samples if s.text and len(s.text) <= MAX_PRESET_CHARS and pole_of(s.quality) != "neutral"
    ]
    known = {t.key: t for t in traits}
    order = [t.key for t in traits] + [s.trait for s in eligible if s.trait not in known]
    candidates: dict[tuple[str, Pole], list[Sample]] = {}
    for key in dict.fromkeys(order):
        for pole in EXAMPLE_POLES:
            own = [s for s in eligible if s.trait == key and pole_of(s.quality) == pole]
            if own:
                towards = sorted(own, key=lambda s: s.quality, reverse=pole == "positive")  # stable
                candidates[(key, pole)] = towards[:CANDIDATE_EXAMPLES]
    texts = list(dict.fromkeys(s.text for group in candidates.values() for s in group))
    room = max(0, MAX_SCORE_TEXTS - len(texts))
    step = max(1, len(eligible) // room) if room else 0
    spread = eligible[::step][:room] if room else []
    texts = list(dict.fromkeys([*texts, *(s.text for s in spread)]))[:MAX_SCORE_TEXTS]
    scored = dict(zip(texts, score(texts), strict=True)) if texts else {}

    def on_trait(s: Sample) -> float | None:
        return scored.get(s.text, {}).get(s.trait)

    picked: list[Example] = []
    for (key, pole), group in candidates.items():
        sign = 1 if pole == "positive" else -1

        def confidence(s: Sample, sign: int = sign) -> tuple[float, float]:
            # Furthest towards the pole (unscored last); of equal scores, the more extreme label.
            value = on_trait(s)
            return (-2.0 if value is None else sign * value, sign * s.quality)

        best_sample = max(group, key=confidence)
        trait = known.get(key)
        name = trait.name if trait else key
        label = (trait.positive_label if pole == "positive" else trait.negative_label) if trait else pole
        if best_sample.text not in {e.text for e in picked}:
            picked.append(Example(best_sample.text, f"{name}: most {label or pole}"))
    picked = picked[: per_trait_limit * 2 * max(1, len(known))]
    hard = [
        (abs(value - SCORE_MIDPOINT), s.text, value, s.trait)
        for s in eligible
        if (value := on_trait(s)) is not None
        and abs(value - SCORE_MIDPOINT) < HARDEST_WITHIN
        and s.text not in {e.text for e in picked}
    ]
    if hard:
        _, text, value, key = min(hard)
        trait = known.get(key)
        picked.append(Example(text, f"hardest: {trait.name if trait else key} scored {value:.2f}"))
    return picked or [Example(t, "") for t in GENERIC_PRESETS]


def version_options(versions: Sequence[Version]) -> list[str]:
    """What a presenter may pick: the active version, each tag, then each version, newest first."""
    tags = [tag for v in versions for tag in v.tags]
    return [ACTIVE, *dict.fromkeys(tags), *(v.label for v in versions)]


def default_version(versions: Sequence[Version]) -> str:
    """The `demo` tag when a version has it, else the active version."""
    return DEMO_TAG if any(DEMO_TAG in v.tags for v in versions) else ACTIVE


def version_no(choice: str, versions: Sequence[Version], active_no: int | None) -> int | None:
    """The version number a choice names (None when it names none)."""
    if choice == ACTIVE:
        return active_no
    return next((v.version_no for v in versions if choice == v.label or choice in v.tags), None)


def other_version(choice: str, versions: Sequence[Version], active_no: int | None) -> str | None:
    """What "side by side" shows beside `choice`: the active version, or when `choice` is the active one,
    the version before it (the one it replaced, usually); None for a model with one version."""
    shown = version_no(choice, versions, active_no)
    if shown != active_no and active_no is not None:
        return ACTIVE
    older = [v for v in versions if shown is None or v.version_no < shown]
    return max(older, key=lambda v: v.version_no).label if older else None


def version_arg(choice: str) -> str | None:
    """The score request's `version` for a choice: None (the service's default) for the active one."""
    return None if choice == ACTIVE else choice


def scored_by(result: ScoreResult) -> str:
    """Which version answered: `v2`, with its tags."""
    if result.version_no is None:
        return "the active version"
    tags = f" ({', '.join(result.version_tags)})" if result.version_tags else ""
    return f"v{result.version_no}{tags}"


@st.cache_resource(show_spinner=False)
def _warmed() -> set[str]:
    return set()


def warm_up(client: Client, handle: str) -> None:
    """Score one text for `handle` in the background, once per workbench process.

    The service loads a version's scorer (and MiniLM) on its first score: done while the presenter starts
    typing, the first pause gets its bars at once instead of after that load.
    """
    done = _warmed()
    if handle in done:
        return
    done.add(handle)

    def score() -> None:
        with contextlib.suppress(Exception):  # a warm-up only: the page reports real failures itself
            client.score(handle, "Hello")

    threading.Thread(target=score, name=f"warm-{handle}", daemon=True).start()


def blank_chart() -> go.Figure:
    """A chart with nothing to see (no axes, 10 px: Plotly's least), so the browser loads Plotly early."""
    fig = go.Figure()
    fig.update_layout(height=10, margin={"t": 0, "b": 0, "l": 0, "r": 0})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


def big_bars(fig: go.Figure, compact: bool = False) -> go.Figure:
    """Presentation sizing: larger fonts and tall bars, short enough that the coloured words below stay on a
    projector's screen (1280×800); `compact` for two charts side by side."""
    n = max(1, len(fig.data[0].y) if fig.data and fig.data[0].y is not None else 1)
    per_bar = 55 if compact else 65
    height = max(240, 110 + per_bar * n)
    fig.update_layout(font={"size": 20}, height=height, title_font={"size": 26}, bargap=0.25)
    fig.update_layout(margin={"t": 10, "b": 40})
    fig.update_yaxes(tickfont={"size": 19})
    fig.update_xaxes(tickfont={"size": 16})
    fig.update_traces(textfont_size=22, selector={"type": "bar"})
    return fig


def public_base_url() -> str | None:
    """The workbench's public address for shared links: the Settings page's, else `SCORING_PUBLIC_URL`."""
    return (st.session_state.get(PUBLIC_URL_KEY) or workbench_settings().public_url or "").strip() or None


def share_url(
    page_url: str | None,
    handle: str,
    text: str,
    public_base: str | None = None,
    version: str | None = None,
    beside: str | None = None,
) -> str:
    """A link to the Demo page with `?model=…&text=…` (the text cut to a sane length), and the version shown
    (`&version=…`, left out for the active one) and the one beside it (`&vs=…`) when there is one.

    On `public_base` (the workbench's public address) when one is set, else on the page's own URL.
    """
    params = {"model": handle, "text": text[:MAX_URL_TEXT]}
    if version is not None and version != ACTIVE:
        params["version"] = version
    if beside is not None:
        params["vs"] = beside
    query = urlencode(params)
    if public_base:
        return f"{public_base.rstrip('/')}/demo?{query}"
    if not page_url:
        return f"?{query}"
    parts = urlsplit(page_url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def is_local(url: str) -> bool:
    """A link only this computer can open (loopback), or a bare query without an address."""
    host = urlsplit(url).hostname
    return host is None or host == "localhost" or host.startswith("127.") or host == "::1"


def score_meaning(result: ScoreResult) -> str:
    """What a score is, in the words of the result's first trait (Markdown, escaped): how sure the model is
    that the text is on the positive pole, not how far toward it the text goes (people read 0.99 as "very
    polite")."""
    if not result.scores:
        return ""
    first = result.scores[0]
    positive = escape_md(first.positive_label or "positive")
    negative = escape_md(first.negative_label or "negative")
    return (
        "A score is how sure the model is that the text is on a trait's positive pole, from 0 (sure it is "
        "not) to 1 (sure it is); 0.5 means it cannot tell. It is not how strongly the text shows the trait: "
        f"{escape_md(first.name or first.trait)} at 0.99 says the model is almost certain the text is "
        f"{positive} rather than {negative}, not that it is very {positive}."
    )


def decision_words(result: ScoreResult) -> str:
    """The scoring version's own yes/no decisions, for each trait it has a decision threshold for (Markdown,
    escaped): "Decided by v2's thresholds: Sentiment 0.75 < 0.781, not positive."; "" without any. The bar's
    colour says which pole is nearer, not what a threshold above 0.5 decides."""
    decided = [s for s in result.scores if s.threshold is not None and s.decision is not None]
    if not decided:
        return ""
    parts = []
    for s in decided:
        positive = escape_md(s.positive_label or "positive")
        sign, outcome = ("≥", positive) if s.decision else ("<", f"not {positive}")
        parts.append(f"{escape_md(s.name or s.trait)} {s.score:.2f} {sign} {s.threshold:.3f}, {outcome}")
    whose = f"v{result.version_no}'s" if result.version_no is not None else "the version's"
    return f"Decided by {whose} thresholds: {'; '.join(parts)}."
