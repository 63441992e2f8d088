"""The rules a score request meets before anything is scored (service/domain/scoring.py), on their own: which
refusal a request gets, and that the first rule it breaks is the one it hears of."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from service.domain.scoring import Target, require_scorable
from service.errors import ApiError
from service.schemas.score import FeedbackIn, ScoreIn
from service.store.api_keys import Principal


def refusal(scope: str, owner: bool, zdr: bool, contents: int, explain: bool, feedback: bool) -> str | None:
    who = Principal(1, scope, frozenset({"acme"} if owner else {"lab"}), "k", {"acme": "owner"})
    target = Target(1, "acme.m", "acme", zdr, True, 1, 1, [])
    body = ScoreIn(
        content=["text"] * contents if contents > 1 else "text",
        explain=explain,
        feedback=[FeedbackIn(trait="t", quality=1.0)] if feedback else None,
    )
    try:
        require_scorable(who, body, target)
    except ApiError as exc:
        return f"{exc.status} {exc.code}"
    return None


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(["authoring", "scoring"]),
    st.booleans(),
    st.booleans(),
    st.integers(1, 3),
    st.booleans(),
    st.booleans(),
)
def test_a_score_request_hears_of_the_first_rule_it_breaks(
    scope: str, owner: bool, zdr: bool, contents: int, explain: bool, feedback: bool
) -> None:
    got = refusal(scope, owner, zdr, contents, explain, feedback)
    if explain and contents > 1:
        assert got == "422 validation_error"  # one explained content per request
    elif feedback and (scope != "authoring" or not owner):
        assert got == "403 forbidden"  # feedback is a write
    elif feedback and zdr:
        assert got == "409 zero_data_retention"  # nothing of the content may be kept
    elif feedback and contents > 1:
        assert got == "422 validation_error"  # feedback labels one content
    else:
        assert got is None
