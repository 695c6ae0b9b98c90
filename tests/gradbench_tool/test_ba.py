"""The `ba` eval through the protocol: the reprojection and weight errors as the reference reports
them (the first observation's, and how often it repeats), and the sparse Jacobian's first 30 and last
entries of rows, cols and vals; then the whole sparse Jacobian of distinct cameras, points and
weights against central differences."""

import json
import math

import ba
import numpy as np
import pytest
from protocol import evaluate

from tests.support import fd

CAM = (  # GradBench's ba1 camera: rotation, centre, focal length, principal point, radial distortion
    [-0.758453, -1.109613, -0.845551]
    + [34.556073, 39.676747, 53.881673]
    + [419.194514, 5.864426, -8.51887]
    + [0.087812, 0.002739]
)


def ba_input(n=3, m=7, p=20, cam=CAM, x=(7.203245, 0.001144, 3.023326), w=0.417022, feat=(271.760969, 834.209256)):
    """An input as the eval sends it: one camera, point, weight and feature, to repeat n, m, p, p times."""
    return {"n": n, "m": m, "p": p, "cam": list(cam), "x": list(x), "w": w, "feat": list(feat)}


def run(function, input):
    return evaluate(ba.FUNCTIONS[function], input | {"min_runs": 1, "min_seconds": 0})["output"]


def projection_by_hand(cam, X):
    """One camera's pixel for one point, in scalars: R = I + sin t K + (1 - cos t) K² (K the cross-product
    matrix of the unit axis), or I + K(rot) at a zero rotation."""
    rot, centre = np.array(cam[0:3]), np.array(cam[3:6])
    t = math.sqrt(rot @ rot)

    def cross_matrix(a):
        return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])

    if t == 0.0:
        R = np.eye(3) + cross_matrix(rot)
    else:
        K = cross_matrix(rot / t)
        R = np.eye(3) + math.sin(t) * K + (1.0 - math.cos(t)) * K @ K
    Xcam = R @ (np.array(X) - centre)
    u, v = Xcam[0] / Xcam[2], Xcam[1] / Xcam[2]
    r2 = u * u + v * v
    L = 1.0 + cam[9] * r2 + cam[10] * r2 * r2
    return np.array([cam[6] * L * u + cam[7], cam[6] * L * v + cam[8]])


@pytest.mark.parametrize("cam", [CAM, [0.0, 0.0, 0.0] + CAM[3:]], ids=["rotated", "zero rotation"])
def test_objective_is_the_weighted_reprojection_error(cam):
    input = ba_input(cam=cam)
    out = run("objective", input)
    assert json.loads(json.dumps(out)) == out
    assert out.keys() == {"reproj_error", "w_err"}
    assert out["reproj_error"].keys() == {"elements", "repeated"} and out["w_err"].keys() == {"element", "repeated"}
    elements = out["reproj_error"]["elements"]
    assert type(elements) is list and len(elements) == 2 and all(type(v) is float for v in elements)
    assert type(out["reproj_error"]["repeated"]) is int and out["reproj_error"]["repeated"] == 20
    assert type(out["w_err"]["element"]) is float
    assert type(out["w_err"]["repeated"]) is int and out["w_err"]["repeated"] == 20
    expected = input["w"] * (projection_by_hand(cam, input["x"]) - np.array(input["feat"]))
    np.testing.assert_allclose(elements, expected, rtol=1e-9, atol=1e-9)  # cancellation: pixels of ~800
    assert out["w_err"]["element"] == pytest.approx(1.0 - input["w"] ** 2, rel=1e-15)


def test_every_observation_is_computed():
    """The objective is computed for all p observations (not the first one repeated): all equal here."""
    cams, X, w, obs, feats = ba.prepare(ba_input(n=4, m=5, p=23))
    reproj_err, w_err = ba.objective(cams, X, w, obs, feats)
    assert reproj_err.shape == (46,) and w_err.shape == (23,)
    np.testing.assert_array_equal(reproj_err.reshape(23, 2), np.broadcast_to(reproj_err[:2], (23, 2)))
    np.testing.assert_array_equal(obs, np.stack([np.arange(23) % 4, np.arange(23) % 5], axis=1))


