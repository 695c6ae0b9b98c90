"""Rules for NumPy's shape operations: reshaping, transposing, joining, splitting, flipping, selecting.

Most are linear maps that move elements without changing them: the transposed derivative
moves the cotangent back (`array_rules.py`), summing where an element was copied to several
places (`np.tile`, `np.broadcast_to`).
"""

from __future__ import annotations

import numpy as np

from .. import array_rules
from ..expressions import call
from ..kinds import concatenate, reshape, same_array, stack
from ..primitives import PRIMITIVES, REALS, numpy_function

_np = numpy_function
_M = REALS.of(2, 3)  # a matrix the rule test samples
PRIMITIVES.update(
    {
        np.reshape: _np(
            np.reshape,
            lambda d, y, x, shape: [call(array_rules.reshape_ct, d, x), None],
            ("a", "shape"),
            kind=reshape,
            aliases="view",
            samples=((_M, (3, 2)), (_M, -1)),
        ),
        np.transpose: _np(
            np.transpose,
            lambda d, y, x, axes: [call(array_rules.transpose_ct, d, x, axes), None],
            ("a", "axes"),
            (None,),
            kind=same_array,
            aliases="view",
            samples=((_M, None), (REALS.of(2, 3, 4), (2, 0, 1))),
        ),
        np.concatenate: _np(
            np.concatenate,
            lambda d, y, xs, axis: [call(array_rules.concatenate_ct, d, xs, axis), None],
            ("arrays", "axis"),
            (0,),
            kind=concatenate,
            containers=True,
            samples=(([_M, REALS.of(1, 3)], 0), ([_M, _M], 1), ([_M, REALS.of(4)], None)),
        ),
        np.stack: _np(
            np.stack,
            lambda d, y, xs, axis: [call(array_rules.stack_ct, d, xs, axis), None],
            ("arrays", "axis"),
            (0,),
            kind=stack,
            containers=True,
            samples=(([_M, _M], 0), ([REALS.of(3), REALS.of(3)], -1)),
        ),
    }
)
