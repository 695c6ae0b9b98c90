"""The derivative rules, one flat file per family; importing this package registers them all."""

from . import numpy, pointwise, records, scalar, sequences  # noqa: F401
