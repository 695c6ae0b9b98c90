"""The cost bound, measured: derivative/primal cost ratio against n, per stage (issue 4).

Runs the program families of tests/cost_families.py at n = 8 ... 1024 (the naive stage
up to 256: it is quadratic) with chadpy's deterministic cost model (bytecode
instructions + array elements), prints the tightest constants (c, c') of
`derivative <= c' + c * primal` per stage, and draws docs/cost-ratios.png.

Usage: python benchmarks/cost_plot.py [--out docs/cost-ratios.png] [--families a,b,...]
Needs matplotlib for the plot (`pip install -e ".[plot]"`); without it, prints only.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from cost_families import FAMILIES, Point, measure  # noqa: E402

NS = [8, 16, 32, 64, 128, 256, 512, 1024]
SERIES = [  # label, stage, simplify, sizes
    ("efficient (as run)", "efficient", True, NS),
    ("efficient, Fig. 7 code", "efficient", False, NS),
    ("monadic", "monadic", True, NS),
    ("sparse", "sparse", True, NS),
    ("naive", "naive", True, NS[:6]),
]
PLOTTED = ["one_hot_env", "fibonacci", "union_tree", "nested_calls", "loop", "indexing_array"]


def tightest(points: list[tuple[int, Point]], log: bool = False) -> float:
    """The smallest c with D <= c * P (* log2 n) at every point, taking c' = 0."""
    factor = (lambda n: math.log2(n)) if log else (lambda n: 1.0)
    return max(p.derivative / (p.primal * factor(n)) for n, p in points)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "..", "docs", "cost-ratios.png"))
    parser.add_argument("--families", default=",".join(f.name for f in FAMILIES))
    args = parser.parse_args()
    families = args.families.split(",")

    results: dict[tuple[str, str], dict[int, Point]] = {}
    print("derivative/primal cost ratio at n = 256:")
    print(" " * 15 + "  ".join(f"{label.split(',')[0][:9]:>9}" for label, *_ in SERIES))
    for family in families:
        for label, stage, simplify, sizes in SERIES:
            results[family, label] = {n: measure(family, n, stage, simplify) for n in sizes}
        row = "  ".join(
            f"{label.split(',')[0][:9]:>9} {results[family, label][256].ratio:7.1f}" for label, *_ in SERIES
        )
        print(f"{family:15s} ratio at n=256: {row}", flush=True)

    print("\ntightest c with c' = 0 (derivative <= c * primal, every family, every n):")
    for label, stage, _, _ in SERIES:
        points = [(n, p) for family in families for n, p in results[family, label].items()]
        c = tightest(points)
        worst = max(families, key=lambda f: max(p.ratio for p in results[f, label].values()))
        line = f"  {label:24s} c = {c:8.1f}   (worst family: {worst})"
        if stage == "monadic":
            line += f";  with a log2(n) factor: c = {tightest(points, log=True):.1f}"
        print(line)

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\nmatplotlib is not installed: no plot (pip install -e '.[plot]')")
        return
    shown = [f for f in PLOTTED if f in families] or families
    cols = 3
    rows = math.ceil(len(shown) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for ax, family in zip(axes.flat, shown):
        for label, *_ in SERIES:
            pts = results[family, label]
            ax.plot(list(pts), [p.ratio for p in pts.values()], marker="o", markersize=3, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(next(f.what for f in FAMILIES if f.name == family), fontsize=9)
        ax.set_xlabel("n")
        ax.set_ylabel("derivative cost / primal cost")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(shown) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle("chadpy: cost ratio against n per stage (bytecode instructions + array elements)", fontsize=11)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"\nwrote {os.path.relpath(args.out)}")


if __name__ == "__main__":
    main()
