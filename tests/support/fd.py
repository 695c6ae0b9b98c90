"""Central finite differences, and checkers comparing chadpy's derivatives against them.

`central_diff` perturbs one argument (every float inside it) and returns a result with
the structure of that argument:

| argument | derivative |
| --- | --- |
| `float` | `float` |
| NumPy floating scalar (`np.float64`, ...) | a scalar of the same type |
| NumPy array of a floating dtype | an array of the same shape and dtype, one slope per element |
| tuple / list | a tuple / list of the same length, componentwise |
| dict | a dict with the same keys, per value |
| namedtuple | the same namedtuple class, componentwise |
| an object with attributes (a dataclass, a plain class) | the same class, per attribute (discrete ones kept) |
| anything discrete (int, bool, str, None, NumPy integer or bool scalars and arrays) | `None` |

Structures nest freely (a list of arrays, a dict of tuples, ...).
"""

from __future__ import annotations

import copy
import math

import numpy as np
from hypothesis import Phase, settings

import chadpy as chad

# Hypothesis' explain phase re-runs a failing test hundreds of times under tracing
# (tens of seconds per failing case here); the falsifying example is enough.
no_explain = settings(phases=[p for p in Phase if p is not Phase.explain])


def _is_discrete(x: object) -> bool:
    if isinstance(x, np.ndarray):
        return not np.issubdtype(x.dtype, np.floating)
    return x is None or isinstance(x, (bool, int, str, bytes, np.integer, np.bool_))


def _is_scalar(x: object) -> bool:
    """A float or a NumPy floating scalar (np.float64 subclasses float; np.float32 does not)."""
    return isinstance(x, (float, np.floating))


def _is_record(x: object) -> bool:
    """An object differentiated attribute by attribute (a dataclass, a plain class's instance)."""
    return hasattr(x, "__dict__") and not isinstance(x, type) and not callable(x)


def _record(like: object, fields: dict) -> object:
    """An object of like's class with these attributes (its `__init__` not run)."""
    out = copy.copy(like)
    for k, v in fields.items():
        object.__setattr__(out, k, v)
    return out


def _rebuilt(value: tuple, items: list) -> tuple:
    """A tuple of value's class (a namedtuple keeps its class) with these items."""
    return type(value)(*items) if hasattr(type(value), "_fields") else tuple(items)


def _replace(value: object, path: tuple, new: float) -> object:
    """A copy of `value` with the float at `path` replaced by `new`; `value` itself is untouched.

    A path step is an index into a tuple or list, a key of a dict, or an index tuple into an array.
    """
    if not path:
        return new
    k, rest = path[0], path[1:]
    if isinstance(value, np.ndarray):
        out = value.copy()
        out[k] = new
        return out
    if isinstance(value, dict):
        out = dict(value)
        out[k] = _replace(value[k], rest, new)
        return out
    if _is_record(value):
        return _record(value, {k: _replace(getattr(value, k), rest, new)})
    items = list(value)
    items[k] = _replace(items[k], rest, new)
    return _rebuilt(value, items) if isinstance(value, tuple) else items


def stepped(f, args: tuple, i: int, path: tuple, x: float, h: float) -> tuple[float, float, float, float]:
    """(x + step, x - step, f there, f there) for the one float x at args[i][path], the step h relative
    to |x| (absolute below 1)."""
    x = float(x)
    step = h * max(1.0, abs(x))
    xp, xm = x + step, x - step
    args_p = list(args)
    args_m = list(args)
    args_p[i] = _replace(args[i], path, xp)
    args_m[i] = _replace(args[i], path, xm)
    return xp, xm, float(f(*args_p)), float(f(*args_m))


def _slope(f, args: tuple, i: int, path: tuple, x: float, h: float) -> float:
    """The central difference quotient of f in the one float at args[i][path]."""
    xp, xm, fp, fm = stepped(f, args, i, path, x, h)
    return (fp - fm) / (xp - xm)


