"""Play a match between two GTP engines: SGF files, a results file, a JSON summary printed last.

Engine A is the one given as --black, engine B the one given as --white; with alternation (the
default) they swap colours in odd-numbered games. Games already in the results file are skipped,
so rerunning an interrupted match resumes it.

With --clock the games are played under a time control that the runner keeps, as a server or
gogui-twogtp keeps it: each engine is told the time settings as kgsGtp tells them
(`kgs-time_settings`, `time_settings` for absolute time; an engine that refuses that gets the
plain `time_settings`) and before every genmove `time_left` as kgsGtp sends it; an answer is charged its wall time from genmove to the answer, and the engine whose clock runs
out loses the game on time. Equal-time matches between engines that need different numbers of
playouts for the same work are played so (give each engine a --rollouts cap it will not reach).
Every record keeps each side's time used, its slowest answer and its clock at the end.

With --handicap N every game starts from GTP's fixed handicap of N stones, as a server's
handicap game does: each engine (and the referee) is sent `fixed_handicap N` after the komi and
must answer with the standard points, Black's stones stand on the board and White moves first.
The SGF records them (HA, AB). Give --komi as the server would (KGS: 0.5); how the handicap is
compensated at the count is the referee's rules'.
"""

import argparse
import concurrent.futures
import contextlib
import dataclasses
import json
import math
import os
import re
import shlex
import shutil
import sys
import threading
import time

try:
    import fcntl
except ImportError:     # Windows: no lock on the results file
    fcntl = None
from sgfmill import boards, common, sgf

from benchmarks.gtp_client import EngineError, EngineTimeout, GtpEngine, Response
from benchmarks.time_control import SYSTEMS, GameClock, TimeSystem, time_system
from engine.game import handicap_points

