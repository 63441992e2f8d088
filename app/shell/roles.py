"""What the key's role lets the workbench offer: one rule for every page that hides or disables a write.

The service refuses what a role may not do (403; docs/api.md "Roles"); a page asks `allows` first, so an
annotator is not shown buttons that would only answer "forbidden", and `gate` says why in a caption.
`KeyInfo.may` (from `GET /keys/current`) holds the table; a service without that route answers no key,
which is taken as the owner every key was before roles.
"""

from __future__ import annotations

import streamlit as st

from app.shell.backend import Backend
from core.client import KeyInfo
from core.contract import Action, least_role


def allows(key: KeyInfo | None, action: Action) -> bool:
    """Whether the key may do `action` (None: a service without `GET /keys/current`, as before roles)."""
    return key is None or key.may(action)


def refusal(key: KeyInfo | None, action: Action, what: str) -> str | None:
    """None when the key may do `action`; else why `what` is not offered, in the user's words."""
    if allows(key, action):
        return None
    assert key is not None
    if not key.can_author:
        return f"{what}: a scoring key reads and scores only."
    role = key.role or "owner"
    article = "an" if role[:1] in ("a", "e", "i", "o", "u") else "a"
    who = "you are" if key.is_person else "your key is"  # a person signed in has no key
    return f"{what} needs the {least_role(action)} role; {who} {article} {role}."


def gate(backend: Backend, action: Action, what: str) -> bool:
    """Whether the page offers `what`; when it does not, a caption says why."""
    reason = refusal(backend.key, action, what)
    if reason is not None:
        st.caption(":material/lock: " + reason)  # `what` is the page's own wording, never user text
    return reason is None
