"""chadpy: reverse-mode automatic differentiation of Python by source transformation,
with the Efficient CHAD algorithm (Smeding & Vakar)."""

from . import rules  # noqa: F401  (registers the derivative rules)
from .api import CostReport, Reverse, cost_report, grad, reverse, source, value_and_grad, vjp
from .errors import ChadError, ChadTypeError, UnknownFunction, UnsupportedSyntax
from .primitives import defvjp
from .records import register_pytree
from .runtime import Zero
from .stages import STAGES

__all__ = [
    "STAGES",
    "ChadError",
    "CostReport",
    "ChadTypeError",
    "Reverse",
    "UnknownFunction",
    "UnsupportedSyntax",
    "Zero",
    "cost_report",
    "defvjp",
    "grad",
    "register_pytree",
    "reverse",
    "source",
    "value_and_grad",
    "vjp",
]
__version__ = "0.1.0"
