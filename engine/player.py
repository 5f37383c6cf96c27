"""The player: turns searches into moves (pass and resign policy), judges dead stones from
playout ownership, scores finished games, and keeps the clocks (engine.time_policy budgets
the moves).

Everything GTP needs beyond the rules lives here, so that the protocol layer stays a table of
small handlers.
"""
import logging
import time
from dataclasses import dataclass, field, replace

import numpy as np

from engine import board as bd
from engine import playout as po
from engine.search import Search
from engine.search_config import SearchConfig
from engine.time_policy import (MIN_MOVE_SECONDS, Clock, TimeControl, charged, clock_state,
                                move_allowance)

log = logging.getLogger("player")

RESIGN = -2
RESIGN_AFTER = 3      # searches in a row below the resign threshold before resigning
CONTESTED = 0.6       # a stone whose mean playout ownership is nearer 0 is still fought over
PASSES_BEFORE_GIVING_UP = 3   # opponent passes in a row after which an open fight is let be
THREAT_DISTANCE = 2           # an opponent's move this close to our stones is answered, not passed
# The final choice: among the moves with at least this share of the most visited move's
# visits, the net's favourite replaces the most visited when its win rate is more than
# PlayerConfig's favourite_margin above.
FAVOURITE_MIN_SHARE = 0.3
# While the background warm-up still compiles the search, a genmove waits for it within its time
# less this reserve, kept for a move without search (Player.early_move takes < 0.1 s)...
EARLY_MOVE_RESERVE = 0.5
# ... and at most this long without a time limit (once per install when the cache is cold; a
# warm cache's warm-up takes a few seconds).
UNTIMED_WARMUP_WAIT = 10.0
WARMUP_POLL = 0.1             # seconds between checks of the stop event while waiting for it
# After a timed search that found a winning move, the settledness check (may we pass?) runs
# the ownership playouts of the position: the search leaves time for them, at this many seconds
# per playout and board point until this machine's speed is measured (0.65 s for 1,000 19x19
# playouts on the development machine), at most a third of the move's time, and none when the
# colour's last search found a win rate below SETTLE_CHECK_LIKELY.
OWNERSHIP_SECONDS_PER_RUN_POINT = 2e-6
SETTLE_CHECK_LIKELY = 0.4
# A timed check runs as many of its ownership playouts as fit in its time, but no fewer than
# this: below it the estimate is too noisy to pass on, so a search's move is played instead.
MIN_OWNERSHIP_RUNS = 200


def robust_choice(result, margin):
    """Return the MoveStats to play: the most visited root move (robust to the noise of a
    lucky few playouts), unless the network's favourite among the moves searched enough
    (see FAVOURITE_MIN_SHARE) has a win rate more than margin above it; None when there are
    no candidates. A positive margin asks the favourite to be clearly better; a negative one
    lets it win near-ties, where the playouts' preference is noise or bias."""
    best = result.best
    if best is None:
        return None
    favourite = max((m for m in result.children
                     if m.visits >= FAVOURITE_MIN_SHARE * best.visits), key=lambda m: m.prior)
    if favourite is not best and favourite.winrate > best.winrate + margin:
        return favourite
    return best


@dataclass
class PlayerConfig:
    """Move-choice parameters; built once from the command line."""
    rollouts: int = 5000
    resign_threshold: float = 0.1
    # robust_choice's margin: 0.05, the net's favourite only when clearly better (-0.05, the
    # favourite in near-ties, won 4 of 10 games against it: benchmarks/history/).
    favourite_margin: float = 0.05
    min_resign_playouts: int = 500
    ownership_runs: int = 1000
    lag_buffer: float = 1.0
    policy_only: bool = False
    search: SearchConfig = field(default_factory=SearchConfig)


class Ownership:
    """Mean playout ownership of every point: +1 black, -1 white."""

    def __init__(self, game, runs, policy, seed):
        board = game.board
        board.info[bd.TO_PLAY] = game.to_play
        self.mean = np.zeros(board.stones.shape[0], np.float64)
        scratch = bd.copy_board(board)
        rng = po.new_rng(seed)
        self.black_winrate = po.playout_ownership(board, game.scoring_komi, runs, policy, rng,
                                                  scratch, self.mean)
        self.mean /= max(runs, 1)

    def dead_points(self, game):
        """Return the stones owned by the other colour in most playouts."""
        dead = []
        for p in game.on_board_points():
            c = game.color_at(p)
            if (c == bd.BLACK and self.mean[p] < 0) or (c == bd.WHITE and self.mean[p] > 0):
                dead.append(p)
        return dead


