"""The `ht` eval through the protocol, on a small synthetic hand made here (22 bones as in ADBench's
model: the wrist, four per finger, the forearm; 24 vertices; 16 triangles): the objective in closed form
where the pose is simple (the rest pose, the global rotation and translation, one joint bent),
the Jacobian against central differences at a general pose, for the simple input
(no `us`) and the complicated one (`us`: barycentric coordinates on triangles)."""

import json
import math

import ht
import numpy as np
import pytest
from protocol import evaluate

from tests.support import fd

N_BONES, N_VERTICES, N_TRIANGLES, N_POINTS = 22, 24, 16, 5
PARENTS = [-1] + [p for f in range(5) for p in (0, 1 + 4 * f, 2 + 4 * f, 3 + 4 * f)] + [0]  # wrist, fingers, forearm


def rotation(axis, angle):
    """The rotation by angle about a unit axis: I + sin K + (1 - cos) K²."""
    x, y, z = axis
    K = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * K @ K


def rigid(R, t):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, t
    return T


def hand_model(seed=0, mirrored=False):
    """A model in the eval's JSON form: each bone a rigid offset from its parent, the inverse base
    absolutes the inverses of the chained offsets (so the rest pose leaves the vertices where they
    are), each vertex weighted on one or two bones, weights summing to 1."""
    rng = np.random.default_rng(seed)
    relatives, absolutes = [], []
    for parent in PARENTS:
        axis = rng.normal(size=3)
        T = rigid(rotation(axis / np.linalg.norm(axis), rng.uniform(-0.5, 0.5)), rng.uniform(-1.0, 1.0, 3))
        relatives.append(T)
        absolutes.append(T if parent == -1 else absolutes[parent] @ T)
    positions = np.ones((N_VERTICES, 4))
    positions[:, :3] = rng.uniform(-2.0, 2.0, (N_VERTICES, 3))
    weights = np.zeros((N_VERTICES, N_BONES))
    for v in range(N_VERTICES):
        bones = rng.choice(N_BONES, size=1 + v % 2, replace=False)
        weights[v, bones] = rng.dirichlet(np.ones(len(bones)))
    weights[0:20] *= 0.4
    weights[range(20), range(2, 22)] += 0.6  # vertex v mostly on finger bone v + 2
    return {
        "bone_count": N_BONES,
        "bone_names": [f"bone{b}" for b in range(N_BONES)],
        "parents": PARENTS,
        "base_relatives": np.array(relatives).tolist(),
        "inverse_base_absolutes": np.linalg.inv(np.array(absolutes)).tolist(),
        "base_positions": positions.tolist(),
        "weights": weights.tolist(),
        "triangles": rng.integers(0, N_VERTICES, (N_TRIANGLES, 3)).tolist(),
        "is_mirrored": mirrored,
    }


def ht_input(theta, complicated, seed=1, mirrored=False, correspondences=None):
    """An input as the eval sends it, N_POINTS random points and correspondences unless given; `us`
    empty for the simple input."""
    rng = np.random.default_rng(seed)
    model = hand_model(mirrored=mirrored)
    if correspondences is None:
        correspondences = rng.integers(0, N_TRIANGLES if complicated else N_VERTICES, N_POINTS).tolist()
    n = len(correspondences)
    data = {"model": model, "correspondences": list(correspondences), "points": rng.normal(size=(n, 3)).tolist()}
    us = rng.uniform(0.0, 0.5, (n, 2)).tolist() if complicated else []
    return {"theta": list(theta), "data": data, "us": us}


def run(function, input):
    return evaluate(ht.FUNCTIONS[function], input | {"min_runs": 1, "min_seconds": 0})["output"]


def model_points(input, vertices):
    """The model point of each measured point, given the posed vertices."""
    data = input["data"]
    if not input["us"]:
        return vertices[data["correspondences"]]
    corners = vertices[np.array(data["model"]["triangles"])[data["correspondences"]]]
    u = np.array(input["us"])
    return u[:, 0:1] * corners[:, 0] + u[:, 1:2] * corners[:, 1] + (1.0 - u[:, 0:1] - u[:, 1:2]) * corners[:, 2]


def check_objective(input, vertices):
    out = run("objective", input)
    assert json.loads(json.dumps(out)) == out
    n = len(input["data"]["correspondences"])
    assert type(out) is list and len(out) == 3 * n and all(type(v) is float for v in out)
    expected = np.array(input["data"]["points"]) - model_points(input, vertices)
    np.testing.assert_allclose(out, expected.ravel(), rtol=1e-10, atol=1e-12)


def base_vertices(input):
    return np.array(input["data"]["model"]["base_positions"])[:, :3]


@pytest.mark.parametrize("complicated", [False, True], ids=["simple", "complicated"])
@pytest.mark.parametrize("mirrored", [False, True], ids=["", "mirrored"])
def test_objective_of_a_rigidly_moved_hand(complicated, mirrored):
    """Fingers at rest: the vertices are the base positions (x negated if mirrored), turned by the global
    angle-axis rotation and moved by the translation."""
    axis, angle, translation = np.array([2.0, -1.0, 2.0]) / 3.0, 0.7, np.array([0.3, -1.2, 2.5])
    input = ht_input(list(angle * axis) + list(translation) + [0.0] * 20, complicated, mirrored=mirrored)
    vertices = base_vertices(input) * (np.array([-1.0, 1.0, 1.0]) if mirrored else 1.0)
    check_objective(input, vertices @ rotation(axis, angle).T + translation)


