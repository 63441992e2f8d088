"""Keyboard shortcuts for one page: an `st.components.v2` component listening on the document while shown.

Each press of one of `keys` is sent to Python as `{"key", "nonce", "shown"}`; the nonce makes two presses of
the same key two changes, and names the press, so that a value delivered again (a rerun re-sending it) is
known as the same press. `shown` is what the page showed when the key went down: the `data-shown` attribute
of the first element matching `shown_from`, read from the document at that moment (what the person saw, not
what the next rerun will show).

The listener lives exactly as long as the component: Streamlit calls the cleanup the JS returns when the
page goes, and a handler whose element has left the document removes itself (so no other page ever sees a
shortcut). Presses in a text field are never taken, including fields inside a component's
shadow root (the Demo page's live box), where `event.target` is only the shadow host. Inline JS, no build
step, no download (as app/ui/live_text.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

JS = """
const FIELDS = ["INPUT", "TEXTAREA", "SELECT"];
export default function (component) {
  const { setStateValue, data, parentElement } = component;
  const keys = new Set(data.keys || []);
  const shownFrom = data.shown_from || null;
  const doc = window.document;
  const typing = (event) => {
    // composedPath()[0] is the element that has the focus, even inside a shadow root.
    const origin = (event.composedPath && event.composedPath()[0]) || event.target;
    return Boolean(origin && (origin.isContentEditable || FIELDS.includes(origin.tagName)));
  };
  const listener = (event) => {
    if (!parentElement.isConnected) { doc.removeEventListener("keydown", listener); return; }
    if (typing(event) || event.ctrlKey || event.metaKey || event.altKey || !keys.has(event.key)) return;
    event.preventDefault();
    const el = shownFrom ? doc.querySelector(shownFrom) : null;
    const shown = el ? el.getAttribute("data-shown") : null;
    setStateValue("press", { key: event.key, nonce: `${Date.now()}-${Math.random()}`, shown });
  };
  doc.addEventListener("keydown", listener);
  // Says the shortcuts are live (browser tests wait for it before the first key, as a person's eyes wait for
  // the page to be drawn).
  doc.documentElement.setAttribute("data-shortcuts", "on");
  return () => {
    doc.removeEventListener("keydown", listener);
    doc.documentElement.removeAttribute("data-shortcuts");
  };
}
"""

_component = st.components.v2.component("scoring_workbench.keys", html="<span></span>", js=JS)


def key_listener(
    key: str,
    keys: Sequence[str],
    on_press: Callable[[str, str | None, str | None], None],
    shown_from: str | None = None,
) -> None:
    """Call `on_press(key, shown, nonce)` (as a callback, before the rerun) for each press of one of `keys`:
    `shown` is the `data-shown` attribute of the element `shown_from` selects when the key went down (None
    without one), `nonce` the press's own id (a press delivered twice has the same one)."""

    def _pressed() -> None:
        press = (st.session_state.get(key) or {}).get("press") or {}
        if press.get("key"):
            shown, nonce = press.get("shown"), press.get("nonce")
            text = None if shown is None else str(shown)
            on_press(str(press["key"]), text, None if nonce is None else str(nonce))

    data = {"keys": list(keys), "shown_from": shown_from}
    _component(key=key, data=data, default={"press": None}, on_press_change=_pressed)