def _passes_in_a_row(game, color):
    """Return how many of color's last moves in a row were passes."""
    count = 0
    for mover, point in reversed(game.moves):
        if mover != color:
            continue
        if point != bd.PASS:
            break
        count += 1
    return count


def board_without(game, points):
    """Return a copy of the game's board with the given stones taken off (for scoring)."""
    remove = set(points)
    clean = bd.new_board(game.size)
    for p in game.on_board_points():
        c = game.color_at(p)
        if c != bd.EMPTY and p not in remove:
            bd.place_stone(clean, p, c)
    return clean


def seki_points(game, dead):
    """Return the living stones in seki: chains next to a dame point that neither colour can
    fill without putting its own chain in atari (or committing suicide), where neither fill
    is a throw-in that kills (engine.playout.is_nakade_throw_in): an eyeless group whose
    shared liberties close a dead shape around the other colour's stones is dead, not in
    seki."""
    clean = board_without(game, dead)
    owner = np.empty(clean.stones.shape[0], np.int8)
    bd.area_owner(clean, owner)
    w = game.size + 2
    stones = []
    for p in game.on_board_points():
        if clean.stones[p] != bd.EMPTY or owner[p] != bd.EMPTY:
            continue
        if all(_fills_into_atari(clean, p, c) and not _kills_by_throw_in(clean, p, c)
               for c in (bd.BLACK, bd.WHITE)):
            stones += [p + d for d in (-w, -1, 1, w) if clean.stones[p + d] in (bd.BLACK, bd.WHITE)]
    return _whole_chains(clean, stones)


def _fills_into_atari(board, p, color):
    """Return True if color playing p is illegal or leaves its own chain with one liberty."""
    if not bd.is_legal(board, p, color):
        return True
    trial = bd.copy_board(board)
    bd.play(trial, p, color)
    return trial.nlibs[trial.chain[p]] <= 1


def _kills_by_throw_in(board, p, color):
    """Return True if color playing p is a legal nakade throw-in that captures nothing."""
    return (bd.is_legal(board, p, color) and not po.captures_something(board, p, color)
            and po.is_nakade_throw_in(board, p, color))


def _whole_chains(board, points):
    """Extend a list of stones to the complete chains they belong to."""
    seen = set()
    for p in points:
        head = board.chain[p]
        s = head
        while True:
            seen.add(int(s))
            s = board.chain_next[s]
            if s == head:
                break
    return sorted(seen)


def _line_value(size, i):
    """Return the worth of a move on column or row i (0-based) in the opening: third and
    fourth lines best (the fourth a little ahead, for the 4-4 point), the centre next, the
    first two lines least."""
    line = min(i, size - 1 - i)
    return (0.0, 1.0, 3.0, 3.2)[line] if line < 4 else 2.0


def _open_point(game, p):
    """Return True if no stone lies within two lines of p (a 5x5 square)."""
    x0, y0 = game.xy(p)
    for y in range(max(0, y0 - 2), min(game.size, y0 + 3)):
        for x in range(max(0, x0 - 2), min(game.size, x0 + 3)):
            if game.board.stones[game.point(x, y)] != bd.EMPTY:
                return False
    return True


def _liberty_of(board, head):
    """Return one liberty of the chain whose head is given, or bd.PASS if it has none."""
    w = int(board.info[bd.WIDTH])
    s = head
    while True:
        for d in (-w, -1, 1, w):
            if board.stones[s + d] == bd.EMPTY:
                return int(s + d)
        s = int(board.chain_next[s])
        if s == head:
            return bd.PASS


def _liberties_after(board, p, color):
    """Return the liberties of color's chain at p after color plays there (0 if illegal)."""
    trial = bd.copy_board(board)
    if bd.play(trial, p, color) != bd.OK:
        return 0
    return int(trial.nlibs[trial.chain[p]])


