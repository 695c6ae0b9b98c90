"""Forward mode and higher order, each function of the API checked against closed forms, or against central
differences of an exact lower-order derivative (a gradient chadpy made, itself checked elsewhere)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.optimize

import chadpy as chad
from tests.forward import programs as P

X4 = np.array([1.2, 0.7, -0.3, 0.9])


def _close(actual: object, expected: object, rtol: float = 1e-9, atol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.asarray(actual, dtype=float), np.asarray(expected, dtype=float), rtol, atol)


# ====================================================================== jvp


def test_jvp_of_a_function_of_two_numbers_is_its_directional_derivative():
    x, y, dx, dy = 0.7, 1.3, 0.4, -1.1
    value, tangent = chad.jvp(P.two_arguments, (x, y), (dx, dy))
    assert value == P.two_arguments(x, y)
    expected = (math.sin(y) + y * y) * dx + (x * math.cos(y) + 2 * x * y) * dy
    assert type(tangent) is float and tangent == pytest.approx(expected, rel=1e-12)


def test_jvp_of_a_dict_of_parameters_takes_a_dict_of_tangents():
    params = {"w": np.array([0.3, -0.2]), "b": 0.1}
    x = np.array([1.5, 2.0])
    tangents = ({"w": np.array([1.0, 0.5]), "b": -0.3}, np.zeros(2))
    _, tangent = chad.jvp(P.affine_model, (params, x), tangents)
    z = params["w"] * x + params["b"]
    _close(tangent, (1 - np.tanh(z) ** 2) * (tangents[0]["w"] * x + tangents[0]["b"]))


def test_jvp_with_aux_returns_the_aux_as_it_is():
    value, tangent, aux = chad.jvp(P.with_aux, (X4,), (np.ones(4),), has_aux=True)
    _close(value, np.sin(X4))
    _close(tangent, np.cos(X4))
    assert aux == {"norm": float(np.sum(X4 * X4))}


def test_jvp_of_a_tuple_output_is_a_tuple_of_tangents():
    v = np.array([0.5, -1.0, 2.0, 0.1])
    _, (d_sum, d_cos) = chad.jvp(P.pair_of_outputs, (X4,), (v,))
    assert d_sum == pytest.approx(float(np.sum(2 * X4 * v)), rel=1e-12)
    _close(d_cos, -np.sin(X4) * v)


def test_jvp_does_not_change_its_arguments():
    x, v = X4.copy(), np.ones(4)
    chad.jvp(P.rosenbrock, (x,), (v,))
    assert np.array_equal(x, X4) and np.array_equal(v, np.ones(4))


# ====================================================================== Jacobians


def _softmax_jacobian(z):
    s = P.softmax(z)
    return np.diag(s) - np.outer(s, s)


@pytest.mark.parametrize("jacobian", [chad.jacfwd, chad.jacrev, chad.jacobian], ids=["jacfwd", "jacrev", "jacobian"])
def test_jacobian_of_softmax_is_its_closed_form(jacobian):
    z = np.array([0.3, -1.2, 2.0])
    _close(jacobian(P.softmax)(z), _softmax_jacobian(z))


@pytest.mark.parametrize("jacobian", [chad.jacfwd, chad.jacrev])
def test_jacobian_of_an_ode_right_hand_side(jacobian):
    y, (a, b, c, d) = np.array([1.5, 0.8]), (1.1, 0.4, 0.9, 0.3)
    expected = np.array([[a - b * y[1], -b * y[0]], [d * y[1], -c + d * y[0]]])
    _close(jacobian(P.lotka_volterra)(y, a, b, c, d), expected)


@pytest.mark.parametrize("jacobian", [chad.jacfwd, chad.jacrev])
def test_jacobian_of_a_least_squares_residual(jacobian):
    params, t = np.array([2.0, 0.5]), np.linspace(0.0, 3.0, 5)
    observed = np.array([2.1, 1.5, 1.1, 0.9, 0.6])
    e = np.exp(-params[1] * t)
    expected = np.stack([e, -params[0] * t * e], axis=1)
    _close(jacobian(P.decay_residuals)(params, t, observed), expected)


@pytest.mark.parametrize("jacobian", [chad.jacfwd, chad.jacrev])
def test_jacobian_with_respect_to_several_arguments_is_a_tuple(jacobian):
    y, (a, b, c, d) = np.array([1.5, 0.8]), (1.1, 0.4, 0.9, 0.3)
    dy, da = jacobian(P.lotka_volterra, argnums=(0, 1))(y, a, b, c, d)
    assert dy.shape == (2, 2) and np.shape(da) == (2,)
    _close(da, [y[0], 0.0])


@pytest.mark.parametrize("jacobian", [chad.jacfwd, chad.jacrev])
def test_jacobian_of_a_tuple_output_is_a_tuple_of_jacobians(jacobian):
    d_sum, d_cos = jacobian(P.pair_of_outputs)(X4)
    _close(d_sum, 2 * X4)
    _close(d_cos, np.diag(-np.sin(X4)))


@pytest.mark.parametrize("jacobian", [chad.jacfwd, chad.jacrev])
def test_jacobian_with_aux(jacobian):
    jac, aux = jacobian(P.with_aux, has_aux=True)(X4)
    _close(jac, np.diag(np.cos(X4)))
    assert aux == {"norm": float(np.sum(X4 * X4))}


# ====================================================================== Hessians and Hessian-vector products


def test_hessian_of_rosenbrock_is_scipys():
    _close(chad.hessian(P.rosenbrock)(X4), scipy.optimize.rosen_hess(X4))


def test_hvp_of_rosenbrock_is_scipys_and_forms_no_hessian():
    v = np.array([0.5, -1.0, 2.0, 0.3])
    _close(chad.hvp(P.rosenbrock, (X4,), (v,)), scipy.optimize.rosen_hess_prod(X4, v))


def test_hessian_of_a_logistic_loss_on_module_data():
    w = np.array([0.2, -0.4, 0.7])
    p = 1.0 / (1.0 + np.exp(-(P.FEATURES @ w)))
    _close(chad.hessian(P.logistic_loss)(w), P.FEATURES.T @ np.diag(p * (1 - p)) @ P.FEATURES)


def test_hessian_of_a_loop():
    x, n = 0.7, 5
    i = np.arange(1, n + 1)
    expected = 2 * np.sum(i * np.cos(i * x)) - x * np.sum(i * i * np.sin(i * x))
    assert chad.hessian(P.sine_series)(x, n) == pytest.approx(expected, rel=1e-12)


def test_hvp_of_a_matrix_argument():
    rng = np.random.default_rng(0)
    a, v = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    # grad trace(A^3) = 3 (A^2)^T; along V: 3 (A V + V A)^T
    _close(chad.hvp(P.cubic_trace, (a,), (v,)), 3 * (a @ v + v @ a).T)
    assert chad.hessian(P.cubic_trace)(a).shape == (3, 3, 3, 3)


def test_hessian_of_logsumexp():
    x = np.array([0.3, -1.2, 2.0])
    _close(chad.hessian(P.log_sum_exp)(x), _softmax_jacobian(x))


def test_hessian_of_a_gmm_objective_against_differences_of_its_gradient():
    rng = np.random.default_rng(1)
    means, log_weights, x = rng.standard_normal((3, 2)), rng.standard_normal(3), rng.standard_normal((5, 2))
    gradient = chad.grad(P.gmm_objective)
    hessian = chad.hessian(P.gmm_objective)(means, log_weights, x).reshape(6, 6)
    step = 1e-5
    for k in range(means.size):
        e = np.zeros(6)
        e[k] = step
        step_ = e.reshape(3, 2)
        plus, minus = gradient(means + step_, log_weights, x), gradient(means - step_, log_weights, x)
        _close(hessian[:, k], ((plus - minus) / (2 * step)).ravel(), rtol=1e-6, atol=1e-8)


def test_hessian_with_respect_to_two_arguments_is_blocks():
    means, log_weights, x = np.ones((2, 2)) * 0.3, np.array([0.1, -0.2]), np.array([[0.5, 1.0], [-0.4, 0.2]])
    (hmm, hmw), (hwm, hww) = chad.hessian(P.gmm_objective, argnums=(0, 1))(means, log_weights, x)
    assert hmm.shape == (2, 2, 2, 2) and hmw.shape == (2, 2, 2) and hwm.shape == (2, 2, 2) and hww.shape == (2, 2)
    _close(hmw, np.moveaxis(hwm, 0, -1))  # the mixed blocks are each other's transposes


# ====================================================================== nesting


def test_grad_of_grad_of_grad():
    assert chad.grad(chad.grad(P.fourth_power))(1.5) == pytest.approx(12 * 1.5**2, rel=1e-12)
    assert chad.grad(chad.grad(chad.grad(P.fourth_power)))(1.5) == pytest.approx(24 * 1.5, rel=1e-12)


def test_two_gradients_of_one_function_are_each_differentiated_as_made():
    # grad(f) and grad(f, argnums=(0,)) are two texts of one name: each derivative reads its own (the second once
    # read the first's, whose scalar result made jacfwd's a scalar, not a one-element tuple)
    scalar, one_tuple = chad.grad(P.fourth_power), chad.grad(P.fourth_power, argnums=(0,))
    assert chad.grad(scalar)(1.5) == pytest.approx(12 * 1.5**2, rel=1e-12)
    (second,) = chad.jacfwd(one_tuple)(1.5)
    assert np.shape(second) == () and second == pytest.approx(12 * 1.5**2, rel=1e-12)


def test_jvp_of_jvp_of_jvp_is_the_third_derivative():
    f = P.fourth_power

    def first(x, dx):
        return chad.jvp(f, (x,), (dx,))[1]

    def second(x, dx):
        return chad.jvp(first, (x, dx), (dx, 0.0))[1]

    _, third = chad.jvp(second, (1.5, 1.0), (1.0, 0.0))
    assert third == pytest.approx(24 * 1.5, rel=1e-12)


def test_jvp_of_grad_and_grad_of_jvp_agree_with_the_second_derivative():
    x = 1.5
    assert chad.jvp(chad.grad(P.fourth_power), (x,), (1.0,))[1] == pytest.approx(12 * x * x, rel=1e-12)
    assert chad.grad(P.calls_jvp)(x) == pytest.approx(4 * x, rel=1e-12)


def test_jacfwd_of_jacrev_is_the_hessian():
    _close(chad.jacfwd(chad.jacrev(P.rosenbrock))(X4), scipy.optimize.rosen_hess(X4))
    _close(chad.jacrev(chad.grad(P.rosenbrock))(X4), scipy.optimize.rosen_hess(X4))


def test_third_derivatives_of_a_function_of_two_variables():
    x = np.array([0.7, -1.3])
    third = chad.jacfwd(chad.hessian(P.mixed_cubic))(x)
    expected = np.zeros((2, 2, 2))
    for i, j, k in [(0, 0, 1), (0, 1, 0), (1, 0, 0)]:
        expected[i, j, k] = 2.0
    expected[1, 1, 1] = 6.0
    _close(third, expected)


@pytest.mark.parametrize(
    "fn", [P.gradient_in_a_pair, P.gradient_in_an_array, P.gradient_in_containers], ids=["tuple", "array", "containers"]
)
def test_a_gradient_taken_inside_has_its_arguments_structure(fn):
    """GradBench's particle eval takes a force as the gradient with respect to a position pair, inside the
    function its outer derivative differentiates."""
    slope = 7.0 if fn is P.gradient_in_containers else 3.0
    assert chad.grad(fn)(1.3) == pytest.approx(slope, rel=1e-12)
    assert chad.jvp(fn, (1.3,), (1.0,))[1] == pytest.approx(slope, rel=1e-12)


# ====================================================================== perturbation confusion


@pytest.mark.parametrize(
    ("fn", "derivative"),
    [(P.confused, lambda x: 1.0), (P.confused_product, lambda x: 2 * x), (P.nested_closures, lambda x: 1.0)],
    ids=["x+y", "x*y", "three levels"],
)
def test_derivatives_inside_derivatives_keep_their_perturbations_apart(fn, derivative):
    x = 0.8
    assert chad.grad(fn)(x) == pytest.approx(derivative(x), rel=1e-12)
    assert chad.jvp(fn, (x,), (1.0,))[1] == pytest.approx(derivative(x), rel=1e-12)


# ====================================================================== stop_gradient and @reverse


def test_stop_gradient_is_a_constant_to_every_derivative():
    x = 1.7
    assert chad.stop_gradient(x) is x
    assert chad.grad(P.stopped)(x) == pytest.approx(x, rel=1e-12)
    assert chad.jvp(P.stopped, (x,), (2.0,))[1] == pytest.approx(2.0 * x, rel=1e-12)
    assert chad.hessian(P.stopped)(x) == 0.0


def test_a_reverse_function_has_jvp_jacobian_and_hessian():
    f = chad.reverse(P.rosenbrock)
    v = np.ones(4)
    assert f.jvp((X4,), (v,))[1] == pytest.approx(float(scipy.optimize.rosen_der(X4) @ v), rel=1e-12)
    _close(f.jacobian(X4), scipy.optimize.rosen_der(X4))
    _close(f.hessian(X4), scipy.optimize.rosen_hess(X4))


def test_source_in_forward_mode_prints_the_tangent_code():
    text = chad.source(P.two_arguments, 0.7, 1.3, mode="forward")
    assert "def two_arguments_jvp_chad(x, y, dx, dy)" in text
    with pytest.raises(chad.ChadError, match="mode"):
        chad.source(P.two_arguments, 0.7, 1.3, mode="sideways")


def test_forward_over_forward_of_a_broadcast_is_finite():
    """d2/dx2 sum((ones((2, 2)) + [-0.75, x])^2) = 4, by jvp of the gradient chadpy made and by hvp."""
    assert chad.jvp(chad.grad(P.broadcast_sum), (0.3,), (1.0,))[1] == pytest.approx(4.0, rel=1e-12)
    assert chad.hvp(P.broadcast_sum, (0.3,), (1.0,)) == pytest.approx(4.0, rel=1e-12)


def test_powers_of_zero_have_finite_second_derivatives():
    assert chad.jvp(P.powers_of_zero, (0.2,), (1.0,))[1] == pytest.approx(0.4, rel=1e-12)
    assert chad.hvp(P.powers_of_zero, (0.2,), (1.0,)) == pytest.approx(2.0, rel=1e-12)
