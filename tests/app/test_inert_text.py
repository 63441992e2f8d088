"""`app.ui.inert.md`: any string, rendered as CommonMark, is one paragraph of exactly that text (no link, no
image, no markup); the browser test (test_inert_text_browser.py) checks GitHub's autolinks in Streamlit."""

from __future__ import annotations

import html

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from app.ui.inert import JOINER, md

MARKUP = st.sampled_from(["[", "]", "(", ")", "!", "*", "_", "`", "<", ">", "#", "-", "\\", ":", "$", "|"])
TEXT = st.lists(
    st.one_of(MARKUP, st.text(st.characters(codec="ascii", exclude_categories=["Cc"]))), max_size=20
)


@given(TEXT)
@settings(max_examples=200, deadline=None)
def test_any_text_renders_as_itself(parts: list[str]) -> None:
    text = "".join(parts).strip()
    rendered = MarkdownIt("commonmark").render(md(text)).strip()
    assert "<a" not in rendered and "<img" not in rendered
    if text:
        assert rendered.startswith("<p>") and rendered.endswith("</p>")
        assert html.unescape(rendered.removeprefix("<p>").removesuffix("</p>")).replace(JOINER, "") == text


def test_a_link_and_an_image_stay_as_typed() -> None:
    text = "[open the updated guidelines](http://x.example) ![x](http://x.example/p.png)"
    rendered = MarkdownIt("commonmark").render(md(text))
    assert html.unescape(rendered).replace(JOINER, "").strip() == f"<p>{text}</p>"
