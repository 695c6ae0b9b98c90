"""Calls: what each call a function makes is (its callee's name is `outside.Resolver`'s).

A call is resolved by what its callee is (`Lowering.call` picks the case): a
primitive becomes a `Prim` with its arguments bound by the real function's
signature, a user function a `Call`, a method of a local value the NumPy function
it is, and anything else with neither rule nor source is run as data (`data_call`):
its result carries no derivative; where a derivative flows into it, it runs on the
primal values if it returns none out and cannot change what it is given
(`data_primitive`), else it is an error.
"""

from __future__ import annotations

import functools
import inspect
import logging
import types
import warnings
from collections.abc import Callable
from typing import NamedTuple

import gast
import numpy as np

from ..errors import ChadError, ChadTypeError, Loc, UnknownFunction, UnsupportedSyntax
from ..ir import nodes as ir
from ..ir.types import OBJECT, Arr, Dct, Lst, Rec, Tup, VType, describe, is_active, item_join
from ..read.scope import UPDATING
from ..rules.kinds import KindRule, fixed
from ..rules.numpy import VECTORIZE
from ..rules.registry import METHODS, PRIMITIVES, Primitive, is_default, lookup
from ..rules.scalar import BINARY_FOLDS
from ..rules.sequences import CALL_BINDS, CONCAT, DICT_GET, ITEM_OR, MERGED_KEYWORDS, WITHOUT_KEYS
from ..runtime.scalar import carries_none, spread_call
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


def vectorized_object(
    lw: Lowering, v: np.vectorize, path: str, node: gast.Call, env: dict, lets: list
) -> tuple[gast.Call, types.FunctionType]:
    """`v(x)` of an outside `v = np.vectorize(f)` is `vectorized(f, x)` (`rules/numpy.py`, in Python chadpy reads)."""
    if v.otypes or v.signature is not None or v.excluded:
        raise lw.error(
            UnsupportedSyntax,
            f"`{path}`: `np.vectorize` with `otypes`, `signature` or `excluded` is not supported",
            node,
        )
    pyfunc = synthetic(lw, lw.let(lw.resolver.outside(f"{path}.pyfunc", v.pyfunc, node), lets, "pyfunc"), env, "pyfunc")
    return gast.copy_location(gast.Call(node.func, [pyfunc, *node.args], node.keywords), node), VECTORIZE["vectorized"]


def _starred(node: gast.Call) -> bool:
    return any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)


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
    if _starred(node):
        raise lw.error(
            UnsupportedSyntax,
            f"star-arguments (`*xs`, `**kw`) in a call of `{path}` are not supported: only in calls of Python "
            "functions chadpy reads (and `zip(*rows)`)",
            node,
        )


