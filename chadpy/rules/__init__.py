"""The derivative rules, one flat file per family; importing this package registers them all."""

from . import numpy, pointwise, records, reductions, scalar, sequences, shape  # noqa: F401
