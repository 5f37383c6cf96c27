"""SGF game records -> training samples: readers for files, collections and archives, a streaming
sampler with 8-fold augmentation, and the hash-based validation split.

A game is named by its file name (plus "#i" for the i-th game of a collection); a game belongs to
the validation split when crc32(name) % VAL_MOD == 0, wherever the file lives, so validation
games never reach training. Games with broken SGF, another board size or an illegal move are
skipped and counted in a ``Stats``, never raised.
"""
import os
import random
import tarfile
import zipfile
import zlib
from collections import Counter, namedtuple

import numpy as np
from numba import njit
from sgfmill import sgf, sgf_grammar

from engine import board as bd
from engine import playout as po
from nets import features as feat

VAL_MOD = 100
ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar")

# One replayable game. points: engine points (bd.PASS for a pass); colors: BLACK/WHITE per move;
# setup: (color, point) stones before the first move; owner: int8 [N*N] Tromp-Taylor owner of the
# final position, +1 black, -1 white, 0 dame (or result_ownership's float32 mean, NaN for none);
# winner: BLACK or WHITE when the game was won on the board (by counting or resignation), 0 when
# it has no such result (time, forfeit, draw, none); komi: the record's KM.
Record = namedtuple("Record", ["name", "size", "points", "colors", "setup", "owner", "winner",
                               "komi"], defaults=(0, 0.0))


class Stats(Counter):
    """Counts of games read and skipped, by reason (games, broken, size, illegal, empty)."""


def split_of(name, val_mod=VAL_MOD):
    """Return 'val' if the game name hashes into the validation split, else 'train'."""
    return "val" if zlib.crc32(name.encode("utf-8")) % val_mod == 0 else "train"


def _is_archive(path):
    return path.lower().endswith(ARCHIVE_SUFFIXES)


def _is_sgf(path):
    return path.lower().endswith(".sgf")


def list_inputs(paths):
    """Return the SGF files and archives under the given paths (files or directories), sorted."""
    found = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                found += [os.path.join(root, f) for f in sorted(files)
                          if _is_sgf(f) or _is_archive(f)]
        elif os.path.exists(path):
            found.append(path)
        else:
            raise FileNotFoundError(path)
    return found


# Reading ---------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _owner_grid(b, owner, out):
    """Fill out [N*N] with b's Tromp-Taylor area owner, +1 black, -1 white, 0 dame; owner is
    scratch of one int8 per engine point."""
    size = b.info[bd.SIZE]
    w = b.info[bd.WIDTH]
    bd.area_owner(b, owner)
    for y in range(size):
        for x in range(size):
            o = owner[(y + 1) * w + x + 1]
            out[y * size + x] = 1 if o == bd.BLACK else (-1 if o == bd.WHITE else 0)


@njit(cache=True, nogil=True)
def _replay_all(b, points, colors, owner_out):
    """Play every move on b; return the index of the first illegal move or -1 (then fill owner)."""
    for i in range(points.shape[0]):
        if bd.play(b, points[i], colors[i]) != bd.OK:
            return i
    _owner_grid(b, np.empty(b.stones.shape[0], np.int8), owner_out)
    return -1


def new_game_board(record):
    """Return a fresh board with the record's setup stones placed."""
    b = bd.new_board(record.size)
    for color, p in record.setup:
        if bd.place_stone(b, p, color) != bd.OK:
            raise ValueError("illegal setup stone")
    if record.setup and record.colors.size:
        b.info[bd.TO_PLAY] = record.colors[0]
    return b


def winner_of(result):
    """Return BLACK or WHITE for an SGF RE value won by counting or resignation ('B+3.5',
    'W+R', 'B+Resign'), else 0: time and forfeit wins ('+T', '+F') say nothing of the board,
    and draws, void or unknown results have no winner."""
    result = (result or "").strip().upper()
    if len(result) < 2 or result[0] not in "BW" or result[1] != "+":
        return 0
    how = result[2:]
    if how.startswith(("T", "F")):
        return 0
    if how and not how.startswith("R"):
        try:
            float(how)
        except ValueError:
            return 0
    return bd.BLACK if result[0] == "B" else bd.WHITE


