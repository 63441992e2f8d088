"""Widgets every page shares: error display, action guard, operation progress, the selected model."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import pydantic
import streamlit as st
from streamlit.delta_generator_singletons import context_dg_stack
from streamlit.elements.lib.form_utils import is_in_form
from streamlit.errors import StreamlitDuplicateElementKey

from app.shell import reads, roles
from app.shell.backend import Backend, demo_load, get_backend, mark_signed_out
from app.shell.signin_config import signin_config
from app.shell.team_mode import team_mode
from app.ui.inert import code, escape_md
from app.ui.retry import worth_retrying
from core.client import Client, LastOperation, Model
from core.client.errors import (
    ApiError,
    AuthenticationError,
    NotFoundError,
    ScoringClientError,
    TransportError,
)
from core.contract import RUNS_IN_FLIGHT
from core.model_states import can

MODEL_KEY = "model"  # session_state: handle of the model the pages work on
# Material icons render from Streamlit's own font (no emoji font needed), in Markdown only.
STATE_ICONS = {
    "draft": ":material/edit_note:",
    "busy": ":material/hourglass_top:",
    "ready": ":material/check_circle:",
    "failed": ":material/error:",
    "archived": ":material/inventory_2:",
}


# What to do next, for the service's codes a user can meet while working (the message says what is wrong).
_ADVICE = {
    "text_too_long": "Shorten the text and try again.",
    "empty_text": "Type or paste a text first.",
    "validation_error": "Correct the input and try again.",
    "unauthorized": "Check the API key on the **Settings** page.",
    "forbidden": "This key may not do that: use a key with the right scope or namespace (**Settings**).",
    "rate_limited": "The service is busy: wait a moment and try again.",
    "payload_too_large": "Send less at once (fewer or shorter texts).",
    "database_busy": "The service is busy: try again in a moment.",
    "internal_error": "The service failed: try again; if it keeps failing, tell its operator the request id.",
}
# The same advice where the user already is on the Settings page: no "go to the Settings page".
_ADVICE_ON_SETTINGS = {
    "unauthorized": "Check the API key: this service does not know it.",
    "forbidden": "This key may not do that: use a key with the right scope or namespace.",
}
# A team's workbench takes its key at sign-in, not on the Settings page: another key means signing in again.
_ADVICE_IN_TEAM = {
    "unauthorized": "Sign out and sign in again with your API key.",
    "forbidden": "This key may not do that: sign out and sign in with a key of the right scope or namespace.",
}
# A team whose people sign in through its identity provider: a person has no key to change.
_ADVICE_AS_PERSON = {
    "unauthorized": "Sign out and sign in again.",
    "forbidden": "Your role here does not allow that: ask an owner of the namespace (Team page).",
}
# "body.samples.0.text: …" -> "…": where a field sits in a JSON body means nothing to the user.
_BODY_LOC = re.compile(r"^(?:body|query|path)(?:\.[\w-]+)*:\s*")


def _people_sign_in() -> bool:
    """Whether people sign in through the team's identity provider (as the Settings page tells them)."""
    try:
        return signin_config() is not None
    except ValueError:  # a half-done configuration: said at start, not in every error
        return False


