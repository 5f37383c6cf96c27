"""The pack: SGF games parsed once into flat arrays and stored in one compressed file, so that
training replays moves instead of parsing SGF.

    python -m nets.pack --data ARCHIVE_OR_PACK... --out packs/tygem9d.pack [--workers 2]

A pack holds what nets.data's Records hold for training, game by game in nets.data.read_games'
order: each game's name (so nets.data.split_of gives it the same split), the input it came
from (its "source", the input path's base name), the moves as uint16 move indices y * N + x
(PASS_CODE for a pass) with one colour bit each, setup stones the same way, the winner
(nets.data.winner_of), the komi, and the ownership targets: for each point the sum of the area
owner (+1 black, -1 white) over the playouts of result_ownership that the recorded winner won
and how many did (target = sum / runs, none when 0 runs agreed or the game has no winner), or
with --ownership-runs 0 the last position's Tromp-Taylor owner (runs 1). Each array is
lzma-compressed into one entry of an uncompressed .npz (or stored raw, for a pack made where
it is used: nets.lease); meta (JSON) says what each holds.

A pack path names a whole pack, or one source in it as PACK/SOURCE (packs/tygem9d.pack/
tygem9d-2011.zip), so the archives that training and validation take stay apart as they did.
The build works in units of up to UNIT_GAMES archive members, in --workers processes, each
unit written to OUT.parts/ as it is done: a build that stops is resumed by running it again.
"""
import argparse
import hashlib
import json
import lzma
import multiprocessing
import os
import shutil
import sys
import tarfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from engine import board as bd
from engine import playout as po
from nets import data as nd
from nets import features as feat

FORMAT = "darkgo-pack"
VERSION = 1
SIZE = 19
PASS_CODE = SIZE * SIZE
UNIT_GAMES = 2000
MAX_RUNS = 127            # owner sums are int8
LZMA_PRESET = 9 | lzma.PRESET_EXTREME

# Per-game arrays in a part file and a pack, with their dtypes; moves and setup stones are
# flat with per-game lengths.
GAME_ARRAYS = {"source": np.uint16, "lengths": np.uint16, "setup_lengths": np.uint16,
               "winner": np.int8, "komi": np.float32, "owner_runs": np.uint8}
FLAT_ARRAYS = {"moves": np.uint16, "white": np.bool_, "setup": np.uint16,
               "setup_white": np.bool_}


class PackError(ValueError):
    """A pack file or pack path that cannot be read or does not fit the request."""


def is_pack_path(path):
    """Return whether path names a pack (PACK ending in .pack) or a source in one."""
    path = path.rstrip("/")
    return path.endswith(".pack") or os.path.dirname(path).endswith(".pack")


def split_pack_path(path):
    """Return (pack file, source base name or None) of a pack path; raises PackError when the
    file is missing."""
    path = path.rstrip("/")
    if path.endswith(".pack"):
        file, source = path, None
    else:
        file, source = os.path.dirname(path), os.path.basename(path)
    if not os.path.isfile(file):
        raise PackError(f"no pack file {file}")
    return file, source


