"""The run-time half of chadpy: cotangent values.

Cotangent representations (docs/design.md section 4), all with O(1) zero and one-hot:

- a float's cotangent is a float, zero `0.0`;
- a tuple's cotangent is `Zero` or a dict {index: cotangent} holding the
  non-zero components only, so the one-hot of a projection `t[k]` is `{k: d}`;
- a discrete value's cotangent is never materialised (unit).

Cotangents are used affinely: once added somewhere they are never read again,
so `add` may update its left argument in place. This is what makes the
amortisation argument of Section 4.3 hold.

The environment accumulators (`EArr` and the paper's slower stages) are in
`environments.py`.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ChadError


class _ZeroType:
    """The zero of every non-scalar cotangent type: costs nothing to make or add.

    It is a true additive identity and absorbs products (`Zero * x` is `Zero`), so a
    derivative rule applied to a zero cotangent (a variable nobody used) costs O(1)
    and needs no special case. NumPy defers to it (`__array_ufunc__ = None`).
    """

    __slots__ = ()
    __array_ufunc__ = None

    def __add__(self, other: object) -> object:
        return other

    __radd__ = __add__

    def __sub__(self, other: object) -> object:
        return -other

    def __rsub__(self, other: object) -> object:
        return other

    def __mul__(self, other: object) -> _ZeroType:
        return self

    __rmul__ = __truediv__ = __matmul__ = __rmatmul__ = __mul__

    def __neg__(self) -> _ZeroType:
        return self

    def __repr__(self) -> str:
        return "Zero"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "Zero"  # copies and pickles are the singleton itself


Zero = _ZeroType()


def add(a: object, b: object) -> object:
    """a + b on cotangents. Cost: the size of the smaller sparse argument."""
    if b is Zero or b is None:
        return a
    if a is Zero or a is None:
        return b
    if isinstance(a, dict):
        if len(a) < len(b):
            a, b = b, a
        for k, v in b.items():
            a[k] = add(a[k], v) if k in a else v
        return a
    return a + b


def add_at(ct: object, key: object, d: object) -> object:
    """ct + {key: d} for a tuple, list or dict cotangent, without building the one-hot."""
    if ct is Zero:
        return {key: d}
    ct[key] = add(ct[key], d) if key in ct else d
    return ct


def add_items(ct: object, keys: list, values: list) -> object:
    """ct plus values[k] at keys[k], in order, for a tuple, list or dict cotangent: a loop's `add_at`
    calls, collected in two lists (`collect`). A dict of them when ct is zero and every key comes once."""
    if ct is Zero:
        out = dict(zip(keys, values))
        if len(out) == len(keys):  # nothing to add up
            return out if out else Zero
        ct = {}
    for key, d in zip(keys, values):  # add_at's update, without a call per item
        ct[key] = add(ct[key], d) if key in ct else d
    return ct


def scaled(ct: object, c: float) -> object:
    """c * ct, a new cotangent (ct is left as it is: `add` may later update the result in place).
    Cost: the size of ct's non-zero parts."""
    if ct is Zero or ct is None or c is Zero:
        return Zero if c is Zero else ct
    if isinstance(ct, dict):
        return {k: scaled(v, c) for k, v in ct.items()}
    scale = getattr(ct, "scaled", None)  # a Scatter or Outers stays sparse
    return c * ct if scale is None else scale(c)


def tuple_part(d: object, k: object, zero: object) -> object:
    """The cotangent of component `k` of a tuple, from the tuple's cotangent `d`."""
    if d is Zero:
        return zero
    return d.get(k, zero)


# ---------------------------------------------------------------- records (objects of user classes)
# A record's cotangent is like a tuple's, keyed by attribute name: Zero or {name: cotangent}.


def with_field(obj: object, name: str, value: object) -> object:
    """`obj.name = value` as an expression (only on objects the function itself made)."""
    setattr(obj, name, value)
    return obj


def without_field(d: object, name: str) -> object:
    """The cotangent of a record before `obj.name = ...`: the new one's, less that attribute's."""
    if d is Zero or name not in d:
        return d
    return {k: v for k, v in d.items() if k != name}


# ---------------------------------------------------------------- lists and dicts
# A list's cotangent is like a tuple's: Zero or a dict {position: cotangent}, so the
# one-hot of `xs[i]` is O(1) and `add` merges the smaller dict into the larger.


def append_ct(d: object, n: int) -> tuple[object, object]:
    """Cotangents of (xs, v) in `xs.append(v)` (v went to position n), from the list's."""
    if d is Zero:
        return Zero, Zero
    return d, d.pop(n, Zero)


def list_insert(xs: list, i: int, v: object) -> list:
    """`xs.insert(i, v)` as an expression."""
    xs.insert(i, v)
    return xs


