"""The move-prediction DCNN, its named configurations, safe weight files and the Policy evaluator.

Fully convolutional as in darkforest: a first conv (5x5 by default), ``depth`` 3x3 convs, each
followed by ReLU then batch-norm, and a final 3x3 conv with ``heads`` outputs, one softmax over
the board per predicted move (our next move, their reply, our move after). Head 1 is masked to
the legal points. An optional ownership head gives a per-point tanh in [-1, 1] (+1 = ours), and
an optional value head the expected result for the side to move in [-1, 1] (+1 = we win), from
the trunk pooled over the board and the komi. With ``value_ownership`` the ownership comes from
the value head's own tower instead, and its sum over the board (the expected area margin) is one
of the value's inputs, so that a dense target (who owns each point at the end) trains the
features the value reads, as Wu & Baldi's territory prediction and KataGo's ownership head do.
"""
import copy
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from engine import board as bd
from nets import DEFAULT_WEIGHTS, NET_BACKENDS
from nets import features as feat
from nets import onnx_net

CONFIGS = {
    # Tian & Zhu's d=12, w=384 network: 5x5x92, 10 x 3x3x384, 3x3 head with k=3.
    "darkforest": dict(first_kernel=5, first_width=92, width=384, depth=10, heads=3,
                       ownership=False, symmetric=False, edge=False, rank=9, value=False,
                       value_convs=2, value_ownership=False, ladder=False),
    # Sized for 2 CPU cores: >= 500 positions/s at batch 16 in fp32 with features
    # (benchmarks/speed/nn_speed.py), and ~1000 training samples/s with bf16 on AMX hardware.
    "cpu": dict(first_kernel=5, first_width=64, width=64, depth=6, heads=3,
                ownership=False, symmetric=False, edge=False, rank=9, value=False,
                value_convs=2, value_ownership=False, ladder=False),
    # For tests only.
    "tiny": dict(first_kernel=3, first_width=8, width=8, depth=1, heads=3,
                 ownership=True, symmetric=False, edge=False, rank=9, value=True,
                 value_convs=1, value_ownership=False, ladder=False),
}
# Config keys that weights files written before them lack, with the value that those files mean.
LATER_CONFIG_KEYS = {"value": False, "value_convs": 0, "value_ownership": False,
                     "ladder": False}
# The value head's komi input is komi / KOMI_SCALE, seen from the side to move.
KOMI_SCALE = 10.0

WEIGHTS_FORMAT = 1
BATCH_NORM_EPS = 1e-5     # nn.BatchNorm2d's default, which PolicyNet uses


class WeightsError(ValueError):
    """A weights file that cannot be used; str() says why."""


def make_config(name="cpu", **overrides):
    """Return a full config dict: a named config with overrides; KeyError for unknown names/keys."""
    if name not in CONFIGS:
        raise KeyError(f"unknown config {name!r}; known: {', '.join(CONFIGS)}")
    config = dict(CONFIGS[name])
    for key, value in overrides.items():
        if key not in config:
            raise KeyError(f"unknown config key {key!r}")
        config[key] = value
    config["name"] = name
    return config


def _symmetrize(weight):
    """Return the mean of a conv weight [out, in, k, k] over the 8 board symmetries."""
    total = weight + weight.flip(-1) + weight.flip(-2) + weight.flip(-1, -2)
    total = total + total.transpose(-1, -2)
    return total / 8.0


