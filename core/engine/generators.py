"""Candidate text generators for synthesis.

Two offline generators (no network, no model files) and one optional provider:

- `template_candidates`: cold-start sentences for one pole of a trait, built from its
  pole label, name and description with a small built-in vocabulary of framings.
- `variation_candidates`: voice-preserving light edits of one seed text.
- `TextGenerator` / `OpenAICompatibleGenerator`: an external generator a user may plug in
  (off by default). Whatever produces a candidate, `core.engine.synthesis` keeps it only
  after the pole check.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from functools import partial
from typing import Protocol, runtime_checkable

from core.engine.errors import GeneratorError
from core.engine.text_utils import STOP_WORDS, content_words, split_terms
from core.engine.types import JsonObject, TraitSpec

# ---------------------------------------------------------------------------------------------
# Templates (from_traits)

# {p}: a bare pole phrase ("polite", "refund and delay"); {i}: the phrase or an intensified
# one ("very polite"); {s}: a subject noun; {c}: a noun of the trait's description (or a
# generic subject). "describe" framings suit adjectives, "topic"
# framings suit nouns; a phrase gets the group its last word suggests.
_DESCRIBE: dict[str, tuple[str, ...]] = {
    "statement": (
        "The {s} was {i}.",
        "This {s} is {i}.",
        "Everything about the {s} felt {i}.",
        "Overall, the {s} came across as {i}.",
        "It was {i}, plain and simple.",
        "A {p} {s}, through and through.",
        "The whole {s} reads as {i}.",
    ),
    "first_person": (
        "I found the {s} {i}.",
        "I'd describe this {s} as {i}.",
        "Honestly, I thought the {s} was {i}.",
        "In my experience the {s} was {i}.",
        "I have to say the {s} felt {i}.",
        "My impression: a {i} {s}.",
    ),
    "question": (
        "Why was the {s} so {p}?",
        "Has anyone else found the {s} this {p}?",
        "Is it just me, or is this {s} {i}?",
        "How can a {s} be this {p}?",
    ),
    "comparison": (
        "The {s} was more {p} than I expected.",
        "Far more {p} than the last {s}.",
        "The most {p} {s} I have seen in a while.",
        "Compared with the others, this {s} is clearly {p}.",
    ),
}
_TOPIC: dict[str, tuple[str, ...]] = {
    "statement": (
        "This {s} is all about {p}.",
        "The {s} is about {p}.",
        "Another {s} about {p}.",
        "It comes down to {p}.",
        "Mostly {p}, from start to finish.",
        "About the {c}: mostly {p}.",
        "When it comes to the {c}, it is all {p}.",
    ),
    "first_person": (
        "I am writing about {p}.",
        "I keep running into {p}.",
        "All I got was {p}.",
        "My {s} is about {p}.",
        "I wanted to mention {p}.",
    ),
    "question": (
        "What about the {p}?",
        "Why is there always {p}?",
        "Can we talk about {p}?",
        "Has anyone else dealt with {p}?",
    ),
    "comparison": (
        "More {p} than last time.",
        "Even more {p} than before.",
        "This {s} has more {p} than the others.",
        "Compared with the last {s}, there is far more {p}.",
    ),
}
# fmt: off
_TEXT_SUBJECTS = ("message", "reply", "text", "comment", "review")  # things that can be "about" something
_SUBJECTS = (*_TEXT_SUBJECTS, "experience")
_INTENSIFIERS = ("very", "really", "quite", "extremely")
_ADJ_SUFFIXES = (
    "ful", "ous", "ive", "able", "ible", "al", "ic", "ish", "less", "ly", "ed", "ent", "ant", "ile", "ary",
    "ory", "ing", "ite", "ose",
)
_NOUN_SUFFIXES = ("ness", "ment", "tion", "sion", "ity", "ance", "ence", "ism", "ship")
_COMMON_ADJECTIVES = frozenset((
    "good", "bad", "polite", "rude", "kind", "calm", "warm", "cold", "nice", "fine", "great", "poor", "mean",
    "fair", "clear", "vague", "short", "long", "brief", "blunt", "dull", "bright", "harsh", "soft", "strong",
    "weak", "firm", "plain", "simple", "complex", "hard", "easy", "slow", "fast", "quick", "rich", "cheap",
    "safe", "open", "honest", "modest", "direct", "serious", "sad", "glad", "new", "old", "young", "big",
    "small", "high", "low", "wise", "dumb", "smart", "tense", "terse", "loose", "crude", "mild", "wild",
))
# fmt: on


def _is_adjective(phrase: str) -> bool:
    """Rough guess from the last word; it only picks which framings read naturally."""
    words = phrase.lower().split()
    if not words:
        return True
    word = words[-1]
    if word in _COMMON_ADJECTIVES:
        return True
    if word.endswith(_NOUN_SUFFIXES):
        return False
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        return True  # angry, friendly, messy (not delay, money)
    return word.endswith(_ADJ_SUFFIXES)


def _pole_phrases(label: str) -> list[tuple[str, bool]]:
    """(phrase, intensified?): each term, the first two joined when alike, intensified adjectives."""
    terms = split_terms(label)
    phrases = [(t, False) for t in terms]
    if len(terms) > 1 and _is_adjective(terms[0]) == _is_adjective(terms[1]):
        phrases.append((" and ".join(terms[:2]), False))
    for term in terms:
        if _is_adjective(term) and len(term.split()) == 1:
            phrases.extend((f"{i} {term}", True) for i in _INTENSIFIERS)
    return list(dict.fromkeys(p for p in phrases if p[0]))


_DETERMINERS = frozenset(
    ("the", "a", "an", "this", "that", "your", "my", "our", "their", "its", "his", "her")
)


def _description_nouns(description: str) -> list[str]:
    """Words right after a determiner ("the service", "a polite reply" -> reply): likely nouns."""
    tokens = re.findall(r"[a-z']+", description.lower())
    out: list[str] = []
    for i, word in enumerate(tokens[:-1]):
        if word not in _DETERMINERS:
            continue
        noun = tokens[i + 1]
        if _is_adjective(noun) and i + 2 < len(tokens) and tokens[i + 2] not in STOP_WORDS:
            noun = tokens[i + 2]
        if len(noun) >= 3 and noun not in STOP_WORDS and "'" not in noun:
            out.append(noun)
    return list(dict.fromkeys(out))


def _subjects(trait: TraitSpec) -> list[str]:
    """Nouns of the trait's description (not its pole words), then generic subjects.

    The trait's name is left out: it usually names the quality itself ("Politeness"), which
    reads badly as the thing described.
    """
    pole_words = set(content_words(f"{trait.positive_label} {trait.negative_label} {trait.name}"))
    own = [w for w in _description_nouns(trait.description) if w not in pole_words]
    return list(dict.fromkeys([*own[:3], *_SUBJECTS]))


def template_candidates(trait: TraitSpec, positive: bool, rng: random.Random) -> Iterator[str]:
    """Every distinct templated sentence for one pole, in an `rng`-shuffled order.

    Framing kinds take turns (statement, first-person, question, comparison) so any prefix of
    the sequence mixes forms.
    """
    label = trait.positive_label if positive else trait.negative_label
    described = _subjects(trait)
    by_kind: dict[str, list[str]] = {}
    for phrase, intensified in _pole_phrases(label):
        adjective = _is_adjective(phrase)
        framings = _DESCRIBE if adjective else _TOPIC
        subjects = described if adjective else list(_TEXT_SUBJECTS)
        for kind, templates in framings.items():
            for template in templates:
                if intensified and "{i}" not in template:
                    continue
                for subject in subjects if "{s}" in template else subjects[:1]:
                    for context in described if "{c}" in template else described[:1]:
                        text = template.format(p=phrase, i=phrase, s=subject, c=context)
                        by_kind.setdefault(kind, []).append(text[0].upper() + text[1:])
    queues = []
    for kind in sorted(by_kind):
        texts = list(dict.fromkeys(by_kind[kind]))
        rng.shuffle(texts)
        queues.append(texts)
    seen: set[str] = set()
    for i in range(max((len(q) for q in queues), default=0)):
        for queue in queues:
            if i < len(queue) and queue[i] not in seen:
                seen.add(queue[i])
                yield queue[i]


# ---------------------------------------------------------------------------------------------
# Variations (diversify): edits that keep the writer's words and do not flip the meaning.

_PREFIXES = ("Honestly,", "Frankly,", "To be honest,", "Well,", "Overall,", "In short,", "All in all,")
_SUFFIXES = ("honestly", "to be honest", "really", "frankly", "if I'm honest")
# A text that already has one of these gets no second marker ("Honestly ..., honestly.").
_MARKER_RE = re.compile(
    r"\b(honestly|frankly|to be honest|if i'm honest|if i am honest|all in all|in short)\b", re.I
)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_CONTRACTIONS = (
    ("cannot", "can't"),
    ("will not", "won't"),
    ("do not", "don't"),
    ("does not", "doesn't"),
    ("did not", "didn't"),
    ("is not", "isn't"),
    ("are not", "aren't"),
    ("was not", "wasn't"),
    ("were not", "weren't"),
    ("have not", "haven't"),
    ("has not", "hasn't"),
    ("would not", "wouldn't"),
    ("could not", "couldn't"),
    ("should not", "shouldn't"),
    ("I am", "I'm"),
    ("I have", "I've"),
    ("I will", "I'll"),
    ("it is", "it's"),
    ("that is", "that's"),
    ("they are", "they're"),
    ("we are", "we're"),
    ("you are", "you're"),
)


def split_sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_RE.split(text.strip()) if s]


def _after_prefix(text: str) -> str | None:
    """The text as it reads after a new prefix, or None when its first word's case is unclear.

    A capitalised stop word ("The", "My") is lower-cased; "I" and lower-case starts stay as they
    are; any other capitalised word may be a name, so the prefix edit is skipped.
    """
    first = text.split(" ", 1)[0]
    bare = re.sub(r"\W+$", "", first)
    if not bare or bare == "I" or bare.startswith(("I'", "I\u2019")) or not bare[0].isupper():
        return text
    if bare.lower() in STOP_WORDS and bare[1:].islower():
        return first.lower() + text[len(first) :]
    return None


def _with_prefix(text: str, rng: random.Random) -> str | None:
    if _MARKER_RE.search(text) or text.split(" ", 1)[0].rstrip(",") in {p.rstrip(",") for p in _PREFIXES}:
        return None
    rest = _after_prefix(text)
    return None if rest is None else f"{rng.choice(_PREFIXES)} {rest}"


def _with_suffix(text: str, rng: random.Random) -> str | None:
    if _MARKER_RE.search(text):
        return None
    m = re.match(r"^(.*?[^\s.!?])([.!?]*)$", text.strip(), flags=re.S)
    if not m:
        return None
    end = m.group(2) or "."
    return f"{m.group(1)}, {rng.choice(_SUFFIXES)}{end}"


def _reorder(text: str, rng: random.Random) -> str | None:
    sentences = split_sentences(text)
    if len(sentences) < 2:
        return None
    order = list(range(len(sentences)))
    while order == sorted(order):
        rng.shuffle(order)
    return " ".join(sentences[i] for i in order)


def _drop_clause(text: str, rng: random.Random) -> str | None:
    """Drop one sentence, or a trailing comma clause, when at least 60% of the words remain."""
    words = len(text.split())
    sentences = split_sentences(text)
    options: list[str] = []
    if len(sentences) >= 2:
        options += [" ".join(s for j, s in enumerate(sentences) if j != i) for i in range(len(sentences))]
    m = re.match(r"^(.*\w)\s*,[^,]+?([.!?]*)$", text.strip(), flags=re.S)
    if m:
        options.append(m.group(1) + (m.group(2) or "."))
    options = [o for o in options if len(o.split()) >= 0.6 * words and o.strip() != text.strip()]
    return rng.choice(options) if options else None


def _match_case(src: str, repl: str) -> str:
    return repl[0].upper() + repl[1:] if src[:1].isupper() else repl


def _cased(repl: str, match: re.Match[str]) -> str:
    return _match_case(match.group(0), repl)


def _swap_contractions(text: str, rng: random.Random) -> str | None:
    """Expand the text's contractions, or (when it has none) contract what can be contracted."""
    norm = text.replace("\u2019", "'")
    for pairs in (
        [(short, long) for long, short in _CONTRACTIONS],
        list(_CONTRACTIONS),
    ):
        out = norm
        for src, dst in pairs:
            out = re.sub(rf"\b{re.escape(src)}\b", partial(_cased, dst), out, flags=re.I)
        if out != norm:
            return out
    return None


