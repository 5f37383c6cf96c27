"""GTP's analysis commands for GUIs, as a mixin of GtpEngine: GoGui's analyze commands
(ownership, visits), Leela Zero's lz-analyze and lz-genmove_analyze, and KataGo's kata-analyze,
whose streams of 'info move ...' lines Sabaki and Lizzie read while the engine searches."""
import logging
import re
import traceback

from engine import board as bd
from engine.gtp_session import AnyOf, GtpError, InputArrived
from engine.search import PV_CHILDREN

log = logging.getLogger("gtp")

# Playouts one lz-analyze may run before it stops by itself: hours of analysis, far from the
# int32 visit and half-point win counters' overflow.
ANALYSIS_PLAYOUTS = 100_000_000
# The analysis streams list a root move only with at least this share of the most visited
# move's visits. Sabaki takes the largest win rate and score of all listed moves as the
# position's, and a move with a few playouts has a win rate and a mean score far off its
# true one (a 13-playout move's mean score read +25 where the best move's read +1.7).
ANALYSIS_MIN_VISIT_SHARE = 0.1
# Commands that write their own response, streaming it while they search.
STREAMING = ("lz-analyze", "kata-analyze", "lz-genmove_analyze")
# Values each analysis key takes: avoid and allow a colour, vertices and a depth; every other
# key of Leela Zero's and KataGo's (interval, ownership, minmoves, rootInfo, pvVisits, ...) one.
_ANALYZE_KEY_WIDTHS = {"avoid": 3, "allow": 3}
_INTERVAL = re.compile(r"-?[0-9]+")


