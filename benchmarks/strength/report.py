"""A match's report: the summary printed as JSON (wins by engine and by colour, the Wilson
interval, Elo, the SPRT's state, faults, time under the clock), the table printed before it,
and the optional plot of the running win rate and the games' margins."""

from benchmarks.strength.records import MatchConfig, clock_name, first_mover, result_margin
from benchmarks.strength.stats import elo_estimate, sprt_decide, sprt_scores, wilson_interval


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
    margin = result_margin(record["result"])
    if margin is None or record["winner_engine"] is None:
        return None
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
