"""A text box that reports its text while the user types (debounced), for the Demo page's live bars.

Streamlit's own text widgets commit only on Ctrl+Enter or blur. This is an `st.components.v2` component
(inline HTML/CSS/JS, no build step, no download): it sends the text 300 ms after the last keystroke and on
blur. Python owns the text: `revision` changes when Python replaces it (a preset, a shared link), and only
then does the box take the value from Python, so a rerun never overwrites what the user is typing (not even
when Streamlit rebuilds the box's HTML: the script keeps the user's latest text per key).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

HTML = '<textarea class="live-text" rows="4" spellcheck="true"></textarea>'
CSS = """
.live-text {
  width: 100%; box-sizing: border-box; min-height: 8rem; resize: vertical;
  font: inherit; font-size: 1.5rem; line-height: 1.4; padding: 0.75rem 1rem;
  color: var(--st-text-color); background: var(--st-secondary-background-color);
  border: 1px solid var(--st-border-color, rgba(49, 51, 63, 0.2)); border-radius: 0.5rem;
}
.live-text:focus { outline: 2px solid var(--st-primary-color); outline-offset: -1px; }
"""
JS = """
// What the user has in each box, kept outside the element: Streamlit may rebuild the component's HTML on a
// rerun, and a fresh textarea must come back with the user's latest text (and focus), not an older copy.
const boxes = new Map();
// What each box last sent: leaving the box (a click on another page's link) sends only a text not sent yet,
// so a page switch does not also ask for a rerun of this page's fragment.
const sent = new Map();
export default function (component) {
  const { setStateValue, parentElement, data } = component;
  const key = data.key;  // the Python key: the component's own id is new on every mount
  const box = parentElement.querySelector("textarea");
  const rev = String(data.rev);
  const kept = boxes.get(key);
  box.placeholder = data.placeholder || "";
  box.setAttribute("aria-label", data.label || "Text");
  if (box.dataset.rev !== rev) {
    const fresh = box.dataset.rev === undefined;
    if (fresh && kept && kept.rev === rev) {
      box.value = kept.value;  // the same revision: the user's own text wins
      sent.set(key, data.value ?? "");  // what Python holds: a text it missed is sent below
      if (kept.focused) { box.focus(); box.setSelectionRange(kept.caret, kept.caret); }
    } else {
      box.value = data.value ?? "";  // Python replaced the text (a preset, a shared link)
      sent.set(key, box.value);
    }
    box.dataset.rev = rev;
  }
  const remember = () => boxes.set(key, {
    rev, value: box.value, focused: box.getRootNode().activeElement === box, caret: box.selectionEnd,
  });
  remember();
  let timer = null;
  const send = () => {
    clearTimeout(timer);
    if (sent.get(key) === box.value) return;
    sent.set(key, box.value);
    setStateValue("value", box.value);
  };
  if (sent.has(key) && sent.get(key) !== box.value) timer = setTimeout(send, 300);
  box.oninput = () => { remember(); clearTimeout(timer); timer = setTimeout(send, 300); };
  box.onfocus = remember;
  // Streamlit removing the element also blurs it: only a box still on the page was left by the user.
  box.onblur = () => { send(); setTimeout(() => { if (box.isConnected) remember(); }, 0); };
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
        data={"key": key, "value": value, "rev": revision, "label": label, "placeholder": placeholder},
        default={"value": value},
        on_value_change=_changed,
    )
