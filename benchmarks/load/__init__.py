"""Load benchmark: `python -m benchmarks.load [--database sqlite|postgres|both] [--clients 16]
[--requests N]`.

For each database it starts the service as subprocesses on loopback (`python -m service serve`, SQLite in a
temp data dir or a throwaway PostgreSQL cluster from harness.pgcluster), stores an authoring key as `python
-m service keys create` does, builds a demo model of sample_data/ (`--model`, default the first by name),
trains it and polls until it is ready, then drives `POST /v1/models/{h}/score` (JSON `{"content": text}`, one
text a request) from `--clients` concurrent asyncio+aiohttp clients over distinct texts that were never
embedded while training. By default one API process per core, each with `--scoring-threads` = cores /
processes; `--api-processes 1` is the embedded setup.

`--rounds` cold rounds, each on `--texts` texts new to the service: the in-process engine on those texts, the
service scoring each once, the engine again. Reference: `Scorer.from_snapshot(<the served version's
snapshot>)` behind a cold `CachedEmbedder`, one text a call (like one request); the ratio of a round is the
service's throughput over the mean of the engine's two passes. Then a "warm" phase cycles over the first
round's texts again, for `--requests` requests or `--duration` seconds. Target: the median ratio >= 0.8x,
0 errors. `--mixed-trainings N` adds a round that scores while N trainings run.

Data: the other demo models' texts (about 560) and, for more, Stanford politeness requests from
`../shared/datasets` (beside the checkout; `SCORING_DATASETS` names it elsewhere): the defaults (4 × 1,000
texts) need that folder, a run of `--texts 100 --rounds 2` does not.

Prints a markdown table and writes benchmarks/results/load.json (entries for other setups are kept).

The package: `texts` (what is scored), `fleet` (the service's processes), `models` (setup over HTTP),
`drive` (the load generator), `engine` (the in-process reference), `mixed` (scoring while trainings run),
`report` (table and JSON) and `cli` (the rounds and the options).
"""

from benchmarks.load.cli import main
from benchmarks.load.report import TARGET_RATIO

__all__ = ["TARGET_RATIO", "main"]
