"""Time controls as a server keeps them (absolute, Japanese byo-yomi, canadian): the GTP
command that sets one, and a player's clock charged move by move, for the clock benchmark and
the match runner."""
import dataclasses
import math

SYSTEMS = ("absolute", "byoyomi", "canadian")


@dataclasses.dataclass(frozen=True)
class TimeSystem:
    """A time control: main seconds, then Japanese byo-yomi (periods of `period` seconds) or
    canadian overtime (`stones` in every period of `period` seconds), or nothing (absolute)."""

    name: str
    main: float
    period: float = 0.0
    periods: int = 0
    stones: int = 0

    def gtp(self) -> str:
        """Return the GTP command that sets this time control."""
        if self.name == "absolute":
            return f"time_settings {self.main:g} 0 0"
        count = self.periods if self.name == "byoyomi" else self.stones
        return f"kgs-time_settings {self.name} {self.main:g} {self.period:g} {count}"

    def plain_gtp(self) -> str:
        """Return the plain GTP time_settings for engines without kgs-time_settings: exact for
        absolute and canadian time; Japanese byo-yomi becomes a canadian period of one stone,
        which is the same for the engine's next move."""
        if self.name == "absolute":
            return self.gtp()
        stones = self.stones if self.name == "canadian" else 1
        return f"time_settings {self.main:g} {self.period:g} {stones}"


DEFAULTS = {"absolute": TimeSystem("absolute", 60.0),
            "byoyomi": TimeSystem("byoyomi", 10.0, 5.0, periods=1),
            "canadian": TimeSystem("canadian", 30.0, 10.0, stones=5)}


def time_system(name: str, main=None, period=None, periods=None, stones=None) -> TimeSystem:
    """Return the named system with its defaults replaced by the values given (those that
    apply to it); raise ValueError for an unknown name or values that leave it no time."""
    if name not in DEFAULTS:
        raise ValueError(f"unknown time system {name!r}")
    given = {"main": main}
    if name == "byoyomi":
        given.update(period=period, periods=periods)
    elif name == "canadian":
        given.update(period=period, stones=stones)
    system = dataclasses.replace(DEFAULTS[name], **{key: value for key, value in given.items()
                                                    if value is not None})
    if system.main < 0 or (name == "absolute" and system.main == 0):
        raise ValueError(f"{name}: no main time")
    if name != "absolute" and (system.period <= 0 or max(system.periods, system.stones) < 1):
        raise ValueError(f"{name}: needs a positive period and at least 1 "
                         f"{'period' if name == 'byoyomi' else 'stone'}")
    return system


class GameClock:
    """One player's clock under a TimeSystem, charged move by move as a server charges it."""

    def __init__(self, system: TimeSystem):
        self.system = system
        self.main = system.main
        self.periods = system.periods        # Japanese byo-yomi: periods left
        self.period_left = system.period     # canadian: seconds left in the current period
        self.stones = system.stones          # canadian: stones left in the current period
        # Main time is used up (a byo-yomi or canadian clock may start so).
        self.overtime = self.main <= 0 and system.name != "absolute"
        self.lost = False
        self.used = 0.0                      # seconds charged
        self.available = system.main         # main time plus the overtime given so far

    def allowance(self) -> float:
        """Return what the next move may take without losing the game or a byo-yomi period:
        the time to a loss on time, but in Japanese byo-yomi the main time left and one
        period."""
        if self.system.name == "byoyomi":
            return self.main + self.system.period
        return self.to_loss()

    def to_loss(self) -> float:
        """Return the seconds the next move may take before it loses on time."""
        name, period = self.system.name, self.system.period
        if name == "absolute":
            return self.main
        if name == "byoyomi":
            return self.main + self.periods * period
        return self.period_left if self.overtime else self.main + period

    def time_left_args(self) -> tuple[int, int]:
        """Return the (seconds, stones) that kgsGtp sends in time_left now."""
        if not self.overtime:
            return math.floor(self.main), 0
        if self.system.name == "byoyomi":
            return math.floor(self.system.period), self.periods
        return math.floor(self.period_left), self.stones

    def state(self) -> dict:
        """Return the clock as it stands: main seconds left, then the overtime's state."""
        state = {"main_s": round(self.main, 3)}
        if self.system.name == "byoyomi":
            state["periods"] = self.periods
        elif self.system.name == "canadian":
            state.update(period_s=round(self.period_left, 3), stones=self.stones)
        return state

    def charge(self, seconds: float) -> bool:
        """Charge a move that took `seconds`; return False if it lost on time, which is final."""
        self.used += seconds
        if not self.overtime:
            if seconds <= self.main:
                self.main -= seconds
                if self.main <= 0 and self.system.name != "absolute":
                    self.overtime = True
                return True
            seconds -= self.main
            self.main = 0.0
            if self.system.name == "absolute":
                self.lost = True
                return False
            self.overtime = True
        period = self.system.period
        if self.system.name == "byoyomi":
            # Periods wholly exceeded: a move that ends exactly at a period's end keeps it.
            spent = max(0, math.ceil(seconds / period) - 1)
            self.available += period * min(spent + 1, self.periods)
            if spent >= self.periods:
                self.periods = 0
                self.lost = True
                return False
            self.periods -= spent
            return True
        if self.stones == self.system.stones:
            self.available += period
        self.period_left -= seconds
        if self.period_left < 0:
            self.lost = True
            return False
        self.stones -= 1
        if self.stones == 0:
            self.period_left, self.stones = period, self.system.stones
        return True
