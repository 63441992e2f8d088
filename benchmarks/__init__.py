"""Benchmarks (not tests): `python -m benchmarks.speed`, `python -m benchmarks.quality`."""
