"""GradBench's `ht` eval (hand tracking, from ADBench): the differences between measured points and a
skinned hand model posed by 26 parameters theta, and their dense Jacobian, from chadpy.

The model's 22 bones are the wrist (0), four per finger (1-4 the thumb's, 5-8 the index's, ... 17-20
the pinky's) and the forearm (21), each posed by Euler angles relative to its parent. theta is the
global rotation (an angle-axis vector), the global translation, then per finger four angles, as the
reference reads them: two (about x and z) for the finger's second bone, one (about x) for each of
its third and fourth; the other bones stay in their rest pose. Each vertex moves by the weighted
sum of its bones' transforms (linear blend skinning), then the whole hand is rotated and
translated. The residuals are, per measured point, the point minus its model point (3 numbers):

- "simple" input (`us` empty): the model point is the vertex `correspondences[i]`;
- "complicated" input: the model point lies on the triangle `correspondences[i]`, at barycentric
  coordinates (u0, u1, 1 - u0 - u1) given by the point's row of `us`, which are parameters too.

Derivatives: the Jacobian is 3N x 26 (simple) or 3N x 28 (complicated: the columns of the point's
own u0 and u1 first, then theta's), so forward mode: `chad.jacfwd` in theta is 26 jvps, each one
pass over the model. Each point's residuals depend on its own row of `us` only, so one jvp along the
tangent with 1 in column 0 of every row of `us` gives every row's u0 column, and one more the u1
column. Reverse mode would need a pullback per residual (3N). Measured (one thread) on ADBench's big
model (10,000 vertices) with 100 points: objective 0.7 ms, Jacobian 43 ms (simple) to 56 ms
(complicated, 1600 points).
"""

from __future__ import annotations

import functools

import numpy as np
from protocol import Function

import chadpy as chad

N_FINGERS = 5


def pose_angles(theta, n_bones):
    """Each bone's Euler angles (x, z, y), (n_bones, 3), read from theta: each finger's second bone turns
    about x and z, its third and fourth about x; the other bones keep their rest pose."""
    angles = np.zeros((n_bones, 3))
    for finger in range(N_FINGERS):
        bone = 2 + 4 * finger  # the finger's second bone (bone 0 is the wrist, 1 + 4 * finger its first)
        k = 6 + 4 * finger  # its first parameter; 0-5 are the global rotation and translation
        angles[bone, 0] = theta[k]
        angles[bone, 1] = theta[k + 1]
        angles[bone + 1, 0] = theta[k + 2]
        angles[bone + 2, 0] = theta[k + 3]
    return angles


def euler_angles_to_rotation_matrices(angles):
    """The rotation Rz @ Ry @ Rx of each row of angles, read as (x, z, y) angles: (n, 3, 3)."""
    tx, tz, ty = angles[:, 0], angles[:, 1], angles[:, 2]
    zero, one = np.zeros_like(tx), np.ones_like(tx)
    Rx = np.stack([one, zero, zero, zero, np.cos(tx), -np.sin(tx), zero, np.sin(tx), np.cos(tx)], axis=1)
    Ry = np.stack([np.cos(ty), zero, np.sin(ty), zero, one, zero, -np.sin(ty), zero, np.cos(ty)], axis=1)
    Rz = np.stack([np.cos(tz), -np.sin(tz), zero, np.sin(tz), np.cos(tz), zero, zero, zero, one], axis=1)
    n = len(angles)
    return Rz.reshape(n, 3, 3) @ Ry.reshape(n, 3, 3) @ Rx.reshape(n, 3, 3)


def angle_axis_to_rotation_matrix(angle_axis):
    """The rotation by |angle_axis| about its direction (Rodrigues); the identity below an angle of 1e-4,
    as the reference has it."""
    angle = np.linalg.norm(angle_axis)
    if angle < 0.0001:
        return np.eye(3)
    axis = angle_axis / angle
    x, y, z = axis[0], axis[1], axis[2]
    cross = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.cos(angle) * np.eye(3) + np.sin(angle) * cross + (1.0 - np.cos(angle)) * np.outer(axis, axis)


