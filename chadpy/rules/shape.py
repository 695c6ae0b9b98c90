"""Rules for NumPy's shape operations: reshaping, transposing, joining, splitting, flipping, selecting.

Most are linear maps that move elements without changing them: the transposed derivative
moves the cotangent back (`runtime/shape.py`), summing where an element was copied to several
places (`np.tile`, `np.broadcast_to`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import ChadTypeError
from ..ir.types import Lst, Tup, VType, arr, is_active, is_number
from ..runtime import numpy as numpy_runtime
from ..runtime import shape as runtime
from ..target.expressions import CallX, Expr, Obj, call
from .kinds import UNKNOWN, KindRule, as_array, part_array, reranked, same_array, shape_rank
from .registry import PRIMITIVES, REALS, Primitive, function, numpy_function
from .tangents import Term, apply, linear, tuple_of

# ---------------------------------------------------------------- kind rules of this family


def reshape_kind(types: list[VType], consts: list[object]) -> VType:
    return arr(shape_rank(types[1]), as_array(types[0]).dtype, True)


def concatenate_kind(types: list[VType], consts: list[object]) -> VType:
    part = part_array(types[0])
    axis = consts[1] if len(consts) > 1 else 0
    return arr(1 if axis is None else part.rank, part.dtype, True)


def meshgrid_kind(types: list[VType], consts: list[object]) -> VType:
    """`np.meshgrid(*xs, indexing=...)`: a tuple of len(xs) arrays of rank len(xs)."""
    xs = [as_array(t) for t in types[:-1]]
    return Tup(tuple(arr(len(xs), x.dtype, True) for x in xs))


def split_kind(types: list[VType], consts: list[object]) -> VType:
    """`np.split(x, ...)`, `np.array_split`: a list of arrays of x's rank."""
    part = as_array(types[0])
    return Lst(arr(part.rank, part.dtype, True))


def stack_kind(types: list[VType], consts: list[object]) -> VType:
    return as_array(types[0])  # the sequence as an array: one more axis than its parts


def _count_of(value: object) -> int:
    return len(value) if isinstance(value, (tuple, list)) else 1


def _int_rank(t: VType) -> int | None:
    """The rank of an index argument: 0 for an int, an int array's, a list's 1."""
    if is_number(t):
        return 0
    return as_array(t).rank


RAVELED = reranked(lambda r, t, c: 1)


SQUEEZED = reranked(lambda r, t, c: None if c[1] is None else r - _count_of(c[1]))


EXPANDED = reranked(lambda r, t, c: r + _count_of(c[1]))


SORTED = reranked(lambda r, t, c: 1 if c[1] is None else r)


ARGSORTED = reranked(lambda r, t, c: 1 if c[1] is None else r, "i")


TILED = reranked(lambda r, t, c: max(r, _count_of(c[1])))


REPEATED = reranked(lambda r, t, c: 1 if c[2] is None else r, reads=(2,))


DIAG = reranked(lambda r, t, c: {1: 2, 2: 1}.get(r), reads=())


DIAGONAL = reranked(lambda r, t, c: r - 1, reads=())


TRACE = reranked(lambda r, t, c: r - 2, reads=())


BROADCAST_TO = reranked(lambda r, t, c: shape_rank(t[1]), reads=())


TAKEN_ALONG = reranked(lambda r, t, c: 1 if c[2] is None else r, reads=())  # axis None: along the raveled array


def take_kind(types: list[VType], consts: list[object]) -> VType:
    """`np.take(a, indices, axis)`: the indices' shape (axis None), else a's with the axis replaced by it."""
    ranks = _int_rank(types[1])
    rule = reranked(lambda r, t, c: None if ranks is None else ranks if c[2] is None else r - 1 + ranks, reads=(2,))
    return rule(types, consts)


def at_least_kind(n: int) -> KindRule:
    """`np.atleast_2d(x)` (of one array): x's rank, at least n."""
    return reranked(lambda r, t, c: max(r, n), reads=())


def stacked_kind(least: int) -> KindRule:
    """`np.vstack(xs)` (least 2), `np.hstack` (1), `np.column_stack` (2): the parts' rank, at least `least`."""

    def rule(types: list[VType], consts: list[object]) -> VType:
        part = part_array(types[0])
        return arr(None if part.rank is None else max(part.rank, least), part.dtype, True)

    return rule


