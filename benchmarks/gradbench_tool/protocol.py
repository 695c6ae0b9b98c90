"""GradBench's protocol, the tool's side: one JSON message per line in, one response per line out.

The eval sends `start`, `define` (a module: one of this folder's eval modules), `evaluate`
(a function of that module at an input) and `analysis` (whether an output was valid); the
tool answers each with the message's `id`, and `define` and `evaluate` with `success`.
An eval module lists its functions in `FUNCTIONS`, by the names the eval asks for.

An input with `min_runs` and `min_seconds` asks for the function to run at least
`min_runs` times and until the runs add up to `min_seconds`; each run is one `evaluate`
timing. Reading the input into arrays and writing the output as JSON are not timed. The
first evaluation of each function runs it once more, first, timed as `derive` (GradBench's
scores count only `evaluate` timings): chadpy makes a derivative's code at its first call,
a one-off cost that the log keeps apart, as PyTorch's tool compiles its graphs at import.
"""

from __future__ import annotations

import importlib
import json
import pathlib
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TextIO

TOOL = "chadpy"
EVALS = pathlib.Path(__file__).with_name("evals.txt").read_text().split()


@dataclass(frozen=True)
class Function:
    """An eval's function: `prepare` reads the JSON input into `compute`'s arguments, `compute` is the
    timed work, `encode` writes its result as JSON."""

    compute: Callable[..., Any]
    prepare: Callable[[Any], tuple] = lambda input: (input,)
    encode: Callable[[Any], Any] = lambda output: output


def evaluate(function: Function, input: Any, first: bool = False) -> dict:
    """Run `function` as often as the input asks, timing each run. The `first` evaluation of a function starts
    with a run of its own, timed as `derive`: it is the one in which chadpy makes the derivative's code."""
    runs, seconds = (input.get("min_runs", 1), input.get("min_seconds", 0.0)) if isinstance(input, dict) else (1, 0.0)
    args = function.prepare(input)
    timings = []
    if first:
        start = time.perf_counter_ns()
        function.compute(*args)
        timings.append({"name": "derive", "nanoseconds": time.perf_counter_ns() - start})
    done, elapsed = 0, 0
    while done < runs or elapsed < seconds * 1e9:
        start = time.perf_counter_ns()
        output = function.compute(*args)
        took = time.perf_counter_ns() - start
        timings.append({"name": "evaluate", "nanoseconds": took})
        done, elapsed = done + 1, elapsed + took
    return {"success": True, "output": function.encode(output), "timings": timings}


def respond(message: dict, modules: dict[str, Any], evaluated: set[tuple[str, str]]) -> dict:
    """The response to one message; `modules` holds the modules defined so far, by name, `evaluated` the
    functions evaluated so far, by module and name."""
    response: dict[str, Any] = {"id": message["id"]}
    try:
        if message["kind"] == "start":
            response["tool"] = TOOL
        elif message["kind"] == "define" and message["module"] not in EVALS:
            response |= {"success": False, "error": f"{TOOL} has no implementation of the eval {message['module']!r}"}
        elif message["kind"] == "define":
            modules[message["module"]] = importlib.import_module(message["module"])
            response["success"] = True
        elif message["kind"] == "evaluate":
            key = (message["module"], message["function"])
            response |= evaluate(modules[key[0]].FUNCTIONS[key[1]], message["input"], first=key not in evaluated)
            evaluated.add(key)
    except Exception as error:  # the eval is told, and goes on with its next message
        response |= {"success": False, "error": "".join(traceback.format_exception(error))}
    return response


def serve(lines: Iterable[str], out: TextIO) -> None:
    """Answer every message of `lines` on `out`, one line each, flushed at once (the eval waits for it)."""
    modules: dict[str, Any] = {}
    evaluated: set[tuple[str, str]] = set()
    for line in lines:
        if line.strip():
            print(json.dumps(respond(json.loads(line), modules, evaluated)), file=out, flush=True)
