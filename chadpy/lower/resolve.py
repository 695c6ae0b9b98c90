"""Calls: what each call a function makes is (its callee's name is `outside.Resolver`'s).

A call is resolved by what its callee is (`Lowering.call` picks the case): a
primitive becomes a `Prim` with its arguments bound by the real function's
signature, a user function a `Call`, a method of a local value the NumPy function
it is, and anything else with neither rule nor source is run as data (`data_call`):
its result carries no derivative, and a derivative flowing into it is an error.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable

import gast
import numpy as np

from ..errors import ChadError, Loc, UnknownFunction, UnsupportedSyntax
from ..ir import nodes as ir
from ..ir.types import OBJECT
from ..read.scope import UPDATING
from ..rules.kinds import fixed
from ..rules.registry import METHODS, OPERATORS, PRIMITIVES, Primitive, is_default, lookup
from ..rules.scalar import BINARY_FOLDS
from ..rules.sequences import CONCAT, DICT_GET, ITEM_OR, KEYS_WITHIN, MERGED_KEYWORDS
from ..runtime.scalar import check, spread_call
from ..target.expressions import CallX, Expr, Obj, call
from .context import Lowering

# Builtins that read the calling frame: never run as data (they could see values a derivative flows through).
FRAME_READERS = (eval, exec, compile, globals, locals, vars)


# ---------------------------------------------------------------- calls, by what the callee is


def numpy_method_call(lw: Lowering, node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """`x.sum(axis=0)`, `x.reshape(2, 3)`, `d.values()`: the function the method is."""
    method = node.func.attr
    if method in UPDATING:
        raise lw.error(
            UnsupportedSyntax,
            f"`.{method}()` changes its container in place: supported on a list or dict the function made, "
            f"named by a variable (`xs.{method}(...)`)",
            node,
        )
    if method not in METHODS:
        raise lw.error(UnsupportedSyntax, f"the method `.{method}()` is not supported", node)
    fn = METHODS[method]
    args = list(node.args)
    if fn in (np.reshape, np.transpose) and len(args) > 1:  # x.reshape(2, 3) is np.reshape(x, (2, 3))
        args = [gast.copy_location(gast.Tuple(args, gast.Load()), node)]
    call = gast.copy_location(gast.Call(node.func, [node.func.value, *args], node.keywords), node)
    return prim_call(lw, PRIMITIVES[fn], f".{method}", call, env, lets)


def partial_call(lw: Lowering, p: functools.partial, path: str, node: gast.Call, env: dict) -> tuple[gast.Call, object]:
    """`p(x, k=v)` for an outside `p = functools.partial(f, a, j=b)` is `f(a, x, j=b, k=v)`: the call of
    `f` it stands for (resolved like any other), its bound arguments data read from `p`."""
    bound = []
    for k, value in enumerate(p.args):
        bound.append(synthetic(lw, ir.Ref(f"{path}.args[{k}]", value), env, "bound"))
    keywords = [
        gast.keyword(name, synthetic(lw, ir.Ref(f"{path}.keywords[{name!r}]", value), env, name))
        for name, value in p.keywords.items()
    ]
    call = gast.copy_location(gast.Call(node.func, [*bound, *node.args], [*keywords, *node.keywords]), node)
    return call, getattr(p.func, "__chad_wrapped__", p.func)


def synthetic(lw: Lowering, value: ir.Atom, env: dict, hint: str) -> gast.Name:
    """An evaluated value under a fresh name, for code the front end writes (desugaring, partials)."""
    name = lw.names.fresh(hint)
    env[name] = value
    return gast.Name(name, gast.Load(), None, None)


def data_method_call(lw: Lowering, data: tuple[str, object], node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """A method of outside `data` (its path and value): `X.sum()` of an array is the NumPy function it
    is; any other (`rs.randn(3)` of a `RandomState`) is run as it is, a data call."""
    if node.func.attr in METHODS:
        return numpy_method_call(lw, node, env, lets)
    path, value = data
    if not hasattr(value, node.func.attr):
        raise lw.error(ChadError, f"`{path}` has no attribute `{node.func.attr}`", node.func)
    return data_call(lw, getattr(value, node.func.attr), f"{path}.{node.func.attr}", node, env, lets)


def no_spread(lw: Lowering, path: str, node: gast.Call) -> None:
    """Star-arguments are spread over the parameters of a function chadpy reads (`spread`), not others'."""
    if any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise lw.error(
            UnsupportedSyntax,
            f"star-arguments (`*xs`, `**kw`) in a call of `{path}` are not supported: only in calls of Python "
            "functions chadpy reads (and `zip(*rows)`)",
            node,
        )


