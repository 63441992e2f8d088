"""Tables of evaluation-set results for the Versions page: one version's metrics, two versions compared."""

from __future__ import annotations

from typing import Any

import pandas as pd

from core.client import (
    Evaluation,
    EvaluationComparison,
    EvaluationSet,
    Interval,
    Threshold,
    TraitComparison,
    TraitEvaluation,
)
from core.contract import DEFAULT_DECISION_THRESHOLD
from core.spreadsheet import guard_cell

METRICS = ("roc_auc", "accuracy", "f1", "calibration_error")
METRIC_NAMES = {
    "roc_auc": "ROC-AUC",
    "accuracy": "accuracy",
    "f1": "F1",
    "calibration_error": "calibration error",
}


def _with_interval(m: Interval | None) -> str:
    if not m:
        return "—"
    if m.ci_low is None or m.ci_high is None:
        return f"{m.value:.3f}"
    return f"{m.value:.3f} ({m.ci_low:.3f}–{m.ci_high:.3f})"


def set_counts(summary: EvaluationSet) -> str:
    """The set's items per trait and pole: "1,084 items: formality 471+ / 567− / 46 neutral"."""
    per_trait = [
        f"{k} {v.positive:,}+ / {v.negative:,}−" + (f" / {v.neutral:,} neutral" if v.neutral else "")
        for k, v in summary.traits.items()
    ]
    return f"{summary.total:,} items: " + ", ".join(per_trait)


NEUTRAL_METRICS = "ROC-AUC, accuracy and F1"  # what an evaluation leaves neutral items out of


def eval_metrics_frame(result: Evaluation, thresholds: dict[str, Threshold] | None = None) -> pd.DataFrame:
    """One row per trait: item counts, each metric with its 95% interval, the stored threshold."""
    rows = []
    for key, t in sorted(result.traits.items()):
        row: dict[str, Any] = {
            "trait": key,
            "items": t.items,
            "positive": t.positive,
            "negative": t.negative,
            "neutral": t.neutral,  # on neither pole: not in ROC-AUC, accuracy or F1
        }
        row |= {METRIC_NAMES[m]: _with_interval(t.metric(m)) for m in METRICS}
        chosen = (thresholds or {}).get(key)
        row["threshold"] = (
            f"{chosen.threshold:.3f} ({chosen.target} ≥ {chosen.value:g})"
            if chosen
            else f"{DEFAULT_DECISION_THRESHOLD} (default)"
        )
        rows.append(row)
    return pd.DataFrame(rows)


def comparison_frame(cmp: EvaluationComparison) -> pd.DataFrame:
    """One row per trait and metric: A, B, B − A, its 95% interval, p-value and whether it is significant."""
    rows = []
    for key, t in sorted(cmp.traits.items()):
        for m in METRICS:
            d = t.metric(m)
            if d is None:
                continue
            rows.append(
                {
                    "trait": key,
                    "metric": METRIC_NAMES[m],
                    "A": d.a,
                    "B": d.b,
                    "B − A": d.difference,
                    "95% CI of B − A": f"{d.ci_low:+.3f} … {d.ci_high:+.3f}",
                    "p": d.p_value,
                    "significant": "yes" if d.significant else "no",
                    "items": t.items,
                }
            )
    return pd.DataFrame(rows)


def disagreements_frame(cmp: EvaluationComparison) -> pd.DataFrame:
    """The items where A and B differ most, with their labels, largest |B − A| first."""
    cols = ["trait", "label", "A", "B", "B − A", "text", "item_id"]
    rows = [
        {
            "trait": r.trait,
            "label": r.quality,
            "A": r.score_a,
            "B": r.score_b,
            "B − A": r.difference,
            "text": r.text,
            "item_id": r.item_id,
        }
        for r in cmp.disagreements
    ]
    return pd.DataFrame(rows, columns=cols)


def comparison_csv(cmp: EvaluationComparison) -> str:
    """The metrics table and the disagreement table as one CSV download (a blank line between them)."""
    a, b = cmp.a.version_no, cmp.b.version_no
    head = f"# {cmp.handle}: A = v{a}, B = v{b}, paired on {cmp.items} evaluation items\n"
    frames = [comparison_frame(cmp), disagreements_frame(cmp)]  # for a spreadsheet: its cells guarded
    return head + "\n".join(f.map(guard_cell).to_csv(index=False) for f in frames)