def _diff(f, args: tuple, i: int, path: tuple, x: object, h: float) -> object:
    if _is_discrete(x):
        return None
    if _is_scalar(x):
        slope = _slope(f, args, i, path, x, h)
        return slope if type(x) is float else type(x)(slope)
    if isinstance(x, np.ndarray):
        g = np.zeros(x.shape, dtype=x.dtype)
        for k in np.ndindex(x.shape):
            g[k] = _slope(f, args, i, path + (k,), x[k], h)
        return g
    if isinstance(x, tuple):
        return _rebuilt(x, [_diff(f, args, i, path + (k,), xk, h) for k, xk in enumerate(x)])
    if isinstance(x, list):
        return [_diff(f, args, i, path + (k,), xk, h) for k, xk in enumerate(x)]
    if isinstance(x, dict):
        return {k: _diff(f, args, i, path + (k,), xk, h) for k, xk in x.items()}
    if _is_record(x):
        diffs = {k: _diff(f, args, i, path + (k,), v, h) for k, v in vars(x).items()}
        return _record(x, {k: d if d is not None else getattr(x, k) for k, d in diffs.items()})
    raise TypeError(f"central_diff: cannot differentiate with respect to {type(x).__name__}")


def central_diff(f, args, i: int, h: float = 1e-6) -> object:
    """d f(*args) / d args[i] by central differences, in the structure of args[i].

    f must return a float (or a NumPy scalar / 0-d array convertible by `float`).
    """
    args = tuple(args)
    return _diff(f, args, i, (), args[i], h)


def vjp_fd(f, x: object, d: object, h: float = 1e-6) -> object:
    """J^T d for f at x by central differences (x a float or an array; f's result, like d, a float or an
    array): the derivative of <d, f(x)>."""
    return central_diff(lambda x: inner(d, f(x)), (x,), 0, h)


def inner(a: object, b: object) -> float:
    """The inner product of two values of the same structure (discrete parts count as 0).

    `inner(f(*args), ct)` is the scalar whose gradient is the vector-Jacobian product
    `pullback(ct)` of f at args.
    """
    if a is None or b is None or _is_discrete(a):
        return 0.0
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return float(np.sum(np.asarray(a) * np.asarray(b)))
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), f"inner: {a!r} and {b!r} differ in structure"
        return sum((inner(x, y) for x, y in zip(a, b)), 0.0)
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"inner: {a!r} and {b!r} differ in keys"
        return sum((inner(a[k], b[k]) for k in a), 0.0)
    return float(a) * float(b)


# ====================================================================== seeded inputs


def rand_array(seed: int, shape, lo: float = -1.0, hi: float = 1.0, signed: bool = False) -> np.ndarray:
    """A float64 array, uniform in [lo, hi], from `np.random.default_rng(seed)`.

    With `signed`, magnitudes are uniform in [lo, hi] (0 <= lo) with random signs: values
    kept at least `lo` away from 0, for abs, max(v, 0), `v > 0` tests and the like.
    """
    rng = np.random.default_rng(seed)
    values = rng.uniform(lo, hi, shape)
    if signed:
        values = values * rng.choice([-1.0, 1.0], np.shape(values))
    return values


def rand_list(seed: int, n: int, lo: float = -1.0, hi: float = 1.0, signed: bool = False) -> list[float]:
    """n Python floats, as `rand_array`."""
    return [float(v) for v in rand_array(seed, n, lo, hi, signed)]


def rand_float(seed: int, lo: float = -1.0, hi: float = 1.0, signed: bool = False) -> float:
    """One Python float, as `rand_array`."""
    return rand_list(seed, 1, lo, hi, signed)[0]


# ====================================================================== comparisons


def _both_nan(a: object, b: object) -> bool:
    return _is_scalar(a) and _is_scalar(b) and math.isnan(a) and math.isnan(b)


def _same(a: object, b: object, where: str, loose_scalars: bool) -> None:
    if b is None:
        assert a is None, f"{where}: expected None, got {a!r}"
    elif isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray), f"{where}: expected an ndarray, got {type(a).__name__} {a!r}"
        assert a.shape == b.shape, f"{where}: shape {a.shape} != {b.shape}"
        assert a.dtype == b.dtype, f"{where}: dtype {a.dtype} != {b.dtype}"
        equal_nan = np.issubdtype(b.dtype, np.inexact)
        assert np.array_equal(a, b, equal_nan=equal_nan), f"{where}:\n{a!r}\n!=\n{b!r}"
    elif isinstance(b, (tuple, list)):
        kind = tuple if isinstance(b, tuple) else list
        assert isinstance(a, kind) and len(a) == len(b), f"{where}: expected a {kind.__name__} like {b!r}, got {a!r}"
        for k, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{k}]", loose_scalars)
    elif isinstance(b, dict):
        assert isinstance(a, dict), f"{where}: expected a dict like {b!r}, got {a!r}"
        assert a.keys() == b.keys(), f"{where}: keys {list(a)} != {list(b)}"
        for k in b:
            _same(a[k], b[k], f"{where}[{k!r}]", loose_scalars)
    elif _is_record(b):
        assert type(a) is type(b), f"{where}: expected a {type(b).__name__}, got {a!r}"
        _same(vars(a), vars(b), where, loose_scalars)
    else:
        if loose_scalars and _is_scalar(a) and _is_scalar(b):
            pass  # float and np.float64 are interchangeable here; the values must still be equal
        else:
            assert type(a) is type(b), f"{where}: type {type(a).__name__} != {type(b).__name__}"
        assert a == b or _both_nan(a, b), f"{where}: {a!r} != {b!r}"