def prim_call(lw: Lowering, prim: Primitive, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """A call of a primitive: `min(a, b, c)` folds into two calls of the binary one."""
    no_spread(lw, path, node)
    args = [lw.atom(a, env, lets) for a in node.args]
    if prim.params is not None:
        kwargs = {k.arg: lw.atom(k.value, env, lets) for k in node.keywords}
        return ir.Prim(prim, bind_arguments(lw, prim, path, args, kwargs, node))
    least, most = prim.nargs
    if node.keywords:
        raise lw.error(UnsupportedSyntax, f"keyword arguments to `{path}` are not supported", node)
    if prim in BINARY_FOLDS and len(args) > 2:
        acc = args[0]
        for a in args[1:-1]:
            acc = lw.let(ir.Prim(prim, [acc, a]), lets, path)
        return ir.Prim(prim, [acc, args[-1]])
    if len(args) < least or (most is not None and len(args) > most):
        raise lw.error(UnsupportedSyntax, f"`{path}` with {len(args)} arguments is not supported", node)
    return ir.Prim(prim, args)


def bind_arguments(lw: Lowering, prim: Primitive, path: str, args: list, kwargs: dict, node: gast.AST) -> list[ir.Atom]:
    """A call's arguments in the order of the primitive's `params`, bound by the real function's
    signature (defaults filled in); every other parameter must be left at its default."""
    signature = prim.signature()
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise lw.error(ChadError, f"`{path}`: {e}", node) from None
    for name, value in bound.arguments.items():
        param = signature.parameters[name]
        if name in prim.params or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) and not value:
            continue
        if not (isinstance(value, (ir.Const, ir.Ref)) and is_default(value.value, param.default)):
            taken = ", ".join(f"`{p}`" for p in prim.params)
            raise lw.error(
                UnsupportedSyntax,
                f"the argument `{name}` of `{path}` is not supported (only its default; chadpy handles {taken})",
                node,
            )
    out: list[ir.Atom] = []
    try:
        for p in prim.params:
            if signature.parameters[p].kind is inspect.Parameter.VAR_POSITIONAL:
                out += bound.arguments.get(p, ())  # `print(x, y, sep=...)`: x and y in its place
            else:
                out.append(bound.arguments[p] if p in bound.arguments else ir.Const(prim.default(p)))
    except TypeError as e:
        raise lw.error(ChadError, f"`{path}`: {e}", node) from None
    return out


