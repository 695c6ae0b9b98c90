"""The GradBench tool's `saddle` eval: the outer gradient (through the inner ascent) in every mode against its
closed form and finite differences, and the saddle point found against its closed form, GradBench's expected
output and a finite-difference run of the same nested descent."""

import functools
import json

import numpy as np
import pytest
import saddle
from protocol import evaluate

START = np.array([1.0, 1.0])  # GradBench's input
EXPECTED = [8.246324826140356e-06] * 4  # GradBench's expected output from START
MODES = ("ff", "fr", "rf", "rr")


def value_and_gradient_fd(f, x, h=1e-6):
    """(f(x), ∇f(x)) by central differences."""
    return f(x), np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(2)])


@pytest.mark.parametrize("inner", [saddle.value_and_gradient_forward, saddle.value_and_gradient_reverse])
def test_inner_gradient_is_the_closed_form(inner):
    x, y = np.array([0.5, -2.0]), np.array([1.5, 0.25])
    value, gradient = inner(functools.partial(saddle.objective, x), y)
    assert value == pytest.approx(0.25 + 4.0 - 2.25 - 0.0625, rel=1e-15)
    assert gradient == pytest.approx(-2 * y, rel=1e-15)


@pytest.mark.parametrize("x", [np.array([1.0, 1.0]), np.array([0.7, -0.3])])
def test_outer_gradient_through_the_inner_ascent_in_every_mode(x):
    # the inner ascent ends at the same y* whatever x (its gradient -2y does not depend on x), so
    # max_y f(x, y) = |x|² - |y*|² and its gradient is 2x
    y_star = saddle.argmax(lambda y: value_and_gradient_fd(functools.partial(saddle.objective, x), y), START)
    fd_max = functools.partial(saddle.max_over_y, start=START, value_and_gradient=value_and_gradient_fd)
    fd_value, fd_gradient = value_and_gradient_fd(fd_max, x)
    for mode in MODES:
        outer, inner = saddle.MODES[mode[0]], saddle.MODES[mode[1]]
        value, gradient = outer(functools.partial(saddle.max_over_y, start=START, value_and_gradient=inner), x)
        assert value == pytest.approx(x @ x - y_star @ y_star, rel=1e-14), mode
        assert value == pytest.approx(fd_value, rel=1e-14), mode
        assert gradient == pytest.approx(2 * x, rel=1e-14), mode
        assert gradient == pytest.approx(fd_gradient, rel=1e-7), mode


def test_rf_finds_the_saddle_point_as_json():
    response = evaluate(saddle.FUNCTIONS["rf"], {"start": [1.0, 1.0], "min_runs": 1, "min_seconds": 0})
    assert response["success"] and len(response["timings"]) == 1
    output = response["output"]
    assert type(output) is list and len(output) == 4 and all(type(v) is float for v in output)
    assert output == pytest.approx([0.0] * 4, abs=2e-5)  # the saddle point, to the descent's stopping rule
    assert output == pytest.approx(EXPECTED, rel=1e-12)
    json.dumps(response)


@pytest.mark.slow  # four nested descents and one by finite differences: about 5 s
def test_every_mode_and_finite_differences_find_the_same_saddle_point():
    found = {mode: saddle.FUNCTIONS[mode].encode(saddle.FUNCTIONS[mode].compute(START)) for mode in MODES}
    x, y = saddle.saddle(START, value_and_gradient_fd, value_and_gradient_fd)
    fd = [*x, *y]
    for mode, output in found.items():
        assert all(type(v) is float for v in output), mode
        assert output == pytest.approx(found["rr"], rel=1e-12), mode
        assert output == pytest.approx(EXPECTED, rel=1e-12), mode
        assert output == pytest.approx([0.0] * 4, abs=2e-5), mode
        assert output == pytest.approx(fd, rel=1e-6), mode
