"""Array cotangents: their representations (`Scatter`, `Outers`) and the functions that make, add and
densify them (the runtime of arrays; the helpers they share are `arrays.py`).

Cotangent representations of an array-valued primal (docs/design.md section 4):

- `Zero`, the O(1) zero shared with the scalar/tuple runtime (`chadpy.runtime`);
- a dense ndarray. It is NEVER mutated in place once created: generated code may put
  the same dense array in several cotangent slots (`dx = dr; dy = dr`), so every
  operation here builds a new array (or a read-only view) instead of writing into one
  (one exception: at a Scatter's last use, `cotangents.to_user_array` adds its items into its base
  when the count of references shows nothing else refers to that base);
- a Python/NumPy float, for numpy scalar primals such as `a[i]` of a 1-D array;
- a `Scatter`: index contributions `[(index, value), ...]` plus an optional dense
  `base`, collected once by `Scatter.densify` with `np.add.at`. This is the O(1)
  one-hot of the paper: the cotangent of `x[i]` must not cost the size of `x`;
- an `Outers`: rank-one terms `outer(u, v)` plus an optional dense `base`, summed by one
  matrix product when used. It is the cotangent of `W` in `W @ h`: a loop's T steps
  then cost one GEMM, not T outer products and T additions of a new matrix.

Cotangents are used affinely (never read again after being added somewhere), so a
`Scatter` is uniquely owned and `Scatter + Scatter` may extend one of its arguments
in place; that keeps k one-hot additions at O(k) in total (Section 4.3).

The transposed derivatives of array primitives that the rules call at run time are in
`numpy.py`, `reductions.py`, `shape.py`, `linalg.py` and `special.py`.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from .arrays import IntTuple, broadcast, float_dtype, python_scalar
from .cotangents import Zero, scaled
from .facts import adds_into, collects, reads_shape_only
from .tangents import parts_of, tangent_size

_FLOAT64 = np.dtype(np.float64)
_REALS = frozenset({float, np.float64})  # the scalars a float64 vector's columns hold
_INTS = frozenset({int})  # what a column's place is made of
_SLICING = (slice, type(Ellipsis), type(None))
_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)
_INT_TYPES = frozenset({int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64})


def _dtype_of(x: Any) -> np.dtype:
    if type(x) is np.ndarray and x.dtype.kind in "fc":
        return x.dtype  # the common case, without the calls below
    return float_dtype(x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype)


def _is_int(i: Any) -> bool:
    # bool is an int to Python but a mask to NumPy (x[True] adds an axis)
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _int_tuple(index: Any) -> IntTuple | None:
    """`index` as a non-empty tuple of ints if it is an int or a tuple of ints (a plain element/row
    lookup, which composes and groups), else None."""
    if _is_int(index):
        return (int(index),)
    if isinstance(index, tuple) and index and all(_is_int(i) for i in index):
        return tuple(int(i) for i in index)
    return None


def _sliced(index: Any) -> bool:
    """Whether `index` is basic indexing with a slice, `...` or None in it (the ints-only ones are grouped):
    it names each position at most once, so `out[index] += value` adds exactly (np.add.at, made for
    repeated positions, is many times slower)."""
    if type(index) is slice:
        return True
    parts = index if type(index) is tuple else (index,)
    return all(type(p) in _SLICING or _is_int(p) for p in parts) and not all(_is_int(p) for p in parts)


def ndarray_of(d: Any) -> np.ndarray:
    """A non-Zero cotangent as an ndarray (no copy unless it is a Scatter)."""
    if type(d) is np.ndarray:
        return d
    return d.densify() if isinstance(d, LAZY) else np.asarray(d)


# ====================================================================== Scatter


class Scatter:
    """The cotangent of an array made of index contributions, summed once by `densify`.

    Its value is `base + sum of (zeros with value added at index)` over `items`. A value may
    itself be a Scatter (the cotangent of `x[i]` when `x[i]` was indexed again): `densify`
    composes int indices so that nested lookups `A[i][j]` stay O(1) per element. The commonest
    items, a float at one element of a float64 array (a loop's `x[i]`, a recursion's `A[i, j]`), are kept
    apart in two lists, `columns` = (places, values), a place an int for a vector and a tuple of ints, one
    per axis, otherwise: no tuple each, summed by one `np.add.at`, types known.
    """

    __slots__ = ("shape", "dtype", "base", "items", "owned", "columns")
    # makes `ndarray + Scatter` return NotImplemented, so Python falls back to Scatter.__radd__
    __array_ufunc__ = None

    def __init__(self, shape: Sequence[int], dtype: Any = np.float64):
        self.shape: IntTuple = shape if type(shape) is tuple else tuple(shape)
        self.dtype: np.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.base: Any = None
        self.items: list[tuple[Any, Any]] = []
        self.owned = False  # base is a full-shape array nobody else refers to (`writes.owned`): added in place
        self.columns: tuple[list[Any], list[float]] | None = None  # a float64 array's element one-hots, if any

    def count(self) -> int:
        """How many index contributions it holds."""
        return len(self.items) + (0 if self.columns is None else len(self.columns[0]))

    def _add_columns(self, out: np.ndarray) -> None:
        at, values = self.columns
        ndim = len(self.shape)
        if ndim == 1:
            where: Any = np.array(at, np.intp)
        else:  # np.array of a list of tuples is many times slower: it finds the nesting first
            where = tuple(np.fromiter(itertools.chain.from_iterable(at), np.intp, ndim * len(at)).reshape(-1, ndim).T)
        np.add.at(out, where, np.array(values, np.float64))

    def _spill(self) -> None:
        """The columns as items (for code that reads items only)."""
        if self.columns is not None:
            self.items.extend(zip(*self.columns))
            self.columns = None

    def __repr__(self) -> str:
        base = "None" if self.base is None else "..."
        return f"Scatter(shape={self.shape}, dtype={self.dtype}, base={base}, items={self.count()})"

    def _add_base(self, other: Any) -> None:
        # `base + other` is a new array: neither operand may be written (dense cotangents are shared)
        if self.owned:
            np.add(self.base, ndarray_of(other), out=self.base)
        else:
            self.base = other if self.base is None else self.base + other

    def fold(self) -> None:
        """Add the items into an owned base, in place: O(their size)."""
        for index, value in self.items:
            if isinstance(value, LAZY):
                value = value.densify()
            if value is Zero or value is None:
                continue
            if type(index) is int or _sliced(index):
                self.base[index] += value
            else:
                np.add.at(self.base, index, value)
        self.items.clear()
        if self.columns is not None:
            self._add_columns(self.base)
            self.columns = None

    def __add__(self, other: Any) -> Any:
        if other is Zero or other is None:
            return self
        if isinstance(other, Scatter):
            # affine use: both are uniquely owned, so extend the longer one (cost: the shorter one)
            big, small = (self, other) if len(self.items) >= len(other.items) else (other, self)
            big.items.extend(small.items)
            if small.columns is not None:
                if big.columns is None or len(big.columns[0]) < len(small.columns[0]):
                    big.columns, small.columns = small.columns, big.columns  # extend the longer columns
                if small.columns is not None:
                    big.columns[0].extend(small.columns[0])
                    big.columns[1].extend(small.columns[1])
            if small.base is not None:
                big._add_base(small.base)
            return big
        self._add_base(other.densify() if type(other) is Outers else other)
        return self

    __radd__ = __add__

    def scaled(self, c: float) -> Any:
        """c times this cotangent, a new one: O(its items), however large the array (dense when the
        items are at least a quarter of its size: that costs O(items) too)."""
        if self.base is None and 4 * self.count() >= math.prod(self.shape):
            out = self.densify()
            out *= c
            return out
        out = Scatter(self.shape, self.dtype)
        out.base = None if self.base is None else self.base * c
        out.items = [(index, scaled(value, c)) for index, value in self.items]
        if self.columns is not None:
            at, values = self.columns
            out.columns = list(at), (np.array(values, np.float64) * c).tolist()
        return out

    def densify(self) -> np.ndarray:
        """A fresh dense array: base plus every item, duplicates accumulating."""
        elements = self._elements()
        if self.base is None:
            out = np.zeros(self.shape, self.dtype)
        else:
            out = np.array(np.broadcast_to(self.base, self.shape), dtype=self.dtype)  # one copy, no zero fill
        if elements is not None:
            np.add.at(out, *elements)
        elif self.items:
            self._add_items(out)
        if self.columns is not None:
            self._add_columns(out)
        return out

    def _elements(self) -> tuple[tuple[np.ndarray, ...], np.ndarray] | None:
        """The items as (index arrays, numbers) for one np.add.at, if each is a whole element `x[i, j, ...]`
        of a real x (ints only, one per axis) with a scalar value: a loop's one-hots, added with no Python
        loop over them; None otherwise."""
        if self.dtype.kind != "f" or not self.items or type(self.items[0][0]) is slice:
            return None
        indices = list(map(_FIRST, self.items))  # not zip(*items): one argument per item
        values = list(map(_SECOND, self.items))
        ndim = len(self.shape)
        # bools are masks to NumPy (x[True, 1] is a row) but become ints in np.array, so look first
        if ndim > 1 and (set(map(type, indices)) != {tuple} or set(map(len, indices)) != {ndim}):
            return None  # a row `x[i]`, or a slice: not one index per axis
        parts = indices if ndim == 1 else list(itertools.chain.from_iterable(indices))
        if not set(map(type, parts)) <= _INT_TYPES:
            return None
        try:
            where = np.fromiter(parts, np.int64, len(parts))  # ints beyond int64 raise, never wrap
            weights = np.array(values, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):  # Zero, a Scatter or an array among the values
            return None
        if weights.shape != (len(indices),):
            return None  # not one number each
        return (where,) if ndim == 1 else tuple(where.reshape(len(indices), ndim).T), weights

    def _add_items(self, out: np.ndarray) -> None:
        """Add the items into `out`: nested Scatters' indices composed onto their parents', then grouped."""
        # index length -> (indices, values); length-1 indices are stored as plain ints
        groups: dict[int, tuple[list[Any], list[Any]]] = {1: ([], [])}
        rows_i, rows_v = groups[1]
        work: list[tuple[IntTuple, list[tuple[Any, Any]]]] = [((), self.items)]
        while work:  # a worklist, not recursion: nested Scatters compose their indices onto the prefix
            prefix, items = work.pop()
            for index, value in items:
                if type(index) is int and not prefix and (type(value) is float or type(value) is np.ndarray):
                    # hot path: `x[i]`, an element of a vector or a row of a matrix (what the general case does)
                    rows_i.append(index)
                    rows_v.append(value)
                    continue
                if type(index) is slice and type(value) is np.ndarray:  # hot path: `x[a:b]`, no repeats
                    out[index] += value
                    continue
                if value is Zero or value is None:
                    continue
                ints = _int_tuple(index)
                if type(value) is Outers:
                    value = value.densify()
                if ints is None:  # only at top level: nested items are queued only if they compose
                    if isinstance(value, Scatter):
                        value = value.densify()
                    if _sliced(index):
                        out[index] += value
                    else:
                        np.add.at(out, index, value)
                    continue
                full = prefix + ints
                if isinstance(value, Scatter):
                    value._spill()
                    nested: list[tuple[Any, Any]] = []
                    other: list[tuple[Any, Any]] = []
                    for item in value.items:
                        (nested if _int_tuple(item[0]) is not None else other).append(item)
                    if nested:
                        work.append((full, nested))  # A[i][j] -> A[i, j]: no child-sized array at all
                    if other:
                        # sliced/fancy child indices do not compose with the parent's (numpy moves the
                        # broadcast axes of separated advanced indices to the front), so densify them
                        rest = Scatter(value.shape, value.dtype)
                        rest.base, rest.items = value.base, other
                        value = rest.densify()
                    elif value.base is not None:
                        value = value.base
                    else:
                        continue
                group = groups.setdefault(len(full), ([], []))
                group[0].append(full[0] if len(full) == 1 else full)
                group[1].append(value)
        self._add_groups(out, groups)

    def _add_groups(self, out: np.ndarray, groups: dict[int, tuple[list[Any], list[Any]]]) -> None:
        """Add the items, grouped by the length of their int indices, into `out`."""
        for length, (indices, values) in groups.items():
            if not values:
                continue
            # one np.add.at per index length: the Python loop above is the only per-item cost
            where = np.array(indices, dtype=np.intp)
            index = (where,) if length == 1 else tuple(where.T)
            sub = self.shape[length:]
            n = len(values)
            try:
                vals = np.array(values, dtype=self.dtype)
            except (ValueError, TypeError):
                vals = None
            if vals is None or vals.shape != (n, *sub):
                vals = np.empty((n, *sub), self.dtype)
                for k, v in enumerate(values):
                    vals[k] = v  # broadcasts scalar or view values
            np.add.at(out, index, vals)


# ====================================================================== Outers


class Outers:
    """The cotangent of a matrix as `base + sum of outer(u, v)` over `lefts` and `rights`, summed by one
    matrix product (`densify`). Cotangents are used affinely, so `+` extends one operand in place."""

    __slots__ = ("shape", "dtype", "base", "lefts", "rights")
    __array_ufunc__ = None  # `ndarray + Outers` falls back to Outers.__radd__, as for Scatter

    FOLD_AT = 256  # terms kept before they are summed into base: memory stays O(FOLD_AT * (m + n))

    def __init__(self, u: np.ndarray, v: np.ndarray):
        self.shape: IntTuple = (len(u), len(v))
        self.dtype: np.dtype = np.result_type(u, v)
        self.base: Any = None
        self.lefts = [u]
        self.rights = [v]

    def __repr__(self) -> str:
        return f"Outers(shape={self.shape}, dtype={self.dtype}, terms={len(self.lefts)})"

    def densify(self) -> np.ndarray:
        """A fresh dense array: base plus every term, one (m, T) @ (T, n) product."""
        if not self.lefts:
            return np.array(np.broadcast_to(self.base, self.shape), self.dtype)
        # every term is a 1-D array of one length: np.array stacks them as np.stack does, 4x faster
        out = np.array(self.lefts).T @ np.array(self.rights)
        return out if self.base is None else out + self.base

    def append(self, u: np.ndarray, v: np.ndarray) -> Outers:
        """self + outer(u, v), in place: one more term (u and v are the vectors `__init__` takes)."""
        self.lefts.append(u)
        self.rights.append(v)
        return self._bounded()

    def _bounded(self) -> Outers:
        """self, its terms summed into base once there are FOLD_AT of them."""
        if len(self.lefts) >= Outers.FOLD_AT:
            self.base = self.densify()
            self.lefts, self.rights = [], []
        return self

    def __add__(self, other: Any) -> Any:
        if other is Zero or other is None:
            return self
        if type(other) is Outers:
            big, small = (self, other) if len(self.lefts) >= len(other.lefts) else (other, self)
            big.lefts.extend(small.lefts)
            big.rights.extend(small.rights)
            if small.base is not None:
                big.base = small.base if big.base is None else big.base + small.base
            return big._bounded()
        if type(other) is Scatter:
            return other + self.densify()
        self.base = other if self.base is None else self.base + other
        return self

    __radd__ = __add__

    def scaled(self, c: float) -> Outers:
        """A new Outers, c times this one (each term's left vector scaled)."""
        out = Outers.__new__(Outers)
        out.shape, out.dtype = self.shape, self.dtype
        out.base = None if self.base is None else self.base * c
        out.lefts = [u * c for u in self.lefts]
        out.rights = list(self.rights)
        return out


LAZY = (Scatter, Outers)  # the cotangents summed when first used: `densify` makes a fresh dense array


# ====================================================================== conversions


@reads_shape_only(1)
def index_ct(d: Any, x: np.ndarray, index: Any) -> Any:
    """Cotangent of `x` given the cotangent `d` of `x[index]`: a one-item Scatter, O(1)."""
    if d is Zero or d is None:
        return Zero
    s = Scatter(x.shape, _dtype_of(x))  # the attribute, not np.shape: O(1) under every cost model
    s.items.append((frozen(index), d))
    return s


def frozen(index: Any) -> Any:
    """An index as it is now, kept by a lazy cotangent: a list or an array of positions copied (the function may
    change it in place after the backward pass made the one-hot, before the one-hot is added up)."""
    kind = type(index)
    if kind is int or kind is slice:
        return index
    if kind is list:
        return np.array(index) if index else np.array(index, dtype=np.intp)
    if kind is np.ndarray:
        return index.copy()
    if kind is tuple:  # a tuple of ints (`A[i, j]`, a recursion's one-hots) as it is: nothing in it can change
        return index if _INTS.issuperset(map(type, index)) else tuple(map(frozen, index))
    return index


@reads_shape_only(1)
def rows_ct(d: Any, x: np.ndarray) -> Any:
    """Cotangent of x in `list(x)` (its rows) from the list's: `Zero` or {position: cotangent}."""
    return Zero if d is Zero else unpacked_ct(d, x)


def unpacked_ct(d: dict, x: np.ndarray) -> Any:
    """Cotangent of `x` unpacked into names (`m, b = theta`: its rows) from theirs, `{position: cotangent}`."""
    s = Scatter(x.shape, _dtype_of(x))
    s.items.extend((k, v) for k, v in d.items() if v is not Zero and v is not None)
    return s if s.items else Zero


def _element(index: Any, ndim: int) -> bool:
    """Whether `index` names one element of an ndim-array by Python ints: a column's place."""
    if ndim == 1:
        return type(index) is int
    return type(index) is tuple and len(index) == ndim and _INTS.issuperset(map(type, index))


def _all_elements(places: list, ndim: int) -> bool:
    """`_element` of each place, at C speed."""
    if ndim == 1:
        return _INTS.issuperset(map(type, places))
    return (
        {tuple} == set(map(type, places))
        and {ndim} == set(map(len, places))
        and _INTS.issuperset(map(type, itertools.chain.from_iterable(places)))
    )


@adds_into
@reads_shape_only(2)
def add_index(ct: Any, d: Any, x: np.ndarray, index: Any) -> Any:
    """ct + index_ct(d, x, index), appending to ct's items when it is already a Scatter (a float at
    one element of a float64 array to its columns: a loop's or a recursion's one-hots)."""
    if type(ct) is Scatter:
        if ct.columns is not None and type(d) in _REALS and _element(index, len(ct.shape)):
            at, values = ct.columns
            at.append(index)
            values.append(d)
            return ct
        if d is not Zero and d is not None and type(d) is not Scatter:
            ct.items.append((frozen(index), d))
            return ct
    elif ct is Zero and type(d) in _REALS and x.dtype is _FLOAT64 and _element(index, len(x.shape)):
        s = Scatter(x.shape, _FLOAT64)
        s.columns = [index], [d]
        return s
    one = index_ct(d, x, index)
    return one if ct is Zero else ct + one


@collects(add_index)
def add_columns(ct: Any, x: np.ndarray, at: list | range, values: list) -> Any:
    """ct plus the one-hots values[k] of x at at[k], in order: a loop's `add_index` calls, collected
    in two lists (`collect`), or the values alone at the positions the loop counted (a range). Floats at
    elements of a float64 array are a Scatter's columns as they are; at a run of positions covering a
    quarter of x or more, the values are written into a dense array (O(its size), within four times theirs)."""
    vector = x.ndim == 1 and x.dtype is _FLOAT64
    if type(at) is range:
        run = at.step == 1 and 0 <= at.start <= at.stop <= x.shape[0] and len(values) == len(at)
        if run and vector and 4 * len(at) >= x.size and _REALS.issuperset(map(type, values)):
            if len(at) == x.shape[0]:
                dense = np.array(values, np.float64)
            else:
                dense = np.zeros(x.shape)
                dense[at.start : at.stop] = values
            return dense if ct is Zero else ct + dense
        at = list(at)
    if x.dtype is _FLOAT64 and _all_elements(at, x.ndim) and _REALS.issuperset(map(type, values)):
        if type(ct) is Scatter:  # x's cotangent: its columns take these as they are, no Scatter to merge
            if ct.columns is None:
                ct.columns = at, values
            else:
                ct.columns[0].extend(at)
                ct.columns[1].extend(values)
            return ct
        one = Scatter(x.shape, _FLOAT64)
        one.columns = at, values
    else:
        one = Scatter(x.shape, _dtype_of(x))
        one.items = [(frozen(i), v) for i, v in zip(at, values) if v is not Zero and v is not None]
        if not one.items:
            return ct
    return one if ct is Zero else ct + one


@reads_shape_only(1)
def dense(d: Any, like: Any) -> np.ndarray:
    """`d` as a dense ndarray shaped like `like` (possibly a read-only broadcast view)."""
    if type(d) is np.ndarray and type(like) is np.ndarray and d.shape == like.shape:
        return d  # the common array case, without the calls below
    if type(d) is float and not isinstance(like, np.ndarray):
        return d  # the common scalar case (a NumPy scalar's cotangent), without array calls
    shape = np.shape(like)
    if d is Zero or d is None:
        return np.zeros(shape, _dtype_of(like))
    d = ndarray_of(d)
    return d if d.shape == shape else broadcast(d, shape)


def as_number(d: Any) -> Any:
    """The number at every element of `dense(u, a)`, u one number at every element (`optimise/uniform_cotangents.py`):
    u itself, but Zero (no cotangent) is 0.0, as `dense` makes zeros of it (the rules after a `dense` may call NumPy
    on it, which takes no Zero)."""
    return 0.0 if d is Zero or d is None else d


@reads_shape_only(1)
def unbroadcast(d: Any, x: Any) -> Any:
    """Cotangent of operand `x` of a broadcasting elementwise operation, from the result's cotangent `d`."""
    if type(d) is np.ndarray and type(x) is np.ndarray and d.shape == x.shape:
        return d  # no broadcasting happened: the common case, without the calls below
    if d is Zero or d is None:
        return Zero
    if not isinstance(x, np.ndarray):
        return d if type(d) is float else python_scalar(ndarray_of(d))
    d = ndarray_of(d)
    if d.shape == x.shape:
        return d
    if d.ndim < x.ndim:  # a scalar-like cotangent of a bigger operand
        return broadcast(d, x.shape)
    lead = d.ndim - x.ndim
    if lead:
        d = d.sum(axis=tuple(range(lead)))
    ones = tuple(i for i, n in enumerate(x.shape) if n == 1 and d.shape[i] != 1)
    if ones:
        d = d.sum(axis=ones, keepdims=True)
    return np.asarray(d)


def parts_ct(d: Any, x: Any) -> dict:
    """The cotangent of `from_parts(x, parts)`'s parts (a gradient taken inside differentiated code,
    `tangents.py`) from the cotangent d of its result, a structure like x: each element of d at its position, in
    `tangent_size`'s order."""
    flat: list[float] = []

    def walk(d: Any, x: Any) -> None:
        parts = parts_of(x)
        if parts is not None:
            keys = list(x) if type(x) is dict else range(len(parts))
            for key, part in zip(keys, parts):
                walk(Zero if d is Zero or d is None else d.get(key, Zero), part)
        elif tangent_size(x):
            flat.extend(np.asarray(dense(d, x), dtype=float).reshape(-1).tolist())

    walk(d, x)
    return dict(enumerate(flat))