def error_text(exc: BaseException, on_settings: bool = False) -> str:
    """One readable paragraph: what is wrong and what to do; API errors carry their code and request id.

    `on_settings`: shown on the Settings page itself, so the advice does not send the user there.
    """
    if isinstance(exc, ApiError):
        message = _BODY_LOC.sub("", (exc.message or "").strip()) or "The service refused the request."
        refused = exc.code or ""
        advice = (
            (team_mode() and _people_sign_in() and _ADVICE_AS_PERSON.get(refused))
            or (team_mode() and _ADVICE_IN_TEAM.get(refused))
            or (on_settings and _ADVICE_ON_SETTINGS.get(refused))
            or _ADVICE.get(refused)
        )
        advice = advice or (_ADVICE["internal_error"] if exc.status >= 500 else "")
        parts = [f"**{escape_md(_sentence(message))}** {advice}".strip()]
        meta = [f"`{exc.code}`" if exc.code else None, f"HTTP {exc.status}" if exc.status else None]
        parts.append(" · ".join(m for m in meta if m))
        if getattr(exc, "request_id", None):
            parts.append(f"request id `{exc.request_id}`")
        if getattr(exc, "run_id", None):
            parts.append(f"run `{exc.run_id}`")
        return " — ".join(p for p in parts if p)
    if isinstance(exc, TransportError):
        return (
            "**The scoring service cannot be reached.** Check the service URL (it ends in `/v1`) and that "
            f"the service is running, then try again. ({_transport_reason(exc)})"
        )
    if isinstance(exc, pydantic.ValidationError):  # the client checked the input before sending it
        problems = "; ".join(_field_problem(e) for e in exc.errors(include_url=False))
        return f"**Please correct the input:** {problems}."
    if isinstance(exc, ValueError):  # our own checks raise ValueError with a sentence for the user
        return f"**{exc}**"
    text = str(exc).strip()
    if isinstance(exc, ScoringClientError | TimeoutError | OSError) and text:
        # The client's own errors (a failed or cancelled run, a wait given up) and the system's are sentences
        # for the user already: their class names mean nothing on a page.
        return f"**{escape_md(_sentence(text))}**"
    code = getattr(exc, "code", None)
    prefix = f"`{code}` " if isinstance(code, str) else ""
    # A bug of ours: plain words first, the class named only when the exception says nothing else.
    if not text:
        return f"**Something went wrong** ({type(exc).__name__})."
    return f"**Something went wrong:** {prefix}{escape_md(text)}"


def _sentence(text: str) -> str:
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _field_problem(error: Mapping[str, Any]) -> str:
    where = ".".join(str(p) for p in error.get("loc", ()) if not isinstance(p, int) or p)
    msg = str(error.get("msg", "invalid"))
    msg = msg[:1].lower() + msg[1:]
    last = str(where).rsplit(".", 1)[-1]
    if where and msg.startswith(f"{last} "):  # our own messages already name the field ("text is empty")
        return msg
    return f"{where or 'value'}: {msg}"


def _transport_reason(exc: TransportError) -> str:
    text = str(exc)
    if "Errno 111" in text or "Connection refused" in text:
        return "nothing answers at that address"
    if "Name or service not known" in text or "nodename nor servname" in text or "Errno -2" in text:
        return "the host name is unknown"
    if "Timeout" in text:
        return "it did not answer in time"
    return "the connection failed"


def show_error(
    exc: BaseException,
    action: str | None = None,
    on_settings: bool = False,
    retry: Callable[[], None] | bool = False,
) -> None:
    """The error as a message. `retry`: the failed call is one the page makes on every run (a read it waits
    on), so after a failure that may pass (`worth_retrying`) a *Try again* button goes under it and the page
    recovers without a reload: its press reruns what drew the message (the page, or the fragment), which
    calls the service again; a callable runs first (a page that keeps a failure in its session clears it
    there). An action's failure gets none: the action's own button is the one to press again."""
    if isinstance(exc, AuthenticationError) and signin_config() is not None:
        # A person signed out (in another tab) or idle: not an error under a button but the signed-out page,
        # which app/main.py shows on the tab's next run, from a page's run or a fragment's alike.
        mark_signed_out(str(exc))
        st.rerun(scope="app")
    head = f"{action} failed: " if action else ""
    st.error(head + error_text(exc, on_settings), icon=":material/error:")
    # In a form its own submit button tries again (a form takes no other button).
    if retry and worth_retrying(exc) and not is_in_form(context_dg_stack.get()[-1]):
        # One button per message, keyed by what failed (a key kept from run to run, so a press is never
        # lost to a rerun); a second message of the same action in one run shares the first one's button.
        with contextlib.suppress(StreamlitDuplicateElementKey):
            st.button(
                "Try again",
                key=f"retry_{action or 'call'}",
                icon=":material/refresh:",
                on_click=retry if callable(retry) else None,
                help="Ask the service again.",
            )


