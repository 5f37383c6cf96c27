"""Make the repository root importable, so `pytest` works without PYTHONPATH=. as well."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import engine  # noqa: E402,F401  (sets numba's cache folder before any test imports numba)
