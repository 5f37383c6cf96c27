"""Grow a weights file into a wider and deeper network that computes the same function:

    python -m nets.grow --init weights/cpu_value.pt --depth 8 --width 96 --out runs/sizes/10x96.pt

Wider first (nets.model.widened, Net2WiderNet), then deeper (nets.model.deepened,
Net2DeeperNet). The file keeps the source's meta, with the growth added to meta["growth"], a
list with one record per growth. Grown files are for training on and for timing; they belong
under runs/, not in weights/.
"""
import argparse
import os
import sys
import time

from nets import model as nm


def grown(payload, depth=None, width=None, seed=0, split="random"):
    """Return (config, state_dict, meta) of a read_weights payload grown to depth 3x3 layers
    and width channels (None: as it is); ValueError when the net cannot grow so."""
    config, state = payload["config"], payload["state_dict"]
    before = {"depth": config["depth"], "first_width": config["first_width"],
              "width": config["width"]}
    if width is not None:
        config, state = nm.widened(config, state, width, seed=seed, split=split)
    if depth is not None:
        config, state = nm.deepened(config, state, depth)
    growth = {"from": before, "to": {k: config[k] for k in before}, "seed": seed,
              "split": split, "date": time.strftime("%Y-%m-%d")}
    meta = dict(payload.get("meta", {}))
    meta["growth"] = list(meta.get("growth", [])) + [growth]
    return config, state, meta


def parse_args(argv=None):
    """Return the parsed command line; exit 2 on a bad one."""
    p = argparse.ArgumentParser(prog="python -m nets.grow", description=__doc__.splitlines()[0])
    p.add_argument("--init", required=True, metavar="WEIGHTS", help="weights file to grow")
    p.add_argument("--depth", type=int, help="3x3 layers after the first conv (default: as is)")
    p.add_argument("--width", type=int, help="channels of every trunk and value-tower layer "
                   "(default: as is)")
    p.add_argument("--out", required=True, help="weights file to write (under runs/)")
    p.add_argument("--seed", type=int, default=0, help="seeds the channels copied and shares")
    p.add_argument("--split", choices=nm.SPLITS, default="random",
                   help="how a copied channel's outgoing weight is shared among its copies: "
                        "'random' (default) lets training tell them apart, 'even' is the "
                        "paper's rule; both compute the same function")
    args = p.parse_args(argv)
    if args.depth is None and args.width is None:
        p.error("give --depth, --width or both")
    return args


def main(argv=None):
    """Grow --init into --out; exit with a message when it cannot."""
    args = parse_args(argv)
    try:
        payload = nm.read_weights(args.init)
        config, state, meta = grown(payload, args.depth, args.width, args.seed, args.split)
        model = nm.PolicyNet(config)
        model.load_state_dict(state, strict=True)
    except (nm.WeightsError, ValueError) as e:
        sys.exit(f"nets.grow: {e}")
    except (KeyError, RuntimeError) as e:
        sys.exit(f"nets.grow: {args.init}: weights do not match config {payload['config']}: {e}")
    nm.save_model(model, args.out, meta)
    parameters = sum(p.numel() for p in model.parameters())
    print(f"{args.out}: depth {config['depth']}, width {config['width']}, "
          f"{parameters:,} parameters (from {os.path.basename(args.init)})")


if __name__ == "__main__":
    main()
