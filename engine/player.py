"""The player: turns searches into moves (pass and resign policy), judges dead stones from
playout ownership, scores finished games, and budgets time.

Everything GTP needs beyond the rules lives here, so that the protocol layer stays a table of
small handlers.
"""
import time
from dataclasses import dataclass, field, replace

import numpy as np

from engine import board as bd
from engine import playout as po
from engine.search import Search, SearchConfig

RESIGN = -2
RESIGN_AFTER = 3      # searches in a row below the resign threshold before resigning
CONTESTED = 0.6       # a stone whose mean playout ownership is nearer 0 is still fought over
PASSES_BEFORE_GIVING_UP = 3   # opponent passes in a row after which an open fight is let be
# The final choice: the net's favourite replaces the most visited move when its win rate is
# this much higher over at least this share of the most visited move's visits.
FAVOURITE_MARGIN = 0.05
FAVOURITE_MIN_SHARE = 0.3


def robust_choice(result):
    """Return the MoveStats to play: the most visited root move (robust to the noise of a
    lucky few playouts), unless the network's favourite has been searched enough and is
    clearly better (see FAVOURITE_MARGIN); None when there are no candidates."""
    best = result.best
    if best is None:
        return None
    favourite = max(result.children, key=lambda m: m.prior)
    if (favourite is not best and favourite.visits >= FAVOURITE_MIN_SHARE * best.visits
            and favourite.winrate > best.winrate + FAVOURITE_MARGIN):
        return favourite
    return best


@dataclass
class PlayerConfig:
    """Move-choice parameters; built once from the command line."""
    rollouts: int = 5000
    resign_threshold: float = 0.1
    min_resign_playouts: int = 500
    ownership_runs: int = 1000
    lag_buffer: float = 1.0
    policy_only: bool = False
    search: SearchConfig = field(default_factory=SearchConfig)


@dataclass
class TimeControl:
    """Canadian-style time settings (GTP time_settings) plus KGS's Japanese byo-yomi periods."""
    main: float = 0.0
    byo_time: float = 0.0
    byo_stones: int = 0
    byo_periods: int = 0      # > 0 for Japanese byo-yomi (kgs-time_settings byoyomi)
    unlimited: bool = True


@dataclass
class Clock:
    """What time_left last told us about one colour."""
    seconds: float = 0.0
    stones: int = 0           # 0: still in main time
    known: bool = False


