"""docs/api/limits.md, rendered from core.contract: every bound of the API's contract (lengths, counts, pages,
rate-limit defaults) with the constant that holds it. `python -m harness.contract_reference` rewrites it;
tests/project/test_contract_reference.py fails while the committed page differs (a bound changed in
core/contract.py without rendering the page), so the reference never states a number the code does not hold.

Here, not in a layer: the page documents the service's API from the contract module every layer shares."""

from __future__ import annotations

from pathlib import Path

from core import contract as c

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "api" / "limits.md"

HEAD = """\
# API: limits

<!-- Rendered by `python -m harness.contract_reference` from core/contract.py; change a bound there, then
render it again (tests/project/test_contract_reference.py checks it is current). -->

Every bound of the API's contract, with the constant of `core/contract.py` that holds it: the service, the
client, the workbench and the tests read them there. What happens at a bound (the status and error code) is
said where each rule is described: [scoring.md](scoring.md#limits) for sizes and rate limits, the other topic
pages for their fields; the settings named here (`SCORING_…`): [settings.md](../settings.md)."""


def _range(low: int, high: int, default: int | None = None) -> str:
    shown = f"{low:,}–{high:,}"
    return shown if default is None else f"{shown} (default {default:,})"


#: (section, [(what, bound, constant), ...]), in the order the page shows them.
SECTIONS: list[tuple[str, list[tuple[str, str, str]]]] = [
    (
        "Names and texts",
        [
            ("a text (sample, pool, score content)", f"{c.MAX_TEXT_CHARS:,} characters", "MAX_TEXT_CHARS"),
            ("a trait's `name`", _range(1, c.MAX_LABEL_CHARS) + " characters", "MAX_LABEL_CHARS"),
            ("a trait key", f"{c.MAX_TRAIT_KEY} characters", "MAX_TRAIT_KEY"),
            (
                "a handle (each part)",
                f"{c.MIN_HANDLE_CHARS}–{c.MAX_HANDLE_CHARS} characters ({c.MAX_NAMESPACE_CHARS})",
                "MIN_HANDLE_CHARS, MAX_HANDLE_CHARS, MAX_NAMESPACE_CHARS",
            ),
            (
                "`description` and `additional_terms`",
                f"{c.MAX_DESCRIPTION_CHARS:,} characters",
                "MAX_DESCRIPTION_CHARS",
            ),
            ("`readme_markdown`", f"{c.MAX_README_CHARS:,} characters", "MAX_README_CHARS"),
            (
                "a sample's `source_id`",
                _range(1, c.MAX_SOURCE_ID_CHARS) + " characters",
                "MAX_SOURCE_ID_CHARS",
            ),
            (
                "a version reference (`vN` or a tag)",
                f"{c.MAX_VERSION_REF_CHARS} characters",
                "MAX_VERSION_REF_CHARS",
            ),
            ("a tag name", f"`{c.TAG_PATTERN}`", "TAG_PATTERN"),
        ],
    ),
    (
        "Counts",
        [
            ("traits per model", f"at most {c.MAX_TRAITS}", "MAX_TRAITS"),
            ("traits per request", _range(1, c.MAX_TRAITS), "MAX_TRAITS"),
            (
                "intrinsic traits per discovery run",
                f"at most {c.MAX_DISCOVERED_TRAITS}",
                "MAX_DISCOVERED_TRAITS",
            ),
            ("anchors per pole", f"at most {c.ANCHORS_PER_POLE}", "ANCHORS_PER_POLE"),
            ("`max_depth`", _range(1, c.MAX_DEPTH), "MAX_DEPTH"),
            ("samples per request", _range(1, c.MAX_SAMPLES_PER_REQUEST), "MAX_SAMPLES_PER_REQUEST"),
            (
                "evaluation items per request",
                _range(1, c.MAX_EVAL_ITEMS_PER_REQUEST),
                "MAX_EVAL_ITEMS_PER_REQUEST",
            ),
            ("pool texts per request", _range(1, c.MAX_POOL_TEXTS_PER_REQUEST), "MAX_POOL_TEXTS_PER_REQUEST"),
            ("score contents per request", f"at most {c.MAX_SCORE_TEXTS}", "MAX_SCORE_TEXTS"),
            ("trait preview probe texts", _range(1, c.MAX_PREVIEW_TEXTS), "MAX_PREVIEW_TEXTS"),
            ("points of a precision-recall curve", f"at most {c.MAX_PR_POINTS}", "MAX_PR_POINTS"),
            (
                "comments on one text of a trait; by one person",
                f"at most {c.MAX_COMMENTS_PER_TEXT}; {c.MAX_COMMENTS_PER_PERSON}",
                "MAX_COMMENTS_PER_TEXT, MAX_COMMENTS_PER_PERSON",
            ),
            (
                "an import that takes a write token as well",
                f"fewer than {c.SMALL_IMPORT_ROWS} rows",
                "SMALL_IMPORT_ROWS",
            ),
        ],
    ),
    (
        "Pages",
        [
            ("model list", _range(1, c.MODELS_PAGE.maximum, c.MODELS_PAGE.default), "MODELS_PAGE"),
            ("versions", _range(1, c.VERSIONS_PAGE.maximum, c.VERSIONS_PAGE.default), "VERSIONS_PAGE"),
            ("samples", _range(1, c.SAMPLES_PAGE.maximum, c.SAMPLES_PAGE.default), "SAMPLES_PAGE"),
            ("pool", _range(1, c.POOL_PAGE.maximum, c.POOL_PAGE.default), "POOL_PAGE"),
            ("suggestions (`k`)", _range(1, c.SUGGESTIONS.maximum, c.SUGGESTIONS.default), "SUGGESTIONS"),
            ("disagreements", _range(1, c.DISAGREEMENTS.maximum, c.DISAGREEMENTS.default), "DISAGREEMENTS"),
        ],
    ),
    (
        "Scores and labels",
        [
            ("the neutral quality (on neither pole)", f"{c.NEUTRAL_QUALITY}", "NEUTRAL_QUALITY"),
            ("a score's `positive_label` from", f"≥ {c.SCORE_MIDPOINT}", "SCORE_MIDPOINT"),
            (
                "decision threshold without one set",
                f"{c.DEFAULT_DECISION_THRESHOLD}",
                "DEFAULT_DECISION_THRESHOLD",
            ),
            ("`SCORING_RETRAIN_BUFFER` default", f"{c.DEFAULT_RETRAIN_BUFFER}", "DEFAULT_RETRAIN_BUFFER"),
            (
                "`SCORING_CLAIMS_PER_PERSON` default",
                f"{c.DEFAULT_CLAIMS_PER_PERSON}",
                "DEFAULT_CLAIMS_PER_PERSON",
            ),
        ],
    ),
    (
        "Rate limits (defaults of the settings)",
        [
            ("`SCORING_WRITE_BURST`", f"{c.DEFAULT_WRITE_BURST}", "DEFAULT_WRITE_BURST"),
            ("`SCORING_WRITE_RATE_PER_S`", f"{c.DEFAULT_WRITE_RATE_PER_S}", "DEFAULT_WRITE_RATE_PER_S"),
            ("`SCORING_IMPORT_BURST`", f"{c.DEFAULT_IMPORT_BURST}", "DEFAULT_IMPORT_BURST"),
            ("`SCORING_IMPORT_RATE_PER_S`", f"{c.DEFAULT_IMPORT_RATE_PER_S}", "DEFAULT_IMPORT_RATE_PER_S"),
            ("`SCORING_SCORE_BURST`", f"{c.DEFAULT_SCORE_BURST}", "DEFAULT_SCORE_BURST"),
            ("`SCORING_SCORE_RATE_PER_S`", f"{c.DEFAULT_SCORE_RATE_PER_S}", "DEFAULT_SCORE_RATE_PER_S"),
            ("`SCORING_RETRAINS_PER_HOUR`", f"{c.DEFAULT_RETRAINS_PER_HOUR}", "DEFAULT_RETRAINS_PER_HOUR"),
        ],
    ),
]


def render() -> str:
    parts = [HEAD]
    for title, rows in SECTIONS:
        lines = [f"## {title}", "", "| what | bound | `core.contract` |", "|---|---|---|"]
        lines += [f"| {what} | {bound} | `{name}` |" for what, bound, name in rows]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


if __name__ == "__main__":
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