@contextlib.contextmanager
def guard(action: str | None = None, on_settings: bool = False, retry: bool = False) -> Iterator[None]:
    """Run an action and show any error as a message, never a traceback (`retry`: a read the page makes on
    every run, offered again with *Try again* where the failure may pass: `show_error`).

    Streamlit's own control flow (st.rerun, st.stop) derives from BaseException and passes through.
    """
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - every failure becomes a message on the page
        show_error(exc, action, on_settings, retry)


def when(value: Any) -> str:
    """An ISO timestamp as `YYYY-MM-DD HH:MM:SS UTC` (whatever precision the service sends)."""
    if not value:
        return "—"
    text = str(value).replace("T", " ")
    return text[:19] + (" UTC" if text.endswith(("Z", "+00:00")) else "")


def operation_caption(op: LastOperation) -> str:
    phase, message = op.phase, op.progress_message
    bits = [escape_md(f"{op.kind or 'operation'} {op.status or ''}".strip())]
    if phase:
        bits.append(escape_md(str(phase)))
    if message and message != phase:
        bits.append(escape_md(str(message)))  # the service's words, which may quote what someone typed
    position = op.place_in_queue
    if op.status == "queued" and position is not None:
        bits.append("next in the queue" if position == 1 else f"number {position:d} in the queue")
    return " · ".join(bits)


def show_operation(op: LastOperation | None) -> None:
    """Progress bar (or outcome) of a model's `last_operation`."""
    if op is None:
        return
    status = op.status
    if status in RUNS_IN_FLIGHT:
        st.progress(op.fraction or 0.0, text=operation_caption(op))
    elif status == "cancelled":
        st.caption(
            f"Last operation: {escape_md(str(op.kind))} cancelled ({escape_md(when(op.finished_at))})."
        )
    elif status == "failed":
        why = f"{code(op.error_code or 'error')} {escape_md(op.error_message or '')}"
        st.error(f"Last {escape_md(str(op.kind))} failed: {why}")
    elif status == "succeeded":
        st.caption(
            f"Last operation: {escape_md(str(op.kind))} succeeded ({escape_md(when(op.finished_at))})."
        )


WATCHED_KEY = "watched_runs"  # session_state: run id -> progress steps seen while polling


def record_progress(op: LastOperation | None) -> None:
    """Remember each distinct step of a run seen while polling (shown once the run is over)."""
    run_id = op.run_id if op is not None else None
    if op is None or not run_id:
        return
    fraction = op.fraction
    phase = op.phase or op.status
    step = f"{phase} {fraction:.0%}" if fraction is not None else str(phase)
    steps = st.session_state.setdefault(WATCHED_KEY, {}).setdefault(run_id, [])
    if not steps or steps[-1] != step:
        steps.append(step)


def watched_steps(run_id: str | None) -> list[str]:
    return list(st.session_state.get(WATCHED_KEY, {}).get(run_id, [])) if run_id else []


def watch_model(handle: str) -> None:
    """While the model is busy, poll it every second and show its progress; rerun the page when done."""
    backend = get_backend()

    @st.fragment(run_every=1.0)
    def _poll() -> None:
        try:
            model = backend.client.get_model(handle)
        except Exception as exc:  # noqa: BLE001
            show_error(exc, "Polling the model")
            return
        op = model.last_operation
        record_progress(op)
        if model.state == "busy":
            show_operation(op)
            cancel_button(backend, handle, op)
        else:
            reads.invalidate(backend.url)  # the run changed the model, its versions and traits
            st.rerun(scope="app")

    _poll()


def cancel_button(backend: Backend, handle: str, op: LastOperation | None) -> None:
    """*Cancel* under a run's progress bar, for a key that may start runs: the service ends the run and puts
    the model back where the run started (docs/api.md "Cancel a run")."""
    if (
        op is None
        or not op.run_id
        or op.status not in RUNS_IN_FLIGHT
        or not roles.allows(backend.key, "manage")
    ):
        return
    if not st.button(
        "Cancel",
        key=f"cancel-{op.run_id}",
        icon=":material/cancel:",
        help=f"Stop this {escape_md(str(op.kind or 'run'))}: nothing of it is kept, and the model goes back "
        "to where it was before it.",
    ):
        return
    try:
        backend.client.cancel(handle, op.run_id)
    except ApiError as exc:  # it ended meanwhile (`run_finished`): the rerun shows how
        show_error(exc, "Cancelling the run")
        return
    reads.invalidate(backend.url)
    st.rerun(scope="app")


