"""Unsure marks and comments on a model's texts (docs/api.md, "Unsure and comments").

An unsure mark says "I could not decide this text"; a comment says why, or anything else a reviewer should
read beside it. Both are notes, never votes: they live in tables of their own (`unsure_marks`,
`text_comments`) that no training, agreement or count reads, so they reach no version. Writing one's own is
labelling (any role of the namespace); deleting a colleague's is a reviewer's call, as withdrawing a
colleague's buffered label is. They are allowed in every state but archived (they are not training data, so
a trained model takes them as a draft does); under zero-data-retention the service keeps no text: 409.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.contract import MAX_COMMENTS_PER_PERSON, MAX_COMMENTS_PER_TEXT
from core.json_types import JsonObject
from service.domain.access import load_model, require_role
from service.domain.blind import blind_for, seen
from service.domain.needs import Databases, Resources
from service.domain.states import require_not_archived
from service.domain.team import readable_model
from service.domain.traits import TraitRefs
from service.errors import ApiError
from service.schemas.notes import (
    CommentIn,
    CommentOut,
    CommentPage,
    NoteDeleted,
    UnsureIn,
    UnsureOut,
    UnsurePage,
)
from service.store import audit, quotas
from service.store.api_keys import Principal
from service.store.campaign_schema import TextComment, UnsureMark
from service.store.db import transaction
from service.store.samples import sha256
from service.store.schema import MAX_INT, Model, Trait


def _writable(s: Session, who: Principal, handle: str) -> Model:
    model = load_model(s, who, handle, write=True, action="label")
    require_not_archived(model)
    if model.zero_data_retention:
        raise ApiError(
            409,
            "zero_data_retention",
            "Under zero-data-retention the service keeps no text: no unsure mark or comment either.",
        )
    return model


def _unsure_out(mark: UnsureMark, trait: str) -> UnsureOut:
    return UnsureOut(
        id=mark.id, trait=trait, text=mark.text, annotator=mark.annotator, created_at=mark.created_at
    )


def _comment_out(c: TextComment, trait: str) -> CommentOut:
    return CommentOut(
        id=c.id, trait=trait, text=c.text, author=c.author, body=c.body, created_at=c.created_at
    )


def mark_unsure(ctx: Resources, who: Principal, handle: str, payload: UnsureIn) -> UnsureOut:
    """The caller's unsure mark on a text of a trait; marking it again answers the stored mark."""
    for attempt in range(2):
        try:
            with transaction(ctx.sessions) as s:
                model = _writable(s, who, handle)
                trait = TraitRefs(s, model).find(payload.trait, ("body", "trait"))
                digest = sha256(payload.text)
                mark = s.scalar(
                    select(UnsureMark).where(
                        UnsureMark.trait_id == trait.id,
                        UnsureMark.content_sha256 == digest,
                        UnsureMark.annotator == who.annotator,
                    )
                )
                if mark is None:
                    quotas.require_namespace_room(s, ctx.settings, model.namespace, len(payload.text))
                    mark = UnsureMark(
                        model_id=model.id,
                        trait_id=trait.id,
                        text=payload.text,
                        content_sha256=digest,
                        annotator=who.annotator,
                    )
                    s.add(mark)
                    s.flush()
                    quotas.require_person_room(s, ctx.settings, who, model)
                return _unsure_out(mark, trait.key)
        except IntegrityError:  # the same mark stored by a concurrent request: answer that one
            if attempt:
                raise
    raise AssertionError("unreachable")


def add_comment(ctx: Resources, who: Principal, handle: str, payload: CommentIn) -> CommentOut:
    with transaction(ctx.sessions) as s:
        model = _writable(s, who, handle)
        trait = TraitRefs(s, model).find(payload.trait, ("body", "trait"))
        _require_comment_room(s, model.id, trait.id, who.annotator, sha256(payload.text))
        quotas.require_namespace_room(s, ctx.settings, model.namespace, len(payload.text) + len(payload.body))
        comment = TextComment(
            model_id=model.id,
            trait_id=trait.id,
            text=payload.text,
            content_sha256=sha256(payload.text),
            author=who.annotator,
            body=payload.body,
        )
        s.add(comment)
        s.flush()
        return _comment_out(comment, trait.key)


def _require_comment_room(s: Session, model_id: int, trait_id: int, author: str, digest: str) -> None:
    """A person's comments are bounded, on a text and on a model, so comments cannot fill the database."""
    mine = select(func.count()).where(TextComment.model_id == model_id, TextComment.author == author)
    on_text = mine.where(TextComment.trait_id == trait_id, TextComment.content_sha256 == digest)
    if (s.scalar(on_text) or 0) >= MAX_COMMENTS_PER_TEXT:
        raise ApiError(
            409,
            "too_many_comments",
            f"You have {MAX_COMMENTS_PER_TEXT} comments on this text of the trait, the most one person "
            "keeps: delete one first.",
        )
    if (s.scalar(mine) or 0) >= MAX_COMMENTS_PER_PERSON:
        raise ApiError(
            409,
            "too_many_comments",
            f"You have {MAX_COMMENTS_PER_PERSON} comments on this model, the most one person keeps: delete "
            "some first.",
        )


