"""float32 in, float32 out: gradients of float32 arrays and np.float32 scalars keep their dtype.

Each function is differentiated at float32 arguments; the gradient must have the argument's
dtype (an array of float32, an np.float32 scalar) and agree with central differences of the
same function at the float64 version of the arguments, within float32's precision.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import chadpy as chad
from tests.support.fd import assert_close, central_diff

RTOL, ATOL = 2e-4, 2e-5  # float32 arithmetic (eps 1.2e-7) through a few operations


def elementwise(x, y):
    a = np.sin(x) * np.log1p(x * x) + np.arctan2(x, 2.0 + y) + np.cbrt(1.0 + y * y)
    b = np.hypot(x, y) + np.logaddexp(x, y) + np.sinc(x) + np.fmax(x, y) + np.copysign(x, y)
    return np.sum(a * b + np.expm1(x) + np.exp2(y) + np.arcsinh(x) + np.reciprocal(1.0 + y * y))


def broadcasting(x, v):
    return np.sum(np.tanh(x * v) + np.fmod(x, 0.7) + np.square(x - v))


def reductions(x):
    return np.sum(x, axis=0) @ np.mean(x, axis=1) + np.max(x) + np.prod(x[0]) + np.linalg.norm(x) + np.min(x, axis=1)[0]


def product(w, x):
    return np.sum(np.tanh(w @ x) ** 2) + np.dot(x, x)


def indexing(x):
    s = 0.0
    for i in range(3):
        s = s + x[i] * x[i + 1]
    return s + np.sum(x[1:] * 2.0)


def scalar(t, x):
    return t * math.sin(t) + t * np.sum(x)


def _wide(a: object) -> object:
    """A float32 value as float64, to compare with differences taken in float64."""
    return np.float64(a) if np.isscalar(a) else a.astype(np.float64)


def _rng_array(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-0.9, 0.9, shape).astype(np.float32)


CASES = [
    (elementwise, (_rng_array(0, (2, 3)), _rng_array(1, (2, 3)))),
    (broadcasting, (_rng_array(2, (2, 3)), _rng_array(3, (3,)))),
    (reductions, (_rng_array(4, (3, 3)),)),
    (product, (_rng_array(5, (2, 3)), _rng_array(6, (3,)))),
    (indexing, (_rng_array(7, (5,)),)),
    (scalar, (np.float32(0.4), _rng_array(8, (3,)))),
]


@pytest.mark.parametrize(("f", "args"), CASES, ids=[f.__name__ for f, _ in CASES])
def test_float32_gradient_keeps_the_dtype(f, args):
    argnums = tuple(range(len(args)))
    wide = tuple(_wide(a) for a in args)
    got = chad.grad(f, argnums=argnums)(*args)
    for i, (g, a) in enumerate(zip(got, args)):
        assert type(g) is type(a) and g.dtype == np.float32, f"d/d arg {i}: {type(g).__name__} {g.dtype}"
        assert_close(_wide(g), central_diff(f, wide, i), RTOL, ATOL, f"{f.__name__}: d/d arg {i}")


def test_float32_cotangent_in_vjp_stays_float32():
    x = _rng_array(9, (4,))
    y, pullback = chad.vjp(lambda v: np.sin(v) * 2.0, x)
    assert y.dtype == np.float32
    (g,) = pullback(np.ones(4, np.float32))
    assert g.dtype == np.float32
    assert_close(_wide(g), 2.0 * np.cos(x.astype(np.float64)), RTOL, ATOL, "vjp")
