"""Version tables, metrics tables and local probe scoring of two version snapshots."""

from __future__ import annotations

from typing import Any

import pandas as pd

from app.records import as_dict
from app.widgets import when

METRIC_COLUMNS = ("roc_auc", "accuracy", "calibration_error", "discrimination", "explained_variance")
LOWER_IS_BETTER = {"calibration_error"}


def versions_frame(versions: list[Any]) -> pd.DataFrame:
    rows = []
    for v in versions:
        d = as_dict(v)
        rows.append(
            {
                "version": f"v{d.get('version_no')}",
                "tags": ", ".join(d.get("tags") or []),
                "triggered_by": d.get("triggered_by"),
                "samples": d.get("sample_count"),
                "effort": (d.get("metrics") or {}).get("effort"),
                "created_at": when(d.get("created_at")),
                "run_id": d.get("run_id"),
                "param_hash": (d.get("param_hash") or "")[:12],
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "version",
            "tags",
            "triggered_by",
            "samples",
            "effort",
            "created_at",
            "run_id",
            "param_hash",
        ],
    )


#: How a version trained a trait (`metrics.traits[key].method`), as the workbench shows it.
METHOD_LABELS = {
    "zero_shot": "zero-shot (pole labels only)",
    "prior": "samples + label prior",
    "samples": "samples",
}


def method_label(method: str | None) -> str:
    """Readable training method of a trait; "" before the first training."""
    return METHOD_LABELS.get(method or "", method or "")


def trait_metrics_frame(metrics: dict[str, Any]) -> pd.DataFrame:
    """One row per trait of a version's `metrics["traits"]`."""
    traits = (metrics or {}).get("traits") or {}
    rows = []
    for key, m in traits.items():
        row: dict[str, Any] = {"trait": key, "method": method_label(m.get("method") or "samples")}
        row["positive"] = m.get("positive_samples")
        row["negative"] = m.get("negative_samples")
        for col in METRIC_COLUMNS:
            row[col] = m.get(col)
        params = m.get("params") or {}
        row["params"] = ", ".join(f"{k}={v}" for k, v in params.items()) if isinstance(params, dict) else ""
        rows.append(row)
    return pd.DataFrame(rows)


def metrics_diff_frame(a: dict[str, Any], b: dict[str, Any]) -> pd.DataFrame:
    """Per trait and metric: A, B and B − A (traits of either version)."""
    ta, tb = (a or {}).get("traits") or {}, (b or {}).get("traits") or {}
    rows = []
    for key in list(ta) + [k for k in tb if k not in ta]:
        for col in METRIC_COLUMNS:
            va, vb = (ta.get(key) or {}).get(col), (tb.get(key) or {}).get(col)
            delta = vb - va if isinstance(va, int | float) and isinstance(vb, int | float) else None
            rows.append({"trait": key, "metric": col, "A": va, "B": vb, "B − A": delta})
    return pd.DataFrame(rows, columns=["trait", "metric", "A", "B", "B − A"])


def delta_color(row: pd.Series) -> list[str]:
    """Green where B is better than A, red where worse (calibration error: lower is better)."""
    delta = row["B − A"]
    styles = [""] * len(row)
    if delta is None or pd.isna(delta) or abs(delta) < 5e-4:  # no colour for what shows as ±0.000
        return styles
    better = delta < 0 if row["metric"] in LOWER_IS_BETTER else delta > 0
    colour = (
        "background-color: rgba(46, 160, 67, 0.25)" if better else "background-color: rgba(248, 81, 73, 0.25)"
    )
    return [colour if c in ("B", "B − A") else "" for c in row.index]


def probe_scores(scorer_a: Any, scorer_b: Any, texts: list[str]) -> pd.DataFrame:
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
