"""Forward mode and second order: jvp, Hessian-vector product and Hessian, chadpy against derivatives written by
hand and the peers' (autograd, JAX jit, torch.func), on the workloads of `second_order_workloads.py`.

Each column is checked against the hand-written derivative, then timed in interleaved rounds (one thread each;
the median over rounds), and shown as its time over the primal's. JAX's compile time is not counted (the first
call compiles). Usage: python benchmarks/second_order.py [--quick] [--out PATH] (default benchmarks/second_order.md).
"""

# ruff: noqa: I001  (one_thread first: it sets the libraries' threads before they are imported)
from __future__ import annotations

import one_thread  # noqa: F401

import os  # noqa: E402

import argparse  # noqa: E402
import datetime  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import peers  # noqa: E402
import second_order_workloads as W  # noqa: E402

import chadpy as chad  # noqa: E402

OPERATIONS = ("jvp", "hvp", "hessian")


def _direction(x: object) -> object:
    return 1.0 if isinstance(x, float) else np.linspace(0.5, -0.5, np.size(x))


def chadpy_columns(w: dict) -> dict[str, Callable]:
    f = w["fn"]
    hessian = chad.hessian(f)
    return {
        "jvp": lambda x, v: chad.jvp(f, (x,), (v,)),
        "hvp": lambda x, v: chad.hvp(f, (x,), (v,)),
        "hessian": lambda x, v: hessian(x),
    }


def hand_columns(w: dict) -> dict[str, Callable]:
    return {"jvp": w["jvp"], "hvp": w["hvp"], "hessian": lambda x, v: w["hessian"](x)}


def autograd_columns(w: dict) -> dict[str, Callable]:
    import autograd
    import autograd.numpy as anp

    amath = types.SimpleNamespace(tanh=anp.tanh, sin=anp.sin, cos=anp.cos, exp=anp.exp, log=anp.log, pi=math.pi)
    f = peers.rebound(w["fn"], anp, amath)
    jvp, hvp, hessian = autograd.make_jvp(f), autograd.hessian_vector_product(f), autograd.hessian(f)
    return {"jvp": lambda x, v: jvp(x)(v), "hvp": hvp, "hessian": lambda x, v: hessian(x)}


def jax_columns(w: dict) -> dict[str, Callable]:
    jax, f = peers._jax_fn(w)
    jvp = jax.jit(lambda x, v: jax.jvp(f, (x,), (v,)))
    hvp = jax.jit(lambda x, v: jax.jvp(jax.grad(f), (x,), (v,))[1])
    hessian = jax.jit(jax.hessian(f))
    ready = jax.block_until_ready
    return {
        "jvp": lambda x, v: ready(jvp(x, v)),
        "hvp": lambda x, v: ready(hvp(x, v)),
        "hessian": lambda x, v: ready(hessian(x)),
    }


def torch_columns(w: dict) -> dict[str, Callable]:
    torch, tnp, tmath = peers._torch_namespaces()
    torch.set_num_threads(1)
    tnp.logaddexp = lambda a, b: torch.logaddexp(torch.as_tensor(a, dtype=torch.float64), b)
    f = peers.rebound(w["fn"], tnp, tmath)
    f.__globals__.update(FEATURES=torch.tensor(W.FEATURES), LABELS=torch.tensor(W.LABELS), STEPS=torch.tensor(W.STEPS))
    tensor = lambda x: torch.tensor(x, dtype=torch.float64)  # noqa: E731
    jvp = lambda x, v: torch.func.jvp(f, (tensor(x),), (tensor(v),))  # noqa: E731
    hvp = lambda x, v: torch.func.jvp(torch.func.grad(f), (tensor(x),), (tensor(v),))[1]  # noqa: E731
    hessian = torch.func.hessian(f)
    return {"jvp": jvp, "hvp": hvp, "hessian": lambda x, v: hessian(tensor(x))}


LIBRARIES = {
    "hand-written": hand_columns,
    "chadpy": chadpy_columns,
    "autograd": autograd_columns,
    "JAX jit": jax_columns,
    "torch.func": torch_columns,
}


def _result(op: str, out: object) -> np.ndarray:
    """The derivative a column computed, as a float array (a jvp's tangent)."""
    if op == "jvp":
        out = out[1]
    if hasattr(out, "detach"):
        out = out.detach().numpy()
    return np.asarray(out, dtype=float)


def _seconds(fn: Callable, budget: float) -> float:
    """Seconds per call: repeated until `budget` seconds pass (at least 3 calls)."""
    fn()
    calls, start = 0, time.perf_counter()
    while calls < 3 or time.perf_counter() - start < budget:
        fn()
        calls += 1
    return (time.perf_counter() - start) / calls


def run(quick: bool) -> list[str]:
    rounds, budget = (3, 0.05) if quick else (7, 0.2)
    lines = [
        "| workload | derivative | " + " | ".join(LIBRARIES) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in LIBRARIES) + " |",
    ]
    for w in W.WORKLOADS:
        x = w["args"]()[0]
        v = _direction(x)
        columns: dict[str, dict[str, Callable] | str] = {}
        for name, make in LIBRARIES.items():
            try:
                columns[name] = make(w)
            except ImportError:
                columns[name] = "not installed"

        def primal_call(f: Callable = w["fn"], x: object = x) -> object:
            return f(x)

        primal = [_seconds(primal_call, budget)]
        for op in OPERATIONS:
            want = _result(op, hand_columns(w)[op](x, v))
            times: dict[str, list[float]] = {}
            cells: dict[str, str] = {}
            for name, column in columns.items():
                if isinstance(column, str):
                    cells[name] = column
                    continue
                try:
                    got = _result(op, column[op](x, v))
                except Exception as e:  # a peer that cannot differentiate the workload
                    cells[name] = f"fails ({type(e).__name__})"
                    continue
                if not np.allclose(got, want, rtol=1e-8, atol=1e-10 * (1 + np.max(np.abs(want)))):
                    cells[name] = "wrong"
                    continue
                times[name] = []
            for _ in range(rounds):  # interleaved: every column once per round
                primal.append(_seconds(primal_call, budget))
                for name in times:
                    times[name].append(_seconds(lambda c=columns[name][op], x=x, v=v: c(x, v), budget))
            base = statistics.median(primal)
            for name, ts in times.items():
                cells[name] = f"{statistics.median(ts) / base:.1f}"
            lines.append(f"| {w['name']} | {op} | " + " | ".join(cells[name] for name in LIBRARIES) + " |")
            print(lines[-1], flush=True)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    parser.add_argument("--out", default=os.path.join(HERE, "second_order.md"))
    opts = parser.parse_args(argv)
    lines = run(opts.quick)
    head = [
        "# Forward mode and second order: time over the primal's",
        "",
        f"{datetime.date.today()}, {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"one thread; `python benchmarks/second_order.py{' --quick' if opts.quick else ''}`. Each derivative is "
        "checked against the hand-written one before it is timed; JAX's compile time is not counted.",
        "",
    ]
    with open(opts.out, "w") as f:
        f.write("\n".join(head + lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
