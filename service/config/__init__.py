"""A process's configuration: `settings` (environment variables and CLI overrides) and `testhooks` (the
fault-injection hooks of $SCORING_TEST_HOOKS). The bottom layer: it imports nothing of the service.
"""
