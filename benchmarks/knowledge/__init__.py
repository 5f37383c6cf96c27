"""What the engine knows, measured on held-out professional (9-dan) games:

- accuracy: the policy network's move prediction (top-1, top-5, NLL) and how it treats ladders.
- agreement: how often an engine's genmove plays the game's move, over GTP.
- value_accuracy: how often the value head, the playouts and their mix name the winner.
- playout_accuracy: how often the default policy's playouts name the winner, beside Pachi's.

And in match records: ladder_runs, how often the engine extends a chain into a working ladder.
"""
