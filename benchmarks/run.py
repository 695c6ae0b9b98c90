"""chadpy against hand-written gradients and the Python peers, side by side in one process.

For every workload (`workloads.py`, `gradbench.py`) and every library installed
(`peers.py`: tangent-ad, autograd, JAX eager and jit, torch; `pip install -e ".[bench,plot]"`),
this checks the library's gradient against the
hand-written one, then times primal and gradients in interleaved rounds (each round
times every column in turn, after one untimed call; the figure is the median over rounds) with
NumPy's, torch's and XLA's threads pinned to one. The table shows gradient time /
primal time at the workload's large size; JAX jit adds its one-off compile time in
brackets. After the table: chadpy's time over the hand-written gradient's at both sizes (the
full run times the small size too, those two columns only), the fixed cost of a call, the
one-off transformation (200 and 2,000 operations), the first gradient of a closure made afresh
against a reused one's, and the bytes each loop iteration keeps for the reverse pass.

A peer over 2 s a call at the small size is not run at the large one ("too slow"), nor
is a loop compiled by JAX-jit at the large size if it took over 2 s at the small one.

Usage: python benchmarks/run.py [--quick] [--only NAME,...] [--out PATH]
`--quick` (also `python -m chadpy bench`) uses the small sizes, fewer rounds and leaves out JAX and autograd
(seconds per call, or per compile, on the loops): about a minute.
Writes OUT.md (the table, with date, machine and command) and OUT.png (needs matplotlib): by default
benchmarks/results.* (the README and docs/benchmarks.md show those), benchmarks/results-quick.* with --quick.
"""

# ruff: noqa: I001  (one_thread first: it sets the libraries' threads before they are imported)
from __future__ import annotations

import one_thread  # noqa: F401

import os  # noqa: E402

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import chain  # noqa: E402
import gradbench  # noqa: E402
import peers  # noqa: E402
import workloads  # noqa: E402

import chadpy as chad  # noqa: E402

ALL_WORKLOADS = workloads.WORKLOADS + gradbench.WORKLOADS
# seconds at the small size; above it, a loop's large size is not compiled: jit unrolls the loop, so compile
# time and memory grow with the iterations (the LSTM's 1,023 steps, 2 s at the small size, ran out of 24 GB)
JIT_COMPILE_LIMIT = 1.0
SLOW_LIMIT = 2.0  # seconds per call of a peer at the small size; above it, the large size is not run
COLUMN_BUDGET = 20.0  # seconds of timing per column: a slow one gets fewer rounds (3 at least)


def leaves(x) -> list[np.ndarray]:
    if isinstance(x, tuple | list) and not all(np.ndim(v) == 0 and not isinstance(v, tuple | list) for v in x):
        return [a for v in x for a in leaves(v)]  # a list of numbers (or of 0-d arrays) is one vector
    if isinstance(x, dict):
        return [a for k in sorted(x) for a in leaves(x[k])]
    return [np.asarray(x, dtype=np.float64)]


def agrees(got, want) -> bool:
    """Equal to rounding, relative to the largest element of the hand-written gradient."""
    got, want = leaves(got), leaves(want)
    scale = max((float(np.max(np.abs(w), initial=0.0)) for w in want), default=0.0)
    return len(got) == len(want) and all(
        g.shape == w.shape and np.allclose(g, w, rtol=1e-6, atol=1e-9 * scale) for g, w in zip(got, want)
    )


def seconds_per_call(fn: Callable, target: float) -> tuple[int, float]:
    """How many calls make one timing of about `target` seconds, and one call's time."""
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= target:
            return number, elapsed / number
        number *= 2 if elapsed == 0 else max(2, min(100, int(1.5 * target / elapsed)))