class Ownership:
    """Mean playout ownership of every point: +1 black, -1 white."""

    def __init__(self, game, runs, policy, seed):
        board = game.board
        board.info[bd.TO_PLAY] = game.to_play
        self.mean = np.zeros(board.stones.shape[0], np.float64)
        scratch = bd.copy_board(board)
        rng = po.new_rng(seed)
        self.black_winrate = po.playout_ownership(board, game.rules.komi, runs, policy, rng,
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
    fill without putting its own chain in atari (or committing suicide)."""
    clean = board_without(game, dead)
    owner = np.empty(clean.stones.shape[0], np.int8)
    bd.area_owner(clean, owner)
    w = game.size + 2
    stones = []
    for p in game.on_board_points():
        if clean.stones[p] != bd.EMPTY or owner[p] != bd.EMPTY:
            continue
        if all(_fills_into_atari(clean, p, c) for c in (bd.BLACK, bd.WHITE)):
            stones += [p + d for d in (-w, -1, 1, w) if clean.stones[p + d] in (bd.BLACK, bd.WHITE)]
    return _whole_chains(clean, stones)


def _fills_into_atari(board, p, color):
    """Return True if color playing p is illegal or leaves its own chain with one liberty."""
    if not bd.is_legal(board, p, color):
        return True
    trial = bd.copy_board(board)
    bd.play(trial, p, color)
    return trial.nlibs[trial.chain[p]] <= 1


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


class Player:
    """Chooses moves for a Game with UCT search, and judges the end of the game."""

    def __init__(self, config, size, evaluator=None):
        self.config = config
        self.evaluator = evaluator
        self.search = Search(config.search, size, evaluator)
        # Dead stones are judged by the default policy without the replies the search's
        # playouts learn: the judgement of a position must not depend on what was searched.
        self.judge_policy = replace(config.search.policy, reply=0.0).build()
        self.time = TimeControl()
        self.clocks = {bd.BLACK: Clock(), bd.WHITE: Clock()}
        self.last_result = None
        self._ownership_cache = None
        self._hopeless_searches = 0    # our searches in a row below the resign threshold

    def new_game(self, size):
        """Forget the tree (and the clocks) for a new game on a board of this size; the tree's
        pools (hundreds of MB) are only allocated again when the size changes."""
        if size == self.search.size:
            self.search.forget()
        else:
            self.search.close()
            self.search = Search(self.config.search, size, self.evaluator)
        self.clocks = {bd.BLACK: Clock(), bd.WHITE: Clock()}
        self.last_result = None
        self._ownership_cache = None
        self._hopeless_searches = 0

    # Time -----------------------------------------------------------------------------
    def move_seconds(self, game, color):
        """Return the wall-clock budget for this move, or None without a time limit."""
        tc = self.time
        if tc.unlimited:
            return None
        clock = self.clocks[color]
        lag = self.config.lag_buffer
        if not clock.known:
            left, stones = tc.main, 0
            if tc.main <= 0:
                left, stones = tc.byo_time, max(tc.byo_stones, 1)
        else:
            left, stones = clock.seconds, clock.stones
        if stones > 0:
            return max(0.05, left / stones - lag)
        moves_left = max(20, len(game.legal_moves(color, superko=False)) // 3)
        budget = left / moves_left
        if tc.byo_time > 0:
            per_byo = tc.byo_time / max(tc.byo_stones, 1) if tc.byo_periods == 0 else tc.byo_time
            budget += per_byo - lag
        return max(0.05, min(budget, left - lag) if left > lag else 0.05)

    # Moves -----------------------------------------------------------------------------
    def ownership(self, game):
        """Return the playout Ownership of the current position (cached per position)."""
        key = (tuple(game.moves), tuple(game.setup), game.rules.komi)
        if self._ownership_cache is None or self._ownership_cache[0] != key:
            own = Ownership(game, self.config.ownership_runs, self.judge_policy,
                            self.config.search.seed + 7)
            self._ownership_cache = (key, own)
        return self._ownership_cache[1]

    def score_for(self, game, color):
        """Return the area score from color's view with estimated dead stones removed."""
        dead = self.ownership(game).dead_points(game)
        score = bd.area_score(board_without(game, dead), game.rules.komi)
        return score if color == bd.BLACK else -score

    def genmove(self, game, color, cleanup=False, stop_event=None, progress=None):
        """Return the point to play for color, bd.PASS or RESIGN (the game is not changed).

        Passes when the opponent passed, no fight is left open (see _fight_open) and
        passing does not lose by area after dead-stone removal; with cleanup
        (kgs-genmove_cleanup) it first captures every stone it thinks dead. progress is
        handed to Search.run (periodic results while the search runs).
        """
        game.to_play = color
        opponent_passed = bool(game.moves) and game.moves[-1][1] == bd.PASS
        # A jigo does not lose: playing on from one only gives the search, whose moves all
        # look alike then, the chance to fill its own eye space.
        if (opponent_passed and not cleanup and self.score_for(game, color) >= 0
                and not self._fight_open(game, color)):
            return bd.PASS
        if cleanup:
            dead = [p for p in self.ownership(game).dead_points(game)
                    if game.color_at(p) == 3 - color]
            attack = self._attack_dead(game, color, dead)
            if attack is not None:
                return attack
            if not dead and self.score_for(game, color) > 0:
                return bd.PASS
        if self.config.policy_only:
            return self._network_move(game, color)
        seconds = self.move_seconds(game, color)
        result = self.search.run(game, self.config.rollouts, seconds, stop_event, progress)
        self.last_result = result
        best = robust_choice(result)
        if best is None:
            return bd.PASS
        if self._should_resign(game, result, best) and not cleanup:
            return RESIGN
        if best.winrate > 0.5 and not cleanup and self._settled(game, color):
            return bd.PASS
        return best.point

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

    def _network_move(self, game, color):
        """Return the network's most probable legal move that repeats no position and fills
        no own eye, RESIGN when the playouts from here all but never win, or PASS."""
        if len(game.moves) >= self._min_resign_moves(game):
            black_wins = self.ownership(game).black_winrate
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
        """Return True when the chosen move's win rate has stayed below the threshold for
        RESIGN_AFTER searches in a row (one bad reading is not enough to give up)."""
        hopeless = (result.playouts >= min(self.config.min_resign_playouts,
                                           self.config.rollouts // 2)
                    and best.winrate < self.config.resign_threshold)
        self._hopeless_searches = self._hopeless_searches + 1 if hopeless else 0
        return (len(game.moves) >= self._min_resign_moves(game)
                and self._hopeless_searches >= RESIGN_AFTER)

    def _fight_open(self, game, color):
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
        own = self.ownership(game)
        contested = [p for p in game.on_board_points()
                     if game.color_at(p) != bd.EMPTY and abs(own.mean[p]) < CONTESTED]
        if not contested:
            return False
        seki = set(seki_points(game, own.dead_points(game)))
        return any(p not in seki for p in contested)

    def _settled(self, game, color):
        """Return True when every empty point is firmly owned or dame, no fight is open, and
        passing still wins. (The liberties of a semeai touch both colours like dame: the
        contested stones tell them apart.)"""
        own = self.ownership(game)
        for p in game.on_board_points():
            if game.color_at(p) == bd.EMPTY and abs(own.mean[p]) < 0.9:
                w = game.size + 2
                touches = {game.color_at(p + d) for d in (-w, -1, 1, w)}
                if not {bd.BLACK, bd.WHITE} <= touches:
                    return False
        return not self._fight_open(game, color) and self.score_for(game, color) > 0

    # End of game -----------------------------------------------------------------------
    def final_status(self, game):
        """Return dict status -> sorted stone points, for 'dead', 'alive' and 'seki'."""
        dead = set(self.ownership(game).dead_points(game))
        seki = set(seki_points(game, dead))
        stones = [p for p in game.on_board_points() if game.color_at(p) != bd.EMPTY]
        alive = [p for p in stones if p not in dead and p not in seki]
        return {"dead": sorted(dead), "alive": alive, "seki": sorted(seki)}

    def final_score(self, game):
        """Return the area score black minus white minus komi after dead-stone removal."""
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
