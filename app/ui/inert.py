"""User text shown as text: a comment, a name or a labelled text is never a link, an image or markup on any
page; guidelines keep their Markdown's structure (`guidelines_md`), never a link, an image or raw HTML.
Streamlit renders Markdown in `st.markdown`, captions, messages and widget labels, GitHub's autolinks
included (a bare `http://…`, `www.…` or e-mail address becomes a link even with its punctuation escaped:
remark-gfm finds them in the parsed text). So what a colleague typed goes through `escape_md` before it joins
a Markdown string, or is shown whole with `st.text`; tests/app/test_inert_text.py's scan finds every value
interpolated into rendered Markdown that did not."""

from __future__ import annotations

import html
import re
from urllib.parse import quote as quote_url

# Every ASCII punctuation mark: CommonMark lets a backslash escape each of them, and an escaped mark starts
# nothing (no link, image, emphasis, heading, list, directive `:red[…]` or math `$…$`).
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
# Where an autolink would start (`www.`, `://`, `@`): an invisible word joiner there breaks the pattern and
# leaves what the reader sees unchanged.
_AUTOLINK = re.compile(r"(?i)(?<=www)(?=\.)|(?<=:)(?=/)|(?=@)")
JOINER = "\u2060"


def escape_md(text: str) -> str:
    """`text` for a Markdown string, shown as typed: every punctuation mark escaped, no autolink, line
    breaks kept."""
    return _PUNCTUATION.sub(r"\\\1", _AUTOLINK.sub(JOINER, text)).replace("\n", "  \n")


def quote(text: str) -> str:
    """`text` as a Markdown block quote of itself (every line quoted), shown as typed."""
    return "\n".join(f"> {escape_md(line)}" if line.strip() else ">" for line in text.split("\n"))


def code(text: str) -> str:
    """`text` as an inline code span, shown as typed on one line: a backtick in it cannot close the span
    early, a blank line cannot end it, and its own edge spaces are kept."""
    text = text.replace("\r", " ").replace("\n", " ")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    edges = text[:1] + text[-1:]
    pad = " " if "`" in edges or (text.startswith(" ") and text.endswith(" ") and text.strip(" ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def link_target(url: str) -> str:
    """`url` as a Markdown link's destination that ends where it should: every character that could close
    it early or start markup (spaces, brackets, parentheses, backslashes, quotes) percent-encoded."""
    return quote_url(url, safe=":/?#&=%@+,;~!$*")


def html_text(text: str) -> str:
    """`text` inside an HTML block (`unsafe_allow_html`), shown as typed: escaped, and its line breaks as
    character references, since a blank line would end the block and let Markdown after it run."""
    return html.escape(text).replace("\r", "&#13;").replace("\n", "&#10;")


# What starts markup that could reach outside the text: raw HTML and autolinks (`<`), links, images and
# footnotes (`[`, `]`), Streamlit's directives and icons (`:red[…]`, `:material/…:`), math (`$`); and a
# backslash, which would otherwise escape the escape put before any of them.
_OUTSIDE_MARKDOWN = re.compile(r"([<\[\]:$\\])")


def guidelines_md(text: str) -> str:
    """Guidelines someone wrote in Markdown, rendered as Markdown, safely: headings, emphasis, lists, block
    quotes, tables and code stay; raw HTML (a script, an iframe, an image tag) shows as the characters typed,
    and nothing becomes a link, an image, a coloured directive or math (a URL shows as typed).

    Every line is escaped alike, code too: where a code block or span ends depends on the lists and quotes
    around it, which a line-by-line reading cannot tell for sure, and a line left as written because it
    looked like code, but read as prose, would be live HTML. The price: in code, a backslash shows before
    `<`, `[`, `]`, `:`, `$` and `\\`."""
    return _OUTSIDE_MARKDOWN.sub(
        r"\\\1", _AUTOLINK.sub(JOINER, text.replace("\r\n", "\n").replace("\r", "\n"))
    )
