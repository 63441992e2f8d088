"""Migrating from Perspective logs: logged scores as soft labels, training, agreement on held-out rows."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest

from core.client.perspective_migration import agreement, matched_threshold, read_log
from tests.support.client import Service

RUDE = ["idiot", "stupid", "moron", "fool", "dumb", "loser", "pathetic", "trash"]
KIND = ["thanks", "lovely", "great", "helpful", "kind", "friend", "welcome", "nice"]
NEUTRAL = ["the", "report", "meeting", "today", "about", "budget", "train", "city", "plan", "garden"]


def _log(n: int, seed: int = 3) -> list[dict[str, object]]:
    """Comments whose logged TOXICITY grows with their rude words, INSULT with the same plus noise."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        rude = rng.randint(0, 4)
        words = rng.sample(RUDE, rude) + rng.sample(KIND, 4 - rude) + rng.sample(NEUTRAL, 4)
        rng.shuffle(words)
        toxicity = min(1.0, max(0.0, rude / 4 + rng.uniform(-0.1, 0.1)))
        insult = min(1.0, max(0.0, toxicity * 0.9 + rng.uniform(-0.05, 0.05)))
        rows.append({"text": " ".join(words), "TOXICITY": round(toxicity, 4), "INSULT": round(insult, 4)})
    return rows


def _csv(rows: list[dict[str, object]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]) + ["source"])
    writer.writeheader()
    for row in rows:
        writer.writerow({**row, "source": "web"})  # a column that is not a score: not an attribute
    return out.getvalue()


def test_read_log_csv_and_perspective_responses() -> None:
    rows = _log(5)
    from_csv = read_log(_csv(rows).encode())
    assert [(r.text, r.scores) for r in from_csv] == [
        (r["text"], {"INSULT": r["INSULT"], "TOXICITY": r["TOXICITY"]}) for r in rows
    ]
    # JSONL holding Perspective's own responses, as many logs store them.
    lines = [
        json.dumps(
            {"text": r["text"], "attributeScores": {"TOXICITY": {"summaryScore": {"value": r["TOXICITY"]}}}}
        )
        for r in rows
    ]
    from_jsonl = read_log("\n".join(lines), filename="log.jsonl")
    assert [r.scores for r in from_jsonl] == [{"TOXICITY": r["TOXICITY"]} for r in rows]
    with pytest.raises(ValueError, match="between 0 and 1"):
        read_log("text,TOXICITY\nhi,1.5\n", attributes=["TOXICITY"])
    with pytest.raises(ValueError, match="no attribute columns"):
        read_log("text,source\nhi,web\n")
    with pytest.raises(ValueError, match="row 3: no 'text'"):
        read_log("text,TOXICITY\nhi,0.5\n,0.2\n")


def test_agreement_and_matched_threshold() -> None:
    logged = [0.1, 0.2, 0.3, 0.8, 0.9, 0.95, 0.4, 0.85]
    new = [0.05, 0.1, 0.2, 0.6, 0.7, 0.9, 0.3, 0.65]  # the same order: perfect agreement
    got = agreement("TOXICITY", "toxicity", logged, new, old_threshold=0.8)
    assert got.roc_auc == 1.0 and got.spearman == pytest.approx(1.0)
    assert got.old_flag_rate == 0.5 and got.threshold == 0.6 and got.new_flag_rate == 0.5
    assert matched_threshold([0.2, 0.4], 0.0) > 0.4  # flags none
    assert matched_threshold([0.2, 0.4], 1.0) == 0.2


def test_migration_end_to_end(service: Service) -> None:
    rows = read_log(_csv(_log(160)))
    handle = service.handle("migrated")
    with service.client() as c:
        c.create_model(handle, description="from Perspective logs")
        messages: list[str] = []
        report = c.migrate_from_perspective(
            handle,
            rows,
            old_threshold={"TOXICITY": 0.7, "INSULT": 0.6},
            holdout=0.25,
            progress=messages.append,
        )
        assert report.train_rows == 120 and report.holdout_rows == 40 and report.rejected_rows == 0
        assert report.samples_added == 240 and len(messages) == 3
        assert {t.key for t in c.list_traits(handle)} == {"toxicity", "insult"}
        by = {a.attribute: a for a in report.attributes}
        assert set(by) == {"TOXICITY", "INSULT"} and by["INSULT"].old_threshold == 0.6
        for result in by.values():
            assert result.rows == 40
            assert result.roc_auc is not None and result.roc_auc > 0.8  # the lexical signal is learnt
            assert result.spearman is not None and result.spearman > 0.6
            assert abs(result.new_flag_rate - result.old_flag_rate) <= 0.1  # ties may move it a little
        # The migrated model answers Perspective's request for the attribute, with the version trained.
        analyzed = c.analyze_comment("you idiot, stupid moron", ["TOXICITY"], model=handle)
        summary = analyzed.attribute_scores["TOXICITY"].summary_score
        assert summary is not None and summary.value > by["TOXICITY"].threshold
        assert c.get_model(handle).version_no == report.version_no
