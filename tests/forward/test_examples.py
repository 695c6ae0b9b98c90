"""The forward-mode examples run, their own checks against derivatives written by hand included."""

from __future__ import annotations

import os
import runpy

from tests.support.paths import ROOT


def test_scipy_newton_least_squares_and_stiff_ode_example_runs():
    """examples/scipy_second_order.py: trust-ncg with hvp, least_squares with jacobian, solve_ivp BDF with jacfwd,
    each against the same problem solved with hand-written derivatives (its asserts)."""
    runpy.run_path(os.path.join(ROOT, "examples", "scipy_second_order.py"), run_name="__main__")


def test_the_teaching_example_shows_both_halves():
    """examples/forward_and_reverse.py prints the same function's forward and reverse derivatives."""
    out = runpy.run_path(os.path.join(ROOT, "examples", "forward_and_reverse.py"), run_name="__main__")
    assert "def f_jvp_chad(x, y, dx, dy)" in out["forward"] and "def f_bp(saved, d)" in out["reverse"]
