"""A text box that reports its text while the user types (debounced), for the Demo page's live bars.

Streamlit's own text widgets commit only on Ctrl+Enter or blur. This is an `st.components.v2` component
(inline HTML/CSS/JS, no build step, no download): it sends the text 300 ms after the last keystroke and on
blur. Python owns the text: `revision` changes when Python replaces it (a preset, a shared link), and only
then does the box take the value from Python, so a rerun never overwrites what the user is typing.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

HTML = '<textarea class="live-text" rows="4" spellcheck="true"></textarea>'
CSS = """
.live-text {
  width: 100%; box-sizing: border-box; min-height: 9rem; resize: vertical;
  font: inherit; font-size: 1.6rem; line-height: 1.4; padding: 0.75rem 1rem;
  color: var(--st-text-color); background: var(--st-secondary-background-color);
  border: 1px solid var(--st-border-color, rgba(49, 51, 63, 0.2)); border-radius: 0.5rem;
}
.live-text:focus { outline: 2px solid var(--st-primary-color); outline-offset: -1px; }
"""
JS = """
export default function (component) {
  const { setStateValue, parentElement, data } = component;
  const box = parentElement.querySelector("textarea");
  box.placeholder = data.placeholder || "";
  box.setAttribute("aria-label", data.label || "Text");
  if (box.dataset.rev !== String(data.rev)) {
    box.value = data.value ?? "";
    box.dataset.rev = String(data.rev);
  }
  let timer = null;
  const send = () => { clearTimeout(timer); setStateValue("value", box.value); };
  box.oninput = () => { clearTimeout(timer); timer = setTimeout(send, 300); };
  box.onblur = send;
}
"""

_component = st.components.v2.component("scoring_workbench.live_text", html=HTML, css=CSS, js=JS)


def live_text_area(
    key: str,
    value: str,
    revision: int,
    on_change: Callable[[str], None],
    *,
    label: str,
    placeholder: str = "",
) -> None:
    """Mount the box; `on_change(text)` runs as a callback (before the rerun) when the user's text changes."""

    def _changed() -> None:
        state = st.session_state.get(key) or {}
        on_change(str(state.get("value") or ""))

    _component(
        key=key,
        data={"value": value, "rev": revision, "label": label, "placeholder": placeholder},
        default={"value": value},
        on_value_change=_changed,
    )