def _record_from_sgf(name, game, size):
    """Return a checked Record from an sgfmill game, or (None, reason)."""
    if game.get_size() != size:
        return None, "size"
    w = size + 2
    root = game.get_root()
    blacks, whites, _ = root.get_setup_stones()
    setup = [(bd.BLACK, (r + 1) * w + c + 1) for r, c in sorted(blacks)] + \
            [(bd.WHITE, (r + 1) * w + c + 1) for r, c in sorted(whites)]
    points, colors = [], []
    for node in game.get_main_sequence()[1:]:
        colour, move = node.get_move()
        if colour is None:
            continue
        colors.append(bd.BLACK if colour == "b" else bd.WHITE)
        points.append(bd.PASS if move is None else (move[0] + 1) * w + move[1] + 1)
    if not points:
        return None, "empty"
    result = root.get("RE") if root.has_property("RE") else None
    komi = root.get("KM") if root.has_property("KM") else 0.0
    record = Record(name, size, np.array(points, np.int64), np.array(colors, np.int64), setup,
                    np.zeros(size * size, np.int8), winner_of(result), float(komi))
    try:
        b = new_game_board(record)
    except ValueError:
        return None, "illegal"
    if _replay_all(b, record.points, record.colors, record.owner) >= 0:
        return None, "illegal"
    return record, None


@njit(cache=True, nogil=True)
def _ownership_given_winner(b, komi, winner, runs, policy, rng, owner_out):
    """Run `runs` playouts from b (left unchanged); set owner_out [N*N] to the mean area owner
    (+1 black, -1 white) at the end of the runs that `winner` won; return how many it won
    (owner_out is all zero when none)."""
    size = b.info[bd.SIZE]
    scratch = bd.copy_board(b)
    owner = np.empty(b.stones.shape[0], np.int8)
    record = np.empty(3 * size * size, np.int32)
    ladder = po.new_ladder_scratch(b.stones.shape[0])
    grid = np.empty(size * size, np.float64)
    total = np.zeros(size * size, np.float64)
    won = 0
    for _ in range(runs):
        bd.copy_into(scratch, b)
        po.run_playout(scratch, policy, rng, record.shape[0], record, ladder)
        _owner_grid(scratch, owner, grid)
        margin = grid.sum() - komi
        if (margin > 0 and winner == bd.BLACK) or (margin < 0 and winner == bd.WHITE):
            won += 1
            total += grid
    owner_out[:] = total / max(won, 1)
    return won


def result_ownership(record, runs, policy, seed=0):
    """Return float32 [N*N]: who owns each point at the end of the game (+1 black, -1 white),
    as the mean over the default-policy playouts from the record's last position that end
    with the recorded winner winning, or all NaN when the record has no winner or no playout
    agrees with it.

    Most games end by resignation with territory still open, so the final position's own
    owner (Record.owner, Tromp-Taylor) misjudges every unsettled area; the playouts settle
    it, and keeping only the runs that agree with the result keeps the target consistent with
    the value's."""
    out = np.full(record.size * record.size, np.nan, np.float32)
    owner, won = result_playouts(record, runs, policy, seed)
    if won:
        out[:] = owner
    return out


def result_playouts(record, runs, policy, seed=0):
    """Return (float64 [N*N] mean area owner, runs won) of result_ownership's playouts: the
    mean over the runs that end with the recorded winner winning, and how many did ((zeros, 0)
    without a winner). mean * runs won is each point's whole sum over those runs."""
    owner = np.zeros(record.size * record.size, np.float64)
    if record.winner == 0:
        return owner, 0
    b = new_game_board(record)
    _advance(b, record.points, record.colors, 0, len(record.points))
    if len(record.colors):
        b.info[bd.TO_PLAY] = bd.WHITE if record.colors[-1] == bd.BLACK else bd.BLACK
    rng = po.new_rng(zlib.crc32(f"{seed}:{record.name}".encode()))
    won = _ownership_given_winner(b, float(record.komi), int(record.winner), runs, policy, rng,
                                  owner)
    return owner, int(won)


