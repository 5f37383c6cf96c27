"""Robustness of the GTP engine:

- fuzz: random and malformed GTP lines at scale, each answer checked and the game unchanged
  after every error.
- ends: how the engine ends (quit, end of input, signals, closed pipes) in each state, and how
  fast.
"""
