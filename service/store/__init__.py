"""The store: the database schema (`schema`, `campaign_schema`), engines, sessions and migrations (`db`), the
run ledger (`ledger`), the session-level reads and writes that both the domain and the background runs use
(`samples`, `history`), and API keys (`api_keys`: minted once, stored hashed, checked per request).

It imports nothing above it (the domain, the runs, the context, the routes): `pyproject.toml`'s import-linter
contracts say so, and `make lint` checks them.
"""

# Every table on Base.metadata (migrations, their test), whichever module is imported first.
from service.store import campaign_schema, schema  # noqa: F401, E402
