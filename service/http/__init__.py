"""What a request passes besides its route: `guard` (the key, the body limit and NUL bytes, before the body is
read), `auth` (the routes' key dependencies), `api_docs` (the offline `/v1/docs`), `textplain` (a score's
`text/plain` view). Below the routes, above the context (pyproject.toml's import-linter contracts).
"""
