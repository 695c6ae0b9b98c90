"""The GradBench tool's `kmeans` eval: the cost, its gradient, its Hessian's diagonal and the Newton direction
against their closed forms per cluster and finite differences, and the JSON the eval receives."""

import json

import kmeans
import numpy as np
import pytest
from protocol import evaluate


def data(n=40, k=5, d=3, seed=0):
    """GradBench's kind of input: random points, the last k of them the centroids (so no cluster is empty)."""
    points = np.random.default_rng(seed).random((n, d))
    return points, points[-k:].copy()


def clusters(points, centroids):
    """The index of each point's nearest centroid, by a loop over the points."""
    return np.array([np.argmin([np.sum((p - c) ** 2) for c in centroids]) for p in points])


def test_cost_is_the_sum_of_squared_distances_to_the_nearest_centroid():
    points, centroids = data()
    nearest = clusters(points, centroids)
    expected = sum(np.sum((p - centroids[j]) ** 2) for p, j in zip(points, nearest))
    assert kmeans.cost(points, centroids) == pytest.approx(expected, rel=1e-12)


def test_gradient_and_hessian_diagonal_are_the_closed_forms_per_cluster():
    points, centroids = data()
    nearest = clusters(points, centroids)
    sizes = np.bincount(nearest, minlength=len(centroids))[:, None]
    sums = np.array([points[nearest == j].sum(axis=0) for j in range(len(centroids))])
    # cost = sum over clusters j of sum over their points p of |c_j - p|²
    assert kmeans.gradient(points, centroids) == pytest.approx(2 * (sizes * centroids - sums), rel=1e-12, abs=1e-12)
    hessian_diagonal = kmeans.hessian_diagonal(points, centroids)
    assert hessian_diagonal == pytest.approx(np.broadcast_to(2.0 * sizes, centroids.shape), rel=1e-15)
    direction = kmeans.direction(points, centroids)
    assert direction == pytest.approx(centroids - sums / sizes, rel=1e-12, abs=1e-12)


def test_gradient_and_direction_match_finite_differences(h=1e-6):
    points, centroids = data(n=25, k=3, d=2, seed=1)
    gradient, direction = kmeans.gradient(points, centroids), kmeans.direction(points, centroids)
    for index in np.ndindex(centroids.shape):
        step = np.zeros_like(centroids)
        step[index] = h
        up, down = kmeans.cost(points, centroids + step), kmeans.cost(points, centroids - step)
        middle = kmeans.cost(points, centroids)
        assert gradient[index] == pytest.approx((up - down) / (2 * h), rel=1e-6)
        hessian = (up - 2 * middle + down) / h**2
        assert direction[index] == pytest.approx(gradient[index] / hessian, rel=1e-3)


def test_json_output_types():
    points, centroids = data(n=12, k=3, d=2, seed=2)
    input = {"points": points.tolist(), "centroids": centroids.tolist(), "min_runs": 2, "min_seconds": 0}
    cost = evaluate(kmeans.FUNCTIONS["cost"], input)
    assert cost["success"] and len(cost["timings"]) == 2
    assert type(cost["output"]) is float
    assert cost["output"] == pytest.approx(kmeans.cost(points, centroids), rel=1e-15)
    direction = evaluate(kmeans.FUNCTIONS["dir"], input)
    output = direction["output"]
    assert type(output) is list and len(output) == 3
    assert all(type(row) is list and len(row) == 2 and all(type(v) is float for v in row) for row in output)
    assert np.array(output) == pytest.approx(kmeans.direction(points, centroids), rel=1e-15)
    json.dumps(cost), json.dumps(direction)
