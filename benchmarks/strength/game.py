"""One game between two GTP engines, as a server runs it: each engine started and set up
(board size, komi, GTP's fixed handicap, the time settings), every genmove's answer checked
(a legal vertex, no retaken ko, accepted by the other engine) and relayed, each side's clock
charged, a fault charged to the engine that made it as a lost game, and a finished game scored
by the referee engine's final_score or by the players' own; the game's SGF written and its
results record returned. GameRunner plays games on several threads at once and stops them
all when the match is interrupted."""

import dataclasses
import os
import re
import threading
import time

from sgfmill import boards, common

from benchmarks.gtp_client import EngineError, EngineTimeout, GtpEngine, Response
from benchmarks.strength.records import (MatchConfig, clock_name, engines_for_game,
                                         first_mover, handicap_stones, parse_score,
                                         write_sgf)
from benchmarks.time_control import GameClock

_ROLE_NAME = {"b": "black", "w": "white", "referee": "referee"}
# Under a clock a genmove is awaited this long past the moment its time ran out, so that a late
# answer is still read and measured; the game is lost either way.
CLOCK_GRACE = 10.0
# darkgo's stderr line after each genmove; other engines' logs simply give no comments.
_SEARCH_LOG = re.compile(
    r"gtp INFO (\d+ playouts in [^;]*; win rate [\d.]+; top: [^;\n]*(?:; pv [^;\n]*)?)")


def opponent(colour: str) -> str:
    """Return the other sgfmill colour."""
    return "w" if colour == "b" else "b"


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


class GameRunner:
    """Plays the match's games, several at once on the caller's threads; stop() ends them all."""

    def __init__(self, config: MatchConfig):
        self.config = config
        self._lock = threading.Lock()
        self._stopped = False
        self._live: set[GtpEngine] = set()
        # With keep_engines: each worker thread's engine processes by engine letter, the games
        # each has played, and the threads' numbers (for the processes' log names).
        self._kept: dict[tuple[int, str], GtpEngine] = {}
        self._games_played: dict[GtpEngine, int] = {}
        self._slots: dict[int, int] = {}

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

    def _start_kept(self, role: str, letter: str, command: str) -> Player:
        """Return a Player on this thread's running engine of letter, started on first use (or
        after a fault ended its last game) with its stderr in SGF_DIR/engine-LETTER-N.log; the
        player reads the search lines from where the log stands."""
        thread = threading.get_ident()
        with self._lock:
            slot = self._slots.setdefault(thread, len(self._slots))
            engine = self._kept.get((thread, letter))
        log_path = os.path.join(self.config.sgf_dir, f"engine-{letter}-{slot}.log")
        if engine is None:
            engine = self._start(role, command, log_path).engine
            with self._lock:
                self._kept[(thread, letter)] = engine
                self._games_played[engine] = 0
        offset = os.path.getsize(log_path) if os.path.exists(log_path) else 0
        return Player(role, engine, command, log_path=log_path, log_offset=offset)

    def _drop_kept(self, player: Player) -> None:
        """Return after ending a kept engine (one that faulted: its next game starts afresh)."""
        with self._lock:
            for key, engine in list(self._kept.items()):
                if engine is player.engine:
                    del self._kept[key]
            self._games_played.pop(player.engine, None)
        self._close(player)

    def close_kept(self) -> None:
        """Return once every kept engine has exited."""
        with self._lock:
            engines = list(self._kept.values())
            self._kept.clear()
            self._live.difference_update(engines)
        for engine in engines:
            engine.close()

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

    def play_game(self, index: int) -> dict:
        """Return game index's results record after writing its SGF; raise Abandoned if stopped."""
        config = self.config
        black_cmd, white_cmd, black_letter = engines_for_game(config, index)
        prefix = os.path.join(config.sgf_dir, f"game-{index:03d}")
        started = time.monotonic()
        players = {"b": Player("b", None, black_cmd), "w": Player("w", None, white_cmd)}
        moves: list[tuple[str, tuple[int, int] | None]] = []
        notes: list[str] = []
        letters = {"b": black_letter, "w": "B" if black_letter == "A" else "A"}
        kept = config.keep_engines
        process_games = {}
        try:
            for colour, command in (("b", black_cmd), ("w", white_cmd)):
                if kept:
                    players[colour] = self._start_kept(colour, letters[colour], command)
                    process_games[letters[colour]] = self._games_played[players[colour].engine]
                else:
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
            if kept and fault.role in players and players[fault.role].engine is not None:
                self._drop_kept(players[fault.role])
        finally:
            for player in players.values():
                if player.engine is None:
                    continue
                if not kept:
                    self._close(player)
                elif player.engine in self._games_played:
                    self._games_played[player.engine] += 1
        self._check_stopped()
        sgf_path = f"{prefix}.sgf"
        write_sgf(sgf_path, config, {colour: p.name for colour, p in players.items()}, moves,
                  outcome.result, [outcome.reason] + notes,
                  {**players["b"].comments, **players["w"].comments})
        black, white = players["b"], players["w"]
        record = {
            "index": index,
            "black": black_cmd,
            "white": white_cmd,
            "black_engine": black_letter,
            "black_name": black.name,
            "white_name": white.name,
            "winner": outcome.winner,
            "winner_engine": letters.get((outcome.winner or "").lower()),
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
        if kept:
            # Games each engine's process had played before this one.
            record["process_games"] = process_games
        return record

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
