"""Run regression suites in GNU Go's format (as gogui-regress does) against a GTP engine.

A table on stderr and one JSON line last on stdout:

    python -m benchmarks.strength.regress tests/regress/darkgo.tst -- --rollouts 300 --threads 1
    python -m benchmarks.strength.regress GNUGO/regression/strategy.tst --only-genmove \
        -- --policy-only

A suite is a text file of GTP commands, one a line. A command may start with a test number;
the line `#? [PATTERN]` after it says what its answer must be: the whole answer matches the
regular expression PATTERN (`.` matching newlines too; for the commands that ask for a move
regardless of case, as GTP's vertices and `pass` are), or with `[!PATTERN]` does
not. A `*` after the bracket marks a test the engine is expected to fail, a `&` one whose
answer is only shown; a numbered command without a `#?` line passes unless it is refused, as
in gogui-regress. A test whose command the engine refuses (`? ...`) fails, whatever the
pattern, unless the answer is `? unknown command`: the engine lacks the command, and the test
counts as unsupported. Every other `#` line is a comment, and commands without a number set
up the position; the set-up commands the engine refuses are counted and listed, since the
tests after a refused `loadsgf` see another position. A test counts as one of: pass, fail,
expected fail, unexpected pass (the last two for `*` tests), ignored, unsupported. Every
suite is read before any runs, so a malformed one stops the run before it starts; an answer
that breaks the protocol stops its suite, as the answers after it could not be trusted.

`loadsgf` paths are resolved against the suite's folder, so that GNU Go's suites (which name
`games/...`) run from anywhere. With --only-genmove only the tests that ask for a move
(`genmove`, `reg_genmove`, `gg_genmove`, `restricted_genmove`) are run and set-up commands
kept: what a suite written for GNU Go can ask of another engine (its other tests use GNU Go's
own reading commands).

The engine is darkgo (`python gtp_main.py`) with the flags after `--`; --engine replaces the
command, flags after `--` still appended. One engine process runs each suite. With --results
one JSON line per test is written, for comparing two engines test by test.
"""
import argparse
import dataclasses
import json
import os
import re
import shlex
import sys
import tempfile
import time

from benchmarks.gtp_client import EngineError, GtpEngine, darkgo_command, split_engine_flags

GENMOVE_COMMANDS = ("genmove", "reg_genmove", "gg_genmove", "restricted_genmove")
OUTCOMES = ("pass", "fail", "expected fail", "unexpected pass", "ignored", "unsupported")
UNKNOWN_COMMAND = "unknown command"
_NUMBERED = re.compile(r"(\d+)\s+(\S.*)$")
_EXPECTATION = re.compile(r"#\?\s*\[(.*)\]\s*([*&]?)\s*$")


class SuiteError(Exception):
    """A suite file that cannot be read or does not follow the format."""


@dataclasses.dataclass
class Expectation:
    """What a test's answer must be: PATTERN matched (negate: not matched) by the whole answer."""

    pattern: str
    negate: bool = False
    expected_fail: bool = False
    ignore: bool = False

    def matches(self, ok, text, ignore_case=False):
        """Return whether an answer (ok: '=' rather than '?') satisfies the expectation."""
        if not ok:
            return False
        flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
        found = re.fullmatch(self.pattern, text, flags) is not None
        return found != self.negate


@dataclasses.dataclass
class Step:
    """One command of a suite: its line, test number (None for set-up) and expectation."""

    line: int
    number: int | None
    command: str
    expectation: Expectation | None = None


def parse_expectation(text, line):
    """Return the Expectation of a `#? [...]` line; raise SuiteError if it is malformed."""
    m = _EXPECTATION.fullmatch(text.strip())
    if m is None:
        raise SuiteError(f"line {line}: expected '#? [PATTERN]' with an optional * or &")
    pattern, mark = m.group(1), m.group(2)
    negate = pattern.startswith("!")
    if negate:
        pattern = pattern[1:]
    try:
        re.compile(pattern)
    except re.error as exc:
        raise SuiteError(f"line {line}: bad pattern {pattern!r}: {exc}") from None
    return Expectation(pattern, negate, mark == "*", mark == "&")