def quick_move(game, color):
    """Return a move found without search, playouts or network, by the jitted rules alone
    (compiled first by the warm-up): capture the largest opponent chain in atari, else save
    the largest own chain in atari by a move that leaves it two liberties or more, else the
    legal move that fills no own eye and is no self-atari, best on an open point (no stone
    within two lines) on the third or fourth line; PASS when there is none."""
    board = game.board
    in_atari = {bd.BLACK: [], bd.WHITE: []}
    heads = set()
    for p in game.on_board_points():
        c = game.color_at(p)
        head = int(board.chain[p])
        if c != bd.EMPTY and head not in heads and board.nlibs[head] == 1:
            heads.add(head)
            in_atari[c].append((int(board.chain_size[head]), _liberty_of(board, head)))
    for _, lib in sorted(in_atari[3 - color], reverse=True):
        if game.is_legal(lib, color):
            return lib
    for _, lib in sorted(in_atari[color], reverse=True):
        if game.is_legal(lib, color) and _liberties_after(board, lib, color) >= 2:
            return lib
    best, best_key = bd.PASS, None
    for p in game.on_board_points():
        if (game.color_at(p) != bd.EMPTY or bd.is_true_eye_like(board, p, color)
                or not game.is_legal(p, color)):
            continue
        liberties = _liberties_after(board, p, color)
        if liberties < 2:
            continue
        x, y = game.xy(p)
        key = (_open_point(game, p), _line_value(game.size, x) + _line_value(game.size, y),
               liberties)
        if best_key is None or key > best_key:
            best, best_key = p, key
    return best