_SCORE = re.compile(r"([BW])\+(\d+(?:\.\d*)?)$", re.IGNORECASE)
_ROLE_NAME = {"b": "black", "w": "white", "referee": "referee"}
# Under a clock a genmove is awaited this long past the moment its time ran out, so that a late
# answer is still read and measured; the game is lost either way.
CLOCK_GRACE = 10.0
# darkgo's stderr line after each genmove; other engines' logs simply give no comments.
_SEARCH_LOG = re.compile(
    r"gtp INFO (\d+ playouts in [^;]*; win rate [\d.]+; top: [^;\n]*(?:; pv [^;\n]*)?)")


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


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Return the Wilson score interval for successes out of n trials; (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def elo_from_score(p: float) -> float:
    """Return the Elo difference whose expected score is p (0 < p < 1): -400*log10(1/p - 1)."""
    return -400 * math.log10(1 / p - 1)


def elo_estimate(points: float, n: int) -> dict | None:
    """Return A's Elo over B with its 95% interval from points (draws as half) in n games.

    The interval is the Wilson interval of the score mapped through elo_from_score. A score of
    0 or 1 (and a Wilson bound there) would be an infinite Elo, so every score is first clamped
    into [0.5/(n+1), 1 - 0.5/(n+1)], the score that one more drawn game would give; "clamped"
    says whether that happened, and then the figure is a rough bound, not an estimate. None when
    n is 0.
    """
    if n == 0:
        return None
    eps = 0.5 / (n + 1)
    low, high = wilson_interval(points, n)
    scores = [points / n, low, high]
    clamped = [min(max(p, eps), 1 - eps) for p in scores]
    # Adding 0.0 turns a -0.0 into 0.0, which prints without a sign.
    elo, elo_low, elo_high = (round(elo_from_score(p), 1) + 0.0 for p in clamped)
    return {"elo": elo, "ci95": [elo_low, elo_high], "clamped": clamped != scores}


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Return Wald's (lower, upper) LLR bounds: log(beta/(1-alpha)), log((1-beta)/alpha)."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def sprt_llr(scores: list[float], elo0: float, elo1: float) -> float:
    """Return the log-likelihood ratio of H1 (A is elo1 better) over H0 (elo0) for game scores.

    The simple Bernoulli model with logistic Elo: each game's score x is 1 for a win of A, 0
    for a loss and 0.5 for a draw (jigo), which counts as half a win and half a loss, and adds
    x*log(p1/p0) + (1-x)*log(q1/q0) with p = 1/(1 + 10**(-elo/400)) and q = 1 - p. Neither
    cutechess's trinomial (BayesElo) model nor fishtest's GSPRT: draws are rare in Go.
    """
    p0 = 1 / (1 + 10 ** (-elo0 / 400))
    p1 = 1 / (1 + 10 ** (-elo1 / 400))
    win, loss = math.log(p1 / p0), math.log((1 - p1) / (1 - p0))
    return sum(x * win + (1 - x) * loss for x in scores)


def sprt_decide(scores: list[float], elo0: float, elo1: float, alpha: float = 0.05,
                beta: float = 0.05) -> dict:
    """Return the SPRT's state after the games' scores in the order they finished.

    The test is evaluated after each game; the decision is the first bound crossed ('H1' at the
    upper, 'H0' at the lower, else 'undecided'), with the number of games at that point. "llr" is
    over all the scores, which includes games that were still running when the test stopped.
    """
    lower, upper = sprt_bounds(alpha, beta)
    decision, decided_after = "undecided", None
    for n in range(1, len(scores) + 1):
        llr = sprt_llr(scores[:n], elo0, elo1)
        if llr >= upper or llr <= lower:
            decision, decided_after = ("H1" if llr >= upper else "H0"), n
            break
    return {"elo0": elo0, "elo1": elo1, "alpha": alpha, "beta": beta,
            "bounds": [round(lower, 4), round(upper, 4)],
            "llr": round(sprt_llr(scores, elo0, elo1), 4), "decision": decision,
            "decided_after": decided_after, "games": len(scores)}


def game_score(record: dict) -> float | None:
    """Return engine A's score in a finished game (1, 0.5 for a draw, 0), None if unscored."""
    if record["winner_engine"] is not None:
        return 1.0 if record["winner_engine"] == "A" else 0.0
    return 0.5 if record["scored"] and record["winner"] is None else None


def sprt_scores(records: list[dict]) -> list[float]:
    """Return A's scores of the records' scored games, in the records' order."""
    return [x for x in map(game_score, records) if x is not None]


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


def opponent(colour: str) -> str:
    """Return the other sgfmill colour."""
    return "w" if colour == "b" else "b"


class ResultsFileError(Exception):
    """The results file belongs to a different match."""


class Abandoned(Exception):
    """The match was interrupted; the game in progress is not recorded."""


class EngineFault(Exception):
    """An engine lost the game, or the referee could not score it; code is the SGF reason letter."""

    def __init__(self, role: str, code: str, reason: str):
        super().__init__(reason)
        self.role = role
        self.code = code
        self.reason = reason


@dataclasses.dataclass
class Player:
    """One engine in one game, with the faults charged to it."""

    role: str
    engine: GtpEngine | None
    name: str
    illegal_moves: int = 0
    protocol_errors: int = 0
    log_path: str | None = None
    log_offset: int = 0
    clock: GameClock | None = None
    slowest_s: float = 0.0
    # SGF comments on the player's moves, by move number (0 for the game's first move).
    comments: dict[int, str] = dataclasses.field(default_factory=dict)

    def read_search_comment(self) -> str | None:
        """Return the last search line the engine logged since the last call, None if none.

        darkgo logs it before it answers genmove, so it is in the file once the answer is read.
        """
        if self.log_path is None:
            return None
        try:
            with open(self.log_path, "rb") as handle:
                handle.seek(self.log_offset)
                data = handle.read()
        except OSError:
            return None
        # Only whole lines: a line still being written is read next time.
        data = data[:data.rfind(b"\n") + 1]
        self.log_offset += len(data)
        found = _SEARCH_LOG.findall(data.decode("utf-8", "replace"))
        return found[-1].strip() if found else None


@dataclasses.dataclass
class Outcome:
    """How a game ended: winner is 'B', 'W' or None (a draw when scored, else unscored)."""

    winner: str | None
    result: str
    reason: str
    scored: bool = True
    scores: dict[str, str] = dataclasses.field(default_factory=dict)
    disagree: bool = False


def clock_report(player: Player) -> dict:
    """Return what a player's clock says at the game's end: seconds charged, the slowest answer,
    the clock's state and whether it ran out."""
    clock = player.clock
    return {"used_s": round(clock.used, 3), "slowest_s": round(player.slowest_s, 3),
            "lost": clock.lost, **clock.state()}


def write_sgf(path: str, config: MatchConfig, players: dict[str, Player], moves: list,
              outcome: Outcome, notes: list[str]) -> None:
    """Return after writing the game to path: names, komi, result and its reason, and as each
    move's comment the search line its engine logged (darkgo's playouts, win rate, top moves)."""
    game = sgf.Sgf_game(config.size)
    root = game.get_root()
    root.set("KM", config.komi)
    if config.handicap:
        root.set("HA", config.handicap)
        root.set_setup_stones(handicap_stones(config.size, config.handicap), [])
    root.set("PB", players["b"].name)
    root.set("PW", players["w"].name)
    root.set("RE", outcome.result)
    root.set("GC", "\n".join([outcome.reason] + notes))
    comments = {**players["b"].comments, **players["w"].comments}
    for number, (colour, move) in enumerate(moves):
        node = game.extend_main_sequence()
        node.set_move(colour, move)
        if number in comments:
            node.set("C", comments[number])
    with open(path, "wb") as handle:
        handle.write(game.serialise())


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
    """Return after appending record to the results file as one JSON line."""
    with open(path, "a+", encoding="utf-8") as handle:
        handle.seek(0, os.SEEK_END)
        # Start on a fresh line if a killed run left the last one unfinished.
        if handle.tell() > 0:
            handle.seek(handle.tell() - 1)
            if handle.read(1) != "\n":
                handle.write("\n")
        handle.write(json.dumps(record) + "\n")


class MatchRunner:
    """Plays a match's games on worker threads, appending each to the results file as it ends."""

    def __init__(self, config: MatchConfig, finished: int, scores: list[float] | None = None):
        self.config = config
        self.finished = finished
        self._lock = threading.Lock()
        self._stopped = False
        self._live: set[GtpEngine] = set()
        # A's scores in finishing order, for the SPRT; decided once a bound has been crossed.
        self.scores = list(scores or [])
        self.decided = self._sprt_decided()

    def _sprt_decided(self) -> bool:
        """Return whether --sprt is on and its test has crossed a bound on the scores so far."""
        if self.config.sprt is None:
            return False
        elo0, elo1 = self.config.sprt
        state = sprt_decide(self.scores, elo0, elo1, self.config.sprt_alpha,
                            self.config.sprt_beta)
        return state["decision"] != "undecided"

    def stop(self) -> None:
        """Return after every running engine is killed; games in progress then end unrecorded."""
        with self._lock:
            self._stopped = True
            live = list(self._live)
        for engine in live:
            engine.kill()

    def _check_stopped(self) -> None:
        """Return if the match goes on; raise Abandoned once it is stopped."""
        if self._stopped:
            raise Abandoned

    def _start(self, role: str, command: str, log_path: str) -> Player:
        """Return a Player whose engine is running; raise EngineFault if it cannot start."""
        with self._lock:
            self._check_stopped()
            try:
                engine = GtpEngine(command, log_path)
            except OSError as exc:
                reason = f"{_ROLE_NAME[role]} engine could not start: {exc}"
                raise EngineFault(role, "F", reason) from None
            self._live.add(engine)
        return Player(role, engine, command, log_path=log_path)

    def _name(self, player: Player, notes: list[str]) -> None:
        """Return after naming the player from its name and version answers, if it gives them."""
        name = self._ask(player, "name", notes)
        version = self._ask(player, "version", notes)
        if name.ok and name.text:
            player.name = f"{name.text} {version.text}".strip() if version.ok else name.text

    def _close(self, player: Player) -> None:
        """Return once the player's engine has exited."""
        with self._lock:
            self._live.discard(player.engine)
        player.engine.close()

    def _ask(self, player: Player, command: str, notes: list[str],
             timeout: float | None = None) -> Response:
        """Return the answer, counting protocol problems; raise EngineFault if it has no status.
        The engine may take timeout seconds (default --timeout-per-move) before it is killed."""
        self._check_stopped()
        who = _ROLE_NAME[player.role]
        try:
            response = player.engine.send(command, timeout or self.config.timeout)
        except EngineTimeout as exc:
            self._check_stopped()
            raise EngineFault(player.role, "T", f"{who} timed out on '{command}': {exc}") from None
        except EngineError as exc:
            self._check_stopped()
            raise EngineFault(player.role, "F", f"{who} failed on '{command}': {exc}") from None
        if response.malformed:
            player.protocol_errors += 1
            notes.append(f"{who} protocol error on '{command}': {'; '.join(response.problems)}")
        if response.ok is None:
            reason = f"{who} gave an unreadable answer to '{command}': {response.text!r}"
            raise EngineFault(player.role, "F", reason)
        return response

    def _set_up(self, player: Player, notes: list[str]) -> None:
        """Return once the player's engine holds the match's starting position: an empty board
        of its size and komi, with the fixed handicap placed if there is one."""
        config = self.config
        commands = [f"boardsize {config.size}", "clear_board", f"komi {config.komi:g}"]
        if config.handicap:
            commands.append(f"fixed_handicap {config.handicap}")
        who = _ROLE_NAME[player.role]
        for command in commands:
            response = self._ask(player, command, notes)
            if not response.ok:
                player.protocol_errors += 1
                raise EngineFault(player.role, "F", f"{who} rejected '{command}': {response.text}")
        if config.handicap:
            self._check_handicap(player, response.text)

    def _check_handicap(self, player: Player, answer: str) -> None:
        """Return if the engine's fixed_handicap answer names GTP's standard points; otherwise
        raise EngineFault: engines that disagree on the stones play different games."""
        expected = handicap_stones(self.config.size, self.config.handicap)
        try:
            placed = [common.move_from_vertex(v, self.config.size) for v in answer.split()]
        except ValueError:
            placed = None
        # A pass among the stones reads as None: an answer, but not a handicap.
        if placed is None or None in placed or sorted(placed) != sorted(expected):
            player.protocol_errors += 1
            standard = " ".join(common.format_vertex(p) for p in expected)
            raise EngineFault(player.role, "F", f"{_ROLE_NAME[player.role]} placed the handicap "
                              f"at {answer!r}, not GTP's {standard}")

    def _set_clock(self, player: Player, notes: list[str]) -> None:
        """Return after telling the player the match's time control and starting its clock;
        at once in an untimed match. An engine that refuses every form of it plays on under
        the runner's clock all the same, with a note."""
        system = self.config.clock
        if system is None:
            return
        player.clock = GameClock(system)
        for command in dict.fromkeys((system.gtp(), system.plain_gtp())):
            if self._ask(player, command, notes).ok:
                return
        notes.append(f"{_ROLE_NAME[player.role]} refused the time settings; its clock runs "
                     "regardless")

    def _timed_genmove(self, mover: Player, colour: str, notes: list[str]) -> Response:
        """Return the answer to genmove, under the mover's clock when there is one (told first
        with time_left, then charged the answer's wall time); raise EngineFault if it lost on
        time."""
        clock = mover.clock
        if clock is None:
            return self._ask(mover, f"genmove {colour}", notes)
        seconds, stones = clock.time_left_args()
        self._ask(mover, f"time_left {colour} {seconds} {stones}", notes)
        to_loss = clock.to_loss()
        started = time.monotonic()
        try:
            answer = self._ask(mover, f"genmove {colour}", notes, to_loss + CLOCK_GRACE)
        except EngineFault as fault:
            if fault.code == "T":
                clock.lost = True
                fault = EngineFault(mover.role, "Time", f"{_ROLE_NAME[colour]} lost on time: "
                                    f"no answer {to_loss + CLOCK_GRACE:.1f} s into a move "
                                    f"that had {to_loss:.1f} s")
            raise fault
        spent = time.monotonic() - started
        mover.slowest_s = max(mover.slowest_s, spent)
        if not clock.charge(spent):
            raise EngineFault(mover.role, "Time", f"{_ROLE_NAME[colour]} lost on time: its "
                              f"answer took {spent:.2f} s with {to_loss:.2f} s left")
        return answer

    def play_and_record(self, index: int) -> None:
        """Return after playing game index and appending its record; at once if stopped.

        Once the SPRT has decided, games not yet started are skipped; running ones finish.
        """
        if self.decided:
            return
        try:
            record = self.play_game(index)
        except Abandoned:
            return
        with self._lock:
            append_result(self.config.results, record)
            self.finished += 1
            print(f"game {index:03d}: engine {record['black_engine']} black, {record['result']} "
                  f"({record['reason']}), {record['moves']} moves, {record['duration_s']:.1f} s "
                  f"[{self.finished}/{self.config.games}]", file=sys.stderr)
            score = game_score(record)
            if score is not None and not self.decided:
                self.scores.append(score)
                self.decided = self._sprt_decided()
                if self.decided:
                    print(f"SPRT decided after {len(self.scores)} scored games: no new games "
                          "are started", file=sys.stderr)

    def play_game(self, index: int) -> dict:
        """Return game index's results record after writing its SGF; raise Abandoned if stopped."""
        config = self.config
        black_cmd, white_cmd, black_letter = engines_for_game(config, index)
        prefix = os.path.join(config.sgf_dir, f"game-{index:03d}")
        started = time.monotonic()
        players = {"b": Player("b", None, black_cmd), "w": Player("w", None, white_cmd)}
        moves: list[tuple[str, tuple[int, int] | None]] = []
        notes: list[str] = []
        try:
            for colour, command in (("b", black_cmd), ("w", white_cmd)):
                log_path = f"{prefix}.{_ROLE_NAME[colour]}.log"
                players[colour] = self._start(colour, command, log_path)
                self._name(players[colour], notes)
            for player in players.values():
                self._set_up(player, notes)
                self._set_clock(player, notes)
            outcome = self._play_moves(players, moves, f"{prefix}.referee.log", notes)
        except EngineFault as fault:
            winner = "W" if fault.role == "b" else "B"
            outcome = Outcome(winner, f"{winner}+{fault.code}", fault.reason)
        finally:
            for player in players.values():
                if player.engine is not None:
                    self._close(player)
        self._check_stopped()
        sgf_path = f"{prefix}.sgf"
        write_sgf(sgf_path, config, players, moves, outcome, notes)
        letters = {"B": black_letter, "W": "B" if black_letter == "A" else "A"}
        black, white = players["b"], players["w"]
        return {
            "index": index,
            "black": black_cmd,
            "white": white_cmd,
            "black_engine": black_letter,
            "black_name": black.name,
            "white_name": white.name,
            "winner": outcome.winner,
            "winner_engine": letters.get(outcome.winner),
            "result": outcome.result,
            "reason": outcome.reason,
            "scored": outcome.scored,
            "scores": outcome.scores,
            "disagree": outcome.disagree,
            "moves": len(moves),
            "illegal_moves": {"B": black.illegal_moves, "W": white.illegal_moves},
            "protocol_errors": {"B": black.protocol_errors, "W": white.protocol_errors},
            "notes": notes,
            "duration_s": round(time.monotonic() - started, 3),
            "sgf": os.path.basename(sgf_path),
            "clock": clock_name(config),
            "handicap": config.handicap,
            "time": {colour.upper(): clock_report(player) for colour, player in players.items()
                     if player.clock is not None},
        }

    def _play_moves(self, players: dict[str, Player], moves: list, referee_log: str,
                    notes: list[str]) -> Outcome:
        """Return the outcome of play from the empty board, appending each move played to moves."""
        board = boards.Board(self.config.size)
        for row, col in handicap_stones(self.config.size, self.config.handicap):
            board.play(row, col, "b")
        ko_point = None
        colour = first_mover(self.config.handicap)
        passes = 0
        while passes < 2 and len(moves) < self.config.max_moves:
            mover, other = players[colour], players[opponent(colour)]
            who = _ROLE_NAME[colour]
            answer = self._timed_genmove(mover, colour, notes)
            if not answer.ok:
                mover.protocol_errors += 1
                raise EngineFault(colour, "F", f"{who} genmove failed: {answer.text}")
            vertex = answer.text.lower()
            if vertex == "resign":
                winner = opponent(colour).upper()
                return Outcome(winner, f"{winner}+R", f"{who} resigned")
            move = self._check_move(mover, vertex, board, ko_point)
            reply = self._ask(other, f"play {colour} {vertex}", notes)
            if not reply.ok:
                mover.illegal_moves += 1
                reason = f"{who} played illegal {vertex}: opponent answered '{reply.text}'"
                raise EngineFault(colour, "F", reason)
            comment = mover.read_search_comment()
            if comment is not None:
                mover.comments[len(moves)] = comment
            moves.append((colour, move))
            if move is None:
                passes += 1
                ko_point = None
            else:
                passes = 0
                ko_point = board.play(move[0], move[1], colour)
            colour = opponent(colour)
        ended = "two passes" if passes == 2 else f"move limit {self.config.max_moves}"
        return self._score(players, moves, ended, referee_log, notes)

    def _check_move(self, mover: Player, vertex: str, board: boards.Board,
                    ko_point: tuple[int, int] | None) -> tuple[int, int] | None:
        """Return the move as sgfmill (row, col), None for a pass; raise EngineFault if illegal."""
        who = _ROLE_NAME[mover.role]
        try:
            move = common.move_from_vertex(vertex, self.config.size)
        except ValueError as exc:
            if "off board" in str(exc):
                mover.illegal_moves += 1
                reason = f"{who} played off the board: {vertex}"
            else:
                mover.protocol_errors += 1
                reason = f"{who} answered genmove with {vertex!r}"
            raise EngineFault(mover.role, "F", reason) from None
        if move is not None and board.get(*move) is not None:
            mover.illegal_moves += 1
            raise EngineFault(mover.role, "F", f"{who} played on an occupied point: {vertex}")
        if move is not None and move == ko_point:
            mover.illegal_moves += 1
            raise EngineFault(mover.role, "F", f"{who} retook a ko at once: {vertex}")
        return move

    def _score(self, players: dict[str, Player], moves: list, ended: str, referee_log: str,
               notes: list[str]) -> Outcome:
        """Return the scored outcome: the referee's final_score if there is one, else players'.

        The players are asked for their own count either way. Under a referee it is only
        recorded, and a player that names another winner marks the game as disputed (a seki
        that the referee calls dead, say), as gogui-twogtp keeps every engine's count."""
        scores, readings = self._players_scores(players, notes)
        if self.config.referee is not None:
            outcome = self._referee_score(moves, ended, referee_log, notes)
            if outcome.scored:
                outcome.disagree = any(winner != outcome.winner
                                       for winner, _ in readings.values())
            outcome.scores = {**scores, **outcome.scores}
            return outcome
        if not readings:
            reason = f"{ended}; no engine gave a score"
            return Outcome(None, "?", reason, scored=False, scores=scores)
        if len({winner for winner, _ in readings.values()}) > 1:
            reason = f"{ended}; engines disagree on the winner"
            return Outcome(None, "?", reason, scored=False, scores=scores, disagree=True)
        winner, result = readings.get("B", readings.get("W"))
        disagree = len({result for _, result in readings.values()}) > 1
        return Outcome(winner, result, f"{ended}; scored by the players", scores=scores,
                       disagree=disagree)

    def _players_scores(self, players: dict[str, Player], notes: list[str]
                        ) -> tuple[dict[str, str], dict[str, tuple[str | None, str]]]:
        """Return each player's final_score answer by colour ('B', 'W') and the readable ones
        as (winner, result)."""
        scores: dict[str, str] = {}
        readings: dict[str, tuple[str | None, str]] = {}
        for colour, player in players.items():
            try:
                answer = self._ask(player, "final_score", notes)
            except EngineFault as fault:
                # Scoring is advisory: an engine that fails it loses nothing but its say.
                notes.append(fault.reason)
                continue
            scores[colour.upper()] = answer.text
            reading = parse_score(answer.text) if answer.ok else None
            if reading is not None:
                readings[colour.upper()] = reading
        return scores, readings

    def _referee_score(self, moves: list, ended: str, referee_log: str,
                       notes: list[str]) -> Outcome:
        """Return the outcome that the referee's final_score gives after replaying moves."""
        referee = None
        try:
            referee = self._start("referee", self.config.referee, referee_log)
            self._name(referee, notes)
            self._set_up(referee, notes)
            for colour, move in moves:
                command = f"play {colour} {common.format_vertex(move)}"
                if not self._ask(referee, command, notes).ok:
                    raise EngineFault("referee", "F", f"referee rejected '{command}'")
            answer = self._ask(referee, "final_score", notes)
        except EngineFault as fault:
            return Outcome(None, "?", f"{ended}; {fault.reason}", scored=False)
        finally:
            if referee is not None:
                self._close(referee)
        scores = {"referee": answer.text}
        reading = parse_score(answer.text) if answer.ok else None
        if reading is None:
            reason = f"{ended}; referee could not score: {answer.text!r}"
            return Outcome(None, "?", reason, scored=False, scores=scores)
        winner, result = reading
        return Outcome(winner, result, f"{ended}; scored by the referee", scores=scores)


def summarize(config: MatchConfig, records: list[dict]) -> dict:
    """Return the summary: wins by engine and colour, Wilson interval, Elo, SPRT, faults, table.

    records are in finishing order (the SPRT's sequence); the table is by game number.
    """
    finish_order = records
    records = sorted(records, key=lambda r: r["index"])
    wins_a = sum(r["winner_engine"] == "A" for r in records)
    wins_b = sum(r["winner_engine"] == "B" for r in records)
    draws = sum(r["scored"] and r["winner"] is None for r in records)
    decided = wins_a + wins_b + draws
    # A draw counts as half a win to each side.
    points_a = wins_a + draws / 2
    low, high = wilson_interval(points_a, decided)

    def per_engine(field: str) -> dict[str, int]:
        """Return the field's per-colour counts summed per engine letter."""
        totals = {"A": 0, "B": 0}
        for r in records:
            white_letter = "B" if r["black_engine"] == "A" else "A"
            totals[r["black_engine"]] += r[field]["B"]
            totals[white_letter] += r[field]["W"]
        return totals

    return {
        "engine_a": config.engine_a,
        "engine_b": config.engine_b,
        "games": len(records),
        "wins_a": wins_a,
        "wins_b": wins_b,
        "draws": draws,
        "win_rate_a": round(points_a / decided, 4) if decided else None,
        "ci95": [round(low, 4), round(high, 4)],
        # A's Elo over B from the win rate; its ci95 maps the Wilson interval.
        "elo_a": elo_estimate(points_a, decided),
        "sprt": None if config.sprt is None else sprt_decide(
            sprt_scores(finish_order), *config.sprt, config.sprt_alpha, config.sprt_beta),
        "by_colour": {"black": sum(r["winner"] == "B" for r in records),
                      "white": sum(r["winner"] == "W" for r in records)},
        "illegal_moves": per_engine("illegal_moves"),
        "protocol_errors": per_engine("protocol_errors"),
        "unscored": sum(not r["scored"] for r in records),
        "disagreements": sum(r["disagree"] for r in records),
        "mean_moves": round(sum(r["moves"] for r in records) / len(records), 1) if records
        else None,
        "clock": clock_name(config),
        **({"time": time_summary(records)} if config.clock is not None else {}),
        "table": [{"game": r["index"], "black": r["black_engine"], "result": r["result"],
                   "winner": r["winner_engine"], "moves": r["moves"]} for r in records],
    }


def time_summary(records: list[dict]) -> dict:
    """Return each engine's time under the clock over the games: seconds charged per game and
    per move, its slowest answer and the games it lost on time."""
    totals = {letter: {"used_s": 0.0, "moves": 0, "slowest_s": 0.0, "lost_on_time": 0}
              for letter in "AB"}
    for r in records:
        letters = {"B": r["black_engine"], "W": "B" if r["black_engine"] == "A" else "A"}
        for colour, report in r.get("time", {}).items():
            total = totals[letters[colour]]
            total["used_s"] += report["used_s"]
            # The first mover (White after a handicap) makes the odd-numbered moves: ceil(n/2)
            # of them, the other floor(n/2).
            first = first_mover(r.get("handicap", 0)).upper()
            total["moves"] += (r["moves"] + (colour == first)) // 2
            total["slowest_s"] = max(total["slowest_s"], report["slowest_s"])
            total["lost_on_time"] += report["lost"]
    games = max(1, len(records))
    return {letter: {"per_game_s": round(t["used_s"] / games, 2),
                     "per_move_s": round(t["used_s"] / t["moves"], 3) if t["moves"] else None,
                     "slowest_s": round(t["slowest_s"], 3), "lost_on_time": t["lost_on_time"]}
            for letter, t in totals.items()}


def score_margin(record: dict) -> float | None:
    """Return engine A's winning margin in points (negative when it lost), None if not counted."""
    if record["result"] == "0":
        return 0.0
    match = _SCORE.match(record["result"])
    if match is None or record["winner_engine"] is None:
        return None
    margin = float(match.group(2))
    return margin if record["winner_engine"] == "A" else -margin


def margin_marks(records: list[dict]) -> tuple[list, list, list]:
    """Return what the margins panel draws, by game number in finishing order from 1: (game,
    A's margin) for counted games and jigos, the games A won without a count and those it
    lost without one (resignation, time, forfeit); unscored games appear in none."""
    margins, won, lost = [], [], []
    for n, record in enumerate(records, 1):
        margin = score_margin(record)
        if margin is not None:
            margins.append((n, margin))
        elif record["winner_engine"] == "A":
            won.append(n)
        elif record["winner_engine"] == "B":
            lost.append(n)
    return margins, won, lost


def write_plot(path: str, summary: dict, records: list[dict]) -> bool:
    """Return whether a PNG of A's running win rate (with its Wilson band) and of each game's
    score margin was written to path; False when matplotlib cannot be imported.

    records are in finishing order, as the SPRT sees them.
    """
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        return False
    games, rates, lows, highs = [], [], [], []
    points = 0.0
    for x in sprt_scores(records):
        points += x
        games.append(len(games) + 1)
        rates.append(points / games[-1])
        low, high = wilson_interval(points, games[-1])
        lows.append(low)
        highs.append(high)
    margins, won_uncounted, lost_uncounted = margin_marks(records)
    figure, (top, bottom) = pyplot.subplots(2, 1, figsize=(8, 6), sharex=True)
    top.fill_between(games, lows, highs, alpha=0.25, label="95% Wilson interval")
    top.plot(games, rates, label="A's win rate")
    top.axhline(0.5, color="grey", linewidth=0.8)
    top.set_ylim(0, 1)
    top.set_ylabel("A's win rate")
    title = f"A: {summary['engine_a']}\nB: {summary['engine_b']}"
    if summary.get("sprt"):
        sprt = summary["sprt"]
        title += f"\nSPRT [{sprt['elo0']:g}, {sprt['elo1']:g}]: {sprt['decision']}, " \
                 f"LLR {sprt['llr']:.2f}"
    top.set_title(title, fontsize=8)
    top.legend(loc="lower right", fontsize=8)
    bottom.bar([n for n, _ in margins], [m for _, m in margins])
    # A game won or lost without a count (resignation, time) has no bar: a marker at the
    # panel's edge keeps it from reading as a jigo, which is marked on the axis.
    largest = max([abs(m) for _, m in margins] + [1.0])
    bottom.scatter(won_uncounted, [largest] * len(won_uncounted), marker="^", color="tab:green",
                   label="A won uncounted (resignation, time)")
    bottom.scatter(lost_uncounted, [-largest] * len(lost_uncounted), marker="v",
                   color="tab:red", label="A lost uncounted")
    jigos = [n for n, m in margins if m == 0]
    bottom.scatter(jigos, [0] * len(jigos), marker="o", color="grey", label="jigo")
    if won_uncounted or lost_uncounted or jigos:
        bottom.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3, fontsize=7,
                      frameon=False)
    bottom.set_ylim(-1.15 * largest, 1.15 * largest)
    if not margins:     # an empty panel would read as margins of zero
        bottom.text(0.5, 0.5, "no counted game: every game ended by resignation or unscored",
                    transform=bottom.transAxes, ha="center", va="center", fontsize=9)
    bottom.axhline(0, color="grey", linewidth=0.8)
    bottom.set_xlabel("game, in finishing order (scored games for the win rate)")
    bottom.set_ylabel("A's margin (points)")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)
    return True


