"""Rules for NumPy's reductions: sums, means, products, extrema, norms, with `axis=` and `keepdims=`.

Each function takes its parameters by the names of NumPy's own signature (`params`); the
transposed derivatives are runtime functions in `array_rules.py`, which put the reduced
axes back (`keepdims`) before broadcasting the cotangent over the operand.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import array_rules
from ..expressions import call
from ..kinds import KindRule, mean_rule, reduction
from ..primitives import PRIMITIVES, REALS, Primitive, numpy_function

_np = numpy_function
_M = REALS.of(2, 3)  # a matrix the rule test samples
_REDUCE = ("a", "axis", "keepdims"), (None, False)
_REDUCES = reduction()
_REDUCE_SAMPLES = ((_M, None, False), (_M, 1, True), (_M, (0, 1), False))


def _reduction(fn: Callable, ct: Callable, with_y: bool = False, kind: KindRule = _REDUCES, **more) -> Primitive:
    if with_y:
        vjp = lambda d, y, x, axis, keepdims: [call(ct, d, y, x, axis, keepdims)]  # noqa: E731
    else:
        vjp = lambda d, y, x, axis, keepdims: [call(ct, d, x, axis, keepdims)]  # noqa: E731
    return _np(fn, vjp, *_REDUCE, kind=kind, samples=_REDUCE_SAMPLES, **more)


PRIMITIVES.update(
    {
        np.sum: _reduction(np.sum, array_rules.sum_ct),
        np.mean: _reduction(np.mean, array_rules.mean_ct, kind=mean_rule),
        np.prod: _reduction(np.prod, array_rules.prod_ct, with_y=True),
        np.max: _reduction(np.max, array_rules.extremum_ct, with_y=True),
        np.min: _reduction(np.min, array_rules.extremum_ct, with_y=True),
        np.amax: _reduction(np.amax, array_rules.extremum_ct, with_y=True),
        np.amin: _reduction(np.amin, array_rules.extremum_ct, with_y=True),
        # the 2-norm (Frobenius for matrices); another `ord` is not supported (it must stay None)
        np.linalg.norm: _np(
            np.linalg.norm,
            lambda d, y, x, axis, keepdims: [call(array_rules.norm_ct, d, y, x, axis, keepdims)],
            ("x", "axis", "keepdims"),
            (None, False),
            kind=reduction("f"),
            samples=_REDUCE_SAMPLES,
        ),
    }
)
