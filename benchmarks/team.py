"""A team labelling one model through the API: claims keep their work apart, and no label is lost.

    python -m benchmarks.team [--annotators 10] [--duration 300] [--pool 4000] [--k 20] [--think 1.0]
                              [--flood] [--scale 5 --gold-rate 0.1]

One local service (`core.local`, the hashing embedder unless `--embedder` says otherwise) in a temporary data
directory. The owner creates a model (one trait, a few samples of each pole) with a pool of `--pool`
generated texts; `--annotators` named annotator keys each ask for `--k` claimed suggestions
(`POST …/pool/suggest` with `claim`), label them one by one (`POST …/pool/{id}/label`, `--think` seconds
apart) and ask again, until `--duration` ends (or, with `--labels N`, until they have posted N labels and a
flood has been refused once, and some were posted after the training: a run whose outcome is the work done,
whatever the machine's speed). After `--train-at` labels the owner trains the draft: the labels then go to
the feedback buffer while it runs and after, where they wait: a team's model retrains automatically only
once its owner turns `auto_retrain` on (off by default for a team).

With `--flood`, one of the annotators is a script instead: its key sends labels as fast as one connection
can (no think time, no retries, every pool text in turn) while the others label as people do; the service's
rate limits (SCORING_WRITE_RATE_PER_S, SCORING_WRITE_BURST) answer it 429.

With `--scale N` the trait is rated on an N-point scale (`PATCH …/traits/{key}` `scale`): people send a
`point` for each text instead of a quality. With `--gold-rate R` the owner imports gold items (one per 20
pool texts, at least 20; `POST …/gold`) and sets the model's `gold_rate`: about R of each person's
suggestions are gold items, which they label like any text; their labels are answers, not votes.

Measured: suggestion and label latency (p50, p95), **collisions** (a text other than a gold item handed to
two people while one vote per text is wanted; must be 0), **lost labels** (labels answered 2xx that are not a
stored vote of their person once the runs have settled, or whose vote holds another point or quality than the
one pressed; a gold item's label: no recorded answer; must be 0), **refusals** (any non-2xx answer a person
got, retried by the client or not; must be 0) and among them the **429s the people met** (the limits'
defaults leave a person's pace alone); with `--flood`, what the flood sent and how much was refused.
Writes benchmarks/results/team.json (team-flood.json, team-scale-gold.json) and prints a markdown table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from core.client import ApiError, Client
from core.contract import MAX_SCALE_POINTS, MIN_SCALE_POINTS, scale_quality
from core.local import start_local_service
from harness.texts import WORDS

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "team.json"
FLOOD_RESULTS = ROOT / "benchmarks" / "results" / "team-flood.json"
SCALE_GOLD_RESULTS = ROOT / "benchmarks" / "results" / "team-scale-gold.json"
NAMESPACE = "team"
HANDLE = f"{NAMESPACE}.campaign"
TRAIT = "tone"


def pool_texts(n: int, seed: int = 7) -> list[str]:
    """`n` distinct texts of eight words each: far apart for any embedder (none a near-duplicate)."""
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < n:
        out.add(" ".join(rng.sample(WORDS, 8)))
    return sorted(out)


def quality_of(text: str) -> float:
    """A person's label, the same whoever gives it: the text's first word decides the pole."""
    return 1.0 if WORDS.index(text.split()[0]) % 2 else 0.0


def point_of(text: str, points: int) -> int:
    """A person's point on a `points`-point scale, the same whoever gives it: the first word decides."""
    return WORDS.index(text.split()[0]) % points + 1


def gold_texts(n: int, points: int | None, taken: set[str]) -> list[tuple[str, float]]:
    """`n` texts outside `taken` with their known answer: the pole a person's label puts them on (a text a
    person would rate at a scale's middle is no gold item: a known answer is on a pole)."""
    out: list[tuple[str, float]] = []
    for text in pool_texts(3 * n + len(taken), seed=11):
        label = quality_of(text) if points is None else scale_quality(point_of(text, points), points)
        if text not in taken and label != 0.5:
            out.append((text, label))
    return out[:n]


@dataclass
class Annotator:
    name: str
    client: Client
    suggest_s: list[float] = field(default_factory=list)
    label_s: list[float] = field(default_factory=list)
    handed: list[int] = field(default_factory=list)  # pool ids, as handed out (a claim renewed: again)
    posted: dict[int, tuple[str, float]] = field(default_factory=dict)  # pool id -> (text, label), 2xx
    gold_handed: int = 0  # gold items among the suggestions (handed to everyone in turn: no collision)
    routes: dict[str, int] = field(default_factory=dict)  # stored_as -> count
    errors: list[str] = field(default_factory=list)


