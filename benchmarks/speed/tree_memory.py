"""Search tree memory: `python -m benchmarks.speed.tree_memory --size 9 --nodes 100000`.

Searches the empty board with the engine's default pools, one search with a budget of the
requested number of nodes (the tree grows by one node per playout), then reports the
bytes one node and one edge take in the pools, the average edges per expanded node, the bytes
per node in use (node + its share of edges), and the process's resident memory. The last
stdout line is one JSON object.
"""
import argparse
import json

from benchmarks.speed.genmove_speed import resident_mib
from engine.game import Game
from engine.search import Search
from engine.search_config import SearchConfig
from engine.tree import C_EDGES, C_NODES, Tree


def main(argv=None):
    """Run the benchmark and print its JSON line."""
    parser = argparse.ArgumentParser(description="search tree memory")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    config = SearchConfig(threads=args.threads)
    if args.nodes >= config.max_nodes:
        parser.error(f"--nodes must be below the node pool size {config.max_nodes}")
    search = Search(config, args.size)
    search.run(Game(args.size), args.nodes)
    tree = search.tree
    node_fields = [f for f in Tree._fields if f.startswith("node_")]
    edge_fields = [f for f in Tree._fields if f.startswith("edge_")]
    node_bytes = sum(getattr(tree, f).itemsize for f in node_fields)
    edge_bytes = sum(getattr(tree, f).itemsize for f in edge_fields)
    nodes, edges = int(tree.counters[C_NODES]), int(tree.counters[C_EDGES])
    result = {"benchmark": "tree_memory", "size": args.size, "nodes": nodes, "edges": edges,
              "bytes_per_node_slot": node_bytes, "bytes_per_edge_slot": edge_bytes,
              "bytes_per_node_in_use": round(node_bytes + edge_bytes * edges / nodes, 1),
              "pool_mib": round((config.max_nodes * node_bytes
                                 + config.max_edges * edge_bytes) / 2 ** 20, 1),
              "resident_mib": resident_mib("self")}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
