"""`app.ui.inert.md`: any string, rendered as CommonMark, is one paragraph of exactly that text (no link, no
image, no markup); the browser test (test_inert_text_browser.py) checks GitHub's autolinks in Streamlit."""

from __future__ import annotations

import ast
import html
from collections.abc import Iterator
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from app.ui.inert import JOINER, code, html_text, md

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


# Streamlit calls whose text (first argument, `label`, `help` or `body`) renders as Markdown.
RENDERING = {
    "markdown", "write", "caption", "error", "info", "warning", "success", "toast", "button", "subheader",
    "header", "title", "expander", "checkbox", "radio", "selectbox", "multiselect", "toggle", "slider",
    "select_slider", "text_input", "text_area", "number_input", "download_button", "popover", "tabs",
    "page_link", "metric", "form_submit_button", "link_button", "status", "segmented_control", "pills",
}  # fmt: skip
# What an f-string may interpolate into them: text made inert, Markdown built from inert parts, a number
# with a format spec, or a module constant.
INERT_CALLS = {"md", "quote", "code", "html_text", "ours"}


def _inert_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in INERT_CALLS


def _unsafe(node: ast.AST) -> Iterator[str]:
    """The interpolated values under `node` that are neither made inert nor numbers nor constants."""
    if _inert_call(node):
        return
    if isinstance(node, ast.FormattedValue):
        value = node.value
        constant = isinstance(value, ast.Name) and value.id.isupper()
        if node.format_spec is None and not constant and not _inert_call(value):
            yield ast.unparse(value)
        return
    for child in ast.iter_child_nodes(node):
        yield from _unsafe(child)


def _rendered(call: ast.Call) -> list[ast.expr]:
    assert isinstance(call.func, ast.Attribute)
    shown = list(call.args) if call.func.attr == "write" else call.args[:1]
    return shown + [k.value for k in call.keywords if k.arg in ("label", "help", "body")]


def test_every_value_shown_as_markdown_is_made_inert() -> None:
    """A value interpolated into Markdown that Streamlit renders went through `app/ui/inert.py` (or is a
    formatted number): a string someone typed (a name, a tag, a service message quoting input) that did not
    could become a link or an image fetched from anywhere."""
    root = Path(__file__).resolve().parents[2]
    found = []
    for path in sorted([*root.glob("app/**/*.py"), *root.glob("pages/*.py")]):
        for call in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            if call.func.attr in RENDERING:
                for arg in _rendered(call):
                    found += [f"{path.relative_to(root)}:{call.lineno}: {{{v}}}" for v in _unsafe(arg)]
    assert found == [], "values shown as Markdown without app/ui/inert.py:\n" + "\n".join(found)