class Counting(httpx.HTTPTransport):
    """A client's transport that counts the non-2xx answers it receives by status (the client retries a 429
    or a 503 unseen): a person labelling as asked should meet none."""

    def __init__(self) -> None:
        super().__init__()
        self.refused: dict[int, int] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if not response.is_success:
            self.refused[response.status_code] = self.refused.get(response.status_code, 0) + 1
        return response


@dataclass
class Flood:
    sent: int = 0
    statuses: dict[int, int] = field(default_factory=dict)


def flood_loop(
    url: str, key: str, ids: list[int], deadline: float, out: Flood, people_done: threading.Event | None
) -> None:
    """Labels as fast as one connection can send them, cycling through the pool: a script, not a person.
    With `people_done`, it stops once that is set and it has been refused (429) at least once."""
    base = url.rstrip("/") + "/"  # the service's /v1 address
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        i = 0
        while time.monotonic() < deadline and not (
            people_done is not None and people_done.is_set() and 429 in out.statuses
        ):
            body = {"trait": TRAIT, "quality": 1.0}
            status = http.post(f"models/{HANDLE}/pool/{ids[i % len(ids)]}/label", json=body).status_code
            out.sent += 1
            out.statuses[status] = out.statuses.get(status, 0) + 1
            i += 1


def make_key(data_dir: Path, name: str) -> str:
    """An annotator key, stored as `python -m service keys create --name NAME --role annotator` stores it
    (on the database that command would open), in this process: a `keys create` process costs ~3 s of CPU,
    more than a short run's labelling. Its audit entries are left out: nothing here reads them."""
    from service.config.settings import Settings
    from service.store.api_keys import create_key
    from service.store.db import make_engine, make_session_factory, transaction

    engine = make_engine(Settings.from_env(data_dir=data_dir).database_url)
    try:
        with transaction(make_session_factory(engine)) as s:
            return create_key(s, [NAMESPACE], "authoring", name, "annotator")
    finally:
        engine.dispose()


def label_loop(
    a: Annotator,
    deadline: float,
    k: int,
    think: float,
    labels_done: list[int],
    points: int | None = None,
    gold: frozenset[str] = frozenset(),
    enough: Callable[[], bool] = lambda: False,
) -> None:
    def over() -> bool:
        return time.monotonic() >= deadline or enough()

    while not over():
        started = time.perf_counter()
        try:
            got = a.client.suggest(HANDLE, TRAIT, k=k, claim=True)
        except ApiError as exc:
            a.errors.append(f"suggest: {exc}")
            continue
        a.suggest_s.append(time.perf_counter() - started)
        items = [i for i in got.items if i.id not in a.posted]
        a.handed.extend(i.id for i in got.items if i.text not in gold)
        a.gold_handed += sum(i.text in gold for i in got.items)
        if not items:
            if not got.unlabelled:
                return  # the pool is done
            time.sleep(0.2)
            continue
        for item in items:
            if over():
                return
            time.sleep(think)
            point = None if points is None else point_of(item.text, points)
            started = time.perf_counter()
            try:
                if point is None:
                    out = a.client.label_pool_text(HANDLE, item.id, TRAIT, quality_of(item.text))
                else:
                    out = a.client.label_pool_text(HANDLE, item.id, TRAIT, point=point)
            except ApiError as exc:
                a.errors.append(f"label: {exc}")
                continue
            a.label_s.append(time.perf_counter() - started)
            a.posted[item.id] = (item.text, quality_of(item.text) if point is None else point)
            a.routes[out.stored_as] = a.routes.get(out.stored_as, 0) + 1
            labels_done[0] += 1


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


