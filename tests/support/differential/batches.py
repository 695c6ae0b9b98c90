"""Batches of seeds, run in worker processes, summarised, and the command line (`main`)."""

from __future__ import annotations

import argparse
import itertools
import os
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator

import chadpy as chad
from tests.support.paths import ROOT
from tests.support.progen import Program, generate

from .check import CLASSES, Outcome, check
from .shrinking import format_regression, shrink

# ====================================================================== batches


WEIGHTS: dict[str, float] = {}  # generator weight overrides (--weight), for every worker


def run_seed(seed: int, stages: bool) -> tuple[int, Outcome]:
    try:
        program = generate(seed, WEIGHTS)
    except Exception as e:  # a generator bug
        return seed, Outcome("invalid", f"generator: {type(e).__name__}", traceback.format_exc(limit=-3))
    outcome = check(program, stages=stages)
    outcome.features = program.features
    return seed, outcome


def _run_task(task: tuple[int, bool]) -> tuple[int, Outcome]:
    return run_seed(*task)


def _shrink_task(task: tuple[int, Outcome, int]) -> tuple[int, Outcome, Program, Outcome]:
    seed, outcome, max_checks = task
    program = generate(seed, WEIGHTS)
    small = shrink(program, outcome, max_checks)
    return seed, outcome, small, check(small, stages=outcome.stages)


def _pool_map(fn: Callable, tasks: list, jobs: int) -> Iterator:
    if jobs <= 1:
        yield from map(fn, tasks)
        return
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        yield from pool.imap_unordered(fn, tasks, chunksize=4)


def run_batch(seeds: list[int], stages_every: int = 0, jobs: int = 1) -> dict[int, Outcome]:
    """Check generate(seed) for every seed; every stages_every-th with all stages."""
    tasks = [(s, bool(stages_every) and k % stages_every == 0) for k, s in enumerate(seeds)]
    return dict(_pool_map(_run_task, tasks, jobs))


def pick_for_shrinking(results: dict[int, Outcome], cls: str, limit: int) -> list[int]:
    """Up to `limit` seeds of a class, one per symptom first (round robin over symptoms)."""
    by_key: dict[str, list[int]] = defaultdict(list)
    for seed in sorted(results):
        if results[seed].cls == cls:
            by_key[results[seed].key].append(seed)
    picked: list[int] = []
    for round_ in itertools.count():
        added = False
        for key in sorted(by_key, key=lambda k: -len(by_key[k])):
            if round_ < len(by_key[key]) and len(picked) < limit:
                picked.append(by_key[key][round_])
                added = True
        if not added:
            return picked
    return picked


def shrink_batch(
    results: dict[int, Outcome], seeds: list[int], jobs: int = 1, max_checks: int = 600
) -> list[tuple[int, Outcome, Program, Outcome]]:
    """(seed, outcome, shrunk program, its outcome) for each seed."""
    out = list(_pool_map(_shrink_task, [(s, results[s], max_checks) for s in seeds], jobs))
    return sorted(out, key=lambda r: seeds.index(r[0]))


