"""Element and slice assignment (`x[i] = v`) at O(1): the run-time half.

The forward pass updates an array, list or dict the function owns in place (`store`) and logs
what it overwrote in the function's `Writes`. A derivative rule that reads a container's values
when the backward pass runs must see them as they were when its operation ran forward, so the
backward pass first rewinds the log to that point (`Writes.rewind`), undoing the later writes
newest first, and at its end `redo`es them, so the primal result and a second backward pass see
the final values. Each write and its undo cost what the write cost.

The cotangent of an array written into is made an owned dense buffer once (a `Scatter` with
`owned` set): each write's rule reads the cotangent at its index and zeroes it there, O(1), the
overwritten value's cotangent being zero (an `EArr`-style accumulator, Section 7 of the paper).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import sequences
from .array_cotangents import LAZY, Scatter, dense, index_ct, ndarray_of, unbroadcast
from .arrays import float_dtype
from .cotangents import Zero

ABSENT = object()  # a dict key that was not there


class Writes:
    """The log of one call's in-place writes: (container, key, old value, new value), in order."""

    __slots__ = ("entries", "done")

    def __init__(self) -> None:
        self.entries: list[tuple[Any, Any, Any, Any]] = []
        self.done = 0  # the entries in effect (all of them, except while a backward pass runs)

    def mark(self) -> int:
        """The point the forward pass has reached: what `rewind` goes back to."""
        return len(self.entries)

    def log(self, container: Any, key: Any, old: Any, new: Any) -> None:
        self.entries.append((container, key, old, new))
        self.done = len(self.entries)

    def rewind(self, mark: int) -> None:
        """Undo the writes after `mark`, newest first (those not undone already)."""
        while self.done > mark:
            self.done -= 1
            container, key, old, _ = self.entries[self.done]
            _put(container, key, old)

    def redo(self) -> None:
        """Make the undone writes again, oldest first: the containers hold their final values."""
        while self.done < len(self.entries):
            container, key, _, new = self.entries[self.done]
            _put(container, key, new)
            self.done += 1


def popped(xs: list | dict, i: Any, writes: Writes | None = None) -> list | dict:
    """`xs.pop(i)` as an expression that returns the changed container, a dict's logged like a write (a
    rewind puts the key back before it undoes the write that made it); a key missing from a dict was read
    as `d.get(k, default)`."""
    if isinstance(xs, dict):
        old = xs.pop(i, ABSENT)
        if writes is not None and old is not ABSENT:
            writes.log(xs, i, old, ABSENT)
        return xs
    return sequences.container_pop(xs, i)


def copied_on_entry(x: Any) -> Any:
    """A differentiated argument the function updates in place: its copy, which the derivative updates (the
    caller's stays as it is)."""
    return list(x) if isinstance(x, list) else np.array(x, copy=True)


def _get(container: Any, key: Any) -> Any:
    """The value at `key`, as a copy where it is a part of an array."""
    if isinstance(container, dict):
        return container.get(key, ABSENT)
    value = container[key]
    return value.copy() if isinstance(value, np.ndarray) else value


def _put(container: Any, key: Any, value: Any) -> None:
    if value is ABSENT:
        del container[key]
    else:
        container[key] = value


def store(container: Any, key: Any, value: Any, writes: Writes | None = None) -> Any:
    """`container[key] = value` as an expression, logged in `writes` if given (if no rule reads the
    container after a write, nothing is); returns the container."""
    if writes is None:
        container[key] = value
        return container
    old = _get(container, key)
    container[key] = value
    writes.log(container, key, old, _get(container, key))
    return container


def store_in(container: Any, outer: Any, key: Any, value: Any, writes: Writes | None = None) -> Any:
    """`container[outer][key] = value` as an expression: the element at `outer` updated in place, logged as
    a write to it; returns the container."""
    store(container[outer], key, value, writes)
    return container


def append(xs: list, value: Any, writes: Writes | None = None) -> list:
    """`xs.append(value)` as an expression, logged as a write to the slice past the old end."""
    n = len(xs)
    xs.append(value)
    if writes is not None:
        writes.log(xs, slice(n, None), [], [value])
    return xs


def extend(xs: list, ys: Any, writes: Writes | None = None) -> list:
    """`xs.extend(ys)` as an expression, logged."""
    n = len(xs)
    xs.extend(ys)
    if writes is not None:
        writes.log(xs, slice(n, None), [], xs[n:])
    return xs


# ====================================================================== cotangents


def owned(d: Any, like: np.ndarray) -> Scatter:
    """`d` (not Zero) as an owned dense buffer shaped like `like`: copied once, then updated in place."""
    if type(d) is Scatter and d.owned:
        d.fold()
        return d
    base = d.densify() if isinstance(d, LAZY) else np.array(np.broadcast_to(ndarray_of(d), like.shape))
    buffer = Scatter(like.shape, base.dtype)
    buffer.base, buffer.owned = base, True
    return buffer


def array_store_ct(d: Any, y: np.ndarray, key: Any, value: Any) -> tuple[Any, None, Any]:
    """Cotangents of (x, key, value) in `x[key] = value` (x and the result `y` are one array): the
    value's is the cotangent at `key` (summed to its shape), and the overwritten elements' is 0."""
    if d is Zero or d is None:
        return Zero, None, Zero
    buffer = owned(d, y)
    return buffer, None, _written_ct(buffer.base, key, value)


