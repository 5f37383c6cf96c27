"""Controller side of GTP: one engine subprocess, answers read with timeouts and checked."""

import dataclasses
import os
import queue
import re
import shlex
import subprocess
import sys
import threading
import time

from engine import foreign_environment

# darkgo's GTP entry point in this repository, which the benchmarks run by default.
GTP_MAIN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "gtp_main.py")


def darkgo_command(engine=None):
    """Return engine, or when it is None the shell command that runs this repository's
    darkgo with the Python running this."""
    return engine or f"{shlex.quote(sys.executable)} {shlex.quote(GTP_MAIN)}"


def split_engine_flags(argv):
    """Return (the benchmark's words, the engine's flags) of argv (default: sys.argv's): the
    words after the first '--' are the engine's."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv:
        return argv, []
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1:]


_STATUS_LINE = re.compile(r"([=?])(\d*)(?:\s(.*))?$", re.DOTALL)


class EngineError(Exception):
    """The engine died or stopped answering; the game cannot go on with it."""


class EngineTimeout(EngineError):
    """The engine did not finish an answer within the time allowed."""


@dataclasses.dataclass
class Response:
    """One GTP answer: ok is True for '=', False for '?', None when no status could be read."""

    ok: bool | None
    text: str
    problems: list[str]

    @property
    def malformed(self) -> bool:
        """Return True when the answer broke the protocol in any way."""
        return bool(self.problems)


class GtpEngine:
    """One engine subprocess spoken to over pipes; stderr goes to a log file."""

    def __init__(self, command: str, stderr_path: str, tail_timeout: float = 1.0,
                 env: dict[str, str] | None = None):
        """Start command (its environment env, else ours without our numba cache folder:
        engine.foreign_environment), its stderr written to stderr_path."""
        self.command = command
        # Lines after an answer's first one come at once from a sane engine, so a
        # short wait spots an answer that never gets its terminating empty line.
        self.tail_timeout = tail_timeout
        with open(stderr_path, "wb") as log:
            # A new session keeps a terminal Ctrl-C away from the engine, so an
            # interrupted match abandons its games instead of recording crashes.
            self._proc = subprocess.Popen(
                shlex.split(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=log, start_new_session=True,
                env=foreign_environment() if env is None else env)
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._next_id = 1
        threading.Thread(target=self._read_stdout, daemon=True).start()

    def _read_stdout(self) -> None:
        """Return when stdout closes, having queued each line and then None."""
        with self._proc.stdout:
            for raw in self._proc.stdout:
                self._lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        self._lines.put(None)

    def _next_line(self, deadline: float) -> str | None:
        """Return the next stdout line, None at end of output; raise EngineTimeout past deadline."""
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                return self._lines.get_nowait()
            return self._lines.get(timeout=remaining)
        except queue.Empty:
            raise EngineTimeout(f"no answer in time from {self.command}") from None

    def send(self, command: str, timeout: float) -> Response:
        """Return the answer to command; raise EngineError (engine killed) if it dies or hangs."""
        cmd_id = self._next_id
        self._next_id += 1
        try:
            self._proc.stdin.write(f"{cmd_id} {command}\n".encode())
            self._proc.stdin.flush()
        except (OSError, ValueError) as exc:
            self.kill()
            raise EngineError(f"engine died before '{command}': {exc}") from None
        deadline = time.monotonic() + timeout
        try:
            return self._read_response(cmd_id, deadline)
        except EngineError:
            self.kill()
            raise

    def _read_response(self, cmd_id: int, deadline: float) -> Response:
        """Return the answer block that follows a command, checked against the protocol."""
        line = self._next_line(deadline)
        # Empty lines before an answer are stray terminators, not answers.
        while line == "":
            line = self._next_line(deadline)
        if line is None:
            raise EngineError("engine exited without answering")
        body = [line]
        while True:
            try:
                line = self._next_line(min(deadline, time.monotonic() + self.tail_timeout))
            except EngineTimeout:
                line = None
            if line is None:
                return _parse(body, cmd_id, ["answer not terminated by an empty line"])
            if line == "":
                return _parse(body, cmd_id, [])
            body.append(line)

    def close(self, grace: float = 5.0) -> None:
        """Return once the engine has exited: asked to quit, killed if still there after grace s."""
        if self._proc.poll() is None:
            try:
                self.send("quit", grace)
            except EngineError:
                # send has already killed it.
                pass
        try:
            self._proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.kill()
        try:
            self._proc.stdin.close()
        except OSError:
            # Unsent bytes to a dead engine cannot be flushed; there is nothing left to tell it.
            pass

    def kill(self) -> None:
        """Return after the engine process is gone."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()


def _parse(body: list[str], cmd_id: int, problems: list[str]) -> Response:
    """Return the Response for an answer's lines, adding any protocol problems found."""
    match = _STATUS_LINE.match(body[0])
    text = "\n".join(body)
    if match is None:
        problems = problems + [f"answer does not start with '=' or '?': {body[0]!r}"]
        return Response(None, text, problems)
    status, answer_id, first = match.groups()
    if answer_id != str(cmd_id):
        problems = problems + [f"answer id {answer_id!r} does not match command id {cmd_id}"]
    text = "\n".join([(first or "").strip()] + body[1:]).strip()
    return Response(status == "=", text, problems)