# ---------------------------------------------------------------- tangent rules of this family
# All but sort and partition are linear in their arrays: `linear(0)`, the operation itself on the tangent.


def _float_zeros(x: Term) -> Term:
    """Float zeros of x's shape: the tangent of a part no derivative flows into (an int array's too, which
    `ZEROS` makes None)."""
    return apply(np.zeros_like, x, "float64")


def _parts(dxs: Term, xs: Term) -> Term:
    """The tangents of a sequence's parts: a tuple's has None where a part carries none, made zeros here; a
    list's has every element's."""
    if not isinstance(xs.type, Tup):
        return dxs
    return tuple_of(*(dxs[k] if is_active(t) else _float_zeros(xs[k]) for k, t in enumerate(xs.type.items)))


def _joined_jvp(ts: list, y: Term, xs: Term, *rest: Term, op: Primitive) -> Term:
    """concatenate, stack, vstack, hstack, column_stack: linear in the sequence, so the join of its tangents."""
    return Term(op, [_parts(ts[0], xs), *rest])


def _meshgrid_jvp(ts: list, y: Term, *xs: Term) -> Term:
    """Linear in the vectors jointly (grid k spreads xs[k] only): the grids of their tangents."""
    return apply(np.meshgrid, *(_float_zeros(x) if t is None else t for t, x in zip(ts, xs[:-1])), xs[-1])


def _pad_jvp(ts: list, y: Term, x: Term, width: Term, mode: Term, values: Term) -> Term:
    """Linear in the array and the pad constant jointly; a constant without a tangent pads with the default 0,
    which the modes that take no constant accept."""
    dx = _float_zeros(x) if ts[0] is None else ts[0]
    return apply(np.pad, dx, width, mode, 0 if ts[3] is None else ts[3])


def _sort_jvp(ts: list, y: Term, x: Term, axis: Term) -> Term:
    """The tangent permuted as x is, by a stable argsort: the order `runtime.sort_ct` follows among ties."""
    return apply(np.take_along_axis, ts[0], apply(np.argsort, x, axis, "stable"), axis)


def _partition_jvp(ts: list, y: Term, x: Term, kth: Term, axis: Term) -> Term:
    """The tangent permuted as x is, by the order the VJP puts the cotangent back through."""
    return apply(np.take_along_axis, ts[0], apply(PARTITION_ORDER, y, x, kth, axis), axis)


# where each element of `np.partition(x, kth, axis)` comes from along the axis: an int array of the result's shape
PARTITION_ORDER = function(
    runtime.partition_order, None, (4, 4), kind=reranked(lambda r, t, c: r, "i", reads=()), name="partition_order"
)

_np = numpy_function
_M = REALS.of(2, 3)  # a matrix the rule test samples
PRIMITIVES.update(
    {
        np.reshape: _np(
            np.reshape,
            lambda d, y, x, shape: [call(runtime.reshape_ct, d, x), None],
            ("a", "shape"),
            kind=reshape_kind,
            aliases="view",
            samples=((_M, (3, 2)), (_M, -1)),
            methods=("reshape",),
            jvp=linear(0),
        ),
        np.transpose: _np(
            np.transpose,
            lambda d, y, x, axes: [call(runtime.transpose_ct, d, x, axes), None],
            ("a", "axes"),
            (None,),
            kind=same_array,
            aliases="view",
            samples=((_M, None), (REALS.of(2, 3, 4), (2, 0, 1))),
            methods=("transpose",),
            jvp=linear(0),
        ),
        np.concatenate: _np(
            np.concatenate,
            lambda d, y, xs, axis: [call(runtime.concatenate_ct, d, xs, axis), None],
            ("arrays", "axis"),
            (0,),
            kind=concatenate_kind,
            containers=True,
            samples=(([_M, REALS.of(1, 3)], 0), ([_M, _M], 1), ([_M, REALS.of(4)], None)),
            jvp=_joined_jvp,
        ),
        np.stack: _np(
            np.stack,
            lambda d, y, xs, axis: [call(runtime.stack_ct, d, xs, axis), None],
            ("arrays", "axis"),
            (0,),
            kind=stack_kind,
            containers=True,
            samples=(([_M, _M], 0), ([REALS.of(3), REALS.of(3)], -1)),
            jvp=_joined_jvp,
        ),
    }
)


