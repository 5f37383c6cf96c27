"""Engine settings: every search and move-choice knob as a key, read from a KataGo-style config
file (`key = value` lines, `#` comments; gtp_main's --config) and from --set KEY=VALUE, which
wins over the file. docs/example.cfg lists every key with its default and the reason for it.

A key is named after the field it sets (SearchConfig's or PlayerConfig's, or the network's
`symmetries`) and its text is converted and checked by that field's type and range; an unknown
key or a bad value is a ConfigError naming the key (and the file and line). `auto` leaves a
key to the engine, where its default depends on what was loaded: value_weight (the net's value
head), symmetries (--policy-only), shapes (whether weights/shapes.npz is there), expand_visits
(the board size).
"""
import difflib
import math
from dataclasses import dataclass

from engine.player import PlayerConfig
from engine.search_config import SearchConfig
from engine.tree import MAX_PRIOR_EQEX, TREE_POLICIES

AUTO = "auto"
# The search's value mix with a net that has a value head, the measured best
# (benchmarks/history/, value head): 30% of the network's value in every win rate before
# move value_until; it beat the same search without the value 39 of 52 games.
NET_VALUE_WEIGHT = 0.3


class ConfigError(ValueError):
    """A config key that does not exist, or a value its key cannot take."""


def _number(kind, low=-math.inf, high=math.inf, above=None):
    """Return a converter of text to a finite `kind` (int or float) within [low, high] (and
    above `above`, exclusive, if given); ValueError says what is wrong."""
    def convert(text):
        try:
            value = kind(text)
        except ValueError:
            raise ValueError(f"expected {'an integer' if kind is int else 'a number'}, "
                             f"got {text!r}") from None
        if not math.isfinite(value) or value < low or value > high or (
                above is not None and value <= above):
            bounds = [f"> {above:g}" if above is not None else
                      (f">= {low:g}" if low > -math.inf else ""),
                      f"<= {high:g}" if high < math.inf else ""]
            raise ValueError(f"must be {' and '.join(b for b in bounds if b)}, got {text}")
        return value
    return convert


def _choice(*choices):
    """Return a converter that accepts one of choices."""
    def convert(text):
        if text not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}, got {text!r}")
        return text
    return convert


def _or_auto(convert):
    """Return a converter that also accepts 'auto'."""
    def either(text):
        return AUTO if text == AUTO else convert(text)
    return either


def _boolean(text):
    """Return True or False for 'true' or 'false' (any case)."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    raise ValueError(f"must be true or false, got {text!r}")


def _symmetries(text):
    """Return 1 or 8 for '1' or '8'."""
    if text not in ("1", "8"):
        raise ValueError(f"must be 1 or 8, got {text!r}")
    return int(text)


@dataclass(frozen=True)
class Key:
    """One config key: which settings object its field belongs to ('search', 'player' or
    'network'), the converter of its text, and its default (AUTO: the engine decides)."""
    owner: str
    convert: object
    default: object


def _field(owner, name, convert, default=None):
    """Return the Key of a SearchConfig or PlayerConfig field, default the dataclass's."""
    source = {"search": SearchConfig, "player": PlayerConfig}[owner]
    return Key(owner, convert, getattr(source, name) if default is None else default)


_FRACTION = _number(float, 0.0, 1.0)
_NON_NEGATIVE = _number(float, 0.0)
_COUNT = _number(int, 1)
_PRIOR_PLAYOUTS = _number(int, 0, MAX_PRIOR_EQEX)
_SHARE = _number(float, high=1.0, above=0.0)

