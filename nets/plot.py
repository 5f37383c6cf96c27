"""Training curves from a nets.train JSONL log as a PNG, with numpy and zlib only (no matplotlib).

    python -m nets.plot runs/cpu/log.jsonl -o runs/cpu/curve.png

Left panel: training NLL of head 1 (grey) and validation NLL (red) against samples seen;
right panel: training top-1 (grey), validation top-1 (red) and top-5 (blue).
"""
import argparse
import json
import struct
import zlib

import numpy as np

# A 3x5 bitmap font: each glyph is 5 rows of 3 bits.
_FONT = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111",
    "3": "111001111001111", "4": "101101111001001", "5": "111100111001111",
    "6": "111100111101111", "7": "111001010010010", "8": "111101111101111",
    "9": "111101111001111", ".": "000000000000010", "-": "000000111000000",
    " ": "000000000000000", "%": "101001010100101", ":": "000010000010000",
    "A": "010101111101101", "B": "110101110101110", "C": "111100100100111",
    "D": "110101101101110", "E": "111100111100111", "F": "111100111100100",
    "G": "111100101101111", "H": "101101111101101", "I": "111010010010111",
    "K": "101101110101101", "L": "100100100100111", "M": "101111111101101",
    "N": "110101101101101", "O": "111101101101111", "P": "111101111100100",
    "R": "110101110101101", "S": "111100111001111", "T": "111010010010010",
    "U": "101101101101111", "V": "101101101101010", "W": "101101111111101",
    "X": "101101010101101", "Y": "101101010010010",
}

GREY, RED, BLUE, BLACK = (150, 150, 150), (210, 40, 40), (40, 80, 210), (0, 0, 0)


def _text(img, x, y, text, scale=2, color=BLACK):
    """Draw upper-case text with its top-left corner at (x, y)."""
    for ch in text.upper():
        glyph = _FONT.get(ch, _FONT[" "])
        for i, bit in enumerate(glyph):
            if bit == "1":
                r, c = divmod(i, 3)
                img[y + r * scale:y + (r + 1) * scale, x + c * scale:x + (c + 1) * scale] = color
        x += 4 * scale


def _line(img, x0, y0, x1, y1, color):
    steps = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
    xs = np.linspace(x0, x1, steps).round().astype(int)
    ys = np.linspace(y0, y1, steps).round().astype(int)
    ok = (xs >= 0) & (xs < img.shape[1]) & (ys >= 0) & (ys < img.shape[0])
    img[ys[ok], xs[ok]] = color


def _panel(img, left, top, w, h, title, series, xmax):
    """Draw axes and polylines; series: list of (xs, ys, color)."""
    values = [v for _, ys, _ in series for v in ys]
    if not values:
        return
    lo, hi = min(values), max(values)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    pad = 0.05 * (hi - lo)
    lo, hi = lo - pad, hi + pad
    img[top:top + h, left] = BLACK
    img[top + h, left:left + w] = BLACK
    _text(img, left, top - 18, title)
    for frac in (0.0, 0.5, 1.0):
        v = lo + frac * (hi - lo)
        y = int(top + h - frac * h)
        img[y, left - 5:left] = BLACK
        _text(img, left - 70, y - 5, f"{v:.3f}")
    for frac in (0.0, 0.5, 1.0):
        x = int(left + frac * w)
        img[top + h:top + h + 5, x] = BLACK
        _text(img, x - 20, top + h + 10, f"{frac * xmax / 1e6:.2f}M")
    for xs, ys, color in series:
        pts = [(left + x / xmax * w, top + h - (y - lo) / (hi - lo) * h) for x, y in zip(xs, ys)]
        for (a, b), (c, d) in zip(pts, pts[1:]):
            _line(img, a, b, c, d, color)
        if len(pts) == 1:
            _line(img, pts[0][0] - 2, pts[0][1], pts[0][0] + 2, pts[0][1], color)


def write_png(path, img):
    """Write an RGB uint8 [H, W, 3] array as a PNG file."""
    h, w, _ = img.shape
    raw = b"".join(b"\x00" + img[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def plot(log_path, png_path):
    """Draw the curves of a JSONL training log into a PNG; return the number of records read."""
    train, val = [], []
    with open(log_path) as f:
        for line in f:
            line = line.strip()
            if line:
                record = json.loads(line)
                (val if "val_top1" in record else train).append(record)
    if not train and not val:
        raise ValueError(f"{log_path}: no records")
    xmax = max(r["samples"] for r in train + val) or 1
    img = np.full((420, 1100, 3), 255, np.uint8)

    def col(rows, key):
        return [r["samples"] for r in rows], [r[key] for r in rows]

    _panel(img, 90, 40, 420, 320, "NLL HEAD 1: TRAIN GREY VAL RED",
           [(*col(train, "nll1"), GREY), (*col(val, "val_nll"), RED)], xmax)
    _panel(img, 640, 40, 420, 320, "TOP1 TRAIN GREY VAL RED - TOP5 VAL BLUE",
           [(*col(train, "top1"), GREY), (*col(val, "val_top1"), RED),
            (*col(val, "val_top5"), BLUE)], xmax)
    _text(img, 480, 395, "SAMPLES SEEN")
    write_png(png_path, img)
    return len(train) + len(val)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("log", help="JSONL log written by nets.train")
    p.add_argument("-o", "--out", help="PNG path (default: the log's path with .png)")
    args = p.parse_args(argv)
    out = args.out or args.log.rsplit(".", 1)[0] + ".png"
    n = plot(args.log, out)
    print(json.dumps({"records": n, "png": out}))


if __name__ == "__main__":
    main()
