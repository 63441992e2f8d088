"""Perspective API compatibility beneath `service/routes/perspective.py`: `compat` (sentence spans,
language detection, Google's error shape) and `discovery` (the Discovery document); the bodies are
`service/schemas/perspective.py`.
"""