class Pack:
    """A pack in memory. names: list of game names; offsets / setup_offsets: int64 [G+1] into
    moves, white / setup, setup_white; owner_sum int8 [G, N*N] and owner_runs uint8 [G], or
    None without ownership targets; meta: the file's description."""

    def __init__(self, names, arrays, meta):
        self.names = names
        self.meta = meta
        for key in (*GAME_ARRAYS, *FLAT_ARRAYS, "owner_sum"):
            setattr(self, key, arrays.get(key))
        self.offsets = _offsets(self.lengths)
        self.setup_offsets = _offsets(self.setup_lengths)

    def __len__(self):
        return len(self.names)

    @property
    def sources(self):
        return self.meta["sources"]

    @property
    def ownership_runs(self):
        """Return the playouts per game behind the owner targets (0: Tromp-Taylor), or None."""
        own = self.meta.get("ownership")
        return None if own is None else own["runs"]

    def select(self, source=None, split="all", val_mod=nd.VAL_MOD):
        """Return the int64 indices, in pack order, of the games of a source (base name; None:
        all) and split (all|train|val); raises PackError for a source the pack lacks."""
        keep = np.ones(len(self), np.bool_)
        if source is not None:
            if source not in self.sources:
                raise PackError(f"the pack has no source {source} (it has "
                                f"{', '.join(self.sources)})")
            keep &= self.source == self.sources.index(source)
        if split != "all":
            keep &= np.array([nd.split_of(n, val_mod) == split for n in self.names], np.bool_)
        return np.flatnonzero(keep)

    def record(self, g):
        """Return game g as a nets.data.Record (owner left zero: the pack's targets are in
        owner_sum)."""
        n = self.meta["size"]
        moves = self.moves[self.offsets[g]:self.offsets[g + 1]].astype(np.int64)
        points = np.where(moves == PASS_CODE, bd.PASS, feat.index_to_point(moves, n))
        colors = np.where(self.white[self.offsets[g]:self.offsets[g + 1]], bd.WHITE, bd.BLACK)
        s0, s1 = self.setup_offsets[g], self.setup_offsets[g + 1]
        setup = [(bd.WHITE if w else bd.BLACK, int(feat.index_to_point(int(m), n)))
                 for m, w in zip(self.setup[s0:s1], self.setup_white[s0:s1])]
        return nd.Record(self.names[g], n, points, colors.astype(np.int64), setup,
                         np.zeros(n * n, np.int8), int(self.winner[g]), float(self.komi[g]))

    def owner_target(self, g):
        """Return float32 [N*N] ownership target of game g (+1 black), NaN where none."""
        runs = int(self.owner_runs[g])
        if runs == 0:
            return np.full(self.owner_sum.shape[1], np.nan, np.float32)
        return (self.owner_sum[g].astype(np.float64) / runs).astype(np.float32)


def _offsets(lengths):
    out = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


# Reading and writing the file ------------------------------------------------------------

def save(path, names, arrays, meta, compress=True):
    """Write a pack file (temp file renamed: a reader never sees half a file), each array
    lzma-compressed, or stored as it is when compress is False (a pack made where it is used,
    written and read in seconds); return the meta written."""
    if any("\n" in n for n in names):
        raise PackError("a game name holds a newline")
    arrays = dict(arrays, names=np.frombuffer("".join(n + "\n" for n in names).encode(),
                                              np.uint8))
    for key in ("white", "setup_white"):
        arrays[key] = np.packbits(arrays[key])
    meta = dict(meta, format=FORMAT, version=VERSION, games=len(names),
                codec="xz" if compress else "raw",
                arrays={k: {"dtype": str(v.dtype), "shape": list(v.shape)}
                        for k, v in arrays.items()})
    meta["arrays"]["white"]["bits"] = int(arrays.get("moves").size)
    meta["arrays"]["setup_white"]["bits"] = int(arrays.get("setup").size)
    packed = arrays
    if compress:
        with ThreadPoolExecutor(len(arrays)) as ex:  # lzma lets go of the GIL
            packed = dict(zip(arrays, ex.map(
                lambda a: np.frombuffer(lzma.compress(np.ascontiguousarray(a).tobytes(),
                                                      preset=LZMA_PRESET), np.uint8),
                arrays.values())))
    packed["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.savez(f, **packed)
    os.replace(tmp, path)
    return meta


_LOADED = {}


def load(path):
    """Return the Pack in a pack file (read once per process while the file stays as it was;
    data-loader workers forked after share it); raises PackError for a file that is missing
    or no pack."""
    try:
        stat = os.stat(path)
        identity = (os.path.realpath(path), stat.st_mtime_ns, stat.st_size)
        if identity in _LOADED:
            return _LOADED[identity]
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes())
            if meta.get("format") != FORMAT or meta.get("version") != VERSION:
                raise PackError(f"{path} is no {FORMAT} version {VERSION} file")
            entries = {k: z[k] for k in meta["arrays"]}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
        if isinstance(e, PackError):
            raise
        raise PackError(f"cannot read pack {path}: {e}") from e

    def unpack(item):
        key, blob = item
        spec = meta["arrays"][key]
        if meta["codec"] == "raw":
            return key, blob
        try:
            raw = lzma.decompress(blob.tobytes())
        except lzma.LZMAError as e:
            raise PackError(f"{path}: array {key} is corrupt: {e}") from e
        return key, np.frombuffer(raw, spec["dtype"]).reshape(spec["shape"])

    with ThreadPoolExecutor(len(entries)) as ex:
        arrays = dict(ex.map(unpack, entries.items()))
    for key in ("white", "setup_white"):
        arrays[key] = np.unpackbits(arrays[key], count=meta["arrays"][key]["bits"]).view(np.bool_)
    names = arrays.pop("names").tobytes().decode().split("\n")[:-1]
    pack = Pack(names, arrays, meta)
    _LOADED[identity] = pack
    return pack


