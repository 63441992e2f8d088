"""Helpers shared by tests and benchmarks (throwaway PostgreSQL clusters, ...)."""
