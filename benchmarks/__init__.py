"""Benchmarks, grouped by what they measure; each prints one JSON object as its last stdout
line and runs as `python -m benchmarks.GROUP.MODULE`.

- strength/: games against other engines (match runner, real clocks, long runs, regression
  suites).
- speed/: playouts, whole searches, the network, start-up and tree memory.
- knowledge/: how well the network, the value head and the playouts know 9-dan games.
- robustness/: the GTP front end under random input and the engine's ways of ending.

Shared by them: gtp_client (one engine subprocess over GTP, answers checked) and time_control
(a server's time systems and a player's clock). Match records are archived in records/ (see
records/README.md).
"""
import engine  # noqa: F401  (sets numba's cache folder before numba is imported)