def _delete(
    ctx: Databases,
    who: Principal,
    handle: str,
    row_id: int,
    find: Callable[[Session, int], UnsureMark | TextComment | None],
    missing: tuple[str, str],
) -> NoteDeleted:
    with transaction(ctx.sessions) as s:
        model = load_model(s, who, handle, write=True, action="label")  # one's own; a colleague's below
        require_not_archived(model)
        row = find(s, row_id) if 1 <= row_id <= MAX_INT else None
        if row is None or row.model_id != model.id:
            raise ApiError(404, missing[0], f"No {missing[1]} {row_id} in {handle}.")
        author = row.annotator if isinstance(row, UnsureMark) else row.author
        if author != who.annotator:  # a colleague's note: a reviewer's call
            require_role(who, "review", model.namespace)
        kind = "unsure" if isinstance(row, UnsureMark) else "comment"
        detail: JsonObject = {"note": kind, "id": row_id, "author": author}
        audit.record(s, who, "note_deleted", model.namespace, model, detail)
        s.delete(row)
        return NoteDeleted(handle=handle, id=row_id, deleted=True)


def delete_unsure(ctx: Databases, who: Principal, handle: str, mark_id: int) -> NoteDeleted:
    def find(s: Session, i: int) -> UnsureMark | None:
        return s.get(UnsureMark, i)

    return _delete(ctx, who, handle, mark_id, find, ("unsure_not_found", "unsure mark"))


def delete_comment(ctx: Databases, who: Principal, handle: str, comment_id: int) -> NoteDeleted:
    def find(s: Session, i: int) -> TextComment | None:
        return s.get(TextComment, i)

    return _delete(ctx, who, handle, comment_id, find, ("comment_not_found", "comment"))


def _trait_filter(s: Session, model: Model, trait: str | None) -> Trait | None:
    return TraitRefs(s, model).find(trait, ("query", "trait")) if trait is not None else None


def _notes_page[NoteT](
    ctx: Resources,
    who: Principal,
    handle: str,
    trait: str | None,
    limit: int,
    cursor: str | None,
    table: type[UnsureMark] | type[TextComment],
    out: Callable[[Any, str], NoteT],
) -> tuple[str, list[NoteT], str | None]:
    """One keyset page of a model's notes in `table` (of one trait), oldest first: the model's handle, the
    items and the next cursor."""
    with transaction(ctx.reads) as s:
        model = readable_model(s, who, handle)
        only = _trait_filter(s, model, trait)
        scope = f"{table.__tablename__}|{model.id}|{only.id if only else ''}"
        after = ctx.cursors.position(cursor, scope) or 0
        q = (
            select(table, Trait.key)
            .join(Trait, Trait.id == table.trait_id)
            .where(table.model_id == model.id, table.id > after)
        )
        if only is not None:
            q = q.where(table.trait_id == only.id)
        if (me := blind_for(who, model)) is not None:
            author = table.annotator if table is UnsureMark else TextComment.author
            q = q.where(seen(me, model, table.trait_id, table.content_sha256, author))
        rows = s.execute(q.order_by(table.id).limit(limit + 1)).all()
        ids = [note.id for note, _ in rows[:limit]]
        items = [out(note, key) for note, key in rows[:limit]]
    next_cursor = ctx.cursors.encode(scope, ids[-1]) if len(rows) > limit else None
    return model.handle, items, next_cursor


def list_unsure(
    ctx: Resources, who: Principal, handle: str, trait: str | None, limit: int, cursor: str | None
) -> UnsurePage:
    """The model's unsure marks (of one trait), oldest first, in keyset pages."""
    name, items, next_cursor = _notes_page(ctx, who, handle, trait, limit, cursor, UnsureMark, _unsure_out)
    return UnsurePage(handle=name, items=items, limit=limit, next_cursor=next_cursor)


def list_comments(
    ctx: Resources, who: Principal, handle: str, trait: str | None, limit: int, cursor: str | None
) -> CommentPage:
    """The model's comments (of one trait), oldest first, in keyset pages."""
    name, items, next_cursor = _notes_page(ctx, who, handle, trait, limit, cursor, TextComment, _comment_out)
    return CommentPage(handle=name, items=items, limit=limit, next_cursor=next_cursor)