# Building ---------------------------------------------------------------------------------

def _records_of_unit(unit, stats):
    """Yield the Records of an ("sgf", source, path, start, stop) unit: members start..stop of
    a zip, or every game of a tar, an SGF file or a directory when start is None; skipped
    games are counted in stats."""
    _, _, path, start, stop = unit
    if start is not None:
        with zipfile.ZipFile(path) as z:
            for info in _zip_members(z)[start:stop]:
                yield from nd.parse_sgf_bytes(os.path.basename(info.filename), z.read(info),
                                              SIZE, stats)
    else:
        for sub in nd.list_inputs([path]):
            for name, data in nd.read_path(sub):
                yield from nd.parse_sgf_bytes(name, data, SIZE, stats)


def _zip_members(z):
    """Return the zip's SGF members in file order, as nets.data reads them."""
    return [i for i in z.infolist() if nd._is_sgf(i.filename) and not i.is_dir()]


def owner_counts(record, runs, policy, seed):
    """Return (int8 [N*N] owner sum, runs) of a record: result_ownership's playouts when runs
    > 0 (sum over the runs the winner won, and how many), else the last position's
    Tromp-Taylor owner with runs 1."""
    if runs == 0:
        owner = np.zeros(record.size * record.size, np.int8)
        if nd._replay_all(nd.new_game_board(record), record.points, record.colors, owner) >= 0:
            raise PackError(f"{record.name}: illegal move")
        return owner, 1
    mean, won = nd.result_playouts(record, runs, policy, seed)
    return np.rint(mean * won).astype(np.int8), won


def _build_unit(job):
    """Parse one unit, compute its owner targets and write its part file; return its number
    of games."""
    unit, part, runs, seed, split, val_mod = job
    policy = po.PolicyConfig().build() if runs and runs > 0 else None
    names, games, flats = [], {k: [] for k in GAME_ARRAYS}, {k: [] for k in FLAT_ARRAYS}
    owners = []
    stats = nd.Stats()
    n = SIZE
    if unit[0] == "pack":
        pack = load(unit[2])
        same_targets = pack.meta["ownership"] == ({"runs": runs, "seed": seed}
                                                  if runs is not None else None)
        items = ((pack.record(int(g)), int(g) if same_targets else None) for g in unit[3])
    else:
        items = ((record, None) for record in _records_of_unit(unit, stats))
    for record, packed in items:
        if split != "all" and nd.split_of(record.name, val_mod) != split:
            continue
        names.append(record.name)
        idx = np.where(record.points == bd.PASS, PASS_CODE, feat.point_to_index(record.points, n))
        flats["moves"].append(idx.astype(np.uint16))
        flats["white"].append(record.colors == bd.WHITE)
        flats["setup"].append(np.array([feat.point_to_index(p, n) for _, p in record.setup],
                                       np.uint16))
        flats["setup_white"].append(np.array([c == bd.WHITE for c, _ in record.setup],
                                             np.bool_))
        games["lengths"].append(len(idx))
        games["setup_lengths"].append(len(record.setup))
        games["winner"].append(record.winner)
        games["komi"].append(record.komi)
        if runs is None:
            games["owner_runs"].append(0)
            continue
        if packed is not None:
            total, won = pack.owner_sum[packed], pack.owner_runs[packed]
        else:
            total, won = owner_counts(record, runs, policy, seed)
        owners.append(total)
        games["owner_runs"].append(won)
    arrays = {k: np.array(v, GAME_ARRAYS[k]) for k, v in games.items() if k != "source"}
    arrays.update({k: np.concatenate(v).astype(FLAT_ARRAYS[k]) if v else
                   np.zeros(0, FLAT_ARRAYS[k]) for k, v in flats.items()})
    arrays["owner_sum"] = (np.array(owners, np.int8) if owners else
                           np.zeros((0, n * n), np.int8))
    tmp = part + ".tmp"
    with open(tmp, "wb") as f:
        np.savez(f, names=np.array(names, dtype=np.str_), stats=np.array(json.dumps(stats)),
                 **arrays)
    os.replace(tmp, part)
    return len(names)


