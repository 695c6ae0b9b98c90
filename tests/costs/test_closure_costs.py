"""Section 9 and Appendix C: function values cost no more to differentiate than first-order code.

Without closure conversion, CHAD of a function value splits its cotangent into a part for
the argument and a part for the captured context, and an application runs the body's
backpropagator once for each: section 9's nested identity t_n then costs 2^n. chadpy
closure-converts lambdas and nested defs (issue 5), so the efficient stage's bound of
tests/test_cost_bounds.py must hold for the higher-order families of tests/cost_families.py
(`HIGHER_ORDER`), with the same constants, and the cost must be linear in n.

Sizes stop at 64 (these programs nest n Python frames deep), and each family is measured
from the smallest size up, stopping at the first size beyond the bound, so an exponential
derivative fails at n = 8 or 16 instead of running for 2^64 steps.
"""

from __future__ import annotations

import functools
import math

import pytest

import chadpy as chad
from tests.support.cost_families import (
    C_LOG,
    C_LOG_PRIME,
    C_PRIME,
    HIGHER_ORDER,
    LINEAR_SLACK,
    C,
    Point,
    assert_within_bound,
    excess,
    made,
    measure,
)

pytestmark = pytest.mark.slow  # sweeps of the higher-order families: CI runs them, `-m "not slow"` not

NS = [8, 16, 32, 64]
NAMES = [f.name for f in HIGHER_ORDER]
FORMS = pytest.mark.parametrize("simplify", [True, False], ids=["simplified", "fig7"])


@functools.cache
def points(family: str, stage: str, simplify: bool = True) -> dict[int, Point]:
    """The costs at NS, measured in increasing n; fails at the first size beyond the stage's
    bound (efficient: C' + C P, monadic: C_LOG' + C_LOG P log2 n) before trying a larger one."""
    c, c_prime, factor = (C_LOG, C_LOG_PRIME, math.log2) if stage == "monadic" else (C, C_PRIME, lambda n: 1.0)
    pts = {}
    for n in NS:
        pts[n] = p = measure(family, n, stage, simplify)
        if p.derivative > c_prime + c * p.primal * factor(n):
            pytest.fail(f"{family}, {stage}, simplify={simplify}: n={n}: derivative {p.derivative}, primal {p.primal}")
    return pts


# ====================================================================== the cost


@FORMS
@pytest.mark.parametrize("family", NAMES)
def test_efficient_within_the_bound(family, simplify):
    """D <= C' + C * P at every size, and D grows with the primal's exponent (within 0.1)."""
    assert_within_bound(points(family, "efficient", simplify))


@FORMS
@pytest.mark.parametrize("family", NAMES)
def test_efficient_cost_is_linear(family, simplify):
    """|D(2n) - 2 D(n)| stays within the constant term: no 2^n, no n log n, no n^2."""
    for n, e in excess(points(family, "efficient", simplify)).items():
        assert abs(e) * n <= LINEAR_SLACK, f"n={n}: D(2n) - 2 D(n) = {e * n}"


@pytest.mark.parametrize("family", NAMES)
def test_monadic_within_the_bound_up_to_its_log_factor(family):
    assert_within_bound(points(family, "monadic"), C_LOG, C_LOG_PRIME, log=True)


# ====================================================================== the values


def _value_and_gradient(family: str, n: int, x: float) -> tuple[float, float]:
    """By hand: t_n is the identity, so both nested-identity families are sin x; the chain
    has f_0(y) = x y and f_k(y) = f_{k-1}(y) + x, so f_{n-1}(x) = x^2 + (n - 1) x."""
    if family == "closure_chain":
        return x * x + (n - 1) * x, 2 * x + (n - 1)
    assert family in ("nested_identity", "nested_identity_defs"), family
    return math.sin(x), math.cos(x)


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("family", NAMES)
def test_plain_python_runs_the_family(family, n):
    """The generated source parses at every size (Python's nesting limits) and computes the value."""
    f, (x,) = made(family, n)
    assert f(x) == pytest.approx(_value_and_gradient(family, n, x)[0], rel=1e-12)


@FORMS
@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("family", NAMES)
def test_efficient_gradient(family, n, simplify):
    points(family, "efficient", simplify)  # first: fails fast if the derivative is exponential
    f, (x,) = made(family, n)
    value, gradient = chad.value_and_grad(f, simplify=simplify)(x)
    want_value, want_gradient = _value_and_gradient(family, n, x)
    assert value == pytest.approx(want_value, rel=1e-12)
    assert gradient == pytest.approx(want_gradient, rel=1e-12)


@pytest.mark.parametrize("stage", ["naive", "sparse", "monadic"])
@pytest.mark.parametrize("family", NAMES)
def test_other_stages_gradient(family, stage):
    f, (x,) = made(family, 16)
    assert chad.grad(f, stage=stage)(x) == pytest.approx(_value_and_gradient(family, 16, x)[1], rel=1e-12)
