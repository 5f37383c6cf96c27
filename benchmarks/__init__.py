"""Benchmarks: each prints one JSON object as its last stdout line."""
import engine  # noqa: F401  (sets numba's cache folder before numba is imported)
