"""Game history on top of engine.board: positional superko, undo, handicap, moves and scoring.

The board knows the position; a Game knows how it got there: every position hash since the
start (for positional superko), the move list (for undo, SGF and features), komi, handicap and
the rules. All methods raise IllegalMove or ValueError and leave the game unchanged on bad input.
"""
from dataclasses import dataclass

from engine import board as bd

COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # GTP skips I
HANDICAP_NONE, HANDICAP_STONES, HANDICAP_STONES_BUT_ONE = "none", "stones", "stones_but_one"


class IllegalMove(ValueError):
    """A move the rules refuse; str() is the reason."""


@dataclass(frozen=True)
class Rules:
    """Rule settings: komi, whether the opponent's superko repetitions are refused, and the
    points White gets at the count for Black's handicap stones: HANDICAP_STONES (one a stone:
    KGS's chinese, GNU Go's and Pachi's Chinese count), HANDICAP_STONES_BUT_ONE (one for each
    but the first: KGS's aga, and japanese, where it brings the area count to KGS's territory
    count) or HANDICAP_NONE (KGS's new_zealand)."""
    komi: float = 7.5
    strict_superko: bool = False
    handicap_compensation: str = HANDICAP_NONE

    def __post_init__(self):
        if self.handicap_compensation not in (HANDICAP_NONE, HANDICAP_STONES,
                                              HANDICAP_STONES_BUT_ONE):
            raise ValueError(f"unknown handicap compensation {self.handicap_compensation!r}")
        # Always a float: the jitted scoring and playouts compile once per argument type, and
        # an int komi (Rules(komi=7)) would compile them all again.
        object.__setattr__(self, "komi", float(self.komi))


def color_from_text(text):
    """Return BLACK or WHITE for a GTP colour ('b', 'black', 'w', 'white', any case)."""
    t = text.lower()
    if t in ("b", "black"):
        return bd.BLACK
    if t in ("w", "white"):
        return bd.WHITE
    raise ValueError(f"invalid color {text!r}")


def color_name(color):
    """Return 'B' or 'W'."""
    return "B" if color == bd.BLACK else "W"


def vertex_to_xy(text, size):
    """Return (x, y) for a GTP vertex like 'D4', or None for 'pass'; ValueError if malformed."""
    t = text.strip().upper()
    if t == "PASS":
        return None
    if len(t) < 2 or t[0] not in COLUMNS[:size] or not t[1:].isdigit():
        raise ValueError(f"invalid vertex {text!r}")
    x = COLUMNS.index(t[0])
    y = int(t[1:]) - 1
    if not 0 <= y < size:
        raise ValueError(f"invalid vertex {text!r}")
    return x, y


def xy_to_vertex(x, y):
    """Return the GTP vertex text of column x, row y."""
    return f"{COLUMNS[x]}{y + 1}"


def handicap_points(size, stones):
    """Return the (x, y) points of GTP's fixed handicap; ValueError when not allowed."""
    max_stones = 4 if size == 7 or size % 2 == 0 else 9
    if size < 7 or not 2 <= stones <= max_stones:
        raise ValueError("invalid handicap")
    edge = 3 if size >= 13 else 2
    lo, hi, mid = edge, size - 1 - edge, size // 2
    corners = [(lo, lo), (hi, hi), (lo, hi), (hi, lo)]
    sides = [(lo, mid), (hi, mid)]
    top_bottom = [(mid, lo), (mid, hi)]
    centre = [(mid, mid)]
    table = {
        2: corners[:2], 3: corners[:3], 4: corners,
        5: corners + centre, 6: corners + sides, 7: corners + sides + centre,
        8: corners + sides + top_bottom, 9: corners + sides + top_bottom + centre,
    }
    return table[stones]


