"""GET /models/{h}/labels/{id}/history: every vote of one label's text and trait, who gave it and when
(docs/api/team.md, "Text history"). A label keeps its id for life (service/store/label_ids.py), so any id a
page shows (the label route's answer, My labels, review, the votes export) leads here; the caller reads the
votes they may read in the votes export (blind labelling, gold secrecy), oldest first."""

from __future__ import annotations

from sqlalchemy import select

from service.domain.blind import blind_for, feedback_seen, seen
from service.domain.gold_labels import answer_labels, as_vote, readable_answers
from service.domain.gold_secret import answerer, feedback_visible, sample_visible
from service.domain.needs import Resources
from service.domain.team import readable_model, sample_vote, vote_record
from service.domain.trained import sample_versions
from service.errors import ApiError
from service.schemas.team import CorrectionRecord, TextHistory, VoteRecord
from service.store.api_keys import Principal
from service.store.campaign_schema import UnsureMark
from service.store.corrections import corrections_of
from service.store.db import transaction
from service.store.samples import scale_points, sha256
from service.store.schema import MAX_INT, FeedbackLabel, SampleRow, Trait


def text_history(ctx: Resources, who: Principal, handle: str, label_id: int) -> TextHistory:
    with transaction(ctx.reads) as s:
        model = readable_model(s, who, handle)
        me, answers = blind_for(who, model), answerer(who, model)
        samples = select(SampleRow).where(SampleRow.model_id == model.id)
        buffered = select(FeedbackLabel).where(FeedbackLabel.model_id == model.id)
        if me is not None:
            samples = samples.where(
                seen(me, model, SampleRow.trait_id, SampleRow.content_sha256, SampleRow.annotator)
            )
            buffered = buffered.where(feedback_seen(me, model))
        if answers is not None:
            samples = samples.where(sample_visible(answers, model))
            buffered = buffered.where(feedback_visible(answers, model))
        found = None
        if 1 <= label_id <= MAX_INT:
            found = s.scalar(samples.where(SampleRow.id == label_id)) or s.scalar(
                buffered.where(FeedbackLabel.id == label_id)
            )
        # To one who answers gold, an answer is a label like any (gold_labels.py): its history is its text's.
        answer = None
        if found is None and answers is not None and 1 <= label_id <= MAX_INT:
            answer = next(iter(answer_labels(s, model, ids=[label_id])), None)
            if answer is not None:
                on_text = answer_labels(s, model, trait_id=answer.trait_id, digest=answer.digest)
                answer = answer if answer in readable_answers(on_text, answers, me is not None) else None
        if found is None and answer is None:
            raise ApiError(404, "label_not_found", f"No label {label_id} you may read in {model.handle}.")
        traits = dict(s.execute(select(Trait.id, Trait.key).where(Trait.model_id == model.id)).tuples().all())
        ids = {key: tid for tid, key in traits.items()}
        if answer is not None:
            trait_id, text = answer.trait_id, answer.text
        elif isinstance(found, SampleRow):
            trait_id, text = found.trait_id, found.text
        else:
            assert found is not None
            trait_id, text = ids[found.trait_key], found.text
        key, digest = traits[trait_id], sha256(text)
        rows = list(
            s.scalars(samples.where(SampleRow.trait_id == trait_id, SampleRow.content_sha256 == digest))
        )
        versions = sample_versions(s, model, rows)
        items = [sample_vote(r, key, versions[r.id]) for r in rows]
        items += [
            VoteRecord.model_validate(
                vote_record("feedback", r.id, r.annotator, key, r.text, r.quality, r.created_at)
                | {"provenance": "feedback"}
            )
            for r in s.scalars(buffered.where(FeedbackLabel.trait_key == key, FeedbackLabel.text == text))
        ]
        if answers is not None:
            scale = s.scalar(select(Trait.scale).where(Trait.id == trait_id))
            on_text = answer_labels(s, model, trait_id=trait_id, digest=digest)
            items += [
                VoteRecord.model_validate(as_vote(a, scale_points(scale)))
                for a in readable_answers(on_text, answers, me is not None)
            ]
        marks = select(UnsureMark).where(
            UnsureMark.model_id == model.id,
            UnsureMark.trait_id == trait_id,
            UnsureMark.content_sha256 == digest,
        )
        if me is not None:
            marks = marks.where(
                seen(me, model, UnsureMark.trait_id, UnsureMark.content_sha256, UnsureMark.annotator)
            )
        items += [
            VoteRecord.model_validate(
                vote_record("unsure", r.id, r.annotator, key, r.text, None, r.created_at) | {"unsure": True}
            )
            for r in s.scalars(marks)
        ]
        labels = {r.id: r.annotator for r in items if r.kind != "unsure"}
        corrections = [
            CorrectionRecord(
                id=c.label_id,
                annotator=labels[c.label_id],
                before=c.before,
                after=c.after,
                corrected_by=c.corrected_by,
                comment=c.comment,
                created_at=c.created_at,
            )
            for found_for in corrections_of(s, model.id, labels).values()
            for c in found_for
        ]
    items.sort(key=lambda r: (r.created_at, r.id))
    corrections.sort(key=lambda c: c.created_at)
    return TextHistory(handle=model.handle, trait=key, text=text, items=items, corrections=corrections)
