"""Playing strength, in games between GTP engines:

- match: a match between two engines (results file, SGFs, Wilson interval, Elo, SPRT, clock,
  handicap, referee), resumable; its command line and schedule. The match runner's parts:
  game (one game played, checked and scored), records (the settings, the results file and the
  SGFs), report (the summary, table and plot) and stats (Wilson interval, Elo, SPRT).
- clock: complete games against an opponent under a real clock kept as KGS keeps it: losses on
  time and how much of its time the engine used.
- soak: a long run of games in one engine process: crashes, illegal moves, memory growth.
- regress: regression suites in GNU Go's format (as gogui-regress runs them).
"""
