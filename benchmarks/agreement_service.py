"""Agreement through the service: `python -m benchmarks.agreement_service [--embedder hashing]`.

The end-to-end check on real data (needs the shared datasets, as `benchmarks.agreement`): the Stanford
politeness requests go into a real local service (`python -m service serve` on loopback, SQLite) over HTTP,
one vote per rating with the rating's worker as its annotator, as the workbench's several-raters import sends
them (quality (score - 1) / 24). Per community:

(a) a model holding every request's five votes as samples: `GET …/agreement`'s alpha beside the `krippendorff`
    package on the CSV's workers x requests matrix (must be equal, to the 6 decimals the API gives);
(b) a model trained on 70 % of the requests (the same fixed split as `benchmarks.agreement`), whose evaluation
    set is the other 30 % with their five votes each: the version's `human_ceiling`, `model_agreement` and
    `share_of_ceiling` from `GET …/versions/v1/evaluation`, beside `core.engine.human_ceiling` computed in
    process (`benchmarks.agreement`, the same embedder; the service trains with its own parameter search, so
    the model's figures may differ a little, the human ceiling not at all).

Writes benchmarks/results/agreement_service.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from benchmarks.agreement import (
    EFFORT,
    FILES,
    TRAIT,
    Community,
    _iv,
    direct_alpha,
    embedder_for,
    load,
    part_b,
    together,
    votes,
)
from core.client import Client
from core.engine.agreement import DIGITS
from core.local import start_local_service
from harness.datasets import datasets_dir

RESULTS = Path(__file__).resolve().parent / "results" / "agreement_service.json"
TRAIT_INPUT = {
    "name": TRAIT.name,
    "positive_label": TRAIT.positive_label,
    "negative_label": TRAIT.negative_label,
    "description": TRAIT.description,
}


def vote_rows(c: Community, held_out: bool | None) -> Iterator[dict[str, Any]]:
    """The community's votes (all, or one side of the split) as API rows with their annotator."""
    chosen = None if held_out is None else (c.held_out if held_out else ~c.held_out)
    for v in votes(c, chosen):
        yield {"trait": TRAIT.key, "text": v.text, "quality": v.quality, "annotator": v.annotator}


def add_votes(client: Client, handle: str, rows: list[dict[str, Any]]) -> float:
    """Post the votes as samples in batches of the API's maximum; returns the seconds it took."""
    started = time.perf_counter()
    report = client.import_samples(handle, rows)
    if not report.ok:
        raise SystemExit(f"{handle}: {len(report.errors)} votes refused: {report.errors[:3]}")
    return time.perf_counter() - started


def new_model(client: Client, handle: str) -> None:
    client.create_model(handle)  # on the service's default embedder (a test one is not a choice)
    client.add_traits(handle, [TRAIT_INPUT])


def part_alpha(client: Client, handle: str, c: Community, embedder: str) -> dict[str, Any]:
    new_model(client, handle)
    rows = list(vote_rows(c, None))
    import_s = add_votes(client, handle, rows)
    started = time.perf_counter()
    got = client.agreement(handle, TRAIT.key).traits[TRAIT.key]
    agreement_s = time.perf_counter() - started
    direct = direct_alpha(c)
    service = {"interval": got.krippendorff_alpha_interval, "nominal": got.krippendorff_alpha_nominal}
    for level, value in service.items():  # the API rounds to DIGITS decimals
        if value is None or abs(value - round(direct[level], DIGITS)) > 1e-12:
            raise SystemExit(f"{c.name}: the service's {level} alpha {value} is not the package's {direct}")
    return {
        "requests": len(c.texts),
        "votes": len(rows),
        "raters": len(got.annotators),
        "texts_with_votes": got.texts_with_votes,
        "package": {k: round(v, 6) for k, v in direct.items()},
        "service": {k: round(float(v), 6) for k, v in service.items() if v is not None},
        "import_s": round(import_s, 1),
        "agreement_s": round(agreement_s, 2),
    }


