"""Resolution: what each name a function reads, and each call it makes, is.

A name bound in the function is a local value (the lowerer's business). Any other
name is resolved against the function's globals, closure cells and builtins, when
the function is lowered, into one of:

- plain data (a number, a string, a tuple of them, a class): a constant `Ref`;
- a primitive (`math.sin`, `np.sum`, an operator) or a user function with source: a
  function value with nothing captured (`MakeClosure(fn, [])`);
- a module path (`np.linalg.norm`), followed attribute by attribute.

A call is resolved by what its callee is (`Lowerer.call` picks the case): a
primitive becomes a `Prim` with its arguments bound by the real function's
signature, a user function a `Call`, a method of a local value the NumPy function
it is, and anything else with neither rule nor source is run as data (`data_call`):
its result carries no derivative, and a derivative flowing into it is an error.
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import TYPE_CHECKING

import gast
import numpy as np

from . import ir
from .errors import ChadError, Loc, UnknownFunction, UnsupportedSyntax
from .expressions import CallX, Obj
from .kinds import fixed
from .primitives import METHODS, OPERATORS, PRIMITIVES, Primitive, is_default, lookup
from .records import is_record
from .rules.scalar import BINARY_FOLDS
from .rules.sequences import CONCAT, DICT_GET, ITEM_OR, KEYS_WITHIN
from .runtime import check
from .scope import UPDATING
from .source import ParsedFunction, Watch, is_missing
from .vtypes import OBJECT

if TYPE_CHECKING:
    from .lower import Lowerer

# Builtins that read the calling frame: never run as data (they could see values a derivative flows through).
FRAME_READERS = (eval, exec, compile, globals, locals, vars)


class Resolver:
    """Resolves the free names of one function (`locals`: the names it assigns, its parameters)."""

    def __init__(self, parsed: ParsedFunction, watch: Watch, local_names: set[str]):
        self.parsed = parsed
        self.watch = watch
        self.locals = local_names  # shared with the lowerer, which adds a nested function's captures

    def error(self, cls: type[ChadError], message: str, node: gast.AST) -> ChadError:
        return cls(message, self.parsed.loc(node))

    def is_local(self, node: gast.expr, env: dict) -> bool:
        """Whether node is a value of the function (not a module, a global function...)."""
        while isinstance(node, gast.Attribute):
            node = node.value
        return not isinstance(node, gast.Name) or node.id in env or node.id in self.locals

    def global_value(self, name: str, node: gast.AST) -> object:
        value = self.parsed.resolve(name, self.watch)
        if is_missing(value):
            raise self.error(ChadError, f"name `{name}` is not defined", node)
        return value

    def static_path(self, node: gast.expr, env: dict) -> tuple[str, object]:
        """Resolve `m.sin`, `math.pi`, `mod.sub.f` to the object it names (no locals)."""
        if isinstance(node, gast.Name):
            if node.id in env or node.id in self.locals:
                raise self.error(
                    UnsupportedSyntax, f"attributes and methods of the local value `{node.id}` are not supported", node
                )
            return node.id, self.global_value(node.id, node)
        if isinstance(node, gast.Attribute):
            path, value = self.static_path(node.value, env)
            if not isinstance(value, types.ModuleType):
                method = getattr(value, node.attr, None)  # `scipy.stats.norm.logpdf`: a method with a rule
                if method is not None and not isinstance(value, type) and lookup(method) is not None:
                    return f"{path}.{node.attr}", method
                raise self.error(UnsupportedSyntax, f"attribute `.{node.attr}` of `{path}` is not supported", node)
            try:
                return f"{path}.{node.attr}", getattr(value, node.attr)
            except AttributeError:
                raise self.error(ChadError, f"module `{path}` has no attribute `{node.attr}`", node) from None
        raise self.error(UnsupportedSyntax, "calling the result of an expression is not supported", node)

    def callee(self, func: gast.expr, env: dict) -> tuple[str, object]:
        """The path and outside object a call's function (not a local value) names."""
        path, fn = self.static_path(func, env)
        return path, getattr(fn, "__chad_wrapped__", fn)  # a function decorated with @chad.reverse

    def outside(self, path: str, value: object, node: gast.AST) -> ir.Expr:
        """An outside object used as a value: a function (a function value with nothing captured:
        its code is read where it is called), or data: a number, an array, a list, dict or tuple,
        an object, a class. Data carries no derivative; the generated code refers to the object
        itself (never a copy), so a change to it between two calls shows in the second, and a
        rebinding of the name rebuilds the derivative (`source.Watch`)."""
        value = getattr(value, "__chad_wrapped__", value)
        if isinstance(value, type):
            return ir.Ref(path, value)  # a class: data (`isinstance(v, float)`), even one with a rule (`float(x)`)
        if isinstance(value, types.FunctionType) or lookup(value) is not None:
            return ir.MakeClosure(value, [])
        if callable(value) and not is_record(value):  # an object with `__call__` is data, called as a method
            kind = "a function chadpy has no rule for"
            raise self.error(UnsupportedSyntax, f"`{path}` is {kind}; using it as a value is not supported", node)
        return ir.Ref(path, value)

    def data(self, node: gast.expr, env: dict) -> tuple[str, object] | None:
        """The path and value of the outside data `node` names (an array, a `RandomState`, an object:
        not a module, a function or a class); None if it names something else."""
        if self.is_local(node, env) or not isinstance(node, (gast.Name, gast.Attribute)):
            return None
        try:
            path, value = self.static_path(node, env)
        except ChadError:
            return None
        if isinstance(value, (types.ModuleType, type)) or callable(value) and not is_record(value):
            return None
        return path, value


