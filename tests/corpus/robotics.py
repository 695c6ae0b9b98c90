"""Robotics as PythonRobotics-style scripts and course notebooks write it: forward kinematics,
rotation matrices, Kalman/EKF updates, trajectory costs."""

from __future__ import annotations

import math

import numpy as np

from tests.corpus.registry import corpus


@corpus(lambda rng: (rng.uniform(-1.0, 1.0, 3), [1.0, 0.8, 0.5], np.array([1.2, 1.0])))
def planar_arm_reach(q, link_lengths, target):
    """A planar n-link arm: accumulate joint angles, sum the link vectors, squared distance to a target."""
    x, y, theta = 0.0, 0.0, 0.0
    for qi, li in zip(q, link_lengths):
        theta += qi
        x += li * math.cos(theta)
        y += li * math.sin(theta)
    return (x - target[0]) ** 2 + (y - target[1]) ** 2


def rot2(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s], [s, c]])


def homogeneous(theta, length):
    T = np.eye(3)
    T[:2, :2] = rot2(theta)
    T[:2, 2] = rot2(theta) @ np.array([length, 0.0])
    return T


@corpus(lambda rng: (rng.uniform(-0.8, 0.8, 4), np.array([0.5, 0.4, 0.3, 0.2])), argnums=(0, 1))
def arm_homogeneous_chain(q, lengths):
    """Forward kinematics by chaining 3x3 homogeneous transforms; the end effector's distance from (1, 0.5)."""
    T = np.eye(3)
    for i in range(len(q)):
        T = T @ homogeneous(q[i], lengths[i])
    p = T[:2, 2]
    return np.sum((p - np.array([1.0, 0.5])) ** 2)


def skew(k):
    return np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])


def rodrigues(rvec):
    theta = np.linalg.norm(rvec)
    if theta < 1e-12:
        return np.eye(3)
    K = skew(rvec / theta)
    return np.eye(3) + np.sin(theta) * K + (1 - np.cos(theta)) * K @ K


def _poses(rng):
    return rng.normal(0, 0.5, 3), rng.normal(0, 1, 3), rng.normal(0, 0.5, 3), rng.normal(0, 1, 3)


@corpus(_poses, argnums=(0, 1, 2, 3))
def pose_composition_error(r1, t1, r2, t2):
    """Compose two poses (R, t) built by Rodrigues' formula; the error of a point mapped through both."""
    R1, R2 = rodrigues(r1), rodrigues(r2)
    R = R1 @ R2
    t = R1 @ t2 + t1
    p = np.array([0.3, -0.2, 1.0])
    p_world = R @ p + t
    return 0.5 * np.dot(p_world, p_world) + np.trace(R)


def _kalman(rng):
    x = rng.normal(0, 1, 4)
    A = rng.normal(0, 1, (4, 4))
    P = A @ A.T / 4 + np.eye(4)
    H = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    R = np.diag([0.5, 0.3])
    z = rng.normal(0, 1, 2)
    return x, P, z, H, R


@corpus(_kalman, argnums=(0, 1, 2))
def kalman_update_nll(x, P, z, H, R):
    """A Kalman filter's measurement update; the innovation's negative log-likelihood plus the updated mean."""
    y = z - H @ x  # innovation
    S = H @ P @ H.T + R
    K = P @ H.T @ np.linalg.inv(S)
    x_new = x + K @ y
    P_new = (np.eye(len(x)) - K @ H) @ P
    sign, logdet = np.linalg.slogdet(S)
    nll = 0.5 * (y @ np.linalg.solve(S, y) + logdet + len(y) * np.log(2 * np.pi))
    return nll + 0.1 * np.sum(x_new**2) + 0.01 * np.trace(P_new)


def pi_2_pi(angle):
    return (angle + math.pi) % (2 * math.pi) - math.pi


def _ekf(rng):
    state = np.array([0.3, -0.4, 0.2])
    landmarks = np.array([[2.0, 1.0], [-1.0, 3.0], [1.5, -2.0]])
    z = np.array([[2.0, 0.1], [3.3, 1.6], [2.3, -1.4]]) + rng.normal(0, 0.05, (3, 2))
    return state, landmarks, z


@corpus(_ekf)
def ekf_range_bearing_cost(state, landmarks, z):
    """EKF-SLAM's range-bearing observation model with pi_2_pi angle wrapping; the weighted residual."""
    Q = np.diag([0.1, math.radians(5.0)]) ** 2
    Qinv = np.linalg.inv(Q)
    cost = 0.0
    for i in range(len(landmarks)):
        dx = landmarks[i, 0] - state[0]
        dy = landmarks[i, 1] - state[1]
        d = math.sqrt(dx**2 + dy**2)
        angle = pi_2_pi(math.atan2(dy, dx) - state[2])
        residual = np.array([z[i, 0] - d, pi_2_pi(z[i, 1] - angle)])
        cost += residual @ Qinv @ residual
    return cost


def _path(rng):
    n = 8
    s = np.linspace(0, 1, n)
    path = np.stack([4 * s, np.sin(3 * s)], axis=1) + rng.normal(0, 0.05, (n, 2))
    obstacles = np.array([[1.5, 1.4], [2.8, -0.4]])
    return path, obstacles, 0.5


