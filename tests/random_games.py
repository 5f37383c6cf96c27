"""Zip archives of random legal 19x19 games for the data-path tests: varied results, a pass,
setup stones, a collection, and the games a reader skips."""
import random
import zipfile

from engine import board as bd
from engine.game import Game

RESULTS = ["B+R", "W+3.5", "W+R", "B+T", "B+12.5", None]


def random_game(seed, moves=160, result="B+R", setup=""):
    """Return the SGF text of a random legal 19x19 game with a pass at move 30."""
    rng = random.Random(seed)
    game = Game(19)
    if setup:   # two black stones at D4 and Q16 (sgf dp, pd), White to move first
        game.place_setup(bd.BLACK, game.point(3, 3))
        game.place_setup(bd.BLACK, game.point(15, 15))
        game.to_play = bd.WHITE
    body = []
    for i in range(moves):
        color = game.to_play
        if i == 30:
            p = bd.PASS
        else:
            legal = game.legal_moves(color, superko=False)
            if not legal:
                break
            p = rng.choice(legal)
        game.play(color, p, superko=False)
        if p == bd.PASS:
            sgf_point = ""
        else:
            x, y = game.xy(p)
            sgf_point = chr(97 + x) + chr(97 + 18 - y)
        body.append(f";{'B' if color == bd.BLACK else 'W'}[{sgf_point}]")
    re = f"RE[{result}]" if result else ""
    return f"(;FF[4]GM[1]SZ[19]KM[6.5]{re}{setup}{''.join(body)})"


def write_archive(path, count=8, start=0):
    """Write a zip of count random games (varied results; one with setup stones, one
    collection of two, a 9x9 game, a broken and an illegal one); return its path."""
    with zipfile.ZipFile(path, "w") as z:
        for i in range(count):
            z.writestr(f"games/{start + i}.sgf",
                       random_game(start + i, 120 + 10 * i, RESULTS[i % len(RESULTS)]))
        z.writestr(f"games/setup{start}.sgf",
                   random_game(start + 99, 90, "W+R", setup="AB[dp][pd]PL[W]"))
        z.writestr(f"games/pair{start}.sgf", random_game(start + 50, 70) + "\n" +
                   random_game(start + 51, 80, "W+R"))
        z.writestr("games/nine.sgf", "(;FF[4]GM[1]SZ[9];B[ee])")
        z.writestr("games/broken.sgf", "(;FF[4]GM[1]SZ[19];B[dd];W[pp")
        z.writestr("games/illegal.sgf", "(;FF[4]GM[1]SZ[19];B[dd];W[dd])")
    return str(path)
