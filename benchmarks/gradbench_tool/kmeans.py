"""GradBench's `kmeans` eval: `cost` is the k-means objective, the sum over the points of the squared
distance to their nearest centroid; `dir` is the Newton direction J / H, with J the objective's gradient
in the centroids (reverse mode) and H its Hessian's diagonal (the Hessian is diagonal, so the
Hessian-vector product with ones gives it: reverse over forward mode, the Hessian never formed)."""

from __future__ import annotations

import functools

import numpy as np
from protocol import Function

import chadpy as chad


def cost(points, centroids):
    """The sum over the points of the squared distance to their nearest centroid."""
    # |p - c|² = |p|² + |c|² - 2 p·c, as an n × k matrix (no n × k × d array)
    squared = np.sum(points**2, axis=1)[:, None] + np.sum(centroids**2, axis=1)[None, :] - 2.0 * (points @ centroids.T)
    return np.sum(np.min(squared, axis=1))


gradient = chad.grad(cost, argnums=1)  # J, the gradient in the centroids: reverse mode, made once


def hessian_diagonal(points, centroids):
    """The diagonal of the cost's Hessian in the centroids, which is diagonal: its product with ones."""
    return chad.hvp(functools.partial(cost, points), (centroids,), (np.ones_like(centroids),))


def direction(points, centroids):
    """The Newton direction J / H: the gradient in the centroids over the Hessian's diagonal, elementwise."""
    return gradient(points, centroids) / hessian_diagonal(points, centroids)


def prepare(input):
    """The points and the centroids as float64 arrays, one row per point."""
    return np.array(input["points"], dtype=np.float64), np.array(input["centroids"], dtype=np.float64)


FUNCTIONS = {
    "cost": Function(cost, prepare=prepare, encode=float),
    "dir": Function(direction, prepare=prepare, encode=lambda d: d.tolist()),
}
