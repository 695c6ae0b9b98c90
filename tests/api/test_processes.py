"""Derivatives in other processes: gradient functions and `@chad.reverse` functions pickle by reference (pools with
the spawn and fork start methods), and by value with cloudpickle, as Dask sends them, carrying the text of a
`__main__` file to a worker that cannot read it and never their cache of derivatives."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import pickle
import subprocess
import sys
import textwrap

import cloudpickle
import numpy as np
import pytest

import chadpy as chad
from chadpy.api.plans import cache_of
from tests.support.paths import ROOT

_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def tanh_loss(w):
    return float(np.sum(np.tanh(w) ** 2))


def tanh_gradient(w):
    return 2.0 * np.tanh(w) * (1.0 - np.tanh(w) ** 2)


@chad.reverse
def cubic(w):
    return float(np.sum(w**3))


class Model:
    def __init__(self, scale: float):
        self.scale = scale

    @chad.reverse
    def loss(self, w):
        return float(np.sum(self.scale * w * w))


def _same(a, b) -> bool:
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return np.allclose(a, b)


POINTS = [np.linspace(-1.0, 1.0, 3) + k for k in range(4)]


def test_a_gradient_function_pickles_by_reference_without_its_cache():
    g = chad.grad(tanh_loss)
    fresh = pickle.dumps(g)
    assert np.allclose(g(POINTS[0]), tanh_gradient(POINTS[0]))
    used = pickle.dumps(g)
    assert len(used) == len(fresh) < 400  # a name and the options: no derivative, no text
    assert b"tanh_loss" in used and b"tests.api.test_processes" in used
    again = pickle.loads(used)
    assert np.allclose(again(POINTS[1]), tanh_gradient(POINTS[1]))
    for made in (chad.value_and_grad(tanh_loss), chad.jacfwd(np.tanh), chad.jacrev(tanh_loss), chad.hessian(tanh_loss)):
        copy = pickle.loads(pickle.dumps(made))
        assert repr(copy) == repr(made)
        assert _same(copy(POINTS[2]), made(POINTS[2]))


def test_reverse_functions_pickle_by_reference():
    assert pickle.loads(pickle.dumps(cubic)) is cubic
    assert pickle.loads(pickle.dumps(Model.loss)) is Model.__dict__["loss"]
    bound = pickle.loads(pickle.dumps(Model(3.0).loss))  # the object, and the method's name
    assert np.allclose(bound.grad(np.ones(2)), [6.0, 6.0])
    assert np.allclose(pickle.loads(pickle.dumps(cubic.grad))(np.ones(2)), [3.0, 3.0])


@pytest.mark.slow  # 4-8 s: worker processes start and import numpy and chadpy
@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_pools_map_gradients(method):
    context = multiprocessing.get_context(method)
    with context.Pool(2) as pool:
        gradients = pool.map(chad.grad(tanh_loss), POINTS)
        values = pool.map(cubic, POINTS)  # a `@chad.reverse` function's primal call
        cubes = pool.map(cubic.grad, POINTS)
    for x, g, v, c in zip(POINTS, gradients, values, cubes):
        assert np.allclose(g, tanh_gradient(x)) and v == pytest.approx(np.sum(x**3)) and np.allclose(c, 3 * x**2)
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as executor:
        gradients = list(executor.map(chad.grad(tanh_loss), POINTS))
    assert all(np.allclose(g, tanh_gradient(x)) for x, g in zip(POINTS, gradients))


_SCRIPT = """
import sys
import cloudpickle
import numpy as np
import chadpy as chad

def squash(z):
    return np.tanh(z)

def loss(w):
    return float(np.sum(squash(w) ** 2))

g = chad.grad(loss)
fresh = cloudpickle.dumps(g)
np.save(sys.argv[2], g(np.linspace(-1.0, 1.0, 3)))
used = cloudpickle.dumps(g)
assert len(used) == len(fresh), (len(fresh), len(used))  # its derivatives are not sent
open(sys.argv[1], "wb").write(used)
"""


@pytest.mark.slow  # 4 s: two interpreters start
def test_by_value_to_a_process_that_cannot_read_the_file(tmp_path):
    """A gradient of `__main__` functions (a script's, a notebook's) sent by cloudpickle runs where the script is
    not (its file deleted here), and is sent on from there (as Dask's scheduler may) with the text it came with."""
    script, sent, expected = tmp_path / "script.py", tmp_path / "g.pkl", tmp_path / "expected.npy"
    script.write_text(_SCRIPT)
    subprocess.run([sys.executable, str(script), str(sent), str(expected)], check=True, env=_ENV, timeout=120)
    script.unlink()
    elsewhere = textwrap.dedent(
        """
        import pickle, sys
        import cloudpickle
        import numpy as np
        g = pickle.loads(cloudpickle.dumps(pickle.load(open(sys.argv[1], "rb"))))  # received, then sent on
        np.save(sys.argv[2], g(np.linspace(-1.0, 1.0, 3)))
        """
    )
    got = tmp_path / "got.npy"
    subprocess.run([sys.executable, "-c", elsewhere, str(sent), str(got)], check=True, env=_ENV, timeout=120)
    assert np.array_equal(np.load(got), np.load(expected))
    assert np.allclose(np.load(got), tanh_gradient(np.linspace(-1.0, 1.0, 3)))


@pytest.mark.slow  # 8-15 s: a Dask cluster of two worker processes
def test_the_scaling_out_example_sums_shard_gradients_on_a_dask_cluster():
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "scaling_out.py")], capture_output=True, text=True, env=_ENV
    )
    assert out.returncode == 0, out.stderr[-3000:]
    difference = float(out.stdout.split("largest difference          :")[1])
    assert difference < 1e-9


def test_cloudpickle_keeps_a_function_s_derivatives_home():
    g = chad.grad(tanh_loss)
    g(POINTS[0])
    cache = cache_of(tanh_loss)
    assert len(cache) >= 1 and len(pickle.loads(cloudpickle.dumps(cache))) == 0
