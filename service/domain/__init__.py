"""The service's domain layer: what a request or a background run does to the tables, below the HTTP layer.

Routes (`service/routes/`) parse, authorise and call these functions. A function takes what it uses: a
session, or the narrow protocols of `needs.py` (session factories, something that enqueues a run, the pool
index…), which a route's `Context` satisfies. Nothing here imports a route, the runs or the context
(pyproject.toml's import-linter contracts); the tables, sessions and run ledger below are `service/store/`.

One module per resource, named as its route; below them the rules they share (`access`, `states`, `needs`),
and below those what the runs use too: `views` (rows → bodies), `retention` (zero-data-retention purges),
`prune` (auto-prune), `pool_index` (pools' embeddings in memory), and `decisions`, `cursors`, `embedding` (the
process's embedders and scorer cache).
"""
