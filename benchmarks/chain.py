"""Benchmark: a straight-line function of 200 scalar operations over 50 variables.

Prints primal time, gradient time (the public `grad`, all overheads included) and
their ratio. Usage: python benchmarks/chain.py [--ops 200] [--vars 50]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import random
import sys
import tempfile
import timeit

import chadpy as chad

_OPS = [
    "{a} * {b}",
    "{a} + 0.5 * {b}",
    "math.sin({a}) * {b}",
    "math.tanh({a} * {b})",
    "0.9 * {a} + math.cos({b})",
    "{a} / (1.0 + {b} * {b})",
    "math.exp(-{a} * {a}) + {b}",
    "math.sqrt(1.0 + {a} * {a}) - {b}",
]


def chain_source(n_ops: int, n_vars: int, seed: int = 0) -> str:
    """`def chain(x0, ..., x{n_vars-1})`: n_ops random operations, each reading two live variables."""
    rng = random.Random(seed)
    names = [f"x{i}" for i in range(n_vars)]
    lines = [f"def chain({', '.join(names)}):"]
    ops = 0
    for k in range(n_ops):
        a, b = rng.sample(names, 2)
        template = rng.choice(_OPS)
        target = names[k % n_vars]  # reassign: always 50 variables live
        lines.append(f"    {target} = {template.format(a=a, b=b)}")
        ops += template.count("(") + template.count("*") + template.count("+") + template.count("-") + 1
    lines.append("    return " + " + ".join(names))
    return "import math\n\n\n" + "\n".join(lines) + "\n"


def load(source: str):
    path = os.path.join(tempfile.mkdtemp(), "chain_module.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("chain_module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["chain_module"] = module
    spec.loader.exec_module(module)
    return module.chain


def best(fn, number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=7)) / number


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--vars", type=int, default=50)
    args = parser.parse_args()
    f = load(chain_source(args.ops, args.vars))
    xs = [0.1 + 0.01 * i for i in range(args.vars)]
    g = chad.grad(f, argnums=tuple(range(args.vars)))
    grads = g(*xs)
    # correctness: spot-check three gradients against central differences
    for i in (0, args.vars // 2, args.vars - 1):
        h = 1e-6
        up, down = list(xs), list(xs)
        up[i] += h
        down[i] -= h
        fd = (f(*up) - f(*down)) / (2 * h)
        assert math.isclose(grads[i], fd, rel_tol=1e-5, abs_tol=1e-7), (i, grads[i], fd)
    t_primal = best(lambda: f(*xs), 2000)
    t_grad = best(lambda: g(*xs), 500)
    print(f"chain: {args.ops} operations, {args.vars} variables")
    print(f"  primal   {t_primal * 1e6:8.1f} us")
    print(f"  gradient {t_grad * 1e6:8.1f} us   (chad.grad, all {args.vars} partials)")
    print(f"  ratio    {t_grad / t_primal:8.2f}x")


if __name__ == "__main__":
    main()