def _percent(m: Interval) -> str:
    interval = (
        f" (95% CI {m.ci_low:.0%}–{m.ci_high:.0%})" if m.ci_low is not None and m.ci_high is not None else ""
    )
    return f"{m.value:.0%}{interval}"


def ceiling_sentence(ref: str, trait: str, t: TraitEvaluation) -> str | None:
    """ "v2 reaches 87 % of the human ceiling …" for a trait whose texts several annotators voted on."""
    ceiling = t.human_ceiling
    if ceiling is None:
        return None
    people = (
        f"the annotators' agreement with each other r = {ceiling.value:.2f} "
        f"({ceiling.annotators:,} annotators, {ceiling.texts:,} texts)"
    )
    if t.share_of_ceiling is None or t.model_agreement is None:
        return f"**{trait}**: {people}; {ref}'s agreement with them cannot be measured here."
    return (
        f"**{trait}: {ref} reaches {_percent(t.share_of_ceiling)} of the human ceiling** — its agreement "
        f"with the annotators r = {t.model_agreement.value:.2f}, {people}."
    )


def comparison_ceiling_sentence(a: str, b: str, trait: str, t: TraitComparison) -> str | None:
    """Both versions' share of the human ceiling, as each evaluation measured it."""
    shares = {a: t.share_of_ceiling_a, b: t.share_of_ceiling_b}
    if all(v is None for v in shares.values()):
        return None
    parts = [
        f"{ref} reaches {_percent(v)}" if v is not None else f"{ref}: not measured"
        for ref, v in shares.items()
    ]
    return f"**{trait}**, of the human ceiling: " + " · ".join(parts)


def _texts(n: int) -> str:
    return f"{n:,} evaluation text{'' if n == 1 else 's'} {'was' if n == 1 else 'were'}"


def trained_sentence(ref: str, result: Evaluation) -> str | None:
    """The evaluation texts the version trained on, which its metrics leave out (None when it trained on
    none), or that it cannot tell (a version trained before the service recorded its training texts)."""
    counts = [t.excluded_trained for t in result.traits.values()]
    if any(n is None for n in counts):
        return (
            f"Whether {ref} trained on any of these texts is not known (it was trained, or this evaluation "
            "ran, before the service recorded what a version trains on): every text was measured."
        )
    left = {key: t.excluded_trained for key, t in sorted(result.traits.items()) if t.excluded_trained}
    total = sum(n for n in left.values() if n)
    if not total:
        return None
    each = f" ({', '.join(f'{key} {n:,}' for key, n in left.items())})" if len(left) > 1 else ""
    return f"{_texts(total)} in {ref}'s training data and {'was' if total == 1 else 'were'} left out{each}."


def comparison_trained_sentence(a: str, b: str, cmp: EvaluationComparison) -> str | None:
    """The texts either version trained on, which the paired items leave out (None when neither did)."""
    by = {a: 0, b: 0}
    for t in cmp.traits.values():
        by[a] += t.excluded_trained_a or 0
        by[b] += t.excluded_trained_b or 0
    if not any(by.values()):
        return None
    parts = " · ".join(f"{ref} trained on {n:,}" for ref, n in by.items())
    return f"Evaluation texts a version trained on are left out of the pairs ({parts})."


def overlap_note(in_pool: int, in_samples: int) -> str | None:
    """What the evaluation set's import found already in the model (the service's `in_pool`, `in_samples`)
    and what happens to those texts now, said when they are added. None when it found none."""
    parts = []
    if in_pool:
        parts.append(
            f"{in_pool:,} {'is a text' if in_pool == 1 else 'are texts'} of the unlabelled pool: left out of "
            "labelling from now on (the Label page no longer shows them, and a label of one is refused)"
        )
    if in_samples:
        parts.append(
            f"{in_samples:,} {'is a text' if in_samples == 1 else 'are texts'} of the samples: kept, but no "
            "training takes them in from now on (a version trained on them before leaves them out of its "
            "evaluation)"
        )
    if not parts:
        return None
    return f"Of this file's texts, {'; '.join(parts)}."
