"""The corpus registry: every corpus function with how to call it and what is differentiated.

A corpus module decorates each function (or method) with `@corpus(build, argnums=...)`:

- `build(rng)` makes the arguments from a fixed-seed `np.random.Generator` (the seed is the
  CRC-32 of the case's name, so a case's inputs never change when others are added). It returns
  a tuple of arguments for the decorated function itself, or a `Call` naming another callable
  (a bound method, an object with `__call__`, a closure a factory made) and its arguments.
- `argnums` is `chad.grad`'s: which positional arguments are differentiated.
- `state(call)`, if given, reads the side effects the call has outside its arguments (a counter,
  an attribute of the instance); the test checks the derivative's forward pass has the same ones.

`EXPECTED_REFUSED` lists the cases chadpy refuses today with a `ChadError`, each with the reason.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Call:
    """A callable and the positional arguments to call it with."""

    fn: Callable
    args: tuple


@dataclass(frozen=True)
class Case:
    name: str
    module: str
    fn: Callable
    build: Callable[[np.random.Generator], Any]
    argnums: int | tuple[int, ...]
    state: Callable[[Call], Any] | None
    rtol: float
    atol: float

    @property
    def seed(self) -> int:
        return zlib.crc32(self.name.encode())

    def call(self) -> Call:
        """A fresh call: new arguments (and new objects) from the case's seed."""
        built = self.build(np.random.default_rng(self.seed))
        return built if isinstance(built, Call) else Call(self.fn, tuple(built))


CASES: dict[str, Case] = {}


def corpus(
    build: Callable[[np.random.Generator], Any],
    argnums: int | tuple[int, ...] = 0,
    state: Callable[[Call], Any] | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
):
    """Register the decorated function (returned unchanged) as a corpus case."""

    def register(fn):
        name = fn.__qualname__
        assert name not in CASES, f"corpus case {name} registered twice"
        module = fn.__module__.rsplit(".", 1)[-1]
        CASES[name] = Case(name, module, fn, build, argnums, state, rtol, atol)
        return fn

    return register


def cell(fn: Callable, name: str) -> Any:
    """The value of the closure variable `name` of `fn` (a nonlocal counter's current count)."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    return cells[name].cell_contents


# Cases chadpy refuses with a ChadError today, each with the reason (the first line of its message).
# A case that starts to pass must be moved out: the test fails both ways.
EXPECTED_REFUSED: dict[str, str] = {
    # state kept outside the function: module-level or captured containers, attributes of self
    "batchnorm_train_loss": "`bn_param['running_mean'] = ...`: running statistics written into the caller's dict",
    # classes and functions as values
    "MLP.mse": "a list of activations holding two functions' code, [np.tanh, lambda z: z]",
    # library calls without a derivative rule
    "eight_schools_scipy": "`scipy.stats.halfcauchy.logpdf` has no rule",
    "apply_along_axis_norms": "`np.apply_along_axis(np.linalg.norm, 1, X)`",
}
