"""A match's statistics: the Wilson interval of a score, the Elo difference a score means with
its interval, and Wald's sequential probability ratio test (SPRT) on the games' scores in the
order they finished; engine A's score of a game from its record."""

import math


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