class Player:
    """Chooses moves for a Game with UCT search, and judges the end of the game."""

    def __init__(self, config, size, evaluator=None, replicas=()):
        """replicas: copies of the evaluator's network on further devices (Search)."""
        self.config = config
        self.evaluator = evaluator
        self.replicas = tuple(replicas)
        self.search = Search(config.search, size, evaluator, self.replicas)
        # The default policy whose playouts judge dead stones and scores.
        self.judge_policy = config.search.policy.build()
        self.time = TimeControl()
        self.clocks = {bd.BLACK: Clock(), bd.WHITE: Clock()}
        self.last_result = None
        self._ownership_cache = None
        self._hopeless_searches = 0    # our searches in a row below the resign threshold
        self._ownership_rate = OWNERSHIP_SECONDS_PER_RUN_POINT   # last measured
        self._last_winrate = {}        # colour -> its chosen move's win rate in its last search
        # The engine.warmup.Warmup compiling the jitted code in the background (gtp_main sets
        # it); None: everything compiles when first used.
        self.warmup = None

    def new_game(self, size):
        """Forget the tree (and the clocks) for a new game on a board of this size; the tree's
        pools (hundreds of MB) are only allocated again when the size changes."""
        if size == self.search.size:
            self.search.forget()
        else:
            self.search.close()
            self.search = Search(self.config.search, size, self.evaluator, self.replicas)
        self.clocks = {bd.BLACK: Clock(), bd.WHITE: Clock()}
        self.last_result = None
        self._ownership_cache = None
        self._hopeless_searches = 0
        self._last_winrate = {}

    # Time -----------------------------------------------------------------------------
    def move_time(self, game, color):
        """Return this move's wall-clock allowance as a MoveTime (engine.time_policy's
        move_allowance for color's clock), or None without a time limit."""
        if self.time.unlimited:
            return None
        left, stones = clock_state(self.time, self.clocks[color])
        return move_allowance(self.time, left, stones, self.config.lag_buffer,
                              int(game.board.info[bd.NEMPTY]), self._last_winrate.get(color))

    def charge(self, color, seconds):
        """Take a move's `seconds` off color's clock as the engine keeps it, for controllers
        that send no time_left (the next time_left corrects it; see
        engine.time_policy.charged)."""
        if not self.time.unlimited:
            self.clocks[color] = charged(self.time, self.clocks[color], seconds)

    def _wait_for_warmup(self, seconds, stop_event=None):
        """Return True once the background warm-up is finished (at once without one), False
        when it is not within the move's `seconds` less EARLY_MOVE_RESERVE, or within
        UNTIMED_WARMUP_WAIT without a time limit, or once stop_event is set: a search started
        earlier would compile on the spot, for up to a minute."""
        warmup = self.warmup
        if warmup is None or warmup.finished():
            return True
        patience = UNTIMED_WARMUP_WAIT if seconds is None else seconds - EARLY_MOVE_RESERVE
        if warmup.cached():
            log.info("waiting up to %.1f s for the compiled code to load from the cache",
                     max(0.0, patience))
        else:
            log.info("waiting up to %.1f s for the warm-up (the jitted code compiling; "
                     "`darkgo --warm-up` after an install fills the cache)", max(0.0, patience))
        deadline = time.perf_counter() + max(0.0, patience)
        while not warmup.wait(min(WARMUP_POLL, max(0.0, deadline - time.perf_counter()))):
            if time.perf_counter() >= deadline or (stop_event is not None
                                                   and stop_event.is_set()):
                return False
        return True

    def early_move(self, game, color):
        """Return a move chosen without search, for a genmove that the warm-up has not
        compiled the search for in time: the network's best legal move once its input features
        are compiled, else quick_move's (after the rules are compiled, which GTP needs to play
        any move, a pass included)."""
        warmup = self.warmup
        if self.evaluator is not None and warmup.has("net"):
            move, how = self.network_move(game, color, resign=False), "the network's best move"
        else:
            warmup.wait(stage="rules")
            move, how = quick_move(game, color), "a quick move without search"
        self.last_result = None
        log.warning("the warm-up has not compiled the search yet: %s instead, %s", how,
                    game.vertex(move))
        return move

    # Moves -----------------------------------------------------------------------------
    def ownership(self, game, seconds=None):
        """Return the playout Ownership of the current position: ownership_runs playouts, or
        with seconds as many as fit in them (ownership_runs_within). Cached per position: a
        timed check takes the cached estimate as it is (its several calls would otherwise
        each spend the seconds again), an untimed caller makes it again from all
        ownership_runs if it had fewer."""
        runs = self.ownership_runs_within(game, seconds)
        if not self._has_ownership(game) or (seconds is None
                                             and self._ownership_cache[1] < runs):
            started = time.perf_counter()
            own = Ownership(game, runs, self.judge_policy, self.config.search.seed + 7)
            self._ownership_rate = (time.perf_counter() - started) / (
                max(runs, 1) * game.size ** 2)
            self._ownership_cache = (self._ownership_key(game), runs, own)
        return self._ownership_cache[2]

    def ownership_runs_within(self, game, seconds):
        """Return the ownership playouts a check may run in seconds at the last measured
        speed: all ownership_runs without a limit, else as many as fit but at least
        MIN_OWNERSHIP_RUNS (never more than ownership_runs)."""
        runs = self.config.ownership_runs
        if seconds is None:
            return runs
        fit = int(seconds / self._ownership_seconds(game, 1))
        return min(runs, max(MIN_OWNERSHIP_RUNS, fit))

    def _ownership_seconds(self, game, runs):
        """Return the seconds `runs` ownership playouts of the position take at the last
        measured speed."""
        return self._ownership_rate * runs * game.size ** 2

    def _check_fits(self, game, seconds):
        """Return True when a check of the position's ownership can run in seconds (None: no
        limit): its estimate is cached, or MIN_OWNERSHIP_RUNS playouts fit in them."""
        return (seconds is None or self._has_ownership(game)
                or seconds >= self._ownership_seconds(game, MIN_OWNERSHIP_RUNS))

    @staticmethod
    def _ownership_key(game):
        return tuple(game.moves), tuple(game.setup), game.scoring_komi

    def _has_ownership(self, game):
        """Return True when the current position's Ownership is cached."""
        return (self._ownership_cache is not None
                and self._ownership_cache[0] == self._ownership_key(game))

    def _settle_check_seconds(self, game, color, seconds):
        """Return the seconds a timed search of `seconds` for color leaves for the settledness
        check after it: the ownership playouts at the last measured speed, unless cached or
        unlikely to be needed (see SETTLE_CHECK_LIKELY), at most a third of the move's time."""
        if (self._has_ownership(game)
                or self._last_winrate.get(color, 1.0) < SETTLE_CHECK_LIKELY):
            return 0.0
        return min(self._ownership_seconds(game, self.config.ownership_runs), seconds / 3)

    def score_for(self, game, color, seconds=None):
        """Return the area score from color's view with estimated dead stones removed (the
        ownership playouts that fit in seconds, all without a limit)."""
        dead = self.ownership(game, seconds).dead_points(game)
        score = bd.area_score(board_without(game, dead), game.scoring_komi)
        return score if color == bd.BLACK else -score

    def genmove(self, game, color, cleanup=False, stop_event=None, progress=None):
        """Return the point to play for color, bd.PASS or RESIGN (the game is not changed).

        Passes when the opponent passed, no fight is left open (see _fight_open) and
        passing does not lose by area after dead-stone removal; with cleanup
        (kgs-genmove_cleanup) it first captures every stone it thinks dead. progress is
        handed to Search.run (periodic results while the search runs). While the background
        warm-up has not compiled the search, it waits for it as long as the move's time allows
        (see _wait_for_warmup), and otherwise plays early_move's move.
        """
        game.to_play = color
        started = time.perf_counter()
        self.last_result = None     # set again only if this move searches
        move_time = self.move_time(game, color)
        if not self._wait_for_warmup(None if move_time is None else move_time.normal,
                                     stop_event):
            return self.early_move(game, color)
        # The checks before a search may take a third of what the move has left (at least
        # MIN_OWNERSHIP_RUNS playouts: without them the engine could not pass in overtime).
        check = None if move_time is None else max(
            0.0, move_time.normal - (time.perf_counter() - started)) / 3
        opponent_passed = bool(game.moves) and game.moves[-1][1] == bd.PASS
        # A jigo does not lose: playing on from one only gives the search, whose moves all
        # look alike then, the chance to fill its own eye space.
        if (opponent_passed and not cleanup and self.score_for(game, color, check) >= 0
                and not self._fight_open(game, color, check)):
            return bd.PASS
        if cleanup:
            dead = [p for p in self.ownership(game, check).dead_points(game)
                    if game.color_at(p) == 3 - color]
            attack = self._attack_dead(game, color, dead)
            if attack is not None:
                return attack
            if not dead and self.score_for(game, color, check) > 0:
                return bd.PASS
        if self.config.policy_only:
            return self.network_move(game, color, check=check)
        searched = move_time
        if move_time is not None:    # what the warm-up and the checks above took counts too
            settle = 0.0 if cleanup else self._settle_check_seconds(game, color,
                                                                    move_time.normal)
            spent = time.perf_counter() - started + settle
            searched = replace(move_time,
                               normal=max(MIN_MOVE_SECONDS, move_time.normal - spent),
                               maximum=max(MIN_MOVE_SECONDS, move_time.maximum - spent))
        result = self.search.run(game, self.config.rollouts, searched, stop_event, progress)
        self.last_result = result
        best = robust_choice(result, self.config.favourite_margin)
        if best is None:
            return bd.PASS
        self._last_winrate[color] = best.winrate
        if self._should_resign(game, result, best) and not cleanup:
            return RESIGN
        if best.winrate > 0.5 and not cleanup and not self._last_move_near(game, color):
            # The check gets what the search left of the move's time, normal or, after a
            # search that went on while the move was unclear, maximum (the reserve, or more
            # after an early stop); without the time for it the search's move is played.
            check = None
            if move_time is not None:
                limit = (move_time.maximum if result.seconds > searched.normal
                         else move_time.normal)
                check = limit - (time.perf_counter() - started)
            if self._check_fits(game, check) and self._settled(game, color, check):
                return bd.PASS
        return best.point

    def _last_move_near(self, game, color):
        """Return True when the opponent's last move was a stone within Manhattan distance
        THREAT_DISTANCE of one of color's stones: an approach the playouts may misjudge (a
        19x19 game against Pachi was lost by passing three times while White played into a
        corner the playouts gave Black). Answering costs nothing under area scoring."""
        if not game.moves or game.moves[-1][0] != 3 - color or game.moves[-1][1] == bd.PASS:
            return False
        x, y = game.xy(game.moves[-1][1])
        for dy in range(-THREAT_DISTANCE, THREAT_DISTANCE + 1):
            for dx in range(abs(dy) - THREAT_DISTANCE, THREAT_DISTANCE + 1 - abs(dy)):
                if 0 <= x + dx < game.size and 0 <= y + dy < game.size \
                        and game.color_at(game.point(x + dx, y + dy)) == color:
                    return True
        return False

    def _attack_dead(self, game, color, dead):
        """Return a liberty of the dead opponent chain with the fewest liberties that color can
        fill without self-atari (so the chain is captured in a few moves), or None."""
        board = game.board
        words = np.empty(board.libs.shape[1], np.uint64)
        libs = np.empty(board.stones.shape[0], np.int64)
        heads = sorted({int(board.chain[p]) for p in dead}, key=lambda h: board.nlibs[h])
        for head in heads:
            for p in libs[:bd.chain_liberties(board, head, libs)]:
                p = int(p)
                if game.is_legal(p, color) and (
                        po.captures_something(board, p, color)
                        or po.liberties_after(board, p, color, words) >= 2):
                    return p
        return None

    def network_move(self, game, color, resign=True, check=None):
        """Return the network's most probable legal move that repeats no position and fills
        no own eye, or PASS; with resign, RESIGN when the playouts from here all but never
        win (as many as fit in check seconds, all without a limit)."""
        if resign and len(game.moves) >= self._min_resign_moves(game):
            black_wins = self.ownership(game, check).black_winrate
            if (black_wins if color == bd.BLACK else 1.0 - black_wins) < \
                    self.config.resign_threshold / 2:
                return RESIGN
        board = bd.copy_board(game.board)
        board.info[bd.TO_PLAY] = color
        priors = self.evaluator.point_priors([board])[0]
        for p in np.argsort(-priors):
            if priors[p] <= 0:
                break
            if not bd.is_true_eye_like(board, p, color) and game.is_legal(int(p), color):
                return int(p)
        return bd.PASS

    def _min_resign_moves(self, game):
        """Moves before which we never resign: a quarter of the board, 100 with handicap."""
        return 100 if game.handicap else game.size * game.size // 4

    def _should_resign(self, game, result, best):
        """Return True when the chosen move's win rate, and the most visited move's where the
        final choice passed it over, has stayed below the threshold for RESIGN_AFTER
        searches in a row (one bad reading is not enough to give up)."""
        hopeless = (result.playouts >= min(self.config.min_resign_playouts,
                                           self.config.rollouts // 2)
                    and max(best.winrate, result.best.winrate) < self.config.resign_threshold)
        self._hopeless_searches = self._hopeless_searches + 1 if hopeless else 0
        return (len(game.moves) >= self._min_resign_moves(game)
                and self._hopeless_searches >= RESIGN_AFTER)

    def _fight_open(self, game, color, seconds=None):
        """Return True when some stone outside seki has an owner in too few playouts
        (|mean ownership| < CONTESTED), unless the opponent has already passed
        PASSES_BEFORE_GIVING_UP times in a row.

        Such a fight (a semeai the playouts split on) makes the dead-stone estimate a guess
        that the opponent's referee may judge the other way, so we play it out instead of
        passing; an opponent that keeps passing sees nothing to fight over, and a fight the
        playouts never resolve must not keep the game going for ever.
        """
        if _passes_in_a_row(game, 3 - color) >= PASSES_BEFORE_GIVING_UP:
            return False
        own = self.ownership(game, seconds)
        contested = [p for p in game.on_board_points()
                     if game.color_at(p) != bd.EMPTY and abs(own.mean[p]) < CONTESTED]
        if not contested:
            return False
        seki = set(seki_points(game, own.dead_points(game)))
        return any(p not in seki for p in contested)

    def _settled(self, game, color, seconds=None):
        """Return True when every empty point is firmly owned or dame, no fight is open, and
        passing still wins, by the ownership playouts that fit in seconds (all without a
        limit). (The liberties of a semeai touch both colours like dame: the contested stones
        tell them apart.)"""
        own = self.ownership(game, seconds)
        for p in game.on_board_points():
            if game.color_at(p) == bd.EMPTY and abs(own.mean[p]) < 0.9:
                w = game.size + 2
                touches = {game.color_at(p + d) for d in (-w, -1, 1, w)}
                if not {bd.BLACK, bd.WHITE} <= touches:
                    return False
        return (not self._fight_open(game, color, seconds)
                and self.score_for(game, color, seconds) > 0)

    # End of game -----------------------------------------------------------------------
    def final_status(self, game):
        """Return dict status -> sorted stone points, for 'dead', 'alive' and 'seki'."""
        dead = set(self.ownership(game).dead_points(game))
        seki = set(seki_points(game, dead))
        stones = [p for p in game.on_board_points() if game.color_at(p) != bd.EMPTY]
        alive = [p for p in stones if p not in dead and p not in seki]
        return {"dead": sorted(dead), "alive": alive, "seki": sorted(seki)}

    def final_score(self, game):
        """Return the area score black minus white minus the scoring komi (the komi and the
        rules' handicap compensation) after dead-stone removal."""
        return self.score_for(game, bd.BLACK)


def score_text(score):
    """Return GTP's result text: 'B+3.5', 'W+0.5' or '0'."""
    if score > 0:
        return f"B+{score:g}"
    if score < 0:
        return f"W+{-score:g}"
    return "0"


def cpu_seconds():
    """Return this process's CPU time in seconds."""
    return time.process_time()
