"""Learn engine.shapes' move prior from game records.

    python -m nets.train_shapes --data ../shared/data/tygem9d/tygem9d-20{05,06,07,08,09,10}.zip \\
        --val-data ../shared/data/tygem9d/tygem9d-2011.zip --out weights/shapes.npz

Three passes, each over the positions i % stride == offset of the games (the offset moves on
every epoch, so the epochs see different positions):
1. harvest: the spatial patterns (in their canonical, symmetry-free hash) of the moves played in
   the first --harvest-games games; those seen --min-count times or more become features;
2. train: the softmax over each position's candidate moves (legal, not filling an own eye) of
   the summed feature weights, fitted to the move played by AdaGrad with a little L2;
3. test: top-1, top-5 and log-likelihood of the moves played in --val-data games, rated by the
   written model as the search rates them (ties broken at random).
The model file (engine.shapes.save_model) gets a card with the data and figures; the last line
of stdout is that card as JSON.
"""
import argparse
import itertools
import json
import sys
import time

import numpy as np
from numba import njit

from engine import board as bd
from engine import shapes as sh
from engine.ladder import new_ladder_scratch
from engine.tree import candidate_moves
from nets import data as nd

# Candidate moves of a position: at most its empty points, on the largest board the rules allow.
MAX_CANDIDATES = bd.MAX_SIZE * bd.MAX_SIZE + 1


@njit(cache=True)
def _canonical_hashes(states, states_3x3, zobrist, zobrist_3x3, salts, ring_ends, perms, out,
                      scratch):
    """Write into out the smallest hash over the 8 symmetries of each pattern kind."""
    for kind in range(out.shape[0]):
        out[kind] = np.uint64(0xFFFFFFFFFFFFFFFF)
    for s in range(perms.shape[0]):
        sh.pattern_hashes(states, states_3x3, perms[s], zobrist, zobrist_3x3, salts, ring_ends,
                          scratch)
        for kind in range(out.shape[0]):
            if scratch[kind] < out[kind]:
                out[kind] = scratch[kind]


@njit(cache=True)
def harvest_game(b, points, colors, offset, stride, zobrist, zobrist_3x3, salts, ring_ends,
                 perms, dx, dy, keys, states, count):
    """Replay a game; for each position i % stride == offset whose move is on the board,
    write the played move's canonical hashes into keys[count] and its neighbourhood into
    states[count] (the 3x3 liberty states in the last 8 columns); return the new count."""
    n_points = dx.shape[0]
    st = np.empty(n_points, np.int8)
    st3 = np.empty(8, np.int8)
    scratch = np.empty(keys.shape[1], np.uint64)
    for i in range(points.shape[0]):
        p = points[i]
        if i % stride == offset and p >= 0 and count < keys.shape[0]:
            sh.read_states(b, p, colors[i], dx, dy, st, st3)
            _canonical_hashes(st, st3, zobrist, zobrist_3x3, salts, ring_ends, perms,
                              keys[count], scratch)
            states[count, :n_points] = st
            states[count, n_points:] = st3
            count += 1
        if bd.play(b, p, colors[i]) != bd.OK:
            break
    return count


@njit(cache=True)
def _add_ranking(scores, n, played, stats):
    """Add one position to stats [positions, top-1, log-likelihood, top-5]: the chance that
    the move played is first (or in the first five) when ties are broken at random."""
    better = 0
    ties = 0
    for c in range(n):
        if scores[c] > scores[played]:
            better += 1
        elif scores[c] == scores[played] and c != played:
            ties += 1
    stats[0] += 1
    stats[1] += min(max((1 - better) / (ties + 1), 0.0), 1.0)
    stats[3] += min(max((5 - better) / (ties + 1), 0.0), 1.0)


