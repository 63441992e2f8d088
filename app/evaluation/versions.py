"""Version tables, metrics tables and local probe scoring of two version snapshots."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from app.ui.widgets import when
from core.client import ApiError, Client, Version
from core.contract import NEUTRAL_QUALITY
from core.embedder_words import FEW_LABELS_SE

if TYPE_CHECKING:  # the engine loads with the first scorer
    from core.engine import Scorer

METRIC_COLUMNS = (
    "roc_auc",
    "accuracy",
    "calibration_error",
    "calibration_slope",
    "discrimination",
    "explained_variance",
)
LOWER_IS_BETTER = {"calibration_error"}
CLOSER_TO_ONE_IS_BETTER = {"calibration_slope"}  # 1 is calibrated


def versions_frame(versions: list[Version]) -> pd.DataFrame:
    rows = []
    for v in versions:
        rows.append(
            {
                "version": v.label,
                "tags": ", ".join(v.tags),
                "triggered_by": v.triggered_by,
                "samples": v.sample_count,
                "calibration (out of fold)": calibration_words(v),
                "trained on": v.embedder_words.removeprefix("trained on "),  # its embedder, in words
                "effort": v.metrics.get("effort"),  # metrics are open in the spec: a dict
                "created_at": when(v.created_at),
                "run_id": v.run_id,
                "param_hash": v.param_hash[:12],
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "version",
            "tags",
            "triggered_by",
            "samples",
            "calibration (out of fold)",  # before the long embedder words: in view without scrolling
            "trained on",
            "effort",
            "created_at",
            "run_id",
            "param_hash",
        ],
    )


def fitted_slope(trait_metrics: dict[str, Any]) -> float | None:
    """A trait's out-of-fold calibration slope, None where it says nothing: where every positive sample
    scored above every negative one (out-of-fold ROC AUC 1), every slope steeper than some fits them, and the
    figure is where the fit stopped (tens, beside a small ECE): read as scores far too close to 0.5, it would
    say the opposite of what they are."""
    slope = trait_metrics.get("calibration_slope")
    if not isinstance(slope, int | float) or trait_metrics.get("roc_auc") == 1.0:
        return None
    return float(slope)


def calibration_words(version: Version) -> str:
    """A version's own out-of-fold calibration, the mean over its traits trained on samples: "ECE 0.04, slope
    1.02" (slope 1 is calibrated, above it the scores sit too close to 0.5); the traits whose poles never
    overlap have no slope (`fitted_slope`) and are named; "" where no trait has figures (a zero-shot version,
    or one trained before the slope was reported shows its ECE alone)."""
    figures = {k: m for k, m in version.trait_metrics.items() if isinstance(m, dict)}
    errors = [float(e) for m in figures.values() if isinstance(e := m.get("calibration_error"), int | float)]
    slopes = [b for m in figures.values() if (b := fitted_slope(m)) is not None]
    # Trained traits (an ECE) without a slope for that reason: the engine reports none for them, versions
    # trained before it did report the stopped fit's figure.
    apart = [
        k
        for k, m in figures.items()
        if m.get("roc_auc") == 1.0 and isinstance(m.get("calibration_error"), int | float)
    ]
    parts = [f"ECE {sum(errors) / len(errors):.2f}"] if errors else []
    if slopes:
        parts.append(f"slope {sum(slopes) / len(slopes):.2f}")
    words = ", ".join(parts)
    if apart and slopes:
        words += f" ({', '.join(apart)}: no slope, the poles never overlap)"
    elif apart:
        words += ", no slope (the poles never overlap)"
    return words


#: How a version trained a trait (`metrics.traits[key].method`), as the workbench shows it.
METHOD_LABELS = {
    "zero_shot": "zero-shot (pole labels only)",
    "prior": "samples + label prior",
    "samples": "samples",
}


def method_label(method: str | None) -> str:
    """Readable training method of a trait; "" before the first training."""
    return METHOD_LABELS.get(method or "", method or "")


def neutral_note(count: int, things: str, left_out_of: str) -> str | None:
    """The one wording of neutral labels left out (the Traits, Training and Versions pages); None without any:
    "4 neutral items (quality 0.5) are left out of ROC-AUC, accuracy and F1: they are on neither pole."."""
    if not count:
        return None
    return (
        f"{count:,} neutral {things} (quality {NEUTRAL_QUALITY}) are left out of {left_out_of}: "
        "they are on neither pole."
    )


def labelled_neutral(trait_metrics: dict[str, Any]) -> int:
    """A trait's texts training left out as labelled neutral: its `neutral_samples` but for the contested
    texts whose votes average to the middle (a disagreement, said apart). The one count of them that the
    metrics table and the sentence under it both show."""
    return int(trait_metrics.get("neutral_samples") or 0) - int(trait_metrics.get("contested_neutral") or 0)


def training_left_out(metrics: dict[str, Any]) -> tuple[str | None, str | None]:
    """What a version's training left out or averaged, said apart (the Training page): (texts labelled
    neutral, contested texts: votes on both poles, not settled). A contested text whose votes average to
    the middle is left out as a neutral one is, but it is a disagreement to settle, not a neutral label."""
    traits = (metrics or {}).get("traits") or {}
    contested = sum(int(m.get("contested") or 0) for m in traits.values())
    middle = sum(int(m.get("contested_neutral") or 0) for m in traits.values())
    note = neutral_note(sum(labelled_neutral(m) for m in traits.values()), "samples", "training")
    if not contested:
        return note, None
    parts = []
    if middle:
        parts.append(f"{middle:,} average to the middle and are left out of training")
    if contested - middle:
        parts.append(f"{contested - middle:,} train at the mean of their votes")
    return note, (
        f"{contested:,} contested text(s): votes on both poles, not settled ({'; '.join(parts)}). "
        "Settle them on the Samples page's Disagreements tab."
    )


#: An out-of-fold ROC-AUC whose standard error is above this (about 30 samples a pole and fewer) is said to be
#: uncertain: at 8 a pole it strayed from the held-out figure by up to 0.43 (docs/benchmarks/quality.md).
UNCERTAIN_SE = FEW_LABELS_SE  # the version's embedder words say the same of its mean figure


def uncertain_roc_auc(metrics: dict[str, Any]) -> str | None:
    """A warning naming each trait whose out-of-fold ROC-AUC rests on too few samples to be trusted, with its
    two-standard-error margin; None when every figure is firm (or none reports its standard error)."""
    shaky = []
    for key, m in ((metrics or {}).get("traits") or {}).items():
        auc, se = m.get("roc_auc"), m.get("roc_auc_se")
        if isinstance(auc, int | float) and isinstance(se, int | float) and se > UNCERTAIN_SE:
            shaky.append(f"{key} {auc:.2f} ± {2 * se:.2f}")
    if not shaky:
        return None
    return (
        f"Uncertain ROC AUC: {'; '.join(shaky)} (two standard errors). With this few samples the out-of-fold "
        "figure can stray far from how the version scores new texts: label more, or evaluate the version on "
        "a held-out set (Versions page)."
    )


def trait_metrics_frame(metrics: dict[str, Any]) -> pd.DataFrame:
    """One row per trait of a version's `metrics["traits"]`."""
    traits = (metrics or {}).get("traits") or {}
    rows = []
    for key, m in traits.items():
        row: dict[str, Any] = {"trait": key, "method": method_label(m.get("method") or "samples")}
        row["positive"] = m.get("positive_samples")
        row["negative"] = m.get("negative_samples")
        row["neutral"] = labelled_neutral(m)  # left out of the poles (absent before: 0)
        for col in METRIC_COLUMNS:
            row[col] = m.get(col)
        row["calibration_slope"] = fitted_slope(m)
        params = m.get("params") or {}
        row["params"] = ", ".join(f"{k}={v}" for k, v in params.items()) if isinstance(params, dict) else ""
        rows.append(row)
    return pd.DataFrame(rows)


