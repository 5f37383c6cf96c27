"""A property of the GTP front end, checked on generated sessions (hypothesis): whatever the
lines, exactly one answer per command with its id and none for an empty or comment line, no
exception escaping, no internal error, and a '?' answer leaves the game as it was. The
generated sessions are the same on every run (derandomize), so the suite stays repeatable;
`python -m benchmarks.robustness.fuzz` draws fresh lines at scale."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.robustness import fuzz

COMMANDS = ("boardsize", "clear_board", "cputime", "final_score", "final_status_list",
            "fixed_handicap", "genmove", "gogui-analyze_commands", "gogui-ownership",
            "gogui-visits", "kata-analyze", "kgs-chat", "kgs-game_over", "kgs-genmove_cleanup",
            "kgs-rules", "kgs-time_settings", "known_command", "komi", "list_commands",
            "list_stones", "loadsgf", "lz-analyze", "lz-genmove_analyze", "name",
            "place_free_handicap", "play", "printsgf", "protocol_version", "quit",
            "reg_genmove", "set_free_handicap", "showboard", "time_left", "time_settings",
            "undo", "version", "Play", "no_such_command")
ARGUMENT = st.one_of(st.sampled_from(fuzz.COLORS + fuzz.VERTICES + fuzz.NUMBERS + fuzz.WORDS),
                     st.text(max_size=8))
COMMAND = st.builds(lambda name, args: " ".join([name, *args]), st.sampled_from(COMMANDS),
                    st.lists(ARGUMENT, max_size=4))
PLAY = st.builds(lambda color, x, y: f"play {color} {'ABCDEFGHJ'[x]}{y + 1}",
                 st.sampled_from(("b", "w")), st.integers(0, 8), st.integers(0, 8))
LINE = st.builds(lambda id_, body: f"{id_} {body}" if id_ is not None else body,
                 st.one_of(st.none(), st.integers(0, 10 ** 12)),
                 st.one_of(PLAY, PLAY, COMMAND, COMMAND, st.text(max_size=30)))


def test_every_command_gets_one_answer_and_a_refused_one_changes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)     # printsgf writes wherever its argument says

    @settings(max_examples=150, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(LINE, min_size=1, max_size=25))
    def session(lines):
        fuzzer = fuzz.Fuzzer(rollouts=4)
        try:
            for line in lines:
                assert fuzzer.feed(line) == [], repr(line)
        finally:
            fuzzer.close()

    session()
