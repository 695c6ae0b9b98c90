"""Objects as records: which Python objects chadpy looks inside, and how a class is built.

An object of a user class (a plain class, a `@dataclass`) is a *record* of its
attributes: a product like a tuple, whose components have names. chadpy reads its
fields (`self.W`), calls its methods through their source (`self.predict(x)` is
`Model.predict(self, x)`), and gives its gradient as an object of the same class.
A `namedtuple` is a tuple whose components have names (`vtypes.Tup.cls`).

Objects of classes from installed libraries and the standard library (a
`RandomState`, a SciPy distribution) are not records: they are data chadpy passes
along and calls methods of as they are (their results carry no derivative).

`register_pytree(cls, flatten, unflatten)` (JAX's spirit) says what a gradient of a
class's object is: its children (`flatten(obj)`: attributes of obj) are what is
differentiated, and the gradient is `unflatten(aux, cotangents_of_children)`. The
class's objects are records whatever module it comes from.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import sysconfig
from collections.abc import Callable
from typing import NamedTuple

# Where installed libraries and the standard library live: their classes are not records.
_LIBRARY_ROOTS = tuple(
    {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in sysconfig.get_paths()}
)


class Pytree(NamedTuple):
    """How a registered class is taken apart and put together again (JAX's pytree convention)."""

    flatten: Callable[[object], tuple[object, object]]  # obj -> (children, aux)
    unflatten: Callable[[object, object], object]  # (aux, children) -> obj


PYTREES: dict[type, Pytree] = {}


def register_pytree(cls: type, flatten: Callable, unflatten: Callable) -> None:
    """Gradients of objects of class `cls` in JAX's style: `flatten(obj)` gives `(children, aux)`,
    children being attributes of obj (floats, arrays, containers of them) and aux anything else;
    `unflatten(aux, children)` builds an object. The gradient with respect to such an object is
    `unflatten(aux, cotangents of its children)`; its other attributes are data."""
    PYTREES[cls] = Pytree(flatten, unflatten)
    is_record_class.cache_clear()


def is_namedtuple(cls: type) -> bool:
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


@functools.cache
def is_record_class(cls: type) -> bool:
    """A class whose instances are records: a dataclass, or a class defined outside installed
    libraries and the standard library whose instances keep their attributes in a `__dict__`
    or `__slots__` (not a container or a number)."""
    if dataclasses.is_dataclass(cls) or cls in PYTREES:
        return True
    if cls.__module__ == "builtins" or issubclass(cls, (tuple, list, dict, set, int, float, complex, str, bytes)):
        return False
    if cls.__init__ is not object.__init__ and not inspect.isfunction(cls.__init__):
        return False  # made by C code (an extension type)
    call = next((k.__dict__["__call__"] for k in cls.__mro__ if "__call__" in k.__dict__), None)
    if call is not None and not inspect.isfunction(call):
        return False  # called by C code: a compiled function (Cython's), not an object of Python code
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    return path is None or not path.startswith(_LIBRARY_ROOTS)


def constructible(cls: type) -> bool:
    """A class whose construction chadpy reads: a record class, or a namedtuple."""
    return is_record_class(cls) or is_namedtuple(cls)


def is_record(value: object) -> bool:
    return not isinstance(value, type) and is_record_class(type(value))


def fields_of(value: object) -> list[tuple[str, object]]:
    """A record's attributes and their values (its `__dict__`, then its `__slots__`)."""
    out = list(getattr(value, "__dict__", {}).items())
    for cls in type(value).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(value, name):
                out.append((name, getattr(value, name)))
    return out


def new_record(cls: type, fields: dict[str, object]) -> object:
    """An object of `cls` with these attributes, made without running its `__init__` (a gradient
    of the same class as its argument, a record the derivative built)."""
    if is_namedtuple(cls):
        return cls(**fields)
    obj = object.__new__(cls)
    for name, value in fields.items():
        object.__setattr__(obj, name, value)  # a frozen dataclass too
    return obj


@dataclasses.dataclass(frozen=True)
class Constructor:
    """`cls(...)` called in a differentiated function: `__init__` read as a function that makes
    the record and returns it (a dataclass's or namedtuple's generated one: their fields)."""

    cls: type

    @property
    def __name__(self) -> str:  # noqa: A003  (read like a function's name)
        return self.cls.__name__

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self.cls)

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self.cls(*args, **kwargs)

    @property
    def generated(self) -> bool:
        """Whether `__init__` is generated (a dataclass's or a namedtuple's): its fields, in order."""
        return is_namedtuple(self.cls) or dataclasses.is_dataclass(self.cls) and not _has_source(self.cls.__init__)


def _has_source(fn: object) -> bool:
    try:
        inspect.getsource(fn)
    except (OSError, TypeError):
        return False
    return True
