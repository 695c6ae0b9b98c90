"""The libraries compared, each turned into `make(workload, args) -> gradient function`.

Every peer differentiates the workload's own source: its module is executed again
with `np` and `math` bound to the peer's modules (autograd.numpy, jax.numpy, or a
thin torch shim that renames NumPy's `axis=` to torch's `dim=`). Arguments that are
not differentiated are closed over, as a user of each library would. A peer that
is not installed is absent from `available()`; one that cannot differentiate a
workload raises, and the run reports "fails".
"""

from __future__ import annotations

import importlib
import inspect
import math
import sys
import time
import types
from collections.abc import Callable
from typing import Any

import numpy as np

import chadpy as chad


def _argnums(workload: dict) -> tuple[int, ...]:
    a = workload["argnums"]
    return (a,) if isinstance(a, int) else tuple(a)


def _partial(fn: Callable, args: tuple, argnums: tuple[int, ...]) -> Callable:
    """fn of the differentiated arguments only, the others fixed to args."""

    def of_differentiated(*xs):
        full = list(args)
        for k, x in zip(argnums, xs):
            full[k] = x
        return fn(*full)

    return of_differentiated


def rebound(fn: Callable, np_module: Any, math_module: Any) -> Callable:
    """fn from its module executed again with `np` and `math` bound to a peer's modules."""
    module = sys.modules[fn.__module__]
    namespace: dict = {"__name__": f"{module.__name__}_peer"}
    exec(compile(inspect.getsource(module), inspect.getsourcefile(module), "exec"), namespace)
    namespace.update(np=np_module, math=math_module)
    return namespace[fn.__name__]


_MATH = ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "lgamma")  # the math functions the workloads call


def _math_of(array_type: type, functions: dict[str, Callable]) -> types.SimpleNamespace:
    """`math` for a peer: its own function on its arrays and traced values, math's on plain numbers."""

    def lifted(name: str) -> Callable:
        theirs, ours = functions[name], getattr(math, name)
        return lambda v: theirs(v) if isinstance(v, array_type) else ours(v)

    return types.SimpleNamespace(**{k: lifted(k) for k in _MATH}, pi=math.pi)


def _single(workload: dict, grads: Any) -> Any:
    return grads[0] if isinstance(workload["argnums"], int) else tuple(grads)


# --- chadpy and the hand-written gradient --------------------------------------------


def make_chadpy(workload: dict, args: tuple) -> Callable:
    g = chad.grad(workload["fn"], argnums=workload["argnums"])
    return lambda: g(*args)


def make_hand(workload: dict, args: tuple) -> Callable:
    return lambda: workload["grad"](*args)


# --- tangent-ad ----------------------------------------------------------------------


def make_tangent(workload: dict, args: tuple) -> Callable:
    import tangent

    g = tangent.grad(workload["fn"], wrt=_argnums(workload), verbose=0)
    return lambda: g(*args)


# --- autograd ------------------------------------------------------------------------


def make_autograd(workload: dict, args: tuple) -> Callable:
    import autograd
    import autograd.numpy as anp
    from autograd.scipy.special import gammaln

    amath = types.SimpleNamespace(**{k: getattr(anp, k) for k in _MATH if k != "lgamma"}, lgamma=gammaln, pi=math.pi)
    g = autograd.grad(rebound(workload["fn"], anp, amath), argnum=workload["argnums"])
    return lambda: g(*args)


# --- JAX, eager and jit --------------------------------------------------------------


def _jax():
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax


def _jax_fn(workload: dict):
    jax = _jax()
    import jax.numpy as jnp
    from jax.scipy.special import gammaln

    jmath = _math_of(jax.Array, {**{k: getattr(jnp, k) for k in _MATH if k != "lgamma"}, "lgamma": gammaln})
    return jax, rebound(workload["fn"], jnp, jmath)


def make_jax(workload: dict, args: tuple) -> Callable:
    jax, fn = _jax_fn(workload)
    argnums = _argnums(workload)
    g = jax.grad(_partial(fn, args, argnums), argnums=tuple(range(len(argnums))))
    xs = [args[k] for k in argnums]
    return lambda: _single(workload, jax.block_until_ready(g(*xs)))  # JAX dispatches asynchronously


def make_jax_jit(workload: dict, args: tuple) -> Callable:
    """Compiled once here (the compile time is recorded as `compile_seconds`)."""
    jax, fn = _jax_fn(workload)
    argnums = _argnums(workload)
    g = jax.jit(jax.grad(_partial(fn, args, argnums), argnums=tuple(range(len(argnums)))))
    xs = [args[k] for k in argnums]
    start = time.perf_counter()
    jax.block_until_ready(g(*xs))
    call = lambda: _single(workload, jax.block_until_ready(g(*xs)))  # noqa: E731
    call.compile_seconds = time.perf_counter() - start
    return call


# --- PyTorch -------------------------------------------------------------------------


def _torch_namespaces():
    torch = importlib.import_module("torch")

    def reduction(name):
        f = getattr(torch, name)

        def reduce(x, axis=None, keepdims=False):
            return f(x) if axis is None else f(x, dim=axis, keepdim=keepdims)

        return reduce

    def zeros(shape, dtype=None):
        return torch.zeros(shape, dtype=torch.float64)

    class TorchNumpy(types.SimpleNamespace):
        def __getattr__(self, name):
            return getattr(torch, name)

    tnp = TorchNumpy(
        sum=reduction("sum"),
        mean=reduction("mean"),
        max=reduction("amax"),
        min=reduction("amin"),
        zeros=zeros,
        array=lambda xs: torch.stack(list(xs)) if isinstance(xs, list | tuple) else torch.as_tensor(xs),
        dot=lambda a, b: a @ b,
        float64=torch.float64,
    )
    tmath = _math_of(torch.Tensor, {k: getattr(torch, k) for k in _MATH})
    return torch, tnp, tmath


def _to_torch(torch, x: Any, grad: bool) -> Any:
    if isinstance(x, np.ndarray) or (isinstance(x, list) and all(isinstance(v, float) for v in x)):
        return torch.tensor(np.asarray(x, dtype=np.float64), requires_grad=grad)
    if isinstance(x, float) and grad:
        return torch.tensor(x, dtype=torch.float64, requires_grad=True)
    return x


def make_torch(workload: dict, args: tuple) -> Callable:
    torch, tnp, tmath = _torch_namespaces()
    torch.set_num_threads(1)
    fn = rebound(workload["fn"], tnp, tmath)
    argnums = _argnums(workload)
    data = [_to_torch(torch, a, False) for a in args]

    def gradient():
        full = list(data)
        xs = [_to_torch(torch, args[k], True) for k in argnums]
        for k, x in zip(argnums, xs):
            full[k] = x
        grads = torch.autograd.grad(fn(*full), xs)
        return _single(workload, [g.numpy() for g in grads])

    return gradient


PEERS: dict[str, Callable[[dict, tuple], Callable]] = {
    "hand-written": make_hand,
    "chadpy": make_chadpy,
    "tangent-ad": make_tangent,
    "autograd": make_autograd,
    "JAX": make_jax,
    "JAX jit": make_jax_jit,
    "torch": make_torch,
}
_MODULES = {"tangent-ad": "tangent", "autograd": "autograd", "JAX": "jax", "JAX jit": "jax", "torch": "torch"}


def available() -> list[str]:
    """The peers whose library imports here (hand-written and chadpy always)."""
    names = []
    for name in PEERS:
        try:
            if name in _MODULES:
                importlib.import_module(_MODULES[name])
        except Exception:
            continue
        names.append(name)
    return names
