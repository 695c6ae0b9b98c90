"""Evaluation counters as optimisation scripts write them: a global counter, a nonlocal counter in
a closure, an object counting its calls, a log of the losses seen."""

from __future__ import annotations

import functools

import numpy as np

from tests.corpus.registry import Call, cell, corpus

N_EVALS = 0
LOSS_HISTORY: list = []
STATS = {"nfev": 0, "last": None}


def _reset_global(rng):
    global N_EVALS
    N_EVALS = 0
    return (rng.uniform(-1, 1, 4),)


@corpus(_reset_global, state=lambda call: N_EVALS)
def rosenbrock_counted(x):
    """A benchmark objective counting its evaluations in a module-level `global` counter."""
    global N_EVALS
    N_EVALS += 1
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _reset_history(rng):
    LOSS_HISTORY.clear()
    X = rng.standard_normal((8, 3))
    y = X @ np.array([1.0, 2.0, -1.0])
    return rng.standard_normal(3), X, y


@corpus(_reset_history, state=lambda call: list(LOSS_HISTORY))
def least_squares_logged(w, X, y):
    """A least-squares objective appending each loss to a module-level history list, for plotting."""
    r = X @ w - y
    loss = 0.5 * np.mean(r**2)
    LOSS_HISTORY.append(loss)
    return loss


def _reset_stats(rng):
    STATS["nfev"] = 0
    STATS["last"] = None
    return (rng.uniform(0.5, 1.5, 3),)


@corpus(_reset_stats, state=lambda call: dict(STATS))
def objective_with_stats_dict(x):
    """An objective updating a module-level stats dict: the call count and a formatted message."""
    STATS["nfev"] += 1
    value = np.sum(x * np.log(x)) + np.sum((x - 1.0) ** 2)
    STATS["last"] = "nfev={} f={:.6f}".format(STATS["nfev"], value)
    return value


@corpus(
    lambda rng: Call(
        make_objective(np.eye(3) * 2 + 0.1 * rng.standard_normal((3, 3)), rng.standard_normal(3)),
        (rng.standard_normal(3),),
    ),
    state=lambda call: cell(call.fn, "ncalls"),
)
def make_objective(A, b):
    """A factory's objective counting its calls in a `nonlocal` counter of the enclosing function."""
    ncalls = 0

    def objective(x):
        nonlocal ncalls
        ncalls += 1
        r = A @ x - b
        return 0.5 * r @ r

    return objective


class CountedObjective:
    """An objective object counting its calls, as one passes to scipy.optimize.minimize."""

    def __init__(self, target):
        self.target = target
        self.n_calls = 0

    @corpus(
        lambda rng: Call(CountedObjective(rng.standard_normal(4)), (rng.standard_normal(4),)),
        state=lambda call: call.fn.n_calls,
    )
    def __call__(self, x):
        """`self.n_calls += 1` in an objective object's __call__."""
        self.n_calls += 1
        d = x - self.target
        return np.log1p(d @ d)


class Problem:
    """An optimisation problem class with a method objective that counts and keeps its best value."""

    def __init__(self, center):
        self.center = center
        self.n_calls = 0
        self.best = np.inf
        self.history = []

    @corpus(
        lambda rng: Call(Problem(rng.standard_normal(3)).objective, (rng.standard_normal(3),)),
        state=lambda call: (call.fn.__self__.n_calls, call.fn.__self__.best, list(call.fn.__self__.history)),
    )
    def objective(self, x):
        """`self.n_calls += 1`, the best value so far and a history list kept on the instance."""
        self.n_calls += 1
        f = np.sum(np.cosh(x - self.center))
        if f < self.best:
            self.best = float(f)
        self.history.append(float(f))
        return f


def counted(fn):
    """A decorator counting calls in an attribute of the wrapper, as profiling snippets do."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        wrapper.calls += 1
        return fn(*args, **kwargs)

    wrapper.calls = 0
    return wrapper


def _reset_wrapper(rng):
    counted_sphere.calls = 0
    return rng.standard_normal(3), 0.5


@corpus(_reset_wrapper, state=lambda call: call.fn.calls)
@counted
def counted_sphere(x, shift):
    """A @counted-decorated objective: the function differentiated is the decorator's *args wrapper."""
    return np.sum((x - shift) ** 2) + np.sum(np.sin(x))


class Evaluations:
    """A class attribute counting every evaluation of every instance."""

    total = 0

    @staticmethod
    @corpus(lambda rng: _reset_total(rng), state=lambda call: Evaluations.total)
    def entropy(p):
        """`Evaluations.total += 1` on a class attribute inside a static method objective."""
        Evaluations.total += 1
        p = p / p.sum()
        return -np.sum(p * np.log(p))


def _reset_total(rng):
    Evaluations.total = 0
    return (rng.uniform(0.2, 1.0, 5),)


@corpus(
    lambda rng: Call(make_counted_loss(rng.standard_normal((6, 2)), rng.standard_normal(6)), (np.zeros(2) + 0.3,)),
    state=lambda call: dict(cell(call.fn, "state")),
)
def make_counted_loss(X, y):
    """A closure counting its calls in a captured dict, `state["calls"] += 1`."""
    state = {"calls": 0, "last_grad_norm": None}

    def loss(w):
        state["calls"] += 1
        pred = X @ w
        return np.mean((pred - y) ** 2) + 0.01 * np.sum(np.abs(w))

    return loss