def inserted_position(xs: list, i: int) -> int:
    """Where `xs.insert(i, v)` put v (xs after it): Python clamps i to 0..n."""
    n = len(xs) - 1
    return min(max(i + n if i < 0 else i, 0), n)


def insert_ct(d: object, p: int) -> tuple[object, None, object]:
    """Cotangents of (xs, i, v) in `xs.insert(i, v)` (v went to position p), from the longer list's."""
    if d is Zero:
        return Zero, None, Zero
    v = d.pop(p, Zero)
    return {k - 1 if k > p else k: c for k, c in d.items()}, None, v


def container_pop(xs: list | dict, i: object) -> list | dict:
    """`xs.pop(i)` as an expression that returns the changed container (the element was read before:
    a key missing from a dict was read as `d.get(k, default)`)."""
    if isinstance(xs, dict):
        xs.pop(i, None)
    else:
        xs.pop(i)
    return xs


def popped_position(xs: list | dict, i: object) -> int | None:
    """Where `xs.pop(i)` took its element from (xs after it), if later elements moved down; None for the
    last element or a dict's key (nothing moved)."""
    if isinstance(xs, dict):
        return None
    p = i % (len(xs) + 1)
    return None if p == len(xs) else p


def pop_ct(d: object, p: int | None) -> object:
    """Cotangent of xs in `xs.pop(i)`, from the shorter container's: each entry back at its place."""
    if d is Zero or p is None:
        return d
    return {k + 1 if k >= p else k: c for k, c in d.items()}


def store_ct(d: object, k: object) -> tuple[object, None, object]:
    """Cotangents of (d, k, v) in `d[k] = v`: v's entry; the old value at k (if any) takes nothing."""
    if d is Zero:
        return Zero, None, Zero
    return d, None, d.pop(k, Zero)


def dict_setdefault(d: dict, k: object, v: object, absent: bool) -> dict:
    """`d.setdefault(k, v)` as an expression that returns the dict (`absent`: k was not in d)."""
    if absent:
        d[k] = v
    return d


def setdefault_ct(d: object, k: object, absent: bool) -> tuple[object, None, object, None]:
    """Cotangents of (d, k, v, absent) in `d.setdefault(k, v)`: v's entry if it went in."""
    if d is Zero or not absent:
        return d, None, Zero, None
    return d, None, d.pop(k, Zero), None


def get_ct(d: object, k: object, present: bool) -> tuple[object, None, object]:
    """Cotangents of (dct, k, default) in `dct.get(k, default)` (or `item_or(xs, k, default)`): a one-hot
    of dct if k was there, else all of d to the default."""
    if not present:
        return Zero, None, d
    return (Zero if d is Zero else {k: d}), None, Zero


def item_or(xs: object, j: int, default: object) -> object:
    """`xs[j]` if xs has a position j, else `default` (`f(*xs)` for a parameter with a default)."""
    return xs[j] if j < len(xs) else default


def pair_positions(x: object) -> dict | None:
    """For `dict(pairs)`: where the value of each key came from (the last pair with that key, as
    `dict` keeps it); None for `dict(d)` of a dict."""
    if isinstance(x, dict):
        return None
    return {pair[0]: i for i, pair in enumerate(x)}


def dict_of_ct(d: object, positions: dict | None) -> object:
    """Cotangent of x in `dict(x)`: a dict's own; a list of pairs' {position: {1: cotangent}}."""
    if d is Zero or positions is None:
        return d
    return {positions[k]: {1: c} for k, c in d.items()}


def keys_within(d: dict, names: tuple) -> bool:
    """Whether every key of `d` is one of `names` (`f(**kw)`: Python rejects any other)."""
    return all(k in names for k in d)


def transposed(rows: object) -> list:
    """`zip(*rows)`, as a list of its tuples."""
    return list(zip(*rows))


def transposed_ct(d: object) -> object:
    """Cotangent of rows in `zip(*rows)`: entry (j, i) of the result is entry (i, j) of rows."""
    if d is Zero:
        return Zero
    out: dict = {}
    for j, column in d.items():
        for i, c in column.items() if column is not Zero else ():
            out.setdefault(i, {})[j] = c
    return out


def concat_ct(d: object, n: int) -> tuple[object, object]:
    """Cotangents of (a, b) in `a + b` (len(a) == n)."""
    if d is Zero:
        return Zero, Zero
    a, b = {}, {}
    for k, v in d.items():
        if k < n:
            a[k] = v
        else:
            b[k - n] = v
    return a, b


def repeated_length(a: object, b: object) -> int:
    """The length of the sequence operand of `xs * k` (or `k * xs`)."""
    return len(a) if isinstance(a, (list, tuple)) else len(b)


def repeat_ct(d: object, n: int, a: object) -> tuple[object, object]:
    """Cotangents of (a, b) in `a * b` where one is a sequence of length n: each copy's part summed back."""
    if d is Zero or n == 0:
        return Zero, Zero
    ct: dict = {}
    for k, v in d.items():
        ct[k % n] = add(ct[k % n], v) if k % n in ct else v
    return (ct, Zero) if isinstance(a, (list, tuple)) else (Zero, ct)


