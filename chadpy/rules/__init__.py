"""The derivative rules, one flat file per family; importing this package registers them all."""

from . import linalg, numpy, pointwise, records, scalar, sequences  # noqa: F401
