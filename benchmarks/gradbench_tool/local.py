"""Run GradBench's own evals against chadpy's tool on this machine, as GradBench's CLI does, without Docker.

    python benchmarks/gradbench_tool/local.py run --gradbench ../gradbench --python ../gradbench-venv/bin/python
    python benchmarks/gradbench_tool/local.py table gradbench-logs/chadpy [gradbench-logs/jax ...] --nightly DIR

`run` starts each eval (`python/gradbench/gradbench/evals/<eval>/run.py`, in the GradBench checkout, with
the Python that has GradBench's package) and a tool (`--tool chadpy`, this folder's `run.py`, or one of
GradBench's Python tools, `jax` or `pytorch`, with this Python), passes every message of the eval to the
tool and every response back, and logs both in GradBench's log format (`<logs>/<tool>/<eval>.jsonl`). It
prints, per eval, how many outputs the eval found valid and invalid, and per input size the mean time of
each function (GradBench's figure) and the ratio derivative / primal. `--sizes small` (the default) runs
every eval at small sizes in a few minutes; `--sizes default` at GradBench's own sizes. Every tool runs on
one thread (JAX's without asynchronous dispatch, so that its timings are of the work).

`table` prints the ratios of several runs side by side, and with `--nightly` those of GradBench's published
nightly results (the `summary.json` files of its `ci/refs/heads/nightly` branch). See this folder's README.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time
from collections import defaultdict

HERE = pathlib.Path(__file__).parent
EVALS = (HERE / "evals.txt").read_text().split()

# each eval's primal and derivative (GradBench's scorer pairs them by the input's description);
# particle's and saddle's four functions are the same computation by four mixes of modes
PAIRS = {"ba": ("objective", "jacobian"), "gmm": ("objective", "jacobian"), "ht": ("objective", "jacobian")}
PAIRS |= {"lstm": ("objective", "jacobian"), "kmeans": ("cost", "dir"), "hello": ("square", "double")}
PAIRS |= {name: ("primal", "gradient") for name in ("det", "llsq", "lse", "ode")}

SMALL = {
    "lse": ["-n", "2500", "20000"],
    "llsq": ["-n", "64", "1024", "-m", "128"],
    "det": ["-l", "5", "6", "7"],
    "ode": ["-n", "1000", "-s", "1", "10"],
    "gmm": ["-d", "2", "10", "-k", "5", "10"],
    "lstm": ["-l", "2", "-c", "1024"],
    "ba": ["--min", "1", "--max", "2"],
    "ht": ["--min", "1", "--max", "2"],
    "kmeans": ["-k", "10", "100", "-n", "1000", "-d", "8"],
}
SMALL_RUNS = ["--min-runs", "1", "--min-seconds", "0.1"]
# GradBench's default sizes, but for two: det stops at ell = 10 (its gradient at ell = 11, 40 million recursive
# calls, would keep about 48 GB for the backward pass), ht at hand11 (hand12's data is stored with Git LFS)
DEFAULT = {"det": ["-l", "5", "6", "7", "8", "9", "10"], "ht": ["--max", "11"]}
ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
PEERS = ("jax", "pytorch", "enzyme", "tapenade", "futhark", "mooncake-jl")  # the nightly's columns

Times = dict[str, dict[str, float]]  # per input description, the mean seconds of each function


def eval_command(python: str, name: str, sizes: str) -> list[str]:
    """The command that starts eval `name` at `sizes` ('small' or 'default')."""
    command = [python, f"python/gradbench/gradbench/evals/{name}/run.py"]
    if sizes == "small" and name != "hello":
        command += SMALL.get(name, []) + SMALL_RUNS
    elif sizes == "default":
        command += DEFAULT.get(name, [])
    return command


def tool_command(tool: str, gradbench: pathlib.Path) -> tuple[list[str], dict[str, str]]:
    """The command that starts `tool` and its environment."""
    env = os.environ | ONE_THREAD
    if tool == "chadpy":
        return [sys.executable, str(HERE / "run.py")], env
    # GradBench's Python tools import its package; JAX's computes as it is asked, not asynchronously
    env |= {"PYTHONPATH": str(gradbench / "python/gradbench"), "JAX_CPU_ENABLE_ASYNC_DISPATCH": "false"}
    return [sys.executable, str(gradbench / f"python/gradbench/gradbench/tools/{tool}/run.py")], env


def relay(evaluation: list[str], tool: tuple[list[str], dict], gradbench: pathlib.Path, log: pathlib.Path) -> list:
    """Connect the eval's stdout to the tool's stdin and back, one line at a time, until the eval ends;
    log every message and response with the time since the start. Returns the log's entries."""
    start = time.perf_counter_ns()
    entries: list[dict] = []
    with (
        subprocess.Popen(evaluation, cwd=gradbench, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as ev,
        subprocess.Popen(tool[0], env=tool[1], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as answerer,
        log.open("w") as out,
    ):
        for line in ev.stdout:
            entries.append({"elapsed": {"nanoseconds": time.perf_counter_ns() - start}, "message": json.loads(line)})
            answerer.stdin.write(line)
            answerer.stdin.flush()
            answer = answerer.stdout.readline()
            if not answer:
                ev.kill()
                raise RuntimeError(f"the tool stopped answering at {line.strip()[:200]}")
            entries.append({"elapsed": {"nanoseconds": time.perf_counter_ns() - start}, "response": json.loads(answer)})
            out.write(json.dumps(entries[-2]) + "\n" + json.dumps(entries[-1]) + "\n")
            ev.stdin.write(answer)
            ev.stdin.flush()
        answerer.stdin.close()
    return entries


def summary(entries: list[dict]) -> tuple[dict[str, int], Times]:
    """Valid and invalid counts (and evaluations that failed), and per input description the mean seconds of
    each function over its `evaluate` timings, as GradBench's scores take them."""
    messages = {e["message"]["id"]: e["message"] for e in entries if "message" in e}
    counts = {"valid": 0, "invalid": 0, "failed": 0}
    times: Times = defaultdict(dict)
    for entry in entries:
        response = entry.get("response")
        message = messages.get(response["id"]) if response else None
        if message and message["kind"] == "analysis":
            counts["valid" if message["valid"] else "invalid"] += 1
        elif message and message["kind"] == "evaluate":
            runs = [t["nanoseconds"] for t in response.get("timings", []) if t["name"] == "evaluate"]
            if not response.get("success") or not runs:
                counts["failed"] += 1
                continue
            times[message.get("description", "")][message["function"]] = sum(runs) / len(runs) / 1e9
    return counts, times


def ratio(name: str, seconds: dict[str, float]) -> float | None:
    """Derivative / primal time of one input, None where the eval has no such pair or a time is missing."""
    primal, derivative = PAIRS.get(name, (None, None))
    return seconds[derivative] / seconds[primal] if primal in seconds and derivative in seconds else None


def read_log(path: pathlib.Path) -> list[dict]:
    return [json.loads(line) for line in path.open()]


def run(args: argparse.Namespace) -> None:
    logs = args.logs / args.tool
    logs.mkdir(parents=True, exist_ok=True)
    gradbench = args.gradbench.resolve()
    tool = tool_command(args.tool, gradbench)
    for name in args.evals.split(","):
        started = time.perf_counter()
        entries = relay(eval_command(args.python, name, args.sizes), tool, gradbench, logs / f"{name}.jsonl")
        counts, times = summary(entries)
        print(f"{name}: {counts} in {time.perf_counter() - started:.0f} s", flush=True)
        for description, seconds in times.items():
            figures = ", ".join(f"{f} {s * 1e3:.4g} ms" for f, s in seconds.items())
            r = ratio(name, seconds)
            print(f"  {description or '-'}: {figures}" + (f"; ratio {r:.1f}" if r is not None else ""), flush=True)


def nightly_ratios(directory: pathlib.Path, name: str) -> dict[str, dict[str, float]]:
    """Per tool and input description, derivative / primal from a GradBench nightly `evals/<name>/summary.json`
    (particle and saddle: the mean seconds of the tool's fastest function)."""
    path = directory / "evals" / name / "summary.json"
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    seconds = lambda d: d["secs"] + d["nanos"] / 1e9  # noqa: E731
    out: dict[str, dict[str, float]] = {}
    for tool, workloads in data["tools"].items():
        if "primal" in data:
            out[tool] = {
                w: seconds(p["derivative"]) / seconds(p["primal"]) for w, p in workloads.items() if len(p) == 2
            }
        else:
            out[tool] = {"": min(seconds(t) for t in workloads.values())} if workloads else {}
    return out


def table(args: argparse.Namespace) -> None:
    """One row per eval and input description of the first run: each run's ratio, then the nightly's."""
    runs = {directory.name: directory for directory in args.logs}
    first = args.logs[0]
    if args.nightly_date:
        print(f"Derivative / primal time per input; GradBench's nightly results of {args.nightly_date}.\n")
    head = ["eval", "input", "valid"] + [f"{t} (here)" for t in runs] + [f"{p} (nightly)" for p in PEERS]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in EVALS:
        if not (first / f"{name}.jsonl").exists():
            continue
        logged = {t: summary(read_log(d / f"{name}.jsonl")) for t, d in runs.items() if (d / f"{name}.jsonl").exists()}
        counts, times = logged[first.name]
        others = {t: logged[t][1] if t in logged else {} for t in runs}
        nightly = nightly_ratios(args.nightly, name) if args.nightly else {}
        valid = f"{counts['valid']}/{counts['valid'] + counts['invalid'] + counts['failed']}"
        for description in times:
            cells = []
            for t in runs:
                seconds = others[t].get(description, {})
                r = ratio(name, seconds)
                cells.append(f"{r:.1f}" if r is not None else _fastest(seconds))
            for p in PEERS:
                value = nightly.get(p, {}).get(description if name in PAIRS else "")
                cells.append("" if value is None else f"{value:.1f}" if name in PAIRS else f"{value * 1e3:.3g} ms")
            rows.append(f"| {name} | {description or '-'} | {valid} | " + " | ".join(cells) + " |")
            valid = ""
    print("\n".join(rows))


def _fastest(seconds: dict[str, float]) -> str:
    """particle's and saddle's cell: the fastest of the four mixes of modes, as GradBench scores them."""
    return f"{min(seconds.values()) * 1e3:.3g} ms" if seconds else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(required=True)
    running = commands.add_parser("run", help="run evals against a tool")
    running.add_argument("--gradbench", type=pathlib.Path, required=True, help="a checkout of GradBench")
    running.add_argument("--python", default=sys.executable, help="the Python that has GradBench's package")
    running.add_argument("--tool", default="chadpy", choices=["chadpy", "jax", "pytorch"])
    running.add_argument("--evals", default=",".join(EVALS), help="comma-separated (default: all twelve)")
    running.add_argument("--sizes", choices=["small", "default"], default="small")
    running.add_argument("--logs", type=pathlib.Path, default=pathlib.Path("gradbench-logs"))
    running.set_defaults(command=run)
    tabling = commands.add_parser("table", help="the ratios of logged runs, and of GradBench's nightly results")
    tabling.add_argument("logs", type=pathlib.Path, nargs="+", help="log folders of `run`, one per tool")
    tabling.add_argument(
        "--nightly", type=pathlib.Path, help="a folder with GradBench's nightly `evals/*/summary.json`"
    )
    tabling.add_argument("--nightly-date", default="", help="the nightly's date, printed above the table")
    tabling.set_defaults(command=table)
    args = parser.parse_args()
    args.command(args)


if __name__ == "__main__":
    main()
