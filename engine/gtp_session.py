"""The plumbing of a GTP session: the spec's preprocessing of input lines, the error answered
with '?', the stop events a search polls (signals, the next command, the controller leaving)
and an output stream that notices when its reader goes away."""
import re


class InputArrived:
    """A stop event for a search that is set as soon as the next command line is waiting."""

    def __init__(self, pending):
        self.pending = pending

    def is_set(self):
        return not self.pending.empty()


class Flag:
    """A stop event that a signal handler may set: set() only assigns an attribute, where
    threading.Event.set takes a lock that the interrupted main thread may hold."""

    def __init__(self):
        self._set = False

    def set(self):
        self._set = True

    def is_set(self):
        return self._set


class LeaveArrives:
    """A stop event set once a 'quit' or the end of input is read after its creation (the
    controller leaving while a move is searched); commands queued before it, as a script's
    'genmove b' then 'quit', do not cut the search short."""

    def __init__(self, engine):
        self.engine = engine
        self.before = engine.leaving_read

    def is_set(self):
        return self.engine.leaving_read > self.before


class AnyOf:
    """A stop event set when any of the given ones is."""

    def __init__(self, *events):
        self.events = events

    def is_set(self):
        return any(e.is_set() for e in self.events)


class Output:
    """A text stream whose first failed write or flush (BrokenPipeError when the reader went
    away, a closed stream) calls on_gone; later writes are dropped."""

    def __init__(self, stream, on_gone):
        self.stream = stream
        self.on_gone = on_gone
        self.gone = False

    def write(self, text):
        self._do(self.stream.write, text)

    def flush(self):
        self._do(self.stream.flush)

    def _do(self, method, *args):
        if self.gone:
            return
        try:
            method(*args)
        except (OSError, ValueError):
            self.gone = True
            self.on_gone()


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# An id is ASCII digits: str.isdigit and \d also take '²' or Arabic-Indic digits.
COMMAND_ID = re.compile(r"\s*([0-9]+)\s")
DIGITS = re.compile(r"[0-9]+")


class GtpError(Exception):
    """A failure answered with '?' and the message."""


def preprocess(line):
    """Return the command part of a raw GTP line (may be empty)."""
    line = _CONTROL.sub("", line.replace("\t", " "))
    return line.split("#", 1)[0].strip()


def is_quit(raw):
    """Return True if the raw line is a 'quit' command (with or without an id)."""
    parts = preprocess(raw).split()
    if parts and DIGITS.fullmatch(parts[0]):
        parts.pop(0)
    return parts[:1] == ["quit"]

