"""Speed:

- playouts: playouts per second from the empty board, on one thread and several.
- genmove_speed: whole searches through GTP, playouts per wall and CPU second, for settings of
  threads and network, beside another engine's (Pachi's) CPU time.
- nn_speed: the policy (and value) network's evaluations per second as the search asks them.
- cold_start: start-up as a GUI sees it, to the first answer and the first genmove.
- tree_memory: bytes per node and edge of the search tree, and the process's resident memory.
- loader_speed: training samples per CPU second from SGF archives and from a pack, and per
  wall second with data-loader workers.
"""
