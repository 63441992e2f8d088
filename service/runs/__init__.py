"""Background work. A **run** is one piece of work longer than a request (train, retrain, backfill, discover,
synthesize, evaluate); a **worker** is a thread or process that executes runs.

- `queue`: the Huey queue that carries run ids to workers.
- `executor`: claims a run and dispatches it by kind (`KINDS`) to `train`, `discover`, `synthesize` or
  `evaluate`, one module each.
- `attempt`, `heartbeat`, `edits`: what every run kind shares.
- `locks`: a lock a worker holds while it executes a run, so a dead worker's run is seen at once.
- `consumer`: worker threads and the recovery loop; `child`: the embedded service's worker process.

The runs table (create, claim, heartbeat, progress, finish/fail, recovery) is `service/store/ledger.py`, which
the domain uses too; `python -m service worker` is `service/process/worker.py`, which builds a context above
this.
"""
