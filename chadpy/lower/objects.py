"""Objects: attribute reads and assignments, method calls and instantiation, as records.

An object of a user class is a record of its attributes (`records.py`): a product
like a tuple whose components have names, so CHAD needs nothing new for it:

- `obj.W` is a projection (`Field`); its cotangent is the one-hot record `{"W": d}`;
- `obj.W = v` on an object the function made is a functional update (`setattr`,
  checked by `ownership` like `xs.append(v)`): the derivative splits the new
  record's cotangent into v's and the rest;
- `obj.m(x)` is a call of the function the method is, `type(obj).m(obj, x)`: which
  one is known per specialisation, from the record's class (`MethodCall`, resolved
  by `call_of_method` below during inference); a property read is a call of its
  getter, calling an object is a call of its `__call__`, a static method takes no
  receiver and a class method its class;
- `C(a, b)` is a call of the constructor `C.__init__` read as a function that makes
  an empty record, fills it, and returns it (a dataclass's or namedtuple's generated
  constructor makes the record of its fields directly).
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable

import gast

from ..errors import ChadError, ChadTypeError, Loc, UnsupportedSyntax
from ..ir import nodes as ir
from ..ir.records import Constructor
from ..ir.types import OBJECT, STR, Class, Rec, Tup, VType, describe, of_value
from ..read import scope
from ..rules.records import COPIED, SET_FIELD
from ..rules.registry import ATTRIBUTES, DATA_METHODS, PRIMITIVES
from ..runtime.records import copied
from ..target.expressions import Attr, CallX
from .context import Lowering
from .resolve import data_primitive, no_spread, user_call, with_defaults

# ---------------------------------------------------------------- lowering


def attribute(lw: Lowering, node: gast.Attribute, env: dict, lets: list) -> ir.Expr:
    """`x.attr` of a local value or outside data: a field read, resolved by inference from x's type: an
    array's attribute (`a.T`, `a.shape`) is the NumPy function it is (`array_attribute`), a record's is
    its field or its property."""
    return ir.Field(lw.atom(node.value, env, lets), ir.Const(mangled(lw, node.attr)))


def mangled(lw: Lowering, name: str) -> str:
    """A private name (`__x`, not `__x__`) written in a class's code, as Python compiles it: `_Cls__x`, for
    the innermost class the function is defined in (its `__qualname__` says which)."""
    if not name.startswith("__") or name.endswith("__"):
        return name
    parts = lw.parsed.pyfunc.__qualname__.split(".")
    classes = [p for p, after in zip(parts, parts[1:]) if p != "<locals>" and after != "<locals>"]
    return f"_{classes[-1].lstrip('_')}{name}" if classes else name


def array_attribute(e: ir.Field, base: VType) -> ir.Prim | None:
    """The primitive `base.name` is when base is no object of a user class (an array: `a.T` is
    `np.transpose(a)`); None for a field of a record."""
    name = e.index.value
    if name not in ATTRIBUTES or isinstance(base, (Rec, Class)):
        return None
    return with_defaults(PRIMITIVES[ATTRIBUTES[name]], [e.base])


def method(lw: Lowering, node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """`x.m(args)` where `.m` is no NumPy method: the method of x's class (resolved by inference)."""
    if _is_super(node.func.value):
        return super_call(lw, node, env, lets)
    receiver = lw.atom(node.func.value, env, lets)
    args = [lw.argument(a, env, lets) for a in node.args]
    keywords = {k.arg: lw.argument(k.value, env, lets) for k in node.keywords}
    return ir.MethodCall(receiver, mangled(lw, node.func.attr), args, keywords)


def _is_super(node: gast.expr) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "super"


def super_call(lw: Lowering, node: gast.Call, env: dict, lets: list) -> ir.Call:
    """`super().m(args)` in a method of class C: the `m` the classes after C define (C's MRO; with
    single inheritance, the same as the receiver's), called on the method's first parameter."""
    fn = lw.parsed.pyfunc
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    params = scope.parameters(lw.node)
    if node.func.value.args or "__class__" not in cells or not params:
        raise lw.error(UnsupportedSyntax, "`super(...)` is supported only as `super()` in a method", node)
    defining = cells["__class__"].cell_contents
    found = next((b.__dict__[node.func.attr] for b in defining.__mro__[1:] if node.func.attr in b.__dict__), None)
    receiver = gast.Name(params[0], gast.Load(), None, None)
    call = gast.copy_location(gast.Call(node.func, [receiver, *node.args], node.keywords), node)
    if node.func.attr == "__init__":
        return _parent_init(lw, found, call, env, lets)
    if not isinstance(found, types.FunctionType):
        raise lw.error(UnsupportedSyntax, f"`super().{node.func.attr}` is not a method chadpy can read", node)
    return user_call(lw, found, f"super().{node.func.attr}", call, env, lets)


