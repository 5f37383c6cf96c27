"""The engine package. Importing it points numba's on-disk cache at a folder named after a
hash of every source file that holds jitted code.

numba keys a cached function on its own file only, while the machine code it stores has the
jitted functions it calls from other modules compiled in: after an edit to engine/board.py the
cached engine/tree.py functions would run the old board code. A folder per source hash makes
every change start from a clean cache. NUMBA_CACHE_DIR, when set by the user, wins; it must be
set before numba is first imported, which is why nets and benchmarks import this package first.
"""
import hashlib
import os
import pathlib
import re

_ROOT = pathlib.Path(__file__).resolve().parent.parent
# A module with jitted code imports numba; one that only names it (in a comment) has none.
_IMPORTS_NUMBA = re.compile(rb"^\s*(?:import|from)\s+numba\b", re.MULTILINE)


def numba_cache_dir(root=_ROOT):
    """Return the cache folder for the sources under root: .numba_cache/<hash> there, the hash
    taken over the .py files of engine/, nets/ and benchmarks/ and their subfolders.
    Files that do not import numba hold no jitted code and stay out of the hash, so that an
    edit to them (the GTP layer, a benchmark's driver) does not throw the cache away."""
    digest = hashlib.sha1()
    for folder in ("engine", "nets", "benchmarks"):
        # Recursive: benchmarks/ keeps its modules in subfolders (speed/playouts.py is jitted).
        for path in sorted((root / folder).rglob("*.py")):
            source = path.read_bytes()
            if _IMPORTS_NUMBA.search(source):
                digest.update(path.relative_to(root / folder).as_posix().encode())
                digest.update(source)
    return root / ".numba_cache" / digest.hexdigest()[:16]


# Set by the user before this package, if at all (see foreign_environment).
_USER_CACHE_DIR = os.environ.get("NUMBA_CACHE_DIR")
os.environ.setdefault("NUMBA_CACHE_DIR", str(numba_cache_dir()))


def foreign_environment():
    """Return a copy of the environment for starting another program, maybe another
    checkout's engine (the match runner's engines): without the cache folder this package
    chose for its own sources, which that engine would otherwise take for its own, compiling
    its code into it cold (or, for a user-set folder, left as the user set it)."""
    env = dict(os.environ)
    if _USER_CACHE_DIR is None:
        env.pop("NUMBA_CACHE_DIR", None)
    return env