def plan_units(inputs):
    """Return the build's units, in pack order, for inputs (archives, SGF files, directories,
    pack paths); each unit's second item is its source name. Raises FileNotFoundError for a
    missing input and PackError for an unreadable archive or pack."""
    units = []
    for path in inputs:
        if is_pack_path(path):
            file, source = split_pack_path(path)
            pack = load(file)
            for s in ([source] if source else pack.sources):
                idx = pack.select(s)
                for i in range(0, len(idx), UNIT_GAMES):
                    units.append(("pack", s, file, idx[i:i + UNIT_GAMES]))
            continue
        if not os.path.exists(path):
            raise FileNotFoundError(path)
        source = os.path.basename(path.rstrip("/"))
        if path.lower().endswith(".zip"):
            try:
                with zipfile.ZipFile(path) as z:
                    count = len(_zip_members(z))
            except (OSError, zipfile.BadZipFile) as e:
                raise PackError(f"cannot read archive {path}: {e}") from e
            for start in range(0, max(count, 1), UNIT_GAMES):
                units.append(("sgf", source, path, start, start + UNIT_GAMES))
        else:
            units.append(("sgf", source, path, None, None))
    return units


def _unit_key(unit, runs, seed, split, val_mod):
    """Return the part file name of a unit built with these settings."""
    if unit[0] == "pack":
        what = [unit[1], os.path.realpath(unit[2]), os.path.getmtime(unit[2]),
                int(unit[3][0]), int(unit[3][-1]), len(unit[3])]
    else:
        stat = os.stat(unit[2])
        what = [unit[1], os.path.realpath(unit[2]), stat.st_size, stat.st_mtime_ns, unit[3],
                unit[4]]
    text = json.dumps([VERSION, what, runs, seed, split, val_mod])
    return "part-" + hashlib.sha1(text.encode()).hexdigest()[:20] + ".npz"


def build(inputs, out, runs=32, seed=0, workers=1, split="all", val_mod=nd.VAL_MOD,
          log=sys.stderr, compress=True):
    """Build the pack of inputs into the file out; return its meta. runs: playouts per game
    for the owner targets (0: Tromp-Taylor, None: no targets); parts already in out.parts/
    from an earlier call with the same settings are reused, and the folder is removed when
    the pack is written; compress as save's."""
    if runs is not None and not 0 <= runs <= MAX_RUNS:
        raise PackError(f"ownership runs must be 0..{MAX_RUNS}")
    start_time = time.time()
    units = plan_units(inputs)
    parts_dir = out + ".parts"
    os.makedirs(parts_dir, exist_ok=True)
    parts = [os.path.join(parts_dir, _unit_key(u, runs, seed, split, val_mod)) for u in units]
    todo = [(u, p, runs, seed, split, val_mod) for u, p in zip(units, parts)
            if not os.path.exists(p)]
    print(f"{len(units)} units, {len(units) - len(todo)} done before; {workers} workers",
          file=log, flush=True)
    done = games = 0

    def report(count):
        nonlocal done, games
        done += 1
        games += count
        rate = games / max(time.time() - start_time, 1e-9)
        print(f"unit {done}/{len(todo)}: {games} games, {rate:.0f} games/s", file=log,
              flush=True)

    if todo:
        # The first unit here: its numba code, compiled or read from the cache once, is
        # what the forked workers inherit.
        report(_build_unit(todo[0]))
    if len(todo) > 1:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(workers) if workers > 1 else _InlinePool() as pool:
            for count in pool.imap_unordered(_build_unit, todo[1:]):
                report(count)
    meta = _assemble(units, parts, out, runs, seed, split, val_mod, compress)
    meta["build_seconds"] = round(time.time() - start_time, 1)
    shutil.rmtree(parts_dir)
    return meta