def parse_sgf_bytes(name, data, size=19, stats=None):
    """Return the checked Records of one SGF file's bytes (one game or a collection)."""
    stats = Stats() if stats is None else stats
    try:
        trees = sgf_grammar.parse_sgf_collection(data)
    except Exception:
        stats["broken"] += 1
        return []
    records = []
    for i, tree in enumerate(trees):
        game_name = name if len(trees) == 1 else f"{name}#{i}"
        try:
            record, reason = _record_from_sgf(game_name, sgf.Sgf_game.from_coarse_game_tree(tree),
                                              size)
        except Exception:
            record, reason = None, "broken"
        if record is None:
            stats[reason] += 1
        else:
            stats["games"] += 1
            records.append(record)
    return records


def _archive_members(path):
    """Yield (member name, bytes) of the .sgf files inside a zip or tar archive, in file order."""
    if path.lower().endswith(".zip"):
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                if _is_sgf(info.filename) and not info.is_dir():
                    yield info.filename, z.read(info)
    else:
        with tarfile.open(path, "r:*") as t:
            for member in t:
                if member.isfile() and _is_sgf(member.name):
                    yield member.name, t.extractfile(member).read()


def read_path(path):
    """Yield (name, bytes) for one input: an .sgf file or every .sgf in an archive; names are
    file base names, so the split does not depend on where the data lives."""
    if _is_archive(path):
        for member, data in _archive_members(path):
            yield os.path.basename(member), data
    else:
        with open(path, "rb") as f:
            yield os.path.basename(path), f.read()


def read_games(paths, split="all", size=19, stats=None, val_mod=VAL_MOD):
    """Yield checked Records from files, directories and archives in order; split: all|train|val.

    Unreadable archives count as 'broken' and are skipped."""
    stats = Stats() if stats is None else stats
    for path in list_inputs(paths):
        try:
            for name, data in read_path(path):
                for record in parse_sgf_bytes(name, data, size, stats):
                    if split == "all" or split_of(record.name, val_mod) == split:
                        yield record
        except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError):
            stats["broken"] += 1


# Samples ---------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _advance(b, points, colors, start, stop):
    """Play moves start..stop-1 on b; return the index of an illegal move or -1."""
    for i in range(start, stop):
        if bd.play(b, points[i], colors[i]) != bd.OK:
            return i
    return -1