def _moved(ct: Callable) -> Callable[..., list[Expr | None]]:
    """The rule of `fn(x, *rest)` whose cotangent is `ct(d, x, *rest)` (the rest take none)."""
    return lambda d, y, x, *rest: [call(ct, d, x, *rest), *[None] * len(rest)]


def _flip_along(axis: int) -> Callable[..., list[Expr | None]]:
    return lambda d, y, x: [call(runtime.flip_ct, d, x, axis)]


def _shape_op(
    fn: Callable, ct: Callable, params: tuple[str, ...], defaults: tuple = (), jvp: Callable | None = None, **more
) -> Primitive:
    """An operation that moves, copies and zero-fills x's elements: linear in x, its tangent is itself on x's
    (unless `jvp` says otherwise)."""
    return _np(fn, _moved(ct), params, defaults, jvp=jvp or linear(0), **more)


def _joined(fn: Callable, ct: Callable, least: int, samples: tuple) -> Primitive:
    vjp = lambda d, y, xs: [call(ct, d, xs)]  # noqa: E731
    return _np(fn, vjp, ("tup",), kind=stacked_kind(least), containers=True, samples=samples, jvp=_joined_jvp)


_T = REALS.of(2, 3, 4)
_SQ = REALS.of(3, 3)


def _pad_kind(types: list[VType], consts: list[object]) -> VType:
    """`np.pad(x, pad_width, mode, constant_values)`: an array like x; a derivative flows through the modes
    that copy x's elements only (`runtime.numpy.PAD_MODES`), an error at the call for the others. Active where
    the constant is too (padding a constant array with `c`)."""
    x = as_array(types[0])
    mode = consts[2]
    if (x.active or is_active(types[3])) and mode is not UNKNOWN and mode not in numpy_runtime.PAD_MODES:
        modes = ", ".join(map(repr, numpy_runtime.PAD_MODES))
        raise ChadTypeError(f"the derivative of `np.pad` with mode={mode!r} is not supported (only {modes})")
    return arr(x.rank, x.dtype, True)


def _padding() -> Primitive:
    """`np.pad`, whose `constant_values` NumPy takes through `**kwargs`: the registrar's signature is made
    of `params` (no `fn`), so that the call binds it by name."""
    pad = _np(
        np.pad,
        lambda d, y, x, width, mode, values: [
            call(numpy_runtime.pad_ct, d, x, width, mode, values, 0),
            None,
            None,
            call(numpy_runtime.pad_ct, d, x, width, mode, values, 3),
        ],
        ("array", "pad_width", "mode", "constant_values"),
        ("constant", 0),
        kind=_pad_kind,
        samples=(
            (_M, 1, "constant", 0),
            (_M, ((1, 0), (2, 1)), "constant", REALS),
            (_M, ((1, 2), (0, 1)), "constant", REALS.of(2, 2)),
            (REALS.of(3), (2, 1), "constant", REALS.of(2)),
            *((_M, ((2, 1), (1, 3)), mode) for mode in ("edge", "reflect", "symmetric", "wrap")),
            (REALS.of(3), (5, 4), "reflect"),
            (REALS.of(2), 5, "symmetric"),
        ),
        jvp=_pad_jvp,
    )
    pad.fn = None
    return pad


def _reshaped(d: Expr, y: Expr, x: Expr, *rest: Expr) -> list[Expr | None]:
    """ravel, squeeze, expand_dims, atleast_*d: the same elements, reshaped."""
    return [call(runtime.reshape_ct, d, x), *[None] * len(rest)]


_AT_LEAST = ((REALS,), (REALS.of(3),), (_M,))