MIN_CHANGE = 0.01  # metrics without a standard error: a change below one point is not coloured


def metric_se(metric: str, value: Any, positive: Any, negative: Any) -> float | None:
    """Sampling standard error of a version's metric from its own sample counts, where one is known.

    ROC AUC: Hanley & McNeil (1982); accuracy: binomial. Other metrics: None.
    """
    if not isinstance(value, int | float) or not positive or not negative:
        return None
    n1, n0, v = float(positive), float(negative), float(value)
    if metric == "roc_auc":
        q1, q2 = v / (2 - v), 2 * v * v / (1 + v)
        var = (v * (1 - v) + (n1 - 1) * (q1 - v * v) + (n0 - 1) * (q2 - v * v)) / (n1 * n0)
        return math.sqrt(max(var, 0.0))
    if metric == "accuracy":
        return math.sqrt(max(v * (1 - v), 0.0) / (n1 + n0))
    return None


def metrics_diff_frame(a: dict[str, Any], b: dict[str, Any]) -> pd.DataFrame:
    """Per trait and metric: A, B, B − A and the difference's standard error `se` (traits of either version).

    `se` combines both versions' sampling errors (None where the metric has none); the table colours a change
    only when it exceeds twice that, so noise between two trainings stays uncoloured.
    """
    ta, tb = (a or {}).get("traits") or {}, (b or {}).get("traits") or {}
    rows = []
    for key in list(ta) + [k for k in tb if k not in ta]:
        ma, mb = ta.get(key) or {}, tb.get(key) or {}
        for col in METRIC_COLUMNS:
            va, vb = ma.get(col), mb.get(col)
            if col == "calibration_slope":
                va, vb = fitted_slope(ma), fitted_slope(mb)
            delta = vb - va if isinstance(va, int | float) and isinstance(vb, int | float) else None
            se_a = metric_se(col, va, ma.get("positive_samples"), ma.get("negative_samples"))
            se_b = metric_se(col, vb, mb.get("positive_samples"), mb.get("negative_samples"))
            se = math.hypot(se_a, se_b) if se_a is not None and se_b is not None else None
            rows.append({"trait": key, "metric": col, "A": va, "B": vb, "B − A": delta, "se": se})
    return pd.DataFrame(rows, columns=["trait", "metric", "A", "B", "B − A", "se"])