class SampleWriter:
    """Fills batch arrays with one position's planes, legal mask and targets under a symmetry."""

    def __init__(self, batch, size=19, heads=3, rank=9, edge=False, ownership=False,
                 value=False, ladder=False):
        self.size, self.heads, self.rank, self.edge = size, heads, rank, edge
        self._ladder_scratch = feat.new_ladder_scratch(size) if ladder else None
        n = size
        planes = feat.num_planes(edge, ladder)
        self.x = np.zeros((batch, planes, n, n), np.float32)
        self.mask = np.zeros((batch, n * n), np.bool_)
        self.targets = np.full((batch, heads), -1, np.int64)
        self.owner = np.zeros((batch, n * n), np.float32) if ownership else None
        # Value targets: +1 when the side to move won, -1 when it lost, NaN without a winner;
        # komi as points for the side to move.
        self.value = np.zeros(batch, np.float32) if value else None
        self.komi = np.zeros(batch, np.float32) if value else None
        self._planes = np.zeros((planes, n, n), np.float32)
        self._mask = np.zeros(n * n, np.bool_)

    def write(self, row, b, record, i, sym):
        """Write position before move i of record (board b) into row under symmetry sym."""
        n = self.size
        color = int(record.colors[i])
        feat.position_planes(b, color, self.rank, self.edge, self._ladder_scratch, self._planes)
        self.x[row] = feat.transform_planes(self._planes, sym)
        feat.legal_mask(b, color, self._mask)
        self.mask[row] = feat.transform_planes(self._mask.reshape(n, n), sym).reshape(-1)
        for j in range(self.heads):
            t = -1
            if i + j < len(record.points) and record.points[i + j] != bd.PASS:
                t = int(feat.transform_index(feat.point_to_index(int(record.points[i + j]), n), sym, n))
            self.targets[row, j] = t
        if self.owner is not None:
            sign = 1.0 if color == bd.BLACK else -1.0
            own = (record.owner * sign).astype(np.float32).reshape(n, n)
            self.owner[row] = feat.transform_planes(own, sym).reshape(-1)
        if self.value is not None:
            winner = int(record.winner)
            self.value[row] = np.nan if winner == 0 else (1.0 if winner == color else -1.0)
            self.komi[row] = record.komi if color == bd.WHITE else -record.komi

    def batch(self, rows=None):
        """Return a dict of copies of the first rows rows (all by default)."""
        rows = len(self.x) if rows is None else rows
        out = {"x": self.x[:rows].copy(), "mask": self.mask[:rows].copy(),
               "targets": self.targets[:rows].copy()}
        if self.owner is not None:
            out["owner"] = self.owner[:rows].copy()
        if self.value is not None:
            out["value"] = self.value[:rows].copy()
            out["komi"] = self.komi[:rows].copy()
        return out


class _ActiveGame:
    """A game being replayed, with the sorted move indices still to be sampled."""

    def __init__(self, record, picks):
        self.record = record
        self.board = new_game_board(record)
        self.cursor = 0
        self.picks = picks

    def next_position(self):
        """Advance the board to the next picked position; return its move index."""
        i = self.picks.pop()
        _advance(self.board, self.record.points, self.record.colors, self.cursor, i)
        self.cursor = i
        return i


def game_stream(paths, split, rng, size=19, stats=None, shard=(0, 1), val_mod=VAL_MOD):
    """Yield Records of the split forever, each pass in a new random order (zip members and
    directory files shuffled; tar archives, which cannot seek, streamed in random archive order).
    shard=(i, n) keeps every n-th game reference, for data-loader workers and DDP ranks."""
    stats = Stats() if stats is None else stats
    inputs = list_inputs(paths)
    refs = []
    for path in inputs:
        if path.lower().endswith(".zip"):
            with zipfile.ZipFile(path) as z:
                refs += [(path, info.filename) for info in z.infolist()
                         if _is_sgf(info.filename) and not info.is_dir()]
        else:
            refs.append((path, None))
    if not refs:
        raise ValueError(f"no SGF input in {paths}")
    if len(refs) < shard[1]:
        raise ValueError(f"{len(refs)} game files or archives in {paths} for {shard[1]} data "
                         "readers (DDP ranks x loader workers); a tar archive is read whole "
                         "by one reader: give a zip, a directory or a pack")
    refs = refs[shard[0]::shard[1]]
    zips = {}
    yielded = False
    while True:
        rng.shuffle(refs)
        for path, member in refs:
            if member is not None:
                base = os.path.basename(member)
                if split_of(base, val_mod) != split and split != "all":
                    continue
                z = zips.get(path) or zips.setdefault(path, zipfile.ZipFile(path))
                items = [(base, z.read(member))]
            else:
                items = read_path(path)
            try:
                for name, data in items:
                    for record in parse_sgf_bytes(name, data, size, stats):
                        if split == "all" or split_of(record.name, val_mod) == split:
                            yielded = True
                            yield record
            except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError):
                stats["broken"] += 1
        if not yielded:
            raise ValueError(f"no usable {split} games in {paths}")