def part_ceiling(client: Client, handle: str, c: Community, embedder: str) -> dict[str, Any]:
    new_model(client, handle)
    add_votes(client, handle, list(vote_rows(c, held_out=False)))
    client.add_evaluation_items(handle, list(vote_rows(c, held_out=True)))
    started = time.perf_counter()
    client.wait(handle, client.train(handle, effort=EFFORT).run_id, timeout=3600)
    train_s = time.perf_counter() - started
    client.wait(handle, client.evaluate(handle, 1).run_id, timeout=3600)
    evaluation = client.get_evaluation(handle, 1).traits[TRAIT.key]
    version = client.get_version(handle, 1)
    trained = (version.metrics or {}).get("traits", {}).get(TRAIT.key, {})

    def interval(x: Any) -> dict[str, float] | None:
        return None if x is None else {"value": x.value, "ci_low": x.ci_low, "ci_high": x.ci_high}

    return {
        "trained_on": {"texts": trained.get("texts"), "votes": trained.get("votes")},
        "held_out": {"texts": evaluation.items, "votes": evaluation.votes},
        "roc_auc": evaluation.roc_auc.value if evaluation.roc_auc else None,
        "human_ceiling": interval(evaluation.human_ceiling),
        "model_agreement": interval(evaluation.model_agreement),
        "share_of_ceiling": interval(evaluation.share_of_ceiling),
        "train_s": round(train_s, 1),
    }


def markdown(out: dict[str, Any]) -> str:
    lines = [
        "| requests | votes imported | raters | α interval: package / service "
        "| α nominal: package / service |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, a in out["alpha"].items():
        lines.append(
            f"| {name} ({a['requests']:,}) | {a['votes']:,} | {a['raters']} "
            f"| {a['package']['interval']:.4f} / {a['service']['interval']:.4f} "
            f"| {a['package']['nominal']:.4f} / {a['service']['nominal']:.4f} |"
        )
    lines += [
        "",
        "| held-out requests | trained on (texts / votes) | human ceiling: service / engine "
        "| model agreement: service / engine | share of the ceiling: service | held-out AUC |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, b in out["ceiling"].items():
        e = out["engine"][name]
        lines.append(
            f"| {name} ({b['held_out']['texts']:,}, {b['held_out']['votes']:,} votes) "
            f"| {b['trained_on']['texts']:,} / {b['trained_on']['votes']:,} "
            f"| {_iv(b['human_ceiling'])} / {_iv(e['human_ceiling'])} "
            f"| {_iv(b['model_agreement'])} / {_iv(e['model_agreement'])} "
            f"| {_iv(b['share_of_ceiling'], percent=True)} | {b['roc_auc']:.3f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="hashing", help="the models' embedder (default: hashing)")
    parser.add_argument("--draws", type=int, default=1000, help="bootstrap draws of the in-process ceiling")
    args = parser.parse_args()
    base = datasets_dir()
    parts = [load(base, name) for name in FILES]
    communities = [*parts, together(parts)]
    out: dict[str, Any] = {"embedder": args.embedder, "alpha": {}, "ceiling": {}, "engine": {}}
    with tempfile.TemporaryDirectory(prefix="agreement-service-") as tmp:
        service = start_local_service(Path(tmp), embedder=args.embedder, namespace="bench")
        with service, service.client(timeout=600) as client:
            for c in communities:
                out["alpha"][c.name] = part_alpha(client, service.handle(f"{c.name}-all"), c, args.embedder)
                out["ceiling"][c.name] = part_ceiling(
                    client, service.handle(f"{c.name}-split"), c, args.embedder
                )
                print(f"{c.name}: done", flush=True)
    lookup = embedder_for(args.embedder, communities[-1].texts)
    out["engine"] = {c.name: part_b(c, lookup, args.draws) for c in communities}
    out["machine"] = f"{platform.machine()}, {os.cpu_count()} cores"
    out["measured_at"] = datetime.now().isoformat(timespec="seconds")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(markdown(out))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
