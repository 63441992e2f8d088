"""Scale benchmark: `python -m benchmarks.scale PART [--database sqlite|postgres|both] …`.

Every part starts the service as real processes on loopback (a temp data dir; SQLite in it, or a throwaway
PostgreSQL cluster from harness.pgcluster with fsync on), creates an authoring key with the CLI and
works through the HTTP API, as a user's script would. It samples the resident memory (RSS) of the API process
and of the worker processes, and at the end greps their logs for `database is locked`, tracebacks and errors.

One module per part: `imports`, `speedup`, `million`, `models`, `mixed`; what they share: the texts
(`corpus`), the deployment and what is measured while it runs (`deployment`), the API steps (`steps`), the
command line (`cli`). Results go to benchmarks/results/scale_<part>.json (with the machine), and a table to
stdout.
"""

from benchmarks.scale.cli import main

__all__ = ["main"]
