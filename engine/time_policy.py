"""Time policy: the time settings and what the engine knows of each colour's clock
(TimeControl, Clock, charged), how long a timed move may search (move_allowance, a MoveTime),
and when a running search stops for time or because its move is decided (time_verdict,
unclear)."""
from dataclasses import dataclass

import numpy as np

# Seconds between a timed search's looks at the root (see time_verdict).
TIME_CHECK_INTERVAL = 0.05
# The most visited root move is unclear while the second has more than this share of its
# visits, ...
CLOSE_SECOND = 0.6
# ... or a move with at least CONTENDER_VISITS of its visits has a win rate CONTENDER_MARGIN
# higher, ...
CONTENDER_VISITS = 0.2
CONTENDER_MARGIN = 0.03
# ... or its win rate is WINRATE_FALL below the mover's win rate at its previous move.
WINRATE_FALL = 0.1
# A timed search stops as decided no sooner than this share of its normal time, and once its
# playout rate is known: after this many playouts of its own (a reused tree's lead alone
# proves nothing about what the time left could do).
DECIDED_AFTER = 0.2
DECIDED_MIN_PLAYOUTS = 64


@dataclass(frozen=True)
class MoveTime:
    """A timed search's wall-clock allowance: it searches for `normal` seconds, goes on up to
    `maximum` while the move is unclear, and stops sooner once no other move can catch up
    (see time_verdict). previous_winrate: the mover's win rate at its previous move, if any."""
    normal: float
    maximum: float
    previous_winrate: float | None = None


def unclear(visits, winrates, previous_winrate=None):
    """Return True while the most visited root move is not clearly the one to play: the second
    has nearly as many visits, a well-visited move has a clearly higher win rate, or the win
    rate fell since the mover's previous move (Pachi and Fuego spend more time then)."""
    if len(visits) == 0 or visits.max() == 0:
        return False
    order = np.argsort(visits)[::-1]
    best = order[0]
    if len(order) > 1 and visits[order[1]] > CLOSE_SECOND * visits[best]:
        return True
    contenders = visits >= CONTENDER_VISITS * visits[best]
    if (winrates[contenders] > winrates[best] + CONTENDER_MARGIN).any():
        return True
    return previous_winrate is not None and winrates[best] < previous_winrate - WINRATE_FALL


def time_verdict(elapsed, move_time, visits, winrates, playouts_per_second, early_stop=True):
    """Return why a timed search should stop now, 'time' or 'decided', or None to go on.

    visits and winrates are the root's edges' (win rates for the mover). Past the normal time
    the search goes on only while the move is unclear, and never past the maximum; before it,
    with early_stop, it stops once the most visited move leads the next by more visits than
    the rest of the normal time could give at the rate so far (the move can no longer change,
    and the time saved goes to later moves)."""
    if elapsed >= move_time.maximum:
        return "time"
    doubtful = unclear(visits, winrates, move_time.previous_winrate)
    if elapsed >= move_time.normal:
        return None if doubtful else "time"
    if (not early_stop or doubtful or elapsed < DECIDED_AFTER * move_time.normal
            or playouts_per_second <= 0):
        return None
    top = np.sort(visits)[::-1]
    lead = int(top[0]) - (int(top[1]) if len(top) > 1 else 0) if len(top) else 0
    return "decided" if lead > playouts_per_second * (move_time.normal - elapsed) else None


# The shortest search a timed move gets, and how many of its normal main-time shares a move
# may take while it is unclear (Pachi's default "worst" time is three times the normal).
MIN_MOVE_SECONDS = 0.05
EXTEND_SHARES = 3.0
# Seconds a timed move takes beyond its search's deadline, kept back from every move besides
# --lag-buffer (which may be 0): the search looks at the clock every 50 ms, then its threads
# stop and the move is chosen and answered.
MOVE_OVERHEAD = 0.1


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


