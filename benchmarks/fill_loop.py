"""Benchmark: a buffer filled element by element, `out[i] = out[i - 1] * w + x[i]`.

Prints, per n, the primal time, the gradient time (the public `grad`, all overheads
included) and their ratio: each write costs O(1) forward and backward, so the ratio
stays flat as n grows (a functional update per write would make it grow like n).
Usage: python benchmarks/fill_loop.py [--sizes 1000,2000,4000,8000,16000]
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit

import numpy as np

import chadpy as chad

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from teaching import fill  # noqa: E402  the fill loop docs/teaching.md shows


def best(f, repeat: int = 5) -> float:
    """The best of `repeat` runs, each timing enough calls for ~0.2 s."""
    number = max(1, int(0.2 / max(timeit.timeit(f, number=1), 1e-6)))
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,2000,4000,8000,16000")
    sizes = [int(n) for n in parser.parse_args().sizes.split(",")]
    grad = chad.grad(fill, argnums=(0, 1))
    print(f"{'n':>7} {'primal (ms)':>12} {'gradient (ms)':>14} {'ratio':>6}")
    for n in sizes:
        x = np.linspace(-0.5, 0.5, n)
        grad(x, 0.9)  # built and cached before timing
        primal, gradient = best(lambda x=x: fill(x, 0.9)), best(lambda x=x: grad(x, 0.9))
        print(f"{n:>7} {primal * 1e3:>12.2f} {gradient * 1e3:>14.2f} {gradient / primal:>6.2f}")


if __name__ == "__main__":
    main()