# ---------------------------------------------------------------- calls, by what the callee is


def method_call(lw: Lowerer, node: gast.Call, env: dict, lets: list) -> ir.Expr:
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


def partial_call(lw: Lowerer, p: functools.partial, path: str, node: gast.Call, env: dict) -> tuple[gast.Call, object]:
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


def synthetic(lw: Lowerer, value: ir.Atom, env: dict, hint: str) -> gast.Name:
    """An evaluated value under a fresh name, for code the front end writes (desugaring, partials)."""
    name = lw.names.fresh(hint)
    env[name] = value
    return gast.Name(name, gast.Load(), None, None)


def data_method_call(lw: Lowerer, data: tuple[str, object], node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """A method of outside `data` (its path and value): `X.sum()` of an array is the NumPy function it
    is; any other (`rs.randn(3)` of a `RandomState`) is run as it is, a data call."""
    if node.func.attr in METHODS:
        return method_call(lw, node, env, lets)
    path, value = data
    if not hasattr(value, node.func.attr):
        raise lw.error(ChadError, f"`{path}` has no attribute `{node.func.attr}`", node.func)
    return data_call(lw, getattr(value, node.func.attr), f"{path}.{node.func.attr}", node, env, lets)


def no_spread(lw: Lowerer, path: str, node: gast.Call) -> None:
    """Star-arguments are spread over the parameters of a function chadpy reads (`spread`), not others'."""
    if any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise lw.error(
            UnsupportedSyntax,
            f"star-arguments (`*xs`, `**kw`) in a call of `{path}` are not supported: only in calls of Python "
            "functions chadpy reads (and `zip(*rows)`)",
            node,
        )


def prim_call(lw: Lowerer, prim: Primitive, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr:
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


def bind_arguments(lw: Lowerer, prim: Primitive, path: str, args: list, kwargs: dict, node: gast.AST) -> list[ir.Atom]:
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


def user_call(lw: Lowerer, fn: types.FunctionType, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr:
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
    lw: Lowerer, signature: inspect.Signature, path: str, node: gast.Call, env: dict, lets: list
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
    spreads = [k for k in node.keywords if k.arg is None]
    if spreads:
        if len(spreads) > 1 or inspect.Parameter.VAR_KEYWORD in collects:
            raise lw.error(UnsupportedSyntax, "`**kw` is supported once, into a function without `**kwargs`", node)
        kw = lw.atom(spreads[0].value, env, lets)
        given = set(positional[: len(args)]) | set(kwargs)
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
    return args, kwargs, rest


def _check(lw: Lowerer, cond: ir.Expr, message: str, lets: list) -> None:
    """`assert cond, message` where the call runs."""
    ok = lw.let(cond, lets, "cond")
    lets.append(ir.Let(lw.names.fresh("_"), ir.Prim(PRIMITIVES[check], [ok, ir.Const(message)]), lw.loc))


def data_call(lw: Lowerer, fn: object, path: str, node: gast.Call, env: dict, lets: list) -> ir.Prim:
    """A call of something with neither a rule nor source (`np.random.rand`, a class): run as it is,
    its result is data. An error if a derivative flows into it (never a silent zero)."""
    if any(fn is reader for reader in FRAME_READERS):
        raise lw.error(UnknownFunction, f"`{path}` reads the function's own variables; not supported", node)
    no_spread(lw, path, node)
    args = [lw.atom(a, env, lets) for a in node.args]
    names = [k.arg for k in node.keywords]
    args += [lw.atom(k.value, env, lets) for k in node.keywords]
    n = len(node.args)
    prim = Primitive(
        path,
        lambda *a: CallX(Obj(fn, path), list(a[:n]), dict(zip(names, a[n:]))),
        nargs=(0, None),
        kind=fixed(OBJECT),
        data_only=True,
        aliases="unknown",
        fn=fn,
    )
    return ir.Prim(prim, args)


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