def sample_batches(paths, batch=256, split="train", heads=3, rank=9, edge=False,
                   ownership=False, value=False, pool=256, sample_rate=0.1, augment=True, seed=0,
                   shard=(0, 1), stats=None, val_mod=VAL_MOD, ownership_runs=0, ladder=False):
    """Yield training batches forever: dicts of x [B,C,N,N] float32, mask [B,N*N] bool,
    targets [B,k] int64 (-1 = none), optionally owner [B,N*N] float32 (+1 ours) and value,
    komi [B] float32 (see SampleWriter).

    A pool of `pool` games is replayed side by side; each position of a game is picked with
    probability sample_rate (positions whose move is a pass are never picked) and every
    sample comes from a random game of the pool, so a batch mixes many games at random stages
    while memory stays bounded. augment applies a random symmetry per sample.
    ownership_runs > 0 takes the ownership targets from that many playouts of each game's
    last position (result_ownership) instead of its Tromp-Taylor owner. ladder adds the
    ladder planes (nets.features)."""
    rng = random.Random(seed)
    games = game_stream(paths, split, rng, stats=stats, shard=shard, val_mod=val_mod)
    games = _with_result_ownership(games, ownership_runs if ownership else 0, seed)
    writer = SampleWriter(batch, 19, heads, rank, edge, ownership, value, ladder)

    def fresh():
        while True:
            record = next(games)
            picks = [i for i in range(len(record.points))
                     if record.points[i] != bd.PASS and rng.random() < sample_rate]
            if picks:
                picks.reverse()
                return _ActiveGame(record, picks)

    active = [fresh() for _ in range(pool)]
    while True:
        for row in range(batch):
            slot = rng.randrange(pool)
            g = active[slot]
            i = g.next_position()
            writer.write(row, g.board, g.record, i, rng.randrange(8) if augment else 0)
            if not g.picks:
                active[slot] = fresh()
        yield writer.batch()


def _with_result_ownership(records, runs, seed):
    """Yield the records, each with result_ownership's owner when runs > 0."""
    policy = po.PolicyConfig().build() if runs > 0 else None
    for record in records:
        if runs > 0:
            record = record._replace(owner=result_ownership(record, runs, policy, seed))
        yield record


def all_positions(records, batch=256, heads=3, rank=9, edge=False, ownership=False,
                  value=False, ladder=False):
    """Yield batches (as sample_batches, no augmentation) of every non-pass position of records."""
    writer = SampleWriter(batch, 19, heads, rank, edge, ownership, value, ladder)
    row = 0
    for record in records:
        b = new_game_board(record)
        for i in range(len(record.points)):
            if record.points[i] != bd.PASS:
                writer.write(row, b, record, i, 0)
                row += 1
                if row == batch:
                    yield writer.batch()
                    row = 0
            bd.play(b, record.points[i], record.colors[i])
    if row:
        yield writer.batch(row)


def validation_set(paths, positions=4096, heads=3, rank=9, edge=False, ownership=False,
                   sample_rate=0.1, seed=1234, val_mod=VAL_MOD, batch=256, value=False,
                   ownership_runs=0, ladder=False):
    """Return a fixed list of batches of about `positions` validation-split positions: games
    in file order, each position kept with probability sample_rate (fixed seed); ownership_runs
    and ladder as in sample_batches."""
    rng = random.Random(seed)
    writer = SampleWriter(batch, 19, heads, rank, edge, ownership, value, ladder)
    out, row, total = [], 0, 0
    records = read_games(paths, split="val", val_mod=val_mod)
    for record in _with_result_ownership(records, ownership_runs if ownership else 0, seed):
        b = new_game_board(record)
        for i in range(len(record.points)):
            if record.points[i] != bd.PASS and rng.random() < sample_rate:
                writer.write(row, b, record, i, 0)
                row += 1
                total += 1
                if row == batch:
                    out.append(writer.batch())
                    row = 0
                if total >= positions:
                    break
            bd.play(b, record.points[i], record.colors[i])
        if total >= positions:
            break
    if row:
        out.append(writer.batch(row))
    if not out:
        raise ValueError(f"no validation games in {paths}")
    return out
