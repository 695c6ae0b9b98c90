"""Benchmark: loops, indexing and vectorised NumPy code (issue 3's targets).

Prints primal time, gradient time (the public `chad.grad`, all overheads included)
and their ratio for

- a scalar loop: 1,000 iterations of `s = s + sin(x*i)*x`          (target ratio <= 6)
- the indexing loop `s = s + a[i]` over a list and over an array,
  at n = 1,000 and 8,000                                           (target: ratio ~constant in n)
- `sum(tanh(X @ W)**2)` with X 256x64, W 64x32, gradient w.r.t. both (target ratio <= 2.5)

Usage: python benchmarks/loops.py [--repeat 7]
Times are the best of `repeat` runs of a loop sized to take ~0.2 s.
"""

from __future__ import annotations

import argparse
import math
import timeit

import numpy as np

import chadpy as chad


def scalar_loop(x):
    s = 0.0
    for i in range(1000):
        s = s + math.sin(x * i) * x
    return s


def index_loop(a):
    s = 0.0
    for i in range(len(a)):
        s = s + a[i]
    return s


def vectorised(X, W):
    return np.sum(np.tanh(X @ W) ** 2)


def best(fn, repeat: int) -> float:
    """Seconds per call: the best of `repeat` timings."""
    number = 1
    while timeit.timeit(fn, number=number) < 0.2:
        number *= 2
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def row(name: str, f, args: tuple, argnums, repeat: int) -> float:
    g = chad.grad(f, argnums=argnums)
    g(*args)  # build the derivative once
    primal = best(lambda: f(*args), repeat)
    gradient = best(lambda: g(*args), repeat)
    ratio = gradient / primal
    print(f"{name:<34} {primal * 1e6:>12.1f} {gradient * 1e6:>12.1f} {ratio:>8.2f}")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'function':<34} {'primal us':>12} {'grad us':>12} {'ratio':>8}")
    row("scalar loop, 1000 iterations", scalar_loop, (0.3,), 0, args.repeat)
    for n in (1000, 8000):
        a = rng.uniform(-1.0, 1.0, n)
        row(f"indexing loop, list, n={n}", index_loop, ([float(v) for v in a],), 0, args.repeat)
    for n in (1000, 8000):
        a = rng.uniform(-1.0, 1.0, n)
        row(f"indexing loop, array, n={n}", index_loop, (a,), 0, args.repeat)
    X = rng.standard_normal((256, 64))
    W = rng.standard_normal((64, 32)) * 0.1
    row("sum(tanh(X @ W)**2), d/dX and d/dW", vectorised, (X, W), (0, 1), args.repeat)
    row("sum(tanh(X @ W)**2), d/dW only", vectorised, (X, W), 1, args.repeat)


if __name__ == "__main__":
    main()