def _parent_init(lw: Lowering, init: object, node: gast.Call, env: dict, lets: list) -> ir.Const:
    """`super().__init__(args)` in a constructor: the parent's `__init__` fills a copy of the object made so far,
    which the constructor goes on with (`ParentInit`); `object.__init__` does nothing."""
    if lw.constructing is None:
        raise lw.error(UnsupportedSyntax, "`super().__init__(...)` is supported in a constructor (`__init__`)", node)
    if init is object.__init__ and not node.args[1:] and not node.keywords:
        return ir.Const(None)
    if not isinstance(init, types.FunctionType):
        raise lw.error(UnsupportedSyntax, "`super().__init__` is not a constructor chadpy can read", node)
    made = user_call(lw, ParentInit(lw.constructing, init), "super().__init__", node, env, lets)
    lets.append(ir.Let(lw.bind(node.args[0].id, env), made, lw.loc))
    return ir.Const(None)  # what `__init__` returns


def set_attribute(lw: Lowering, target: gast.Attribute, value: ir.Atom, env: dict, lets: list) -> None:
    """`obj.name = value`: obj becomes a new SSA name for the same (updated) object."""
    name = target.value.id
    parameter = env.get(name) == ir.Var(name) and name in scope.parameters(lw.node) and lw.constructing is None
    if name not in env or parameter:
        raise lw.error(
            UnsupportedSyntax,
            "assigning an attribute of an object the function did not make (an argument, outside data, "
            "`a.b.c = ...`) is not supported: chadpy never mutates a caller's objects",
            target,
        )
    obj = lw.read(name, env, target.value, lets)
    update = ir.Prim(SET_FIELD, [obj, ir.Const(mangled(lw, target.attr)), value], inplace=True)
    lets.append(ir.Let(lw.bind(name, env), update, lw.loc))


def construct(lw: Lowering, cls: type, path: str, node: gast.Call, env: dict, lets: list) -> ir.Expr:
    """`C(a, b)` for a user class C: a call of its constructor, bound by C's signature."""
    return user_call(lw, Constructor(cls), path, node, env, lets)  # equal per class: one lowering, one spec


def constructor_function(
    code: Constructor, lowerer: type[Lowering], watch: object, read: Callable[[types.FunctionType, object], object]
) -> ir.Function:
    """The IR of a constructor: a generated one makes the record of its fields; a written
    `__init__` (its tree after the passes on the source, `read`) is lowered with its first parameter bound
    to a new empty record, which every way out of it returns."""
    cls = code.cls
    loc = Loc("<chadpy constructor>", 0, cls.__name__, "")
    if code.generated:
        if hasattr(cls, "__post_init__"):
            raise UnsupportedSyntax(f"the dataclass `{cls.__name__}` has a `__post_init__`; not supported yet", loc)
        params = list(inspect.signature(cls).parameters)
        body = ir.Block([ir.Let("made", ir.MakeRecord(cls, params, [ir.Var(p) for p in params]), loc)], ir.Var("made"))
        return ir.Function(cls.__name__, params, body, loc, code)
    init = code.init if isinstance(code, ParentInit) else cls.__init__
    if init is object.__init__:  # no `__init__` of its own: a new object with no attributes
        return ir.Function(
            cls.__name__, [], ir.Block([ir.Let("made", ir.MakeRecord(cls, [], []), loc)], ir.Var("made")), loc, code
        )
    if not isinstance(init, types.FunctionType):
        raise UnsupportedSyntax(f"the class `{cls.__name__}` has no `__init__` chadpy can read", loc)
    lowering = lowerer(read(init, watch), watch, constructing=cls)
    made = lowering.function()
    if not isinstance(code, ParentInit):
        return made
    # the parent's `__init__` fills a copy of the object given, not a new empty one
    first, *rest = made.body.lets
    given = lowering.names.fresh(first.target)
    copy = ir.Let(first.target, ir.Prim(COPIED, [ir.Var(given)]), first.loc)
    return ir.Function(code.__name__, [given, *made.params], ir.Block([copy, *rest], made.body.result), made.loc, code)


