"""The network half: features, model, data, training, evaluation server; and where the shipped
weights are and what can run them (here, so that gtp_main's --help names them without
importing torch)."""
import os

import engine  # noqa: F401  (sets numba's cache folder before numba is imported)

_WEIGHTS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "weights")
# The search's net: sized for its batches on 2 CPU cores (>= 500 positions/s in fp32), with
# the value head the search mixes into its win rates (engine.config.NET_VALUE_WEIGHT).
DEFAULT_WEIGHTS = os.path.join(_WEIGHTS_DIR, "cpu_value.pt")
# The pure-network player's net: deeper and slower, affordable since it evaluates one position
# (8 symmetries) per move, where the search needs hundreds per second. Its games were measured
# with it; cpu.pt and cpu_value.pt, trained further, are now the more accurate on held-out moves.
POLICY_ONLY_WEIGHTS = os.path.join(_WEIGHTS_DIR, "cpu10.pt")
# The search's net with the ladder planes, then trained on with them on the CPU (stage 9b of
# weights/history.md): where a GPU lease (nets.lease) starts. Not used in play: it won 20 of
# 40 against cpu_value.pt (benchmarks/RESULTS.md S4), no better.
LADDER_WEIGHTS = os.path.join(_WEIGHTS_DIR, "cpu_value_ladder.pt")
# What can run the network (nets.model.resolve_backend): torch, or ONNX Runtime (nets.onnx_net).
NET_BACKENDS = ("auto", "torch", "onnx")