class Conv(nn.Conv2d):
    """A same-padded conv; with symmetric=True its kernel is tied across the 8 symmetries.

    Tying makes every layer commute with rotations and reflections (Clark & Storkey), since all
    our input planes transform with the board.
    """

    def __init__(self, cin, cout, kernel, symmetric=False):
        super().__init__(cin, cout, kernel, padding=kernel // 2)
        self.symmetric = symmetric

    def forward(self, x):
        weight = _symmetrize(self.weight) if self.symmetric else self.weight
        return self._conv_forward(x, weight, self.bias)


def komi_for(colors, komi):
    """Return float32 [B]: the komi as points for the side to move (komi for White, -komi for
    Black), the value head's view of it."""
    colors = np.asarray(colors)
    return np.where(colors == bd.WHITE, komi, -komi).astype(np.float32)


def at_least_fp32(t):
    """Return t in float32, or as it is in float64: outputs leave bf16 autocast in float32,
    and a float64 network (Policy.use_float64) keeps its precision to the end."""
    return t if t.dtype == torch.float64 else t.float()


class ValueHead(nn.Module):
    """Trunk -> its own `convs` 3x3 blocks (conv, ReLU, batch-norm) -> 1x1 conv -> mean and
    max over the board, with the komi -> two linear layers -> tanh: the expected result for
    the side to move. Pooling keeps it size-independent; the blocks let the head read shapes
    (life, territory) that the policy trunk's last layer need not spell out.

    With ownership=True a 1x1 conv on the blocks' output also gives each point's expected
    owner (tanh, +1 = the side to move), and the sum of those, the expected area margin in
    komi's units, is one more input of the linear layers."""

    CHANNELS = 32
    HIDDEN = 64

    def __init__(self, width, convs=0, ownership=False):
        super().__init__()
        blocks = []
        for _ in range(convs):
            blocks += [nn.Conv2d(width, width, 3, padding=1), nn.ReLU(), nn.BatchNorm2d(width)]
        self.tower = nn.Sequential(*blocks)
        self.conv = nn.Conv2d(width, self.CHANNELS, 1)
        self.ownership = nn.Conv2d(width, 1, 1) if ownership else None
        self.hidden = nn.Linear(2 * self.CHANNELS + 1 + int(ownership), self.HIDDEN)
        self.out = nn.Linear(self.HIDDEN, 1)

    def forward(self, h, komi):
        """Return (value [B], ownership [B, N*N] or None), in float32 (float64 for a float64
        network)."""
        t = self.tower(h)
        v = F.relu(self.conv(t)).flatten(2)
        inputs = [v.mean(-1), v.amax(-1), (komi / KOMI_SCALE).to(v.dtype)[:, None]]
        own = None
        if self.ownership is not None:
            own = torch.tanh(at_least_fp32(self.ownership(t).flatten(1)))
            inputs.append((own.sum(-1, keepdim=True) / KOMI_SCALE).to(v.dtype))
        pooled = torch.cat(inputs, 1)
        value = torch.tanh(at_least_fp32(self.out(F.relu(self.hidden(pooled))).squeeze(1)))
        return value, own


class PolicyNet(nn.Module):
    """Conv trunk -> k move heads (logits [B, k, N*N]), optionally ownership [B, N*N] (the
    trunk's head, or the value head's with value_ownership) and a value [B]."""

    def __init__(self, config):
        super().__init__()
        self.config = dict(config)
        sym = config["symmetric"]
        cin = feat.num_planes(config["edge"], config.get("ladder", False))
        layers = [Conv(cin, config["first_width"], config["first_kernel"], sym), nn.ReLU(),
                  nn.BatchNorm2d(config["first_width"])]
        width = config["first_width"]
        for _ in range(config["depth"]):
            layers += [Conv(width, config["width"], 3, sym), nn.ReLU(),
                       nn.BatchNorm2d(config["width"])]
            width = config["width"]
        self.trunk = nn.Sequential(*layers)
        self.policy = Conv(width, config["heads"], 3, sym)
        self.ownership = Conv(width, 1, 3, sym) if config["ownership"] else None
        self.value = ValueHead(width, config.get("value_convs", 0),
                               config.get("value_ownership", False)) if config.get("value") \
            else None

    def forward(self, x, mask=None, komi=None, value=True):
        """Return (log-probabilities [B, k, N*N] in float32, ownership [B, N*N] or None,
        value [B] in float32 or None).

        mask: bool [B, N*N] of legal points for head 1; masked points get log-probability -inf.
        komi: float [B], points for the side to move (see komi_for; 0 when not given).
        value=False skips the value head (a quarter of the cpu network's time): the value and
        the value head's ownership come back None.
        """
        h = self.trunk(x)
        logp, own, _ = self.heads(h, mask)
        if self.value is not None and value:
            value, value_own = self.value_of(h, komi)
            own = own if value_own is None else value_own
        else:
            value = None
        return logp, own, value

    def value_of(self, h, komi=None):
        """Return the value head's (value [B], ownership [B, N*N] or None) from the trunk's
        output h; komi as in forward."""
        if komi is None:
            komi = torch.zeros(h.shape[0], device=h.device)
        return self.value(h, komi)

    def heads(self, h, mask=None):
        """Return (log-probabilities, ownership or None, None) from the trunk's output h: the
        move and ownership heads of forward, for training a value head on a frozen trunk."""
        logits = at_least_fp32(self.policy(h).flatten(2))
        if mask is not None:
            first = logits[:, 0].masked_fill(~mask, float("-inf"))
            logits = torch.cat([first.unsqueeze(1), logits[:, 1:]], dim=1)
        logp = F.log_softmax(logits, dim=-1)
        own = torch.tanh(at_least_fp32(self.ownership(h).flatten(1))) \
            if self.ownership is not None else None
        return logp, own, None


# Weight files ---------------------------------------------------------------------------

def save_model(model, path, meta=None):
    """Write a self-describing weights file atomically (temp file then rename); return path."""
    model = getattr(model, "module", model)
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    payload = {"format": WEIGHTS_FORMAT, "config": dict(model.config),
               "features": feat.feature_spec(model.config["rank"], model.config["edge"],
                                             model.config.get("ladder", False)),
               "state_dict": state, "meta": dict(meta or {})}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    torch.save(payload, tmp)
    os.replace(tmp, path)
    return path


def read_weights(path):
    """Return the checked payload dict of a weights file; WeightsError if unusable."""
    if not os.path.isfile(path):
        raise WeightsError(f"{path}: no such weights file")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises several types for truncated / corrupt zips
        raise WeightsError(f"{path}: truncated or corrupt weights file ({type(e).__name__}: {e})") \
            from e
    if not isinstance(payload, dict) or not {"config", "features", "state_dict"} <= set(payload):
        raise WeightsError(f"{path}: not a weights file (needs config, features, state_dict)")
    config = {**LATER_CONFIG_KEYS, **payload["config"]}
    payload["config"] = config
    missing = [k for k in CONFIGS["cpu"] if k not in config]
    if missing:
        raise WeightsError(f"{path}: config lacks {missing}")
    want = feat.feature_spec(config["rank"], config["edge"], config["ladder"])
    if payload["features"] != want:
        raise WeightsError(f"{path}: features {payload['features']} do not match this code's "
                           f"{want}")
    return payload


CONV_KEYS = ("weight", "bias")
BATCH_NORM_KEYS = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")


def deepened(config, state_dict, depth):
    """Return (config, state_dict) of the same network with depth 3x3 layers, computing the
    same function in eval mode (Net2DeeperNet, Chen et al. 2016), so that a trained net can
    grow and keep training from its accuracy rather than from scratch.

    Each new block (conv, ReLU, batch-norm) goes after an existing block and undoes that
    block's batch-norm in its conv (per-channel scale and bias, from the running statistics):
    the conv gives back the block's ReLU output, which the ReLU leaves unchanged since it is
    not negative, and the new batch-norm, a copy of the old one, gives the old output again.
    The new kernels have only a centre tap, so symmetric weight tying leaves them as they are.
    ValueError when depth is below the network's, or when first_width differs from width.
    """
    old_depth = config["depth"]
    if depth < old_depth:
        raise ValueError(f"cannot deepen a {old_depth}-layer net to {depth} layers")
    if depth > old_depth and config["first_width"] != config["width"]:
        raise ValueError("deepening needs first_width == width")
    blocks = [({name: state_dict[f"trunk.{3 * i}.{name}"] for name in CONV_KEYS},
               {name: state_dict[f"trunk.{3 * i + 2}.{name}"] for name in BATCH_NORM_KEYS})
              for i in range(old_depth + 1)]
    added = depth - old_depth
    # Spread the new blocks evenly over the trunk, each after an existing block, none before
    # the first (where the rule rounds the first of many new blocks).
    after = [max(0, round((k + 1) * (old_depth + 1) / (added + 1)) - 1) for k in range(added)]
    grown = []
    for i, block in enumerate(blocks):
        grown.append(block)
        grown.extend(_identity_block(block[1]) for _ in range(after.count(i)))
    new_state = {k: v for k, v in state_dict.items() if not k.startswith("trunk.")}
    for i, (conv, batch_norm) in enumerate(grown):
        new_state.update({f"trunk.{3 * i}.{name}": value for name, value in conv.items()})
        new_state.update({f"trunk.{3 * i + 2}.{name}": value
                          for name, value in batch_norm.items()})
    return {**config, "depth": depth}, new_state


def with_value_ownership(config, state_dict):
    """Return (config, state_dict) of the same network whose value head also predicts
    ownership (config value_ownership) and computes the same value: the head's weights are
    kept, the new margin input of its hidden layer starts with zero weights, and the
    ownership conv (value.ownership.*) is left out of state_dict, for a fresh start.
    ValueError when the network has no value head or already has the ownership."""
    if not config.get("value") or config.get("value_ownership"):
        raise ValueError("needs a value head without ownership")
    weight = state_dict["value.hidden.weight"]
    state = dict(state_dict)
    state["value.hidden.weight"] = torch.cat([weight, weight.new_zeros(weight.shape[0], 1)], 1)
    return {**config, "value_ownership": True}, state


def with_ladder_planes(config, state_dict):
    """Return (config, state_dict) of the same network reading the two ladder planes too
    (config ladder): the first conv gains their input channels with zero weights, so that the
    grown network computes what the old one did and training goes on from it.
    ValueError when the network already reads them."""
    if config.get("ladder"):
        raise ValueError("the network already reads the ladder planes")
    weight = state_dict["trunk.0.weight"]
    out, _, k, _ = weight.shape
    state = dict(state_dict)
    state["trunk.0.weight"] = torch.cat(
        [weight, weight.new_zeros(out, feat.LADDER_PLANES, k, k)], 1)
    return {**config, "ladder": True}, state


def _identity_block(batch_norm):
    """Return (conv, batch-norm) tensors of a block that maps the output of a block whose
    batch-norm is batch_norm to itself (in eval mode); see deepened."""
    std = torch.sqrt(batch_norm["running_var"] + BATCH_NORM_EPS)
    gamma, beta, mean = batch_norm["weight"], batch_norm["bias"], batch_norm["running_mean"]
    scale = std / gamma
    width = len(gamma)
    weight = torch.zeros(width, width, 3, 3, dtype=gamma.dtype)
    weight[torch.arange(width), torch.arange(width), 1, 1] = scale
    conv = {"weight": weight, "bias": mean - beta * scale}
    return conv, {name: value.clone() for name, value in batch_norm.items()}


SPLITS = ("even", "random")


def widened(config, state_dict, width, seed=0, split="even"):
    """Return (config, state_dict) of the same network with `width` channels in every trunk
    and value-tower layer (first_width and width both become `width`), computing the same
    function in eval mode (Net2WiderNet, Chen et al. 2016).

    Each new channel of a block (conv, ReLU, batch-norm) copies a randomly chosen existing
    channel of that block: its conv weights and bias, its batch-norm's parameters and running
    statistics, so it outputs exactly what that channel does. The layers that read the block
    (the next block; after the trunk the move and ownership convs and the value head's first
    conv) share the channel's incoming weight among the channel and its copies. split='even'
    divides it by their number (the paper's rule); split='random' gives each copy a random
    share per output channel, summing to the whole, which computes the same, and lets
    training tell the copies apart: under even shares they get the same gradients and stay
    copies forever. The choice of channels and shares is seeded by seed. Copies and shares
    keep symmetric weight tying intact. ValueError when width is below a layer's width or
    split is unknown.
    """
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    widest = max(config["first_width"], config["width"])
    if width < widest:
        raise ValueError(f"cannot narrow a net of width {widest} to {width}")
    generator = torch.Generator().manual_seed(seed)
    state = dict(state_dict)
    trunk = [(f"trunk.{3 * i}", f"trunk.{3 * i + 2}") for i in range(config["depth"] + 1)]
    tower = [(f"value.tower.{3 * i}", f"value.tower.{3 * i + 2}")
             for i in range(config.get("value_convs", 0))] if config.get("value") else []
    readers_of_trunk = ["policy"] + ["ownership"] * bool(config["ownership"])
    value_readers = ["value.conv"] + ["value.ownership"] * bool(config.get("value_ownership"))
    if config.get("value"):
        readers_of_trunk += [tower[0][0]] if tower else value_readers
    blocks = [(block, [trunk[i + 1][0]] if i + 1 < len(trunk) else readers_of_trunk)
              for i, block in enumerate(trunk)]
    blocks += [(block, [tower[i + 1][0]] if i + 1 < len(tower) else value_readers)
               for i, block in enumerate(tower)]
    for (conv, batch_norm), readers in blocks:
        old = state[f"{conv}.weight"].shape[0]
        source = torch.cat([torch.arange(old),
                            torch.randint(old, (width - old,), generator=generator)])
        for name in CONV_KEYS:
            state[f"{conv}.{name}"] = state[f"{conv}.{name}"][source].clone()
        for name in BATCH_NORM_KEYS[:-1]:   # num_batches_tracked is one count for all
            state[f"{batch_norm}.{name}"] = state[f"{batch_norm}.{name}"][source].clone()
        for reader in readers:
            weight = state[f"{reader}.weight"]
            state[f"{reader}.weight"] = weight[:, source] * _shares(
                source, old, weight.shape[0], split, generator).to(weight.dtype)[:, :, None, None]
    return {**config, "first_width": width, "width": width}, state


def _shares(source, old, outputs, split, generator):
    """Return float [outputs, len(source)]: each new channel's share of the incoming weight of
    the old channel it copies (source[j]), the shares of one old channel summing to 1 for
    every output; see widened."""
    if split == "even":
        weights = torch.ones(outputs, len(source), dtype=torch.float64)
    else:
        weights = torch.rand(outputs, len(source), generator=generator, dtype=torch.float64) + 0.5
    totals = torch.zeros(outputs, old, dtype=torch.float64).index_add_(1, source, weights)
    return weights / totals[:, source]


def without_subnormals(state_dict):
    """Return state_dict with every subnormal float (nonzero, below float32's smallest normal
    number) set to 0. Training on a CPU leaves some weights and batch-norm statistics there
    (an Adam step or weight decay shrinking them); they mean nothing numerically, but a CPU
    multiplies them about a hundred times slower than normal numbers: a value head with
    847 of them evaluated at a sixth of its speed, and the search expanded a fifth of its
    leaves with the network."""
    out = {}
    for key, tensor in state_dict.items():
        if tensor.is_floating_point():
            tiny = torch.finfo(tensor.dtype).tiny
            tensor = torch.where(tensor.abs() < tiny, torch.zeros_like(tensor), tensor)
        out[key] = tensor
    return out


def load_model(path, device="cpu"):
    """Return (PolicyNet in eval mode on device, payload meta); WeightsError on a bad file.
    Subnormal numbers in the file are read as 0 (without_subnormals)."""
    payload = read_weights(path)
    model = PolicyNet(payload["config"])
    try:
        model.load_state_dict(without_subnormals(payload["state_dict"]), strict=True)
    except RuntimeError as e:
        raise WeightsError(f"{path}: weights do not match config {payload['config']}: {e}") from e
    model.to(resolve_device(device)).eval()
    return model, payload.get("meta", {})


def resolve_device(device="auto"):
    """Return a torch.device for 'auto', 'cpu' or 'cuda[:i]'; ValueError if cuda is missing."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("CUDA requested but not available")
    return dev


def bf16_supported(device):
    """Return True where bf16 autocast is fast: CUDA with bf16, CPUs with AMX or AVX512-BF16."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported()


# Evaluator ------------------------------------------------------------------------------

def resolve_backend(backend, device, bf16):
    """Return 'torch' or 'onnx' (nets.onnx_net) for backend 'auto', 'torch' or 'onnx' on a
    resolved device, with bf16 autocast on or off. auto takes ONNX Runtime on a CPU without
    fast bf16 where onnxruntime and onnx are installed (it evaluates the search's batches
    faster there, benchmarks/RESULTS.md), torch elsewhere: on CUDA, and with bf16 on AMX or
    AVX512-BF16 CPUs, not yet measured against it. ValueError for onnx on CUDA or without
    the packages."""
    if backend not in NET_BACKENDS:
        raise ValueError(f"unknown network backend {backend!r}; choose one of "
                         f"{', '.join(NET_BACKENDS)}")
    if backend == "auto":
        return "onnx" if device.type == "cpu" and not bf16 and onnx_net.available() \
            else "torch"
    if backend == "onnx":
        if device.type != "cpu":
            raise ValueError("the onnx backend runs on the CPU; use torch with CUDA")
        if not onnx_net.available():
            raise ValueError("the onnx backend needs the onnxruntime and onnx packages "
                             "(pip install onnxruntime onnx)")
    return backend


def symmetric_forward(model, x, mask, symmetries=1, komi=None, value=True):
    """Return (log-probabilities of head 1 [B, N*N], ownership [B, N*N] or None, value [B] or
    None) for input planes x [B, C, N, N], legal masks [B, N*N] and komi [B] for the side to
    move; value=False skips the value head (PolicyNet.forward). With symmetries=8 the net
    sees all 8 rotations and reflections of each position in one batch; the probabilities
    (and ownership, value) are turned back and averaged, which makes the policy exactly
    symmetric."""
    if symmetries == 1:
        logp, own, value = model(x, mask, komi, value)
        return logp[:, 0], own, value
    n = x.shape[-1]
    batch = x.shape[0]
    xs = torch.cat([_turn(x, k) for k in range(symmetries)])
    masks = torch.cat([_turn(mask.reshape(batch, n, n), k).reshape(batch, n * n)
                       for k in range(symmetries)])
    komis = None if komi is None else komi.repeat(symmetries)
    logp, own, value = model(xs.contiguous(), masks.contiguous(), komis, value)
    probs = _turn_back(at_least_fp32(logp[:, 0]).exp(), symmetries, n)
    # Illegal points stay at probability 0 (log -inf), as with one symmetry.
    own = None if own is None else _turn_back(at_least_fp32(own), symmetries, n)
    value = None if value is None else at_least_fp32(value).reshape(symmetries, batch).mean(0)
    return probs.masked_fill(~mask.bool(), 0.0).log(), own, value


def _turn(t, k):
    """Tensor version of nets.features.transform_planes on the last two axes."""
    if k & 4:
        t = t.transpose(-1, -2)
    if k & 1:
        t = t.flip(-1)
    if k & 2:
        t = t.flip(-2)
    return t


def _turn_back(values, symmetries, n):
    """Average [S*B, N*N] outputs of S symmetric copies in the boards' own orientation."""
    copies = values.reshape(symmetries, -1, n, n)
    total = sum(_turn(copies[k], feat.inverse_symmetry(k)) for k in range(symmetries))
    return (total / symmetries).reshape(-1, n * n)


class Policy:
    """Batched evaluator for the search: engine boards in, priors over board points out."""

    def __init__(self, weights=None, device="auto", threads=None, model=None, bf16="auto",
                 symmetries=1, backend="torch"):
        """Load weights (default DEFAULT_WEIGHTS) or wrap a given model; WeightsError if bad.

        bf16: 'auto' (bf16 autocast where the hardware has fast bf16: AMX CPUs, CUDA), 'on',
        'off'. threads sets torch's (process-wide) intra-op thread count, and ONNX Runtime's
        for this network. symmetries: 1 evaluates each position as it stands; 8 averages the
        outputs over the 8 rotations and reflections (8 times the work, a steadier and more
        accurate policy). backend: 'torch', 'onnx' or 'auto' (resolve_backend)."""
        if symmetries not in (1, 8):
            raise ValueError(f"symmetries must be 1 or 8, got {symmetries}")
        self.symmetries = symmetries
        self.device = resolve_device(device)
        self.bf16 = bf16_supported(self.device) if bf16 == "auto" else bf16 == "on"
        if threads:
            torch.set_num_threads(threads)
        # Subnormal activations are as slow as subnormal weights (without_subnormals); flush
        # them to 0 in this thread and the threads it starts later, the network server's.
        torch.set_flush_denormal(True)
        if model is None:
            model, self.meta = load_model(weights or DEFAULT_WEIGHTS, self.device)
        else:
            self.meta = {}
            model = model.to(self.device).eval()
        self.backend = resolve_backend(backend, self.device, self.bf16)
        if self.backend == "onnx":
            self.bf16 = False
            model = onnx_net.OnnxNet(model, threads)
        self.model = model
        self.dtype = torch.float32
        self.rank = model.config["rank"]
        self.edge = model.config["edge"]
        self.ladder = model.config.get("ladder", False)

    def replica(self, device):
        """Return a Policy with a copy of this one's network on another device (a second GPU,
        so that the search can keep one evaluation server a device), evaluating alike."""
        net = self.model.net if self.backend == "onnx" else self.model
        twin = Policy(model=copy.deepcopy(net), device=device,
                      bf16="on" if self.bf16 else "off", symmetries=self.symmetries,
                      backend=self.backend)
        if self.dtype == torch.float64:
            twin.use_float64()
        twin.meta = self.meta
        return twin

    def use_float64(self):
        """Evaluate in float64 from here on (bf16 off), rounding only the outputs to float32.
        For games that must replay alike on every CPU: float32 convolutions sum in an order
        that depends on the vector unit (AVX2, AVX-512), and differences of one unit in the
        last place flip near-ties in the search; in float64 they stay below float32's
        rounding."""
        if self.backend != "torch":
            raise ValueError("float64 evaluation needs the torch backend")
        self.model = self.model.double()
        self.dtype = torch.float64
        self.bf16 = False

    @property
    def has_value(self):
        """Whether the net has a value head."""
        return self.model.value is not None

    @torch.inference_mode()
    def evaluate(self, boards, colors=None, ownership=False, komi=0.0, value=False):
        """Return priors float32 [B, N*N] (index y*N+x, 0 on illegal points, rows sum to 1);
        with ownership=True also ownership float32 [B, N*N] in [-1, 1] for the side to move
        (None if the net has no ownership head), with value=True also the value float32 [B]
        in [-1, 1] for the side to move under komi (None without a value head), in that
        order. colors default to each board's TO_PLAY."""
        if colors is None:
            colors = [int(b.info[bd.TO_PLAY]) for b in boards]
        x = feat.extract(boards, colors, self.rank, self.edge, ladder=self.ladder)
        mask = feat.legal_masks(boards, colors)
        empty = ~mask.any(axis=1)
        mask[empty] = True  # no legal point: avoid NaN; callers pass in that case
        xt = torch.from_numpy(x).to(self.device, self.dtype)
        mt = torch.from_numpy(mask).to(self.device)
        kt = torch.from_numpy(komi_for(colors, komi)).to(self.device)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.bf16):
            logp, own, val = symmetric_forward(
                self.model, xt, mt, self.symmetries, kt,
                value or (ownership and self.model.config.get("value_ownership", False)))
        priors = logp.exp().float().cpu().numpy()
        priors[empty] = 0.0
        out = [priors]
        if ownership:
            out.append(None if own is None else own.float().cpu().numpy())
        if value:
            out.append(None if val is None else val.float().cpu().numpy())
        return out[0] if len(out) == 1 else tuple(out)

    def point_priors(self, boards, colors=None):
        """Return float32 [B, S] priors indexed by engine point (0 off the board)."""
        return self.point_evaluate(boards, colors, value=False)[0]

    def point_evaluate(self, boards, colors=None, komi=0.0, value=True):
        """Return (priors float32 [B, S] indexed by engine point, 0 off the board; values
        float32 [B] for the side to move under komi, or None without a value head or with
        value=False, which skips the head)."""
        priors, values = self.evaluate(boards, colors, komi=komi, value=True) if value \
            else (self.evaluate(boards, colors, komi=komi), None)
        n = int(boards[0].info[bd.SIZE])
        out = np.zeros((len(boards), (n + 2) ** 2), np.float32)
        out[:, feat.index_to_point(np.arange(n * n), n)] = priors
        return out, values
