"""chadpy: reverse-mode automatic differentiation of Python by source transformation,
with the Efficient CHAD algorithm (Smeding & Vakar)."""

from .api import Reverse, grad, reverse, source, value_and_grad, vjp
from .errors import ChadError, ChadTypeError, UnknownFunction, UnsupportedSyntax
from .primitives import defvjp
from .runtime import Zero

__all__ = [
    "ChadError",
    "ChadTypeError",
    "Reverse",
    "UnknownFunction",
    "UnsupportedSyntax",
    "Zero",
    "defvjp",
    "grad",
    "reverse",
    "source",
    "value_and_grad",
    "vjp",
]
__version__ = "0.1.0"