PRIMITIVES.update(
    {
        np.ravel: _np(
            np.ravel,
            _reshaped,
            ("a",),
            kind=RAVELED,
            aliases="view",
            samples=((_M,), (_T,), (REALS,)),
            methods=("flatten", "ravel"),
            jvp=linear(0),
        ),
        np.squeeze: _np(
            np.squeeze,
            _reshaped,
            ("a", "axis"),
            (None,),
            kind=SQUEEZED,
            aliases="view",
            samples=((REALS.of(2, 1, 3), None), (REALS.of(1, 3, 1), (0, 2)), (REALS.of(1, 3), 0)),
            methods=("squeeze",),
            jvp=linear(0),
        ),
        np.expand_dims: _np(
            np.expand_dims,
            _reshaped,
            ("a", "axis"),
            kind=EXPANDED,
            aliases="view",
            samples=((_M, 1), (_M, (0, 3)), (REALS, 0)),
            jvp=linear(0),
        ),
        np.atleast_1d: _np(
            np.atleast_1d, _reshaped, ("arys",), kind=at_least_kind(1), samples=_AT_LEAST, jvp=linear(0)
        ),
        np.atleast_2d: _np(
            np.atleast_2d, _reshaped, ("arys",), kind=at_least_kind(2), samples=_AT_LEAST, jvp=linear(0)
        ),
        np.atleast_3d: _np(
            np.atleast_3d, _reshaped, ("arys",), kind=at_least_kind(3), samples=_AT_LEAST, jvp=linear(0)
        ),
        np.swapaxes: _shape_op(
            np.swapaxes,
            runtime.swapaxes_ct,
            ("a", "axis1", "axis2"),
            kind=same_array,
            aliases="view",
            samples=((_T, 0, 2), (_M, -1, 0)),
            methods=("swapaxes",),
        ),
        np.moveaxis: _shape_op(
            np.moveaxis,
            runtime.moveaxis_ct,
            ("a", "source", "destination"),
            kind=same_array,
            aliases="view",
            samples=((_T, 0, -1), (_T, (0, 1), (2, 0))),
        ),
        np.flip: _shape_op(
            np.flip,
            runtime.flip_ct,
            ("m", "axis"),
            (None,),
            kind=same_array,
            aliases="view",
            samples=((_M, None), (_M, 1), (_T, (0, 2))),
        ),
        np.fliplr: _np(
            np.fliplr, _flip_along(1), ("m",), kind=same_array, aliases="view", samples=((_M,),), jvp=linear(0)
        ),
        np.flipud: _np(
            np.flipud, _flip_along(0), ("m",), kind=same_array, aliases="view", samples=((_M,),), jvp=linear(0)
        ),
        np.rot90: _shape_op(
            np.rot90,
            runtime.rot90_ct,
            ("m", "k", "axes"),
            (1, (0, 1)),
            kind=same_array,
            samples=((_M, 1, (0, 1)), (_T, 3, (2, 0)), (_M, -2, (0, 1))),
        ),
        np.roll: _shape_op(
            np.roll,
            runtime.roll_ct,
            ("a", "shift", "axis"),
            (None,),
            kind=same_array,
            samples=((_M, 2, None), (_M, -1, 1), (_T, (1, 2), (0, 2))),
        ),
        np.tile: _shape_op(
            np.tile,
            runtime.tile_ct,
            ("A", "reps"),
            kind=TILED,
            samples=((_M, 2), (REALS.of(3), (2, 2)), (REALS, 3)),
        ),
        np.repeat: _shape_op(
            np.repeat,
            runtime.repeat_ct,
            ("a", "repeats", "axis"),
            (None,),
            kind=REPEATED,
            samples=((_M, 2, None), (_M, np.array([1, 0, 3]), 1), (REALS, 3, None)),
            methods=("repeat",),
        ),
        np.pad: _padding(),
        np.diag: _shape_op(
            np.diag,
            runtime.diag_ct,
            ("v", "k"),
            (0,),
            kind=DIAG,
            samples=((REALS.of(3), 0), (REALS.of(3), 1), (_M, 0), (_SQ, -1)),
        ),
        np.diagonal: _shape_op(
            np.diagonal,
            runtime.diagonal_ct,
            ("a", "offset", "axis1", "axis2"),
            (0, 0, 1),
            kind=DIAGONAL,
            aliases="view",
            samples=((_SQ, 0, 0, 1), (_T, 1, 2, 0)),
            methods=("diagonal",),
        ),
        np.trace: _shape_op(
            np.trace,
            runtime.trace_ct,
            ("a", "offset", "axis1", "axis2"),
            (0, 0, 1),
            kind=TRACE,
            samples=((_SQ, 0, 0, 1), (_T, -1, 1, 2), (_M, 1, 0, 1)),
            methods=("trace",),
        ),
        np.triu: _shape_op(
            np.triu, runtime.triu_ct, ("m", "k"), (0,), kind=same_array, samples=((_SQ, 0), (_M, 1), (_T, -1))
        ),
        np.tril: _shape_op(
            np.tril, runtime.tril_ct, ("m", "k"), (0,), kind=same_array, samples=((_SQ, 0), (_M, 1), (_T, -1))
        ),
        np.take: _shape_op(
            np.take,
            runtime.take_ct,
            ("a", "indices", "axis"),
            (None,),
            kind=take_kind,
            samples=((_M, np.array([2, 0, 2]), 1), (_M, np.array([[5, 0], [0, 3]]), None), (_M, 4, None)),
            methods=("take",),
        ),
        np.take_along_axis: _shape_op(
            np.take_along_axis,
            runtime.take_along_axis_ct,
            ("arr", "indices", "axis"),
            kind=TAKEN_ALONG,
            samples=((_M, np.array([[2, 2, 0], [1, 0, 1]]), 1), (_M, np.array([[1], [0]]), 1)),
        ),
        np.broadcast_to: _shape_op(
            np.broadcast_to,
            runtime.broadcast_to_ct,
            ("array", "shape"),
            kind=BROADCAST_TO,
            aliases="view",
            samples=((REALS.of(3), (2, 3)), (REALS.of(2, 1), (2, 3)), (REALS, (2,))),
        ),
        np.sort: _shape_op(
            np.sort,
            runtime.sort_ct,
            ("a", "axis"),
            (-1,),
            kind=SORTED,
            samples=((REALS.of(5), -1), (_M, 0), (_M, None)),
            methods=("sort",),
            jvp=_sort_jvp,
        ),
        np.argsort: _np(np.argsort, None, ("a", "axis", "kind"), (-1, None), kind=ARGSORTED, methods=("argsort",)),
        np.partition: _np(
            np.partition,
            lambda d, y, x, kth, axis: [call(numpy_runtime.partition_ct, d, y, x, kth, axis), None, None],
            ("a", "kth", "axis"),
            (-1,),
            kind=SORTED,
            samples=((REALS.of(6), 2, -1), (REALS.of(6), (1, 4), -1), (_M, 1, 0), (_M, 3, None), (_T, -1, 1)),
            jvp=_partition_jvp,
        ),
        np.argpartition: _np(
            np.argpartition, None, ("a", "kth", "axis"), (-1,), kind=ARGSORTED, methods=("argpartition",)
        ),
        np.vstack: _joined(np.vstack, runtime.vstack_ct, 2, (([_M, REALS.of(3)],), ([REALS.of(3), REALS.of(3)],))),
        np.hstack: _joined(np.hstack, runtime.hstack_ct, 1, (([_M, REALS.of(2, 1)],), ([REALS.of(3), REALS.of(2)],))),
        np.column_stack: _joined(np.column_stack, runtime.column_stack_ct, 2, (([REALS.of(2), _M],),)),
        np.meshgrid: Primitive(
            "np.meshgrid",
            lambda *a: CallX(Obj(np.meshgrid, "np.meshgrid"), list(a[:-1]), {"indexing": a[-1]}),
            lambda d, y, *a: [call(runtime.meshgrid_ct, d, k, a[-1], *a[:-1]) for k in range(len(a) - 1)] + [None],
            (1, None),
            meshgrid_kind,
            params=("xi", "indexing"),
            defaults=("xy",),
            fn=np.meshgrid,
            containers=True,
            jvp=_meshgrid_jvp,
            samples=(
                (REALS.of(3), REALS.of(2)),
                (REALS.of(3), REALS.of(2), "ij"),
                (REALS.of(2), REALS.of(3), REALS.of(2)),
            ),
        ),
        **{
            fn: _np(
                fn,
                lambda d, y, x, sections, axis: [call(runtime.split_ct, d, y, x, axis), None, None],
                ("ary", "indices_or_sections", "axis"),
                (0,),
                kind=split_kind,
                samples=((_M, 2), (REALS.of(6), 3), (_M, 3, 1), *uneven),
                jvp=linear(0),
            )
            for fn, uneven in ((np.split, ()), (np.array_split, ((REALS.of(5), 2),)))
        },
    }
)
