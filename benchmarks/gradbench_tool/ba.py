"""GradBench's `ba` eval (bundle adjustment, from ADBench): the reprojection and weight errors of
n cameras, m points and p observations, and their sparse Jacobian, from chadpy.

A camera is 11 numbers: a Rodrigues rotation (3), the camera centre (3), the focal length, the
principal point (2) and two radial distortion coefficients. Observation i sees point `i % m` with
camera `i % n`, with a weight w_i and a measured feature (x, y). Its residuals are

    reproj_err_i = w_i * (project(camera, point) - feature)     (2 numbers)
    w_err_i      = 1 - w_i ** 2

The eval sends one camera, point, weight and feature and asks for them repeated n, m, p times;
the work is done on the repeated arrays, as if they were all different.

Derivatives: each observation's two reprojection residuals depend on its own camera, point and
weight only, so the Jacobian is one 2 x 15 block per observation. The residuals are computed for
all observations at once (a NumPy array per quantity, one row per observation), and one `chad.vjp`
of that function with two pullbacks, of the cotangent 1 on every observation's x residual, then on
every y residual, gives row 0, then row 1, of every block: one forward pass and two reverse
passes in all. Forward mode would take 15 jvps (one per block column), each dearer than a pullback:
measured at p = 31843 (ba1, one thread), one jvp 26 ms, so 0.39 s for 15, against 7 ms for the vjp's
forward pass and 17 ms per pullback (the residuals alone: 6 ms; the whole Jacobian: 62 ms). The
weight errors' Jacobian is diagonal, one jvp along a tangent of ones.
"""

from __future__ import annotations

import functools

import numpy as np
from protocol import Function

import chadpy as chad

N_CAM_PARAMS = 11
BLOCK = N_CAM_PARAMS + 3 + 1  # the columns of a reprojection block: camera, point, weight


def rodrigues_rotate(rot, X):
    """Each row of X turned by the angle-axis rotation in the same row of rot (Rodrigues' formula);
    a zero rotation takes its first-order form X + rot x X, as the reference does."""
    sqtheta = np.sum(rot * rot, axis=1, keepdims=True)
    turned = sqtheta != 0.0
    theta = np.sqrt(np.where(turned, sqtheta, 1.0))  # 1 where unused: no division by zero
    axis = rot / theta
    costheta, sintheta = np.cos(theta), np.sin(theta)
    along_axis = np.sum(axis * X, axis=1, keepdims=True) * (1.0 - costheta)
    rotated = X * costheta + np.cross(axis, X) * sintheta + axis * along_axis
    return np.where(turned, rotated, X + np.cross(rot, X))


def project(cams, X):
    """The pixel at which each camera (a row of cams) sees the point in the same row of X: rotated into
    the camera's frame, divided by its depth, radially distorted, scaled by the focal length and
    moved to the principal point."""
    Xcam = rodrigues_rotate(cams[:, 0:3], X - cams[:, 3:6])
    proj = Xcam[:, 0:2] / Xcam[:, 2:3]
    rsq = np.sum(proj * proj, axis=1, keepdims=True)
    distortion = 1.0 + cams[:, 9:10] * rsq + cams[:, 10:11] * rsq * rsq
    return proj * distortion * cams[:, 6:7] + cams[:, 7:9]


def reprojection_errors(cams, X, w, feats):
    """The weighted reprojection error of each observation, (p, 2): its camera, point, weight and
    feature are the rows of cams, X, w, feats."""
    return w[:, None] * (project(cams, X) - feats)


def weight_errors(w):
    """1 - w², elementwise: what keeps the weights near 1."""
    return 1.0 - w * w


def objective(cams, X, w, obs, feats):
    """The reprojection errors (2p, flat, x and y of each observation in turn) and the weight errors
    (p) of the observations `obs` (pairs of a camera and a point index)."""
    reproj_err = reprojection_errors(cams[obs[:, 0]], X[obs[:, 1]], w, feats)
    return reproj_err.reshape(-1), weight_errors(w)