def grouped(results: dict[int, Outcome], cls: str) -> list[tuple[str, list[int]]]:
    """Symptoms of a class, most frequent first, with their seeds."""
    by_key: dict[str, list[int]] = defaultdict(list)
    for seed in sorted(results):
        if results[seed].cls == cls:
            by_key[results[seed].key].append(seed)
    return sorted(by_key.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def summary(results: dict[int, Outcome], max_seeds: int | None = 8) -> str:
    """Counts per class, then each failing class's symptoms with (up to max_seeds of) their seeds."""
    counts = Counter(o.cls for o in results.values())
    n = len(results)
    lines = [f"{n} programs"]
    for cls in CLASSES:
        lines.append(f"  {cls:9} {counts[cls]:6}  ({100.0 * counts[cls] / max(n, 1):.1f}%)")
    checked = sum(o.checked for o in results.values())
    skipped = sum(o.skipped for o in results.values())
    lines.append(f"  gradient elements checked {checked}, skipped at kinks {skipped}")
    for cls in ("rejected", "wrong", "crash", "invalid"):
        groups = grouped(results, cls)
        if not groups:
            continue
        lines.append(f"\n{cls} ({counts[cls]}), by symptom:")
        for key, seeds in groups:
            more = max_seeds is not None and len(seeds) > max_seeds
            shown = ", ".join(map(str, seeds[:max_seeds])) + (", ..." if more else "")
            lines.append(f"  {len(seeds):5}  {key}\n         seeds {shown}")
    return "\n".join(lines)


def feature_counts(results: dict[int, Outcome], prefixes: tuple[str, ...] = ("",)) -> str:
    """For each generator feature (those starting with one of prefixes): the programs having it,
    and how many of them were not `ok`, by class."""
    having: dict[str, Counter] = defaultdict(Counter)
    for o in results.values():
        for name in o.features:
            if name.startswith(prefixes):
                having[name][o.cls] += 1
    lines = ["features (programs having each; those not ok by class):"]
    for name in sorted(having):
        c = having[name]
        bad = ", ".join(f"{cls} {c[cls]}" for cls in CLASSES[1:] if c[cls])
        lines.append(f"  {name:28} {sum(c.values()):6}" + (f"  ({bad})" if bad else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="number of programs")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--stages-every", type=int, default=0, help="check every k-th program with all stages")
    parser.add_argument(
        "--shrink", action="store_true", help="shrink wrong and crash programs (up to --max-shrink per class)"
    )
    parser.add_argument("--max-shrink", type=int, default=20)
    parser.add_argument(
        "--shrink-rejected",
        type=int,
        default=0,
        help="also shrink one program for each of the N most frequent rejections",
    )
    parser.add_argument("--show", choices=CLASSES, action="append", default=[], help="print the programs of this class")
    parser.add_argument("--print", action="store_true", help="print the programs and their outcomes, do not summarize")
    parser.add_argument(
        "--features",
        nargs="*",
        metavar="PREFIX",
        help="count the programs having each generator feature (those starting with a PREFIX; all if none)",
    )
    parser.add_argument(
        "--weight", action="append", default=[], metavar="NAME=W", help="override a generator weight (progen.WEIGHTS)"
    )
    opts = parser.parse_args(argv)
    for item in opts.weight:
        name, _, value = item.partition("=")
        WEIGHTS[name] = float(value)
    generate(0, WEIGHTS)  # unknown weight names fail here
    assert chad.__file__.startswith(str(ROOT)), f"chadpy imported from {chad.__file__}, not from {ROOT}"
    seeds = list(range(opts.seed, opts.seed + opts.n))
    if opts.print:
        for seed in seeds:
            program = generate(seed, WEIGHTS)
            print(program)
            print(f"# outcome: {check(program)}\n")
        return 0
    start = time.perf_counter()
    results = run_batch(seeds, opts.stages_every, opts.jobs)
    elapsed = time.perf_counter() - start
    print(f"chadpy from {os.path.dirname(chad.__file__)}; seeds {seeds[0]}..{seeds[-1]}; {opts.jobs} jobs")
    print(summary(results))
    cpu = sum(o.seconds for o in results.values())
    print(f"\n{elapsed:.1f} s wall, {cpu / max(len(results), 1):.3f} s per program (check time, one process)")
    if opts.features is not None:
        print("\n" + feature_counts(results, tuple(opts.features) or ("",)))
    for cls in opts.show:
        print(f"\n==================== {cls} programs")
        for seed in sorted(s for s, o in results.items() if o.cls == cls)[:50]:
            print(f"\n# ---------- seed {seed}: {results[seed]}\n")
            print(generate(seed, WEIGHTS))
    if opts.shrink or opts.shrink_rejected:
        picks = []
        if opts.shrink:
            picks += pick_for_shrinking(results, "wrong", opts.max_shrink) + pick_for_shrinking(
                results, "crash", opts.max_shrink
            )
        if opts.shrink_rejected:
            picks += [seeds_[0] for _, seeds_ in grouped(results, "rejected")[: opts.shrink_rejected]]
        start = time.perf_counter()
        shrunk = shrink_batch(results, picks, opts.jobs)
        print(f"\n==================== {len(shrunk)} shrunk reproducers ({time.perf_counter() - start:.1f} s)")
        seen = set()
        for seed, outcome, small, after in shrunk:
            if small.source in seen:
                print(f"\n# seed {seed}: shrinks to a reproducer shown above")
                continue
            seen.add(small.source)
            print(f"\n# ---------- seed {seed}: {outcome.cls} [{outcome.key}]; shrunk: {after.cls} [{after.key}]")
            print(format_regression(small, after))
    return 0
