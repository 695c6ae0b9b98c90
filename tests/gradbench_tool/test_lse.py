"""The `lse` eval through the protocol: LogSumExp and its gradient (softmax), as GradBench sees them."""

import math

import lse
import numpy as np
import pytest
from protocol import evaluate

from tests.support import fd


def run(function: str, x: np.ndarray, **runs) -> object:
    return evaluate(lse.FUNCTIONS[function], {"x": x.tolist(), **runs})["output"]


@pytest.mark.parametrize("n", [1, 2, 7, 50])
def test_primal_is_log_sum_exp(n):
    x = fd.rand_array(n, n, -3.0, 3.0)
    out = run("primal", x)
    assert type(out) is float
    assert out == pytest.approx(math.log(sum(math.exp(v) for v in x)), rel=1e-13)


def test_primal_is_stable_for_large_entries():
    x = fd.rand_array(1, 20, -3.0, 3.0)
    out = run("primal", x + 1000.0)  # exp(1000) overflows: the max must be subtracted first
    assert type(out) is float
    assert out == pytest.approx(1000.0 + math.log(np.sum(np.exp(x))), rel=1e-14)


@pytest.mark.parametrize("n", [1, 2, 7, 50])
def test_gradient_is_softmax(n):
    x = fd.rand_array(10 + n, n, -3.0, 3.0)
    out = run("gradient", x)
    assert type(out) is list and len(out) == n and all(type(v) is float for v in out)
    e = np.exp(x)
    np.testing.assert_allclose(out, e / np.sum(e), rtol=1e-12, atol=1e-15)
    assert sum(out) == pytest.approx(1.0, rel=1e-13)


def test_gradient_matches_finite_differences():
    x = fd.rand_array(2, 12, -100.0, 100.0)  # the eval's range
    expected = fd.central_diff(lse.logsumexp, (x,), 0, h=1e-5)
    np.testing.assert_allclose(run("gradient", x), expected, rtol=1e-5, atol=1e-8)


def test_gradient_at_tied_maxima():
    x = np.array([0.5, 2.0, 2.0, -1.0])  # the max is not differentiable there, LSE is
    e = np.exp(x)
    np.testing.assert_allclose(run("gradient", x), e / np.sum(e), rtol=1e-12)


def test_runs_and_timings():
    x = fd.rand_array(3, 5)
    response = evaluate(lse.FUNCTIONS["gradient"], {"x": x.tolist(), "min_runs": 3, "min_seconds": 0.0})
    assert response["success"] and len(response["timings"]) == 3
    assert all(t["name"] == "evaluate" and type(t["nanoseconds"]) is int for t in response["timings"])
