"""Benchmark: a buffer filled element by element, `out[i] = out[i - 1] * w + x[i]`.

Prints, per n, the primal time, the gradient time (the public `grad`, all overheads
included) and their ratio: each write costs O(1) forward and backward, so the ratio
stays flat as n grows (a functional update per write would make it grow like n).
Usage: python benchmarks/fill_loop.py [--sizes 1000,2000,4000,8000,16000]
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

import chadpy as chad


def fill(x, w):
    out = np.zeros(x.shape[0])
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] * w + x[i]
    return np.sum(out * x)


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
