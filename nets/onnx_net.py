"""The network on ONNX Runtime: a PolicyNet exported to an ONNX graph in memory and run by
ONNX Runtime's CPU kernels, standing in for the torch module wherever the Policy evaluator and
nets.model.symmetric_forward call it.

On the CPU, ONNX Runtime runs this network faster than torch at the batch sizes the search
sends, with the same answers up to float rounding (benchmarks/speed/nn_speed.py --backend;
benchmarks/RESULTS.md). The graph is exported from the loaded weights when first used (about
a second, in the engine's warm-up thread), so any weights file runs on it; exporting needs the
onnx package, running needs onnxruntime. CUDA keeps torch.
"""
import importlib.util
import inspect
import io
import logging
import threading
import warnings

import numpy as np
import torch

OPSET = 17
log = logging.getLogger(__name__)


def available():
    """Return True when onnxruntime and onnx (which the export needs) are installed. Found,
    not imported: importing them takes over a second, which the warm-up thread pays when the
    first graph is exported, not the engine's first answer."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnx", "onnxruntime"))


class _Exported(torch.nn.Module):
    """The part of PolicyNet.forward the search reads, as a graph with tensors only: head 1's
    log-probabilities, then the ownership and the value where the net has them."""

    def __init__(self, net, value):
        super().__init__()
        self.net = net
        self.with_value = value

    def forward(self, x, mask, komi):
        logp, own, value = self.net(x, mask, komi, self.with_value)
        return tuple(t for t in (logp[:, 0], own, value) if t is not None)


def export(net, value):
    """Return the ONNX graph (bytes) of net's head-1 log-probabilities, ownership (if any) and
    value (with value=True and a value head), for any batch and board size, and the names of
    its outputs in that order."""
    size = 19
    planes = net.trunk[0].in_channels
    x = torch.zeros(1, planes, size, size)
    mask = torch.ones(1, size * size, dtype=torch.bool)
    komi = torch.zeros(1)
    module = _Exported(net, value).eval()
    with_value = value and net.value is not None
    value_ownership = with_value and net.config.get("value_ownership", False)
    names = ["logp"] + (["own"] if net.ownership is not None or value_ownership else []) \
        + (["value"] if with_value else [])
    axes = {"x": {0: "batch", 2: "height", 3: "width"}, "mask": {0: "batch", 1: "points"},
            "komi": {0: "batch"}}
    for name in names:
        axes[name] = {0: "batch"} if name == "value" else {0: "batch", 1: "points"}
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        # The TorchScript exporter is deprecated in favour of one that needs onnxscript; it
        # exports this plain convolutional graph exactly.
        warnings.simplefilter("ignore")
        # torch before 2.5 has only that exporter, and no dynamo argument.
        legacy = {"dynamo": False} if "dynamo" in inspect.signature(
            torch.onnx.export).parameters else {}
        torch.onnx.export(module, (x, mask, komi), buffer, opset_version=OPSET,
                          input_names=["x", "mask", "komi"], output_names=names,
                          dynamic_axes=axes, **legacy)
    return buffer.getvalue(), names


class OnnxNet:
    """A PolicyNet's stand-in on ONNX Runtime: called as the module is (x, mask, komi, value)
    with torch tensors on the CPU, it answers alike (log-probabilities [B, 1, N*N] of head 1
    only, ownership or None, value or None) in float32, and carries the net's config.

    Each graph, with the value head (where the net has one) and without it, is exported when
    first asked for: the engine's warm-up thread asks in the background, so that start-up
    does not wait, and value=False skips the head as PolicyNet does. A lock keeps two threads
    (the warm-up's and a search's) from exporting at once."""

    def __init__(self, net, threads=None):
        self.net = net.cpu().float().eval()
        self.config = net.config
        self.value = net.value
        self.threads = threads
        self._sessions = {}
        self._export_lock = threading.Lock()

    def _session(self, value):
        """Return (session, output names, input names) for the graph with or without the
        value head, or None where it could not be exported or loaded: a warning says why,
        once, and the torch module answers instead."""
        key = bool(value and self.net.value is not None)
        if key in self._sessions:
            return self._sessions[key]
        with self._export_lock:
            if key in self._sessions:
                return self._sessions[key]
            try:
                self._sessions[key] = self._new_session(key)
            except Exception as exc:  # noqa: BLE001 (any failure: torch answers instead)
                log.warning("ONNX Runtime cannot run this network (%s: %s); torch runs it",
                            type(exc).__name__, exc)
                self._sessions[key] = None
        return self._sessions[key]

    def _new_session(self, value):
        """Export the graph with or without the value head and return (session, output
        names, input names)."""
        import onnxruntime as ort
        graph, names = export(self.net, value)
        options = ort.SessionOptions()
        if self.threads:
            options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        # Spinning workers would take the CPU from the search threads between batches, as
        # busy-waiting OpenMP threads would (gtp_main.quiet_openmp does it for torch).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # Subnormal activations are slow; torch flushes them too (nets.model.Policy).
        options.add_session_config_entry("session.set_denormal_as_zero", "1")
        session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        # A graph without the value head reads no komi, and the exporter drops the input.
        return session, names, {i.name for i in session.get_inputs()}

    def __call__(self, x, mask=None, komi=None, value=True):
        batch = x.shape[0]
        if mask is None:
            mask = torch.ones(batch, x.shape[-2] * x.shape[-1], dtype=torch.bool)
        if komi is None:
            komi = torch.zeros(batch)
        prepared = self._session(value)
        if prepared is None:
            return self.net(x, mask, komi, value)
        session, names, inputs = prepared
        feed = {"x": np.ascontiguousarray(x.numpy(), np.float32),
                "mask": np.ascontiguousarray(mask.numpy(), np.bool_),
                "komi": np.ascontiguousarray(komi.numpy(), np.float32)}
        feed = {name: array for name, array in feed.items() if name in inputs}
        out = dict(zip(names, (torch.from_numpy(a) for a in session.run(names, feed))))
        return out["logp"][:, None], out.get("own"), out.get("value")