class Game:
    """A game in progress: board, history, to-move, handicap and rules."""

    def __init__(self, size=19, rules=Rules()):
        self.size = size
        self.rules = rules
        self.board = bd.new_board(size)
        self.moves = []            # (color, point) in order; point is bd.PASS for a pass
        self.setup = []            # (color, point) placed before the first move
        self.handicap = 0
        self.to_play = bd.BLACK
        self._hashes = []          # position hash after the start and after every move
        self._hash_counts = {}
        self._record_hash()
        self._snapshots = []       # (board copy, to_play, hash count) before each move

    # Coordinates -----------------------------------------------------------------------
    def point(self, x, y):
        """Return the flat board index of column x, row y."""
        return (y + 1) * (self.size + 2) + x + 1

    def xy(self, p):
        """Return (x, y) of a flat board index."""
        w = self.size + 2
        return p % w - 1, p // w - 1

    def parse_vertex(self, text):
        """Return the point for a GTP vertex or bd.PASS; ValueError if malformed or off board."""
        xy = vertex_to_xy(text, self.size)
        return bd.PASS if xy is None else self.point(*xy)

    def vertex(self, p):
        """Return the GTP text of a point ('pass' for bd.PASS)."""
        return "pass" if p == bd.PASS else xy_to_vertex(*self.xy(p))

    def on_board_points(self):
        """Return every on-board point in row-major order from the bottom-left."""
        return [self.point(x, y) for y in range(self.size) for x in range(self.size)]

    # Rules ---------------------------------------------------------------------------
    def color_at(self, p):
        """Return EMPTY, BLACK or WHITE at a point."""
        return int(self.board.stones[p])

    def repeats_position(self, p, color):
        """Return True if the legal move p by color would recreate an earlier position."""
        if p == bd.PASS:
            return False
        return int(bd.hash_after(self.board, p, color)) in self._hash_counts

    def _record_hash(self):
        h = int(self.board.info[bd.HASH])
        self._hashes.append(h)
        self._hash_counts[h] = self._hash_counts.get(h, 0) + 1

    def _forget_hashes(self, keep):
        while len(self._hashes) > keep:
            h = self._hashes.pop()
            self._hash_counts[h] -= 1
            if not self._hash_counts[h]:
                del self._hash_counts[h]

    def is_legal(self, p, color, superko=True):
        """Return True if color may play p (suicide, simple ko and, if asked, superko)."""
        if not bd.is_legal(self.board, p, color):
            return False
        return not (superko and self.repeats_position(p, color))

    def legal_moves(self, color, superko=True):
        """Return all legal board points for color (no pass)."""
        return [p for p in self.on_board_points()
                if bd.is_legal(self.board, p, color)
                and not (superko and self.repeats_position(p, color))]

    def play(self, color, p, superko=True):
        """Play color at p; return True if it repeated an earlier position (allowed only when
        superko is False). Raises IllegalMove with the reason, leaving the game unchanged."""
        repeats = self.repeats_position(p, color) if bd.is_legal(self.board, p, color) else False
        if repeats and superko:
            raise IllegalMove("positional superko")
        snapshot = (bd.copy_board(self.board), self.to_play, len(self._hashes))
        status = bd.play(self.board, p, color)
        if status != bd.OK:
            reason = {bd.OCCUPIED: "occupied point", bd.SUICIDE: "suicide", bd.KO: "ko",
                      bd.OFF_BOARD: "off board"}[status]
            raise IllegalMove(reason)
        self._snapshots.append(snapshot)
        self.moves.append((color, p))
        self._record_hash()
        self.to_play = 3 - color
        return repeats

    def undo(self):
        """Take back the last move; raises IndexError if there is none."""
        if not self._snapshots:
            raise IndexError("cannot undo")
        self.board, self.to_play, count = self._snapshots.pop()
        self._forget_hashes(count)
        self.moves.pop()

    def place_setup(self, color, p):
        """Put a setup stone before play starts; raises IllegalMove if it cannot stand there."""
        status = bd.place_stone(self.board, p, color)
        if status != bd.OK:
            raise IllegalMove("occupied point" if status == bd.OCCUPIED else "illegal setup stone")
        self.setup.append((color, p))
        if not self.moves:
            # Setup builds one starting position: its partial stages never occurred in the
            # game, so they must not count for positional superko.
            self._forget_hashes(len(self._hashes) - 1)
        self._record_hash()

    def set_handicap(self, points):
        """Place black handicap stones on an empty board, white to move; ValueError otherwise."""
        if self.moves or self.setup:
            raise ValueError("board not empty")
        # Checked before the first stone goes down, so a bad list leaves the board empty. On an
        # empty board any on-board point is legal unless the stones would fill the whole board.
        if (len(set(points)) != len(points) or not 2 <= len(points) < self.size ** 2
                or any(p == bd.PASS or not bd.is_legal(self.board, p, bd.BLACK) for p in points)):
            raise ValueError("bad handicap stones")
        for p in points:
            self.place_setup(bd.BLACK, p)
        self.handicap = len(points)
        self.to_play = bd.WHITE
        self.board.info[bd.TO_PLAY] = bd.WHITE

    def last_two_passed(self):
        """Return True if the last two moves were passes."""
        return len(self.moves) >= 2 and self.moves[-1][1] == bd.PASS and self.moves[-2][1] == bd.PASS

    @property
    def scoring_komi(self):
        """Return the komi plus the handicap compensation of the rules: what the count, the
        playouts and the search's win rates take from Black's area."""
        if self.rules.handicap_compensation == HANDICAP_STONES:
            return self.rules.komi + self.handicap
        if self.rules.handicap_compensation == HANDICAP_STONES_BUT_ONE:
            return self.rules.komi + max(self.handicap - 1, 0)
        return self.rules.komi

    def tromp_taylor_score(self):
        """Return black minus white area minus the scoring komi, counting every stone on the
        board alive."""
        return float(bd.area_score(self.board, self.scoring_komi))
