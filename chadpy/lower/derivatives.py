"""Derivatives taken inside differentiated code (`lower/calls.py` sends them here).

`chad.jvp(f, primals, tangents)` is the `Jvp` construct: inference resolves it to the call of f's forward form,
code like any other, so the derivative of a function that takes a derivative is the derivative of that code, and
an inner derivative's perturbation is a value of its own, never confused with an outer one (Siskind and
Pearlmutter's d/dx [x (d/dy (x + y))] = 1). `chad.grad(f, argnums)(*args)` and `chad.value_and_grad(...)(*args)`
are calls of the Python written for them (`registry.DERIVATIVE_HELPERS`, from `api/forward.py`): one `jvp` per
element of the argument, so such a gradient costs that many evaluations of f.
"""

from __future__ import annotations

import gast

from ..errors import UnsupportedSyntax
from ..ir import nodes as ir
from ..rules.registry import DERIVATIVE_HELPERS
from .context import Lowering


def operator(fn: object) -> str | None:
    """The name of the derivative operator a callee is (`jvp`, `grad`, ...), if it is one of chadpy's."""
    try:
        return getattr(fn, "__chad_operator__", None)
    except Exception:  # an object whose attributes raise: not an operator
        return None


def jvp(lw: Lowering, node: gast.Call, env: dict, lets: list) -> ir.Jvp:
    """`chad.jvp(f, primals, tangents)`: the `Jvp` construct."""
    if node.keywords or len(node.args) != 3:
        raise lw.error(
            UnsupportedSyntax, "chad.jvp(f, primals, tangents) inside differentiated code takes three arguments", node
        )
    fn = lw.argument(node.args[0], env, lets)
    return ir.Jvp(fn, lw.atom(node.args[1], env, lets), lw.atom(node.args[2], env, lets))


def applied(lw: Lowering, name: str, inner: gast.Call, node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """`chad.grad(f, argnums)(*args)`, `chad.value_and_grad(f, argnums)(*args)`: calls of the Python written for
    them, one per argument differentiated (a tuple of them for a tuple `argnums`)."""
    argnums = _argnums(lw, inner)
    if node.keywords:
        raise lw.error(UnsupportedSyntax, f"a function chad.{name} made is called with positional arguments here", node)
    fn = lw.argument(inner.args[0], env, lets)
    if len(node.args) == 1 and isinstance(node.args[0], gast.Starred):
        args = lw.atom(node.args[0].value, env, lets)
    else:
        args = lw.let(ir.MakeTuple([lw.argument(a, env, lets) for a in node.args]), lets, "args")
    helper = DERIVATIVE_HELPERS[_HELPER[name]]  # by argument position: `args[k]` has its own kind
    grads = [lw.let(ir.Call(helper(k), [fn, args]), lets, name) for k in _positions(argnums)]
    out = grads[0] if isinstance(argnums, int) else lw.let(ir.MakeTuple(grads), lets, "grads")
    if name != "value_and_grad":
        return out
    value = lw.let(ir.Call(DERIVATIVE_HELPERS["value"], [fn, args]), lets, "value")
    return ir.MakeTuple([value, out])


# the Python each derivative operator applied inside differentiated code is (`registry.DERIVATIVE_HELPERS`)
_HELPER = {
    "grad": "grad",
    "value_and_grad": "grad",
    "jacfwd": "jacobian",
    "jacrev": "jacobian",
    "jacobian": "jacobian",
    "hessian": "hessian",
}


def hvp(lw: Lowering, node: gast.Call, env: dict, lets: list) -> ir.Call:
    """`chad.hvp(f, primals, tangents)`: the Python written for it (forward over forward mode)."""
    if node.keywords or len(node.args) != 3:
        raise lw.error(
            UnsupportedSyntax, "chad.hvp(f, primals, tangents) inside differentiated code takes three arguments", node
        )
    fn = lw.argument(node.args[0], env, lets)
    return ir.Call(DERIVATIVE_HELPERS["hvp"], [fn, lw.atom(node.args[1], env, lets), lw.atom(node.args[2], env, lets)])


def _argnums(lw: Lowering, inner: gast.Call) -> int | tuple[int, ...]:
    """The `argnums` of `chad.grad(f, argnums)`, a literal int or tuple of ints (0 if not given)."""
    given = inner.args[1:] + [k.value for k in inner.keywords if k.arg == "argnums"]
    if any(k.arg != "argnums" for k in inner.keywords) or len(given) > 1:
        raise lw.error(
            UnsupportedSyntax, "inside differentiated code, chad.grad takes a function and argnums only", inner
        )
    if not given:
        return 0
    try:
        argnums = _literal(given[0])
    except ValueError:
        raise lw.error(
            UnsupportedSyntax, "argnums inside differentiated code is an int or a tuple of ints written out", inner
        ) from None
    return argnums


def _literal(node: gast.expr) -> int | tuple[int, ...]:
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, gast.Tuple) and all(isinstance(e, gast.Constant) and type(e.value) is int for e in node.elts):
        return tuple(e.value for e in node.elts)
    raise ValueError(node)


def _positions(argnums: int | tuple[int, ...]) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else argnums
