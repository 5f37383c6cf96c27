"""Training samples from a pack in numba: games replayed move by move and whole batches of
planes, legal masks and targets written in one call, with no Python per sample.

The rows are exactly nets.data.SampleWriter's for the same position and symmetry (tests/
test_pack.py holds them equal): the legal mask is nets.features.legal_mask's, and the targets,
the value and the ownership follow SampleWriter.write. The planes are
nets.features.board_planes' values written straight to their places under the symmetry
(_planes_into): on random positions of a pool of games, board_planes' exp per stone and
point, its two queue searches for the territory planes and the copy to the symmetry's places
took 24 of a row's 33 microseconds, _planes_into takes 11 (2026-12-05, the 2-core AMD EPYC
under load, sample_batches' pool of 256 games of the 2010 archive). Two entry points:

- write_picks: given (game, move, symmetry, row) picks sorted by game and move, replay each
  game once and write every pick into its row (validation sets, tests);
- fill_batch: sample_batches' scheme, a pool of games replayed side by side, each move of a
  game picked with probability rate, every row from a random game of the pool; the boards
  and the picks of the pool live in a Pool of arrays, so the state carries from call to call.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from engine import board as bd
from engine import ladder as ld
from engine import playout as po
from nets import features as feat

# The pack's arrays that replay reads (see nets.pack.Pack); owner_sum has 0 rows when the
# pack has no ownership targets. taught (bool [G]): whether a game's moves are policy targets
# (not so for the engine's own games, which teach the value and ownership heads alone).
PackArrays = namedtuple("PackArrays", ["offsets", "moves", "white", "setup_offsets", "setup",
                                       "setup_white", "winner", "komi", "owner_sum",
                                       "owner_runs", "taught"])

# One batch: x [B,C,N,N] float32, mask [B,N*N] bool, targets [B,heads] int64, owner [B,N*N]
# float32, value and komi [B] float32; owner, value and komi have 0 rows when not wanted.
BatchArrays = namedtuple("BatchArrays", ["x", "mask", "targets", "owner", "value", "komi"])

# A pool of games being replayed: a Board's arrays with one row per slot (zobrist shared),
# and per slot its game, the moves played on its board, its picked move indices (ascending,
# picks[k, :npicks[k]]) and the next one to use; rng is the pool's xorshift state.
Pool = namedtuple("Pool", ["stones", "chain", "chain_next", "chain_size", "nlibs", "libs",
                           "empties", "empty_index", "placed_at", "nbr_code", "info",
                           "zobrist", "game", "cursor", "picks", "npicks", "next", "rng"])

ERROR_ILLEGAL = -1
ORDER_OUT = -2


def pack_arrays(pack, value_only=()):
    """Return the PackArrays of a nets.pack.Pack; the games of the sources named in value_only
    (base names) are no policy targets: their rows' move targets are all -1."""
    n2 = pack.meta["size"] ** 2
    owner_sum = pack.owner_sum if pack.owner_sum is not None else np.zeros((0, n2), np.int8)
    owner_runs = pack.owner_runs if pack.owner_runs is not None else np.zeros(0, np.uint8)
    taught = np.ones(len(pack), np.bool_)
    for source in value_only:
        taught[pack.select(source)] = False
    return PackArrays(pack.offsets, pack.moves, pack.white, pack.setup_offsets, pack.setup,
                      pack.setup_white, pack.winner, pack.komi, owner_sum, owner_runs, taught)


def new_batch(batch, heads, edge, ownership, value, size=19, ladder=False):
    """Return empty BatchArrays for batch rows (every element is written by a fill)."""
    n2 = size * size
    return BatchArrays(np.empty((batch, feat.num_planes(edge, ladder), size, size), np.float32),
                       np.empty((batch, n2), np.bool_), np.empty((batch, heads), np.int64),
                       np.empty((batch if ownership else 0, n2), np.float32),
                       np.empty(batch if value else 0, np.float32),
                       np.empty(batch if value else 0, np.float32))


def symmetry_table(size=19):
    """Return int32 [8, N*N]: where each move index lands under each symmetry."""
    idx = np.arange(size * size)
    return np.stack([feat.transform_index(idx, k, size) for k in range(8)]).astype(np.int32)


def new_pool(slots, max_moves, seed, size=19):
    """Return an empty Pool of `slots` boards for games of at most max_moves moves."""
    b = bd.new_board(size)
    rows = {f: np.repeat(getattr(b, f)[None], slots, axis=0) for f in bd.Board._fields
            if f != "zobrist"}
    return Pool(**rows, zobrist=b.zobrist, game=np.full(slots, -1, np.int64),
                cursor=np.zeros(slots, np.int64), picks=np.zeros((slots, max(max_moves, 1)),
                                                                 np.int32),
                npicks=np.zeros(slots, np.int64), next=np.zeros(slots, np.int64),
                rng=po.new_rng(seed))


