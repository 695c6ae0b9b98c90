"""chadpy: reverse-mode automatic differentiation of Python by source transformation,
with the Efficient CHAD algorithm (Smeding & Vakar)."""

from . import rules  # noqa: F401  (registers the derivative rules)
from .api.decorated import Reverse, reverse
from .api.forward import hessian, hvp, jacfwd, jacobian, jacrev, jvp
from .api.transforms import CostReport, cost_report, grad, source, value_and_grad, vjp
from .chad.stages import STAGES
from .errors import ChadError, ChadTypeError, UnknownFunction, UnsupportedSyntax
from .ir.records import register_pytree
from .rules.registry import defvjp
from .runtime.cotangents import Zero
from .runtime.tangents import stop_gradient

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
    "hessian",
    "hvp",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "stop_gradient",
    "register_pytree",
    "reverse",
    "source",
    "value_and_grad",
    "vjp",
]
__version__ = "0.1.0"