@corpus(_path)
def path_smoothness_cost(path, obstacles, radius):
    """A CHOMP-style trajectory cost: squared second differences plus a hinge penalty near obstacles."""
    acc = path[2:] - 2 * path[1:-1] + path[:-2]
    smooth = np.sum(acc**2)
    obstacle_cost = 0.0
    for ob in obstacles:
        d = np.linalg.norm(path - ob, axis=1)
        obstacle_cost += np.sum(np.maximum(0.0, radius + 0.5 - d) ** 2)
    length = np.sum(np.linalg.norm(np.diff(path, axis=0), axis=1))
    return smooth + 10.0 * obstacle_cost + 0.1 * length


@corpus(lambda rng: (np.column_stack([1.0 + 0.2 * rng.random(10), 0.3 * rng.standard_normal(10)]), 0.1))
def unicycle_rollout(controls, dt):
    """Integrate a unicycle's (v, omega) controls with explicit Euler steps; the final pose's error."""
    x = np.zeros(3)
    goal = np.array([1.0, 0.3, 0.2])
    for v, omega in controls:
        x = x + dt * np.array([v * np.cos(x[2]), v * np.sin(x[2]), omega])
    err = x - goal
    err[2] = np.arctan2(np.sin(err[2]), np.cos(err[2]))
    return err @ np.diag([1.0, 1.0, 0.5]) @ err + 1e-3 * np.sum(controls**2)


def quat_mul(q, r):
    w0, x0, y0, z0 = q
    w1, x1, y1, z1 = r
    return np.array(
        [
            w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1,
            w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1,
            w0 * y1 - x0 * z1 + y0 * w1 + z0 * x1,
            w0 * z1 + x0 * y1 - y0 * x1 + z0 * w1,
        ]
    )


@corpus(lambda rng: (rng.normal(0, 1, 4), np.array([1.0, 0.0, 0.0])))
def quaternion_attitude_cost(q, v):
    """Normalise a quaternion, rotate a vector by q v q*, compare with a desired heading."""
    q = q / np.linalg.norm(q)
    q_conj = q * np.array([1.0, -1.0, -1.0, -1.0])
    rotated = quat_mul(quat_mul(q, np.concatenate([[0.0], v])), q_conj)[1:]
    desired = np.array([0.0, 0.6, 0.8])
    return 1.0 - rotated @ desired


def _camera(rng):
    points = rng.uniform(-1, 1, (6, 3)) + np.array([0.0, 0.0, 5.0])
    rvec = rng.normal(0, 0.1, 3)
    tvec = rng.normal(0, 0.1, 3)
    f = 500.0
    obs = points[:, :2] / points[:, 2:] * f + rng.normal(0, 1.0, (6, 2))
    return rvec, tvec, points, obs, f


@corpus(_camera, argnums=(0, 1, 2), rtol=1e-4)
def reprojection_error(rvec, tvec, points, observations, focal):
    """A bundle-adjustment residual: rotate, translate, pinhole-project, squared pixel error (scaled)."""
    R = rodrigues(rvec)
    cam = points @ R.T + tvec
    proj = focal * cam[:, :2] / cam[:, 2, np.newaxis]
    residuals = (proj - observations).ravel()
    return 0.5 * residuals.dot(residuals) / len(residuals)


@corpus(lambda rng: (np.array([rng.uniform(-0.5, 0.5), rng.uniform(0.5, 1.0)]), 1.0, 0.7), argnums=0)
def two_link_manipulability(q, l1, l2):
    """The 2-link arm's Jacobian written out by hand and the log of its manipulability measure."""
    s1, c1 = math.sin(q[0]), math.cos(q[0])
    s12, c12 = math.sin(q[0] + q[1]), math.cos(q[0] + q[1])
    J = np.array([[-l1 * s1 - l2 * s12, -l2 * s12], [l1 * c1 + l2 * c12, l2 * c12]])
    w = math.sqrt(np.linalg.det(J @ J.T))
    return -math.log(w + 1e-3) + 0.5 * (q @ q)


def _track(rng, T=8):
    dt = 0.1
    pos = np.cumsum(np.full(T, 0.5 * dt)) + 0.05 * rng.standard_normal(T)
    return np.array([np.log(0.1), np.log(0.05)]), pos, dt


@corpus(_track)
def kalman_filter_loglik(log_noise, zs, dt):
    """A constant-velocity Kalman filter run over a sequence: the innovations' log-likelihood in the noises."""
    q, r = np.exp(log_noise)
    F = np.array([[1.0, dt], [0.0, 1.0]])
    H = np.array([[1.0, 0.0]])
    Q = q * np.array([[dt**3 / 3, dt**2 / 2], [dt**2 / 2, dt]])
    x = np.array([zs[0], 0.0])
    P = np.eye(2)
    loglik = 0.0
    for z in zs[1:]:
        x = F @ x
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + r
        K = P @ H.T / S
        innov = z - (H @ x)[0]
        loglik += -0.5 * (np.log(2 * np.pi * S[0, 0]) + innov**2 / S[0, 0])
        x = x + K[:, 0] * innov
        P = (np.eye(2) - K @ H) @ P
    return loglik