class AnalysisCommands:
    """The analysis commands of GtpEngine, which supplies the game, the player, the pending
    input lines and the stopping flag, the argument helpers (_color, _int, _expect),
    _keeping_side_to_move, _search_stop and _generate."""

    def cmd_gogui_dash_analyze_commands(self, args):
        return "\n".join([
            "dboard/Ownership/gogui-ownership",
            "string/Final Score/final_score",
            "plist/Dead Stones/final_status_list dead",
            "sboard/Visits/gogui-visits %c",
        ])

    def cmd_gogui_dash_ownership(self, args):
        own = self.player.ownership(self.game)
        rows = []
        for y in range(self.game.size - 1, -1, -1):
            rows.append(" ".join(f"{own.mean[self.game.point(x, y)]:.2f}"
                                 for x in range(self.game.size)))
        return "\n" + "\n".join(rows)

    def cmd_gogui_dash_visits(self, args):
        self._expect(args, 1)
        color = self._color(args[0])
        with self._keeping_side_to_move(color):
            result = self.player.search.run(self.game, self.player.config.rollouts,
                                            stop_event=self._search_stop())
        visits = {m.point: m.visits for m in result.children}
        rows = []
        for y in range(self.game.size - 1, -1, -1):
            rows.append(" ".join(str(visits.get(self.game.point(x, y), '""'))
                                 for x in range(self.game.size)))
        return "\n" + "\n".join(rows)

    def _analyze_args(self, args, color=None):
        """Return (color, interval in centiseconds, ownership wanted) from the analysis
        commands' arguments '[color] [interval] [KEY VALUE]...' (Leela Zero's and KataGo's);
        color defaults to the side to move, the interval to 1 s. Other keys (KataGo's
        rootInfo, pvVisits, minmoves, avoid, ...) are read past and ignored."""
        rest = list(args)
        if color is None:
            color = self.game.to_play
            if rest and rest[0].lower() in ("b", "w", "black", "white"):
                color = self._color(rest.pop(0))
        interval, ownership = 100, False
        if rest and _INTERVAL.fullmatch(rest[0]):
            interval = self._int(rest.pop(0))
        while rest:
            key = rest.pop(0)
            width = _ANALYZE_KEY_WIDTHS.get(key, 1)
            if len(rest) < width:
                raise GtpError("syntax error")
            values, rest = rest[:width], rest[width:]
            if key == "interval":
                interval = self._int(values[0])
            elif key == "ownership":
                if values[0].lower() not in ("true", "false"):
                    raise GtpError("syntax error")
                ownership = values[0].lower() == "true"
        return color, max(interval, 1), ownership

    def cmd_lz_dash_analyze(self, args, out=None, cmd_id=""):
        """lz-analyze [color] [interval]: search and stream 'info move ...' lines every
        interval until the next command arrives."""
        color, interval, _ = self._analyze_args(args)
        self._stream_analysis("lz-analyze", color, interval, self._lz_info, out, cmd_id)

    def cmd_kata_dash_analyze(self, args, out=None, cmd_id=""):
        """kata-analyze [color] [interval] [ownership true]: lz-analyze with KataGo's fields
        (win rates and priors as fractions) and, with ownership, each point's expected owner
        after the info entries: row by row from the top left, +1 for color, -1 against."""
        color, interval, ownership = self._analyze_args(args)
        if ownership:
            with self._keeping_side_to_move(color):
                own = self.player.ownership(self.game).mean
            sign = 1.0 if color == bd.BLACK else -1.0
            size = self.game.size
            values = " ".join(f"{sign * own[self.game.point(x, y)] + 0.0:.4f}"
                              for y in range(size - 1, -1, -1) for x in range(size))
            suffix = " ownership " + values
        else:
            suffix = ""

        def line(result):
            info = self._kata_info(result)
            return info + suffix if info else ""
        self._stream_analysis("kata-analyze", color, interval, line, out, cmd_id)

    def _stream_analysis(self, name, color, interval, line_of, out, cmd_id):
        """Search for color and write line_of(result) every interval (centiseconds) until the
        next command arrives, inside one '=' response; the game is left as it was."""
        out.write(f"={cmd_id}\n")
        out.flush()
        try:
            with self._keeping_side_to_move(color):
                self.player.search.run(
                    self.game, ANALYSIS_PLAYOUTS,
                    stop_event=AnyOf(self.stopping, InputArrived(self.pending)),
                    progress=(interval / 100.0, self._info_writer(out, line_of)))
        except Exception:   # the '=' is out: a '?' now would break the stream
            log.error("%s stopped by an internal error:\n%s", name, traceback.format_exc())
        out.write("\n")
        out.flush()

    @staticmethod
    def _info_writer(out, line_of):
        """Return a search progress callback that writes line_of(result) as one line."""
        def report(result):
            line = line_of(result)
            if line:    # an empty line would end the response
                out.write(line + "\n")
                out.flush()
        return report

    def cmd_lz_dash_genmove_analyze(self, args, out=None, cmd_id=""):
        """lz-genmove_analyze color [interval]: genmove that streams 'info move ...' lines
        while it searches, one more for the finished search (the statistics the move was
        chosen from), and ends with 'play VERTEX' (or 'play resign')."""
        if not args:
            raise GtpError("syntax error")
        color = self._color(args[0])
        _, interval, _ = self._analyze_args(args[1:], color)
        out.write(f"={cmd_id}\n")
        out.flush()
        try:
            report = self._info_writer(out, self._lz_info)
            move = self._generate([args[0]], progress=(interval / 100.0, report))
            if self.player.last_result is not None:
                report(self.player.last_result)
            out.write(f"play {move}\n")
        except Exception:   # the '=' is out: end the response with no move played
            log.error("lz-genmove_analyze failed:\n%s", traceback.format_exc())
        out.write("\n")
        out.flush()

    def _analyzed_moves(self, result):
        """Yield (order, MoveStats, pv text) for the root moves worth showing, most visited
        first: those with at least ANALYSIS_MIN_VISIT_SHARE of the most visited move's
        visits."""
        children = result.children[:PV_CHILDREN]
        if not children or children[0].visits == 0:
            return
        least = max(1, ANALYSIS_MIN_VISIT_SHARE * children[0].visits)
        for order, m in enumerate(children):
            if m.visits < least:
                break
            yield order, m, " ".join(self.game.vertex(p) for p in m.pv)

    def _lz_info(self, result):
        """Leela Zero's info entries: win rate and prior in 1/10000ths."""
        return " ".join(f"info move {self.game.vertex(m.point)} visits {m.visits} "
                        f"winrate {int(m.winrate * 10000)} prior {int(m.prior * 10000)} "
                        f"order {order} pv {pv}"
                        for order, m, pv in self._analyzed_moves(result))

    def _kata_info(self, result):
        """KataGo's info entries: win rate and prior as fractions, always with a decimal
        point (Sabaki reads a number without one as 1/10000ths); scoreMean and scoreLead
        both the mover's mean playout score (area, komi counted)."""
        return " ".join(f"info move {self.game.vertex(m.point)} visits {m.visits} "
                        f"winrate {m.winrate:.6f} scoreMean {m.score:.2f} "
                        f"scoreLead {m.score:.2f} prior {m.prior:.6f} order {order} pv {pv}"
                        for order, m, pv in self._analyzed_moves(result))