def parse_suite(text):
    """Return the Steps of a suite's text; raise SuiteError on a malformed or stray `#?` line
    or a test number used twice."""
    steps = []
    numbers = set()
    for line, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if stripped.startswith("#?"):
            if not steps or steps[-1].number is None or steps[-1].expectation is not None:
                raise SuiteError(f"line {line}: '#?' without a numbered command before it")
            steps[-1].expectation = parse_expectation(stripped, line)
            continue
        if not stripped or stripped.startswith("#"):
            continue
        m = _NUMBERED.match(stripped)
        if m is None:
            steps.append(Step(line, None, stripped))
            continue
        number = int(m.group(1))
        if number in numbers:
            raise SuiteError(f"line {line}: test number {number} used twice")
        numbers.add(number)
        steps.append(Step(line, number, m.group(2)))
    return steps


def resolve_loadsgf(command, folder):
    """Return command with a relative `loadsgf` file made absolute against folder; raise
    SuiteError when that path holds whitespace, which a GTP argument cannot."""
    words = command.split()
    if len(words) >= 2 and words[0] == "loadsgf" and not os.path.isabs(words[1]):
        words[1] = os.path.abspath(os.path.join(folder, words[1]))
        if any(c.isspace() for c in words[1]):
            raise SuiteError(f"loadsgf path {words[1]!r} has whitespace, which GTP cannot "
                             "carry; move the suite's folder")
        return " ".join(words)
    return command


def asks_for_move(command):
    """Return whether a command asks the engine for a move."""
    return command.split()[0] in GENMOVE_COMMANDS


def select_steps(steps, only_genmove):
    """Return the steps to run: all, or with only_genmove the set-up steps and the tests that
    ask for a move."""
    if not only_genmove:
        return steps
    return [s for s in steps if s.number is None or asks_for_move(s.command)]


def outcome_of(expectation, ok, text, ignore_case=False):
    """Return a test's outcome (one of OUTCOMES) from its expectation (None: the command must
    only succeed) and answer, matched regardless of case with ignore_case."""
    if not ok and text.strip() == UNKNOWN_COMMAND:
        return "unsupported"
    if expectation is None:
        return "pass" if ok else "fail"
    if expectation.ignore:
        return "ignored"
    matched = expectation.matches(ok, text, ignore_case)
    if expectation.expected_fail:
        return "unexpected pass" if matched else "expected fail"
    return "pass" if matched else "fail"


def read_suite(path, only_genmove):
    """Return the steps of the suite at path to run (select_steps) with its loadsgf paths
    resolved; raise SuiteError, naming the file, for one that cannot be read or is malformed."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            text = f.read()
    except OSError as exc:
        raise SuiteError(f"{path}: {exc.strerror or exc}") from None
    folder = os.path.dirname(os.path.abspath(path))
    try:
        steps = select_steps(parse_suite(text), only_genmove)
        for step in steps:
            step.command = resolve_loadsgf(step.command, folder)
    except SuiteError as exc:
        raise SuiteError(f"{path}: {exc}") from None
    return steps


def run_suite(name, steps, command, timeout, log_path, on_result):
    """Return (results, refused set-ups, error) of a suite's steps run through one engine
    process: one dict per test, in order, each also passed to on_result; one dict per set-up
    command the engine refused; error None, or why the suite stopped (the engine died, hung
    or broke the protocol; the steps after it are not run)."""
    results = []
    refused = []
    engine = GtpEngine(command, log_path)
    try:
        for step in steps:
            started = time.monotonic()
            try:
                response = engine.send(step.command, timeout)
            except EngineError as exc:
                return results, refused, f"line {step.line} ({step.command}): {exc}"
            if response.malformed:
                return results, refused, (f"line {step.line} ({step.command}): "
                                          f"{'; '.join(response.problems)}")
            ok = response.ok is True
            if step.number is None:
                if not ok:
                    refused.append({"line": step.line, "command": step.command,
                                    "answer": f"? {response.text}"})
                continue
            expected = None if step.expectation is None else (
                ("!" if step.expectation.negate else "") + step.expectation.pattern)
            result = {"suite": name, "number": step.number, "command": step.command,
                      "expected": expected,
                      "answer": response.text if ok else f"? {response.text}",
                      "outcome": outcome_of(step.expectation, ok, response.text,
                                            asks_for_move(step.command)),
                      "seconds": round(time.monotonic() - started, 3)}
            results.append(result)
            on_result(result)
    finally:
        engine.close()
    return results, refused, None


def tally(results):
    """Return the count of each outcome in results."""
    return {name: sum(r["outcome"] == name for r in results) for name in OUTCOMES}


def format_table(suites):
    """Return a human-readable table of each suite's outcomes and its unexpected results."""
    lines = [f"{'suite':24} {'tests':>5} " + " ".join(f"{name:>15}" for name in OUTCOMES)]
    for suite in suites:
        counts = suite["counts"]
        lines.append(f"{suite['suite']:24} {suite['tests']:>5} "
                     + " ".join(f"{counts[name]:>15}" for name in OUTCOMES))
        if suite["error"]:
            lines.append(f"  stopped: {suite['error']}")
        for r in suite["refused_setup"]:
            lines.append(f"  set-up refused at line {r['line']}: {r['command']} -> "
                         f"{r['answer']!r}")
    for suite in suites:
        for r in suite["unexpected"]:
            lines.append(f"  {r['outcome'].upper()} {suite['suite']} {r['number']}: "
                         f"{r['command']} -> {r['answer']!r} (expected [{r['expected']}])")
    return "\n".join(lines)


