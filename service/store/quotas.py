"""Storage quotas (docs/api.md "Rate limits and quotas"): what one person keeps on one model, and what a
namespace keeps in all, checked inside the transaction that stores, so a refusal stores nothing.

A person's labels (votes, feedback labels, unsure marks) are counted exactly, after the request's rows are
written and before the commit (a repeat of a stored label adds nothing and is never refused for it); owners
of the namespace are not held to it (they import whole datasets), only to the namespace's quota. The
namespace's characters are measured every `quota_measure_interval_s` and grow by each write in between, so
the check costs one row's read, not a scan of every text.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from service.config.settings import Settings
from service.errors import ApiError
from service.store.api_keys import Principal
from service.store.campaign_schema import TextComment, UnsureMark
from service.store.schema import EvalItem, FeedbackLabel, Model, PoolText, SampleRow, StorageUsage, utcnow

CODE = "quota_exceeded"


def chars_of(texts: Iterable[str]) -> int:
    return sum(len(t) for t in texts)


def person_usage(s: Session, model_id: int, annotator: str) -> tuple[int, int]:
    """(labels, characters of their texts) the person keeps on the model."""
    rows = chars = 0
    for table in (SampleRow, FeedbackLabel, UnsureMark):
        n, c = s.execute(
            select(func.count(), func.coalesce(func.sum(func.length(table.text)), 0)).where(
                table.model_id == model_id, table.annotator == annotator
            )
        ).one()
        rows, chars = rows + int(n), chars + int(c)
    return rows, chars


def require_person_room(s: Session, settings: Settings, who: Principal, model: Model) -> None:
    """429 or 413 `quota_exceeded` when the caller's labels on the model (the request's written already,
    not committed) pass their quota; the caller's transaction then rolls back."""
    if who.may("manage", model.namespace):
        return
    _refuse_past(settings, who, model, *person_usage(s, model.id, who.annotator))


def require_edit_room(
    s: Session,
    settings: Settings,
    who: Principal,
    model: Model,
    before: tuple[str | None, str],
    after: tuple[str | None, str],
) -> None:
    """The quotas' check of an edit of a stored label, before it is written: `before` and `after` are the
    label's (annotator, text). An edit counts what it adds, as a create counts its rows: the namespace's
    text grows by the new text's length less the old one's, when that is more (a shorter text frees room the
    next measurement sees); the caller's labels grow by the label when the edit makes it theirs (a
    machine-made sample they correct), else by the same growth of its text. Past a quota: the refusal a create
    gets (413 or 429 `quota_exceeded`), nothing written; an edit that adds nothing is never refused, even
    for one over a quota lowered since."""
    (old_by, old_text), (new_by, new_text) = before, after
    added = max(0, len(new_text) - len(old_text))
    if added:
        require_namespace_room(s, settings, model.namespace, added)
    mine_before, mine_after = old_by == who.annotator, new_by == who.annotator
    rows = int(mine_after) - int(mine_before)
    chars = (len(new_text) if mine_after else 0) - (len(old_text) if mine_before else 0)
    if (rows <= 0 and chars <= 0) or who.may("manage", model.namespace):
        return
    kept_rows, kept_chars = person_usage(s, model.id, who.annotator)
    # Only what grows is held to its quota (0 passes any): more text in as many labels is no label more.
    _refuse_past(
        settings, who, model, kept_rows + rows if rows > 0 else 0, kept_chars + chars if chars > 0 else 0
    )


def _refuse_past(settings: Settings, who: Principal, model: Model, rows: int, chars: int) -> None:
    """The refusal of a request that would leave the caller keeping `rows` labels of `chars` characters on
    the model, when that passes a quota."""
    if settings.label_quota_rows and rows > settings.label_quota_rows:
        raise ApiError(
            429,
            CODE,
            f"{who.annotator} would keep {rows} labels on {model.handle}, past the quota of "
            f"{settings.label_quota_rows} per person and model: nothing of this request was stored. An owner "
            "of the namespace can remove labels or raise SCORING_LABEL_QUOTA_ROWS.",
        )
    if settings.label_quota_chars and chars > settings.label_quota_chars:
        raise ApiError(
            413,
            CODE,
            f"{who.annotator}'s labels on {model.handle} would hold {chars} characters of text, past the "
            f"quota of {settings.label_quota_chars} per person and model: nothing of this request was "
            "stored.",
        )


def measure(s: Session, namespace: str) -> int:
    """The characters of text the namespace's models keep now (a scan: see the module's docstring)."""
    models = select(Model.id).where(Model.namespace == namespace).scalar_subquery()
    total = 0
    for table, column in (
        (SampleRow, SampleRow.text),
        (FeedbackLabel, FeedbackLabel.text),
        (PoolText, PoolText.text),
        (EvalItem, EvalItem.text),
        (UnsureMark, UnsureMark.text),
        (TextComment, TextComment.text),
        (TextComment, TextComment.body),
    ):
        query = select(func.coalesce(func.sum(func.length(column)), 0)).where(table.model_id.in_(models))
        total += int(s.scalar(query) or 0)
    return total


def namespace_usage(s: Session, settings: Settings, namespace: str, *, write: bool) -> int:
    """The namespace's characters: the stored figure, measured anew when it is older than the interval
    (`write`: the measurement is kept for the next requests)."""
    row = s.get(StorageUsage, namespace)
    now = utcnow()
    if row is not None and now - row.measured_at < timedelta(seconds=settings.quota_measure_interval_s):
        return int(row.chars)
    chars = measure(s, namespace)
    if write:
        if row is None:
            s.add(StorageUsage(namespace=namespace, chars=chars, measured_at=now))
        else:
            row.chars, row.measured_at = chars, now
        s.flush()
    return chars


def require_namespace_room(
    s: Session, settings: Settings, namespace: str, added: int, *, write: bool = True
) -> None:
    """413 `quota_exceeded` when storing `added` characters would take the namespace past its quota;
    otherwise (`write`) count them in."""
    quota = settings.namespace_quota_chars
    if not quota:
        return
    used = namespace_usage(s, settings, namespace, write=write)
    if used + added > quota:
        raise ApiError(
            413,
            CODE,
            f"Namespace {namespace!r} keeps {used} characters of text; {added} more would pass its quota of "
            f"{quota}: nothing of this request was stored. Delete what is no longer needed, or the operator "
            "raises SCORING_NAMESPACE_QUOTA_CHARS.",
        )
    if write and added:
        s.execute(
            update(StorageUsage)
            .where(StorageUsage.namespace == namespace)
            .values(chars=StorageUsage.chars + added)
        )
