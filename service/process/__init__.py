"""What a process of `python -m service` runs, one module each: the API's app (`api.create_app`), the worker
(`worker`), the commands `backfill` and `backup` / `restore`, and `parent` (is the process that started us
still there?). The top layer: nothing
below imports it (pyproject.toml's import-linter contracts).
"""