def parse_args(argv):
    """Return (parsed arguments, engine flags): the words after the first '--' are the flags."""
    argv, flags = split_engine_flags(argv)
    p = argparse.ArgumentParser(prog="python -m benchmarks.strength.regress",
                                description=__doc__.split("\n")[0])
    p.add_argument("suites", nargs="+", help="suite files (.tst)")
    p.add_argument("--engine", help="engine command (default: darkgo's gtp_main.py)")
    p.add_argument("--only-genmove", action="store_true",
                   help="run only the tests that ask for a move (and the set-up commands)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds an answer may take before the engine counts as hung; "
                        "default 600")
    p.add_argument("--results", help="write one JSON line per test to this file")
    p.add_argument("--engine-log", help="the first suite's engine's stderr, the next ones' "
                   "in FILE.1, FILE.2, ... (default: a temporary file)")
    args = p.parse_args(argv)
    if not args.timeout > 0:
        p.error("--timeout must be positive")
    return args, flags


def main(argv=None):
    """Return the exit status: 0 when every suite ran to its end, 1 when an engine stopped
    answering or broke the protocol, 2 for a suite that cannot be read (then none runs); the
    table and the JSON line are printed."""
    args, flags = parse_args(argv)
    try:
        suite_steps = [read_suite(path, args.only_genmove) for path in args.suites]
    except SuiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    base = darkgo_command(args.engine)
    command = " ".join([base] + [shlex.quote(f) for f in flags])
    log_path = args.engine_log
    if log_path is None:
        fd, log_path = tempfile.mkstemp(prefix="regress-engine-", suffix=".log")
        os.close(fd)
    print(f"engine: {command} (stderr to {log_path})", file=sys.stderr)
    if args.results:
        os.makedirs(os.path.dirname(args.results) or ".", exist_ok=True)
    out = open(args.results, "w") if args.results else None
    started = time.monotonic()

    def on_result(result):
        print(f"{result['suite']} {result['number']}: {result['outcome']}", file=sys.stderr)
        if out is not None:
            out.write(json.dumps(result) + "\n")
            out.flush()

    suites = []
    status = 0
    try:
        for k, (path, steps) in enumerate(zip(args.suites, suite_steps)):
            # Each suite's engine writes a log of its own: the first the given file.
            suite_log = log_path if k == 0 else f"{log_path}.{k}"
            results, refused, error = run_suite(os.path.basename(path), steps, command,
                                                args.timeout, suite_log, on_result)
            if error is not None:
                status = 1
            suites.append({"suite": os.path.basename(path), "path": path,
                           "tests": len(results), "counts": tally(results), "error": error,
                           "refused_setup": refused,
                           "unexpected": [r for r in results
                                          if r["outcome"] in ("fail", "unexpected pass")]})
    finally:
        if out is not None:
            out.close()
    every = [r for s in suites for r in s["unexpected"]]
    totals = {name: sum(s["counts"][name] for s in suites) for name in OUTCOMES}
    print(format_table(suites), file=sys.stderr)
    print(json.dumps({"engine": command, "only_genmove": args.only_genmove,
                      "tests": sum(s["tests"] for s in suites), "totals": totals,
                      "unexpected": len(every), "suites": suites,
                      "seconds": round(time.monotonic() - started, 2)}))
    return status


if __name__ == "__main__":
    sys.exit(main())