def normalise_punctuation(text: str) -> str:
    """Whitespace and punctuation tidy-up: single spaces, no space before , . ! ?, no !!! or ???."""
    out = re.sub(r"\s+", " ", text).strip()
    out = re.sub(r"\s+([,.!?;:])", r"\1", out)
    out = re.sub(r"([!?])\1+", r"\1", out)
    out = re.sub(r",(?=\w)", ", ", out)
    if out and out[-1] not in ".!?\"')":
        out += "."
    return out


#: Word-changing edits; punctuation normalisation only ever comes on top of one of these.
EDITS: dict[str, Callable[[str, random.Random], str | None]] = {
    "prefix": _with_prefix,
    "suffix": _with_suffix,
    "reorder": _reorder,
    "drop_clause": _drop_clause,
    "contractions": _swap_contractions,
}


def variation_candidates(text: str, rng: random.Random) -> Iterator[str]:
    """Distinct light edits of `text`: each single edit, then pairs, each maybe punctuation-tidied."""
    names = list(EDITS)
    plans: list[tuple[str, ...]] = [(n,) for n in names]
    rng.shuffle(plans)
    pairs = [(a, b) for a in names for b in names if a != b and {a, b} != {"prefix", "suffix"}]
    rng.shuffle(pairs)
    plans += pairs
    seen = {text.strip()}
    for plan in plans:
        out: str | None = text.strip()
        for name in plan:
            out = EDITS[name](out, rng) if out is not None else None
        if out is None:
            continue
        if rng.random() < 0.5:
            out = normalise_punctuation(out)
        if out not in seen:
            seen.add(out)
            yield out


