"""GTP version 2 front end: a table of small handlers, one per command, with the spec's errors.

Input lines are preprocessed as the spec says (control characters other than HT and LF removed,
HT turned into a space, comments after '#' dropped, empty lines ignored). A handler returns the
response text or raises GtpError for a '?' answer; any other exception becomes a '?' answer
plus a traceback on the log, so nothing takes the loop down. A reader thread feeds lines
through a queue so that analysis commands (lz-analyze, kata-analyze) can run until the next
command arrives.

Ends: 'quit' or the end of input end the loop; one that arrives while a move is searched (the
controller leaving) cuts the search short, the move found so far is answered, then quit.
SIGTERM, SIGINT and SIGHUP stop the search or analysis under way and end the loop without
answering the command it served; a second signal ends the process at once. Output that can no
longer be written (BrokenPipeError: the GUI went away) ends the loop quietly too.
"""
import contextlib
import gc
import io
import logging
import os
import queue
import re
import signal
import sys
import threading
import time
import traceback

from engine import board as bd
from engine import sgf
from engine.game import (HANDICAP_NONE, HANDICAP_STONES, HANDICAP_STONES_BUT_ONE, Game,
                         IllegalMove, Rules, color_from_text, handicap_points)
from engine.gtp_analysis import STREAMING, AnalysisCommands
from engine.gtp_session import (COMMAND_ID, DIGITS, AnyOf, Flag, GtpError, LeaveArrives,
                                Output, is_quit, preprocess)
from engine.player import RESIGN, cpu_seconds, score_text
from engine.time_policy import Clock, TimeControl

log = logging.getLogger("gtp")

NAME = "darkgo"
VERSION = "0.1.0"
MAX_LINE = 4096

# Pondering stops once the tree takes this share of its node or edge pool, short of the half
# past which the next move's search would not reuse it.
PONDER_POOL_SHARE = 0.45
# The rule sets kgs-rules names (chinese without it): SGF's RU for each, and the handicap
# compensation KGS gives (japanese counted by area, as Pachi counts it).
_KGS_RULES = {"chinese": ("Chinese", HANDICAP_STONES), "aga": ("AGA", HANDICAP_STONES_BUT_ONE),
              "japanese": ("Japanese", HANDICAP_STONES_BUT_ONE),
              "new_zealand": ("NZ", HANDICAP_NONE)}


class _TreeFilling:
    """A stop event for pondering, set once the search's tree takes PONDER_POOL_SHARE of a
    pool: a tree past half of one is not reused, so pondering on would leave the next move's
    search an empty tree."""

    def __init__(self, search):
        self.search = search

    def is_set(self):
        return self.search.pools_used() >= PONDER_POOL_SHARE