def user_call(lw: Lowering, fn: types.FunctionType, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """A call of a user function: its arguments bound by its signature, defaults as constants; its
    star-parameters get a tuple (`*args`) and a dict (`**kwargs`) of what they collect."""
    signature = inspect.signature(fn)
    args, kwargs, rest = spread(lw, signature, path, node, env, lets)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise lw.error(ChadError, f"call of `{path}`: {e}", node) from None
    bound.apply_defaults()
    atoms = []
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            if rest is None or value:  # `rest`: what a star-argument gives beyond the named parameters
                items = lw.let(ir.MakeTuple(list(value)), lets, name)
                value = items if rest is None else lw.let(ir.Prim(CONCAT, [items, rest]), lets, name)
            else:
                value = rest
        elif kind is inspect.Parameter.VAR_KEYWORD:
            value = lw.let(ir.MakeDict([ir.Const(k) for k in value], list(value.values())), lets, name)
        atoms.append(value if isinstance(value, (ir.Var, ir.Const, ir.Ref)) else ir.Const(value))
    return ir.Call(fn, atoms)


def spread(
    lw: Lowering, signature: inspect.Signature, path: str, node: gast.Call, env: dict, lets: list
) -> tuple[list[ir.Atom], dict[str, ir.Atom], ir.Atom | None]:
    """A call's arguments for a callee of this signature, star-arguments spread over its parameters:
    `*xs` fills the positional parameters left (those with defaults where xs is long enough; its length
    is checked when the call runs) and the rest goes to the callee's `*args` (returned last, as a tuple);
    `**kw` gives each parameter not given otherwise (`kw[name]`, or `kw.get(name, default)`), and may
    hold no other key."""
    positional = [
        p.name for p in signature.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    collects = {p.kind for p in signature.parameters.values()}
    args: list[ir.Atom] = []
    rest: ir.Atom | None = None
    for k, a in enumerate(node.args):
        if not isinstance(a, gast.Starred):
            if rest is not None:
                raise lw.error(UnsupportedSyntax, "a positional argument after a star-argument is not supported", a)
            args.append(lw.argument(a, env, lets))
            continue
        seq = lw.atom(a.value, env, lets)
        left = max(len(positional) - len(args), 0)
        if left and k != len(node.args) - 1:
            raise lw.error(UnsupportedSyntax, "a star-argument that fills parameters must come last", a)
        if inspect.Parameter.VAR_POSITIONAL not in collects:
            n = lw.let(ir.Prim(PRIMITIVES[len], [seq]), lets, "n")
            _check(lw, ir.Prim(OPERATORS["<="], [n, ir.Const(left)]), f"`{path}` takes {left} more arguments", lets)
        for j, name in enumerate(positional[len(args) : len(args) + left]):
            default = signature.parameters[name].default
            item = (
                ir.Index(seq, ir.Const(j))
                if default is inspect.Parameter.empty
                else ir.Prim(ITEM_OR, [seq, ir.Const(j), ir.Const(default)])
            )
            args.append(lw.let(item, lets, name))
        if inspect.Parameter.VAR_POSITIONAL in collects:
            tail = seq
            if left:
                bounds = lw.let(ir.Prim(PRIMITIVES[slice], [ir.Const(left), ir.Const(None), ir.Const(None)]), lets, "s")
                tail = lw.let(ir.Slice(seq, bounds, slice(left, None)), lets, "rest")
            tail = lw.let(ir.Prim(PRIMITIVES[tuple], [tail]), lets, "rest")
            rest = tail if rest is None else lw.let(ir.Prim(CONCAT, [rest, tail]), lets, "rest")
    kwargs = {k.arg: lw.argument(k.value, env, lets) for k in node.keywords if k.arg is not None}
    kwargs.update(_spread_keywords(lw, signature, path, node, env, lets, set(positional[: len(args)]) | set(kwargs)))
    return args, kwargs, rest


def _spread_keywords(
    lw: Lowering, signature: inspect.Signature, path: str, node: gast.Call, env: dict, lets: list, given: set[str]
) -> dict[str, ir.Atom]:
    """The parameters a call's `**kw` gives: each one not `given` otherwise (`kw[name]`, or `kw.get(name,
    default)`); `kw` may hold no other key."""
    collects = {p.kind for p in signature.parameters.values()}
    kwargs: dict[str, ir.Atom] = {}
    spreads = [k for k in node.keywords if k.arg is None]
    if spreads:
        if inspect.Parameter.VAR_KEYWORD in collects:
            raise lw.error(UnsupportedSyntax, "`**kw` is supported into a function without `**kwargs`", node)
        kws = [lw.atom(s.value, env, lets) for s in spreads]
        kw = kws[0] if len(kws) == 1 else lw.let(ir.Prim(MERGED_KEYWORDS, kws), lets, "keywords")
        names = [p for p in signature.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        taken = tuple(p.name for p in names if p.name not in given)
        _check(lw, ir.Prim(KEYS_WITHIN, [kw, ir.Const(taken)]), f"`{path}` takes only {taken} from `**`", lets)
        for name in taken:
            default = signature.parameters[name].default
            read = (
                ir.Index(kw, ir.Const(name))
                if default is inspect.Parameter.empty
                else ir.Prim(DICT_GET, [kw, ir.Const(name), ir.Const(default)])
            )
            kwargs[name] = lw.let(read, lets, name)
    return kwargs


def _check(lw: Lowering, cond: ir.Expr, message: str, lets: list) -> None:
    """`assert cond, message` where the call runs."""
    ok = lw.let(cond, lets, "cond")
    lets.append(ir.Let(lw.names.fresh("_"), ir.Prim(PRIMITIVES[check], [ok, ir.Const(message)]), lw.loc))


def data_call(lw: Lowering, fn: object, path: str, node: gast.Call, env: dict, lets: list) -> ir.Prim:
    """A call of something with neither a rule nor source (`np.random.rand`, a class): run as it is,
    its result is data. An error if a derivative flows into it (never a silent zero)."""
    if any(fn is reader for reader in FRAME_READERS):
        raise lw.error(UnknownFunction, f"`{path}` reads the function's own variables; not supported", node)
    if any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return _spread_data_call(lw, fn, path, node, env, lets)
    args = [lw.atom(a, env, lets) for a in node.args]
    names = [k.arg for k in node.keywords]
    args += [lw.atom(k.value, env, lets) for k in node.keywords]
    n = len(node.args)
    emit = lambda *a: CallX(Obj(fn, path), list(a[:n]), dict(zip(names, a[n:])))  # noqa: E731
    return ir.Prim(data_primitive(path, emit, fn), args)


def data_primitive(name: str, emit: Callable[..., Expr], fn: object = None, data_only: bool = True) -> Primitive:
    """The primitive of a call run as it is (`emit` writes it): its result is data, may be any object, and
    (`data_only`) a derivative flowing into it is an error, never a silent zero."""
    return Primitive(name, emit, nargs=(0, None), kind=fixed(OBJECT), data_only=data_only, aliases="unknown", fn=fn)


def _spread_data_call(lw: Lowering, fn: object, path: str, node: gast.Call, env: dict, lets: list) -> ir.Prim:
    """`np.random.rand(*x.shape)`, `f(*args, **options)` of a function run as it is: the positional
    arguments made one tuple and the keywords one dict, spread when it runs."""
    positional = lw.atom(gast.Tuple(node.args, gast.Load()), env, lets)
    named = [k for k in node.keywords if k.arg is not None]
    dicts = [lw.atom(gast.Dict([gast.Constant(k.arg, None) for k in named], [k.value for k in named]), env, lets)]
    dicts += [lw.atom(k.value, env, lets) for k in node.keywords if k.arg is None]
    keywords = lw.let(ir.Prim(MERGED_KEYWORDS, dicts), lets, "keywords") if len(dicts) > 1 else dicts[0]
    prim = data_primitive(path, lambda a, kw: call(spread_call, Obj(fn, path), a, kw), fn)
    return ir.Prim(prim, [positional, keywords])


def with_defaults(prim: Primitive, args: list[ir.Atom]) -> ir.Prim:
    """`prim` applied to its leading arguments, the others at their defaults."""
    rest = prim.params[len(args) :] if prim.params is not None else ()
    return ir.Prim(prim, [*args, *(ir.Const(prim.default(p)) for p in rest)])


def primitive_function(fn: object, arity: int) -> ir.Function:
    """A primitive used as a function value (`integrate(math.sin, 0.0, x)`): `def sin(x0): return sin(x0)`."""
    prim = lookup(fn)
    if prim is None:
        name = getattr(fn, "__name__", type(fn).__name__)
        raise UnknownFunction(f"no derivative rule for `{name}` and no Python source to differentiate")
    least, most = prim.nargs
    loc = Loc("<chadpy primitive>", 0, prim.name, "")
    if arity < least or most is not None and arity > most:
        raise ChadError(f"`{prim.name}` as a function value called with {arity} arguments", loc)
    params = [f"x{k}" for k in range(arity)]
    body = ir.Block([ir.Let("y", with_defaults(prim, [ir.Var(p) for p in params]), loc)], ir.Var("y"))
    return ir.Function(prim.name.split(".")[-1], params, body, loc, fn)
