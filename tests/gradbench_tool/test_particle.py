"""The GradBench tool's `particle` eval: the inner force and the outer derivative in every mode against finite
differences, and the optimised w against GradBench's expected output and a finite-difference run of the same
descent."""

import json

import particle
import pytest
from protocol import evaluate

EXPECTED = 0.2071918746486116  # GradBench's expected output, from w = 0
MODES = ("ff", "fr", "rf", "rr")


def force_fd(x, w, h=1e-6):
    """-∇ₓp by central differences."""
    p, (x0, x1) = particle.potential, x
    return (
        -(p((x0 + h, x1), w) - p((x0 - h, x1), w)) / (2 * h),
        -(p((x0, x1 + h), w) - p((x0, x1 - h), w)) / (2 * h),
    )


def value_and_derivative_fd(w, h=1e-5):
    """(x0(t_f)², its derivative in w) by central differences, the force by central differences too."""
    miss = lambda w: particle.miss(w, force_fd)  # noqa: E731
    return miss(w), (miss(w + h) - miss(w - h)) / (2 * h)


@pytest.mark.parametrize("x0, x1, w", [(0.0, 8.0, 0.0), (3.5, 4.25, 0.3), (9.0, 1.0, -0.5)])
def test_force_forward_and_reverse_are_minus_the_potential_gradient(x0, x1, w):
    expected = force_fd((x0, x1), w)
    for force in (particle.force_forward, particle.force_reverse):
        got = force((x0, x1), w)
        assert got == pytest.approx(expected, rel=1e-7, abs=1e-10)
    assert particle.force_forward((x0, x1), w) == pytest.approx(particle.force_reverse((x0, x1), w), rel=1e-14)


def test_both_inner_modes_give_the_same_trajectory():
    assert particle.miss_forward(0.0) == pytest.approx(particle.miss_reverse(0.0), rel=1e-13)
    assert particle.miss_forward(0.0) == pytest.approx(particle.miss(0.0, force_fd), rel=1e-6)


@pytest.mark.parametrize("w", [0.0, 0.25])
def test_outer_derivative_in_every_mode_matches_finite_differences(w, h=1e-6):
    results = {mode: particle.VALUE_AND_DERIVATIVE[mode](w) for mode in MODES}
    for mode, (value, derivative) in results.items():
        miss = particle.miss_forward if mode[1] == "f" else particle.miss_reverse
        assert value == pytest.approx(miss(w), rel=1e-13)
        assert derivative == pytest.approx((miss(w + h) - miss(w - h)) / (2 * h), rel=1e-7)
    rr = results["rr"]
    for value, derivative in results.values():  # the four modes agree to rounding
        assert value == pytest.approx(rr[0], rel=1e-13)
        assert derivative == pytest.approx(rr[1], rel=1e-12)


def test_finite_difference_descent_finds_the_expected_w():
    assert particle.argmin(value_and_derivative_fd, 0.0) == pytest.approx(EXPECTED, abs=1e-6)


@pytest.mark.slow
def test_rf_finds_the_expected_w_as_json():
    response = evaluate(particle.FUNCTIONS["rf"], {"w": 0.0, "min_runs": 1, "min_seconds": 0})
    assert response["success"] and len(response["timings"]) == 1
    assert type(response["output"]) is float
    assert response["output"] == pytest.approx(EXPECTED, abs=1e-9)
    json.dumps(response)


@pytest.mark.slow  # the four full descents: about 5 s
def test_every_mode_finds_the_expected_w():
    found = {mode: particle.FUNCTIONS[mode].compute(0.0) for mode in MODES}
    fd = particle.argmin(value_and_derivative_fd, 0.0)
    for mode, w in found.items():
        output = particle.FUNCTIONS[mode].encode(w)
        assert type(output) is float, mode
        assert output == pytest.approx(EXPECTED, abs=1e-9), mode
        assert output == pytest.approx(found["rr"], abs=1e-12), mode
        assert output == pytest.approx(fd, abs=1e-6), mode
