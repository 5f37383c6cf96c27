"""A match's settings and its records: which engine plays which colour in each game, the
results file (one JSON line a game, appended as games end and read back to resume a match) with
the lock that keeps it to one runner, final_score's results in SGF's form, and each game's SGF
file."""

import contextlib
import dataclasses
import json
import os
import re

try:
    import fcntl
except ImportError:     # Windows: no lock on the results file
    fcntl = None
from sgfmill import sgf

from benchmarks.time_control import TimeSystem
from engine.game import handicap_points

_SCORE = re.compile(r"([BW])\+(\d+(?:\.\d*)?)$", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class MatchConfig:
    """The settings of one match, as given on the command line."""

    engine_a: str
    engine_b: str
    games: int
    size: int
    komi: float
    sgf_dir: str
    results: str
    referee: str | None
    parallel: int
    max_moves: int
    alternate: bool
    timeout: float
    sprt: tuple[float, float] | None = None
    sprt_alpha: float = 0.05
    sprt_beta: float = 0.05
    plot: str | None = None
    clock: TimeSystem | None = None
    handicap: int = 0
    keep_engines: bool = False


def handicap_stones(size: int, stones: int) -> list[tuple[int, int]]:
    """Return GTP's fixed handicap points as sgfmill (row, col), none for 0 stones; ValueError
    when the board cannot take that many (GTP: 2-9 on odd sizes from 9, 2-4 on 7x7 and even
    sizes, none below 7)."""
    if stones == 0:
        return []
    # sgfmill counts rows from the bottom, as the engine counts y.
    return [(y, x) for x, y in handicap_points(size, stones)]


def first_mover(handicap: int) -> str:
    """Return the sgfmill colour that makes a game's first move: White after a handicap."""
    return "w" if handicap else "b"


def engines_for_game(config: MatchConfig, index: int) -> tuple[str, str, str]:
    """Return (black command, white command, letter of the engine playing black) for game index.

    '{game}' in a command becomes the game index, so that deterministic engines can be given a
    different seed in every game (e.g. `gtp_main.py --seed {game}`).
    """
    a = config.engine_a.replace("{game}", str(index))
    b = config.engine_b.replace("{game}", str(index))
    if config.alternate and index % 2 == 1:
        return b, a, "B"
    return a, b, "A"


def clock_name(config: MatchConfig) -> str | None:
    """Return the match's time control as the GTP command that sets it, None when untimed."""
    return None if config.clock is None else config.clock.gtp()


def parse_score(text: str) -> tuple[str | None, str] | None:
    """Return (winner colour, None for a draw; SGF result) for a final_score answer, or None."""
    text = text.strip()
    if text == "0":
        return None, "0"
    match = _SCORE.match(text)
    if match is None:
        return None
    winner = match.group(1).upper()
    return winner, f"{winner}+{float(match.group(2)):g}"


def result_margin(result: str) -> float | None:
    """Return the points of a counted win ('B+3.5' -> 3.5), None for a win without a count
    ('W+R', 'B+Time') or a result that names no winner."""
    match = _SCORE.match(result)
    return None if match is None else float(match.group(2))


class ResultsFileError(Exception):
    """The results file belongs to a different match."""


def read_results(path: str) -> list[dict]:
    """Return the records of a JSON-lines results file in order, none when it does not exist."""
    records = []
    if not os.path.exists(path):
        return records
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                # A line cut short when a run was killed mid-write; that game is replayed.
                continue
    return records


def load_results(config: MatchConfig) -> dict[int, dict]:
    """Return finished games by index; raise ResultsFileError if the file has other engines'."""
    records: dict[int, dict] = {}
    for record in read_results(config.results):
        index = record["index"]
        if index >= config.games:
            continue
        black, white, _ = engines_for_game(config, index)
        if (record["black"], record["white"]) != (black, white):
            raise ResultsFileError(f"{config.results} holds game {index} between other "
                                   "engines; use another --results file")
        if record.get("clock") != clock_name(config):
            raise ResultsFileError(f"{config.results} holds game {index} played under another "
                                   "clock; use another --results file")
        if record.get("handicap", 0) != config.handicap:
            raise ResultsFileError(f"{config.results} holds game {index} played with another "
                                   "handicap; use another --results file")
        records[index] = record
    return records


def append_result(path: str, record: dict) -> None:
    """Return after appending record to the results file as one JSON line, creating its
    folder if need be (a fresh checkout has no runs/)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        handle.seek(0, os.SEEK_END)
        # Start on a fresh line if a killed run left the last one unfinished.
        if handle.tell() > 0:
            handle.seek(handle.tell() - 1)
            if handle.read(1) != "\n":
                handle.write("\n")
        handle.write(json.dumps(record) + "\n")


@contextlib.contextmanager
def sole_runner(results: str):
    """Hold an exclusive lock beside the results file while the block runs; raise
    ResultsFileError if another runner holds it. Two runners resuming the same match would
    play the same games twice and both record them."""
    with open(results + ".lock", "a") as handle:
        if fcntl is not None:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ResultsFileError(f"another match runner is playing into {results}; "
                                       "stop it, or wait for it to finish") from None
        yield


def write_sgf(path: str, config: MatchConfig, names: dict[str, str], moves: list, result: str,
              game_comment: list[str], comments: dict[int, str]) -> None:
    """Return after writing the game to path: the players' names by sgfmill colour, komi, the
    handicap, the result, game_comment's lines (how the game ended, then the runner's notes),
    and each move's comment by move number (0 for the first; the search line its engine
    logged: darkgo's playouts, win rate, top moves)."""
    game = sgf.Sgf_game(config.size)
    root = game.get_root()
    root.set("KM", config.komi)
    if config.handicap:
        root.set("HA", config.handicap)
        root.set_setup_stones(handicap_stones(config.size, config.handicap), [])
    root.set("PB", names["b"])
    root.set("PW", names["w"])
    root.set("RE", result)
    root.set("GC", "\n".join(game_comment))
    for number, (colour, move) in enumerate(moves):
        node = game.extend_main_sequence()
        node.set_move(colour, move)
        if number in comments:
            node.set("C", comments[number])
    with open(path, "wb") as handle:
        handle.write(game.serialise())
