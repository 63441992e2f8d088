"""The dev-only harness that tests and benchmarks share: throwaway servers and the processes around them.

Throwaway PostgreSQL clusters (`pgcluster`) and Redis servers (`redisserver`), free loopback ports that are
safe under pytest-xdist (`ports`), processes as psutil sees them (`processes`), the service's command lines
(`service`) and the one launcher of its processes, API and worker processes on one database (`fleet`), the
one bounded wait (`waiting`), the workbench on loopback (`streamlit`), headless Chromium (`browser`) and
where the labelled datasets are (`datasets`).

Why a top-level package of its own: benchmarks need these as much as tests do, and a benchmark must not import
`tests` (a test suite is not a library, and its conftest and fixtures would come along); `core` is the library
that ships and has no business starting database servers. This package is not in the wheel
(`pyproject.toml` packages only `core`, `service` and `app`); pytest (the fixture factories) and Playwright
come with the dev extra and are imported only where used.
"""
