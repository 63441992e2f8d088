"""A client importing samples in batches, one after another, with the rate limits at their defaults or off.

`python -m benchmarks.import_limits --batches 400 --rows 50 [--limits default|off]`: the service as a real
process on SQLite (hashing embedder, benchmarks.scale's deployment), one key posting `--batches` batches of
`--rows` samples in a row; a 429 is waited out (Retry-After) and sent again, as the client does. Reports
the wall time, samples a second, the 429s met and the seconds spent waiting them out. With batches the
server takes faster than the writes rate (10 a second), the old rule (one write token a batch) held the
client to that rate after its burst of 120; the import bucket must not.
"""

from __future__ import annotations

import argparse
import json
import time

from benchmarks.scale.corpus import Corpus
from benchmarks.scale.deployment import LIMITS_ON, NAMESPACE, deployment
from benchmarks.scale.steps import BatchLog, make_model


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.import_limits", description=__doc__)
    p.add_argument("--batches", type=int, default=400)
    p.add_argument("--rows", type=int, default=50, help="samples a batch")
    p.add_argument("--limits", choices=("default", "off"), default="default")
    p.add_argument("--corpus", choices=("politeness", "demo"), default="politeness")
    args = p.parse_args(argv)
    corpus = Corpus.load(args.corpus)
    limits = LIMITS_ON if args.limits == "default" else {}
    with deployment("sqlite", "hashing", 0, **limits) as dep:
        c = dep.http(dep.create_key())
        handle = f"{NAMESPACE}.import-limits"
        make_model(c, handle, ["polite"])
        log = BatchLog()
        start = time.perf_counter()
        for i in range(args.batches):
            batch = corpus.samples(i * args.rows, args.rows)
            log.post(dep, c, f"/models/{handle}/samples", {"samples": batch})
        wall = time.perf_counter() - start
    result = {
        "limits": args.limits,
        "batches": args.batches,
        "rows": args.rows,
        "wall_s": round(wall, 1),
        "samples_per_s": round(args.batches * args.rows / wall, 1),
        "batch_ms_median": log.rate(args.rows)["batch_ms"],
        "throttled_429": len(BatchLog.throttled),
        "waited_s": round(sum(BatchLog.throttled), 1),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
