"""`app.ui.inert.escape_md`: any string, rendered as CommonMark, is one paragraph of exactly that text (no
link, no image, no markup); the browser test (test_import_browser.py) checks GitHub's autolinks in
Streamlit. And every value the pages interpolate into Markdown went through it (tests/app/inert_scan.py)."""

from __future__ import annotations

import html
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from app.ui.inert import JOINER, code, escape_md, guidelines_md, html_text, link_target
from tests.app.inert_scan import ROOT, Scan, unsafe_values

MARKUP = st.sampled_from(["[", "]", "(", ")", "!", "*", "_", "`", "<", ">", "#", "-", "\\", ":", "$", "|"])
TEXT = st.lists(
    st.one_of(MARKUP, st.text(st.characters(codec="ascii", exclude_categories=["Cc"]))), max_size=20
)


@given(TEXT)
@settings(max_examples=200, deadline=None)
def test_any_text_renders_as_itself(parts: list[str]) -> None:
    text = "".join(parts).strip()
    rendered = MarkdownIt("commonmark").render(escape_md(text)).strip()
    assert "<a" not in rendered and "<img" not in rendered
    if text:
        assert rendered.startswith("<p>") and rendered.endswith("</p>")
        assert html.unescape(rendered.removeprefix("<p>").removesuffix("</p>")).replace(JOINER, "") == text


def test_a_link_and_an_image_stay_as_typed() -> None:
    text = "[open the updated guidelines](http://x.example) ![x](http://x.example/p.png)"
    rendered = MarkdownIt("commonmark").render(escape_md(text))
    assert html.unescape(rendered).replace(JOINER, "").strip() == f"<p>{text}</p>"


# What Markdown guidelines may become: structure and emphasis, never a link, an image or raw HTML.
STRUCTURE = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "ul", "ol", "li", "blockquote", "code",
             "pre", "hr", "br"}  # fmt: skip
GUIDELINE_PARTS = st.one_of(
    MARKUP,
    st.sampled_from(
        [
            "\n",
            "\n\n",
            "```\n",
            "<script>alert(1)</script>",
            "<img src=x onerror=y>",
            "javascript:alert(1)",
            "[a](javascript:alert(1))",
            "<http://x.example>",
            "www.x.example",
            ":red[loud]",
            "$x$",
            "# ",
            "- ",
            "**",
            "<!-- -->",
            "&lt;b&gt;",
            "\\`",
            "``",
            "~~~\n",
            "    ",
        ]
    ),  # fmt: skip
    st.text(st.characters(codec="ascii", exclude_categories=["Cc"])),
)


