"""The docs' relative links lead somewhere: every link of README.md and of the pages under docs/ names a
file of the checkout, and its `#anchor` a heading of that page (as GitHub spells a heading's anchor). The
API's reference is an index and topic pages that link one another by section, so a section renamed or moved
shows here."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCED = re.compile(r"^[ \t]*```.*?^[ \t]*```[^\n]*$", re.S | re.M)
INLINE_CODE = re.compile(r"(`+)(?:(?!\n[ \t]*\n).)+?\1", re.S)
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6} (.+?)\s*#*\s*$", re.M)


def anchor_of(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower()).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """A page's anchors; a repeated heading's get `-1`, `-2`, … as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for match in HEADING.finditer(FENCED.sub("", page.read_text(encoding="utf-8"))):
        anchor = anchor_of(match.group(1))
        found.add(anchor if anchor not in seen else f"{anchor}-{seen[anchor]}")
        seen[anchor] = seen.get(anchor, 0) + 1
    return frozenset(found)


def relative_links(page: Path) -> list[str]:
    """The targets of a page's links that are not URLs, outside code (whose brackets are no links)."""
    prose = INLINE_CODE.sub("", FENCED.sub("", page.read_text(encoding="utf-8")))
    return [t for t in LINK.findall(prose) if not re.match(r"^[a-zA-Z][a-zA-Z+.-]*:|//", t)]


def test_the_anchor_rule_is_githubs() -> None:
    assert anchor_of("PATCH /models/{h}") == "patch-modelsh"
    assert anchor_of("One's own labels (addition)") == "ones-own-labels-addition"
    assert anchor_of("Runs and `last_operation`") == "runs-and-last_operation"


def _record(page: Path) -> bool:
    """A decision record is written once: its links name the pages of its day, whose sections may move since
    (the file must still exist); reference pages' links must name a heading that is there now."""
    return page.parent.name == "decisions"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_names_a_file_and_a_heading_there(page: Path) -> None:
    broken = []
    for target in relative_links(page):
        name, _, anchor = target.partition("#")
        dest = (page.parent / name).resolve() if name else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest) and not _record(page):
            broken.append(f"{target}: no heading with that anchor in {dest.relative_to(ROOT)}")
    assert broken == []
