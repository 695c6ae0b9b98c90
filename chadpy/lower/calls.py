"""Calls: which rule a call goes to, by what its callee is (`Lowerer.expr` sends every call here).

A method of a local value is an update (`xs.append`), a NumPy method, or a method of the value's class; a
method of outside data is run on it; a local function value is applied to its captured values and the
arguments; an outside callee is a loop in disguise (`desugar`), a primitive, a user function (or the Python a
rule is written in: `np.vectorize`), a class's constructor, a SciPy distribution (a record of its parameters:
the frozen distribution), an object with `__call__`, or data run as it is (`resolve`).
"""

from __future__ import annotations

import builtins
import functools
import types

import gast
import numpy as np

from ..ir import nodes as ir
from ..ir.records import constructible, is_record
from ..read import scope
from ..rewrite.as_written import AsWritten
from ..rewrite.tries import Attempt
from ..rules.registry import AS_PYTHON, DATA_METHODS, DISTRIBUTIONS, METHODS, lookup
from ..rules.sequences import OVER_SEQUENCE
from . import as_written, closures, derivatives, desugar, objects, resolve, tries, updates
from .context import Lowering


def lower_call(lw: Lowering, node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """The call `node`, by what its callee is (the cases in the module's docstring, in that order)."""
    func = node.func
    if (
        isinstance(func, gast.Call)
        and isinstance(func.func, (gast.Name, gast.Attribute))
        and not lw.resolver.is_local(func.func, env)
    ):  # `chad.grad(f)(x)`
        path, maker = lw.resolver.callee(func.func, env)
        name = derivatives.operator(maker)
        if name is not None:
            return derivatives.applied(lw, name, func, node, env, lets)
    if isinstance(func, gast.Attribute) and lw.resolver.is_local(func.value, env):
        if scope.updated(node):  # `xs.pop()`, `d.setdefault(k, v)`: an update, and what it returns
            return updates.update(lw, node, env, lets)
        if func.attr in METHODS:  # a NumPy method, a list's or a dict's
            return resolve.numpy_method_call(lw, node, env, lets)
        return objects.method(lw, node, env, lets)  # a method of the value's class
    outside = lw.resolver.data(func.value, env) if isinstance(func, gast.Attribute) else None
    if outside is not None and (is_record(outside[1]) or func.attr in DATA_METHODS) and func.attr not in METHODS:
        return objects.method(lw, node, env, lets)  # of an outside object of a user class, `DIST.logpdf(x)`
    if outside is not None:  # `X.sum()`, `rs.randn(3)`: a method of outside data
        return resolve.data_method_call(lw, outside, node, env, lets)
    if lw.resolver.is_local(func, env):  # a function value: a local name, `fs[i]`, `make(a)`, a lambda
        return apply(lw, lw.argument(func, env, lets), node, env, lets)
    path, fn = lw.resolver.callee(func, env)
    if derivatives.operator(fn) == "jvp":
        return derivatives.jvp(lw, node, env, lets)
    if derivatives.operator(fn) == "hvp":
        return derivatives.hvp(lw, node, env, lets)
    if isinstance(fn, AsWritten):  # a statement run as written
        return as_written.call(lw, fn, node, env, lets)
    if isinstance(fn, Attempt):  # a statement of a `try` body
        return tries.attempt(lw, node, env, lets)
    if isinstance(fn, functools.partial):
        node, fn = resolve.partial_call(lw, fn, path, node, env)
    if isinstance(fn, np.vectorize):  # `v(x)` for an outside `v = np.vectorize(f)`: `vectorized(f, x)`
        node, fn = resolve.vectorized_object(lw, fn, path, node, env, lets)
    fn = as_python(fn)  # `np.vectorize`: Python chadpy reads
    loop = desugar.loop_call(lw, fn, path, node, env, lets)
    if loop is not None:
        return loop
    if fn in (builtins.max, builtins.min) and len(node.args) == 1 and not node.keywords:
        return ir.Prim(OVER_SEQUENCE[fn], [lw.atom(node.args[0], env, lets)])
    prim = lookup(fn)
    if prim is not None:
        return resolve.prim_call(lw, prim, path, node, env, lets)
    if isinstance(fn, types.FunctionType):
        return resolve.user_call(lw, fn, path, node, env, lets)
    if isinstance(fn, type) and constructible(fn):
        return objects.construct(lw, fn, path, node, env, lets)
    if fn in DISTRIBUTIONS:  # `scipy.stats.norm(mu, 1.0)`: a record of its parameters
        return objects.frozen_distribution(lw, DISTRIBUTIONS[fn], path, node, env, lets)
    if is_record(fn):  # an outside object with `__call__`: a call of that method
        return apply(lw, lw.resolver.outside(path, fn, node), node, env, lets)
    return resolve.data_call(lw, fn, path, node, env, lets)


def apply(lw: Lowering, fn: ir.Atom, node: gast.Call, env: dict, lets: list) -> ir.Apply:
    """A call of a function value: its code on its captured values and the arguments.
    Missing trailing arguments take their defaults from the function value (`Apply`)."""
    resolve.no_spread(lw, "a function value", node)
    args = [lw.argument(a, env, lets) for a in node.args]
    if node.keywords:
        args = closures.keyword_arguments(lw, fn, args, node, env, lets)
    return ir.Apply(fn, args)


def as_python(fn: object) -> object:
    """The Python chadpy reads for `fn` where a rule is written so (`np.vectorize`), else fn."""
    try:
        return AS_PYTHON.get(fn, fn)
    except TypeError:  # unhashable
        return fn