def full_pattern(n, m, p):
    """rows, cols of the reference's sparse Jacobian, in full."""
    rows = np.concatenate([15 * np.arange(2 * p + 1), 30 * p + np.arange(1, p + 1)])
    cols = []
    for i in range(p):
        block = [11 * (i % n) + k for k in range(11)] + [11 * n + 3 * (i % m) + k for k in range(3)]
        cols += 2 * (block + [11 * n + 3 * m + i])
    cols += [11 * n + 3 * m + i for i in range(p)]
    return rows, np.array(cols)


@pytest.mark.parametrize("n, m, p", [(3, 7, 20), (2, 5, 12), (1, 1, 10)])
def test_jacobian_pattern_is_the_references(n, m, p):
    out = run("jacobian", ba_input(n=n, m=m, p=p))
    assert json.loads(json.dumps(out)) == out
    assert out.keys() == {"rows", "cols", "vals"}
    for key, kind in (("rows", int), ("cols", int), ("vals", float)):
        assert type(out[key]) is list and len(out[key]) == 31 and all(type(v) is kind for v in out[key]), key
    rows, cols = full_pattern(n, m, p)
    assert out["rows"] == rows[:30].tolist() + [int(rows[-1])]
    assert out["cols"] == cols[:30].tolist() + [int(cols[-1])]


@pytest.mark.parametrize("cam", [CAM, [0.0, 0.0, 0.0] + CAM[3:]], ids=["rotated", "zero rotation"])
def test_jacobian_values_match_finite_differences(cam):
    """vals[0:15] and vals[15:30] are the first observation's x and y residuals differentiated in its
    camera, point and weight (copies of the input's one camera, point and weight); the last, the last
    weight error's derivative, -2 w."""
    input = ba_input(cam=cam)
    vals = np.array(run("jacobian", input)["vals"])

    def residual(row):
        def f(cam, x, w):
            out = run("objective", input | {"cam": cam.tolist(), "x": x.tolist(), "w": w})
            return out["reproj_error"]["elements"][row]

        return f

    args = (np.array(cam), np.array(input["x"]), input["w"])
    for row in range(2):
        d_cam, d_x, d_w = (fd.central_diff(residual(row), args, i) for i in range(3))
        expected = np.concatenate([d_cam, d_x, [d_w]])
        fd.assert_close(vals[15 * row : 15 * row + 15], expected, rtol=1e-6, atol=1e-6, where=f"row {row}")
    assert vals[-1] == -2.0 * input["w"]


def dense(rows, cols, vals, shape):
    """The matrix of a compressed-sparse-rows triple."""
    J = np.zeros(shape)
    for r in range(shape[0]):
        for k in range(rows[r], rows[r + 1]):
            J[r, cols[k]] += vals[k]
    return J


def test_whole_jacobian_of_distinct_cameras_points_and_weights():
    """The full sparse Jacobian (not only what the eval sees) against central differences, with every
    camera, point, weight and feature different, one camera unrotated."""
    n, m, p = 3, 4, 7
    cams = np.tile(np.array(CAM), (n, 1)) * (1.0 + 0.1 * fd.rand_array(1, (n, 11)))
    cams[1, 0:3] = 0.0
    X = np.array([7.2, 0.0011, 3.0]) + fd.rand_array(2, (m, 3))
    w = fd.rand_array(3, p, 0.2, 1.5)
    feats = np.array([271.0, 834.0]) + 10 * fd.rand_array(4, (p, 2))
    obs = np.stack([np.arange(p) % n, (3 * np.arange(p)) % m], axis=1)
    rows, cols, vals = ba.jacobian(cams, X, w, obs, feats)
    assert rows.shape == (3 * p + 1,) and cols.shape == vals.shape == (31 * p,)
    assert np.all(np.diff(cols[: 30 * p].reshape(2 * p, 15), axis=1) > 0)  # columns ascending in a row

    def errors(params):
        c, x, ww = params[: 11 * n].reshape(n, 11), params[11 * n : 11 * n + 3 * m].reshape(m, 3), params[-p:]
        return np.concatenate(ba.objective(c, x, ww, obs, feats))

    params = np.concatenate([cams.ravel(), X.ravel(), w])
    J = dense(rows, cols, vals, (3 * p, len(params)))
    expected = np.array([fd.vjp_fd(errors, params, e) for e in np.eye(3 * p)])
    fd.assert_close(J, expected, rtol=1e-6, atol=1e-6, where="Jacobian")
