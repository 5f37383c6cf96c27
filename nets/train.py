"""Training CLI: streaming SGF samples -> PolicyNet, with progress, validation, checkpoints, resume.

    python -m nets.train --data DIR_OR_ARCHIVE... --config cpu --out weights/cpu.pt
    python -m nets.train --data packs/tygem9d.pack/tygem9d-2010.zip ... (a pack: nets.pack)

Optimiser: SGD with Nesterov momentum 0.9 and weight decay, lr warmed up linearly then cosine
decayed to 1% over --steps. darkforest used plain SGD (lr 0.05, divided by 5 when progress
stalls); with a fixed wall-clock budget a cosine schedule reaches a lower loss by the end of the
run than waiting for plateaus, and momentum lets batch-norm nets train at a fixed lr that is
safe. ``--schedule plateau`` gives darkforest's rule instead (lr / 5 after --patience
validations without a better validation NLL).

Files: RUN/ckpt.pt (model + optimiser + counters, every --ckpt-minutes, for --resume),
RUN/log.jsonl (one JSON object per log line / validation; nets/plot.py draws it) and --out, the
weights with the best validation NLL so far, always complete (written to a temp file and renamed).
Under torchrun (WORLD_SIZE > 1) every rank trains on its own shard of games through
DistributedDataParallel; rank 0 validates, logs and saves.
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

from nets import data as nd
from nets import features as feat
from nets import model as nm
from nets import pack as npk
from nets import pack_data as pdata


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", nargs="+", required=True, help="SGF files, directories, archives; "
                   "or a pack (nets.pack) or sources in one, PACK/SOURCE, for nets.pack_data's "
                   "batches")
    p.add_argument("--val-data", nargs="+", help="where to take validation-split games from "
                   "(default: --data); SGF inputs or pack paths, as --data")
    p.add_argument("--config", default="cpu", choices=sorted(nm.CONFIGS))
    p.add_argument("--width", type=int, help="override the config's width (and first_width); "
                   "with --init, grow the network to this width keeping what it computes")
    p.add_argument("--depth", type=int, help="override the config's number of 3x3 layers; with "
                   "--init, grow the network to this depth keeping what it computes")
    p.add_argument("--heads", type=int, help="override the number of move heads")
    p.add_argument("--symmetric", action="store_true", help="8-fold symmetric weight tying")
    p.add_argument("--ownership", action="store_true", help="train an ownership head (final "
                   "Tromp-Taylor owner; noisy since most games are resigned)")
    p.add_argument("--edge", action="store_true", help="Clark & Storkey edge-encoding plane")
    p.add_argument("--ladder", action="store_true", help="AlphaGo's two ladder planes (ladder "
                   "capture, futile ladder escape; nets.features); with --init, a net without "
                   "them gains them with zero first-layer weights, computing what it did")
    p.add_argument("--ladder-only", action="store_true", help="with --init and --ladder: train "
                   "only the ladder planes' first-layer weights, everything else (batch-norm "
                   "statistics included) left as it is and no weight decay: a start for the "
                   "zero weights the planes get")
    p.add_argument("--value", action="store_true", help="train a value head on the games' "
                   "winners (counted or resigned games); with --init it may be added to a net "
                   "that has none")
    p.add_argument("--value-ownership", action="store_true", help="with --value: the value "
                   "head also predicts each point's final owner from its own tower and reads the "
                   "sum (see nets.model); with --init, a value head that lacks it keeps its "
                   "weights and gains it")
    p.add_argument("--ownership-runs", type=int, default=0, help="ownership targets from this "
                   "many playouts of each game's last position, keeping those that end with the "
                   "recorded winner (nets.data.result_ownership); 0: the last position's "
                   "Tromp-Taylor owner")
    p.add_argument("--value-only", nargs="+", default=[], metavar="SOURCE", help="sources of "
                   "the pack (base names, such as a match record's archive) whose games teach "
                   "the value and ownership heads but not the moves: the engine's own games, "
                   "positions like those its search meets")
    p.add_argument("--value-only-repeat", type=int, default=1, help="with --value-only: how "
                   "many times each of those games comes in a pass over the training games")
    p.add_argument("--value-loss-weight", type=float, default=1.0,
                   help="weight of the value head's squared error in the loss")
    p.add_argument("--value-convs", type=int, help="3x3 blocks of the value head's own tower "
                   "(default: the config's); with --init, for a value head added by --value")
    p.add_argument("--freeze-trunk", action="store_true", help="with --init: train only the "
                   "value head on the net's trunk, whose weights and batch-norm statistics stay "
                   "as they are (the policy is left exactly as it was)")
    p.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd",
                   help="SGD with Nesterov momentum (default) or Adam")
    p.add_argument("--out", required=True, help="weights file to write (best validation loss: "
                   "head-1 NLL, plus the weighted value error with a value head)")
    p.add_argument("--run-dir", help="checkpoint and log directory (default runs/<out name>)")
    p.add_argument("--resume", action="store_true", help="continue from RUN/ckpt.pt")
    p.add_argument("--init", metavar="WEIGHTS", help="start from a weights file's network (its "
                   "config; fresh optimiser and schedule; samples counted on from its meta)")
    p.add_argument("--steps", type=int, default=100000)
    p.add_argument("--minutes", type=float, help="stop after this much training wall time "
                   "(counted across --resume) and run the cosine schedule over that time "
                   "rather than over --steps, whichever ends first: for a lease of fixed length")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--warmup", type=int, default=500)
    p.add_argument("--schedule", choices=["cosine", "plateau"], default="cosine")
    p.add_argument("--patience", type=int, default=3)
    p.add_argument("--ownership-weight", type=float, default=0.5)
    p.add_argument("--device", default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bf16", choices=["auto", "on", "off"], default="auto",
                   help="bf16 autocast (auto: on for CUDA with bf16 and CPUs with AMX / AVX512-BF16)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: leave default)")
    p.add_argument("--workers", type=int, default=1, help="data-loader worker processes")
    p.add_argument("--pool", type=int, default=256, help="games replayed side by side")
    p.add_argument("--sample-rate", type=float, default=0.1, help="share of a game's positions used")
    p.add_argument("--val-positions", type=int, default=4096)
    p.add_argument("--val-mod", type=int, default=nd.VAL_MOD,
                   help="a game is for validation when crc32(name) %% VAL_MOD == 0")
    p.add_argument("--val-minutes", type=float, default=10.0)
    p.add_argument("--ckpt-minutes", type=float, default=5.0)
    p.add_argument("--log-every", type=int, default=50)
    args = p.parse_args(argv)
    if args.value_only_repeat < 1:
        p.error("--value-only-repeat must be at least 1")
    return args


def value_only_split(args):
    """Return (the --value-only sources for training, those for validation): exits with a
    message for SGF --data or validation data made of value-only sources alone (no move to
    score). SGF validation data, or a validation pack without those sources, get none."""
    if not args.value_only:
        return (), ()
    val_data = args.val_data or args.data
    try:
        if not pdata.is_pack_input(args.data):
            sys.exit("--value-only: give --data as pack paths")
        val_sources = pdata.named_sources(val_data) if pdata.is_pack_input(val_data) else set()
    except (npk.PackError, FileNotFoundError) as e:
        sys.exit(f"--data / --val-data: {e}")
    if val_sources and val_sources <= set(args.value_only):
        sys.exit("--value-only: the validation positions would teach no moves; validate on "
                 "other sources too")
    return tuple(args.value_only), tuple(s for s in args.value_only if s in val_sources)


class Batches(torch.utils.data.IterableDataset):
    """Wraps nets.data.sample_batches (or another sampler with its arguments, such as
    nets.pack_data.pack_batches), sharding games over workers and DDP ranks."""

    def __init__(self, kwargs, rank, world, seed, sampler=nd.sample_batches):
        super().__init__()
        self.kwargs, self.rank, self.world, self.seed = kwargs, rank, world, seed
        self.sampler = sampler

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        wid, nworkers = (info.id, info.num_workers) if info else (0, 1)
        shard = (self.rank * nworkers + wid, self.world * nworkers)
        return self.sampler(**self.kwargs, shard=shard, seed=self.seed * 7919 + shard[0])


def samplers(data, val_data, kwargs):
    """Return (training sampler, validation-set function) for the --data and --val-data
    inputs: nets.data's for SGF inputs, nets.pack_data's for packs, which are loaded here
    (before data-loader workers fork, so that they share it) and checked against the
    training settings in kwargs; exits with a message for inputs that do not fit."""
    try:
        train_packed = pdata.is_pack_input(data)
        val_packed = pdata.is_pack_input(val_data)
        for paths, packed, split in ((data, train_packed, "train"),
                                     (val_data, val_packed, "val")):
            if packed:
                pack, _ = pdata.select_games(paths, split, kwargs["val_mod"])
                pdata.check_ownership(pack, kwargs["ownership"], kwargs["ownership_runs"])
        if train_packed:  # compiled here once rather than in every worker
            next(pdata.pack_batches(**dict(kwargs, batch=2, pool=2)))
    except (npk.PackError, FileNotFoundError) as e:
        sys.exit(f"--data / --val-data: {e}")
    return (pdata.pack_batches if train_packed else nd.sample_batches,
            pdata.pack_validation_set if val_packed else nd.validation_set)


def use_bf16(choice, device):
    """Return whether to autocast to bf16 on this device."""
    if choice != "auto":
        return choice == "on"
    return nm.bf16_supported(device)


def losses(model, batch, device, bf16, ownership_weight, value_weight=1.0, frozen=False):
    """Return (total loss, head-1 NLL mean, head-1 log-probs, values or None, ownership or
    None) for a batch dict; the value's and the ownership's squared errors count where their
    target is finite. frozen: only the value head computes gradients, and the loss is its
    errors alone (the ownership's too when the value head predicts it)."""
    x = batch["x"].to(device, non_blocking=True)
    x = x.contiguous(memory_format=torch.channels_last)
    mask = batch["mask"].to(device)
    targets = batch["targets"].to(device)
    komi = batch["komi"].to(device) if "komi" in batch else None
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
        if frozen:
            net = getattr(model, "module", model)
            with torch.no_grad():
                trunk = net.trunk(x)
                logp, own, _ = net.heads(trunk, mask)
            value, value_own = net.value_of(trunk, komi)
            own_trained = value_own is not None
            own = value_own if own_trained else own
        else:
            logp, own, value = model(x, mask, komi)
            own_trained = True
    valid = targets >= 0
    picked = logp.gather(2, targets.clamp(min=0).unsqueeze(2)).squeeze(2)
    # where, not a product: a row without a target reads point 0, which may be illegal
    # (log-probability -inf, and -inf * 0 is NaN).
    picked = torch.where(valid, picked, torch.zeros_like(picked))
    nll = -picked.sum(0) / valid.sum(0).clamp(min=1)
    total = nll.sum() * (0.0 if frozen else 1.0)
    if own is not None and "owner" in batch and own_trained:
        total = total + ownership_weight * _known_mse(own, batch["owner"].to(device))
    if value is not None and "value" in batch:
        total = total + value_weight * _known_mse(value, batch["value"].to(device))
    return total, nll[0], logp[:, 0], value, own


def _known_mse(prediction, target):
    """Return the mean squared error over the finite targets (0 when there are none, still
    computed from the prediction: under DistributedDataParallel a head left out of one rank's
    graph stops every rank at the next step)."""
    known = torch.isfinite(target)
    if not known.any():
        return (prediction * 0).sum()
    return F.mse_loss(prediction[known], target[known])


def value_counts(value, target):
    """Return (summed squared error, right-side-of-zero count, positions) of values against
    finite targets."""
    known = torch.isfinite(target)
    v, t = value[known].float(), target[known]
    return float(((v - t) ** 2).sum()), int(((v > 0) == (t > 0)).sum()), int(known.sum())


def accuracy_counts(logp1, targets1):
    """Return (top1 hits, top5 hits, summed NLL, positions) of head 1 for valid targets."""
    valid = targets1 >= 0
    t = targets1.clamp(min=0)
    top5 = logp1.topk(5, dim=1).indices
    hit1 = (top5[:, 0] == t) & valid
    hit5 = (top5 == t.unsqueeze(1)).any(1) & valid
    picked = logp1.gather(1, t.unsqueeze(1)).squeeze(1)
    nll = -torch.where(valid, picked, torch.zeros_like(picked))
    return int(hit1.sum()), int(hit5.sum()), float(nll.sum()), int(valid.sum())


@torch.no_grad()
def evaluate(model, batches, device, bf16):
    """Return {val_top1, val_top5, val_nll, val_positions} of head 1 on a list of batches,
    with a value head also val_value_mse and val_value_acc (share of positions whose winner
    the value's sign gives), with ownership targets and a head val_owner_mse (per point)."""
    was_training = model.training
    model.eval()
    h1 = h5 = n = 0
    nll = 0.0
    squared = right = known = 0
    owner_squared = owner_known = 0.0
    for b in batches:
        b = {k: torch.from_numpy(v) for k, v in b.items()}
        _, _, logp1, value, own = losses(model, b, device, bf16, 0.0, 0.0)
        c = accuracy_counts(logp1.float(), b["targets"][:, 0].to(device))
        h1, h5, nll, n = h1 + c[0], h5 + c[1], nll + c[2], n + c[3]
        if value is not None and "value" in b:
            v = value_counts(value, b["value"].to(device))
            squared, right, known = squared + v[0], right + v[1], known + v[2]
        if own is not None and "owner" in b:
            target = b["owner"].to(device)
            finite = torch.isfinite(target)
            owner_squared += float(((own.float() - target)[finite] ** 2).sum())
            owner_known += int(finite.sum())
    model.train(was_training)
    metrics = {"val_top1": h1 / n, "val_top5": h5 / n, "val_nll": nll / n, "val_positions": n}
    if known:
        metrics.update(val_value_mse=squared / known, val_value_acc=right / known)
    if owner_known:
        metrics["val_owner_mse"] = owner_squared / owner_known
    return metrics


def progress_of(args, step, wall):
    """Return how far the run is through its schedule, 0 to 1: by steps, or by wall seconds
    under --minutes when that is further on."""
    progress = step / max(1, args.steps)
    if args.minutes:
        progress = max(progress, wall / (60.0 * args.minutes))
    return min(1.0, progress)


def lr_at(args, step, plateau_scale, wall=0.0):
    """Return the learning rate for a step taken after `wall` seconds of training."""
    warm = min(1.0, (step + 1) / max(1, args.warmup))
    if args.schedule == "plateau":
        return args.lr * warm * plateau_scale
    progress = progress_of(args, step, wall)
    return args.lr * warm * (0.01 + 0.99 * 0.5 * (1 + math.cos(math.pi * progress)))


def fmt_time(seconds):
    seconds = int(max(0, seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def ranks_in_step(model):
    """Return whether every DDP rank holds the same parameters, compared by two checksums that
    each rank contributes (a plain and a position-weighted sum): the gradients are all-reduced,
    so ranks whose parameters differ have taken different steps."""
    import torch.distributed as dist
    params = [p.detach().double().flatten() for p in model.parameters()]
    flat = torch.cat(params)
    places = torch.arange(1, flat.numel() + 1, dtype=torch.float64, device=flat.device)
    checksum = torch.stack([flat.sum(), (flat * places).sum()])
    gathered = [torch.zeros_like(checksum) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, checksum)
    return all(torch.equal(other, gathered[0]) for other in gathered)


def main(argv=None):
    args = parse_args(argv)
    value_only, val_value_only = value_only_split(args)   # before the ranks wait on each other
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:
        import torch.distributed as dist
        backend = "nccl" if torch.cuda.is_available() and args.device != "cpu" else "gloo"
        dist.init_process_group(backend)
        if backend == "nccl":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    if args.minutes and world > 1:
        sys.exit("--minutes: ranks would stop at different steps; give --steps under torchrun")
    if args.threads:
        torch.set_num_threads(args.threads)
    # Weights that training shrinks below float32's normal range slow a CPU's arithmetic about
    # a hundredfold (nets.model.without_subnormals); flushed, they count as 0.
    torch.set_flush_denormal(True)
    device = nm.resolve_device(args.device)
    if device.type == "cuda" and world > 1:
        device = torch.device("cuda", torch.cuda.current_device())
    bf16 = use_bf16(args.bf16, device)
    torch.manual_seed(args.seed + rank)
    out_name = os.path.splitext(os.path.basename(args.out))[0]
    run_dir = args.run_dir or os.path.join("runs", out_name)
    ckpt_path = os.path.join(run_dir, "ckpt.pt")
    log_path = os.path.join(run_dir, "log.jsonl")
    main_rank = rank == 0
    if main_rank:
        os.makedirs(run_dir, exist_ok=True)

    init_name = os.path.basename(args.init) if args.init else None
    overrides = {k: v for k, v in (("width", args.width), ("depth", args.depth),
                                   ("heads", args.heads)) if v is not None}
    if args.width is not None:
        overrides["first_width"] = args.width
    for flag in ("symmetric", "ownership", "edge", "value", "value_ownership", "ladder"):
        if getattr(args, flag):
            overrides[flag] = True
    if args.value_convs is not None:
        overrides["value_convs"] = args.value_convs
    config = nm.make_config(args.config, **overrides)

    step, samples, wall, best, plateau_scale, stale = 0, 0, 0.0, float("inf"), 1.0, 0
    ckpt = None
    init = None
    if args.init and args.resume:
        sys.exit("--init and --resume exclude each other: --resume continues RUN/ckpt.pt")
    if args.init:
        try:
            init = nm.read_weights(args.init)
        except nm.WeightsError as e:
            sys.exit(f"--init: {e}")
        config = init["config"]
        samples = int(init.get("meta", {}).get("samples", 0))
        clash = {k: v for k, v in overrides.items()
                 if k not in ("depth", "width", "first_width", "value", "value_convs",
                              "value_ownership", "ladder")
                 and config[k] != v}
        if clash:
            sys.exit(f"--init: {args.init} has {({k: config[k] for k in clash})}; only --depth, "
                     "--width, --value and --ladder can change a network that training starts "
                     "from")
        if args.width is not None and (args.width, args.width) != (config["first_width"],
                                                                    config["width"]):
            # Random shares: under even ones the copies would train as one channel.
            try:
                config, init["state_dict"] = nm.widened(config, init["state_dict"], args.width,
                                                        seed=args.seed, split="random")
            except ValueError as e:
                sys.exit(f"--width with --init: {e}")
        if args.value and not config["value"]:
            config = {**config, "value": True,
                      "value_convs": overrides.get("value_convs", nm.CONFIGS["cpu"]["value_convs"])}
        elif overrides.get("value_convs", config["value_convs"]) != config["value_convs"]:
            sys.exit("--value-convs: only a value head added by --value can be shaped")
        if args.value_ownership and not config.get("value_ownership", False):
            if init["config"]["value"]:
                config, init["state_dict"] = nm.with_value_ownership(config, init["state_dict"])
            else:
                config = {**config, "value_ownership": True}
        if args.ladder and not config["ladder"]:
            config, init["state_dict"] = nm.with_ladder_planes(config, init["state_dict"])
        if args.depth is not None and args.depth != config["depth"]:
            try:
                config, init["state_dict"] = nm.deepened(config, init["state_dict"], args.depth)
            except ValueError as e:
                sys.exit(f"--depth with --init: {e}")
    if args.resume:
        if not os.path.exists(ckpt_path):
            sys.exit(f"--resume: no checkpoint at {ckpt_path}")
        ckpt = torch.load(ckpt_path, map_location="cpu", weights_only=True)
        config = ckpt["config"]
        step, samples, wall = ckpt["step"], ckpt["samples"], ckpt["wall"]
        best, plateau_scale, stale = ckpt["best"], ckpt["plateau_scale"], ckpt["stale"]
        init_name = ckpt.get("init")
    if config.get("value_ownership", False) and not config["value"]:
        sys.exit("--value-ownership: give --value too")
    if args.freeze_trunk and not ((args.init or args.resume) and config["value"]):
        sys.exit("--freeze-trunk trains a value head on an --init net: give --init and --value")

    model = nm.PolicyNet(config)
    if ckpt is not None:
        model.load_state_dict(ckpt["model"])
    elif init is not None:
        # A value head added by --value starts from its fresh initialisation.
        missing, unexpected = model.load_state_dict(init["state_dict"], strict=False)
        if unexpected or any(not k.startswith("value.") for k in missing):
            sys.exit(f"--init: {args.init} does not fit its config (missing {missing}, "
                     f"unexpected {unexpected})")
    model.to(device).to(memory_format=torch.channels_last).train()
    if args.freeze_trunk:
        for name, p in model.named_parameters():
            p.requires_grad_(name.startswith("value."))
    if args.ladder_only:
        if not (args.init and config["ladder"]):
            sys.exit("--ladder-only trains the ladder planes of an --init net: give --init and "
                     "--ladder")
        for p in model.parameters():
            p.requires_grad_(False)
        first = model.trunk[0].weight
        first.requires_grad_(True)
        other_planes = feat.num_planes(config["edge"])
        first.register_hook(lambda grad: torch.cat(
            [torch.zeros_like(grad[:, :other_planes]), grad[:, other_planes:]], 1))
    trained = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    decay = 0.0 if args.ladder_only else args.weight_decay
    groups = [{"params": [p for n, p in trained if p.ndim > 1], "weight_decay": decay},
              {"params": [p for n, p in trained if p.ndim <= 1], "weight_decay": 0.0}]
    if args.optimizer == "adam":
        opt = torch.optim.Adam(groups, lr=args.lr)
    else:
        opt = torch.optim.SGD(groups, lr=args.lr, momentum=args.momentum, nesterov=True)
    if ckpt is not None:
        opt.load_state_dict(ckpt["optimizer"])
    net = model
    if world > 1:
        net = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None)

    owner_targets = config["ownership"] or config.get("value_ownership", False)
    sample_kwargs = dict(paths=args.data, batch=args.batch, split="train", heads=config["heads"],
                         rank=config["rank"], edge=config["edge"], ownership=owner_targets,
                         value=config["value"], pool=args.pool, sample_rate=args.sample_rate,
                         val_mod=args.val_mod, ownership_runs=args.ownership_runs,
                         ladder=config.get("ladder", False))
    if value_only:
        if not config["value"]:
            sys.exit("--value-only: the network has no value head (--value)")
        sample_kwargs.update(value_only=value_only, value_only_repeat=args.value_only_repeat)
    val_kwargs = {"value_only": val_value_only} if val_value_only else {}
    sampler, validation_set = samplers(args.data, args.val_data or args.data, sample_kwargs)
    # A resumed run draws a new game order (seeded by the step) rather than replaying the
    # games it has already seen.
    dataset = Batches(sample_kwargs, rank, world, args.seed * 1000003 + step, sampler)
    loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=args.workers,
                                         persistent_workers=args.workers > 0,
                                         prefetch_factor=4 if args.workers else None)
    val = None
    if main_rank:
        val = validation_set(args.val_data or args.data, args.val_positions, config["heads"],
                             config["rank"], config["edge"], owner_targets,
                             val_mod=args.val_mod, value=config["value"],
                             ownership_runs=args.ownership_runs,
                             ladder=config.get("ladder", False), **val_kwargs)
        if not any((b["targets"][:, 0] >= 0).any() for b in val):
            sys.exit("--value-only: the validation positions drawn teach no moves; validate "
                     "on other sources too")
        log = open(log_path, "a")
        print(f"config {config} device {device} bf16 {bf16} threads "
              f"{torch.get_num_threads()} workers {args.workers} validation "
              f"{sum(len(b['x']) for b in val)} positions; starting at step {step}",
              file=sys.stderr, flush=True)

    def write_log(record):
        log.write(json.dumps(record) + "\n")
        log.flush()

    def save_checkpoint():
        state = {"config": config, "model": model.state_dict(), "optimizer": opt.state_dict(),
                 "step": step, "samples": samples, "wall": wall, "best": best,
                 "plateau_scale": plateau_scale, "stale": stale, "init": init_name}
        tmp = ckpt_path + ".tmp"
        torch.save(state, tmp)
        os.replace(tmp, ckpt_path)

    def validate():
        nonlocal best, plateau_scale, stale
        metrics = evaluate(model, val, device, bf16)
        metrics["val_loss"] = metrics["val_nll"] + args.value_loss_weight * metrics.get(
            "val_value_mse", 0.0)
        record = {"step": step, "samples": samples, "wall": round(wall, 1), **metrics}
        improved = metrics["val_loss"] < best
        if improved:
            best = metrics["val_loss"]
            stale = 0
            meta = {"step": step, "samples": samples, "wall_seconds": round(wall, 1),
                    **({"init": init_name} if init_name else {}),
                    "train_data": [os.path.basename(p.rstrip("/")) for p in args.data],
                    **({"value_only": list(value_only),
                        "value_only_repeat": args.value_only_repeat} if value_only else {}),
                    "split": f"crc32(game file name) % {args.val_mod} != 0",
                    "date": time.strftime("%Y-%m-%d %H:%M:%S"), **metrics}
            nm.save_model(model, args.out, meta)
        else:
            stale += 1
            if args.schedule == "plateau" and stale >= args.patience:
                plateau_scale /= 5.0
                stale = 0
        record["best"] = improved
        write_log(record)
        value_text = (f" value mse {metrics['val_value_mse']:.4f} acc "
                      f"{metrics['val_value_acc']:.4f}" if "val_value_mse" in metrics else "")
        print(f"\nvalidation step {step}: top1 {metrics['val_top1']:.4f} top5 "
              f"{metrics['val_top5']:.4f} nll {metrics['val_nll']:.4f}{value_text}"
              f"{' (saved ' + args.out + ')' if improved else ''}", file=sys.stderr, flush=True)

    tty = sys.stderr.isatty()
    t_last = t_start = time.time()
    wall0 = wall
    t_ckpt = t_val = t_last
    rate_samples, rate_time = 0, 0.0
    loss_sum = nll_sum = 0.0
    hits = seen = 0
    steps_window = 0
    it = iter(loader)
    while progress_of(args, step, wall) < 1.0:
        batch = next(it)
        for g in opt.param_groups:
            g["lr"] = lr_at(args, step, plateau_scale, wall)
        if args.freeze_trunk:   # batch-norm statistics of the trunk stay the trained net's
            model.eval()
            model.value.train()
        if args.ladder_only:    # and of the whole net
            model.eval()
        total, nll1, logp1, _, _ = losses(net, batch, device, bf16, args.ownership_weight,
                                       args.value_loss_weight, args.freeze_trunk)
        opt.zero_grad(set_to_none=True)
        total.backward()
        opt.step()
        step += 1
        n = len(batch["x"]) * world
        samples += n
        now = time.time()
        wall = wall0 + now - t_start
        rate_samples += n
        rate_time += now - t_last
        t_last = now
        loss_sum += float(total.detach())
        nll_sum += float(nll1.detach())
        with torch.no_grad():
            h1, _, _, cnt = accuracy_counts(logp1.detach().float(),
                                            batch["targets"][:, 0].to(device))
        hits += h1
        seen += cnt
        steps_window += 1
        if not main_rank:
            continue
        rate = rate_samples / max(rate_time, 1e-9)
        eta = (args.steps - step) * args.batch * world / max(rate, 1e-9)
        if args.minutes:
            eta = min(eta, 60.0 * args.minutes - wall)
        line = (f"step {step}/{args.steps} {100 * progress_of(args, step, wall):5.1f}% | "
                f"{rate:6.0f} samples/s"
                f" | loss {loss_sum / steps_window:.3f} nll1 {nll_sum / steps_window:.3f} top1 "
                f"{hits / max(seen, 1):.3f} | lr {opt.param_groups[0]['lr']:.4f} | elapsed "
                f"{fmt_time(wall)} ETA {fmt_time(eta)}")
        if tty:
            print("\r" + line, end="", file=sys.stderr, flush=True)
        if step % args.log_every == 0:
            if not tty:
                print(line, file=sys.stderr, flush=True)
            write_log({"step": step, "samples": samples, "wall": round(wall, 1),
                       "lr": opt.param_groups[0]["lr"], "loss": loss_sum / steps_window,
                       "nll1": nll_sum / steps_window, "top1": hits / max(seen, 1),
                       "samples_per_s": rate})
            loss_sum = nll_sum = 0.0
            hits = seen = steps_window = 0
            rate_samples, rate_time = 0, 0.0
        if now - t_val >= args.val_minutes * 60:
            validate()
            t_val = t_last = time.time()
        if now - t_ckpt >= args.ckpt_minutes * 60:
            save_checkpoint()
            t_ckpt = t_last = time.time()
    if world > 1:
        in_step = ranks_in_step(model)
        if main_rank:
            write_log({"step": step, "ranks_in_step": in_step})
            if not in_step:
                print("warning: the ranks' parameters differ at the end", file=sys.stderr)
    if main_rank:
        validate()
        save_checkpoint()
        print(f"\ndone: {step} steps, {samples} samples, {fmt_time(wall)}", file=sys.stderr)
    if world > 1:
        # Every rank waits for rank 0's last validation and save, then leaves without the
        # interpreter's teardown: with gloo on the CPU, a rank aborted in it now and then
        # (SIGABRT, 'terminate called without an active exception') after all its work was done.
        # The log is flushed line by line, and the checkpoint and weights are written whole.
        torch.distributed.barrier()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
