"""The derivative rules, one flat file per family; importing this package registers them all.

SciPy is optional: its rules register only when it imports."""

from . import linalg, numpy, pointwise, records, reductions, scalar, sequences, shape, tangents  # noqa: F401

try:
    from . import special, stats  # noqa: F401
except ImportError:  # no SciPy: its functions are run as data (an error if a derivative flows into one)
    pass
