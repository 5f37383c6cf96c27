"""Batched network evaluation for the search: leaf positions in, priors and values out, on one
thread.

Search threads submit (tag, board) pairs and go on with their playouts; the server thread
takes whatever has queued up (up to batch_size), runs one forward pass, and hands each row of
priors, with the position's value when the net has a value head, to the callback with its tag. It knows nothing of trees: the search decides what a tag
means and what to do with the priors (nets never imports engine.search).
"""
import logging
import queue
import threading

log = logging.getLogger("server")


class EvalServer:
    """A thread that evaluates submitted boards in batches with a nets.model.Policy."""

    def __init__(self, policy, on_result, batch_size=16, max_pending=256):
        """on_result(tag, priors, value) gets each answer: priors by engine point (None when
        the pass failed) and the value in [-1, 1] for the side to move (None without a value
        head, or while values is False). komi, which values depend on, and values, whether
        the search uses them (the value head is skipped when not), may be changed between
        searches."""
        self.policy = policy
        self.komi = 0.0
        self.values = True
        self.on_result = on_result
        self.batch_size = batch_size
        self.max_pending = max_pending
        self._queue = queue.Queue()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._stopped = False
        self.evaluated = 0
        self.batches = 0
        self._thread.start()

    def has_room(self):
        """Return True while fewer than max_pending requests wait."""
        return self._queue.qsize() < self.max_pending

    def submit(self, tag, board):
        """Queue a board for evaluation; on_result(tag, priors, value) follows on the server
        thread."""
        self._queue.put((tag, board))

    def evaluate_now(self, boards):
        """Return (priors, values or None) for boards at once, on the caller's thread (the
        root, say)."""
        return self.policy.point_evaluate(boards, komi=self.komi, value=self.values)

    def cancel_pending(self):
        """Drop the requests not yet taken, wait for the batch in flight, and return the dropped
        tags, so that the caller can undo whatever it reserved for them."""
        dropped = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, tuple):
                dropped.append(item[0])
        reached = threading.Event()
        self._queue.put(reached)
        reached.wait()
        return dropped

    def close(self):
        """Stop the server thread after the batch in flight."""
        self._queue.put(None)
        self._thread.join()

    def _serve(self):
        """Evaluate batches until close(); a queued Event marks a point that cancel_pending
        waits for, and is set once every request before it has been answered."""
        while not self._stopped:
            batch, markers = [], []
            item = self._queue.get()
            while True:
                if item is None:
                    self._stopped = True
                elif isinstance(item, threading.Event):
                    markers.append(item)
                else:
                    batch.append(item)
                if self._stopped or len(batch) >= self.batch_size:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch:
                self._evaluate(batch)
            for marker in markers:
                marker.set()

    def _evaluate(self, batch):
        """Run one forward pass and hand every row (None if the pass failed) to the callback."""
        try:
            priors, values = self.policy.point_evaluate([board for _, board in batch],
                                                        komi=self.komi, value=self.values)
        except Exception:
            log.exception("network evaluation failed for a batch of %d", len(batch))
            priors, values = [None] * len(batch), None
        for i, ((tag, _), row) in enumerate(zip(batch, priors)):
            try:
                self.on_result(tag, row, None if values is None else float(values[i]))
            except Exception:   # searches wait on this thread: it must outlive a bad answer
                log.exception("the callback failed on the network's answer for a leaf")
        self.evaluated += len(batch)
        self.batches += 1