def signed(value: Any) -> str:
    """A difference with its sign, and a plain 0.000 (never -0.000) for what rounds to nothing."""
    if value is None or pd.isna(value):
        return "—"
    return "0.000" if abs(value) < 5e-4 else f"{value:+.3f}"


def delta_color(row: pd.Series) -> list[str]:
    """Green where B is clearly better than A, red where clearly worse (calibration error: lower is better).

    Clearly: beyond twice the difference's standard error (or one point for metrics without one); the
    colour deepens with the size of the change.
    """
    delta = row["B − A"]
    styles = [""] * len(row)
    if delta is None or pd.isna(delta):
        return styles
    se = row.get("se")
    noise = 2 * se if se is not None and not pd.isna(se) and se > 0 else MIN_CHANGE
    if abs(delta) <= max(noise, 5e-4):
        return styles
    if row["metric"] in CLOSER_TO_ONE_IS_BETTER:
        better = abs(row["B"] - 1.0) < abs(row["A"] - 1.0)
    else:
        better = delta < 0 if row["metric"] in LOWER_IS_BETTER else delta > 0
    alpha = min(0.15 + 0.1 * abs(delta) / noise, 0.45)
    rgb = "46, 160, 67" if better else "248, 81, 73"
    colour = f"background-color: rgba({rgb}, {alpha:.2f})"
    return [colour if c in ("B", "B − A") else "" for c in row.index]


def probe_scores(scorer_a: Scorer, scorer_b: Scorer, texts: list[str]) -> pd.DataFrame:
    """Scores of each probe text under both versions, per trait present in either: A, B, B − A."""
    sa, sb = scorer_a.score_dicts(texts), scorer_b.score_dicts(texts)
    rows = []
    for i, text in enumerate(texts):
        for key in list(sa[i]) + [k for k in sb[i] if k not in sa[i]]:
            va, vb = sa[i].get(key), sb[i].get(key)
            rows.append(
                {
                    "text": text,
                    "trait": key,
                    "A": va,
                    "B": vb,
                    "B − A": (vb - va) if va is not None and vb is not None else None,
                }
            )
    return pd.DataFrame(rows, columns=["text", "trait", "A", "B", "B − A"])


def per_trait_summary(probe: pd.DataFrame) -> pd.DataFrame:
    """Per trait: mean B − A, mean |B − A|, largest |B − A| over the probe set."""
    if probe.empty:
        return pd.DataFrame(columns=["trait", "mean Δ", "mean |Δ|", "max |Δ|"])
    g = probe.dropna(subset=["B − A"]).groupby("trait", sort=False)["B − A"]
    return pd.DataFrame(
        {
            "mean Δ": g.mean(),
            "mean |Δ|": g.apply(lambda s: s.abs().mean()),
            "max |Δ|": g.apply(lambda s: s.abs().max()),
        }
    ).reset_index()


CHARTED_EVALUATIONS = 10  # the newest versions whose evaluation-set AUC the chart reads (one request each)


def evaluation_points(client: Client, handle: str, versions: list[Version]) -> list[dict[str, Any]]:
    """Per evaluated version (of the newest `CHARTED_EVALUATIONS`), its ROC AUC per trait on the evaluation
    set, shaped as a version for `core.charts.metrics_across_versions`; versions never evaluated are left
    out, and a key that may not read evaluations gets none."""
    points = []
    for v in sorted(versions, key=lambda v: v.version_no)[-CHARTED_EVALUATIONS:]:
        try:
            result = client.get_evaluation(handle, v.version_no)
        except ApiError:  # not evaluated (404), or a key that may not read it (403)
            continue
        traits = {k: {"roc_auc": t.roc_auc.value} for k, t in result.traits.items() if t.roc_auc is not None}
        if traits:
            points.append({"version_no": v.version_no, "metrics": {"traits": traits}})
    return points
