"""The `gmm` eval module, through the JSON path GradBench sees: the log posterior against the
definition (scipy's Gaussian and Wishart densities), the gradient against a closed form for one
component and central differences of the objective."""

from __future__ import annotations

import json
import math

import gmm
import numpy as np
import protocol
import pytest
from scipy import special, stats

from tests.support import fd


def make_input(seed, d, k, n, m=0, gamma=1.0):
    """A seeded input in the eval's JSON format (as GradBench's `generate` builds it)."""
    rng = np.random.default_rng(seed)
    return {
        "d": d,
        "k": k,
        "n": n,
        "x": rng.normal(size=(n, d)).tolist(),
        "m": m,
        "gamma": gamma,
        "alpha": rng.normal(size=k).tolist(),
        "mu": rng.uniform(size=(k, d)).tolist(),
        "q": rng.normal(size=(k, d)).tolist(),
        "l": [rng.normal(size=d * (d - 1) // 2).tolist() for _ in range(k)],
        "min_runs": 1,
        "min_seconds": 0,
    }


def run(function, input):
    """What the tool answers GradBench for this function at this input."""
    response = protocol.evaluate(gmm.FUNCTIONS[function], input)
    assert response["success"] and len(response["timings"]) == 1
    output = response["output"]
    assert json.loads(json.dumps(output)) == output
    return output


def precision_factor(q, lower):
    """Q: exp(q) on the diagonal, lower below it filled column by column, element by element."""
    d = len(q)
    Q = np.zeros((d, d))
    position = 0
    for column in range(d):
        Q[column, column] = math.exp(q[column])
        for row in range(column + 1, d):
            Q[row, column] = lower[position]
            position += 1
    return Q


def log_posterior(input):
    """The eval's definition, term by term: the mixture's log-likelihood and the Wishart log prior on
    every precision matrix, with scipy's densities."""
    d, m, gamma = input["d"], input["m"], input["gamma"]
    x = np.array(input["x"])
    log_phi = special.log_softmax(input["alpha"])
    factors = [precision_factor(q, lower) for q, lower in zip(input["q"], input["l"])]
    precisions = [Q.T @ Q for Q in factors]
    log_densities = np.array(
        [
            stats.multivariate_normal(mean=mu, cov=np.linalg.inv(P)).logpdf(x).reshape(-1)
            for mu, P in zip(input["mu"], precisions)
        ]
    )
    likelihood = np.sum(special.logsumexp(log_phi[:, None] + log_densities, axis=0))
    prior = sum(stats.wishart(df=d + m + 1, scale=np.eye(d) / gamma**2).logpdf(P) for P in precisions)
    return float(likelihood + prior)


@pytest.mark.parametrize(
    "d, k, n, m, gamma",
    [(3, 1, 6, 0, 1.0), (3, 4, 7, 2, 1.5), (4, 2, 5, 1, 0.7), (5, 2, 6, 0, 1.0), (1, 3, 4, 0, 1.0)],
)
def test_objective_is_the_log_posterior(d, k, n, m, gamma):
    """Against the definition; from d = 4 on, filling l row by row instead of column by column differs."""
    input = make_input(10 * d + k, d, k, n, m, gamma)
    output = run("objective", input)
    assert type(output) is float
    assert output == pytest.approx(log_posterior(input), rel=1e-10, abs=1e-10)


def check_shape(output, d, k):
    """The eval's `Independent`: alpha a list of k floats, mu and q k lists of d floats, l k lists
    of d(d-1)/2 floats."""
    assert set(output) == {"alpha", "mu", "q", "l"}
    assert type(output["alpha"]) is list and len(output["alpha"]) == k
    assert all(type(v) is float for v in output["alpha"])
    for name, width in (("mu", d), ("q", d), ("l", d * (d - 1) // 2)):
        rows = output[name]
        assert type(rows) is list and len(rows) == k, name
        for row in rows:
            assert type(row) is list and len(row) == width, name
            assert all(type(v) is float for v in row), name


def test_jacobian_one_component_closed_form():
    """With one component, alpha cancels (its weight is 1) and d/d mu = sum_i Q^T Q (x_i - mu)."""
    d, n = 3, 8
    input = make_input(1, d, 1, n, m=1, gamma=1.3)
    output = run("jacobian", input)
    check_shape(output, d, 1)
    assert output["alpha"] == [pytest.approx(0.0, abs=1e-12)]
    Q = precision_factor(input["q"][0], input["l"][0])
    x, mu = np.array(input["x"]), np.array(input["mu"][0])
    expected_mu = Q.T @ Q @ np.sum(x - mu, axis=0)
    np.testing.assert_allclose(output["mu"][0], expected_mu, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("d, k, n, m, gamma", [(3, 4, 7, 2, 1.5), (4, 2, 5, 0, 1.0), (1, 3, 4, 1, 0.8)])
def test_jacobian_matches_finite_differences(d, k, n, m, gamma):
    input = make_input(100 + d * k, d, k, n, m, gamma)
    output = run("jacobian", input)
    check_shape(output, d, k)
    args = gmm.prepare(input)
    for i, name in enumerate(("alpha", "mu", "q", "l")):
        expected = fd.central_diff(gmm.objective, args, i)
        fd.assert_close(np.array(output[name]).reshape(expected.shape), expected, rtol=1e-6, atol=1e-7, where=name)


def test_jacobian_of_a_one_dimensional_mixture_has_empty_l():
    """d = 1: no entries below the diagonal; GradBench sends and expects one empty list per component."""
    input = make_input(5, 1, 2, 3)
    assert input["l"] == [[], []]
    output = run("jacobian", input)
    check_shape(output, 1, 2)
    assert output["l"] == [[], []]
