"""A process's configuration: `settings` (environment variables and CLI overrides). The bottom layer: it
imports nothing of the service.
"""
