"""Perspective API compatibility beneath `service/routes/perspective.py`: `compat` (request and response
shapes, sentence spans, language detection, Google's error shape) and `discovery` (the Discovery document).
"""
