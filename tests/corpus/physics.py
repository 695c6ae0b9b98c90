"""Physics as teaching notebooks and small simulation scripts write it: pair potentials with loops
and vectorised, spring chains, explicit integrators run for N steps, finite-difference PDEs."""

from __future__ import annotations

import math

import numpy as np

from tests.corpus.registry import corpus


def _cluster(rng, n=5):
    # points on a jittered lattice: no two closer than about 0.9, so the potential is smooth
    grid = np.array([[i, j, k] for i in range(2) for j in range(2) for k in range(2)], dtype=float)[:n]
    return 1.1 * grid + rng.normal(0, 0.05, (n, 3))


@corpus(lambda rng: (_cluster(rng), 1.0, 1.0))
def lennard_jones_loops(positions, epsilon, sigma):
    """The textbook Lennard-Jones energy: a double loop over pairs i < j."""
    n = len(positions)
    energy = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            r = np.linalg.norm(positions[i] - positions[j])
            sr6 = (sigma / r) ** 6
            energy += 4 * epsilon * (sr6**2 - sr6)
    return energy


@corpus(lambda rng: (_cluster(rng, 6),))
def lennard_jones_vectorized(pos):
    """Lennard-Jones over all pairs with broadcasting and np.triu_indices, no loops."""
    diff = pos[:, np.newaxis, :] - pos[np.newaxis, :, :]
    r2 = np.sum(diff**2, axis=-1)
    i, j = np.triu_indices(len(pos), k=1)
    inv6 = 1.0 / r2[i, j] ** 3
    return np.sum(4.0 * (inv6**2 - inv6))


@corpus(lambda rng: (_cluster(rng, 4), np.array([1.0, 2.0, 0.5, 1.5])))
def gravity_potential_masked(x, masses):
    """Newtonian potential energy with a pairwise distance matrix and the diagonal masked out."""
    G = 1.0
    r = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1) + np.eye(len(x)))
    mm = np.outer(masses, masses)
    mask = ~np.eye(len(x), dtype=bool)
    return -0.5 * G * np.sum(mm[mask] / r[mask])


@corpus(lambda rng: (np.cumsum(np.ones((6, 2)) * [1.0, 0.1], axis=0) + rng.normal(0, 0.1, (6, 2)), 10.0, 1.0))
def spring_chain_energy(x, k, rest_length):
    """A chain of Hookean springs between consecutive beads in 2-D, plus gravity on unit masses."""
    energy = 0.0
    for i in range(len(x) - 1):
        stretch = np.linalg.norm(x[i + 1] - x[i]) - rest_length
        energy += 0.5 * k * stretch**2
    energy += 9.81 * np.sum(x[:, 1])
    return energy


@corpus(lambda rng: (1.0 + 0.1 * rng.random(), 0.0, 2.0, 0.1), argnums=(0, 1, 2))
def euler_oscillator_energy(x0, v0, k, c):
    """A damped harmonic oscillator integrated with explicit Euler for N steps; the final energy."""
    dt = 0.01
    n_steps = 200
    x, v = x0, v0
    for _ in range(n_steps):
        a = -k * x - c * v
        x, v = x + dt * v, v + dt * a
    return 0.5 * v**2 + 0.5 * k * x**2


def accelerations(pos, masses, softening=0.1):
    diff = pos[None, :, :] - pos[:, None, :]
    dist3 = (np.sum(diff**2, axis=2) + softening**2) ** 1.5
    return np.sum(masses[None, :, None] * diff / dist3[:, :, None], axis=1)


def total_energy(pos, vel, masses, softening=0.1):
    kinetic = 0.5 * np.sum(masses[:, None] * vel**2)
    diff = pos[None, :, :] - pos[:, None, :]
    inv_r = 1.0 / np.sqrt(np.sum(diff**2, axis=2) + softening**2)
    potential = -0.5 * np.sum(np.triu(masses[:, None] * masses[None, :] * inv_r, 1)) * 2
    return kinetic + potential


def _bodies(rng):
    pos = np.array([[1.0, 0.0, 0.0], [-0.5, 0.8, 0.0], [-0.5, -0.8, 0.1]]) + rng.normal(0, 0.02, (3, 3))
    vel = np.array([[0.0, 0.5, 0.0], [-0.4, -0.25, 0.0], [0.4, -0.25, 0.0]])
    return pos, vel, np.array([1.0, 0.8, 1.2])


@corpus(_bodies, argnums=(0, 1, 2), rtol=1e-4)
def leapfrog_nbody_energy(pos, vel, masses):
    """Kick-drift-kick leapfrog for an N-body system, as in the classic nbody.py tutorial; final energy."""
    dt = 0.01
    acc = accelerations(pos, masses)
    for _ in range(20):
        vel = vel + acc * dt / 2.0
        pos = pos + vel * dt
        acc = accelerations(pos, masses)
        vel = vel + acc * dt / 2.0
    return total_energy(pos, vel, masses)


@corpus(lambda rng: (np.sin(np.linspace(0, np.pi, 12)) + 0.05 * rng.random(12), 0.2))
def heat_equation_slices(u0, alpha):
    """The 1-D heat equation, explicit FTCS steps on slices of a copy, fixed ends."""
    u = u0.copy()
    for _ in range(25):
        un = u.copy()
        u[1:-1] = un[1:-1] + alpha * (un[2:] - 2 * un[1:-1] + un[:-2])
        u[0] = 0.0
        u[-1] = 0.0
    return np.sum(u**2)