def skinned_vertex_positions(theta, model):
    """Every vertex of the hand posed by theta, (n_vertices, 3): bones turned by their angles and chained
    from parent to child, vertices moved by their bones' weighted transforms, the hand mirrored if the
    model says so, then turned and moved by the global rotation and translation. A vertex moves by the
    weighted sum of its bones' transforms (linear blend skinning)."""
    parents, base_relatives, inverse_base_absolutes, base_positions, weights, is_mirrored = model
    n_bones = len(parents)
    rotations = euler_angles_to_rotation_matrices(pose_angles(theta, n_bones))
    posed = np.zeros((n_bones, 4, 4))
    posed[:, :3, :3] = rotations
    posed[:, 3, 3] = 1.0
    relatives = base_relatives @ posed
    absolutes = []
    for bone in range(n_bones):
        if parents[bone] == -1:
            absolutes.append(relatives[bone])
        else:
            absolutes.append(absolutes[parents[bone]] @ relatives[bone])
    transforms = np.stack(absolutes) @ inverse_base_absolutes
    blended = (weights @ transforms[:, :3, :].reshape(n_bones, 12)).reshape(-1, 3, 4)  # per vertex
    positions = np.einsum("vij,vj->vi", blended, base_positions)
    if is_mirrored:
        positions = positions * np.array([-1.0, 1.0, 1.0])
    rotation = angle_axis_to_rotation_matrix(theta[0:3])
    return positions @ rotation.T + theta[3:6]


def simple_residuals(theta, model, correspondences, points):
    """Each point minus its vertex of the posed hand, (N, 3)."""
    vertices = skinned_vertex_positions(theta, model)
    return points - vertices[correspondences]


def complicated_residuals(theta, us, model, triangle_corners, points):
    """Each point minus the point of its triangle of the posed hand at the barycentric coordinates
    (u0, u1, 1 - u0 - u1) of its row of us, (N, 3)."""
    vertices = skinned_vertex_positions(theta, model)
    u0, u1 = us[:, 0:1], us[:, 1:2]
    corners = vertices[triangle_corners]  # (N, 3 corners, 3)
    on_triangle = u0 * corners[:, 0] + u1 * corners[:, 1] + (1.0 - u0 - u1) * corners[:, 2]
    return points - on_triangle


simple_jacobian_theta = chad.jacfwd(simple_residuals, argnums=0)
complicated_jacobian_theta = chad.jacfwd(complicated_residuals, argnums=0)


def objective(theta, us, model, correspondences, triangles, points):
    """The residuals, flat (3N: x, y, z of each point in turn), of the simple input (us empty) or the
    complicated one."""
    if len(us) == 0:
        return simple_residuals(theta, model, correspondences, points).reshape(-1)
    return complicated_residuals(theta, us, model, triangles[correspondences], points).reshape(-1)


def jacobian(theta, us, model, correspondences, triangles, points):
    """The Jacobian of the flat residuals, 3N x 26 in theta (simple input) or 3N x 28 (complicated: the
    derivatives in the point's own u0 and u1, then in theta)."""
    n = 3 * len(points)
    if len(us) == 0:
        return simple_jacobian_theta(theta, model, correspondences, points).reshape(n, -1)
    corners = triangles[correspondences]
    d_theta = complicated_jacobian_theta(theta, us, model, corners, points).reshape(n, -1)
    residuals = functools.partial(complicated_residuals, model=model, triangle_corners=corners, points=points)
    d_us = []
    for column in range(2):
        along = np.zeros_like(us)
        along[:, column] = 1.0
        d_us.append(chad.jvp(residuals, (theta, us), (np.zeros_like(theta), along))[1].reshape(n))
    return np.column_stack(d_us + [d_theta])


def prepare(input):
    """theta, us (N x 2, or 0 x 2 for the simple input), the model (parents, base relative and inverse
    base absolute transforms, homogeneous base positions, weights, whether mirrored), the
    correspondences, the model's triangles and the points: the arguments of `objective` and `jacobian`."""
    data, model = input["data"], input["data"]["model"]
    hand = (
        np.asarray(model["parents"], dtype=np.int64),
        np.asarray(model["base_relatives"], dtype=np.float64),
        np.asarray(model["inverse_base_absolutes"], dtype=np.float64),
        np.asarray(model["base_positions"], dtype=np.float64),
        np.asarray(model["weights"], dtype=np.float64),
        bool(model["is_mirrored"]),
    )
    return (
        np.asarray(input["theta"], dtype=np.float64),
        np.asarray(input["us"], dtype=np.float64).reshape(-1, 2),
        hand,
        np.asarray(data["correspondences"], dtype=np.int64),
        np.asarray(model["triangles"], dtype=np.int64).reshape(-1, 3),
        np.asarray(data["points"], dtype=np.float64).reshape(-1, 3),
    )


FUNCTIONS = {
    "objective": Function(objective, prepare=prepare, encode=lambda output: output.tolist()),
    "jacobian": Function(jacobian, prepare=prepare, encode=lambda output: output.tolist()),
}
