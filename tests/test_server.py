"""nets.server.EvalServer: batches answered on its thread, whatever the callback does."""
import threading

import numpy as np

from engine.game import Game
from nets.server import EvalServer


class ZeroPolicy:
    """Answers every board with zero priors and a value of 0."""

    def point_evaluate(self, boards, colors=None, komi=0.0, value=True):
        return np.zeros((len(boards), 121), np.float32), np.zeros(len(boards), np.float32)


def test_the_server_outlives_a_failing_callback():
    answered = []
    done = threading.Event()

    def on_result(tag, priors, value):
        if tag == 0:
            raise RuntimeError("a bug in the search's callback")
        answered.append(tag)
        if len(answered) == 2:
            done.set()
    server = EvalServer(ZeroPolicy(), on_result, batch_size=1)
    try:
        for tag in range(3):
            server.submit(tag, Game(9).board)
        assert done.wait(10)
        assert answered == [1, 2]
        assert server.cancel_pending() == []     # the thread still serves its queue
    finally:
        server.close()