class _InlinePool:
    """A stand-in for multiprocessing.Pool that runs jobs in this process."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def imap_unordered(self, fn, jobs):
        return map(fn, jobs)


def _assemble(units, parts, out, runs, seed, split, val_mod, compress=True):
    """Concatenate the part files in unit order into the pack file out; return its meta."""
    sources = list(dict.fromkeys(u[1] for u in units))
    names, pieces, stats = [], {}, nd.Stats()
    for unit, part in zip(units, parts):
        with np.load(part, allow_pickle=False) as z:
            unit_names = [str(n) for n in z["names"]]
            names += unit_names
            stats.update(json.loads(str(z["stats"])))
            for key in z.files:
                if key not in ("names", "stats"):
                    pieces.setdefault(key, []).append(z[key])
            pieces.setdefault("source", []).append(
                np.full(len(unit_names), sources.index(unit[1]), np.uint16))
    arrays = {k: np.concatenate(v) for k, v in pieces.items()}
    if runs is None:
        del arrays["owner_sum"], arrays["owner_runs"]
    meta = {"size": SIZE, "sources": sources, "split": split, "val_mod": val_mod,
            "ownership": None if runs is None else {"runs": runs, "seed": seed},
            "moves": int(arrays["moves"].size), "stats": dict(stats)}
    return save(out, names, arrays, meta, compress)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", nargs="+", required=True,
                   help="SGF files, directories, archives, packs or PACK/SOURCE")
    p.add_argument("--out", required=True, help="pack file to write (name ends in .pack)")
    p.add_argument("--ownership-runs", type=int, default=32,
                   help="playouts per game for the owner targets, as nets.train's "
                   "--ownership-runs (0: the last position's Tromp-Taylor owner)")
    p.add_argument("--ownership-seed", type=int, default=0,
                   help="seed of the owner playouts (nets.data.result_ownership's seed)")
    p.add_argument("--no-ownership", action="store_true",
                   help="leave the owner targets out (a smaller pack)")
    p.add_argument("--split", choices=["all", "train", "val"], default="all",
                   help="keep only the games of this split")
    p.add_argument("--val-mod", type=int, default=nd.VAL_MOD)
    p.add_argument("--workers", type=int, default=1, help="processes")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if not args.out.endswith(".pack"):
        sys.exit("--out: a pack's name ends in .pack")
    if args.workers < 1:
        sys.exit("--workers: at least 1")
    out_dir = os.path.dirname(args.out)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    runs = None if args.no_ownership else args.ownership_runs
    try:
        meta = build(args.data, args.out, runs, args.ownership_seed, args.workers, args.split,
                     args.val_mod)
    except (PackError, OSError, EOFError, tarfile.TarError, zipfile.BadZipFile) as e:
        sys.exit(f"nets.pack: {e}")
    summary = {"out": args.out, "bytes": os.path.getsize(args.out), "games": meta["games"],
               "moves": meta["moves"], "sources": meta["sources"], "skipped": {
                   k: v for k, v in meta["stats"].items() if k != "games"},
               "ownership": meta["ownership"], "build_seconds": meta["build_seconds"]}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
