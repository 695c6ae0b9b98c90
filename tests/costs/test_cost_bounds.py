"""The paper's cost bound, checked on program families (tests/cost_families.py) for n = 8 ... 1024.

Costs are deterministic (`chadpy.cost`: bytecode instructions plus array elements), so
every assertion compares exact counts. For a derivative D(n) and its primal P(n):

- efficient (both the simplified code users run and the Fig. 7 code before
  simplification): D <= C_PRIME + C * P for every family and every n, one pair (C, C_PRIME)
  for all; the fitted growth exponent of D in n is the primal's within 0.1;
- monadic: the same up to its log factor: D <= C_LOG_PRIME + C_LOG * P * log2(n);
- naive and sparse fail where the paper says they must, asserted: the naive stage is
  quadratic wherever the environment grows with n (section 4: dense zeros, one-hots and
  `+` cost |Γ|), and the sparse stage is n log n on Appendix A's tree of unions.

Super-linear growth is detected exactly by the second difference D(2n) - 2 D(n): for a
cost a*n + b it is the constant -b; for a*n*log2(n) it is 2a*n; for a*n^2 it is 2a*n^2.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest

import chadpy as chad
from chadpy.chad import stages
from chadpy.runtime.environments import DenseEV
from tests.support.cost_families import (
    BY_NAME,
    C_LOG,
    C_LOG_PRIME,
    C_PRIME,
    FAMILIES,
    LINEAR_SLACK,
    C,
    Point,
    assert_within_bound,
    check_bound,
    excess,
    measure,
)

pytestmark = pytest.mark.slow  # sweeps of every family at every stage to n = 1024: CI runs them, `-m "not slow"` not

NS = [8, 16, 32, 64, 128, 256, 512, 1024]
NAIVE_NS = [8, 16, 32, 64, 128, 256]  # quadratic: larger sizes only cost time


@functools.cache
def points(family: str, stage: str, simplify: bool = True) -> dict[int, Point]:
    ns = NAIVE_NS if stage == "naive" else NS
    return {n: measure(family, n, stage, simplify) for n in ns}


FAMILY_NAMES = [f.name for f in FAMILIES]
EXACT = [f.name for f in FAMILIES if f.exact]  # the second-difference tests need a cost linear in n itself
GROWING = [f.name for f in FAMILIES if f.env_grows]
FIXED_ENV = [f.name for f in FAMILIES if not f.env_grows]


# ====================================================================== efficient and monadic


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_efficient_within_the_bound(family):
    assert_within_bound(points(family, "efficient"))


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_efficient_fig7_code_within_the_bound(family):
    """The derivative before simplification (Fig. 7 over EArr) obeys the same bound."""
    assert_within_bound(points(family, "efficient", simplify=False))


@pytest.mark.parametrize("family", EXACT)
def test_efficient_cost_is_linear(family):
    """The second difference stays bounded (by the constant term): no hidden n log n."""
    for form in (True, False):
        for n, e in excess(points(family, "efficient", form)).items():
            assert abs(e) * n <= LINEAR_SLACK, f"simplify={form}, n={n}: D(2n) - 2 D(n) = {e * n}"


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_monadic_within_the_bound_up_to_its_log_factor(family):
    assert_within_bound(points(family, "monadic"), C_LOG, C_LOG_PRIME, log=True)


@pytest.mark.parametrize("family", GROWING)
def test_monadic_pays_a_log_factor_where_the_environment_grows(family):
    """Section 5's reason to exist: over a persistent map each operation costs log |Γ|."""
    pts = points(family, "monadic")
    assert check_bound(pts, C, C_PRIME), "monadic met the efficient stage's bound"
    assert all(e >= 100 for e in excess(pts).values()), excess(pts)


# ====================================================================== naive and sparse fail as predicted


