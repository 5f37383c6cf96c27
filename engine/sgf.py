"""SGF in and out through sgfmill, and the ASCII board for showboard.

load_game replays an SGF main line (setup stones, handicap, komi, passes) with full legality
checks into a new Game; any problem raises SgfError and nothing else changes. Of a collection
(several games in one file) it loads the first game. Files over MAX_SGF_BYTES and main lines
over MAX_SGF_MOVES are refused: every move keeps a board copy for undo (about 60 KB on 19x19),
so 10,000 moves would take 600 MB.
"""
import logging
import os

from sgfmill import sgf

from engine import board as bd
from engine.game import COLUMNS, Game, IllegalMove, Rules

log = logging.getLogger("sgf")

MAX_SGF_BYTES = 16 << 20
MAX_SGF_MOVES = 2000       # long past any real game (a 19x19 game rarely reaches 400 moves)
_SGF_COLOR = {"b": bd.BLACK, "w": bd.WHITE}


class SgfError(ValueError):
    """An SGF file that cannot be loaded; str() says why."""


def _read(path):
    too_large = f"file too large (the limit is {MAX_SGF_BYTES >> 20} MiB)"
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size > MAX_SGF_BYTES:   # refused before reading
                raise SgfError(too_large)
            data = f.read(MAX_SGF_BYTES + 1)    # what fstat does not size: /dev/zero, a pipe
    except OSError as exc:
        raise SgfError(f"cannot read {path}: {exc.strerror}") from None
    if len(data) > MAX_SGF_BYTES:
        raise SgfError(too_large)
    try:
        return sgf.Sgf_game.from_bytes(data)
    except ValueError as exc:
        raise SgfError(f"not a valid SGF file: {exc}") from None


def load_game(path, move_number=None, strict_superko=False):
    """Return a Game holding the SGF's (first game's) main line up to (not including) move
    move_number, with that move's colour to play (setup stones on the way are placed);
    SgfError says why a file cannot be loaded."""
    record = _read(path)
    size = record.get_size()
    if not bd.MIN_SIZE <= size <= bd.MAX_SIZE:
        raise SgfError(f"board size {size} not supported ({bd.MIN_SIZE}..{bd.MAX_SIZE})")
    root = record.get_root()
    try:
        komi = record.get_komi()
    except ValueError:
        raise SgfError("bad KM property") from None
    game = Game(size, Rules(komi=komi, strict_superko=strict_superko))
    try:
        _apply_setup(game, root)
        settled = False
        limit = None if move_number is None else move_number - 1
        for node in record.get_main_sequence()[1:]:
            at_limit = limit is not None and len(game.moves) >= limit
            # Setup stones before the first move are the starting position; later ones, not
            # supported, are refused only where they are loaded.
            if node.has_setup_stones() and not (at_limit and game.moves):
                _apply_setup(game, node)
            colour, move = node.get_move()
            if colour is None:
                if node.has_property("PL") and not at_limit:    # game_to_sgf's last node
                    game.to_play = _SGF_COLOR[node.get("PL")]
                continue
            if not settled:
                _settle_setup(game, root)
                settled = True
            if at_limit:
                game.to_play = _SGF_COLOR[colour]     # the move the position stands before
                break
            if len(game.moves) == MAX_SGF_MOVES:
                raise SgfError(f"more than {MAX_SGF_MOVES} moves (loadsgf FILE MOVE_NUMBER "
                               "loads the moves before MOVE_NUMBER)")
            point = bd.PASS if move is None else _point(game, move)
            if game.play(_SGF_COLOR[colour], point, superko=strict_superko):
                log.warning("SGF move %d repeats an earlier position", len(game.moves))
        if not settled:
            _settle_setup(game, root)
        if root.has_property("PL") and not game.moves:
            game.to_play = _SGF_COLOR[root.get("PL")]
    except IllegalMove as exc:
        raise SgfError(f"illegal move {len(game.moves) + 1}: {exc}") from None
    except SgfError:
        raise
    except (ValueError, KeyError) as exc:
        raise SgfError(f"bad SGF property: {exc}") from None
    game.board.info[bd.TO_PLAY] = game.to_play
    return game