class GtpEngine(AnalysisCommands):
    """Holds the game and the player and answers GTP commands."""

    def __init__(self, player, size=19, komi=7.5, strict_superko=False, ponder=False,
                 version=VERSION, kgs_chat=False):
        self.player = player
        self.version = version         # the answer to 'version' (--override-version)
        self.strict_superko = strict_superko
        self.ponder = ponder
        # The level of the line logged after each genmove's search (the warm-up's engine logs
        # it at debug, so that match logs and SGF comments hold only real moves' lines).
        self.search_log_level = logging.INFO
        self.kgs_rules = "chinese"     # the rules kgs-rules named last
        self.game = Game(size, self._rules(komi))
        self.handlers = {name[4:].replace("_dash_", "-"): getattr(self, name)
                         for name in dir(self) if name.startswith("cmd_")}
        # Answered but not listed: kgsGtp 3.5.20 and later crash on an engine that lists
        # kgs-chat (Pachi lists it only with --kgs-chat, for kgsGtp 3.5.11).
        self.unlisted = set() if kgs_chat else {"kgs-chat"}
        # Lines read and not yet served; None marks the end of input or a stop. A SimpleQueue,
        # whose put() a signal handler may call while the main thread waits in get().
        self.pending = queue.SimpleQueue()
        self._generated = []           # per move of self.game: True where genmove chose it
        self._just_moved = False       # the last command played a move of ours (ponder then)
        self.quit = False
        self.stopping = Flag()         # a signal or lost output: stop and leave the loop
        self.signal_received = None    # the signal that set stopping, if one did
        self.output_gone = False       # writing the answers failed (the reader went away)
        self.leaving_read = 0          # 'quit' lines and ends of input read so far

    # Loop ------------------------------------------------------------------------------
    def handle_line(self, raw, out):
        """Answer one raw input line on out (a text stream); return False after quit."""
        if len(raw) > MAX_LINE:
            match = COMMAND_ID.match(raw)
            self._respond(out, False, match.group(1) if match else "", "line too long")
            return True
        line = preprocess(raw)
        if not line:    # the spec discards a line left empty, whatever it held before
            return True
        parts = line.split()
        cmd_id = ""
        if DIGITS.fullmatch(parts[0]):
            cmd_id = parts.pop(0)
        if not parts:
            self._respond(out, False, cmd_id, "syntax error")
            return True
        name, args = parts[0], parts[1:]
        self._just_moved = False
        handler = self.handlers.get(name)
        if handler is None:
            self._respond(out, False, cmd_id, "unknown command")
            return True
        try:
            if name in STREAMING:
                handler(args, out=out, cmd_id=cmd_id)
                return not (self.quit or self.stopping.is_set())
            text = handler(args)
            if self.stopping.is_set():    # the process ends: no answer to an interrupted command
                return False
            self._respond(out, True, cmd_id, text)
        except GtpError as exc:
            self._respond(out, False, cmd_id, str(exc))
        except Exception as exc:
            log.error("internal error in %r:\n%s", line, traceback.format_exc())
            self._respond(out, False, cmd_id, f"internal error: {type(exc).__name__}")
        return not (self.quit or self.stopping.is_set())

    @staticmethod
    def _respond(out, ok, cmd_id, text):
        text = (text or "").rstrip("\n")
        text = re.sub(r"\n\s*\n", "\n", text)   # a blank line would end the response early
        prefix = ("=" if ok else "?") + cmd_id
        # A multi-line answer still gets the space after '=' (GNU Go's '= \n' before a
        # board): GoGui takes the answer from the first space on, so without it the first
        # value of a gogui-ownership board was cut off ('Incomplete string board').
        separator = " " if text else ""
        out.write(f"{prefix}{separator}{text}\n\n")
        out.flush()

    def serve(self, inp, out):
        """Answer commands from inp until quit, end of input, stop() or lost output."""
        out = Output(out, self._on_output_gone)
        reader = threading.Thread(target=self._read_lines, args=(inp,), name="gtp-reader",
                                  daemon=True)
        reader.start()
        while not self.stopping.is_set():
            pondering = self._start_pondering() if self.ponder else None
            raw = self.pending.get()
            if pondering is not None:
                stop, thread = pondering
                stop.set()
                thread.join()
            if raw is None or self.stopping.is_set():
                break
            if not self.handle_line(raw, out):
                break

    def stop(self, signum=None):
        """Ask the loop to end: the search or analysis under way stops within milliseconds,
        its command is left unanswered and serve() returns. Safe in a signal handler (as
        signal.signal's handler: signum, frame); a second call there raises SystemExit(0)
        for a command that did not stop in time."""
        if self.stopping.is_set() and signum is not None:
            raise SystemExit(0)
        if signum is not None:
            self.signal_received = signum
        self.stopping.set()
        self.pending.put(None)

    def _on_signal(self, signum, frame):
        self.stop(signum)

    def _on_output_gone(self):
        self.output_gone = True
        self.stop()

    def close(self):
        """Stop the threads the player keeps (the network server) and the warm-up's compiler
        process; the engine is done."""
        self.player.search.close()
        if self.player.warmup is not None:
            self.player.warmup.stop_compiler()

    def _search_stop(self):
        """Return the stop event for a move's search: a stop(), or quit or the end of input
        arriving while it runs."""
        return AnyOf(self.stopping, LeaveArrives(self))

    def _start_pondering(self):
        """Search the current position on the opponent's time, after our own move, until the
        next command arrives; return (stop event, thread) or None when there is nothing to do."""
        game = self.game
        if not self._just_moved or game.last_two_passed():
            return None
        stop = threading.Event()
        budget = 50 * self.player.config.rollouts
        search = self.player.search
        thread = threading.Thread(target=search.run, args=(game, budget),
                                  kwargs={"stop_event": AnyOf(stop, _TreeFilling(search))},
                                  name="ponder", daemon=True)
        thread.start()
        return stop, thread

    def _read_lines(self, inp):
        while True:
            try:
                raw = inp.readline()
            except (OSError, ValueError):
                raw = ""
            if isinstance(raw, bytes):
                raw = raw.decode("utf-8", "surrogateescape")
            if not raw:
                self.leaving_read += 1
                self.pending.put(None)
                return
            if is_quit(raw):
                self.leaving_read += 1
            self.pending.put(raw)

    # Argument helpers --------------------------------------------------------------------
    @staticmethod
    def _expect(args, count):
        if len(args) != count:
            raise GtpError("syntax error")

    def _color(self, text):
        try:
            return color_from_text(text)
        except ValueError:
            raise GtpError("syntax error") from None

    def _vertex(self, text):
        try:
            return self.game.parse_vertex(text)
        except ValueError:
            raise GtpError("syntax error") from None

    @staticmethod
    def _int(text):
        try:
            return int(text)
        except ValueError:
            raise GtpError("syntax error") from None

    @staticmethod
    def _float(text):
        try:
            value = float(text)
        except ValueError:
            raise GtpError("syntax error") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise GtpError("syntax error")
        return value

    def _rules(self, komi):
        """Return the Rules for a game at komi. Positional superko refuses an opponent's move
        only with --rules strict and under rules that have it: KGS's chinese; its aga and
        new_zealand have situational superko, japanese none, and the server is the judge.
        White gets KGS's handicap compensation at the count: a point a handicap stone under
        chinese (and without kgs-rules, as GNU Go and Pachi count by Chinese rules), one for
        each but the first under aga (and japanese, as Pachi counts it by area), none under
        new_zealand."""
        return Rules(komi=komi, strict_superko=self.strict_superko and self.kgs_rules == "chinese",
                     handicap_compensation=_KGS_RULES[self.kgs_rules][1])

    def _new_game(self, size):
        self.game = Game(size, self.game.rules)
        self._generated = []
        self.player.new_game(size)

    # Administrative commands ---------------------------------------------------------------
    def cmd_protocol_version(self, args):
        return "2"

    def cmd_name(self, args):
        return NAME

    def cmd_version(self, args):
        return self.version

    def cmd_known_command(self, args):
        self._expect(args, 1)
        return "true" if args[0] in self.handlers and args[0] not in self.unlisted else "false"

    def cmd_list_commands(self, args):
        return "\n".join(sorted(set(self.handlers) - self.unlisted))

    def cmd_quit(self, args):
        self.quit = True
        return ""

    # Setup -------------------------------------------------------------------------------
    def cmd_boardsize(self, args):
        self._expect(args, 1)
        size = self._int(args[0])
        if not bd.MIN_SIZE <= size <= bd.MAX_SIZE:
            raise GtpError("unacceptable size")
        self._new_game(size)
        return ""

    def cmd_clear_board(self, args):
        self._new_game(self.game.size)
        return ""

    def cmd_komi(self, args):
        self._expect(args, 1)
        komi = self._float(args[0])
        self.game.rules = self._rules(komi)
        return ""

    def cmd_fixed_handicap(self, args):
        self._expect(args, 1)
        stones = self._int(args[0])
        if self.game.moves or self.game.setup:
            raise GtpError("board not empty")
        try:
            points = [self.game.point(x, y) for x, y in handicap_points(self.game.size, stones)]
        except ValueError:
            raise GtpError("invalid number of stones") from None
        self.game.set_handicap(points)
        return " ".join(self.game.vertex(p) for p in points)

    def cmd_place_free_handicap(self, args):
        self._expect(args, 1)
        stones = self._int(args[0])
        if self.game.moves or self.game.setup:
            raise GtpError("board not empty")
        size = self.game.size
        if stones < 2 or stones >= size * size:
            raise GtpError("invalid number of stones")
        points = self._free_handicap_points(stones)
        self.game.set_handicap(points)
        return " ".join(self.game.vertex(p) for p in points)

    def _free_handicap_points(self, stones):
        """Fixed handicap points where they exist, then points spread on a lattice."""
        try:
            fixed = handicap_points(self.game.size, stones)
        except ValueError:
            return self._lattice_points(stones)
        return [self.game.point(x, y) for x, y in fixed]

    def _lattice_points(self, stones):
        size = self.game.size
        edge = 3 if size >= 13 else 2 if size >= 7 else 0
        chosen = []
        for step in range(max(1, (size - 2 * edge) // 2), 0, -1):
            coords = range(edge, size - edge, step) if size - 2 * edge > 0 else range(size)
            chosen = [(x, y) for y in coords for x in coords]
            if len(chosen) >= stones:
                break
        if len(chosen) < stones:
            chosen = [(x, y) for y in range(size) for x in range(size)]
        centre = (size - 1) / 2
        chosen.sort(key=lambda xy: (abs(xy[0] - centre) + abs(xy[1] - centre) == 0, xy))
        return [self.game.point(x, y) for x, y in chosen[:stones]]

    def cmd_set_free_handicap(self, args):
        if self.game.moves or self.game.setup:
            raise GtpError("board not empty")
        try:
            points = [self.game.parse_vertex(a) for a in args]
        except ValueError:
            raise GtpError("bad vertex list") from None
        if len(points) < 2 or bd.PASS in points or len(set(points)) != len(points) \
                or len(points) >= self.game.size ** 2:
            raise GtpError("bad vertex list")
        trial = Game(self.game.size, self.game.rules)
        try:
            trial.set_handicap(points)
        except ValueError:
            raise GtpError("bad vertex list") from None
        self.game = trial
        return ""

    # Play --------------------------------------------------------------------------------
    def cmd_play(self, args):
        self._expect(args, 2)
        color = self._color(args[0])
        point = self._vertex(args[1])
        strict = self.game.rules.strict_superko
        try:
            repeated = self.game.play(color, point, superko=strict)
        except IllegalMove as exc:
            raise GtpError("illegal move") from exc
        self._generated.append(False)
        if repeated:
            log.warning("play %s %s repeats an earlier position (positional superko); accepted",
                        args[0], args[1])
        return ""

    def _generate(self, args, cleanup=False, commit=True, progress=None):
        self._expect(args, 1)
        color = self._color(args[0])
        started = time.perf_counter()
        point = self.player.genmove(self.game, color, cleanup=cleanup,
                                    stop_event=self._search_stop(), progress=progress)
        if point == RESIGN:
            self.game.to_play = color
            return "resign"
        if commit:
            self.player.charge(color, time.perf_counter() - started)
            self.game.play(color, point)
            self._generated.append(True)
            self._just_moved = point != bd.PASS
        self._log_search()
        return self.game.vertex(point)

    def _log_search(self):
        result = self.player.last_result
        if result is None or result.best is None:
            return
        # The priors show what the network thought of the move the final choice took and of
        # the most visited one it may have passed over (robust_choice); four places, as
        # those priors go far below a thousandth.
        top = ", ".join(f"{self.game.vertex(m.point)} {m.visits} {m.winrate:.3f} "
                        f"p{m.prior:.4f}" for m in result.children[:5])
        pv = " ".join(self.game.vertex(p) for p in result.best.pv) or "-"
        search = self.player.search
        nodes, edges = search.pools_held()
        log.log(self.search_log_level,
                "%d playouts in %.2fs (%.0f/s, stopped by %s); win rate %.3f; top: %s; pv %s; "
                "tree %d of %d nodes, %d of %d edges; %d network evaluations", result.playouts,
                result.seconds, result.playouts / max(result.seconds, 1e-9), result.stopped_by,
                result.root_winrate, top, pv,
                nodes, search.config.max_nodes, edges, search.config.max_edges,
                result.evaluations)

    def cmd_genmove(self, args):
        return self._generate(args)

    def cmd_kgs_dash_genmove_cleanup(self, args):
        return self._generate(args, cleanup=True)

    def cmd_reg_genmove(self, args):
        with self._keeping_side_to_move():
            return self._generate(args, commit=False)

    @contextlib.contextmanager
    def _keeping_side_to_move(self, color=None):
        """Make color (when given) the side to move inside, and give back the one before on
        leaving: for the commands that search or judge for a colour of their own and must
        leave the game as it was (reg_genmove, the analysis commands), as the search and the
        playouts take the colour from the game."""
        game = self.game
        before = game.to_play
        if color is not None:
            game.to_play = color
        try:
            yield
        finally:
            game.to_play = before
            game.board.info[bd.TO_PLAY] = before

    def cmd_undo(self, args):
        try:
            self.game.undo()
        except IndexError:
            raise GtpError("cannot undo") from None
        del self._generated[len(self.game.moves):]
        return ""

    # Scoring -------------------------------------------------------------------------------
    def cmd_final_score(self, args):
        return score_text(self.player.final_score(self.game))

    def cmd_final_status_list(self, args):
        self._expect(args, 1)
        status = args[0].lower()
        if status not in ("dead", "alive", "seki"):
            raise GtpError("syntax error")
        points = self.player.final_status(self.game)[status]
        return self._chains_lines(points)

    def _chains_lines(self, points):
        """One line per chain, as GNU Go answers final_status_list."""
        board = self.game.board
        remaining = set(points)
        lines = []
        for p in points:
            if p not in remaining:
                continue
            chain = []
            head = board.chain[p]
            s = head
            while True:
                if int(s) in remaining:
                    chain.append(int(s))
                    remaining.discard(int(s))
                s = board.chain_next[s]
                if s == head:
                    break
            lines.append(" ".join(self.game.vertex(q) for q in sorted(chain)))
        return "\n".join(lines)

    def cmd_list_stones(self, args):
        self._expect(args, 1)
        color = self._color(args[0])
        return " ".join(self.game.vertex(p) for p in self.game.on_board_points()
                        if self.game.color_at(p) == color)

    def cmd_showboard(self, args):
        return "\n" + sgf.ascii_board(self.game)

    # SGF -----------------------------------------------------------------------------------
    def cmd_loadsgf(self, args):
        if len(args) not in (1, 2):
            raise GtpError("syntax error")
        move_number = self._int(args[1]) if len(args) == 2 else None
        if move_number is not None and move_number < 1:
            raise GtpError("syntax error")
        try:
            game = sgf.load_game(args[0], move_number, self.game.rules.strict_superko)
        except sgf.SgfError as exc:
            log.warning("loadsgf %s: %s", args[0], exc)
            raise GtpError(f"cannot load file: {exc}") from None
        game.rules = self._rules(game.rules.komi)     # the file's komi, the engine's rules
        self.game = game
        self._generated = [False] * len(game.moves)
        self.player.new_game(game.size)
        return ""

    def cmd_printsgf(self, args):
        ours = {color for (color, _), generated in zip(self.game.moves, self._generated)
                if generated}
        name = f"{NAME} {VERSION}"
        text = sgf.game_to_sgf(self.game, black_name=name if bd.BLACK in ours else "",
                               white_name=name if bd.WHITE in ours else "",
                               result=self._result_text(), rules=_KGS_RULES[self.kgs_rules][0])
        if not args:
            return text.strip()
        try:
            with open(args[0], "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:   # no such folder, a folder, no permission, a full device
            raise GtpError(f"cannot save file: {exc.strerror or exc}") from None
        return ""

    def _result_text(self):
        return score_text(self.player.final_score(self.game)) \
            if self.game.last_two_passed() else None

    # KGS (kgsGtp) --------------------------------------------------------------------------
    def cmd_kgs_dash_rules(self, args):
        """kgs-rules chinese|aga|new_zealand|japanese: the game's rules on KGS. darkgo always
        plays and counts by area. japanese is accepted with a warning rather than refused, so
        that a game set up with it is still played: KGS then counts territory, which can
        differ from area by a point or so (a stone played inside one's own territory costs
        a point there, nothing here). The rules set the handicap compensation (see _rules)."""
        if not args:
            raise GtpError("syntax error")
        rules = args[0].lower()
        if rules not in _KGS_RULES:
            raise GtpError("unknown rules")
        self.kgs_rules = rules
        self.game.rules = self._rules(self.game.rules.komi)
        if rules == "japanese":
            log.warning("kgs-rules japanese: darkgo plays by area scoring; KGS will count "
                        "territory")
        return ""

    def cmd_kgs_dash_game_over(self, args):
        """kgs-game_over: the game ended on KGS. The board is kept (a game may be adjourned
        and resumed straight with genmove); the next game starts with boardsize/clear_board."""
        log.info("kgs-game_over after %d moves", len(self.game.moves))
        return ""

    def cmd_kgs_dash_chat(self, args):
        """kgs-chat game|private NAME MESSAGE: the same harmless answer to every message."""
        if len(args) < 2:
            raise GtpError("syntax error")
        log.info("kgs-chat from %s: %s", args[1], " ".join(args[2:]))
        return f"Hello, I am {NAME} {VERSION}, a Go program. I cannot chat, sorry."

    # Time ----------------------------------------------------------------------------------
    def cmd_time_settings(self, args):
        self._expect(args, 3)
        main, byo_time, byo_stones = self._float(args[0]), self._float(args[1]), \
            self._int(args[2])
        if main < 0 or byo_time < 0 or byo_stones < 0:
            raise GtpError("syntax error")
        unlimited = byo_time > 0 and byo_stones == 0
        self.player.time = TimeControl(main, byo_time, byo_stones, 0, unlimited)
        self.player.clocks = {bd.BLACK: Clock(), bd.WHITE: Clock()}
        return ""

    def cmd_kgs_dash_time_settings(self, args):
        if not args:
            raise GtpError("syntax error")
        kind, rest = args[0].lower(), args[1:]
        if kind == "none" and not rest:
            tc = TimeControl()
        elif kind == "absolute" and len(rest) == 1:
            tc = TimeControl(self._float(rest[0]), 0.0, 0, 0, False)
        elif kind == "byoyomi" and len(rest) == 3:
            tc = TimeControl(self._float(rest[0]), self._float(rest[1]), 1, self._int(rest[2]),
                             False)
        elif kind == "canadian" and len(rest) == 3:
            tc = TimeControl(self._float(rest[0]), self._float(rest[1]), self._int(rest[2]), 0,
                             False)
        else:
            raise GtpError("syntax error")
        # A canadian period holds at least one stone and byo-yomi at least one period (0
        # would read as no limit or as canadian).
        if (tc.main < 0 or tc.byo_time < 0 or tc.byo_stones < 0 or tc.byo_periods < 0
                or (kind == "canadian" and tc.byo_stones < 1)
                or (kind == "byoyomi" and tc.byo_periods < 1)):
            raise GtpError("syntax error")
        self.player.time = tc
        self.player.clocks = {bd.BLACK: Clock(), bd.WHITE: Clock()}
        return ""

    def cmd_time_left(self, args):
        self._expect(args, 3)
        color = self._color(args[0])
        seconds, stones = self._float(args[1]), self._int(args[2])
        if seconds < 0 or stones < 0:
            raise GtpError("syntax error")
        self.player.clocks[color] = Clock(seconds, stones, True)
        return ""

    def cmd_cputime(self, args):
        return f"{cpu_seconds():.3f}"


# Signals that end the engine cleanly: kill's default, Ctrl-C, the terminal closing.
STOP_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")


def run_gtp(engine, inp=None, out=None):
    """Serve GTP on the given streams (stdin/stdout by default) until quit, end of input, a
    stop signal (STOP_SIGNALS, handled while this runs on the main thread) or lost output;
    return after the engine's threads have stopped."""
    inp = inp if inp is not None else sys.stdin
    out = out if out is not None else sys.stdout
    if inp is None:     # no stdin at all (started with <&-): the input is over at once
        inp = io.StringIO()
    if out is None:     # no stdout: the first answer finds the output gone
        out = io.StringIO()
        out.close()
    _tolerate_bad_bytes(inp, out)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for name in STOP_SIGNALS:
            number = getattr(signal, name, None)
            if number is not None:
                previous[number] = signal.signal(number, engine._on_signal)
    try:
        engine.serve(inp, out)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        engine.close()
    if engine.signal_received is not None:
        log.info("stopped by signal %d", engine.signal_received)
    if engine.output_gone:
        log.info("output closed: stopping")
        if out is sys.stdout:   # or the interpreter's last flush fails again, loudly
            _silence(out)
    if inp is sys.__stdin__ and out is sys.__stdout__:
        _end_process()


def _tolerate_bad_bytes(inp, out):
    """Let bytes that are not UTF-8 (a Latin-1 file name after loadsgf) through a text stream
    session instead of ending it: under a strict locale (en_US.UTF-8) the first such byte on
    stdin raised in the reader, which then took it for the end of input. The input keeps
    them as surrogate escapes, which os functions encode back into the same bytes, so the
    file opens; the output writes such a character as a backslash escape."""
    for stream, errors in ((inp, "surrogateescape"), (out, "backslashreplace")):
        if isinstance(stream, io.TextIOWrapper):
            try:
                stream.reconfigure(errors=errors)
            except (OSError, ValueError):   # closed, or already read from: left as it is
                pass


def _end_process():
    """Prepare the end of a process whose stdin/stdout session is over. Threads still at work
    (the start-up warm-up compiling) would crash numba's compiler during the interpreter's
    teardown (LLVM asserts: status -6 or -11), so then the process ends here, at once, with
    status 0. Else its last garbage collection, a walk over numba's compiled functions taking
    half a second on a busy machine, is spared by freezing what exists."""
    busy = [t.name for t in threading.enumerate()
            if t is not threading.current_thread() and t.name != "gtp-reader" and t.is_alive()]
    if not busy:
        gc.freeze()
        return
    log.info("ending with %s still running", ", ".join(busy))
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


def _silence(stream):
    """Point the file descriptor under stream at /dev/null, dropping what it still buffers."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