def assert_same(a: object, b: object, where: str = "gradient") -> None:
    """Exact equality, structure and types included (arrays: shape, dtype and `np.array_equal`)."""
    _same(a, b, where, loose_scalars=False)


def assert_same_value(a: object, b: object, where: str = "value") -> None:
    """Like `assert_same`, except that float and NumPy floating scalars are interchangeable
    (the values must still be equal): for comparing a derivative's primal result with f's."""
    _same(a, b, where, loose_scalars=True)


def assert_close(
    actual: object, expected: object, rtol: float = 1e-5, atol: float = 1e-6, where: str = "gradient"
) -> None:
    """`actual` has the structure of `expected` and is close to it.

    Structure: None for None; a tuple/list of the same length for a tuple/list; a dict with
    the same keys for a dict; an ndarray of the same shape and dtype for an ndarray; exactly a
    `float` for a float; a float or NumPy floating scalar for a NumPy floating scalar.
    """
    if expected is None:
        assert actual is None, f"{where}: expected None (discrete argument), got {actual!r}"
    elif isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray), f"{where}: expected an ndarray, got {type(actual).__name__} {actual!r}"
        assert actual.shape == expected.shape, f"{where}: shape {actual.shape} != {expected.shape}"
        assert actual.dtype == expected.dtype, f"{where}: dtype {actual.dtype} != {expected.dtype}"
        assert np.all(np.isfinite(actual)), f"{where}: not finite:\n{actual!r}"
        bad = np.abs(actual - expected) > atol + rtol * np.abs(expected)
        if np.any(bad):
            k = tuple(int(j) for j in np.argwhere(bad)[0])
            raise AssertionError(
                f"{where}: {int(bad.sum())} of {bad.size} elements differ, first at {k}: "
                f"chadpy {actual[k]!r} vs finite differences {expected[k]!r}\n"
                f"chadpy:\n{actual!r}\nfinite differences:\n{expected!r}"
            )
    elif isinstance(expected, (tuple, list)):
        kind = type(expected) if isinstance(expected, tuple) else list
        assert isinstance(actual, kind), f"{where}: expected a {kind.__name__}, got {actual!r}"
        assert len(actual) == len(expected), f"{where}: expected {len(expected)} components, got {actual!r}"
        for k, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, rtol, atol, f"{where}[{k}]")
    elif isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected a dict, got {actual!r}"
        assert actual.keys() == expected.keys(), f"{where}: keys {list(actual)} != {list(expected)}"
        for k in expected:
            assert_close(actual[k], expected[k], rtol, atol, f"{where}[{k!r}]")
    elif _is_record(expected):
        assert type(actual) is type(expected), f"{where}: expected a {type(expected).__name__}, got {actual!r}"
        assert vars(actual).keys() == vars(expected).keys(), f"{where}: attributes {vars(actual)} != {vars(expected)}"
        for k, e in vars(expected).items():
            if _is_discrete(e) or not (
                _is_record(e) or isinstance(e, (np.ndarray, tuple, list, dict)) or _is_scalar(e)
            ):
                assert getattr(actual, k) is e, f"{where}.{k}: data kept as it is: {getattr(actual, k)!r} is not {e!r}"
            else:
                assert_close(getattr(actual, k), e, rtol, atol, f"{where}.{k}")
    else:
        if type(expected) is float:
            assert type(actual) is float, f"{where}: expected a float, got {type(actual).__name__} {actual!r}"
        else:
            assert _is_scalar(actual), f"{where}: expected a float scalar, got {type(actual).__name__} {actual!r}"
        assert math.isfinite(actual), f"{where}: {actual!r} is not finite (expected {expected!r})"
        assert abs(actual - expected) <= atol + rtol * abs(expected), (
            f"{where}: chadpy {actual!r} vs finite differences {expected!r}"
        )


