"""The CHAD rules of calls: of user functions (compositional CHAD: a callee's own CHAD form)
and of function values after closure conversion (Section 9, Appendix C).

A call runs the callee's CHAD form, which returns the result and the values the
callee's backpropagator reads (`pullbacks`); the call's backpropagator runs the
callee's on them and adds the cotangent it gives each argument into that argument's
slot. A function value is the tuple of its captured values, so calling one calls its
closed code on that tuple first: the code's backpropagator gives the tuple's cotangent
(the function value's own) with the arguments'. A call through which no derivative
flows runs the original function.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from ..infer.inference import Spec, default_positions, python_defaults
from ..ir import nodes as ir
from ..ir.types import holds_function, is_active
from ..runtime.cotangents import tuple_part
from ..runtime.scalar import merged, spread_call, unassigned_read
from ..target.expressions import Attr, CallX, DictX, Expr, Item, Lit, Name, Obj, TupleX, call
from ..target.statements import Assign, Def, If, Stmt, Try, unpack
from .context import Rules


def user_call(c: Rules, e: ir.Call, let: ir.Let, depth: int, bp: str | None) -> list[Stmt]:
    """D[g(a1..an)]: g's own CHAD form; its backpropagator returns the arguments' cotangents. `e` is
    the call `let` makes (a method call resolved to the function it calls)."""
    target = let.target
    args = [c.primal(a) for a in e.args]
    callee = c.spec.callees.get(id(e))
    types = [c.type_of(a) for a in e.args] + ([callee.result] if callee else [])
    original = inspect.isfunction(e.fn)  # not code chadpy made (an attribute's call)
    if callee is None or bp is None and original and not any(holds_function(t) for t in types):
        # no derivative flows and no function value passes: run the original function
        return [Assign(ir.target_names(target), _original_call(e.fn, args))]
    rule = "the callee's backpropagator gives its arguments' cotangents"
    return invoke(c, callee, e.args, args, let, depth, bp, f"D[{ir.format_expr(e, '')}]: {rule}")


def _original_call(fn: Callable, args: list[Expr]) -> Expr:
    """`fn` called on the values its parameters were bound to (one per parameter, in order): keyword-only ones
    by name, a `*args` tuple and a `**kwargs` dict spread as Python binds them."""
    params = list(inspect.signature(fn, follow_wrapped=False).parameters.values())
    star = [k for k, p in enumerate(params) if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    f = Obj(fn, fn.__name__)
    if not star:
        positional = [a for p, a in zip(params, args) if p.kind != p.KEYWORD_ONLY]
        keywords = {p.name: a for p, a in zip(params, args) if p.kind == p.KEYWORD_ONLY}
        return CallX(f, positional, keywords)
    positional: Expr = TupleX(
        [a for p, a in zip(params, args) if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    )
    packed = [a for p, a in zip(params, args) if p.kind == p.VAR_POSITIONAL]
    if packed:
        positional = positional + packed[0]
    named = [(p.name, a) for p, a in zip(params, args) if p.kind == p.KEYWORD_ONLY]
    keywords: Expr = DictX([Lit(k) for k, _ in named], [a for _, a in named])
    more = [a for p, a in zip(params, args) if p.kind == p.VAR_KEYWORD]
    if more:
        keywords = call(merged, keywords, more[0])
    return call(spread_call, f, positional, keywords)


def apply(c: Rules, e: ir.Apply, let: ir.Let, depth: int, bp: str | None) -> list[Stmt]:
    """D[f(a1..an)] for a function value f: its closed code on (f.env, a1..an) (Appendix C);
    the code's backpropagator gives the cotangent of f's captured values (f's own) and the arguments'."""
    callee = c.spec.callees.get(id(e))
    if callee is None:  # an argument is a variable not assigned on this path: reading it raises
        catch = c.primal(e.catch) if e.catch is not None else TupleX([])
        return [Assign(ir.target_names(let.target), call(unassigned_read, catch))]
    lifted = isinstance(callee.fn.captured, tuple)
    atoms: list[ir.Atom | tuple[ir.Atom, int]] = ([e.fn] if lifted else []) + e.args
    env = Attr(c.primal(e.fn), "env")
    args = ([env] if lifted else []) + [c.primal(a) for a in e.args]
    if lifted:  # parameters left out take their defaults from the function value
        for k in default_positions(callee.fn, len(e.args)):
            atoms.append((e.fn, k))
            args.append(Item(env, Lit(k)))
    else:  # a module-level function: its own defaults
        for default in python_defaults(callee.fn.pyfunc, len(e.args)):
            atoms.append(ir.Const(default))
            args.append(c.primal(ir.Const(default)))
    rule = (
        f"the code of {ir.format_atom(e.fn)} on its captured values; its backpropagator gives their "
        "cotangent (into its slot) and the arguments'"
        if lifted
        else f"{ir.format_atom(e.fn)} captures nothing: a plain call"
    )
    if e.catch is not None:
        rule += "; only where it completed (the call is attempted)"
    comment = f"D[{ir.format_expr(e, '')}]: {rule}"
    return invoke(c, callee, atoms, args, let, depth, bp, comment, e.catch)


def invoke(
    c: Rules,
    callee: Spec,
    atoms: list,
    args: list[Expr],
    let: ir.Let,
    depth: int,
    bp: str | None,
    comment: str,
    catch: ir.Atom | None = None,
) -> list[Stmt]:
    """Call a specialisation's CHAD form; its backpropagator's cotangents go to `atoms`' slots
    (an (f, k) pair: into component k of function value f's, where a default came from). With `catch`, the
    call is attempted: its value is <completed, the exception caught, the result>."""
    target = let.target
    saved = c.names.fresh("_".join(ir.target_names(target)) + "_saved") if bp is not None else "_"
    result = c.names.fresh("result") if isinstance(target, tuple) else target
    out: list[Stmt] = [Assign([result, saved], CallX(Name(callee.name), args))]
    d: Expr = Name(c.d)
    if catch is not None:
        out = [_attempted(c, out[0], result, c.primal(catch))]
        d = call(tuple_part, d, Lit(2), c.zero(callee.result))  # the result's part of the outcome's cotangent
    if isinstance(target, tuple):
        out.append(Assign(list(target), Name(result)))
    if bp is None:
        return out
    parts = [c.cotangent_name(a) if is_active(t) else "_" for a, t in zip(atoms, callee.sig)]
    body: list[Stmt] = [unpack(parts, CallX(Name(callee.backward), [Name(saved), d]))]
    for a, p in zip(atoms, parts):
        if p != "_" and isinstance(a, tuple):
            body += c.var(a[0], DictX([Lit(a[1])], [Name(p)]))
        elif p != "_":
            body += c.var(a, Name(p))
    if catch is not None:  # the callee's backpropagator where it completed
        body = [If(Item(Name(result), Lit(0)), body, [], comment="where the call completed")]
    if c.rewinds.needed(let):
        c.rewinds.add(body, out)
    out.append(Def(bp, [c.d, c.acc], body, comment=comment, slots=depth))
    return out


def _attempted(c: Rules, called: Assign, outcome: str, catch: Expr) -> Try:
    """`try: value, saved = code(...); outcome = (True, None, value) except catch as e: outcome = (False, e, None)`
    (what the backpropagator reads is None where nothing completed)."""
    value, saved = c.names.fresh("value"), called.targets[1]
    caught = c.names.fresh("exception")
    handler: list[Stmt] = [Assign([outcome], TupleX([Lit(False), Name(caught), Lit(None)]))]
    if saved != "_":
        handler.append(Assign([saved], Lit(None)))
    body = [Assign([value, saved], called.value), Assign([outcome], TupleX([Lit(True), Lit(None), Name(value)]))]
    return Try(body, catch, caught, handler)
