"""benchmarks.strength.soak's report, without playing: a stand-in engine and games."""
import json

from benchmarks.strength import soak


class _StandIn:
    """What main() needs of soak.Soak, with nothing started."""

    def __init__(self, flags, workdir):
        self.crashes = 0
        self.stderr_paths = []
        self.closed = False

    def close(self):
        self.closed = True

    def tree_high_water(self, max_nodes):
        return 0, 0


def test_an_interrupted_soak_still_reports_the_games_it_finished(monkeypatch, capsys):
    made = []

    def play_game(stand_in, opponent, index, args, workdir):
        if index == 2:
            raise KeyboardInterrupt
        made.append(stand_in)
        return {"game": index + 1, "colour": "b", "moves": 10, "illegal": 0, "refused": 0,
                "unreadable": 0, "crash": False, "result": "B+R", "won": True, "seconds": 1.0,
                "rss_mib": 100.0 + index}

    monkeypatch.setattr(soak, "Soak", _StandIn)
    monkeypatch.setattr(soak, "play_game", play_game)
    assert soak.main(["--games", "5", "--memory-game", "1"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["interrupted"] is True and report["games"] == 2 and report["wins"] == 2
    assert (report["rss_mib_reference"], report["rss_mib_last"]) == (100.0, 101.0)
    assert made[0].closed