def format_table(summary: dict, records: list[dict]) -> str:
    """Return a human-readable table of the games and the totals."""
    lines = [f"A: {summary['engine_a']}", f"B: {summary['engine_b']}",
             f"{'game':>4}  black  white  {'result':8}  winner  {'moves':>5}  reason"]
    for r in records:
        white = "B" if r["black_engine"] == "A" else "A"
        lines.append(f"{r['index']:>4}  {r['black_engine']:5}  {white:5}  {r['result']:8}  "
                     f"{r['winner_engine'] or '-':6}  {r['moves']:>5}  {r['reason']}")
    for r in records:
        if r.get("disagree"):
            counts = ", ".join(f"{who} {text}" for who, text in r["scores"].items())
            lines.append(f"game {r['index']}: the counts differ ({counts})")
    rate = summary["win_rate_a"]
    rate_text = "n/a" if rate is None else f"{rate:.3f}"
    low, high = summary["ci95"]
    lines.append(f"A {summary['wins_a']} - B {summary['wins_b']} (draws {summary['draws']}, "
                 f"unscored {summary['unscored']}); A win rate {rate_text}, "
                 f"95% CI [{low:.3f}, {high:.3f}]")
    elo = summary["elo_a"]
    if elo is not None:
        note = (" (clamped: a score of 0 or 1 taken as if one more game were drawn)"
                if elo["clamped"] else "")
        lines.append(f"Elo A - B: {elo['elo']:+.0f}, 95% CI [{elo['ci95'][0]:+.0f}, "
                     f"{elo['ci95'][1]:+.0f}]{note}")
    sprt = summary["sprt"]
    if sprt is not None:
        verdict = {"H0": f"accepted H0 (elo {sprt['elo0']:g}) after {sprt['decided_after']}",
                   "H1": f"accepted H1 (elo {sprt['elo1']:g}) after {sprt['decided_after']}",
                   "undecided": "undecided"}[sprt["decision"]]
        lines.append(f"SPRT elo0 {sprt['elo0']:g}, elo1 {sprt['elo1']:g}: {verdict}; LLR "
                     f"{sprt['llr']:.3f} in [{sprt['bounds'][0]:.3f}, {sprt['bounds'][1]:.3f}] "
                     f"over {sprt['games']} scored games")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> MatchConfig:
    """Return the match configuration given on the command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.strength.match",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--black", required=True, help="engine A (black in even games)")
    parser.add_argument("--white", required=True, help="engine B (white in even games)")
    parser.add_argument("--games", type=int, required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--komi", type=float, required=True)
    parser.add_argument("--sgf-dir", required=True)
    parser.add_argument("--referee", help="engine that scores finished games with final_score")
    parser.add_argument("--parallel", type=int, default=1,
                        help="games played at once; default 1. darkgo's default --threads "
                        "auto takes every CPU, so give its engine commands --threads to share "
                        "them")
    parser.add_argument("--results", help="JSON-lines results file (default SGF_DIR/results.jsonl)")
    parser.add_argument("--max-moves", type=int,
                        help="moves after which a game is stopped and scored (default 3*S*S)")
    parser.add_argument("--alternate", action=argparse.BooleanOptionalAction, default=True,
                        help="swap colours in odd-numbered games")
    parser.add_argument("--timeout-per-move", type=float, default=120.0,
                        help="seconds an engine may take over one answer before it is killed")
    parser.add_argument("--sprt", metavar="ELO0,ELO1",
                        help="stop early on a sequential probability ratio test of H0: A is ELO0 "
                        "better than B against H1: ELO1 (Bernoulli LLR, draws as half)")
    parser.add_argument("--sprt-alpha", type=float, default=0.05,
                        help="SPRT false-positive rate (accepting H1 when H0 holds)")
    parser.add_argument("--sprt-beta", type=float, default=0.05,
                        help="SPRT false-negative rate (accepting H0 when H1 holds)")
    parser.add_argument("--clock", choices=SYSTEMS,
                        help="play under this time control, kept by the runner (module help); "
                        "its values from --main, --period, --periods, --stones")
    parser.add_argument("--main", type=float, help="--clock: main time in seconds")
    parser.add_argument("--period", type=float,
                        help="--clock: seconds of a byo-yomi or canadian period")
    parser.add_argument("--periods", type=int, help="--clock byoyomi: number of periods")
    parser.add_argument("--stones", type=int, help="--clock canadian: stones per period")
    parser.add_argument("--handicap", type=int, default=0, metavar="N",
                        help="start every game from GTP's fixed handicap of N stones for "
                        "black, white to move (module help); default 0")
    parser.add_argument("--plot", metavar="FILE",
                        help="write a PNG of A's running win rate and the score margins "
                        "(needs matplotlib: pip install .[plot])")
    args = parser.parse_args(argv)
    sprt = None
    if args.sprt is not None:
        try:
            sprt = tuple(float(x) for x in args.sprt.split(","))
        except ValueError:
            sprt = ()
        if len(sprt) != 2 or not sprt[0] < sprt[1]:
            parser.error("--sprt takes two Elo values ELO0,ELO1 with ELO0 < ELO1")
        if not (0 < args.sprt_alpha < 1 and 0 < args.sprt_beta < 1):
            parser.error("--sprt-alpha and --sprt-beta must be between 0 and 1")
    clock = None
    if args.clock is not None:
        try:
            clock = time_system(args.clock, args.main, args.period, args.periods, args.stones)
        except ValueError as exc:
            parser.error(f"--clock: {exc}")
    elif any(value is not None for value in (args.main, args.period, args.periods, args.stones)):
        parser.error("--main, --period, --periods and --stones need --clock")
    if not 2 <= args.size <= 25:
        parser.error("--size must be between 2 and 25")
    try:
        handicap_stones(args.size, args.handicap)
    except ValueError:
        parser.error(f"--handicap {args.handicap}: a {args.size}x{args.size} board takes a "
                     "fixed handicap of 2-9 stones (2-4 on 7x7 and even sizes, none below 7)")
    if args.games < 1 or args.parallel < 1:
        parser.error("--games and --parallel must be at least 1")
    # A mistyped command would otherwise be recorded as a forfeit in every game.
    for command in filter(None, (args.black, args.white, args.referee)):
        words = shlex.split(command)
        if not words or shutil.which(words[0]) is None:
            parser.error(f"cannot find the program of engine command {command!r}")
    return MatchConfig(
        engine_a=args.black, engine_b=args.white, games=args.games, size=args.size,
        komi=args.komi, sgf_dir=args.sgf_dir,
        results=args.results or os.path.join(args.sgf_dir, "results.jsonl"),
        referee=args.referee, parallel=args.parallel,
        max_moves=args.max_moves if args.max_moves is not None else 3 * args.size * args.size,
        alternate=args.alternate, timeout=args.timeout_per_move, sprt=sprt,
        sprt_alpha=args.sprt_alpha, sprt_beta=args.sprt_beta, plot=args.plot, clock=clock,
        handicap=args.handicap)


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


def run_match(config: MatchConfig) -> list[dict]:
    """Return the records of all finished games in finishing order, playing those not yet in the
    results file (none once an SPRT has decided), with the results file to this runner alone."""
    os.makedirs(config.sgf_dir, exist_ok=True)
    with sole_runner(config.results):
        records = load_results(config)
        pending = [i for i in range(config.games) if i not in records]
        if records:
            print(f"resuming: {len(records)} games already finished, {len(pending)} to play",
                  file=sys.stderr)
        # The results file is in finishing order, so a resumed SPRT sees the same sequence.
        runner = MatchRunner(config, len(records), sprt_scores(list(records.values())))
        if runner.decided:
            print("the SPRT has already decided: no games to play", file=sys.stderr)
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=config.parallel)
        futures = [pool.submit(runner.play_and_record, i) for i in pending]
        try:
            for future in concurrent.futures.as_completed(futures):
                future.result()
        except BaseException:
            runner.stop()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown()
        return list(load_results(config).values())


def main(argv: list[str] | None = None) -> int:
    """Return the exit status after running the match and printing the table and JSON summary."""
    config = parse_args(argv)
    try:
        records = run_match(config)
    except KeyboardInterrupt:
        print("interrupted: finished games are saved; rerun the same command to resume",
              file=sys.stderr)
        return 130
    except ResultsFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = summarize(config, records)
    print(format_table(summary, sorted(records, key=lambda r: r["index"])))
    if config.plot is not None and not write_plot(config.plot, summary, records):
        print(f"--plot: matplotlib is not installed (pip install .[plot]); {config.plot} not "
              "written", file=sys.stderr)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