def slice_ct(d: object, positions: range) -> object:
    """Cotangent of xs from that of `xs[s]`, where `positions = range(len(xs))[s]`."""
    if d is Zero:
        return Zero
    return {positions[k]: v for k, v in d.items()}


def list_ct(d: object, x: object) -> object:
    """Cotangent of x in `list(x)`: the list's own (a dict's keys take none)."""
    return Zero if isinstance(x, dict) else d


def dict_values(d: dict) -> list:
    return list(d.values())


def values_ct(d: object, keys: list) -> object:
    """Cotangent of a dict from that of `list(d.values())`."""
    if d is Zero:
        return Zero
    return {keys[k]: v for k, v in d.items()}


def positions(xs: object) -> object:
    """What a `for` loop over xs counts: a dict's keys, or a sequence's positions."""
    return list(xs) if isinstance(xs, dict) else range(len(xs))


def element(xs: object, k: object) -> object:
    """The element a `for` loop over xs yields at position k (a dict yields its keys)."""
    return k if isinstance(xs, dict) else xs[k]


def updated(ufunc: np.ufunc, a: object, b: object) -> object:
    """`a op= b` as a new value: for an array, a new array laid out (and typed) like `a`, as Python's
    in-place update leaves `a` (its memory order decides how NumPy sums it later)."""
    if isinstance(a, np.ndarray):
        return ufunc(a, b, out=np.empty_like(a))
    return ufunc(a, b)


def enter(cm: object) -> object:
    """`cm.__enter__()` (a `with` statement's start)."""
    return cm.__enter__()


def leave(cm: object) -> None:
    """`cm.__exit__(None, None, None)` (a `with` statement's end, reached without an exception)."""
    cm.__exit__(None, None, None)


def check(cond: object, message: object = None) -> None:
    """`assert cond, message` in generated code (kept even under python -O)."""
    if not cond:
        raise AssertionError(message) if message is not None else AssertionError


def pow_base_ct(d: float, a: float, b: float) -> float:
    """Cotangent of a in a ** b."""
    return 0.0 if b == 0 else d * b * a ** (b - 1)


def pow_exponent_ct(d: float, y: float, a: float) -> float:
    """Cotangent of b in y = a ** b: d * y * log(a); zero at a == 0, undefined (nan) for a < 0."""
    if a > 0:
        return d * y * math.log(a)
    return 0.0 if a == 0 else math.nan


def power_base_ct(d: object, a: object, b: object) -> object:
    """Cotangent of a in np.power(a, b) / `a ** b` on arrays (zero where b == 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.equal(b, 0), 0.0, d * b * np.power(a, b - 1.0))


def power_exponent_ct(d: object, y: object, a: object) -> object:
    """Cotangent of b in y = a ** b on arrays: d * y * log(a); 0 where a == 0, nan where a < 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(np.greater(a, 0), a, 1.0)
        return np.where(np.greater(a, 0), d * y * np.log(safe), np.where(np.equal(a, 0), 0.0, np.nan))


def digamma(x: float) -> float:
    """psi(x) = d/dx lgamma(x) (the rules of `math.gamma` and `math.lgamma`): the reflection formula below
    1/2, the recurrence psi(x) = psi(x + 1) - 1/x up to 10, then the asymptotic series (error < 1e-14).
    At a pole (0, -1, -2, ...) gamma itself raises ValueError before this runs."""
    if x < 0.5:
        return digamma(1.0 - x) - math.pi / math.tan(math.pi * x)
    total = 0.0
    while x < 10.0:
        total -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f * (1 / 132)))))
    return total + math.log(x) - 0.5 / x - series


# ---------------------------------------------------------------- function values


class Closure:
    """A function value after closure conversion (Section 9): the values it captured.

    Its code is known to the compiler (it is part of the value's type), so a call site
    runs `code_chad(closure.env, *args)` directly; the name is for people reading it.
    """

    __slots__ = ("name", "env")

    def __init__(self, name: str, env: tuple):
        self.name = name
        self.env = env

    def __repr__(self) -> str:
        return f"<chadpy closure {self.name}>"

    def __call__(self, *args: object) -> object:
        raise ChadError(
            f"the function value {self.name} was made inside differentiated code and can only be called there"
        )


def argsort(keys: list, reverse: bool = False) -> list[int]:
    """Positions in the order `sorted(xs, key=..., reverse=...)` puts xs (stable, like sorted)."""
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)


def argbest(keys: list, largest: bool) -> int:
    """The position `max(xs, key=...)` / `min(xs, key=...)` picks (the first best, as they do)."""
    return (max if largest else min)(range(len(keys)), key=keys.__getitem__)
