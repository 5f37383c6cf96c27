"""Training batches from a pack (nets.pack), with nets.data's interface: pack_batches and
pack_validation_set take the arguments of sample_batches and validation_set and give the
same batches, with --data naming pack paths (PACK or PACK/SOURCE) instead of SGF inputs.

The sampling scheme is sample_batches' (a pool of games replayed side by side, each move
picked with probability sample_rate, passes never, a random symmetry per sample), run by
nets.replay.fill_batch a batch at a time; the validation set takes the same positions as
validation_set's. Ownership targets are the pack's: ownership_runs must be the runs it was
built with.
"""
import random

import numpy as np

from engine import board as bd
from nets import data as nd
from nets import pack as npk
from nets import replay as rp


def is_pack_input(paths):
    """Return True when every path is a pack path, False when none is; raises PackError for
    a mix."""
    kinds = {npk.is_pack_path(p) for p in paths}
    if len(kinds) > 1:
        raise npk.PackError("give either pack paths or SGF inputs, not both")
    return kinds == {True}


def select_games(paths, split, val_mod=nd.VAL_MOD):
    """Return (Pack, int64 game indices in pack order) of pack paths of one pack file
    (PACK or PACK/SOURCE) and a split; raises PackError for several pack files, a missing
    source, or no game."""
    files, chosen = set(), []
    for path in paths:
        file, source = npk.split_pack_path(path)
        files.add(file)
        if len(files) > 1:
            raise npk.PackError("pack paths of more than one pack file; merge them with "
                                "nets.pack")
        chosen.append(source)
    pack = npk.load(next(iter(files)))
    if None in chosen:
        games = pack.select(None, split, val_mod)
    else:
        games = np.unique(np.concatenate([pack.select(s, split, val_mod) for s in chosen]))
    if not len(games):
        raise npk.PackError(f"no {split} games in {', '.join(paths)}")
    return pack, games


def named_sources(paths):
    """Return the set of sources that pack paths take: the one a PACK/SOURCE path names, every
    source of the pack for a PACK path."""
    sources = set()
    for path in paths:
        file, source = npk.split_pack_path(path)
        sources |= set(npk.load(file).sources) if source is None else {source}
    return sources


def check_ownership(pack, ownership, ownership_runs):
    """Raise PackError unless the pack holds the ownership targets asked for."""
    if not ownership:
        return
    if pack.ownership_runs is None:
        raise npk.PackError("the pack has no ownership targets: build it without "
                            "--no-ownership")
    if pack.ownership_runs != ownership_runs:
        raise npk.PackError(f"the pack's ownership targets come from "
                            f"{pack.ownership_runs} runs a game (0: Tromp-Taylor), not "
                            f"{ownership_runs}: give --ownership-runs {pack.ownership_runs}")


def _batch_dict(out):
    """Return a BatchArrays as sample_batches' dict."""
    d = {"x": out.x, "mask": out.mask, "targets": out.targets}
    if out.owner.shape[0]:
        d["owner"] = out.owner
    if out.value.shape[0]:
        d["value"] = out.value
        d["komi"] = out.komi
    return d


def _raise_for(status):
    if status == rp.ERROR_ILLEGAL:
        raise npk.PackError("a game of the pack does not replay (an illegal move): rebuild it")


def repeat_untaught(games, taught, repeat):
    """Return the games with each one whose moves are not taught (taught[g] False) there
    `repeat` times in all."""
    return np.concatenate([games, np.tile(games[~taught[games]], repeat - 1)])