# ====================================================================== checkers


# Every derivative is checked in each of these modes: the user's default, the unsimplified
# Fig. 7 code, and the paper's three slower stages (same gradients, other runtimes).
MODES = [
    ("efficient", True),
    ("efficient", False),
    ("monadic", True),
    ("sparse", True),
    ("naive", True),
]


def same_across_modes(results: dict, what: str) -> None:
    """The Fig. 7 stages unsimplified agree exactly (the same additions in the same order). The
    others add in another order, so they agree up to rounding (relative 1e-12, and absolute 1e-15
    where contributions of order one cancel: -2.4e-269 against an exact 0.0 was seen with
    x = -1.1e-268): the Fig. 2 stages add environment vectors, and the simplified code may add up a
    loop's contributions forward and scale the sum once (`fuse`)."""
    reference = results["efficient", False]
    for mode, r in results.items():
        where = f"{what}: stage {mode[0]} simplify={mode[1]} vs efficient unsimplified"
        if mode[0] == "monadic":  # never simplified: `simplify` applies to the efficient stage only
            assert_same(r, reference, where)
        elif mode != ("efficient", False):
            assert_close(r, reference, rtol=1e-12, atol=1e-15, where=where)


def assert_grad_matches_fd(f, args, argnums=0, rtol: float = 1e-5, atol: float = 1e-6):
    """Check chadpy's gradient of `f` at `args` in every mode of `MODES`.

    - all modes (the four stages, simplified or not) give the same gradients;
    - they match central differences, in the structure of the arguments;
    - the value returned by `value_and_grad` is `f(*args)` (`assert_same_value`);
    - neither f nor its derivative mutates the arguments.
    Returns the (simplified, efficient) gradient.
    """
    args = tuple(args)
    snapshot = copy.deepcopy(args)
    expected_value = f(*args)
    assert_same(args, snapshot, "arguments after calling f")
    grads = {}
    for stage, simplify in MODES:
        value, g = chad.value_and_grad(f, argnums=argnums, simplify=simplify, stage=stage)(*args)
        where = f"stage {stage}, simplify={simplify}"
        assert_same_value(value, expected_value, f"{where}: value vs f(*args)")
        assert_same(args, snapshot, f"{where}: arguments after value_and_grad")
        grads[stage, simplify] = g
    same_across_modes(grads, "gradient")

    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    expected = tuple(central_diff(f, args, i % len(args)) for i in nums)
    if isinstance(argnums, int):
        assert_close(grads["efficient", True], expected[0], rtol, atol, f"d/d arg {argnums}")
    else:
        assert isinstance(grads["efficient", True], tuple) and len(grads["efficient", True]) == len(nums), (
            f"expected a tuple of {len(nums)} gradients, got {grads['efficient', True]!r}"
        )
        for i, a, e in zip(nums, grads["efficient", True], expected):
            assert_close(a, e, rtol, atol, f"d/d arg {i}")
    return grads["efficient", True]


def assert_vjp_matches_fd(f, args, ct, rtol: float = 1e-5, atol: float = 1e-6):
    """Check `chad.vjp(f, *args)` with output cotangent `ct`, in both code generation modes.

    - the primal output is `f(*args)` (`assert_same_value`);
    - `pullback(ct)` is the same in both modes and matches central differences of
      `inner(f(*args), ct)` for every argument (None for discrete ones);
    - neither the arguments nor `ct` are mutated.
    Returns the (simplified) tuple of cotangents.
    """
    args = tuple(args)
    snapshot = copy.deepcopy((args, ct))
    expected_value = f(*args)
    cts = {}
    for stage, simplify in MODES:
        value, pullback = chad.vjp(f, *args, simplify=simplify, stage=stage)
        where = f"stage {stage}, simplify={simplify}"
        assert_same_value(value, expected_value, f"{where}: primal output vs f(*args)")
        cts[stage, simplify] = pullback(ct)
        assert_same((args, ct), snapshot, f"{where}: (arguments, cotangent) after vjp")
    same_across_modes(cts, "pullback(ct)")

    def projected(*a):
        return inner(f(*a), ct)

    expected = tuple(central_diff(projected, args, i) for i in range(len(args)))
    assert_close(cts["efficient", True], expected, rtol, atol, "pullback(ct)")
    return cts["efficient", True]
