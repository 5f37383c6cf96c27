"""Repack SGF games as minimal SGF files: what training reads (size, komi, result, setup stones,
the main line's moves) and nothing else, one folder per input archive.

    python -m nets.repack --out DIR ARCHIVE_OR_DIR...

A GPU lease carries at most 64 MiB, about three of the six training archives as zipped
SGF. Without the players, dates, time controls and zip's per-file overhead, all six compress
solidly (`tar cJf`) to 34 MB. Each file keeps its name and each collection its games in their
order, so `nets.data` gives every game the same name, and so the same training or validation
split, from the repacked folder as from the archive. Files that sgfmill cannot parse are left
out and counted; games that training skips (another board size, an illegal move) are kept, for
the reader to skip as it does in the archive. Only sgfmill's tokenizer runs, so repacking the
152 k games of the six archives takes about two minutes of one core.
"""
import argparse
import json
import os
import sys

from sgfmill import sgf_grammar

from nets import data as nd

# Root properties kept besides SZ; a node's move is its B, else its W (sgfmill's order).
ROOT_PROPERTIES = ("CA", "KM", "RE", "HA", "AB", "AW", "AE", "PL")


def minimal_tree(tree):
    """Return the minimal SGF bytes of one sgfmill coarse game tree: the root's SZ and
    ROOT_PROPERTIES, then the moves of the main line (first variations), values kept raw as
    the file wrote them."""
    nodes = list(tree.sequence)
    while tree.children:
        tree = tree.children[0]
        nodes += tree.sequence
    root = nodes[0]
    parts = [b"(;FF[4]GM[1]"]
    for ident in ("SZ",) + ROOT_PROPERTIES:
        if ident in root:
            parts.append(ident.encode() + b"".join(b"[" + v + b"]" for v in root[ident]))
    for node in nodes[1:]:
        for colour in ("B", "W"):
            if colour in node:
                parts.append(b";" + colour.encode() + b"[" + node[colour][0] + b"]")
                break
    return b"".join(parts) + b")\n"


def minimal_file(data):
    """Return the minimal SGF bytes of one file's games (a collection stays a collection, in its
    order), or None when the file does not parse."""
    try:
        trees = sgf_grammar.parse_sgf_collection(data)
    except Exception:
        return None
    return b"".join(minimal_tree(t) for t in trees)


def folder_name(path):
    """Return the output folder for an input: an archive's name without its suffix, else ''."""
    base = os.path.basename(path.rstrip("/"))
    for suffix in nd.ARCHIVE_SUFFIXES:
        if base.lower().endswith(suffix):
            return base[:-len(suffix)]
    return ""


def repack(paths, out_dir):
    """Write each SGF file of the inputs (files, directories, archives) as a minimal SGF file
    of the same name under out_dir/<archive name>/ (out_dir/ for loose files); return counts
    {files, unparsed}."""
    counts = {"files": 0, "unparsed": 0}
    for path in nd.list_inputs(paths):
        folder = os.path.join(out_dir, folder_name(path))
        os.makedirs(folder, exist_ok=True)
        for name, data in nd.read_path(path):
            text = minimal_file(data)
            if text is None:
                counts["unparsed"] += 1
                continue
            with open(os.path.join(folder, name), "wb") as f:
                f.write(text)
            counts["files"] += 1
    return counts


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="folder to write into")
    p.add_argument("inputs", nargs="+", help="SGF files, directories, archives")
    args = p.parse_args(argv)
    try:
        counts = repack(args.inputs, args.out)
    except FileNotFoundError as e:
        sys.exit(f"no such input: {e}")
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
