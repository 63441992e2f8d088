"""The Label page's queue of suggested pool texts: fetched ahead in the background, refilled as it runs out,
asked again when something may have changed, and handed back when the settings or the campaign change.

Suggestions are claimed for the person (colleagues get other texts; a reload brings these back first), and a
skip releases one. Moving a control (mode, overlap) re-tunes the queue after the text shown and keeps the
session's labels and counters.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import Future, ThreadPoolExecutor

from app.labelling.session import SUGGESTING, Answer, Failure, LabelSession, Queued, as_queued
from app.ui.retry import worth_retrying
from core.client import ApiError, AuthenticationError, Client, NotFoundError, Suggestions

BATCH = 20  # suggestions fetched at a time
PREFETCH_AT = 5  # queued texts left when the next suggestions are fetched in the background
_BACKGROUND = ThreadPoolExecutor(max_workers=2, thread_name_prefix="label-suggest")  # shared by sessions


def refill(session: LabelSession, client: Client) -> None:
    """Fetch suggestions when the queue has run out (texts already queued or labelled are not added twice),
    and start fetching the next ones in the background while `PREFETCH_AT` texts are still queued: the service
    takes seconds to suggest from a large pool, and the key press that empties the queue should not wait."""
    if session.current is None:
        prefetched, session.pending = session.pending, None
        answer = prefetched.result() if prefetched is not None else _suggest(session, client)
        fresh = _unseen(session, answer.got)
        if not fresh and prefetched is not None:  # asked before the last labels: ask again, now
            answer = _suggest(session, client)
            fresh = _unseen(session, answer.got)
        counted(session, answer)
        back = {item["id"] for item in fresh}  # passed over with → and handed back: queued again, at the end
        session.queue = [item for item in session.queue[: session.pos] if item["id"] not in back]
        session.pos = len(session.queue)
        session.queue += fresh
        session.exhausted = not fresh
        if not fresh:
            session.message = exhausted_note(session)
    if not session.exhausted and session.pending is None and len(session.queue) - session.pos <= PREFETCH_AT:
        session.pending = _BACKGROUND.submit(_suggest, session, client)


def counted(session: LabelSession, answer: Answer) -> None:
    """What an answer says is left: the count the page shows follows it (new pool texts, votes wanted)."""
    exact = answer.asked == answer.labelled or session.unlabelled is None  # else the last exact count stands
    if answer.got.unlabelled is not None and exact:
        session.unlabelled, session.labelled_then = answer.got.unlabelled, answer.labelled
    session.held_by_others = answer.got.held_by_others


def exhausted_note(session: LabelSession) -> str:
    """Why no text is queued although some are left, in the person's words: colleagues are named only when
    the service counts texts their live claims hold; texts this session skipped are not offered again."""
    left = session.left or 0
    if not left:
        return ""
    if session.held_by_others:
        return (
            f"{session.held_by_others:,} of the texts left are held by colleagues for now; press → to ask "
            "again (this page also asks by itself)."
        )
    if session.skipped:
        return f"The {left:,} text(s) left are ones you skipped in this session; press ← to go back to them."
    return f"{left:,} text(s) left could not be suggested just now; press → to ask again."


def poll(session: LabelSession, client: Client, pool_size: int) -> bool:
    """With nothing queued: ask again when something may have changed (texts added to the pool, texts left
    that colleagues held or that could not be suggested) or when the last suggestions failed; True when
    texts came."""
    if session.current is not None or session.signed_out or session.pending is not None:
        return False
    if session.failure is not None:
        if not session.failure.suggesting or not worth_retrying(session.failure.exc):
            return False  # a press that failed, or a refusal the same request would meet: the person decides
    elif not session.left and pool_size == session.pool_seen:
        return False  # the pool is done and the same: no suggestion asked for
    session.pool_seen = pool_size
    try_again(session, client)
    return session.current is not None


def try_again(session: LabelSession, client: Client) -> None:
    """Ask for suggestions again after a failure (the page's *Try again*, or `poll` by itself): the failure
    goes, and a new one takes its place if the service still fails."""
    session.failure, session.exhausted = None, False
    try:
        refill(session, client)
    except AuthenticationError as exc:
        session.signed_out = str(exc)
    except Exception as exc:  # noqa: BLE001 - shown on the page, never a traceback
        session.failure = Failure(SUGGESTING, exc)


def start(session: LabelSession, client: Client) -> None:
    """Ask for a new session's first suggestions in the background: the page paints at once (suggesting
    from a large pool takes the service seconds), and shows them when `first_suggestions_ready` says so."""
    if session.current is None and session.pending is None and not session.exhausted:
        session.pending = _BACKGROUND.submit(_suggest, session, client)


def first_suggestions_ready(session: LabelSession, client: Client) -> bool:
    """False while the first suggestions are still on their way; once they have come, queue them (a failure
    is kept in `session.failure`, as a key press's would be, and asked again by `poll`)."""
    if session.current is not None or session.pending is None:
        return True
    if not session.pending.done():
        return False
    try:
        refill(session, client)
    except Exception as exc:  # noqa: BLE001 - shown on the page, never a traceback
        session.failure = Failure(SUGGESTING, exc)
    return True


def _suggest(session: LabelSession, client: Client) -> Answer:
    asked, during = len(session.history), session.labelling
    got = client.suggest(
        session.handle, session.trait, k=BATCH, mode=session.mode, overlap=session.overlap, claim=True
    )
    # A label on its way when the suggestions were asked for or came may be in their count or not (the
    # service may store it before it counts, and its answer be read after this one): never an exact count.
    labelled = -1 if during or session.labelling else len(session.history)
    return Answer(got, asked, labelled)


def _unseen(session: LabelSession, got: Suggestions) -> list[Queued]:
    """The answer's texts not queued ahead, labelled or skipped in this session. A text passed over with →
    is the person's still (claimed): the service hands it back, and it is queued again rather than counted
    as left and never shown."""
    seen = (
        {item["id"] for item in session.queue[session.pos :]}
        | {h["item"]["id"] for h in session.history}
        | session.skipped
    )
    return [as_queued(item) for item in got.items if item.id not in seen]


def set_mode_and_overlap(session: LabelSession, client: Client, mode: str, overlap: float | None) -> None:
    """Another suggestion mode or overlap: the text shown stays (a key pressed on it still counts), the
    texts queued after it go back to the colleagues, and the next suggestions follow the new settings. The
    labels of the session, and its counters, stay."""
    if (session.mode, session.overlap) == (mode, overlap):
        return
    session.mode, session.overlap = mode, overlap
    requeue(session, client)


def follow_campaign(session: LabelSession, client: Client, campaign: tuple[object, ...]) -> None:
    """The owner changed the campaign (overlap, votes wanted, a pause, a version) while the page was open:
    the texts queued after the one shown were asked for under the old one, so they go back and the next
    suggestions follow the new one."""
    if session.campaign is not None and session.campaign != campaign:
        requeue(session, client)
    session.campaign = campaign


def requeue(session: LabelSession, client: Client) -> None:
    """The text shown stays (a key pressed on it still counts), the texts queued after it go back to the
    colleagues, and the next suggestions are asked for afresh."""
    for item in session.queue[session.pos + 1 :]:
        with contextlib.suppress(ApiError):
            release_text(session, client, item)
    session.queue = session.queue[: session.pos + 1]
    stale, session.pending = session.pending, None
    if stale is not None:  # suggested under the old settings, and claimed: handed back once they come
        stale.add_done_callback(lambda done: _release_suggested(session, client, done))
    session.exhausted = False
    if session.current is None:  # still waiting for the first suggestions: asked again in the background
        start(session, client)
    else:
        refill(session, client)


def _release_suggested(session: LabelSession, client: Client, done: Future[Answer]) -> None:
    if done.exception() is not None:
        return
    queued = {item["id"] for item in list(session.queue)}
    for item in done.result().got.items:
        if item.id not in queued:
            with contextlib.suppress(ApiError):
                release_text(session, client, as_queued(item))


def abandon(session: LabelSession, client: Client) -> None:
    """A session replaced (another trait, mode or overlap): its queued texts go back to the colleagues, so
    the next session's suggestions are the new settings' own, not the old claims handed back first."""
    for item in session.queue[session.pos :]:
        with contextlib.suppress(ApiError):
            release_text(session, client, item)


def release_text(session: LabelSession, client: Client, item: Queued) -> None:
    """A skipped text goes back to the colleagues at once (its claim released); a text deleted meanwhile
    has no claim left to release."""
    with contextlib.suppress(NotFoundError):
        client.release_claim(session.handle, int(item["id"]), session.trait)