@njit(cache=True)
def test_game(b, points, colors, offset, stride, model, stats):
    """Replay a game; at each position i % stride == offset, rate the candidates with the
    search's model (engine.shapes.rate_moves) and add the move played to stats as
    _add_ranking does, with its log-likelihood."""
    moves = np.empty(MAX_CANDIDATES, np.int32)
    probs = np.zeros(b.stones.shape[0], np.float32)
    scores = np.empty(MAX_CANDIDATES, np.float64)
    allowed = np.ones(b.stones.shape[0], np.bool_)
    words = np.empty(b.libs.shape[1], np.uint64)
    ladder = new_ladder_scratch(b.stones.shape[0])
    for i in range(points.shape[0]):
        p = points[i]
        if i % stride == offset and p >= 0:
            n = candidate_moves(b, colors[i], allowed, moves)
            played = -1
            for c in range(n):
                if moves[c] == p:
                    played = c
            if played >= 0:
                sh.rate_moves(b, colors[i], moves, n, model, probs, words, ladder)
                for c in range(n):
                    scores[c] = probs[moves[c]]
                _add_ranking(scores, n, played, stats)
                stats[2] += np.log(max(scores[played], 1e-30))
        if bd.play(b, p, colors[i]) != bd.OK:
            break


@njit(cache=True)
def fit_game(b, points, colors, offset, stride, zobrist, zobrist_3x3, salts, ring_ends, perms,
             dx, dy, dict_keys, dict_index, weights, sumsq, lr, l2, stats):
    """Replay a game; at each position i % stride == offset, score every candidate move,
    add the move played to stats (as _add_ranking) and take one AdaGrad step on the
    softmax's cross-entropy."""
    n_points = dx.shape[0]
    st = np.empty(n_points, np.int8)
    st3 = np.empty(8, np.int8)
    hashes = np.empty(sh.N_HASHES, np.uint64)
    scratch = np.empty(sh.N_HASHES, np.uint64)
    fixed_ids = np.empty(sh.MAX_FEATURES, np.int32)
    ids = np.empty((MAX_CANDIDATES, sh.MAX_FEATURES), np.int32)
    counts = np.empty(MAX_CANDIDATES, np.int32)
    moves = np.empty(MAX_CANDIDATES, np.int32)
    scores = np.empty(MAX_CANDIDATES, np.float64)
    grad = np.zeros(weights.shape[0], np.float64)
    touched = np.empty(MAX_CANDIDATES * sh.MAX_FEATURES, np.int64)
    allowed = np.ones(b.stones.shape[0], np.bool_)
    words = np.empty(b.libs.shape[1], np.uint64)
    ladder = new_ladder_scratch(b.stones.shape[0])
    for i in range(points.shape[0]):
        p = points[i]
        color = colors[i]
        if i % stride == offset and p >= 0:
            n = candidate_moves(b, color, allowed, moves)
            played = -1
            for c in range(n):
                if moves[c] == p:
                    played = c
            if played >= 0:
                best = -1e300
                for c in range(n):
                    k = sh.fixed_features(b, moves[c], color, fixed_ids, words, ladder)
                    ids[c, :k] = fixed_ids[:k]
                    sh.read_states(b, moves[c], color, dx, dy, st, st3)
                    _canonical_hashes(st, st3, zobrist, zobrist_3x3, salts, ring_ends, perms,
                                      hashes, scratch)
                    for kind in range(sh.N_HASHES):
                        slot = sh.table_slot(dict_keys, hashes[kind])
                        if slot >= 0:
                            ids[c, k] = sh.N_FIXED + dict_index[slot]
                            k += 1
                    counts[c] = k
                    score = 0.0
                    for j in range(k):
                        score += weights[ids[c, j]]
                    scores[c] = score
                    best = max(best, score)
                _add_ranking(scores, n, played, stats)
                total = 0.0
                for c in range(n):
                    scores[c] = np.exp(scores[c] - best)
                    total += scores[c]
                stats[2] += np.log(scores[played] / total)
                nt = 0
                for c in range(n):
                    prob = scores[c] / total - (1.0 if c == played else 0.0)
                    for j in range(counts[c]):
                        f = ids[c, j]
                        if grad[f] == 0.0:
                            touched[nt] = f
                            nt += 1
                        grad[f] += prob
                for t in range(nt):
                    f = touched[t]
                    g = grad[f] + l2 * weights[f]
                    sumsq[f] += g * g
                    weights[f] -= lr * g / np.sqrt(sumsq[f] + 1e-6)
                    grad[f] = 0.0
        if bd.play(b, p, color) != bd.OK:
            break


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", nargs="+", help="training games: SGF files, directories, "
                   "archives (not needed with --test-only)")
    p.add_argument("--val-data", nargs="+", required=True, help="held-out games for the test")
    p.add_argument("--out", required=True, help="model file to write (.npz); with --test-only "
                   "the model to test")
    p.add_argument("--test-only", action="store_true", help="only test the --out model on "
                   "--val-data, as the search rates moves; print the figures as JSON")
    p.add_argument("--games", type=int, default=16000, help="training games read")
    p.add_argument("--harvest-games", type=int, default=16000,
                   help="games whose played moves give the patterns")
    p.add_argument("--min-count", type=int, default=8, help="occurrences a pattern needs")
    p.add_argument("--stride", type=int, default=4, help="use one position in this many")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--l2", type=float, default=1e-4)
    p.add_argument("--val-games", type=int, default=1000)
    p.add_argument("--size", type=int, default=19, help="board size of the games used")
    p.add_argument("--seed", type=int, default=0, help="seed of the patterns' Zobrist keys")
    args = p.parse_args(argv)
    if not args.data and not args.test_only:
        p.error("--data is required to train")
    for name in ("games", "harvest_games", "min_count", "stride", "epochs", "val_games"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def _log(message):
    print(f"{time.strftime('%H:%M:%S')} {message}", flush=True)


def read_records(paths, games, size):
    """Return the first `games` readable games of that board size."""
    return list(itertools.islice(nd.read_games(paths, "all", size=size), games))


def harvest(records, args, zobrist, zobrist_3x3, salts):
    """Return (kinds, states, canonical hashes) of the patterns seen min_count times."""
    limit = sum(len(r.points) for r in records) // args.stride + len(records)
    keys = np.zeros((limit, sh.N_HASHES), np.uint64)
    states = np.zeros((limit, len(sh.POINTS) + 8), np.int8)
    count = 0
    for g, record in enumerate(records):
        count = harvest_game(nd.new_game_board(record), record.points, record.colors,
                             g % args.stride, args.stride, zobrist, zobrist_3x3, salts,
                             sh.RING_ENDS, sh.PERMUTATIONS, sh.DX, sh.DY, keys, states, count)
    kinds, rows, hashes = [], [], []
    for kind in range(sh.N_HASHES):
        unique, first, seen = np.unique(keys[:count, kind], return_index=True,
                                        return_counts=True)
        kept = seen >= args.min_count
        kinds.append(np.full(kept.sum(), kind, np.int64))
        rows.append(first[kept])
        hashes.append(unique[kept])
        _log(f"kind {kind}: {kept.sum()} patterns of {len(unique)} seen in {count} moves")
    kinds, rows, hashes = np.concatenate(kinds), np.concatenate(rows), np.concatenate(hashes)
    pattern_states = states[rows, :len(sh.POINTS)].copy()
    pattern_states[kinds == 0] = 0
    pattern_states[kinds == 0, :8] = states[rows[kinds == 0], len(sh.POINTS):]
    return kinds, pattern_states, hashes


def fit_games(records, args, model_arrays, weights, sumsq, epoch):
    """One epoch of fit_game over the records; log the running figures."""
    stats = np.zeros(4, np.float64)
    zobrist, zobrist_3x3, salts, dict_keys, dict_index = model_arrays
    for g, record in enumerate(records):
        fit_game(nd.new_game_board(record), record.points, record.colors,
                 (g + epoch) % args.stride, args.stride, zobrist, zobrist_3x3, salts,
                 sh.RING_ENDS, sh.PERMUTATIONS, sh.DX, sh.DY, dict_keys, dict_index, weights,
                 sumsq, args.lr, args.l2, stats)
        if (g + 1) % 2000 == 0:
            _log(f"  {g + 1} games: top-1 {stats[1] / stats[0]:.3f} "
                 f"log-likelihood {stats[2] / stats[0]:.3f}")


def test_model(path, records, stride):
    """Return {positions, top1, top5, log_likelihood} of the model file on the records'
    positions i % stride == (game index % stride), rated as the search rates them."""
    model = sh.load_model(path)
    stats = np.zeros(4, np.float64)
    for g, record in enumerate(records):
        test_game(nd.new_game_board(record), record.points, record.colors, g % stride, stride,
                  model, stats)
    return {"positions": int(stats[0]), "top1": round(stats[1] / max(stats[0], 1), 4),
            "top5": round(stats[3] / max(stats[0], 1), 4),
            "log_likelihood": round(stats[2] / max(stats[0], 1), 4)}


def main(argv=None):
    args = parse_args(argv)
    started = time.time()
    if args.test_only:
        try:
            figures = test_model(args.out, read_records(args.val_data, args.val_games,
                                                        args.size), args.stride)
        except ValueError as exc:
            sys.exit(str(exc))
        print(json.dumps(figures))
        return
    records = read_records(args.data, args.games, args.size)
    val_records = read_records(args.val_data, args.val_games, args.size)
    _log(f"{len(records)} training games, {len(val_records)} test games")
    if not records or not val_records:
        sys.exit("no games to train or test on")
    zobrist, zobrist_3x3, salts = sh.new_zobrist(args.seed)
    kinds, states, hashes = harvest(records[:args.harvest_games], args, zobrist, zobrist_3x3,
                                    salts)
    size = 1 << int(np.ceil(np.log2(2 * len(hashes) + 2)))
    dict_keys = np.zeros(size, np.uint64)
    dict_index = np.zeros(size, np.int32)
    sh._fill_table(dict_keys, dict_index, hashes, np.arange(len(hashes), dtype=np.int32))
    arrays = (zobrist, zobrist_3x3, salts, dict_keys, dict_index)
    weights = np.zeros(sh.N_FIXED + len(hashes), np.float64)
    sumsq = np.zeros_like(weights)
    for epoch in range(args.epochs):
        _log(f"epoch {epoch + 1}")
        fit_games(records, args, arrays, weights, sumsq, epoch)
    sh.save_model(args.out, weights[:sh.N_FIXED], kinds, states, weights[sh.N_FIXED:], zobrist,
                  zobrist_3x3, salts, "{}")
    test = test_model(args.out, val_records, args.stride)
    card = {
        "data": [str(p) for p in args.data], "games": len(records),
        "test_data": [str(p) for p in args.val_data], "test_games": len(val_records), "size": args.size,
        "test_positions": test["positions"], "test_top1": test["top1"],
        "test_top5": test["top5"], "test_log_likelihood": test["log_likelihood"],
        "patterns": {str(kind): int((kinds == kind).sum()) for kind in range(sh.N_HASHES)},
        "fixed_weights": [round(float(w), 3) for w in weights[:sh.N_FIXED]],
        "args": {k: v for k, v in vars(args).items() if k not in ("data", "val_data")},
        "seconds": round(time.time() - started),
    }
    sh.save_model(args.out, weights[:sh.N_FIXED], kinds, states, weights[sh.N_FIXED:], zobrist,
                  zobrist_3x3, salts, json.dumps(card))
    _log(f"wrote {args.out}")
    print(json.dumps(card))


if __name__ == "__main__":
    main()
