"""Rules for NumPy's shape operations: reshaping, transposing, joining, splitting, flipping, selecting.

Most are linear maps that move elements without changing them: the transposed derivative
moves the cotangent back (`array_rules.py`), summing where an element was copied to several
places (`np.tile`, `np.broadcast_to`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..runtime import shape as shape_rules
from ..target.expressions import CallX, Expr, Obj, call
from .kinds import (
    ARGSORTED,
    BROADCAST_TO,
    DIAG,
    DIAGONAL,
    EXPANDED,
    RAVELED,
    REPEATED,
    SORTED,
    SQUEEZED,
    TILED,
    TRACE,
    at_least,
    concatenate,
    meshgrid,
    reshape,
    same_array,
    split,
    stack,
    stacked,
    take,
)
from .registry import PRIMITIVES, REALS, Primitive, numpy_function

_np = numpy_function
_M = REALS.of(2, 3)  # a matrix the rule test samples
PRIMITIVES.update(
    {
        np.reshape: _np(
            np.reshape,
            lambda d, y, x, shape: [call(shape_rules.reshape_ct, d, x), None],
            ("a", "shape"),
            kind=reshape,
            aliases="view",
            samples=((_M, (3, 2)), (_M, -1)),
        ),
        np.transpose: _np(
            np.transpose,
            lambda d, y, x, axes: [call(shape_rules.transpose_ct, d, x, axes), None],
            ("a", "axes"),
            (None,),
            kind=same_array,
            aliases="view",
            samples=((_M, None), (REALS.of(2, 3, 4), (2, 0, 1))),
        ),
        np.concatenate: _np(
            np.concatenate,
            lambda d, y, xs, axis: [call(shape_rules.concatenate_ct, d, xs, axis), None],
            ("arrays", "axis"),
            (0,),
            kind=concatenate,
            containers=True,
            samples=(([_M, REALS.of(1, 3)], 0), ([_M, _M], 1), ([_M, REALS.of(4)], None)),
        ),
        np.stack: _np(
            np.stack,
            lambda d, y, xs, axis: [call(shape_rules.stack_ct, d, xs, axis), None],
            ("arrays", "axis"),
            (0,),
            kind=stack,
            containers=True,
            samples=(([_M, _M], 0), ([REALS.of(3), REALS.of(3)], -1)),
        ),
    }
)


def _moved(ct: Callable) -> Callable[..., list[Expr | None]]:
    """The rule of `fn(x, *rest)` whose cotangent is `ct(d, x, *rest)` (the rest take none)."""
    return lambda d, y, x, *rest: [call(ct, d, x, *rest), *[None] * len(rest)]


def _flip_along(axis: int) -> Callable[..., list[Expr | None]]:
    return lambda d, y, x: [call(shape_rules.flip_ct, d, x, axis)]


def _shape_op(fn: Callable, ct: Callable, params: tuple[str, ...], defaults: tuple = (), **more) -> Primitive:
    return _np(fn, _moved(ct), params, defaults, **more)


def _joined(fn: Callable, ct: Callable, least: int, samples: tuple) -> Primitive:
    vjp = lambda d, y, xs: [call(ct, d, xs)]  # noqa: E731
    return _np(fn, vjp, ("tup",), kind=stacked(least), containers=True, samples=samples)


_T = REALS.of(2, 3, 4)
_SQ = REALS.of(3, 3)


def _reshaped(d: Expr, y: Expr, x: Expr, *rest: Expr) -> list[Expr | None]:
    """ravel, squeeze, expand_dims, atleast_*d: the same elements, reshaped."""
    return [call(shape_rules.reshape_ct, d, x), *[None] * len(rest)]


_AT_LEAST = ((REALS,), (REALS.of(3),), (_M,))

PRIMITIVES.update(
    {
        np.ravel: _np(np.ravel, _reshaped, ("a",), kind=RAVELED, aliases="view", samples=((_M,), (_T,), (REALS,))),
        np.squeeze: _np(
            np.squeeze,
            _reshaped,
            ("a", "axis"),
            (None,),
            kind=SQUEEZED,
            aliases="view",
            samples=((REALS.of(2, 1, 3), None), (REALS.of(1, 3, 1), (0, 2)), (REALS.of(1, 3), 0)),
        ),
        np.expand_dims: _np(
            np.expand_dims,
            _reshaped,
            ("a", "axis"),
            kind=EXPANDED,
            aliases="view",
            samples=((_M, 1), (_M, (0, 3)), (REALS, 0)),
        ),
        np.atleast_1d: _np(np.atleast_1d, _reshaped, ("arys",), kind=at_least(1), samples=_AT_LEAST),
        np.atleast_2d: _np(np.atleast_2d, _reshaped, ("arys",), kind=at_least(2), samples=_AT_LEAST),
        np.atleast_3d: _np(np.atleast_3d, _reshaped, ("arys",), kind=at_least(3), samples=_AT_LEAST),
        np.swapaxes: _shape_op(
            np.swapaxes,
            shape_rules.swapaxes_ct,
            ("a", "axis1", "axis2"),
            kind=same_array,
            aliases="view",
            samples=((_T, 0, 2), (_M, -1, 0)),
        ),
        np.moveaxis: _shape_op(
            np.moveaxis,
            shape_rules.moveaxis_ct,
            ("a", "source", "destination"),
            kind=same_array,
            aliases="view",
            samples=((_T, 0, -1), (_T, (0, 1), (2, 0))),
        ),
        np.flip: _shape_op(
            np.flip,
            shape_rules.flip_ct,
            ("m", "axis"),
            (None,),
            kind=same_array,
            aliases="view",
            samples=((_M, None), (_M, 1), (_T, (0, 2))),
        ),
        np.fliplr: _np(np.fliplr, _flip_along(1), ("m",), kind=same_array, aliases="view", samples=((_M,),)),
        np.flipud: _np(np.flipud, _flip_along(0), ("m",), kind=same_array, aliases="view", samples=((_M,),)),
        np.rot90: _shape_op(
            np.rot90,
            shape_rules.rot90_ct,
            ("m", "k", "axes"),
            (1, (0, 1)),
            kind=same_array,
            samples=((_M, 1, (0, 1)), (_T, 3, (2, 0)), (_M, -2, (0, 1))),
        ),
        np.roll: _shape_op(
            np.roll,
            shape_rules.roll_ct,
            ("a", "shift", "axis"),
            (None,),
            kind=same_array,
            samples=((_M, 2, None), (_M, -1, 1), (_T, (1, 2), (0, 2))),
        ),
        np.tile: _shape_op(
            np.tile,
            shape_rules.tile_ct,
            ("A", "reps"),
            kind=TILED,
            samples=((_M, 2), (REALS.of(3), (2, 2)), (REALS, 3)),
        ),
        np.repeat: _shape_op(
            np.repeat,
            shape_rules.repeat_ct,
            ("a", "repeats", "axis"),
            (None,),
            kind=REPEATED,
            samples=((_M, 2, None), (_M, np.array([1, 0, 3]), 1), (REALS, 3, None)),
        ),
        np.pad: _shape_op(
            np.pad,
            shape_rules.pad_ct,
            ("array", "pad_width"),
            kind=same_array,
            samples=((_M, 1), (_M, ((1, 0), (2, 1))), (REALS.of(3), (2, 1))),
        ),
        np.diag: _shape_op(
            np.diag,
            shape_rules.diag_ct,
            ("v", "k"),
            (0,),
            kind=DIAG,
            samples=((REALS.of(3), 0), (REALS.of(3), 1), (_M, 0), (_SQ, -1)),
        ),
        np.diagonal: _shape_op(
            np.diagonal,
            shape_rules.diagonal_ct,
            ("a", "offset", "axis1", "axis2"),
            (0, 0, 1),
            kind=DIAGONAL,
            aliases="view",
            samples=((_SQ, 0, 0, 1), (_T, 1, 2, 0)),
        ),
        np.trace: _shape_op(
            np.trace,
            shape_rules.trace_ct,
            ("a", "offset", "axis1", "axis2"),
            (0, 0, 1),
            kind=TRACE,
            samples=((_SQ, 0, 0, 1), (_T, -1, 1, 2), (_M, 1, 0, 1)),
        ),
        np.triu: _shape_op(
            np.triu, shape_rules.triu_ct, ("m", "k"), (0,), kind=same_array, samples=((_SQ, 0), (_M, 1), (_T, -1))
        ),
        np.tril: _shape_op(
            np.tril, shape_rules.tril_ct, ("m", "k"), (0,), kind=same_array, samples=((_SQ, 0), (_M, 1), (_T, -1))
        ),
        np.take: _shape_op(
            np.take,
            shape_rules.take_ct,
            ("a", "indices", "axis"),
            (None,),
            kind=take,
            samples=((_M, np.array([2, 0, 2]), 1), (_M, np.array([[5, 0], [0, 3]]), None), (_M, 4, None)),
        ),
        np.take_along_axis: _shape_op(
            np.take_along_axis,
            shape_rules.take_along_axis_ct,
            ("arr", "indices", "axis"),
            kind=same_array,
            samples=((_M, np.array([[2, 2, 0], [1, 0, 1]]), 1), (_M, np.array([[1], [0]]), 1)),
        ),
        np.broadcast_to: _shape_op(
            np.broadcast_to,
            shape_rules.broadcast_to_ct,
            ("array", "shape"),
            kind=BROADCAST_TO,
            aliases="view",
            samples=((REALS.of(3), (2, 3)), (REALS.of(2, 1), (2, 3)), (REALS, (2,))),
        ),
        np.sort: _shape_op(
            np.sort,
            shape_rules.sort_ct,
            ("a", "axis"),
            (-1,),
            kind=SORTED,
            samples=((REALS.of(5), -1), (_M, 0), (_M, None)),
        ),
        np.argsort: _np(np.argsort, None, ("a", "axis"), (-1,), kind=ARGSORTED),
        np.vstack: _joined(np.vstack, shape_rules.vstack_ct, 2, (([_M, REALS.of(3)],), ([REALS.of(3), REALS.of(3)],))),
        np.hstack: _joined(
            np.hstack, shape_rules.hstack_ct, 1, (([_M, REALS.of(2, 1)],), ([REALS.of(3), REALS.of(2)],))
        ),
        np.column_stack: _joined(np.column_stack, shape_rules.column_stack_ct, 2, (([REALS.of(2), _M],),)),
        np.meshgrid: Primitive(
            "np.meshgrid",
            lambda *a: CallX(Obj(np.meshgrid, "np.meshgrid"), list(a[:-1]), {"indexing": a[-1]}),
            lambda d, y, *a: [call(shape_rules.meshgrid_ct, d, k, a[-1], *a[:-1]) for k in range(len(a) - 1)] + [None],
            (1, None),
            meshgrid,
            params=("xi", "indexing"),
            defaults=("xy",),
            fn=np.meshgrid,
            containers=True,
            samples=(
                (REALS.of(3), REALS.of(2)),
                (REALS.of(3), REALS.of(2), "ij"),
                (REALS.of(2), REALS.of(3), REALS.of(2)),
            ),
        ),
        **{
            fn: _np(
                fn,
                lambda d, y, x, sections, axis: [call(shape_rules.split_ct, d, y, x, axis), None, None],
                ("ary", "indices_or_sections", "axis"),
                (0,),
                kind=split,
                samples=((_M, 2), (REALS.of(6), 3), (_M, 3, 1), *uneven),
            )
            for fn, uneven in ((np.split, ()), (np.array_split, ((REALS.of(5), 2),)))
        },
    }
)