@given(st.lists(GUIDELINE_PARTS, max_size=20))
@settings(max_examples=300, deadline=None)
def test_guidelines_render_as_markdown_with_no_html_link_or_image(parts: list[str]) -> None:
    """Whatever the guidelines hold, rendered with raw HTML allowed (Streamlit's pages allow none), only
    Markdown's own structure comes out."""
    rendered = MarkdownIt("commonmark", {"html": True}).render(guidelines_md("".join(parts)))
    assert set(re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", rendered)) <= STRUCTURE, rendered


def test_guidelines_keep_their_markdown_and_show_html_as_typed() -> None:
    text = (
        "# Politeness\n\nLabel **polite** when the reply:\n\n- thanks the customer\n- says *sorry*\n\n"
        "See <b>bold</b> [the guide](http://x.example) at www.x.example: `a <i>code</i> span`.\n\n"
        "```\n<script>kept as code</script>\n```"
    )
    rendered = MarkdownIt("commonmark", {"html": True}).render(guidelines_md(text))
    assert "<h1>Politeness</h1>" in rendered and "<strong>polite</strong>" in rendered
    assert "<li>thanks the customer</li>" in rendered and "<em>sorry</em>" in rendered
    seen = html.unescape(rendered).replace(JOINER, "")
    assert "See <b>bold</b> [the guide](http://x.example) at www.x.example:" in seen  # as typed, inert
    assert "<b>" not in rendered and "<a" not in rendered
    assert "<code>a \\&lt;i&gt;code\\&lt;/i&gt; span</code>" in rendered  # inline code: escaped, inert
    assert "<pre><code>\\&lt;script&gt;kept as code\\&lt;/script&gt;\n</code></pre>" in rendered


@given(st.text(st.characters(codec="ascii", exclude_categories=["Cc"]) | st.sampled_from("`\n "), min_size=1))
@settings(max_examples=200, deadline=None)
def test_a_code_span_shows_its_text(text: str) -> None:
    shown = text.replace("\n", " ")
    rendered = MarkdownIt("commonmark").render(f"x {code(text)}").strip()
    if shown.strip(" "):
        assert html.unescape(rendered) == f"<p>x <code>{shown}</code></p>"


@given(st.lists(st.one_of(MARKUP, st.sampled_from(["\n", "\n\n", "\r"]), st.text()), max_size=20))
@settings(max_examples=200, deadline=None)
def test_text_in_an_html_block_stays_in_it(parts: list[str]) -> None:
    """A blank line in the text would end the block and let Markdown after it make a link or an image."""
    text = "".join(parts)
    rendered = MarkdownIt("commonmark", {"html": True}).render(
        f'<div data-x="{html_text(text)}">{html_text(text)}</div>'
    )
    assert rendered.count("<") == 2 and rendered.startswith("<div") and rendered.rstrip().endswith("</div>")


@given(st.text(st.characters(codec="ascii", exclude_categories=["Cc"]) | st.sampled_from("\n\r ")))
@settings(max_examples=200, deadline=None)
def test_a_link_target_ends_where_it_should(path: str) -> None:
    url = f"http://127.0.0.1:8000/{path}"
    rendered = MarkdownIt("commonmark").render(f"[docs]({link_target(url)}/docs) after").strip()
    assert rendered.startswith('<p><a href="http://127.0.0.1:8000/')
    assert rendered.endswith('/docs">docs</a> after</p>') and rendered.count("<") == 4


def test_every_value_shown_as_markdown_is_made_inert() -> None:
    """A value interpolated into Markdown that Streamlit renders went through `app/ui/inert.py`, is a
    formatted number, or is built only from such parts and the code's own strings (tests/app/inert_scan.py):
    a string someone typed (a name, a tag, a service message quoting input) that did not could become a link
    or an image fetched from anywhere."""
    paths = sorted([*ROOT.glob("app/**/*.py"), *ROOT.glob("pages/*.py")])
    found = unsafe_values(paths)
    assert found == [], "values shown as Markdown without app/ui/inert.py:\n" + "\n".join(found)


PAGE = """
import streamlit as st
from app.ui.inert import escape_md

def failed(model, note: str) -> None:
    why = f"{escape_md(model.name)}: {NOTE_{0}}"
    st.caption(f"Last run failed: {why}")
    st.error(f"{ERROR_{0}}")
    said = line(model)
    parts = ["**ready**"]
    parts.append(f"{model.votes:,} votes")
    st.markdown(f"{said} · {' · '.join(parts)}")

def line(model) -> str:
    state = STATE_{0}
    return f"{state} · v{model.version_no:d}"
"""
UNESCAPED = {"NOTE_": "note", "ERROR_": "model.error_message", "STATE_": "model.state"}


def test_the_scan_finds_a_value_that_was_not_made_inert() -> None:
    """Through a local variable, directly, and through the return of a function: each is found, and only
    these; made inert, none is."""
    raw = PAGE
    for name, value in UNESCAPED.items():
        raw = raw.replace(name + "{0}", value)
    found = Scan().unsafe(Path("page.py"), raw)
    assert found == ["page.py:7: {why}", "page.py:8: {model.error_message}", "page.py:12: {said}"]
    inert = PAGE
    for name, value in UNESCAPED.items():
        inert = inert.replace(name + "{0}", f"escape_md({value})")
    assert Scan().unsafe(Path("page.py"), inert) == []
