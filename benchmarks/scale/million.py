"""Part `million`: a model of a million samples and a pool of a million texts, end to end."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from benchmarks.scale.corpus import Corpus
from benchmarks.scale.deployment import (
    NAMESPACE,
    ONE_THREAD,
    Deployment,
    LockProbe,
    MemorySampler,
    deployment,
)
from benchmarks.scale.steps import (
    BATCH,
    BOTH,
    POOL_BATCH,
    RATE_BATCHES,
    BatchLog,
    fill,
    make_model,
    row,
    timed,
    train_watched,
)


def part_million(database: str, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    """One model of `--samples` samples (two traits), `--workers` worker processes, `--embedder`: import,
    training (sharded), the Samples page's reads, export, flags on a part; a second model of `--pool-labels`
    samples and `--pool` pool texts: label suggestions; backup of it all."""
    with deployment(database, args.embedder, args.workers, **ONE_THREAD) as dep:
        return million(dep, args, corpus)


def million(dep: Deployment, args: argparse.Namespace, corpus: Corpus) -> dict[str, Any]:
    from core.client import Client

    handle = f"{NAMESPACE}.million"
    key = dep.create_key()
    with dep.http(key) as c, Client(dep.base_url.removesuffix("/v1"), key, timeout=3600) as client:
        make_model(c, handle, list(BOTH))
        out: dict[str, Any] = {"samples": args.samples, "pool_texts": args.pool, "workers": args.workers}
        log = BatchLog()
        with MemorySampler(dep) as memory, LockProbe(dep.database_url, dep.data_dir, handle) as probe:
            memory.phase = "import"
            checkpoints = []
            stored = 0
            for size in sorted({1_000, *[x for x in (10_000, 100_000) if x < args.samples], args.samples}):
                fill(dep, c, handle, corpus, stored, size, log, BOTH)
                held, at_size = max(stored, size), BatchLog()  # the rate at this size
                stored = held + RATE_BATCHES * BATCH
                fill(dep, c, handle, corpus, held, stored, at_size, BOTH)
                checkpoints.append(
                    {"samples": held, "adding_s": round(sum(log.wall), 1), **at_size.rate(BATCH)}
                )
                log.wall += at_size.wall
                log.cpu += at_size.cpu
                print(json.dumps(checkpoints[-1]), flush=True)
            for row in checkpoints:
                row["rate_vs_first"] = round(row["rate_per_s"] / checkpoints[0]["rate_per_s"], 2)
            out["import"] = {
                "checkpoints": checkpoints,
                "lock_wait": probe.summary(),
                "memory_mb": memory.peaks.get("import"),
            }

            memory.phase = "train"
            out["training"] = {**train_watched(c, handle, args.effort, args.train_timeout), "memory_mb": None}
            out["training"]["memory_mb"] = memory.peaks.get("train")
            print(json.dumps(out["training"]), flush=True)

            memory.phase = "reads"
            reads: dict[str, float] = {}
            reads["get_model_s"], model = timed(lambda: client.get_model(handle), 5)
            assert model.sample_count == stored, (model.sample_count, stored)
            reads["traits_s"], _ = timed(lambda: client.list_traits(handle), 5)
            reads["first_page_s"], page = timed(lambda: client.list_samples_page(handle, limit=100), 5)
            reads["trait_filter_s"], _ = timed(lambda: client.list_samples_page(handle, "long", limit=100), 5)
            reads["provenance_filter_s"], _ = timed(
                lambda: client.list_samples_page(handle, provenance="feedback", limit=100), 5
            )
            reads["next_page_s"], _ = timed(
                lambda: client.list_samples_page(handle, limit=100, cursor=page.next_cursor), 5
            )
            reads["model_list_s"], _ = timed(lambda: list(client.list_models(namespace=NAMESPACE)), 5)
            out["samples_page"] = reads
            print(json.dumps(reads), flush=True)

            memory.phase = "export"
            start = time.perf_counter()
            exported = sum(1 for _ in client.list_samples(handle, page_size=500))
            out["export"] = {"samples": exported, "seconds": round(time.perf_counter() - start, 1)}
            print(json.dumps(out["export"]), flush=True)

            out["flags"] = flags_growth(client, handle, args.flags_sizes)

            # Suggestions as a labeller meets them: a model of a few thousand labels and a big pool.
            memory.phase = "pool"
            pool_handle = f"{NAMESPACE}.pool"
            make_model(c, pool_handle, list(BOTH))
            fill(dep, c, pool_handle, corpus, 0, args.pool_labels, BatchLog(), BOTH)
            pool_log = BatchLog()
            for start in range(0, args.pool, POOL_BATCH):
                texts = [corpus.text(i, "pool") for i in range(start, min(args.pool, start + POOL_BATCH))]
                pool_log.post(dep, c, f"/models/{pool_handle}/pool", {"texts": texts})
            out["pool_import"] = {
                "texts": args.pool,
                "labels": args.pool_labels,
                "seconds": round(sum(pool_log.wall), 1),
                **BatchLog(pool_log.wall[-RATE_BATCHES // 2 :], pool_log.cpu[-RATE_BATCHES // 2 :]).rate(
                    POOL_BATCH
                ),
            }
            memory.phase = "suggest"
            first_s, first = timed(lambda: client.suggest(pool_handle, "polite", k=10))
            again_s, _ = timed(lambda: client.suggest(pool_handle, "polite", k=10), 3)
            out["suggest"] = {"first_s": first_s, "again_s": again_s, "pool_size": first.pool_size}
            print(json.dumps({"pool_import": out["pool_import"], "suggest": out["suggest"]}), flush=True)

            memory.phase = "backup"
            target = dep.data_dir / "backup"
            seconds, _ = timed(lambda: dep.cli("backup", str(target), timeout=6 * 3600))
            size_mb = sum(p.stat().st_size for p in target.rglob("*") if p.is_file()) / 2**20
            out["backup"] = {"seconds": seconds, "size_mb": round(size_mb)}
            print(json.dumps(out["backup"]), flush=True)
            out["lock_wait"] = probe.summary()
        out["memory_mb"] = memory.peaks
        out["slow_writes"] = dep.slow_writes()
        out["log_problems"] = dep.log_problems()
        return out


def flags_growth(client: Any, handle: str, sizes: list[int]) -> dict[str, Any]:
    """The Flags tab's check (the workbench reads every sample, then runs core.engine.flags locally) on the
    first N samples of one trait, with the hashing embedder (so the engine's own cost shows): it grows with
    the square of the samples (each is compared with every other), which says where a million stands."""
    from core.embedders import get_embedder
    from core.engine.flags import flag_samples

    rows = []
    embedder = get_embedder("hashing")
    for n in sizes:
        samples = []
        for x in client.list_samples(handle, trait="polite", page_size=500):
            samples.append(x.model_dump(mode="json"))
            if len(samples) == n:
                break
        start = time.perf_counter()
        flagged = flag_samples(samples, embedder)
        rows.append({"samples": n, "seconds": round(time.perf_counter() - start, 1), "flags": len(flagged)})
        print(json.dumps({"flags": rows[-1]}), flush=True)
    return {"by_size": rows}


def table_million(result: dict[str, Any]) -> str:
    imp = result["import"]["checkpoints"]
    tr, reads, sug, bak = result["training"], result["samples_page"], result["suggest"], result["backup"]
    page = ("get_model_s", "traits_s", "first_page_s", "trait_filter_s", "provenance_filter_s", "next_page_s")
    lines = [
        row("step", "figure"),
        "|---|---:|",
        *(row(f"import: rate at {r['samples']:,}",
              f"{r['rate_per_s']:,} /s ({r['rate_vs_first']}×)") for r in imp),
        row(f"import: {result['samples']:,} samples", f"{imp[-1]['adding_s']:,} s"),  # to the last size
        row(f"training, {result['workers']} workers (embedding phase)",
            f"{tr['training_s']:,} s ({tr['embedding_s']:,} s)"),
        row("Samples page: model / traits / first page / trait filter / provenance filter / next page",
            " / ".join(str(reads[k]) for k in page) + " s"),
        row("model listing", f"{reads['model_list_s']} s"),
        row("export (every sample, 500 a page)", f"{result['export']['seconds']:,} s"),
        *(row(f"flags on {r['samples']:,} samples (hashing)", f"{r['seconds']} s")
          for r in result["flags"]["by_size"]),
        row(f"pool import: {result['pool_texts']:,} texts", f"{result['pool_import']['seconds']:,} s"),
        row("pool import: rate of the last batches", f"{result['pool_import']['rate_per_s']:,} /s"),
        row(f"suggestions from the pool ({result['pool_import']['labels']:,} labels): first / again",
            f"{sug['first_s']} / {sug['again_s']} s"),
        row("backup", f"{bak['seconds']} s, {bak['size_mb']:,} MB"),
        *(row(f"peak RSS, {phase}: API / workers", f"{m['api']:.0f} / {m['workers']:.0f} MB")
          for phase, m in result["memory_mb"].items()),
    ]  # fmt: skip
    return "\n".join(lines)