# ---------------------------------------------------------------------------------------------
# External provider (optional)


@runtime_checkable
class TextGenerator(Protocol):
    """Anything that turns a prompt into up to `n` candidate texts."""

    def generate(self, prompt: str, n: int) -> list[str]: ...


_SYSTEM_PROMPT = (
    "You write short example texts for training a text classifier. Answer with the texts only, "
    "one per line, without numbering, bullets, quotes or commentary."
)
_LIST_MARK = re.compile(r"^\s*(?:[-*\u2022]+|\d+[.)]|\(\d+\))\s*")


def parse_lines(content: str) -> list[str]:
    """One candidate per non-empty line, list markers and wrapping quotes removed."""
    out = []
    for line in content.splitlines():
        line = _LIST_MARK.sub("", line).strip()
        if len(line) >= 2 and line[0] == line[-1] and line[0] in "\"'":
            line = line[1:-1].strip()
        if line:
            out.append(line)
    return out


class OpenAICompatibleGenerator:
    """Asks an OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp's server, a hosted API)
    for candidates, through the `openai` client package.

    The package is imported on the first request, so a deployment without a generator never loads it.
    Network or protocol failures raise `GeneratorError` (the API key never appears in messages); the client
    does not retry: a run that fails says why at once, and the caller decides whether to try again.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model: str,
        timeout: float = 30.0,
        *,
        temperature: float = 0.9,
        max_tokens: int | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.model = model
        self.timeout = timeout
        self.temperature = temperature
        self.max_tokens = max_tokens

    def __repr__(self) -> str:
        return f"OpenAICompatibleGenerator(base_url={self.base_url!r}, model={self.model!r})"

    def _messages(self, prompt: str, n: int) -> list[JsonObject]:
        return [
            {"role": "system", "content": _SYSTEM_PROMPT},
            {"role": "user", "content": f"{prompt}\n\nWrite exactly {n} texts, one per line."},
        ]

    def generate(self, prompt: str, n: int) -> list[str]:
        if n <= 0:
            return []
        import openai  # here, not at the top: only a configured generator needs the package

        url = f"{self.base_url}/chat/completions"
        # A local server needs no key: then no Authorization header at all (the package would send its own).
        headers = None if self._api_key else {"Authorization": openai.Omit()}
        client = openai.OpenAI(
            base_url=self.base_url, api_key=self._api_key or "none", timeout=self.timeout, max_retries=0
        )
        try:
            with client:
                completion = client.chat.completions.create(
                    model=self.model,
                    messages=self._messages(prompt, n),
                    temperature=self.temperature,
                    max_tokens=self.max_tokens if self.max_tokens is not None else openai.omit,
                    extra_headers=headers,
                )
                contents = [str(c.message.content or "") for c in completion.choices]
        except openai.APIStatusError as exc:
            raise GeneratorError(
                f"text generator at {url} answered HTTP {exc.status_code}: {exc.response.text[:200]}"
            ) from exc
        except openai.APIConnectionError as exc:  # also a timeout
            raise GeneratorError(f"text generator at {url} unreachable: {type(exc).__name__}: {exc}") from exc
        except (openai.OpenAIError, AttributeError, TypeError, ValueError) as exc:
            raise GeneratorError(
                f"text generator at {url} sent no chat completion: {type(exc).__name__}: {exc}"
            ) from exc
        texts = [line for content in contents for line in parse_lines(content)]
        return texts[:n]