@njit(cache=True, nogil=True)
def _point(code, n):
    """Return the engine point of a pack move code (bd.PASS for n * n)."""
    if code == n * n:
        return bd.PASS
    return (code // n + 1) * (n + 2) + code % n + 1


@njit(cache=True, nogil=True)
def _color(white):
    return bd.WHITE if white else bd.BLACK


@njit(cache=True, nogil=True)
def _start_game(b, empty, pk, g, n):
    """Set b to game g's start: empty's position plus the setup stones, Black or the first
    mover to play; return 0, or ERROR_ILLEGAL for an illegal setup stone."""
    bd.copy_into(b, empty)
    for s in range(pk.setup_offsets[g], pk.setup_offsets[g + 1]):
        if bd.place_stone(b, _point(pk.setup[s], n), _color(pk.setup_white[s])) != bd.OK:
            return ERROR_ILLEGAL
    first = pk.offsets[g]
    if pk.setup_offsets[g + 1] > pk.setup_offsets[g] and pk.offsets[g + 1] > first:
        b.info[bd.TO_PLAY] = _color(pk.white[first])
    return 0


@njit(cache=True, nogil=True)
def _advance(b, pk, g, start, stop, n):
    """Play game g's moves start..stop-1 on b; return 0 or ERROR_ILLEGAL."""
    base = pk.offsets[g]
    for i in range(start, stop):
        if bd.play(b, _point(pk.moves[base + i], n), _color(pk.white[base + i])) != bd.OK:
            return ERROR_ILLEGAL
    return 0


@njit(cache=True, nogil=True)
def history_table(length):
    """Return float64 [length]: the history planes' value for a stone of age t, computed as
    nets.features.board_planes computes it."""
    out = np.empty(length, np.float64)
    for t in range(length):
        out[t] = np.exp(-feat.HISTORY_DECAY * t)
    return out


def constant_planes(rank, edge, size=19, ladder=False):
    """Return float32 [8, C, N*N]: under each symmetry, the planes that do not depend on the
    position (rank, border, position mask, edge; zero elsewhere)."""
    planes = np.zeros((feat.num_planes(edge, ladder), size, size), np.float32)
    feat.board_planes(bd.new_board(size), bd.BLACK, rank, edge, planes[:feat.num_planes(edge)])
    planes[:feat.RANK] = 0.0
    planes[feat.OUR_TERRITORY:feat.THEIR_TERRITORY + 1] = 0.0
    return np.stack([feat.transform_planes(planes, k).reshape(planes.shape[0], -1)
                     for k in range(8)]).astype(np.float32)


@njit(cache=True, nogil=True)
def _dilate(a, w, out):
    """Set out to bit set a grown by one step in each direction (point offsets +-1, +-w)."""
    words = a.shape[0]
    one = np.uint64(1)
    up = np.uint64(w)
    for i in range(words):
        grown = a[i] | (a[i] << one) | (a[i] >> one) | (a[i] << up) | (a[i] >> up)
        if i > 0:
            grown |= (a[i - 1] >> np.uint64(63)) | (a[i - 1] >> np.uint64(64 - w))
        if i + 1 < words:
            grown |= (a[i + 1] << np.uint64(63)) | (a[i + 1] << np.uint64(64 - w))
        out[i] = grown


@njit(cache=True, nogil=True)
def _territory_bits(b, color, sets):
    """Fill sets[6] and sets[7] with the bit sets (one bit per engine point) of the empty
    points strictly closer to color's stones and to the other colour's: the territory planes
    of nets.features.board_planes, whose breadth-first distances through empty points are
    the layers at which these sets, grown a step at a time from each colour's stones, first
    reach a point. sets [8, words] uint64 is scratch besides."""
    empty, ours, theirs, seen_ours, seen_theirs, grown, our_terr, their_terr = \
        sets[0], sets[1], sets[2], sets[3], sets[4], sets[5], sets[6], sets[7]
    sets[:, :] = 0
    for p in range(b.stones.shape[0]):
        s = b.stones[p]
        bit = np.uint64(1) << np.uint64(p & 63)
        if s == bd.EMPTY:
            empty[p >> 6] |= bit
        elif s == color:
            ours[p >> 6] |= bit
        elif s == 3 - color:
            theirs[p >> 6] |= bit
    seen_ours[:] = ours
    seen_theirs[:] = theirs
    w = b.info[bd.WIDTH]
    active = True
    while active:
        active = False
        _dilate(ours, w, grown)
        for i in range(empty.shape[0]):
            ours[i] = grown[i] & empty[i] & ~seen_ours[i]
            seen_ours[i] |= ours[i]
        _dilate(theirs, w, grown)
        for i in range(empty.shape[0]):
            theirs[i] = grown[i] & empty[i] & ~seen_theirs[i]
            seen_theirs[i] |= theirs[i]
        for i in range(empty.shape[0]):
            our_terr[i] |= ours[i] & ~seen_theirs[i]
            their_terr[i] |= theirs[i] & ~seen_ours[i]
            active |= (ours[i] | theirs[i]) != 0


@njit(cache=True, nogil=True)
def _planes_into(b, color, to, const, hist, x, sets):
    """Write nets.features.board_planes(b, color) into x [C, N*N] with each point p moved to
    to[p]: const (constant_planes under the same symmetry) for the planes that do not depend
    on the position, hist (history_table) for stones younger than its length, the territory
    planes from bit sets (_territory_bits). The same values as board_planes, without its
    per-call exp, its two queue searches and a second copy."""
    n = b.info[bd.SIZE]
    w = b.info[bd.WIDTH]
    move = b.info[bd.MOVE_NUMBER]
    x[:, :] = const
    ko = b.info[bd.KO_POINT]
    if ko >= 0 and b.info[bd.KO_COLOR] == color:
        x[feat.KO, to[(ko // w - 1) * n + ko % w - 1]] = 1.0
    _territory_bits(b, color, sets)
    our_terr, their_terr = sets[6], sets[7]
    for y in range(n):
        for xx in range(n):
            p = (y + 1) * w + xx + 1
            q = to[y * n + xx]
            s = b.stones[p]
            if s == bd.EMPTY:
                x[feat.EMPTY_PLANE, q] = 1.0
                shift = np.uint64(p & 63)
                if (our_terr[p >> 6] >> shift) & np.uint64(1):
                    x[feat.OUR_TERRITORY, q] = 1.0
                elif (their_terr[p >> 6] >> shift) & np.uint64(1):
                    x[feat.THEIR_TERRITORY, q] = 1.0
            else:
                libs = b.nlibs[b.chain[p]]
                li = 2 if libs >= 3 else libs - 1
                age = move - 1 - b.placed_at[p]
                h = hist[age] if 0 <= age < hist.shape[0] else np.exp(-feat.HISTORY_DECAY * age)
                if s == color:
                    x[feat.OUR_LIBS + li, q] = 1.0
                    x[feat.OURS, q] = 1.0
                    x[feat.OUR_HISTORY, q] = h
                else:
                    x[feat.THEIR_LIBS + li, q] = 1.0
                    x[feat.THEIRS, q] = 1.0
                    x[feat.THEIR_HISTORY, q] = h


@njit(cache=True, nogil=True)
def _write_row(b, pk, g, i, sym, row, heads, tables, out, scratch):
    """Write the position before move i of game g (board b) into row `row` of out under
    symmetry sym, as nets.data.SampleWriter.write does."""
    perm, const, hist, owner_values, first_ladder = tables
    legal, sets, ladder = scratch
    n = b.info[bd.SIZE]
    n2 = n * n
    base = pk.offsets[g]
    length = pk.offsets[g + 1] - base
    white = pk.white[base + i]
    color = _color(white)
    to = perm[sym]
    x = out.x[row].reshape(out.x.shape[1], n2)
    _planes_into(b, color, to, const[sym], hist, x, sets)
    if first_ladder >= 0:
        w = b.info[bd.WIDTH]
        sc, captures, escapes, libs = ladder
        ncap, nesc = ld.ladder_moves(b, color, sc, captures, escapes, libs)
        for k in range(ncap):
            x[first_ladder, to[(captures[k] // w - 1) * n + captures[k] % w - 1]] = 1.0
        for k in range(nesc):
            x[first_ladder + 1, to[(escapes[k] // w - 1) * n + escapes[k] % w - 1]] = 1.0
    feat.legal_mask(b, color, legal)
    for p in range(n2):
        out.mask[row, to[p]] = legal[p]
    for j in range(heads):
        t = -1
        if pk.taught[g] and i + j < length:
            code = pk.moves[base + i + j]
            if code != n2:
                t = to[code]
        out.targets[row, j] = t
    if out.owner.shape[0] > 0:
        side = 1 if white else 0
        values = owner_values[side, pk.owner_runs[g]]
        for p in range(n2):
            out.owner[row, to[p]] = values[pk.owner_sum[g, p] + 128]
    if out.value.shape[0] > 0:
        winner = pk.winner[g]
        if winner == 0:
            out.value[row] = np.nan
        else:
            out.value[row] = 1.0 if winner == color else -1.0
        out.komi[row] = pk.komi[g] if white else -pk.komi[g]


def replay_tables(rank=9, edge=False, size=19, history=1024, ladder=False):
    """Return the read-only tables of a replay: (symmetry_table, constant_planes,
    history_table, owner values [2 sides, MAX runs + 1, 256]: the target of an owner sum s
    of r runs, sum + 128 indexed, for the side to move Black then White, NaN for 0 runs;
    the index of the first ladder plane, -1 without them)."""
    runs = np.arange(256, dtype=np.float64)[:, None]
    sums = np.arange(-128, 128, dtype=np.float64)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(runs > 0, sums / runs, np.nan).astype(np.float32)
    owner_values = np.stack([mean, mean * np.float32(-1.0)])
    return (symmetry_table(size), constant_planes(rank, edge, size, ladder),
            history_table(history), owner_values, feat.num_planes(edge) if ladder else -1)


def new_scratch(size=19):
    """Return the scratch arrays of a replay (legal mask, _territory_bits' bit sets,
    nets.features.new_ladder_scratch's)."""
    words = ((size + 2) ** 2 + 63) // 64
    return (np.empty(size * size, np.bool_), np.empty((8, words), np.uint64),
            feat.new_ladder_scratch(size))


@njit(cache=True, nogil=True)
def write_picks(pk, games, moves, syms, rows, heads, tables, b, empty, out, scratch):
    """Write the position before move moves[k] of game games[k] under symmetry syms[k] into
    row rows[k] of out, for picks sorted by game then move (each game replayed once); board b
    is scratch, empty an empty board, tables replay_tables'. Return 0, or ERROR_ILLEGAL for a
    pack whose moves do not replay."""
    n = b.info[bd.SIZE]
    game = -1
    cursor = 0
    for k in range(games.shape[0]):
        g = games[k]
        if g != game or moves[k] < cursor:
            if _start_game(b, empty, pk, g, n) != 0:
                return ERROR_ILLEGAL
            game = g
            cursor = 0
        if _advance(b, pk, g, cursor, moves[k], n) != 0:
            return ERROR_ILLEGAL
        cursor = moves[k]
        _write_row(b, pk, g, moves[k], syms[k], rows[k], heads, tables, out, scratch)
    return 0


@njit(cache=True, nogil=True)
def _slot_board(pool, k):
    return bd.Board(pool.stones[k], pool.chain[k], pool.chain_next[k], pool.chain_size[k],
                    pool.nlibs[k], pool.libs[k], pool.empties[k], pool.empty_index[k],
                    pool.placed_at[k], pool.nbr_code[k], pool.info[k], pool.zobrist)


@njit(cache=True, nogil=True)
def _refill(pool, k, pk, order, pos, rate, empty, n):
    """Put the next game of order (from pos) with at least one pick into slot k; return
    (status, new pos): status 0, ORDER_OUT when order runs out first (the slot is left
    empty), or ERROR_ILLEGAL for a game whose setup does not replay."""
    while pos < order.shape[0]:
        g = order[pos]
        pos += 1
        base = pk.offsets[g]
        count = 0
        for i in range(pk.offsets[g + 1] - base):
            if pk.moves[base + i] != n * n and po.rand_float(pool.rng) < rate:
                pool.picks[k, count] = i
                count += 1
        if count == 0:
            continue
        if _start_game(_slot_board(pool, k), empty, pk, g, n) != 0:
            return ERROR_ILLEGAL, pos
        pool.game[k] = g
        pool.cursor[k] = 0
        pool.npicks[k] = count
        pool.next[k] = 0
        return 0, pos
    pool.npicks[k] = 0
    pool.next[k] = 0
    return ORDER_OUT, pos


@njit(cache=True, nogil=True)
def fill_batch(pool, pk, order, pos, rate, augment, row0, heads, tables, empty, out, scratch):
    """Fill rows row0.. of out from the pool (sample_batches' scheme), taking fresh games from
    order[pos:]; return (rows written, new pos): fewer rows than asked when order runs out,
    then refill order and call again from the row returned. Rows written is ERROR_ILLEGAL for
    a pack whose moves do not replay."""
    n = pool.info[0, bd.SIZE]
    slots = pool.game.shape[0]
    for row in range(row0, out.x.shape[0]):
        k = po.rand_below(pool.rng, slots)
        if pool.next[k] >= pool.npicks[k]:
            status, pos = _refill(pool, k, pk, order, pos, rate, empty, n)
            if status == ORDER_OUT:
                return row - row0, pos
            if status != 0:
                return status, pos
        b = _slot_board(pool, k)
        g = pool.game[k]
        i = pool.picks[k, pool.next[k]]
        pool.next[k] += 1
        if _advance(b, pk, g, pool.cursor[k], i, n) != 0:
            return ERROR_ILLEGAL, pos
        pool.cursor[k] = i
        sym = po.rand_below(pool.rng, 8) if augment else 0
        _write_row(b, pk, g, i, sym, row, heads, tables, out, scratch)
    return out.x.shape[0] - row0, pos
