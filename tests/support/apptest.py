"""Small helpers to drive one page script with streamlit.testing.v1.AppTest."""

from __future__ import annotations

import re
from typing import Any

from streamlit.testing.v1 import AppTest

from app.ui.inert import JOINER
from tests.support.app import PAGES, ROOT


def page(name: str, handle: str | None = None, **query: str) -> AppTest:
    at = AppTest.from_file(str(PAGES / f"{name}.py"), default_timeout=90)
    if handle is not None:
        at.session_state["model"] = handle
    for k, v in query.items():
        at.query_params[k] = v
    return at


def main_app() -> AppTest:
    return AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=90)


def forget_sidebar_picks() -> None:
    """The workbench's process forgets every model picked in the sidebar, as a fresh process starts: the next
    main page is a first visit (clearing the picker in AppTest does not reach its callback)."""
    from app.shell import last_model

    with last_model._LOCK:
        last_model._PICKED.clear()


def by_label(widgets: Any, label: str) -> Any:
    found = [w for w in widgets if w.label == label]
    assert found, f"no widget labelled {label!r}; have {[w.label for w in widgets]}"
    return found[0]


def texts(elements: Any) -> list[str]:
    return [str(e.value) for e in elements]


_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # a punctuation mark `app/ui/inert.py` escaped


def shown(elements: Any) -> list[str]:
    """Each element's Markdown with what `app/ui/inert.py` adds to user and service text (escapes, word
    joiners) taken out: the characters a reader sees, the Markdown around them kept."""
    return [_ESCAPED.sub(r"\1", text).replace(JOINER, "") for text in texts(elements)]


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def run_label_page(at: AppTest) -> None:
    """Run the Label page until its first suggestions are shown: they are fetched after the first paint."""
    at.run()
    if "label_session" in at.session_state:
        pending = at.session_state["label_session"].pending
        if pending is not None and at.session_state["label_session"].current is None:
            pending.result(timeout=90)
            at.run()


# Messages a user meets on the pages say what is wrong and what to do, in the user's words.
DEVELOPER_WORDS = ("String should", "pydantic", "body.", "constrained-str", "Errno", "Error:", "Traceback")


def plain(messages: list[str]) -> None:
    """None of `messages` speaks a developer's words (a validator's, a traceback's)."""
    for message in messages:
        assert not any(w in message for w in DEVELOPER_WORDS), message


def position(at: AppTest, kind: str, label: str) -> tuple[int, ...]:
    """Where the first `kind` element ("text_area", "selectbox", ...) labelled `label` sits: its index among
    its container's children at each level from the page's root. The browser draws an input it finds at
    another position anew, empty of what was typed but not yet sent."""

    def walk(node: Any, path: tuple[int, ...]) -> tuple[int, ...] | None:
        if getattr(node, "type", None) == kind and getattr(node, "label", None) == label:
            return path
        for index, child in sorted(getattr(node, "children", {}).items()):
            if (found := walk(child, (*path, index))) is not None:
                return found
        return None

    found = walk(at._tree, ())
    assert found is not None, f"no {kind} labelled {label!r}"
    return found


def card_of(at: Any, quoted: str) -> list[Any]:
    """The elements of the Disagreements tab's card that quotes `quoted` (as the page escaped it)."""

    def walk(node: Any) -> list[Any] | None:
        kids = [child for _, child in sorted(getattr(node, "children", {}).items())]
        if any(getattr(k, "type", None) == "markdown" and k.value == f"> {quoted}" for k in kids):
            return kids
        return next((found for k in kids if (found := walk(k)) is not None), None)

    found = walk(at._tree)
    assert found is not None, f"no card quotes {quoted!r}"
    return found