@pytest.mark.parametrize("family", GROWING)
def test_naive_is_quadratic_where_the_environment_grows(family):
    """Section 4: every one-hot, zero and `+` of a dense environment vector costs |Γ| ~ n."""
    pts = points(family, "naive")
    ratios = [pts[n].ratio for n in NAIVE_NS]
    assert ratios[-1] >= 3 * ratios[2], f"derivative/primal ratio did not grow linearly: {ratios}"
    steps = list(excess(pts).values())
    assert all(b >= 1.8 * a > 0 for a, b in zip(steps, steps[1:])), f"second differences not ~n^2: {steps}"
    assert check_bound(pts, C, C_PRIME), "naive met the efficient stage's bound"


@pytest.mark.parametrize("family", FIXED_ENV)
def test_naive_is_linear_where_the_environment_is_fixed(family):
    """Loops keep Γ constant and lists use section 7's sparse cotangents in every stage, so the
    naive stage's dense vectors cost a constant per operation here: no failure is predicted (the
    fill loop's is the largest constant, ~207: a dense tuple per loop state and per write)."""
    assert_within_bound(points(family, "naive"), C * 3, C_PRIME)


def test_sparse_union_tree_is_n_log_n():
    """Appendix A: even with a union costing the smaller map's size, a balanced tree of unions
    costs n log n; the second difference grows linearly with n (constant for the others)."""
    second = {n: e * n for n, e in excess(points("union_tree", "sparse")).items()}
    assert all(second[n] > LINEAR_SLACK for n in second if n >= 128), second  # beyond any linear cost's
    assert all(second[2 * n] >= 1.5 * second[n] for n in second if n >= 32 and 2 * n in second), second


@pytest.mark.parametrize("family", [f for f in FAMILY_NAMES if f != "union_tree"])
def test_sparse_is_linear_without_big_unions(family):
    """In let-normal form, Fig. 2's let rule adds a backpropagator's (small) vector into the
    accumulated one, so a hash-map union costs the small one's size: only Appendix A's
    meeting of two large vectors is super-linear (see docs/paper.md, "The cost bound")."""
    assert_within_bound(points(family, "sparse"), C * 2, C_PRIME)
    if family in EXACT:
        assert all(e <= 30 for n, e in excess(points(family, "sparse")).items() if n >= 64)


# ====================================================================== the suite can fail


class _NaiveAccumulator:
    """The naive runtime in the efficient stage's place: Fig. 4's dense environment vector as
    the state of Fig. 7's code, so every push, one and pop rebuilds all |Γ| slots."""

    def __init__(self, depth: int):
        self.depth = depth
        self.ev = DenseEV.zero(depth)

    def one(self, slot: int, d: object) -> None:
        self.ev = DenseEV.plus(self.ev, DenseEV.one(self.depth, slot, d))

    push0 = one  # the slot is empty (None) until pushed: adding the zero sets it

    def pop(self, slot: int) -> object:
        values, ev = [], self.ev
        while ev:
            ev, v = ev
            values.append(v)
        values.reverse()
        value, values[slot] = values[slot], None
        self.ev = ()
        for v in values:
            self.ev = (self.ev, v)
        return value


def test_the_bound_fails_with_the_naive_runtime_in_place_of_earr(monkeypatch):
    efficient = stages.STAGES["efficient"]
    monkeypatch.setitem(stages.STAGES, "efficient", dataclasses.replace(efficient, environment=_NaiveAccumulator))
    for family in ("one_hot_env", "fibonacci"):
        made = {n: BY_NAME[family].make(n) for n in NAIVE_NS}  # fresh functions: no cached derivative
        pts = {}
        for n, (f, args) in made.items():
            assert chad.grad(f, argnums=0, simplify=False)(*args) == chad.grad(f, argnums=0, stage="monadic")(*args)
            report = chad.cost_report(f, *args, simplify=False)
            pts[n] = Point(report.primal.total, report.derivative.total)
        with pytest.raises(AssertionError):
            assert_within_bound(pts)


# ====================================================================== the measurement itself


def test_cost_report_counts_the_derivative_not_the_compiler():
    f, args = BY_NAME["let_chain"].make(16)
    first = chad.cost_report(f, *args)  # builds the derivative
    again = chad.cost_report(f, *args)  # cached
    assert first == again
    assert first.primal.total > 16 and first.derivative.total > first.primal.total
    assert first.ratio == first.derivative.total / first.primal.total