KEYS = {
    # The tree policy and its constants.
    "tree_policy": _field("search", "tree_policy", _choice(*TREE_POLICIES)),
    "puct_c": _field("search", "puct_c", _NON_NEGATIVE),
    "fpu_reduction": _field("search", "fpu_reduction", _number(float)),
    "puct_top_k": _field("search", "puct_top_k", _COUNT),
    "puct_root_top_k": _field("search", "puct_root_top_k", _COUNT),
    "puct_top_cumulative": _field("search", "puct_top_cumulative", _SHARE),
    "net_uct_c": _field("search", "net_uct_c", _NON_NEGATIVE),
    "net_prior_weight": _field("search", "net_prior_weight", _NON_NEGATIVE),
    "top_k": _field("search", "top_k", _COUNT),
    "root_top_k": _field("search", "root_top_k", _COUNT),
    "top_cumulative": _field("search", "top_cumulative", _SHARE),
    "net_rave_bias": _field("search", "net_rave_bias", _number(float)),
    "net_expand_visits": _field("search", "net_expand_visits", _COUNT),
    # The network's value.
    "value_weight": _field("search", "value_weight", _or_auto(_FRACTION), AUTO),
    "value_until": _field("search", "value_until", _number(int, 0)),
    "symmetries": Key("network", _or_auto(_symmetries), AUTO),
    # The search without the network.
    "uct_c": _field("search", "uct_c", _NON_NEGATIVE),
    "rave_bias": _field("search", "rave_bias", _number(float)),
    "prior_weight": _field("search", "prior_weight", _NON_NEGATIVE),
    "prior_eqex": _field("search", "prior_eqex", _PRIOR_PLAYOUTS),
    "shapes": _field("search", "shapes", _or_auto(str), AUTO),
    "shape_eqex": _field("search", "shape_eqex", _PRIOR_PLAYOUTS),
    "expand_visits": _field("search", "expand_visits", _or_auto(_COUNT)),
    # Both searches.
    "first_play_urgency": _field("search", "first_play_urgency", _number(float)),
    "noise": _field("search", "noise", _NON_NEGATIVE),
    "virtual_loss": _field("search", "virtual_loss", _number(int, 0)),
    "early_stop": _field("search", "early_stop", _boolean),
    "prune_futile_escapes": _field("search", "prune_futile_escapes", _boolean),
    "max_nodes": _field("search", "max_nodes", _COUNT),
    # The move played, resignation, the end of the game.
    "favourite_margin": _field("player", "favourite_margin", _number(float, -1.0, 1.0)),
    "min_resign_playouts": _field("player", "min_resign_playouts", _number(int, 0)),
    "ownership_runs": _field("player", "ownership_runs", _COUNT),
}


def defaults():
    """Return every key with its default value."""
    return {name: key.default for name, key in KEYS.items()}


def value_of(name, text, where=""):
    """Return the value of key `name` given as text; ConfigError naming the key (after
    `where`, e.g. 'FILE:LINE: ') for an unknown key or a value it cannot take."""
    key = KEYS.get(name)
    if key is None:
        close = difflib.get_close_matches(name, KEYS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"{where}unknown config key {name!r}{hint}")
    try:
        return key.convert(text)
    except ValueError as exc:
        raise ConfigError(f"{where}{name}: {exc}") from None


def parse_setting(text):
    """Return (key, value) from a --set argument 'KEY=VALUE'; ConfigError when it has no '='
    or the key or value is bad."""
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        raise ConfigError(f"expected KEY=VALUE, got {text!r}")
    return name.strip(), value_of(name.strip(), value.strip(), f"--set {text}: ")


def read_file(path):
    """Return {key: value} from a config file of `key = value` lines (`#` starts a comment,
    blank lines are skipped); ConfigError naming the file and line for a line that is not
    `key = value`, a key given twice, an unknown key or a bad value, or a file that cannot
    be read."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    values, lines_of = {}, {}
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        where = f"{path}:{number}: "
        name, equals, value = (part.strip() for part in text.partition("="))
        if not equals or not name or not value:
            raise ConfigError(f"{where}expected 'key = value', got {text!r}")
        if name in values:
            raise ConfigError(f"{where}{name} given again (first on line {lines_of[name]})")
        values[name] = value_of(name, value, where)
        lines_of[name] = number
    return values


def load(path=None, settings=()):
    """Return every key's value: its default, else the config file's at path (if any), else
    the last of the (key, value) settings that names it (from --set, which wins)."""
    values = defaults()
    if path is not None:
        values.update(read_file(path))
    values.update(settings)
    return values


def owned_by(values, owner):
    """Return {field: value} of the keys whose field belongs to owner ('search', 'player' or
    'network')."""
    return {name: value for name, value in values.items() if KEYS[name].owner == owner}