def interleaved(columns: dict[str, Callable], rounds: int, target: float) -> dict[str, float]:
    """Median seconds per call of each column, over rounds that time every column in turn.

    Each timing follows one untimed call of its column: a peer that churns memory (torch's det makes
    hundreds of thousands of small allocations) leaves glibc's heap with long free lists, and the next
    allocation-heavy call sorts them (malloc_consolidate, _int_malloc: 44% of chadpy's first det
    call after torch's, 35 ms). Without the untimed call, that cost went to whichever column came next.
    """
    calibrated = {name: seconds_per_call(fn, target) for name, fn in columns.items()}
    numbers = {name: number for name, (number, _) in calibrated.items()}
    budget = {name: max(3, min(rounds, int(COLUMN_BUDGET / (number * t)))) for name, (number, t) in calibrated.items()}
    times: dict[str, list[float]] = {name: [] for name in columns}
    for k in range(rounds):
        for name, fn in columns.items():
            if k >= budget[name]:
                continue
            fn()  # untimed: the first call after another column's pays for the heap that column left behind
            gc.collect()
            gc.freeze()  # the objects alive now (the peers' modules) are left out of the collector's scans
            start = time.perf_counter()
            for _ in range(numbers[name]):
                fn()
            times[name].append((time.perf_counter() - start) / numbers[name])
            gc.unfreeze()  # the next collection sees them again: nothing frozen outlives its round
    return {name: statistics.median(ts) for name, ts in times.items()}


def left_out(workload: dict, name: str) -> str | None:
    """Why a peer is not run at the workload's large size, judged once at its small size (None: it is run)."""
    try:
        small = peers.PEERS[name](workload, workload["args"]("small"))
        compiled = getattr(small, "compile_seconds", 0.0)  # JAX jit's, which unrolls a loop
        if workload["loop"] and compiled > JIT_COMPILE_LIMIT:
            return f"compile too long ({compiled:.1f} s at the small size)"
        start = time.perf_counter()
        small()
        seconds = time.perf_counter() - start
    except Exception:
        return None  # it fails at the large size too: reported there
    return f"too slow ({seconds:.0f} s per call at the small size)" if seconds > SLOW_LIMIT else None


def prepare(workload: dict, size: str, names: list[str], log) -> tuple[dict[str, Callable], dict[str, str]]:
    """The checked gradient functions of this workload, and a note for each peer left out."""
    args = workload["args"](size)
    want = workload["grad"](*args)
    columns: dict[str, Callable] = {"primal": lambda: workload["fn"](*args)}
    notes: dict[str, str] = {}
    for name in names:
        if name not in ("hand-written", "chadpy") and size == "large":
            why = left_out(workload, name)
            if why is not None:
                notes[name] = why
                continue
        try:
            call = peers.PEERS[name](workload, args)
            got = call()
        except Exception as e:
            notes[name] = "fails"
            log(f"  {name} fails: {type(e).__name__}: {str(e).splitlines()[0][:150] if str(e) else ''}")
            continue
        if not agrees(got, want):
            notes[name] = "wrong"
            log(f"  {name}: its gradient differs from the hand-written one")
            continue
        columns[name] = call
    return columns, notes


def cell(name: str, times: dict[str, float], notes: dict[str, str], compile_seconds: dict[str, float]) -> str:
    if name in notes:
        return notes[name]
    text = f"{times[name] / times['primal']:.2f}"
    if name in compile_seconds:
        text += f" (+{compile_seconds[name]:.1f} s compile)"
    return text


def hand_summary(vs_hand: dict[str, dict[str, float]]) -> list[str]:
    """chadpy's time over the hand-written gradient's, per workload and size, and their geomean."""
    sizes = [size for size in ("small", "large") if any(size in r for r in vs_hand.values())]
    lines = ["| chadpy / hand-written | " + " | ".join(sizes) + " |", "|---|" + "---|" * len(sizes)]
    for name, r in vs_hand.items():
        lines.append(f"| {name} | " + " | ".join(f"{r[s]:.2f}" if s in r else "" for s in sizes) + " |")
    ratios = [x for r in vs_hand.values() for x in r.values()]
    others = [x for name, r in vs_hand.items() if "det" not in name for x in r.values()]
    det = [x for name, r in vs_hand.items() if "det" in name for x in r.values()]
    lines += [
        "",
        f"Geomean {geomean(ratios):.2f} (target ≤ 1.3); worst but det {max(others, default=math.nan):.2f} "
        f"(target ≤ 2); det {max(det, default=math.nan):.2f} (target ≤ 4).",
    ]
    return lines


def geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


# --- the fixed costs ---------------------------------------------------------------


def rosenbrock2(x, y):
    return 100.0 * (y - x * x) ** 2 + (1.0 - x) ** 2


def call_cost(rounds: int) -> float:
    """Microseconds a gradient call adds to a 2-variable function beyond its primal and a hand-written gradient."""
    g = chad.grad(rosenbrock2, argnums=(0, 1))

    def hand(x, y):  # a function of its arguments (with constants only, Python folds it to a constant)
        return -400.0 * x * (y - x * x) - 2.0 * (1.0 - x), 200.0 * (y - x * x)

    g(0.5, 0.7)  # the first call builds the derivative (timed as the transformation, below)
    t = interleaved({"grad": lambda: g(0.5, 0.7), "hand": lambda: hand(0.5, 0.7)}, rounds, 0.02)
    return (t["grad"] - t["hand"]) * 1e6


def transformation_ms(n_ops: int, repeats: int) -> float:
    """Milliseconds from a new function to its first gradient, less a later call's time (best of repeats)."""
    best = math.inf
    for seed in range(repeats):
        f = chain.load(chain.chain_source(n_ops, 50, seed=seed))
        g = chad.grad(f, argnums=tuple(range(50)))
        xs = [0.1 + 0.01 * i for i in range(50)]
        start = time.perf_counter()
        g(*xs)
        first = time.perf_counter() - start
        start = time.perf_counter()
        g(*xs)
        best = min(best, first - (time.perf_counter() - start))
    return best * 1e3


def make_loss(X, y):
    def loss(w):
        r = X @ w - y
        return np.mean(r * r)

    return loss


def fresh_closure_ratio(rounds: int) -> tuple[float, float]:
    """The first gradient of a closure made afresh (`grad(make_loss(X, y))(w)`, code already derived) over a
    reused closure's gradient, and the reused one's microseconds: a 20 x 5 least-squares loss."""
    rng = np.random.default_rng(0)
    X, y, w = rng.standard_normal((20, 5)), rng.standard_normal(20), rng.standard_normal(5)
    reused = chad.grad(make_loss(X, y))
    reused(w)  # derived once: what follows is the cost of a fresh function object, not of a transformation
    t = interleaved({"fresh": lambda: chad.grad(make_loss(X, y))(w), "reused": lambda: reused(w)}, rounds, 0.02)
    return t["fresh"] / t["reused"], t["reused"] * 1e6


def tape_bytes(fn: Callable, args: tuple, n: int) -> float:
    """Bytes the reverse pass keeps per loop iteration: memory held by `chad.vjp`'s result, over n."""
    chad.vjp(fn, *args)  # build the derivative first
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = chad.vjp(fn, *args)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del held
    return (after - before) / n


def overheads(quick: bool) -> list[str]:
    n = 100_000 if quick else 1_000_000
    scalar = tape_bytes(workloads.scalar_loop, (0.3, n), n)
    index = tape_bytes(workloads.index_loop, (np.random.default_rng(0).uniform(-1, 1, n), 0.7), n)
    transform = transformation_ms(200, 1 if quick else 3)
    transform_large = transformation_ms(2000, 1)
    fresh, reused = fresh_closure_ratio(3 if quick else 9)
    return [
        "| measure | chadpy | target |",
        "|---|---|---|",
        f"| fixed cost of a gradient call (2-variable Rosenbrock) | {call_cost(3 if quick else 9):.1f} µs | ≤ 2 µs |",
        f"| transformation of a 200-operation function | {transform:.0f} ms | ≤ 40 ms |",
        f"| transformation of a 2,000-operation function | {transform_large:.0f} ms | ≤ 500 ms |",
        f"| first gradient of a closure made afresh / reused ({reused:.0f} µs) | {fresh:.2f} | ≤ 2 |",
        f"| tape per scalar-loop iteration (n = {n:.0e}) | {scalar:.0f} bytes | ≤ 48 |",
        f"| tape per index-loop iteration (n = {n:.0e}) | {index:.0f} bytes | ≤ 96 |",
    ]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    from importlib.metadata import PackageNotFoundError, version

    peers_here = []
    for package in ("tangent-ad", "autograd", "jax", "torch"):
        try:
            peers_here.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            pass
    libraries = ", ".join([f"Python {platform.python_version()}", f"NumPy {np.__version__}", *peers_here])
    return f"{cpu}, {os.cpu_count()} cores, {libraries}"