def _settle_setup(game, root):
    """Read what the setup stones before the first move make, in the root or the nodes after
    it: a handicap (HA, when Black's stones are the whole setup) with White to move."""
    if root.has_property("HA") and game.setup and all(c == bd.BLACK for c, _ in game.setup):
        game.handicap = int(root.get("HA"))
        if game.handicap:
            game.to_play = bd.WHITE


def _point(game, move):
    row, col = move
    if not (0 <= row < game.size and 0 <= col < game.size):
        raise SgfError("move off the board")
    return game.point(col, row)


def _apply_setup(game, node):
    black, white, empty = node.get_setup_stones()
    if empty:
        raise SgfError("AE (removing stones) is not supported")
    if game.moves and (black or white):
        raise SgfError("setup stones after the first move are not supported")
    for colour, stones in ((bd.BLACK, black), (bd.WHITE, white)):
        for move in sorted(stones):
            game.place_setup(colour, _point(game, move))


def game_to_sgf(game, black_name="", white_name="", result=None, rules="Chinese"):
    """Return the game so far as SGF text with SZ, KM, HA, RU (the rules the result was
    counted by), RE, PB and PW where a player's name is given, and PL where the side to move is
    not the one the moves give (after loadsgf FILE N of moves that do not alternate, setup
    stones with White to move): in the root before any move, else in a last node of its own,
    where loadsgf reads it back."""
    record = sgf.Sgf_game(size=game.size)
    root = record.get_root()
    root.set("KM", game.rules.komi)
    root.set("RU", rules)
    if game.handicap:
        root.set("HA", game.handicap)
    if black_name:
        root.set("PB", black_name)
    if white_name:
        root.set("PW", white_name)
    if result:
        root.set("RE", result)
    black = {_sgf_move(game, p) for c, p in game.setup if c == bd.BLACK}
    white = {_sgf_move(game, p) for c, p in game.setup if c == bd.WHITE}
    if black or white:
        root.set_setup_stones(black, white)
    for color, point in game.moves:
        node = record.extend_main_sequence()
        node.set_move("b" if color == bd.BLACK else "w",
                      None if point == bd.PASS else _sgf_move(game, point))
    natural = 3 - game.moves[-1][0] if game.moves else (bd.WHITE if game.handicap else bd.BLACK)
    if game.to_play != natural:
        node = record.extend_main_sequence() if game.moves else root
        node.set("PL", "b" if game.to_play == bd.BLACK else "w")
    return record.serialise().decode("utf-8")


def _sgf_move(game, point):
    x, y = game.xy(point)
    return (y, x)


def ascii_board(game):
    """Return the board as text rows with GTP coordinates, X black, O white, last move marked."""
    size = game.size
    letters = COLUMNS[:size]
    last = game.moves[-1][1] if game.moves else None
    last_xy = game.xy(last) if last not in (None, bd.PASS) else None
    lines = ["    " + " ".join(letters)]
    for y in range(size - 1, -1, -1):
        row = ""
        for x in range(size):
            if last_xy == (x, y):
                sep = "("
            elif last_xy == (x - 1, y):
                sep = ")"
            else:
                sep = " "
            row += sep + ".XO"[game.color_at(game.point(x, y))]
        row += ")" if last_xy == (size - 1, y) else " "
        lines.append(f"{y + 1:2d} {row}{y + 1:2d}")
    lines.append("    " + " ".join(letters))
    b_caps = int(game.board.info[bd.CAPTURED_BY_BLACK])
    w_caps = int(game.board.info[bd.CAPTURED_BY_WHITE])
    compensation = game.scoring_komi - game.rules.komi
    extra = f" (+{compensation:g} for the handicap)" if compensation else ""
    lines.append(f"komi {game.rules.komi:g}{extra}; captured by black {b_caps}, by white "
                 f"{w_caps}; {'black' if game.to_play == bd.BLACK else 'white'} to move")
    return "\n".join(lines)