def run(
    annotators: int,
    duration: float,
    pool: int,
    k: int,
    think: float,
    train_at: int,
    embedder: str,
    flood: bool = False,
    scale: int | None = None,
    gold_rate: float = 0.0,
    labels: int | None = None,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="team-bench-") as tmp:
        service = start_local_service(Path(tmp), embedder=embedder, namespace=NAMESPACE)
        with service, contextlib.ExitStack() as clients:
            owner = clients.enter_context(service.client())
            owner.create_model(HANDLE)  # on the service's default, `embedder` (a test one is not a choice)
            owner.add_traits(HANDLE, [{"name": "Tone", "positive_label": "warm", "negative_label": "cold"}])
            if scale is not None:
                owner.set_scale(HANDLE, TRAIT, {"points": scale})
            texts = pool_texts(pool)
            seeds = texts[:10]
            owner.add_samples(
                HANDLE, [{"trait": TRAIT, "text": t, "quality": float(i % 2)} for i, t in enumerate(seeds)]
            )
            owner.import_pool(HANDLE, texts[10:])
            gold: dict[str, float] = {}
            if gold_rate > 0:
                gold = dict(gold_texts(max(20, pool // 20), scale, set(texts)))
                items = [{"trait": TRAIT, "text": t, "quality": q} for t, q in gold.items()]
                for i in range(0, len(items), 500):
                    owner.add_gold(HANDLE, items[i : i + 500])
                owner.update_model(HANDLE, gold_rate=gold_rate)
            transports = [Counting() for _ in range(annotators - flood)]
            people = [
                Annotator(
                    name,
                    clients.enter_context(
                        Client(service.url, make_key(Path(tmp), name), timeout=120, transport=t)
                    ),
                )
                for name, t in zip((f"ann{i:02d}" for i in range(annotators)), transports, strict=False)
            ]
            flooded = Flood()
            if flood:
                ids = [t.id for t in owner.list_pool_page(HANDLE, limit=500).items]
                flood_key = make_key(Path(tmp), "script")
            labels_done = [0]
            trained_at: list[int | None] = [None]  # the labels posted when the owner's training had started

            def enough() -> bool:
                """`labels` posted, and when the training falls among them, one at least after it started
                (each person's next label, the one in flight as it started counting for none)."""
                if labels is None or labels_done[0] < labels:
                    return False
                started = trained_at[0]
                return train_at >= labels or (started is not None and labels_done[0] > started + len(people))

            deadline = time.monotonic() + duration
            loop_args = (deadline, k, think, labels_done, scale, frozenset(gold), enough)
            people_done = threading.Event() if labels is not None else None
            threads = [threading.Thread(target=label_loop, args=(a, *loop_args), daemon=True) for a in people]
            if flood:
                args = (service.url, flood_key, ids, deadline, flooded, people_done)
                threads.append(threading.Thread(target=flood_loop, args=args, daemon=True))
            started = time.monotonic()
            for t in threads:
                t.start()
            trained = False
            while any(t.is_alive() for t in threads):
                if people_done is not None and not any(t.is_alive() for t in threads[: len(people)]):
                    people_done.set()
                if not trained and labels_done[0] >= train_at:
                    owner.train(HANDLE, effort="low")  # the team keeps labelling while it runs
                    trained, trained_at[0] = True, labels_done[0]
                time.sleep(0.2)
            elapsed = time.monotonic() - started
            model = owner.wait(HANDLE, timeout=600)
            # Every vote, a sample's or a buffered label's, with its person and its point (or quality).
            votes: dict[tuple[str, str], list[float]] = {}
            for v in owner.votes(HANDLE, page_size=500):
                if v.kind != "unsure" and v.annotator and v.quality is not None:
                    label = float(v.quality if scale is None else v.point or 0)
                    votes.setdefault((v.annotator, v.text), []).append(label)
            gold_set = owner.gold(HANDLE).items if gold else []
            answers = {g.text: g.answers for g in gold_set}
            lost = mismatched = gold_posted = 0
            for a in people:
                for text, pressed in a.posted.values():
                    if text in gold:
                        gold_posted += 1
                        continue
                    stored = votes.get((a.name, text))
                    lost += not stored
                    mismatched += any(abs(x - pressed) > 1e-6 for x in stored or [])
            # A gold item's label is its person's answer, never a vote: answers recorded vs labels posted.
            lost += max(0, gold_posted - sum(answers.values()))
            mismatched += sum(g.answers - g.correct for g in gold_set)  # pressed on the known answer's pole
            gold_as_votes = sum(text in gold for _, text in votes)
            holders: dict[int, set[str]] = {}
            for a in people:
                for pid in a.handed:
                    holders.setdefault(pid, set()).add(a.name)
            collisions = sum(len(names) > 1 for names in holders.values())
            suggest_s = [x for a in people for x in a.suggest_s]
            label_s = [x for a in people for x in a.label_s]
            routes: dict[str, int] = {}
            for a in people:
                for route, n in a.routes.items():
                    routes[route] = routes.get(route, 0) + n
            refused: dict[int, int] = {}
            for transport in transports:
                for status, n in transport.refused.items():
                    refused[status] = refused.get(status, 0) + n
            model = owner.get_model(HANDLE)
            return {
                "annotators": annotators,
                "duration_s": round(elapsed, 1),
                "pool": pool,
                "k": k,
                "think_s": think,
                "embedder": embedder,
                "scale": scale,
                "gold_rate": gold_rate,
                "gold_items": len(gold),
                "suggestions": len(suggest_s),
                "suggest_p50_ms": percentile(suggest_s, 0.5),
                "suggest_p95_ms": percentile(suggest_s, 0.95),
                "labels_posted": sum(len(a.posted) for a in people),
                "label_p50_ms": percentile(label_s, 0.5),
                "label_p95_ms": percentile(label_s, 0.95),
                "labels_per_s": round(len(label_s) / elapsed, 2) if elapsed else None,
                "stored_as": routes,
                "gold_handed": sum(a.gold_handed for a in people),
                "gold_answers": gold_posted,
                "gold_as_votes": gold_as_votes,
                "texts_handed": len(holders),
                "collisions": collisions,
                "lost": lost,
                # Stored votes whose point (quality) is not the one pressed, gold answers off their pole.
                "mismatched": mismatched,
                "refusals": sum(refused.values()),
                "refused": refused,  # status -> count
                "errors": [e for a in people for e in a.errors][:20],
                "error_count": sum(len(a.errors) for a in people),
                "versions": model.version_no,
                "buffered_at_end": model.buffered_feedback,
                "rate_limited": refused.get(429, 0),  # 429s the people met
                "flood": {"sent": flooded.sent, "statuses": flooded.statuses} if flood else None,
            }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.team", description=__doc__.split("\n")[0])
    parser.add_argument("--annotators", type=int, default=10)
    parser.add_argument("--duration", type=float, default=300.0, help="seconds of labelling")
    parser.add_argument(
        "--labels",
        type=int,
        default=None,
        help="stop once the people have posted this many labels (some after the owner's training when it "
        "falls among them, and a flood was refused once): --duration then only bounds the run",
    )
    parser.add_argument("--pool", type=int, default=4000, help="texts in the pool")
    parser.add_argument(
        "--k", type=int, default=20, help="suggestions asked for at a time (the Label page's)"
    )
    parser.add_argument("--think", type=float, default=1.0, help="seconds a person takes per label")
    parser.add_argument("--train-at", type=int, default=50, help="labels after which the owner trains")
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument(
        "--flood", action="store_true", help="one of the annotators is a script labelling at full speed"
    )
    parser.add_argument(
        "--scale",
        type=int,
        choices=range(MIN_SCALE_POINTS, MAX_SCALE_POINTS + 1),
        default=None,
        help="rate the trait on a scale of this many points (default: its two poles)",
    )
    parser.add_argument(
        "--gold-rate", type=float, default=0.0, help="share of suggestions that are gold (default 0)"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    result = run(
        args.annotators,
        args.duration,
        args.pool,
        args.k,
        args.think,
        args.train_at,
        args.embedder,
        args.flood,
        args.scale,
        args.gold_rate,
        args.labels,
    )
    plain = args.scale is None and not args.gold_rate
    args.out = args.out or (FLOOD_RESULTS if args.flood else RESULTS if plain else SCALE_GOLD_RESULTS)
    result["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        "| annotators | s | labelled by | suggest p50/p95 ms | label p50/p95 ms | labels (gold answers) "
        "| collisions | lost | refusals (429) | versions | flood sent (statuses) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    flooded = result["flood"]
    flood_cell = f"{flooded['sent']} ({flooded['statuses']})" if flooded else "-"
    labelled_by = f"{args.scale} points" if args.scale else "poles"
    labelled_by += f", gold {args.gold_rate:g}" if args.gold_rate else ""
    print(
        f"| {result['annotators']} | {result['duration_s']} | {labelled_by} | {result['suggest_p50_ms']} / "
        f"{result['suggest_p95_ms']} | {result['label_p50_ms']} / {result['label_p95_ms']} | "
        f"{result['labels_posted']} ({result['gold_answers']}) | {result['collisions']} | "
        f"{result['lost'] + result['mismatched']} | {result['refusals']} ({result['rate_limited']}) | "
        f"{result['versions']} | {flood_cell} |"
    )
    ok = all(result[x] == 0 for x in ("collisions", "lost", "mismatched", "refusals", "gold_as_votes"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
