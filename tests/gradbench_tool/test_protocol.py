"""The tool's protocol loop against a recorded session: `run.py` as GradBench starts it, messages on its
stdin, one response per message on its stdout.

`data/session.jsonl` pairs each message with the response it must get; there, timings are counted by name
(`{"derive": 1, "evaluate": 3}`: a function's first evaluation runs it once more, as `derive`), and an
error's text is not compared (only that there is one).
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys

import protocol
import pytest

from .conftest import TOOL

SESSION = [json.loads(line) for line in (TOOL.parents[1] / "tests/gradbench_tool/data/session.jsonl").open()]


def _comparable(response: dict) -> dict:
    """`response` with its timings counted by name and its error reduced to its presence, as the recording has
    them."""
    out = dict(response)
    if "timings" in out:
        assert all(isinstance(t["nanoseconds"], int) and t["nanoseconds"] > 0 for t in out["timings"]), out
        out["timings"] = dict(collections.Counter(t["name"] for t in out["timings"]))
    if "error" in out:
        assert isinstance(out.pop("error"), str) and out["success"] is False, out
    return out


def test_run_py_answers_the_recorded_session():
    messages = "".join(json.dumps(turn["message"]) + "\n" for turn in SESSION)
    run = subprocess.run(
        [sys.executable, str(TOOL / "run.py")], input=messages, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    responses = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(responses) == len(SESSION), run.stdout
    for turn, response in zip(SESSION, responses):
        assert _comparable(response) == turn["response"], (turn["message"], response)


def test_runs_until_both_minimums_are_met():
    calls = []
    function = protocol.Function(lambda x: calls.append(x) or 2 * x, prepare=lambda input: (input["x"],))
    response = protocol.evaluate(function, {"x": 3.0, "min_runs": 4, "min_seconds": 0})
    assert response["output"] == 6.0 and len(response["timings"]) == 4 == len(calls)
    response = protocol.evaluate(function, {"x": 3.0, "min_runs": 1, "min_seconds": 1e-9})
    assert len(response["timings"]) >= 1


@pytest.mark.parametrize("name", protocol.EVALS)
def test_every_eval_in_evals_txt_has_a_module_with_functions(name):
    module = __import__(name)
    assert module.FUNCTIONS and all(isinstance(f, protocol.Function) for f in module.FUNCTIONS.values())


def test_the_local_runner_counts_valid_outputs_and_averages_evaluate_timings():
    import local

    def timings(*ns, derive=None):
        return ([{"name": "derive", "nanoseconds": derive}] if derive else []) + [
            {"name": "evaluate", "nanoseconds": n} for n in ns
        ]

    log = [
        {"message": {"id": 0, "kind": "start"}},
        {"response": {"id": 0}},
        {"message": {"id": 1, "kind": "evaluate", "function": "primal", "description": "n=2"}},
        {"response": {"id": 1, "success": True, "timings": timings(1_000_000, 3_000_000, derive=9_000_000_000)}},
        {"message": {"id": 2, "kind": "analysis", "of": 1, "valid": True}},
        {"response": {"id": 2}},
        {"message": {"id": 3, "kind": "evaluate", "function": "gradient", "description": "n=2"}},
        {"response": {"id": 3, "success": True, "timings": timings(6_000_000)}},
        {"message": {"id": 4, "kind": "analysis", "of": 3, "valid": False}},
        {"response": {"id": 4}},
        {"message": {"id": 5, "kind": "evaluate", "function": "gradient", "description": "n=4"}},
        {"response": {"id": 5, "success": False, "error": "no"}},
    ]
    counts, times = local.summary(log)
    assert counts == {"valid": 1, "invalid": 1, "failed": 1}
    assert times == {"n=2": {"primal": 0.002, "gradient": 0.006}}  # the derive run is not averaged in
    assert local.ratio("lse", times["n=2"]) == pytest.approx(3.0)
