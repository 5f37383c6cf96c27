"""Make the repository root importable, so `pytest` works without PYTHONPATH=. as well; the
`fake` fixture for tests that drive scripted GTP engines."""
import os
import shlex
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import engine  # noqa: E402,F401  (sets numba's cache folder before any test imports numba)

FAKE_GTP = os.path.join(ROOT, "tests", "fake_gtp.py")


@pytest.fixture
def fake():
    """Return a function that builds the command line of a fake engine (tests/fake_gtp.py)
    with the given options."""

    def command(*options: str) -> str:
        """Return the shell command that starts the fake engine with options."""
        return shlex.join([sys.executable, FAKE_GTP, *options])

    return command