@dataclasses.dataclass(frozen=True)
class ParentInit(Constructor):
    """`super().__init__(args)` in the constructor of `cls`: `init` (a parent's `__init__`) run on a copy of the
    object made so far, which it returns (the constructor goes on with it)."""

    init: types.FunctionType

    @property
    def __name__(self) -> str:  # noqa: A003  (read like a function's name)
        return f"{self.init.__qualname__.split('.')[-2]}_init"

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self.init)

    @property
    def generated(self) -> bool:
        return False

    def __call__(self, obj: object, *args: object, **kwargs: object) -> object:
        new = copied(obj)
        self.init(new, *args, **kwargs)
        return new


# ---------------------------------------------------------------- inference: what a method call is


def call_of_method(e: ir.MethodCall, receiver: VType) -> ir.Call:
    """The call `receiver.name(args)` makes, for a receiver of this type (an object, or a class:
    `cls.make(v)` in a class method)."""
    if not isinstance(receiver, (Rec, Class)):
        raise ChadTypeError(f"the method `.{e.name}()` of {describe(receiver)} is not supported")
    attr = inspect.getattr_static(receiver.cls, e.name, None)
    if isinstance(receiver, Class) and isinstance(attr, types.FunctionType):
        return _bind(attr, e.args, e.keywords)  # `Model.predict(obj, x)`: a plain function of the class
    if (
        isinstance(receiver, Rec) and receiver.field(e.name) is not None or attr is None
    ):  # a function or object it holds
        if e.keywords:
            raise ChadTypeError(f"keyword arguments to the function in the attribute `{e.name}` are not supported")
        return ir.Call(_attribute_call(e.name, len(e.args)), [e.receiver, *e.args])
    if isinstance(attr, staticmethod):
        return _bind(attr.__func__, e.args, e.keywords)
    if isinstance(attr, classmethod):
        return _bind(attr.__func__, [ir.Ref(receiver.cls.__name__, receiver.cls), *e.args], e.keywords)
    if not isinstance(attr, types.FunctionType):
        raise ChadTypeError(f"`{receiver.cls.__name__}.{e.name}` is not a method chadpy can read")
    return _bind(attr, [e.receiver, *e.args], e.keywords)


def data_method(e: ir.MethodCall, receiver: VType) -> ir.Prim:
    """`x.m(args)` of a value chadpy does not look into (a str, what a library call returned): run as it is.
    Its result is data; where a derivative flows into it, it runs on the primal values as `data_primitive` says
    (a str's method only reads them: `"{}".format(x)`)."""
    n, names = len(e.args), list(e.keywords)
    emit = lambda x, *a: CallX(Attr(x, e.name), list(a[:n]), dict(zip(names, a[n:])))  # noqa: E731
    rule = DATA_METHODS.get(e.name) if n == 1 and not names and receiver == OBJECT else None  # `frozen.logpdf(x)`
    prim = data_primitive(f".{e.name}", emit, sink=receiver == STR, rule=rule)
    return ir.Prim(prim, [e.receiver, *e.args, *e.keywords.values()])


def data_apply(e: ir.Apply) -> ir.Prim:
    """`f(args)` of a value chadpy does not look into (a class a `class` statement made, a function a
    library returned): run as it is; its result is data (where a derivative flows in: `data_primitive`)."""
    what = f"`{ir.format_atom(e.fn)}` (a class made as written, or what a library returned, such as `np.vectorize(f)`)"
    return ir.Prim(data_primitive("call", lambda f, *a: CallX(f, list(a)), what=what), [e.fn, *e.args])


def property_call(e: ir.Field, receiver: VType) -> ir.Call | None:
    """The getter call `receiver.name` makes, if it is a property (None: a field)."""
    if not isinstance(receiver, Rec) or receiver.field(e.index.value) is not None:
        return None
    attr = inspect.getattr_static(receiver.cls, e.index.value, None)
    if isinstance(attr, property) and isinstance(attr.fget, types.FunctionType):
        return ir.Call(attr.fget, [e.base])
    return None


def object_call(e: ir.Apply, t: VType) -> ir.Call:
    """`obj(args)` for an object of a user class: its `__call__`."""
    call = inspect.getattr_static(t.cls, "__call__", None) if isinstance(t, Rec) else None
    if not isinstance(call, types.FunctionType):
        raise ChadTypeError(f"`{ir.format_atom(e.fn)}` is called, but it is {describe(t)}, with no `__call__`")
    return _bind(call, [e.fn, *e.args], {})


