"""Every place in README.md and docs/ that states the default embedder names the code's,
`core.contract.DEFAULT_EMBEDDER` (docs/client.md still called MiniLM the default long after it was not).
The quickstart notebook has its own check (tests/client/test_notebook.py)."""

from __future__ import annotations

import re
from pathlib import Path

from core.contract import DEFAULT_EMBEDDER

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# The embedders as the docs name them: the registry's names (longest first) and their prose forms.
NAMES = r"multilingual-e5-small|e5-small-qint8|e5-small int8|e5-small|minilm-qint8v2|minilm|hashing"
NAME = rf"`?(?P<name>{NAMES})`?"
PROSE = {"e5-small int8": "e5-small-qint8", "multilingual-e5-small": "e5-small"}
# "the default embedder `x`", "the default for new models, `x`", "the default (`SCORING_EMBEDDER`, else `x`",
# "the default x int8 graph", "omit embedder= for the default x" ...
AFTER_DEFAULT = re.compile(rf"\bdefault\b(?P<gap>[^.;|\n]{{0,30}}?){NAME}", re.IGNORECASE)
# ... and "`x` (default, multilingual)", "`x` (also `default`)", "`x`, the default", "x stays the default".
BEFORE_DEFAULT = re.compile(
    rf"{NAME}(?:\s*\(\s*|,\s*|\s+)(?:also `default`|the default|default|(?:stays|is|remains) the default)\b",
    re.IGNORECASE,
)
PAST = re.compile(r"\b(?:before|then)\b")  # "the default before e5-small-qint8", "(MiniLM, the default then)"


def paragraphs(text: str) -> list[str]:
    """The text's paragraphs, each on one line (a statement may wrap), links reduced to their text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return [" ".join(line.strip() for line in block.splitlines()) for block in re.split(r"\n\s*\n", text)]


def stated_defaults(text: str) -> list[tuple[str, str]]:
    """(embedder named as the default, the words around it) for each statement of the default in `text`:
    not one about a past default, nor "not the default"."""
    found: list[tuple[str, str]] = []
    for para in paragraphs(text):
        for m in AFTER_DEFAULT.finditer(para):
            before = para[max(0, m.start() - 12) : m.start()]
            # A ")" between closes the statement: "`a` (the default), `b`" names b as another choice.
            if ")" in m["gap"] or PAST.search(m["gap"]) or re.search(r"not\**\s+the\s*$", before):
                continue
            found.append((m["name"], para[max(0, m.start() - 40) : m.end() + 10]))
        for m in BEFORE_DEFAULT.finditer(para):
            if PAST.match(para[m.end() : m.end() + 8].strip()):
                continue
            found.append((m["name"], para[max(0, m.start() - 10) : m.end() + 30]))
    # A table with a "default" column: the row of the embedder setting names it in that column.
    for table in re.findall(r"(?:^\|.*\|\n)+", text, re.MULTILINE):
        rows = [[c.strip() for c in row.strip("|").split("|")] for row in table.splitlines()]
        heads = [h.lower() for h in rows[0]]
        if "default" not in heads:
            continue
        for row in rows[2:]:
            if row[0].strip("`") in ("SCORING_EMBEDDER", "embedder") and len(row) == len(heads):
                cell = row[heads.index("default")]
                named = re.search(NAMES, cell, re.IGNORECASE)
                found.append((named[0] if named else cell, " | ".join(row[:3])))
    return found


def canonical(name: str) -> str:
    return PROSE.get(name.lower(), name.lower())


def test_every_stated_default_embedder_is_the_codes() -> None:
    stated = {path.relative_to(ROOT).as_posix(): stated_defaults(path.read_text()) for path in DOCS}
    wrong = [
        (doc, words)
        for doc, found in stated.items()
        for name, words in found
        if canonical(name) != DEFAULT_EMBEDDER
    ]
    assert not wrong, f"these name another default embedder than {DEFAULT_EMBEDDER}: {wrong}"
    # The places that state it today, so a change in their wording cannot make this test pass on nothing.
    for doc in ("README.md", "docs/api.md", "docs/client.md", "docs/embedders.md", "docs/perspective.md",
                "docs/service.md", "docs/workbench.md", "docs/benchmarks.md"):  # fmt: skip
        assert stated[doc], f"{doc} no longer states the default embedder where this test looks"


def test_the_finder_tells_a_statement_from_a_mention() -> None:
    said = [
        "svc = start_local_service()  # omit embedder= for the default MiniLM",
        "| `SCORING_EMBEDDER` | `minilm` (default, English) |",
        "None ships its weights; MiniLM stays the default.",
        "Absent: the service's default (`SCORING_EMBEDDER`, else `minilm`), resolved at create time.",
    ]
    for text in said:
        assert [canonical(n) for n, _ in stated_defaults(text)] == ["minilm"], text
    not_said = [
        "| `minilm-qint8v2` | the fastest (the default before e5-small-qint8) |",
        "demo models trained after the first visit (MiniLM, the default then)",
        "It is offered (the Models page's create form), not the default: it beats MiniLM on every cell.",
        "| `e5-small-qint8` (the default), `e5-small` (multilingual-e5-small) | 93 languages |",
    ]
    for text in not_said:
        assert [canonical(n) for n, _ in stated_defaults(text)] in ([], ["e5-small-qint8"]), text
    table = (
        "| variable | flag | default |\n|---|---|---|\n| `SCORING_EMBEDDER` | `--embedder` | `hashing` |\n"
    )
    assert [n for n, _ in stated_defaults(table)] == ["hashing"]
