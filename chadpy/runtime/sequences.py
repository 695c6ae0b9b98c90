"""The run-time half of `rules/sequences.py`: lists and dicts, and the loops over them.

A list's cotangent is like a tuple's: `Zero` or a dict {position: cotangent}, so the one-hot of
`xs[i]` is O(1) and `add` merges the smaller dict into the larger."""

from __future__ import annotations

import inspect

import numpy as np

from .cotangents import Zero, add


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


def call_binds(
    signature: inspect.Signature, name: str, given: int, named: tuple, kw: dict | None, *spread: object
) -> None:
    """Raise Python's TypeError where a call of function `name` of this signature with `given` positional
    arguments, then the items of each sequence in `spread` (`*xs`), the keywords `named` and the keys of `kw`
    (`**kw`) does not bind (too many or too few arguments, a keyword not taken or given twice)."""
    keywords = dict.fromkeys(named)
    for k in kw or ():
        if k in keywords:
            raise TypeError(f"{name}() got multiple values for keyword argument {k!r}")
        keywords[k] = None
    try:
        signature.bind(*([None] * given), *(x for xs in spread for x in xs), **keywords)
    except TypeError as e:
        raise TypeError(f"{name}(): {e}") from None


def unpacks(xs: object, least: int) -> None:
    """`a, *b, c = xs`: Python's ValueError where xs has fewer than `least` items (the targets but `*b`)."""
    if len(xs) < least:
        raise ValueError(f"not enough values to unpack (expected at least {least}, got {len(xs)})")


def without_keys(d: dict, names: tuple) -> dict:
    """`d` without the keys `names` (what a function's `**kwargs` collects of a call's `**d`)."""
    return {k: v for k, v in d.items() if k not in names}


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


def argsort(keys: list, reverse: bool = False) -> list[int]:
    """Positions in the order `sorted(xs, key=..., reverse=...)` puts xs (stable, like sorted)."""
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)


def argbest(keys: list, largest: bool) -> int:
    """The position `max(xs, key=...)` / `min(xs, key=...)` picks (the first best, as they do)."""
    return (max if largest else min)(range(len(keys)), key=keys.__getitem__)


def merged_keywords(*kws: dict) -> dict:
    """The keywords of a call `f(**a, **b)`: one dict of them all; a key given twice is Python's TypeError."""
    out: dict = {}
    for kw in kws:
        for k in kw:
            if k in out:
                raise TypeError(f"got multiple values for keyword argument {k!r}")
        out.update(kw)
    return out


def merged_keywords_ct(d: object, *kws: dict) -> tuple:
    """Cotangents of the dicts `merged_keywords` merged, from the merged dict's: each its own keys' part."""
    if d is Zero:
        return (Zero,) * len(kws)
    return tuple({k: d[k] for k in kw if k in d} or Zero for kw in kws)


def rekeyed(pairs: object, dpairs: object) -> list:
    """The (key, value) pairs' tangents with each pair's own key: what `dict(pairs)`'s tangent is made of."""
    return [(pair[0], dpair[1]) for pair, dpair in zip(pairs, dpairs)]