def field_type(e: ir.Field, base: VType) -> VType:
    """The type of `base.name` read as a field (a record's, a namedtuple's), or as data: a class
    attribute (`self.scale`, `cls.scale`), an attribute of an outside object chadpy does not look into."""
    name = e.index.value
    if isinstance(base, Rec) and base.field(name) is not None:
        return base.field(name)
    if isinstance(base, Tup) and base.position(name) is not None:  # a namedtuple's component
        return base.items[base.position(name)]
    if isinstance(base, (Rec, Class)):  # a class attribute
        value = inspect.getattr_static(base.cls, name, _MISSING)
    elif isinstance(e.base, ir.Ref):  # an attribute of outside data: as it is now (read again when the derivative runs)
        value = getattr(e.base.value, name, _MISSING)
        if value is _MISSING:
            return OBJECT  # not there yet (set by a statement run as written?): read when the derivative runs
    else:  # an attribute of data chadpy does not look into (what a library call returned): data
        return OBJECT
    if value is _MISSING and isinstance(base, Rec):
        return OBJECT  # not there yet (a helper run as written sets it on the first call): read when it runs
    if value is _MISSING or isinstance(value, (types.FunctionType, property, staticmethod, classmethod)):
        raise ChadTypeError(f"{describe(base)} has no attribute `{name}` chadpy can read")
    return of_value(value, False)


def _bind(fn: types.FunctionType, args: list[ir.Atom], keywords: dict[str, ir.Atom]) -> ir.Call:
    """The call of fn with its arguments bound by its signature, defaults as constants."""
    try:
        bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **keywords)
    except TypeError as err:
        raise ChadTypeError(f"call of `{fn.__qualname__}`: {err}") from None
    bound.apply_defaults()
    atoms = []
    for name, value in bound.arguments.items():
        param = bound.signature.parameters[name]
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ChadTypeError(f"`{fn.__qualname__}` takes star-parameters; not supported")
        atoms.append(value if isinstance(value, (ir.Var, ir.Const, ir.Ref)) else ir.Const(value))
    return ir.Call(fn, atoms)


_MISSING = object()
_ATTRIBUTE_CALLS: dict[tuple[str, int], ir.Function] = {}


def _attribute_call(name: str, nargs: int) -> ir.Function:
    """`def name(obj, x0..): return obj.name(x0..)` where `obj.name` is a field holding a function
    or an object: read the field, then call it (one function per name and arity: specs are shared)."""
    key = (name, nargs)
    if key not in _ATTRIBUTE_CALLS:
        params = ["obj", *(f"x{k}" for k in range(nargs))]
        loc = Loc("<chadpy attribute call>", 0, name, "")
        lets = [
            ir.Let("called", ir.Field(ir.Var("obj"), ir.Const(name)), loc),
            ir.Let("result", ir.Apply(ir.Var("called"), [ir.Var(p) for p in params[1:]]), loc),
        ]
        _ATTRIBUTE_CALLS[key] = ir.Function(name, params, ir.Block(lets, ir.Var("result")), loc, None)
    return _ATTRIBUTE_CALLS[key]


# ---------------------------------------------------------------- frozen SciPy distributions


def frozen_distribution(lw: Lowering, cls: type, path: str, node: gast.Call, env: dict, lets: list) -> ir.MakeRecord:
    """`scipy.stats.norm(mu, 1.0)`: the record of the distribution's parameters (`cls.params`, bound as its
    methods bind them after x), differentiated like any object's attributes."""
    no_spread(lw, path, node)
    args = [lw.atom(a, env, lets) for a in node.args]
    kwargs = {k.arg: lw.atom(k.value, env, lets) for k in node.keywords}
    required = len(cls.params) - len(cls.defaults)
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    signature = inspect.Signature(
        [
            inspect.Parameter(p, kind, default=inspect.Parameter.empty if k < required else cls.defaults[k - required])
            for k, p in enumerate(cls.params)
        ]
    )
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise lw.error(ChadError, f"`{path}`: {e}", node) from None
    bound.apply_defaults()
    values = [v if isinstance(v, (ir.Var, ir.Const, ir.Ref)) else ir.Const(v) for v in bound.arguments.values()]
    return ir.MakeRecord(cls, list(cls.params), values)