@corpus(lambda rng: (np.exp(-((np.linspace(-1, 1, 9) - 0.1 * rng.random()) ** 2) * 4), 0.25))
def heat_equation_loops(u, r):
    """FTCS heat steps written with an inner loop over grid points into a new array each step."""
    nx = len(u)
    for _ in range(10):
        u_new = np.zeros(nx)
        for i in range(1, nx - 1):
            u_new[i] = u[i] + r * (u[i + 1] - 2 * u[i] + u[i - 1])
        u_new[0] = u_new[1]
        u_new[-1] = u_new[-2]
        u = u_new
    return u[nx // 2] + 0.1 * np.sum(u)


@corpus(lambda rng: (20.0 + rng.random(), math.radians(40.0), 0.05), argnums=(0, 1, 2))
def projectile_with_drag(speed, angle, drag):
    """A projectile with quadratic drag integrated with the math module until it lands; the range."""
    g = 9.81
    dt = 0.01
    x, y = 0.0, 0.0
    vx, vy = speed * math.cos(angle), speed * math.sin(angle)
    steps = 0
    while steps < 2000:
        v = math.hypot(vx, vy)
        vx, vy = vx - drag * v * vx * dt, vy - (g + drag * v * vy) * dt
        x, y = x + vx * dt, y + vy * dt
        steps += 1
        if y < 0.0:
            break
    return x


@corpus(lambda rng: (rng.normal(0, 0.3, (3, 3)) + np.eye(3) * 2.0, np.array([1.0, -1.0, 2.0])))
def coulomb_einsum(pos, charges):
    """Coulomb energy with np.einsum for the pairwise squared distances and the charge products."""
    diff = pos[:, None, :] - pos[None, :, :]
    d2 = np.einsum("ijk,ijk->ij", diff, diff) + np.eye(len(pos))
    qq = np.einsum("i,j->ij", charges, charges)
    return 0.5 * np.sum((qq / np.sqrt(d2)) * (1 - np.eye(len(pos))))


@corpus(lambda rng: (np.sin(np.linspace(0, 2 * np.pi, 16, endpoint=False)) + 0.1 * rng.random(16), 0.5))
def wave_equation_leapfrog(u0, c):
    """The 1-D wave equation on a periodic grid with np.roll, a three-level leapfrog scheme."""
    dx = 2 * np.pi / len(u0)
    dt = 0.5 * dx
    lam2 = (c * dt / dx) ** 2
    u_prev = u0.copy()
    u = u0 + 0.5 * lam2 * (np.roll(u0, 1) - 2 * u0 + np.roll(u0, -1))
    for _ in range(15):
        u_next = 2 * u - u_prev + lam2 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
        u_prev, u = u, u_next
    return np.sum(u**2) * dx


@corpus(lambda rng: (np.array([1.0, 0.0]) + 0.05 * rng.random(2), np.array([0.0, 1.0])), argnums=(0, 1))
def velocity_verlet_inplace(x0, v0):
    """Velocity Verlet for a particle in a central 1/r potential, with in-place `+=` on copies."""
    x = x0.copy()
    v = v0.copy()
    dt = 0.05
    a = -x / np.linalg.norm(x) ** 3
    for _ in range(30):
        v += 0.5 * dt * a
        x += dt * v
        a = -x / np.linalg.norm(x) ** 3
        v += 0.5 * dt * a
    return 0.5 * v @ v - 1.0 / np.linalg.norm(x)


@corpus(lambda rng: (np.array([0.2, 0.1, -0.1]) + 0.05 * rng.random(3), 1.0), argnums=(0, 1))
def energy_history_drift(q0, stiffness):
    """A spring chain's symplectic Euler run recording the energy each step in a list; the mean drift."""
    q = q0
    p = np.zeros_like(q0)
    dt = 0.05
    energies = []
    for _ in range(40):
        force = -stiffness * (2 * q - np.roll(q, 1) - np.roll(q, -1))
        p = p + dt * force
        q = q + dt * p
        e = 0.5 * np.sum(p**2) + 0.5 * stiffness * np.sum((q - np.roll(q, 1)) ** 2)
        energies.append(e)
    energies = np.array(energies)
    return np.mean((energies - energies[0]) ** 2) + energies[-1]


def _grains(rng):
    # five grains on a line; the first two pairs overlap by about 0.1, the others are apart by about 0.3
    x = np.array([0.0, 0.9, 1.8, 3.1, 4.4]) + 0.01 * rng.random(5)
    pos = np.column_stack([x, 0.02 * rng.standard_normal(5)])
    return pos, np.full(5, 0.5)


@corpus(_grains)
def hertzian_contact_energy(pos, radii):
    """A discrete-element (DEM) Hertzian contact energy, k overlap^(5/2) where grains overlap, via np.where."""
    k = 1000.0
    diff = pos[:, None, :] - pos[None, :, :]
    dist = np.sqrt(np.sum(diff**2, axis=-1) + np.eye(len(pos)))
    overlap = radii[:, None] + radii[None, :] - dist
    iu = np.triu_indices(len(pos), 1)
    with np.errstate(invalid="ignore"):
        e = np.where(overlap[iu] > 0, k * overlap[iu] ** 2.5, 0.0)
    return 0.4 * np.sum(e)