def _written_ct(base: np.ndarray, key: Any, value: Any) -> Any:
    """The cotangent of the value in `x[key] = value`, from `base`, the cotangent of x after it (zeroed at
    `key` in place: the overwritten elements take nothing)."""
    part = base[key]
    if isinstance(part, np.ndarray):
        part = part.copy()
        if _advanced(key):  # a position named twice keeps the value written last: only that one's counts
            part = np.where(_last_writes(base.shape, key, part.shape), part, 0.0)
    base[key] = 0.0
    return unbroadcast(part, value)


def _advanced(key: Any) -> bool:
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(p, (list, np.ndarray)) for p in parts)


def _last_writes(shape: tuple[int, ...], key: Any, selected: tuple[int, ...]) -> np.ndarray:
    """For each element of `x[key]`, whether the assignment's value there is the one that stays
    (NumPy writes in order, so the last one naming a position wins)."""
    order = np.arange(int(np.prod(selected))).reshape(selected)
    winner = np.full(shape, -1)
    winner[key] = order
    return winner[key] == order


def write_position(container: Any, key: Any) -> Any:
    """Where `container[key] = v` wrote, for its rule: a list's index made non-negative (later appends
    would change what a negative one means); the key itself for an array or a dict."""
    return key % len(container) if isinstance(container, list) else key


def store_ct(d: Any, y: Any, key: Any, value: Any) -> tuple[Any, None, Any]:
    """Cotangents of (x, key, value) in `x[key] = value`, from the updated container's: the value's
    is the cotangent at `key`, the overwritten value's is zero."""
    if isinstance(y, np.ndarray):
        return array_store_ct(d, y, key, value)
    return sequences.store_ct(d, key)  # a list's or dict's cotangent: a dict {position or key: cotangent}


def positions_in(container: Any, outer: Any, key: Any) -> tuple[Any, Any]:
    """Where `container[outer][key] = v` wrote, for its rule (`write_position` of each)."""
    return write_position(container, outer), write_position(container[outer], key)


def store_in_ct(d: Any, y: Any, positions: tuple[Any, Any], value: Any) -> tuple[Any, None, None, Any]:
    """Cotangents of (x, outer, key, value) in `x[outer][key] = value`: the value's is the cotangent at
    [outer][key], and the overwritten value's is zero. An array's row `x[outer]` is a view of its data (or a
    copy, that the write did not reach: then the value takes nothing); a list's or dict's element is an
    object of its own, whose cotangent is the container's entry at `outer`."""
    outer, key = positions
    if d is Zero or d is None:
        return Zero, None, None, Zero
    if isinstance(y, np.ndarray):
        buffer = owned(d, y)
        part = buffer.base[outer]
        if not _shares(buffer.base, part):
            return buffer, None, None, Zero
        return buffer, None, None, _written_ct(part, key, value)
    inner, _, ct = store_ct(d.get(outer, Zero), y[outer], key, value)
    if inner is not Zero:
        d[outer] = inner
    return d, None, None, ct


# ====================================================================== views (`views.py`)


def view_of(x: Any, how: str, key: Any) -> Any:
    """The view of `x` that `views.py` follows: `x[key]`, `x.T` or `x.reshape(key)`."""
    if how == "T":
        return x.T
    if how == "reshape":
        return x.reshape(key)
    return x[key]


def is_view(x: Any, how: str, key: Any) -> bool:
    """Whether `view_of(x, how, key)` is a view of x's data: NumPy makes a copy for an integer-array
    index or a reshape of a strided array, and a number for a 1-d array's `x[i]`."""
    return isinstance(x, np.ndarray) and _shares(x, view_of(x, how, key))


def _shares(a: Any, b: Any) -> bool:
    return isinstance(b, np.ndarray) and np.may_share_memory(a, b)


def written_back(base: Any, view: Any, how: str, key: Any, writes: Writes | None = None) -> Any:
    """`base` after writes through its view: the same array, holding them already unless `a op= b`
    made the view a new array (then copied in, logged); the derivative sees `base` with the view's
    part replaced."""
    if is_view(base, how, key) and not _shares(base, view):
        if how == "index":
            store(base, key, view, writes)
        else:
            store(base, ..., view.T if how == "T" else view.reshape(base.shape), writes)
    return base


def written_back_ct(d: Any, base: Any, view: Any, how: str, key: Any) -> tuple[Any, Any, None, None]:
    """Cotangents of (base, view, how, key) in `written_back`: the view's is the cotangent on its
    part of the base, and the base's is zero there (what it held there was overwritten), O(|view|)."""
    if d is Zero or d is None or not is_view(base, how, key):
        return d, Zero, None, None
    buffer = owned(d, base)
    part = view_of(buffer.base, how, key)
    ct = part.copy()
    part[...] = 0.0
    return buffer, ct, None, None


def viewed_again(view: Any, base: Any, how: str, key: Any) -> Any:
    """`view` after writes to `base` (or through another of its views): made again from base, or
    the same value if NumPy made it a copy."""
    return view_of(base, how, key) if is_view(base, how, key) else view


def viewed_again_ct(d: Any, view: Any, base: Any, how: str, key: Any) -> tuple[Any, Any, None, None]:
    """Cotangents of (view, base, how, key) in `viewed_again`: all the base's if it is a view of it,
    else all the old view's."""
    if d is Zero or d is None:
        return Zero, Zero, None, None
    if not is_view(base, how, key):
        return d, Zero, None, None
    if how == "index":
        return Zero, index_ct(d, base, key), None, None
    out = np.zeros(base.shape, float_dtype(base.dtype))
    view_of(out, how, key)[...] = dense(d, view)
    return Zero, out, None, None