@pytest.mark.parametrize("complicated", [False, True], ids=["simple", "complicated"])
def test_objective_at_rest_and_below_the_rotation_threshold(complicated):
    """A global rotation of angle under 1e-4 is the identity, as in the reference."""
    input = ht_input([3e-5, -4e-5, 5e-5, 0.1, 0.2, 0.3] + [0.0] * 20, complicated)
    check_objective(input, base_vertices(input) + np.array([0.1, 0.2, 0.3]))


def bent(input, bone, R):
    """The vertices with `bone` turned by R (4 x 4) from its rest pose: that bone and the ones after it on
    its finger move by A R A⁻¹ (A the bone's base absolute), so a vertex with weight s on them moves to
    (1 - s) v + s A R A⁻¹ v."""
    model = input["data"]["model"]
    A = np.linalg.inv(np.array(model["inverse_base_absolutes"][bone]))
    moved = np.array(model["base_positions"]) @ (A @ R @ np.linalg.inv(A)).T
    last = bone + 3 - (bone - 1) % 4  # the finger's last bone
    s = np.array(model["weights"])[:, bone : last + 1].sum(axis=1, keepdims=True)
    vertices = (1.0 - s) * base_vertices(input) + s * moved[:, :3]
    assert not np.allclose(vertices, base_vertices(input))
    return vertices


X_AXIS, Z_AXIS = (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)


@pytest.mark.parametrize("finger", range(5))
@pytest.mark.parametrize("joint, axis", [(0, X_AXIS), (1, Z_AXIS), (2, X_AXIS), (3, X_AXIS)])
def test_objective_with_one_joint_bent(finger, joint, axis):
    """theta[6 + 4 f + j], the finger f's parameter j, turns its second bone (2 + 4 f) about x (j = 0) or
    z (j = 1), its third about x (j = 2), its fourth about x (j = 3)."""
    theta = np.zeros(26)
    theta[6 + 4 * finger + joint] = 0.5
    input = ht_input(theta, complicated=False, correspondences=range(N_VERTICES))
    bone = 2 + 4 * finger + max(joint - 1, 0)
    check_objective(input, bent(input, bone, rigid(rotation(axis, 0.5), np.zeros(3))))


@pytest.mark.parametrize("complicated", [False, True], ids=["simple", "complicated"])
def test_objective_with_the_thumb_bent_about_two_axes(complicated):
    """theta[6], theta[7] turn the thumb's second bone by Rz(theta[7]) Rx(theta[6])."""
    tx, tz = 0.4, -0.3
    input = ht_input([0.0] * 6 + [tx, tz] + [0.0] * 18, complicated, correspondences=[0, 1, 2, 7, 12])
    R = rigid(rotation(Z_AXIS, tz), np.zeros(3)) @ rigid(rotation(X_AXIS, tx), np.zeros(3))
    check_objective(input, bent(input, 2, R))


def general_theta(seed):
    return fd.rand_list(seed, 26, -0.6, 0.6)


@pytest.mark.parametrize(
    "complicated, mirrored",
    [
        (False, False),
        pytest.param(True, False, marks=pytest.mark.slow),
        pytest.param(True, True, marks=pytest.mark.slow),
    ],
    ids=["simple", "complicated", "mirrored"],
)
def test_jacobian_matches_finite_differences(complicated, mirrored):
    """Each row of the Jacobian against central differences of the objective in theta, and (complicated)
    in the point's own u0, u1, in the reference's layout: 3N rows, the u0, u1 columns first."""
    input = ht_input(general_theta(2), complicated, mirrored=mirrored)
    out = run("jacobian", input)
    assert json.loads(json.dumps(out)) == out
    ncols = 28 if complicated else 26
    assert type(out) is list and len(out) == 3 * N_POINTS
    assert all(type(row) is list and len(row) == ncols and all(type(v) is float for v in row) for row in out)
    J = np.array(out)

    theta, us, *data = ht.prepare(input)

    def residuals(theta, us):
        return ht.objective(theta, us, *data)

    for row, e in enumerate(np.eye(3 * N_POINTS)):
        d_theta = fd.vjp_fd(lambda t: residuals(t, us), theta, e)
        fd.assert_close(J[row, ncols - 26 :], d_theta, rtol=1e-6, atol=1e-7, where=f"row {row}, theta")
        if complicated:
            d_us = fd.vjp_fd(lambda u: residuals(theta, u), us, e)  # nonzero in the row's point only
            expected = np.zeros_like(us)
            expected[row // 3] = J[row, 0:2]
            fd.assert_close(expected, d_us, rtol=1e-6, atol=1e-7, where=f"row {row}, us")


def test_global_rotation_columns_vanish_below_the_threshold():
    """Below an angle of 1e-4 the global rotation is the identity, constant: its columns are 0, as the
    reference's; the translation's are -I."""
    input = ht_input([0.0, 0.0, 0.0] + general_theta(3)[3:], complicated=False)
    J = np.array(run("jacobian", input))
    assert np.all(J[:, 0:3] == 0.0)
    np.testing.assert_array_equal(J[:, 3:6], np.tile(-np.eye(3), (N_POINTS, 1)))
