"""Keyboard shortcuts for a page: an `st.components.v2` component that listens on the whole document.

Each press of one of `keys` (outside text inputs) is sent to Python as `{"key", "nonce"}`; the nonce makes two
presses of the same key two changes. Inline JS, no build step, no download (as app/live_text.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

JS = """
const FIELDS = ["INPUT", "TEXTAREA", "SELECT"];
export default function (component) {
  const { setStateValue, data } = component;
  const keys = new Set(data.keys || []);
  const doc = window.document;
  if (window.__scoringKeys) doc.removeEventListener("keydown", window.__scoringKeys);
  window.__scoringKeys = (event) => {
    const target = event.target;
    const typing = target && (target.isContentEditable || FIELDS.includes(target.tagName));
    if (typing || event.ctrlKey || event.metaKey || event.altKey || !keys.has(event.key)) return;
    event.preventDefault();
    setStateValue("press", { key: event.key, nonce: `${Date.now()}-${Math.random()}` });
  };
  doc.addEventListener("keydown", window.__scoringKeys);
}
"""

_component = st.components.v2.component("scoring_workbench.keys", html="<span></span>", js=JS)


def key_listener(key: str, keys: Sequence[str], on_press: Callable[[str], None]) -> None:
    """Call `on_press(key)` (as a callback, before the rerun) for each press of one of `keys`."""

    def _pressed() -> None:
        press = (st.session_state.get(key) or {}).get("press") or {}
        if press.get("key"):
            on_press(str(press["key"]))

    _component(key=key, data={"keys": list(keys)}, default={"press": None}, on_press_change=_pressed)
