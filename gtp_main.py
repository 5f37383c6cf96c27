"""darkgo: a darkforest-style Go engine speaking GTP on stdin/stdout.

    python gtp_main.py --rollouts 5000
    darkgo --rollouts 5000          (the same, as installed by pip install -e .)
    darkgo --warm-up                (compile the jitted core into its cache, then exit)
    darkgo --config my.cfg --set puct_c=2    (search settings: engine.config, docs/example.cfg)

The command line keeps the choices a user makes per run; every search knob is a config key.
Logs go to stderr (or --log-file), never to stdout, which belongs to GTP.
"""
import argparse
import logging
import math
import os
import secrets
import sys
import threading
from dataclasses import replace

from engine import board as bd
from engine import config as cf
from engine.gtp import VERSION, GtpEngine, run_gtp
from engine.player import Player, PlayerConfig
from engine.search_config import SearchConfig
from engine.shapes import DEFAULT_SHAPES, cached_model
from engine.warmup import Warmup
from nets import DEFAULT_WEIGHTS, NET_BACKENDS, POLICY_ONLY_WEIGHTS

ROOT = os.path.dirname(os.path.abspath(__file__))
# A tree's edge slots per node slot (the config key max_nodes sets both pools).
EDGES_PER_NODE = 20


def positive_int(text):
    """argparse type: an integer >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def auto_or_count(text):
    """argparse type: 'auto' or an integer >= 1."""
    if text != "auto" and not (text.strip().isdecimal() and int(text) >= 1):
        raise argparse.ArgumentTypeError(f"must be 'auto' or an integer >= 1, got {text!r}")
    return text if text == "auto" else int(text)


def board_size(text):
    """argparse type: a board size GTP allows (2..25)."""
    value = int(text)
    if not bd.MIN_SIZE <= value <= bd.MAX_SIZE:
        raise argparse.ArgumentTypeError(f"board size must be {bd.MIN_SIZE}..{bd.MAX_SIZE}")
    return value


def fraction(text):
    """argparse type: a float in [0, 1]."""
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def non_negative(text):
    """argparse type: a float >= 0."""
    value = float(text)
    if not value >= 0.0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def setting(text):
    """argparse type: a --set KEY=VALUE, returned as (key, value) (engine.config)."""
    try:
        return cf.parse_setting(text)
    except cf.ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def version_text(text):
    """argparse type: a one-line, non-empty answer for GTP 'version'."""
    if not text.strip() or any(ord(c) < 32 or c == "\x7f" for c in text):
        raise argparse.ArgumentTypeError("must be one line of printable text")
    return text.strip()


def build_parser():
    """Return the command-line parser; every flag is documented in --help."""
    p = argparse.ArgumentParser(
        description="darkgo: a Go engine (numba rules core, multithreaded UCT) speaking GTP "
                    "version 2 on stdin/stdout.")
    p.add_argument("--rollouts", type=positive_int, default=5000,
                   help="playouts per move (time controls can only shorten a move); default 5000")
    p.add_argument("--threads", type=auto_or_count, default="auto", metavar="auto|N",
                   help="search threads running playouts in parallel; 'auto': one per CPU "
                        "this process may use (its CPU affinity, capped by a cgroup CPU "
                        "quota), half of them with the network on the CPU, all of them with "
                        "it on a GPU. With the network on the CPU it gets the CPUs the "
                        "search threads leave, at least 1 (with --policy-only, all of them). "
                        "Moves repeat under --seed only with --threads 1; default auto")
    p.add_argument("--seed", type=int, default=None,
                   help="random seed: the same seed, flags and commands give the same moves "
                        "with --threads 1, with the network only under --deterministic (else "
                        "leaves are expanded whenever the evaluation thread answers, so the "
                        "tree depends on timing); default: a fresh seed every run (logged)")
    p.add_argument("--komi", type=float, default=7.5, help="initial komi; default 7.5")
    p.add_argument("--boardsize", type=board_size, default=19,
                   help="initial board size, 2..25; default 19")
    p.add_argument("--rules", choices=("default", "strict"), default="default",
                   help="'default': an opponent's move that only repeats an earlier position "
                        "is accepted with a warning; 'strict': refused as an illegal move "
                        "(positional superko), under Chinese rules (the default and kgs-rules "
                        "chinese; under KGS's aga, new_zealand and japanese the server judges). "
                        "Our own moves never repeat a position.")
    p.add_argument("--weights", default=None,
                   help="network weights file; default: the shipped "
                        f"{os.path.relpath(DEFAULT_WEIGHTS, ROOT)} for the search (it has a "
                        f"value head), {os.path.relpath(POLICY_ONLY_WEIGHTS, ROOT)} (deeper, "
                        "slower) with --policy-only")
    p.add_argument("--net", choices=("auto", "none"), default="auto",
                   help="'auto': use the network when a weights file is present; 'none': "
                        "search with playouts alone")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where the network runs: 'auto' takes CUDA when torch sees a GPU; on "
                        "CUDA each GPU gets a copy of the network and its own evaluation "
                        "server")
    p.add_argument("--net-backend", choices=NET_BACKENDS, default="auto",
                   help="what runs the network: 'auto' takes ONNX Runtime on a CPU without "
                        "fast bf16 where onnxruntime is installed (faster there), torch "
                        "elsewhere; 'torch'; 'onnx' (CPU only)")
    p.add_argument("--policy-only", action="store_true",
                   help="play the network's best legal move without search (needs weights); "
                        "pass when the opponent passed and passing does not lose, resign "
                        "when hopeless")
    p.add_argument("--resign-threshold", type=fraction, default=0.1,
                   help="resign when the best move's win rate is below this; 0 never resigns; "
                        "default 0.1")
    p.add_argument("--deterministic", action="store_true",
                   help="with the network, evaluate each new leaf on its search thread instead "
                        "of the batching server's: slower, but with --threads 1 and --seed the "
                        "same commands give the same moves")
    p.add_argument("--lag-buffer", type=non_negative, default=1.0,
                   help="seconds kept back from every timed move for network lag; default 1.0")
    p.add_argument("--config", default=None, metavar="FILE",
                   help="search settings, one 'key = value' a line, '#' for comments "
                        "(every key, its default and why: docs/example.cfg); an unknown key "
                        "or a bad value stops the engine at start-up")
    p.add_argument("--set", type=setting, action="append", default=[], metavar="KEY=VALUE",
                   help="one search setting, as in --config's file (which it overrides); "
                        "repeatable")
    p.add_argument("--override-version", type=version_text, default=None, metavar="TEXT",
                   help="answer GTP 'version' with TEXT instead of darkgo's own version "
                        "(name stays darkgo), as KataGo's -override-version: Lizzie reads "
                        "the answer as a Leela Zero version and shows a pop-up below 0.15, "
                        "so '--override-version 0.15' starts it quietly")
    p.add_argument("--kgs-chat", action="store_true",
                   help="list kgs-chat among the commands, so that kgsGtp passes chat to the "
                        "engine (kgsGtp 3.5.11; later kgsGtp versions crash on an engine that "
                        "lists it); without it kgs-chat is answered but not listed")
    p.add_argument("--ponder", action="store_true",
                   help="keep searching on the opponent's time after our move, until the next "
                        "command arrives or the tree fills 45%% of its max_nodes pools (past "
                        "half, the next move would not reuse it)")
    p.add_argument("--warm-up", action="store_true",
                   help="compile the jitted core for every kind of move (search with and "
                        "without the network, network moves, scoring) into its on-disk cache, "
                        "then exit: run once after an install or an update, so that the first "
                        "game starts at full speed. Without it the engine compiles in the "
                        "background from start-up, answering setup commands meanwhile; a timed "
                        "genmove that comes before that is done gets a move without search")
    p.add_argument("--log-file", default=None,
                   help="write the log here instead of stderr")
    p.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info",
                   help="log detail; default info")
    return p


def setup_logging(path, level):
    """Send log records to stderr or to the file at path; OSError when the file cannot be
    opened or written."""
    handler = logging.FileHandler(path, encoding="utf-8", errors="backslashreplace") if path else \
        logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    if path:    # a full device (/dev/full) opens but refuses writes: fail now, not per record
        opened = logging.LogRecord("gtp_main", logging.INFO, __file__, 0, "log opened", None, None)
        handler.stream.write(handler.format(opened) + "\n")
        handler.stream.flush()
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def _cgroup_folders(root, path):
    """Return the folder of cgroup path under root and those of its ancestors, deepest first
    (root alone for a path that climbs out with '..', as seen from another namespace)."""
    parts = [part for part in path.split("/") if part]
    if ".." in parts:
        return [root]
    return [os.path.join(root, *parts[:n]) for n in range(len(parts), -1, -1)]


def _folder_cpu_quota(folder):
    """Return the CPU quota set in one cgroup folder, in CPUs (cgroup v2's cpu.max, else v1's
    cpu.cfs_quota_us over cpu.cfs_period_us), or None for none or an unreadable one."""
    try:
        with open(os.path.join(folder, "cpu.max")) as f:
            quota, period = f.read().split()[:2]
        return None if quota == "max" or int(period) <= 0 else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(folder, "cpu.cfs_quota_us")) as f:
            quota = int(f.read())
        with open(os.path.join(folder, "cpu.cfs_period_us")) as f:
            period = int(f.read())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def cgroup_cpu_quota(root="/sys/fs/cgroup", membership="/proc/self/cgroup"):
    """Return the smallest CPU quota, in CPUs, on this process's cgroup or its ancestors
    (cgroup v2, or v1's cpu controller); None where none is set or none can be read."""
    try:
        with open(membership) as f:
            lines = f.read().splitlines()
    except (OSError, ValueError):     # ValueError: a path that is not text in our locale
        return None
    quotas = []
    for line in lines:
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and not controllers:
            mounts = [root]
        elif "cpu" in controllers.split(","):
            mounts = [os.path.join(root, controllers), os.path.join(root, "cpu")]
        else:
            continue
        for mount in mounts:
            quotas += [q for q in map(_folder_cpu_quota, _cgroup_folders(mount, path))
                       if q is not None]
    return min(quotas, default=None)


def usable_cpus(root="/sys/fs/cgroup", membership="/proc/self/cgroup"):
    """Return how many CPUs this process may use, at least 1: those of its CPU affinity mask
    (os.cpu_count() where there is none), or fewer under a cgroup CPU quota (rounded up, as
    a quota of 1.5 CPUs keeps two threads busy most of the time)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    quota = cgroup_cpu_quota(root, membership)
    if quota is not None:
        cpus = min(cpus, math.ceil(quota))
    return max(1, cpus)


def split_threads(threads, cpus, policy_only=False, network=False, gpu=False):
    """Return (search threads, network threads) for --threads (an int or 'auto') on cpus
    usable CPUs. 'auto' runs one search thread per CPU without the network, and half of them
    (at least 1) with it on the CPU: the network server's thread is busy too, and at a fixed
    playout budget two search threads with one network thread on 2 CPUs won 3 of 10 games
    against one search thread (benchmarks/history/). The network's intra-op threads (torch's
    or ONNX Runtime's) take the CPUs the search threads leave, at least 1, and all of them
    with policy_only (no search). With the network on a GPU (gpu=True) its server's thread
    waits on the device, not on a core, so 'auto' gives every CPU to the search and the
    network one thread."""
    if threads != "auto":
        search = threads
    elif network and not policy_only and not gpu:
        search = max(1, cpus // 2)
    else:
        search = cpus
    if policy_only:
        return search, cpus
    return search, 1 if network and gpu else max(1, cpus - search)


def quiet_openmp():
    """Keep torch's OpenMP threads from busy-waiting, which starves the search threads on a
    small machine; OpenMP reads the setting once, when torch is first imported."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def network_on_gpu(args):
    """Whether the flags put a network on CUDA (--device cuda, or auto where torch sees a
    GPU); torch is imported only when a network is asked for."""
    if args.net == "none" or args.device == "cpu":
        return False
    if args.device == "cuda":
        return True
    quiet_openmp()
    import torch
    return torch.cuda.is_available()


def thread_plan(args):
    """Return (search threads, network threads, usable CPUs) for parsed arguments."""
    cpus = usable_cpus()
    return (*split_threads(args.threads, cpus, args.policy_only, args.net != "none",
                           network_on_gpu(args)), cpus)


def log_thread_plan(args, evaluator):
    """Log the thread counts the flags and the machine give, and what they cost in
    repeatability."""
    log = logging.getLogger("gtp_main")
    search, network, cpus = thread_plan(args)
    how = f"auto: {cpus} usable CPUs" if args.threads == "auto" else \
        f"--threads {args.threads}; {cpus} usable CPUs"
    if args.policy_only:
        log.info("network threads %d (policy only; %d usable CPUs)", network, cpus)
        return
    log.info("search threads %d%s (%s)", search,
             "" if evaluator is None else f", network threads {network} on {evaluator.backend}",
             how)
    if search > cpus:
        log.warning("%d search threads on %d usable CPUs: more threads than CPUs", search,
                    cpus)
    if args.seed is not None and search > 1:
        log.info("--seed with %d search threads: moves depend on thread timing; --threads 1 "
                 "repeats them", search)


def settings(args):
    """Return every config key's value for parsed arguments: its default, else --config's
    file's, else the last --set's (engine.config.load); ConfigError, a ValueError naming the
    file, line and key, for a bad file."""
    return cf.load(args.config, args.set)


def check_network_flags(args):
    """Raise ValueError for flags and keys that need the network together with --net none."""
    if args.net == "none":
        if args.policy_only:
            raise ValueError("--policy-only needs the network; drop --net none")
        if settings(args)["symmetries"] != cf.AUTO:
            raise ValueError("symmetries sets how the network is evaluated; drop --net none")
        if uses_value(args):
            raise ValueError("value_weight needs the network's value head; drop --net none")


def uses_value(args):
    """Whether the settings ask the search for the network's value explicitly."""
    return settings(args)["value_weight"] not in (cf.AUTO, 0.0)


def value_weight(args, evaluator):
    """Return the value's share in the search's win rates: the value_weight key when set,
    else (auto) NET_VALUE_WEIGHT with an evaluator whose net has a value head and 0
    without one."""
    weight = settings(args)["value_weight"]
    if weight != cf.AUTO:
        return weight
    searching_with_value = searches_with_network(args, evaluator) and evaluator.has_value
    return cf.NET_VALUE_WEIGHT if searching_with_value else 0.0


def searches_with_network(args, evaluator):
    """Whether moves come from a search that reads the evaluator (not the bare network)."""
    return evaluator is not None and not args.policy_only


def log_value_mix(search, evaluator, args):
    """Log how the search uses the network's value head, so a log tells which mix played."""
    if not searches_with_network(args, evaluator):
        return
    log = logging.getLogger("gtp_main")
    if not evaluator.has_value:
        log.info("network value: none in these weights; win rates from the playouts alone")
    elif search.value_weight > 0:
        until = f" until move {search.value_until}" if search.value_until else ""
        log.info("network value: %.2f of each win rate%s", search.value_weight, until)
    else:
        log.info("network value: not mixed into win rates (value_weight 0)")


def load_evaluator(args, bf16="auto"):
    """Return the network evaluator the flags ask for, or None to search without one. bf16 is
    nets.model.Policy's ('auto', 'on' or 'off').

    Raises ValueError with a clear message for a missing or unusable weights file that was
    asked for explicitly; with --net auto and no --weights, a missing default file only means
    no network.
    """
    check_network_flags(args)
    if args.net == "none":
        return None
    quiet_openmp()
    from nets.model import Policy, WeightsError
    path = args.weights or (POLICY_ONLY_WEIGHTS if args.policy_only else DEFAULT_WEIGHTS)
    if args.weights is None and not os.path.exists(path) and not args.policy_only:
        logging.getLogger("gtp_main").warning("no weights at %s: searching without a network",
                                              path)
        return None
    threads = thread_plan(args)[1]
    try:
        symmetries = settings(args)["symmetries"]
        if symmetries == cf.AUTO:
            symmetries = 8 if args.policy_only else 1
        policy = Policy(path, device=args.device, threads=threads, symmetries=symmetries,
                        bf16=bf16, backend=args.net_backend)
    except (WeightsError, OSError, RuntimeError) as exc:
        raise ValueError(f"cannot use weights {path}: {exc}") from None
    if uses_value(args) and not args.policy_only and not policy.has_value:
        raise ValueError(f"value_weight needs weights with a value head; {path} has none "
                         f"({os.path.relpath(DEFAULT_WEIGHTS, ROOT)} has one)")
    return policy


def shapes_path(args):
    """Return the shape model file the settings ask for ("" for none): raise ValueError for
    one named by the shapes key that cannot be read; auto without the shipped file means none.
    The search reads it only when it runs without the network (--net none, or no weights
    file): main reads it then, and this reads a file named or the shipped one under --net
    none, so that a bad one stops the engine before GTP starts."""
    values = settings(args)
    shapes = values["shapes"]
    if shapes == "none" or values["shape_eqex"] == 0:
        return ""
    path = DEFAULT_SHAPES if shapes == cf.AUTO else shapes
    if shapes == cf.AUTO and not os.path.exists(path):
        return ""
    if shapes != cf.AUTO or args.net == "none":
        cached_model(path)
    return path


def player_config(args, evaluator=None):
    """Return the PlayerConfig (search settings included) that parsed arguments and their
    config keys ask for, searching with the evaluator given (value_weight's default depends on
    its net)."""
    seed = args.seed if args.seed is not None else secrets.randbelow(1 << 31)
    logging.getLogger("gtp_main").info("random seed %d", seed)
    values = settings(args)
    keys = dict(cf.owned_by(values, "search"), value_weight=value_weight(args, evaluator),
                shapes=shapes_path(args))
    search = SearchConfig(threads=thread_plan(args)[0], seed=seed,
                          deterministic=args.deterministic,
                          max_edges=values["max_nodes"] * EDGES_PER_NODE, **keys)
    return PlayerConfig(rollouts=args.rollouts, resign_threshold=args.resign_threshold,
                        lag_buffer=args.lag_buffer, policy_only=args.policy_only, search=search,
                        **cf.owned_by(values, "player"))


def device_replicas(args, evaluator):
    """Return copies of the evaluator's network for the further GPUs torch sees, one a device,
    so that the search keeps an evaluation server on each (darkforest spread its evaluations
    over 4 GPUs), as many as the search threads can feed (thread i feeds server i modulo
    their number); none on the CPU, with one GPU, or under --policy-only (no search)."""
    if evaluator is None or args.policy_only or evaluator.device.type != "cuda":
        return []
    import torch
    devices = min(torch.cuda.device_count(), thread_plan(args)[0])
    replicas = [evaluator.replica(f"cuda:{index}") for index in range(1, devices)]
    logging.getLogger("gtp_main").info("network on %d GPUs, an evaluation server each",
                                       1 + len(replicas))
    return replicas


def build_engine(args, evaluator=None, config=None, replicas=()):
    """Return a GtpEngine configured from parsed arguments, an optional evaluator (with its
    replicas on further devices) and an optional PlayerConfig (by default
    player_config(args))."""
    player = Player(config or player_config(args, evaluator), args.boardsize, evaluator,
                    replicas)
    if args.override_version is not None:
        logging.getLogger("gtp_main").info("answering 'version' with %r (--override-version)",
                                           args.override_version)
    return GtpEngine(player, size=args.boardsize, komi=args.komi,
                     strict_superko=args.rules == "strict", ponder=args.ponder,
                     version=args.override_version or VERSION, kgs_chat=args.kgs_chat)


def hold_pondering_for(engine, warmup):
    """Keep the engine from pondering until the warm-up is finished, as a ponder search would
    compile on the GTP loop's time (the loop waits for it to stop before it answers the next
    command); return the thread that turns pondering back on, or None without --ponder."""
    if not engine.ponder:
        return None
    engine.ponder = False

    def resume():
        warmup.wait()
        engine.ponder = True
    thread = threading.Thread(target=resume, name="ponder-after-warmup", daemon=True)
    thread.start()
    return thread


def compiler_command(args):
    """Return the command of a process that compiles what these flags will run into the
    cache (the background warm-up's compiler process): this program's --warm-up, with the
    network on the CPU (compiled code does not depend on the device)."""
    command = [sys.executable, os.path.abspath(__file__), "--warm-up", "--threads", "1",
               "--device", "cpu", "--log-level", "warning"]
    shapes = shapes_path(args)
    command += ["--set", f"shapes={os.path.abspath(shapes) if shapes else 'none'}"]
    if args.net == "none":
        command += ["--net", "none"]
    elif args.weights is not None:
        command += ["--weights", os.path.abspath(args.weights)]
    return command


def warm_up(config, evaluator):
    """Compile every kind of move into the on-disk cache: search with the network (when
    there is one) and without, network moves, scoring; return the exit status (1 if a stage
    failed)."""
    config = replace(config, policy_only=False)
    runs = [Warmup(config).use(evaluator)] + ([Warmup(config).use(None)] if evaluator else [])
    seconds = sum(w.run() for w in runs)
    if any(w.failed for w in runs):
        return 1
    logging.getLogger("gtp_main").info("warm-up done in %.1f s; compiled code cached in %s",
                                       seconds, os.environ.get("NUMBA_CACHE_DIR"))
    return 0


def main(argv=None):
    """Parse flags and serve GTP until quit or end of input; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        setup_logging(args.log_file, args.log_level)
    except OSError as exc:
        print(f"{parser.prog}: cannot open log file: {exc}", file=sys.stderr)
        return 2
    warmup = None
    try:
        check_network_flags(args)
        config = player_config(args)
        # Compiling starts at once, in the background, while torch and the weights load:
        # the warm-up's first stage needs no network.
        warmup = None if args.warm_up else Warmup(config, compiler_command(args)).start()
        evaluator = load_evaluator(args)
        config = replace(config, search=replace(config.search,
                                                value_weight=value_weight(args, evaluator)))
        log_value_mix(config.search, evaluator, args)
        if evaluator is None and config.search.shapes:
            cached_model(config.search.shapes)
    except ValueError as exc:
        if warmup is not None:
            warmup.stop_compiler()
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return 2
    log_thread_plan(args, evaluator)
    if args.warm_up:
        return warm_up(config, evaluator)
    engine = build_engine(args, evaluator, config, device_replicas(args, evaluator))
    engine.player.warmup = warmup.use(evaluator)
    hold_pondering_for(engine, warmup)
    run_gtp(engine)
    return 0


if __name__ == "__main__":
    sys.exit(main())
