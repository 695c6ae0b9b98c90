"""Outside names: what each name a function reads but does not bind is.

A name bound in the function is a local value (the lowerer's business). Any other name is resolved
against the function's globals, closure cells and builtins, when the function is lowered, into one of:

- plain data (a number, a string, a tuple of them, a class, an object): a constant `Ref` to the
  object itself;
- a primitive (`math.sin`, `np.sum`) or a user function with source: a function value with nothing
  captured (`MakeClosure(fn, [])`);
- a module path (`np.linalg.norm`), followed attribute by attribute.

`Watch` records each name read, so a rebinding rebuilds the derivative.
"""

from __future__ import annotations

import functools
import inspect
import types

import gast

from ..errors import ChadError, UnsupportedSyntax
from ..ir import nodes as ir
from ..ir.records import is_record
from ..ir.types import CODE_ATTR
from ..read.source import ParsedFunction, Watch, is_missing
from ..rules.registry import lookup


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
            if isinstance(value, type):
                return f"{path}.{node.attr}", self.class_attribute(path, value, node)
            if not isinstance(value, types.ModuleType):
                method = getattr(value, node.attr, None)  # `scipy.stats.norm.logpdf`: a method with a rule
                if method is not None and lookup(method) is not None:
                    return f"{path}.{node.attr}", method
                raise self.error(UnsupportedSyntax, f"attribute `.{node.attr}` of `{path}` is not supported", node)
            try:
                return f"{path}.{node.attr}", getattr(value, node.attr)
            except AttributeError:
                raise self.error(ChadError, f"module `{path}` has no attribute `{node.attr}`", node) from None
        raise self.error(UnsupportedSyntax, "calling the result of an expression is not supported", node)

    def class_attribute(self, path: str, cls: type, node: gast.Attribute) -> object:
        """`C.name` of an outside class: a static method is its function, a class method the function with
        C bound first (`C.make(x)` is `make(C, x)`), anything else what Python's `C.name` gives (a
        function of the class, a class attribute)."""
        attr = inspect.getattr_static(cls, node.attr, None)
        if isinstance(attr, staticmethod):
            return attr.__func__
        if isinstance(attr, classmethod) and isinstance(attr.__func__, types.FunctionType):
            return functools.partial(attr.__func__, cls)
        try:
            return getattr(cls, node.attr)
        except AttributeError:
            raise self.error(ChadError, f"class `{path}` has no attribute `{node.attr}`", node) from None

    def callee(self, func: gast.expr, env: dict) -> tuple[str, object]:
        """The path and outside object a call's function (not a local value) names."""
        path, fn = self.static_path(func, env)
        return path, _code(fn)

    def outside(self, path: str, value: object, node: gast.AST) -> ir.Expr:
        """An outside object used as a value: a function (a function value with nothing captured:
        its code is read where it is called), or data: a number, an array, a list, dict or tuple,
        an object, a class. Data carries no derivative; the generated code refers to the object
        itself (never a copy), so a change to it between two calls shows in the second, and a
        rebinding of the name rebuilds the derivative (`source.Watch`)."""
        value = _code(value)
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


def _code(fn: object) -> object:
    """What chadpy reads for an outside function: a derivative chadpy made is the Python it is (`grad(f)` is
    `grad(f)(*args)`, `CODE_ATTR`); a function decorated with `@chad.reverse` is the function."""
    return getattr(fn, CODE_ATTR, None) or getattr(fn, "__chad_wrapped__", fn)
