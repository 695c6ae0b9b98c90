"""Central finite differences, and a checker comparing chadpy's gradients against them.

`central_diff` perturbs one argument (a float, or every float inside a nested tuple)
and returns a result with the structure of that argument: a float for a float, a
tuple for a tuple, and None for anything discrete (int, bool, str, None).
"""

from __future__ import annotations

import math

from hypothesis import Phase, settings

import chadpy as chad

# Hypothesis' explain phase re-runs a failing test hundreds of times under tracing
# (tens of seconds per failing case here); the falsifying example is enough.
no_explain = settings(phases=[p for p in Phase if p is not Phase.explain])


def _is_discrete(x: object) -> bool:
    return x is None or isinstance(x, (bool, int, str, bytes))


def _replace(value: object, path: tuple[int, ...], new: float) -> object:
    """`value` with the component at `path` (indices into nested tuples) replaced by `new`."""
    if not path:
        return new
    k = path[0]
    items = list(value)
    items[k] = _replace(items[k], path[1:], new)
    return tuple(items)


def _diff(f, args: tuple, i: int, path: tuple[int, ...], x: object, h: float) -> object:
    if _is_discrete(x):
        return None
    if isinstance(x, float):
        step = h * max(1.0, abs(x))
        xp, xm = x + step, x - step
        args_p = list(args)
        args_m = list(args)
        args_p[i] = _replace(args[i], path, xp)
        args_m[i] = _replace(args[i], path, xm)
        return (f(*args_p) - f(*args_m)) / (xp - xm)
    if isinstance(x, tuple):
        return tuple(_diff(f, args, i, path + (k,), xk, h) for k, xk in enumerate(x))
    raise TypeError(f"central_diff: cannot differentiate with respect to {type(x).__name__}")


def central_diff(f, args, i: int, h: float = 1e-6) -> object:
    """d f(*args) / d args[i] by central differences, in the structure of args[i]."""
    args = tuple(args)
    return _diff(f, args, i, (), args[i], h)


def assert_same(a: object, b: object, where: str = "gradient") -> None:
    """Exact equality, structure and types included."""
    if b is None:
        assert a is None, f"{where}: expected None, got {a!r}"
    elif isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b), f"{where}: expected a tuple like {b!r}, got {a!r}"
        for k, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{k}]")
    else:
        assert type(a) is type(b), f"{where}: type {type(a).__name__} != {type(b).__name__}"
        assert a == b or (math.isnan(a) and math.isnan(b)), f"{where}: {a!r} != {b!r}"


def assert_close(
    actual: object, expected: object, rtol: float = 1e-5, atol: float = 1e-6, where: str = "gradient"
) -> None:
    """`actual` has the structure of `expected` (float/tuple/None) and is close to it."""
    if expected is None:
        assert actual is None, f"{where}: expected None (discrete argument), got {actual!r}"
    elif isinstance(expected, tuple):
        assert isinstance(actual, tuple), f"{where}: expected a tuple, got {actual!r}"
        assert len(actual) == len(expected), f"{where}: expected {len(expected)} components, got {actual!r}"
        for k, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, rtol, atol, f"{where}[{k}]")
    else:
        assert type(actual) is float, f"{where}: expected a float, got {type(actual).__name__} {actual!r}"
        assert math.isfinite(actual), f"{where}: {actual!r} is not finite (expected {expected!r})"
        assert abs(actual - expected) <= atol + rtol * abs(expected), (
            f"{where}: chadpy {actual!r} vs finite differences {expected!r}"
        )


def assert_grad_matches_fd(f, args, argnums=0, rtol: float = 1e-5, atol: float = 1e-6):
    """Check chadpy's gradient of `f` at `args` in both code generation modes.

    - the simplified and unsimplified derivatives give identical gradients;
    - both match central differences, in the structure of the arguments;
    - the value returned by `value_and_grad` is exactly `f(*args)`.
    Returns the (simplified) gradient.
    """
    args = tuple(args)
    expected_value = f(*args)
    grads = {}
    for simplify in (True, False):
        value, g = chad.value_and_grad(f, argnums=argnums, simplify=simplify)(*args)
        assert type(value) is type(expected_value) and (
            value == expected_value or (math.isnan(value) and math.isnan(expected_value))
        ), f"simplify={simplify}: value {value!r} != f(*args) {expected_value!r}"
        grads[simplify] = g
    assert_same(grads[True], grads[False], "simplify=True vs simplify=False")

    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    expected = tuple(central_diff(f, args, i % len(args)) for i in nums)
    if isinstance(argnums, int):
        assert_close(grads[True], expected[0], rtol, atol, f"d/d arg {argnums}")
    else:
        assert isinstance(grads[True], tuple) and len(grads[True]) == len(nums), (
            f"expected a tuple of {len(nums)} gradients, got {grads[True]!r}"
        )
        for i, a, e in zip(nums, grads[True], expected):
            assert_close(a, e, rtol, atol, f"d/d arg {i}")
    return grads[True]