def jacobian(cams, X, w, obs, feats):
    """The Jacobian of (reproj_err, w_err) with respect to (cams, X, w), (3p) x (11n + 3m + p), in
    compressed sparse rows as the reference builds it: `rows` (3p + 1 offsets), `cols`, `vals`;
    per observation two rows of 15 entries (its camera's 11 columns, its point's 3, its weight),
    then one row per weight error."""
    n, m, p = len(cams), len(X), len(w)
    cam_idx, pt_idx = obs[:, 0], obs[:, 1]

    residuals = functools.partial(reprojection_errors, feats=feats)  # the features are data
    reproj_err, pullback = chad.vjp(residuals, cams[cam_idx], X[pt_idx], w)
    blocks = np.empty((p, 2, BLOCK))
    for row in range(2):
        ct = np.zeros_like(reproj_err)
        ct[:, row] = 1.0
        d_cams, d_X, d_w = pullback(ct)
        blocks[:, row, :N_CAM_PARAMS] = d_cams
        blocks[:, row, N_CAM_PARAMS : N_CAM_PARAMS + 3] = d_X
        blocks[:, row, -1] = d_w
    _, w_err_d = chad.jvp(weight_errors, (w,), (np.ones_like(w),))

    block_cols = np.empty((p, 2, BLOCK), dtype=np.int64)
    block_cols[:, :, :N_CAM_PARAMS] = (N_CAM_PARAMS * cam_idx)[:, None, None] + np.arange(N_CAM_PARAMS)
    block_cols[:, :, N_CAM_PARAMS : N_CAM_PARAMS + 3] = (N_CAM_PARAMS * n + 3 * pt_idx)[:, None, None] + np.arange(3)
    block_cols[:, :, -1] = (N_CAM_PARAMS * n + 3 * m + np.arange(p))[:, None]
    w_cols = N_CAM_PARAMS * n + 3 * m + np.arange(p)

    rows = np.concatenate([np.arange(0, 2 * p * BLOCK + 1, BLOCK), 2 * p * BLOCK + np.arange(1, p + 1)])
    cols = np.concatenate([block_cols.reshape(-1), w_cols])
    vals = np.concatenate([blocks.reshape(-1), w_err_d])
    return rows, cols, vals


def prepare(input):
    """The eval's one camera, point, weight and feature repeated n, m, p, p times, and the observations
    (i % n, i % m): the arguments of `objective` and `jacobian`."""
    n, m, p = input["n"], input["m"], input["p"]
    cams = np.tile(np.asarray(input["cam"], dtype=np.float64), (n, 1))
    X = np.tile(np.asarray(input["x"], dtype=np.float64), (m, 1))
    w = np.full(p, float(input["w"]))
    feats = np.tile(np.asarray(input["feat"], dtype=np.float64), (p, 1))
    obs = np.stack([np.arange(p) % n, np.arange(p) % m], axis=1)
    return cams, X, w, obs, feats


def encode_objective(output):
    """The errors as the reference (the C++ `to_json`) reports them: the first observation's and how
    often it repeats (the eval's README still shows two full lists; GradBench compares with the reference)."""
    reproj_err, w_err = output
    return {
        "reproj_error": {"elements": [float(v) for v in reproj_err[:2]], "repeated": len(reproj_err) // 2},
        "w_err": {"element": float(w_err[0]), "repeated": len(w_err)},
    }


def encode_jacobian(output):
    """The sparse Jacobian as the reference reports it: the first 30 and the last of rows, cols, vals."""
    rows, cols, vals = output

    def shown(a):
        return a[:30].tolist() + a[-1:].tolist()

    return {"rows": [int(v) for v in shown(rows)], "cols": [int(v) for v in shown(cols)], "vals": shown(vals)}


FUNCTIONS = {
    "objective": Function(objective, prepare=prepare, encode=encode_objective),
    "jacobian": Function(jacobian, prepare=prepare, encode=encode_jacobian),
}