def plot(rows: list[tuple[str, dict[str, float]]], names: list[str], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(11, 4.8))
    width = 0.8 / len(names)
    for k, name in enumerate(names):
        xs = [i + k * width for i, (_, r) in enumerate(rows) if name in r]
        ax.bar(xs, [r[name] for _, r in rows if name in r], width, label=name)
    ax.set_yscale("log")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(rows))], [w for w, _ in rows], rotation=30, ha="right")
    ax.set_ylabel("gradient time / primal time")
    ax.legend(ncol=4, fontsize="small")
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small sizes, fewer rounds (~30 s)")
    parser.add_argument("--only", help="comma-separated workload names (a prefix is enough)")
    parser.add_argument("--out", help="where to write OUT.md and OUT.png (default: benchmarks/results[-quick])")
    args = parser.parse_args(argv)
    if args.out is None:  # a quick run never overwrites the full run's results (the README and docs show those)
        args.out = os.path.join(HERE, "results-quick" if args.quick else "results")
    size, rounds, target = ("small", 3, 0.01) if args.quick else ("large", 7, 0.05)
    chosen = [w for w in ALL_WORKLOADS if not args.only or any(w["name"].startswith(p) for p in args.only.split(","))]
    names = peers.available()
    if args.quick:
        names = [n for n in names if n not in ("JAX", "JAX jit", "autograd")]  # seconds per call or compile on loops
    log = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    header = ["workload", *names]
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    rows: list[tuple[str, dict[str, float]]] = []
    for workload in chosen:
        log(f"{workload['name']} ({size})")
        columns, notes = prepare(workload, size, names, log)
        times = interleaved(columns, rounds, target)
        compile_seconds = {n: c.compile_seconds for n, c in columns.items() if hasattr(c, "compile_seconds")}
        ratios = {n: times[n] / times["primal"] for n in columns if n != "primal"}
        rows.append((workload["name"], ratios))
        line = [workload["name"], *(cell(n, times, notes, compile_seconds) for n in names)]
        table.append("| " + " | ".join(line) + " |")
        log("  " + " | ".join(line[1:]) + f"   (primal {times['primal'] * 1e3:.3g} ms)")
    means = [f"{geomean([r[n] for _, r in rows if n in r]):.2f}" for n in names]
    table.append("| geomean of the cells with a figure | " + " | ".join(means) + " |")
    vs_hand = {name: {size: r["chadpy"] / r["hand-written"]} for name, r in rows if "chadpy" in r}
    if not args.quick:  # the small size too: chadpy against the hand-written gradient only
        for workload in chosen:
            log(f"{workload['name']} (small, chadpy and hand-written)")
            columns, _ = prepare(workload, "small", ["hand-written", "chadpy"], log)
            times = interleaved(columns, rounds, 0.02)
            vs_hand.setdefault(workload["name"], {})["small"] = times["chadpy"] / times["hand-written"]
    options = (" --quick" if args.quick else "") + (f" --only {args.only}" if args.only else "")
    command = "python benchmarks/run.py" + options
    text = [
        f"Gradient time / primal time ({size} sizes), median of {rounds} interleaved rounds, one thread.",
        f"Run {datetime.date.today().isoformat()} on {machine()}, with `{command}`.",
        "",
        *table,
        "",
        *hand_summary(vs_hand),
        "",
        *overheads(args.quick),
    ]
    print("\n".join(text))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(text) + "\n")
    try:
        plot(rows, names, args.out + ".png")
    except ImportError:
        log("matplotlib is not installed: no plot")
    return 0


if __name__ == "__main__":
    sys.exit(main())