def clock_state(tc, clock):
    """Return (seconds, stones) on a colour's clock under time control tc: as time_left last
    said or as charged kept it since, else the time settings' start (stones 0 in main time;
    in Japanese byo-yomi the periods left, as kgsGtp sends them)."""
    if clock.known:
        return clock.seconds, clock.stones
    if tc.main > 0:
        return tc.main, 0
    return tc.byo_time, max(tc.byo_periods if tc.byo_periods > 0 else tc.byo_stones, 1)


def move_allowance(tc, left, stones, lag_buffer, empty_points, previous_winrate=None):
    """Return a timed move's MoveTime with `left` seconds and `stones` on the mover's clock
    (as clock_state gives them) under time control tc, on a board with empty_points empty.

    In main time the normal share is the time left over the moves still to come (a third
    of the empty points, at least 20) plus one byo-yomi period's share per move, and a move
    left unclear may take up to EXTEND_SHARES main-time shares. In Japanese byo-yomi a
    move has its period; in a canadian period a move may take up to twice its share while
    it keeps half the period for the rest (the last stone is never stretched). Always
    lag_buffer and MOVE_OVERHEAD short of what the clock holds, counting the first
    overtime period when main time runs out during the move."""
    lag = lag_buffer + MOVE_OVERHEAD
    if stones > 0 and tc.byo_periods > 0:
        # Japanese byo-yomi: kgsGtp sends the periods left as the stones; each move may
        # use the whole current period.
        normal = max(MIN_MOVE_SECONDS, left - lag)
        return MoveTime(normal, normal, previous_winrate)
    if stones > 0:
        normal = max(MIN_MOVE_SECONDS, left / stones - lag)
        if stones == 1:
            return MoveTime(normal, normal, previous_winrate)
        # The stones after this one each keep their lag and the shortest search.
        rest = (stones - 1) * (lag + MIN_MOVE_SECONDS)
        longest = min(2 * normal, (left - lag) / 2, left - lag - rest)
        return MoveTime(normal, max(normal, longest), previous_winrate)
    # Empty points rather than legal moves: the budget is needed before the jitted rules
    # are sure to be compiled (see Player._wait_for_warmup).
    moves_left = max(20, empty_points // 3)
    per_byo = 0.0
    if tc.byo_time > 0:
        per_byo = tc.byo_time if tc.byo_periods > 0 else tc.byo_time / max(tc.byo_stones, 1)
        share = left / moves_left
    else:   # absolute time: every move still to come will lose its lag too
        share = max(0.0, left - moves_left * lag) / moves_left
    ceiling = left + per_byo - lag
    if ceiling <= 0:
        return MoveTime(MIN_MOVE_SECONDS, MIN_MOVE_SECONDS, previous_winrate)
    normal = max(MIN_MOVE_SECONDS, min(share + max(0.0, per_byo - lag), ceiling))
    longest = max(normal, min(EXTEND_SHARES * share + max(0.0, per_byo - lag), ceiling))
    return MoveTime(normal, longest, previous_winrate)


def charged(tc, clock, seconds):
    """Return the Clock after a move of `seconds` on `clock` under a time control tc with a
    limit: main time first, then the overtime the settings give (a Japanese period used up by
    a move that overran it, a canadian period's stones counted down and the period renewed
    when they are played)."""
    left, stones = clock_state(tc, clock)
    periods = tc.byo_periods > 0
    if stones == 0:
        left -= seconds
        if left >= 0 or tc.byo_time <= 0:
            return Clock(max(0.0, left), 0, True)
        # Main time ran out during the move: the rest of it came out of overtime.
        seconds, left = -left, tc.byo_time
        stones = tc.byo_periods if periods else tc.byo_stones
    if periods:
        while seconds > tc.byo_time and stones > 0:
            seconds -= tc.byo_time
            stones -= 1
        return Clock(tc.byo_time if stones else 0.0, stones, True)
    left, stones = left - seconds, stones - 1
    if stones <= 0 and left >= 0:
        left, stones = tc.byo_time, tc.byo_stones
    return Clock(max(0.0, left), max(stones, 1) if left > 0 else 0, True)
