"""Config keys: a KataGo-style file (--config) and --set KEY=VALUE reach the engine's settings,
--set wins over the file, an unknown key or a bad value stops the engine at start-up naming
the key (and the file and line), and docs/example.cfg lists exactly the keys the code accepts
with the code's defaults."""
import os

import pytest

import gtp_main
from engine import config
from nets import DEFAULT_WEIGHTS, POLICY_ONLY_WEIGHTS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "docs", "example.cfg")


def parse(*flags):
    return gtp_main.build_parser().parse_args(["--seed", "1", "--net", "none", *flags])


def write(tmp_path, text):
    path = tmp_path / "engine.cfg"
    path.write_text(text)
    return str(path)


def test_the_example_lists_every_key_with_its_default():
    assert config.read_file(EXAMPLE) == config.defaults()


def test_the_example_file_gives_the_same_engine_as_no_file():
    assert gtp_main.player_config(parse("--config", EXAMPLE)) == gtp_main.player_config(parse())


def test_a_file_and_set_reach_the_search_and_set_wins(tmp_path):
    path = write(tmp_path, "# a comment\n\npuct_c = 2.5   # more exploring\ntree_policy = darkforest\n"
                           "ownership_runs = 300\nearly_stop = false\nexpand_visits = 5\n")
    player = gtp_main.player_config(parse("--config", path, "--set", "puct_c=0.7",
                                          "--set", "max_nodes=1000"))
    search = player.search
    assert (search.puct_c, search.tree_policy, search.early_stop) == (0.7, "darkforest", False)
    assert (search.expand_visits, search.max_nodes, search.max_edges) == (5, 1000, 20_000)
    assert player.ownership_runs == 300
    # The last --set of a key wins.
    assert gtp_main.player_config(parse("--set", "puct_c=1", "--set", "puct_c=3")).search.puct_c \
        == 3


@pytest.mark.parametrize("text,message", [
    ("puct_c = 1\npuct_k = 3\n", ":2: unknown config key 'puct_k' (did you mean 'puct_c'?)"),
    ("puct_c = -1\n", ":1: puct_c: must be >= 0, got -1"),
    ("value_weight = 1.5\n", ":1: value_weight: must be >= 0 and <= 1, got 1.5"),
    ("max_nodes = 2.5\n", ":1: max_nodes: expected an integer, got '2.5'"),
    ("early_stop = yes\n", ":1: early_stop: must be true or false, got 'yes'"),
    ("tree_policy = uct\n", ":1: tree_policy: must be one of darkforest, puct, got 'uct'"),
    ("symmetries = 4\n", ":1: symmetries: must be 1 or 8, got '4'"),
    ("noise = nan\n", ":1: noise: must be >= 0, got nan"),
    ("\n\npuct_c 2\n", ":3: expected 'key = value', got 'puct_c 2'"),
    ("puct_c =\n", ":1: expected 'key = value', got 'puct_c ='"),
    ("puct_c = 1\npuct_c = 2\n", ":2: puct_c given again (first on line 1)"),
])
def test_a_bad_line_stops_the_engine_at_start_up_naming_file_line_and_key(tmp_path, capsys,
                                                                           text, message):
    path = write(tmp_path, text)
    assert gtp_main.main(["--net", "none", "--config", path]) == 2
    assert capsys.readouterr().err == f"{gtp_main.build_parser().prog}: {path}{message}\n"


def test_a_missing_config_file_is_a_start_up_error(tmp_path, capsys):
    path = str(tmp_path / "missing.cfg")
    assert gtp_main.main(["--net", "none", "--config", path]) == 2
    assert f"cannot read config file {path}" in capsys.readouterr().err


@pytest.mark.parametrize("setting,message", [
    ("puct=1", "--set puct=1: unknown config key 'puct'"),
    ("puct_c=x", "--set puct_c=x: puct_c: expected a number, got 'x'"),
    ("puct_c", "expected KEY=VALUE, got 'puct_c'"),
    ("=1", "expected KEY=VALUE, got '=1'"),
])
def test_a_bad_set_is_refused_by_the_parser(capsys, setting, message):
    with pytest.raises(SystemExit) as refused:
        gtp_main.build_parser().parse_args(["--set", setting])
    assert refused.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("flags, message", [
    (["--set", "symmetries=8"], "symmetries sets how the network is evaluated"),
    (["--set", "value_weight=0.3"], "value_weight needs the network's value head"),
])
def test_network_keys_without_the_network_are_refused(flags, message, capsys):
    assert gtp_main.main(["--net", "none", *flags]) == 2
    assert message in capsys.readouterr().err


def test_help_keeps_the_per_run_options_and_names_the_weights_the_code_loads(capsys):
    with pytest.raises(SystemExit):
        gtp_main.build_parser().parse_args(["--help"])
    text = capsys.readouterr().out
    options = {word.rstrip(",") for line in text.splitlines()
               for word in line.split() if line.startswith("  -") and word.startswith("-")}
    assert len(options - {"-h"}) <= 25
    assert {"--config", "--set", "--rollouts", "--weights", "--deterministic"} <= options
    for path in (DEFAULT_WEIGHTS, POLICY_ONLY_WEIGHTS):
        assert os.path.relpath(path, ROOT) in " ".join(text.split())