def prim_call(lw: Lowering, prim: Primitive, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """A call of a primitive: `min(a, b, c)` folds into two calls of the binary one."""
    no_spread(lw, path, node)
    args = [lw.atom(_display_as_tuple(a) if k == 0 and _numpy(prim) else a, env, lets) for k, a in enumerate(node.args)]
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


def _numpy(prim: Primitive) -> bool:
    return (getattr(prim.fn, "__module__", None) or "").partition(".")[0] == "numpy"


def _display_as_tuple(node: gast.expr) -> gast.expr:
    """A list display given to a NumPy function as its data (`np.concatenate([[0.0], v])`, `np.sum([a, b])`):
    a tuple, the same to NumPy, whose items may be of different kinds (a list and an array)."""
    if isinstance(node, gast.List):
        return gast.copy_location(gast.Tuple(node.elts, gast.Load()), node)
    return node


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
    signature = inspect.signature(fn, follow_wrapped=False)  # its own parameters, not `__wrapped__`'s
    given = spread(lw, signature, path, node, env, lets)
    try:
        bound = signature.bind(*given.args, **given.kwargs)
    except TypeError as e:
        raise lw.error(ChadError, f"call of `{path}`: {e}", node) from None
    bound.apply_defaults()
    atoms = []
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            if given.rest is None or value:  # `rest`: what a star-argument gives beyond the named parameters
                items = lw.let(ir.MakeTuple(list(value)), lets, name)
                value = items if given.rest is None else lw.let(ir.Prim(CONCAT, [items, given.rest]), lets, name)
            else:
                value = given.rest
        elif kind is inspect.Parameter.VAR_KEYWORD:
            if value or given.extra is None:  # `extra`: what a `**` argument gives beyond the named parameters
                named = lw.let(ir.MakeDict([ir.Const(k) for k in value], list(value.values())), lets, name)
                extra = [named] if given.extra is None else [named, given.extra]
                value = named if len(extra) == 1 else lw.let(ir.Prim(MERGED_KEYWORDS, extra), lets, name)
            else:
                value = given.extra
        atoms.append(value if isinstance(value, (ir.Var, ir.Const, ir.Ref)) else ir.Const(value))
    return ir.Call(fn, atoms)


class Spread(NamedTuple):
    """A call's arguments for a callee's parameters, its star-arguments spread (`spread`)."""

    args: list[ir.Atom]  # by position
    kwargs: dict[str, ir.Atom]  # by name
    rest: ir.Atom | None  # the tuple of what `*xs` gives beyond the named parameters (for `*args`)
    extra: ir.Atom | None  # the dict of what `**kw` gives beyond the named parameters (for `**kwargs`)


def spread(lw: Lowering, signature: inspect.Signature, path: str, node: gast.Call, env: dict, lets: list) -> Spread:
    """A call's arguments for a callee of this signature, star-arguments spread over its parameters as Python
    binds them: `*xs` fills the positional parameters left (where xs is too short, `**kw` or their defaults
    do), the rest of xs goes to the callee's `*args`; `**kw` gives each parameter not given otherwise, the rest
    of kw goes to its `**kwargs`. Whether the call binds (its lengths and keys) is checked when it runs,
    raising Python's TypeError."""
    params = signature.parameters.values()
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    collects = {p.kind for p in params}
    fixed: list[ir.Atom] = []  # the positional arguments before the first `*xs`, then the star-arguments
    seqs: list[ir.Atom] = []
    for a in node.args:
        if not isinstance(a, gast.Starred):
            if seqs:
                raise lw.error(UnsupportedSyntax, "a positional argument after a star-argument is not supported", a)
            fixed.append(lw.argument(a, env, lets))
        else:
            seqs.append(lw.atom(a.value, env, lets))
    kwargs: dict[str, ir.Atom] = {}
    spreads: list[ir.Atom] = []
    for k in node.keywords:
        if k.arg is None:
            spreads.append(lw.atom(k.value, env, lets))
        else:
            kwargs[k.arg] = lw.argument(k.value, env, lets)
    kw = (
        spreads[0]
        if len(spreads) == 1
        else lw.let(ir.Prim(MERGED_KEYWORDS, spreads), lets, "keywords")
        if spreads
        else None
    )
    if seqs or kw is not None:
        check = [ir.Ref(f"{path}.signature", signature), ir.Const(path), ir.Const(len(fixed)), ir.Const(tuple(kwargs))]
        lets.append(ir.Let(lw.names.fresh("_"), ir.Prim(CALL_BINDS, [*check, kw or ir.Const(None), *seqs]), lw.loc))

    def given(name: str, default: object) -> ir.Expr:  # `kw[name]`, else its default (without one the check raised)
        return ir.Prim(
            DICT_GET, [kw, ir.Const(name), ir.Const(None if default is inspect.Parameter.empty else default)]
        )

    args = list(fixed)
    rest: ir.Atom | None = None
    for k, seq in enumerate(seqs):
        left = positional[len(args) :]
        if left and k != len(seqs) - 1:
            raise lw.error(UnsupportedSyntax, "a star-argument that fills parameters must come last", node)
        for j, name in enumerate(left):
            default = signature.parameters[name].default
            if kw is not None:  # where xs is too short, `kw[name]` (or the default)
                otherwise = lw.let(given(name, default), lets, name)
                item = ir.Prim(ITEM_OR, [seq, ir.Const(j), otherwise])
            elif default is inspect.Parameter.empty:
                item = ir.Index(seq, ir.Const(j))
            else:
                item = ir.Prim(ITEM_OR, [seq, ir.Const(j), ir.Const(default)])
            args.append(lw.let(item, lets, name))
        if inspect.Parameter.VAR_POSITIONAL in collects:
            tail = seq
            if left:
                bounds = lw.let(
                    ir.Prim(PRIMITIVES[slice], [ir.Const(len(left)), ir.Const(None), ir.Const(None)]), lets, "s"
                )
                tail = lw.let(ir.Slice(seq, bounds, slice(len(left), None)), lets, "rest")
            tail = lw.let(ir.Prim(PRIMITIVES[tuple], [tail]), lets, "rest")
            rest = tail if rest is None else lw.let(ir.Prim(CONCAT, [rest, tail]), lets, "rest")
    extra: ir.Atom | None = None
    if kw is not None:
        taken = set(positional[: len(args)]) | set(kwargs)
        names = [p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in taken]
        for p in names:
            kwargs[p.name] = lw.let(given(p.name, p.default), lets, p.name)
        if inspect.Parameter.VAR_KEYWORD in collects:
            named = tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
            extra = lw.let(ir.Prim(WITHOUT_KEYS, [kw, ir.Const(named)]), lets, "keywords")
    return Spread(args, kwargs, rest, extra)


def data_call(lw: Lowering, fn: object, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """A call of something with neither a rule nor source (`np.random.rand`, a class): run as it is,
    its result is data. An error if a derivative flows into it (never a silent zero)."""
    if any(fn is reader for reader in FRAME_READERS):
        raise lw.error(UnknownFunction, f"`{path}` reads the function's own variables; not supported", node)
    if _starred(node):
        return _spread_data_call(lw, fn, path, node, env, lets)
    args = [lw.atom(a, env, lets) for a in node.args]
    names = [k.arg for k in node.keywords]
    args += [lw.atom(k.value, env, lets) for k in node.keywords]
    n = len(node.args)
    if fn in _CONSTANT_DATA and all(isinstance(a, (ir.Const, ir.Ref)) for a in args):
        # a fact about a dtype (`np.finfo(float).eps`): the same object whenever it runs; read now, so its
        # attributes have their kinds (a float, not data of an unknown kind)
        value = fn(*[a.value for a in args[:n]], **{k: a.value for k, a in zip(names, args[n:])})
        return ir.Ref(f"{path}(...)", value)
    emit = lambda *a: CallX(Obj(fn, path), list(a[:n]), dict(zip(names, a[n:])))  # noqa: E731
    cached = " (a functools.lru_cache)" if isinstance(fn, functools._lru_cache_wrapper) else ""
    return ir.Prim(data_primitive(path, emit, fn, what=f"`{path}`{cached}"), args)


_CONSTANT_DATA = (np.finfo, np.iinfo)


def data_primitive(
    name: str,
    emit: Callable[..., Expr],
    fn: object = None,
    sink: bool = False,
    what: str = "",
    spread: bool = False,
    rule: Primitive | None = None,
) -> Primitive:
    """The primitive of a call run as it is (`emit` writes it): its result is data, may be any object. Where a
    derivative flows into it, it runs on the primal values (`when_active`): exact where its result carries none
    out (None, a str, an int: checked when it runs, `carries_none`) and it changes and keeps none of its
    arguments. A number cannot be changed; an array, list, dict or object a derivative flows through is refused,
    but by a `sink` (known to only read what it is given and to return nothing: `logger.debug`, `print`, a str's
    method), whose result is not checked either. `what` names it in messages; `spread`: its arguments are a
    tuple and a dict made for the call (`f(*args, **kw)`); `rule`: its derivative where one flows in, if it has
    one (`frozen.logpdf(x)`)."""
    what = what or f"`{name}`"
    if _is_sink(fn):
        sink = True
    checked = emit if sink else lambda *a: call(carries_none, emit(*a), what)
    kind = _on_primal_kind(what, sink, spread, numeric=isinstance(fn, np.ufunc))
    on_primal = rule or Primitive(name, checked, nargs=(0, None), kind=kind, aliases="unknown", fn=fn)
    return Primitive(name, emit, nargs=(0, None), kind=fixed(OBJECT), aliases="unknown", fn=fn, when_active=on_primal)


# Functions that only read what they are given and return None (they log it): run on the primal values
_LOG_LEVELS = ("debug", "info", "warning", "warn", "error", "exception", "critical", "log")
SINKS = {
    getattr(owner, level, warnings.warn)  # (`warn` is gone from newer Pythons' logging)
    for owner in (logging.Logger, logging.LoggerAdapter, logging)
    for level in _LOG_LEVELS
}


def _is_sink(fn: object) -> bool:
    try:
        return getattr(fn, "__func__", fn) in SINKS
    except TypeError:  # unhashable
        return False


def _on_primal_kind(what: str, sink: bool, spread: bool, numeric: bool) -> KindRule:
    """The kind rule of a call run as it is on values a derivative flows through: data; an error where it is
    given an array, list, dict or object a derivative flows through, which it might change in place or keep
    (but a `sink`), and for a function of numbers (a NumPy ufunc: its result is a number or an array)."""

    def rule(types: list[VType], consts: list[object]) -> VType:
        if numeric:
            raise UnknownFunction(f"no derivative rule for {what}; register one with chadpy.defvjp")
        given = types if not spread else [*_items(types[0]), *_items(types[1])]
        changeable = next((t for t in given if is_active(t) and _container(t)), None)
        if changeable is not None and not sink:
            hint = " (a functools.lru_cache: differentiate its `__wrapped__`)" if "lru_cache" in what else ""
            raise ChadTypeError(
                f"{what}{hint} has no derivative rule and no Python source chadpy can read, and it is given "
                f"{describe(changeable)} a derivative flows through, which it may change in place or keep: register "
                "its derivative with chadpy.defvjp, or give it values no derivative flows through"
            )
        return OBJECT

    return rule


def _items(t: VType) -> list[VType]:
    """The types of the values in a tuple or dict made for a call (`f(*args, **kw)` run as it is)."""
    if isinstance(t, Tup):
        return list(t.items)
    if isinstance(t, Dct) and t.fields is not None:
        return [v for _, v in t.fields]
    return [item_join(t)]


def _container(t: VType) -> bool:
    """Whether a value of type t could be changed in place or kept by a call (an array, list, dict, object)."""
    return any(map(_container, t.items)) if isinstance(t, Tup) else isinstance(t, (Arr, Lst, Dct, Rec))


def _spread_data_call(lw: Lowering, fn: object, path: str, node: gast.Call, env: dict, lets: list) -> ir.Prim:
    """`np.random.rand(*x.shape)`, `f(*args, **options)` of a function run as it is: the positional
    arguments made one tuple and the keywords one dict, spread when it runs."""
    positional = lw.atom(gast.Tuple(node.args, gast.Load()), env, lets)
    named = [k for k in node.keywords if k.arg is not None]
    dicts = [lw.atom(gast.Dict([gast.Constant(k.arg, None) for k in named], [k.value for k in named]), env, lets)]
    dicts += [lw.atom(k.value, env, lets) for k in node.keywords if k.arg is None]
    keywords = lw.let(ir.Prim(MERGED_KEYWORDS, dicts), lets, "keywords") if len(dicts) > 1 else dicts[0]
    prim = data_primitive(path, lambda a, kw: call(spread_call, Obj(fn, path), a, kw), fn, spread=True)
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