def pack_batches(paths, batch=256, split="train", heads=3, rank=9, edge=False,
                 ownership=False, value=False, pool=256, sample_rate=0.1, augment=True, seed=0,
                 shard=(0, 1), stats=None, val_mod=nd.VAL_MOD, ownership_runs=0, ladder=False,
                 value_only=(), value_only_repeat=1):
    """Yield training batches forever, as nets.data.sample_batches (same arguments; stats is
    unused: the pack counted the skipped games when it was built). The games of the sources
    in value_only (base names) teach no moves (targets -1) and come value_only_repeat times
    in each pass over the games. Raises ValueError for a sample_rate outside (0, 1], which
    would pick no position, or a value_only_repeat under 1."""
    if not 0 < sample_rate <= 1:
        raise ValueError(f"sample_rate {sample_rate} outside (0, 1]")
    if value_only_repeat < 1:
        raise ValueError(f"value_only_repeat {value_only_repeat} under 1")
    pack, games = select_games(paths, split, val_mod)
    check_ownership(pack, ownership, ownership_runs)
    games = games[shard[0]::shard[1]]
    if not len(games):
        raise npk.PackError(f"no {split} games for shard {shard[0]} of {shard[1]}")
    rng = np.random.default_rng(seed)
    pk = rp.pack_arrays(pack, value_only)
    games = repeat_untaught(games, pk.taught, value_only_repeat)
    lengths = pack.lengths[games]
    state = rp.new_pool(pool, int(lengths.max()), seed)
    tables, scratch = rp.replay_tables(rank, edge, ladder=ladder), rp.new_scratch()
    empty = bd.new_board(19)
    order, pos = rng.permutation(games), 0
    while True:
        out = rp.new_batch(batch, heads, edge, ownership, value, ladder=ladder)
        row = 0
        while row < batch:
            written, pos = rp.fill_batch(state, pk, order, pos, sample_rate, augment, row, heads,
                                         tables, empty, out, scratch)
            _raise_for(written)
            row += written
            if row < batch:
                order, pos = rng.permutation(games), 0
        yield _batch_dict(out)


def pack_validation_set(paths, positions=4096, heads=3, rank=9, edge=False, ownership=False,
                        sample_rate=0.1, seed=1234, val_mod=nd.VAL_MOD, batch=256, value=False,
                        ownership_runs=0, ladder=False, value_only=()):
    """Return validation_set's batches (the same positions, drawn with the same seeded
    random.Random over the validation games in their order) from a pack; the games of the
    value_only sources with no move targets, as pack_batches writes them."""
    pack, games = select_games(paths, "val", val_mod)
    check_ownership(pack, ownership, ownership_runs)
    rng = random.Random(seed)
    picked_games, picked_moves = [], []
    for g in games:
        moves = pack.moves[pack.offsets[g]:pack.offsets[g + 1]]
        for i in range(len(moves)):
            if moves[i] != npk.PASS_CODE and rng.random() < sample_rate:
                picked_games.append(g)
                picked_moves.append(i)
                if len(picked_games) >= positions:
                    break
        if len(picked_games) >= positions:
            break
    return list(write_positions(pack, picked_games, picked_moves, None, heads, rank, edge,
                                ownership, value, batch, ladder, value_only))


def write_positions(pack, games, moves, syms=None, heads=3, rank=9, edge=False,
                    ownership=False, value=False, batch=256, ladder=False, value_only=()):
    """Yield batch dicts (the last one shorter) of the positions before moves[k] of games[k]
    under symmetries syms[k] (all 0 when None), in the order given; value_only as in
    pack_batches."""
    games = np.asarray(games, np.int64)
    moves = np.asarray(moves, np.int64)
    syms = np.zeros(len(games), np.int64) if syms is None else np.asarray(syms, np.int64)
    pk = rp.pack_arrays(pack, value_only)
    tables, scratch = rp.replay_tables(rank, edge, ladder=ladder), rp.new_scratch()
    board, empty = bd.new_board(19), bd.new_board(19)
    for start in range(0, len(games), batch):
        stop = min(start + batch, len(games))
        g, m, s = games[start:stop], moves[start:stop], syms[start:stop]
        order = np.lexsort((m, g))
        out = rp.new_batch(stop - start, heads, edge, ownership, value, ladder=ladder)
        _raise_for(rp.write_picks(pk, g[order], m[order], s[order], order, heads, tables,
                                  board, empty, out, scratch))
        yield _batch_dict(out)
