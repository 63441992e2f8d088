"""A labelling team: agreement, progress, the vote export, unsure marks and comments."""

from __future__ import annotations

from collections.abc import Iterator

from core.client.calls.base import ClientBase
from core.client.models import (
    DeleteResult,
)
from core.client.paths import path as _path
from core.client.results import (
    Agreement,
)
from core.client.team import (
    CommentPage,
    TeamProgress,
    TextComment,
    TextHistory,
    UnsureMark,
    UnsurePage,
    VoteRecord,
    VotesPage,
    votes_csv,
    votes_jsonl,
)


class TeamCalls(ClientBase):
    def agreement(self, handle: str, trait: str | None = None, limit: int = 20) -> Agreement:
        """How far the annotators of the model's labels agree, per trait key: Krippendorff's alpha on
        quality and on the pole, pairwise agreement, and the `limit` (1-100) most disagreed texts with their
        votes. Settle one with `add_samples([{..., "adjudicated": True}])` (a draft's sample edit)."""
        params = {"trait": trait, "limit": limit}
        return Agreement.model_validate(self._get(_path("models", handle, "agreement"), params))

    def team_progress(self, handle: str) -> TeamProgress:
        """Per person and trait: labels (today, UTC, and all), median seconds per decision, agreement with
        colleagues and with settled texts, and texts still wanting votes. Any role of the namespace."""
        return TeamProgress.model_validate(self._get(_path("models", handle, "team")))

    def votes_page(self, handle: str, limit: int | None = None, cursor: str | None = None) -> VotesPage:
        """A page of every vote of the model: samples, then buffered feedback labels, then unsure marks."""
        body = self._get(_path("models", handle, "votes"), {"limit": limit, "cursor": cursor})
        return VotesPage.model_validate(body)

    def votes(self, handle: str, page_size: int | None = None) -> Iterator[VoteRecord]:
        """Every vote of the model, page by page."""
        return self._paginate(lambda cursor: self.votes_page(handle, limit=page_size, cursor=cursor))

    def text_history(self, handle: str, label_id: int) -> TextHistory:
        """Every vote of the text and trait of label `label_id` the caller may read, oldest first."""
        body = self._get(_path("models", handle, "labels", str(label_id), "history"))
        return TextHistory.model_validate(body)

    def export_votes(self, handle: str, format: str = "csv") -> str:
        """Every vote as a file's text: `csv` (with a header) or `jsonl` (core.client.team.VOTE_COLUMNS)."""
        if format not in ("csv", "jsonl"):
            raise ValueError(f"format must be 'csv' or 'jsonl', got {format!r}")
        render = votes_csv if format == "csv" else votes_jsonl
        return render(self.votes(handle))

    def mark_unsure(self, handle: str, trait: str, text: str) -> UnsureMark:
        """The caller's unsure mark on a text of a trait (again: the stored one). Never a vote."""
        response = self.request(
            "POST", _path("models", handle, "unsure"), json={"trait": trait, "text": text}
        )
        return UnsureMark.model_validate(response.json())

    def unsure_page(
        self, handle: str, trait: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> UnsurePage:
        params = {"trait": trait, "limit": limit, "cursor": cursor}
        return UnsurePage.model_validate(self._get(_path("models", handle, "unsure"), params))

    def list_unsure(self, handle: str, trait: str | None = None) -> Iterator[UnsureMark]:
        return self._paginate(lambda cursor: self.unsure_page(handle, trait, cursor=cursor))

    def delete_unsure(self, handle: str, mark_id: int) -> DeleteResult:
        """Take an unsure mark back: one's own, or (reviewer) a colleague's."""
        response = self.request("DELETE", _path("models", handle, "unsure", mark_id))
        return DeleteResult.model_validate(response.json())

    def add_comment(self, handle: str, trait: str, text: str, body: str) -> TextComment:
        """A comment (1-1,000 characters) on a text of a trait, signed with the caller's annotator name."""
        payload = {"trait": trait, "text": text, "body": body}
        response = self.request("POST", _path("models", handle, "comments"), json=payload)
        return TextComment.model_validate(response.json())

    def comments_page(
        self, handle: str, trait: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> CommentPage:
        params = {"trait": trait, "limit": limit, "cursor": cursor}
        return CommentPage.model_validate(self._get(_path("models", handle, "comments"), params))

    def list_comments(self, handle: str, trait: str | None = None) -> Iterator[TextComment]:
        return self._paginate(lambda cursor: self.comments_page(handle, trait, cursor=cursor))

    def delete_comment(self, handle: str, comment_id: int) -> DeleteResult:
        """Delete a comment: one's own, or (reviewer) a colleague's."""
        response = self.request("DELETE", _path("models", handle, "comments", comment_id))
        return DeleteResult.model_validate(response.json())