def selected_handle() -> str | None:
    return st.session_state.get(MODEL_KEY)


def select_model(handle: str | None) -> None:
    """Make `handle` the model every page works on (takes effect on the next run)."""
    st.session_state[MODEL_KEY] = handle


def require_model(backend: Backend) -> Model:
    """The selected model, or a hint and st.stop() when there is none or it cannot be read."""
    handle = selected_handle()
    if not handle:
        st.info("Pick a model in the sidebar, or create one on the **Models** page.")
        st.stop()
    try:
        return reads.model(backend.client, handle)
    except NotFoundError as exc:
        if demo_load().running:  # a first start: the model may be a demo model not created yet
            _wait_for_model(backend, handle)
        show_error(exc, f"Reading {handle}")
        st.stop()
    except Exception as exc:  # noqa: BLE001
        show_error(exc, f"Reading {handle}", retry=True)
        st.stop()
    raise AssertionError("unreachable")


def _wait_for_model(backend: Backend, handle: str) -> None:
    """Say so while the demo models load, and open the page once `handle` exists (a link to a demo model
    followed on a very first start answered a bare 404 before)."""
    st.info(
        f"{code(handle)} does not exist yet: the demo models are still loading in the background (progress "
        "in the sidebar). This page opens it as soon as it is there.",
        icon=":material/hourglass_top:",
    )

    @st.fragment(run_every=2.0)
    def _poll() -> None:
        try:
            backend.client.get_model(handle)
        except NotFoundError:
            if demo_load().running:
                return
        st.rerun(scope="app")  # it exists now (or the loading ended without it: then the page says 404)

    _poll()
    st.stop()


def model_header(model: Model) -> None:
    state = model.state
    version = f"v{model.version_no}" if model.version_no else "no version yet"
    tags = ", ".join(model.version_tags)
    st.caption(
        f"{STATE_ICONS.get(state, '')} {code(model.handle)} · **{escape_md(state)}** · {escape_md(version)}"
        + (f" · tags: {escape_md(tags)}" if tags else "")
    )


def watch_if_busy(model: Model) -> bool:
    """Live progress while the model is busy; True when it is."""
    # Always one container here, so the page's other elements keep their positions when progress appears
    # (Streamlit would otherwise show stale copies of them while the rerun catches up).
    with st.container():
        if model.state != "busy":
            return False
        watch_model(model.handle)
        return True


def is_editable(model: Model) -> bool:
    """Whether the model takes trait and sample edits (and so runs from scratch) in its state."""
    return can("edit", model.state)


def list_handles(backend: Backend, limit: int = 500) -> list[str]:
    """Models of the key's namespaces, then the public catalog (archived ones excluded); cached briefly."""
    return reads.handles(backend.client, backend.namespaces, limit)


def page_backend() -> Backend:
    """The backend for a page, or an error and st.stop() (pointing at Settings) when it is unreachable."""
    try:
        return get_backend()
    except Exception as exc:  # noqa: BLE001
        show_error(exc, "Connecting to the scoring service", retry=True)
        st.info("Enter a reachable service on the **Settings** page.")
        st.stop()
    raise AssertionError("unreachable")


class ModelPage(NamedTuple):
    backend: Backend
    client: Client
    model: Model
    handle: str
    busy: bool


def open_model_page(title: str) -> ModelPage:
    """The head every page about the selected model shares: title, model, state line, live progress."""
    backend = page_backend()
    st.title(title)
    model = require_model(backend)
    model_header(model)
    return ModelPage(backend, backend.client, model, model.handle, watch_if_busy(model))
