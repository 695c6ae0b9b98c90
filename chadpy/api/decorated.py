"""`@chad.reverse`: a function with its derivatives attached (`f.grad`, `f.vjp`, `f.jvp`, `f.jacobian`, `f.hessian`,
`f.source`), each built at its first use and kept."""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Callable
from typing import Any

from ..chad.stages import stage_named
from .forward import hessian, jacobian, jvp
from .plans import CACHE_SIZE
from .transforms import _api, make_gradient_function, source, vjp


class Reverse:
    """A function with derivatives attached: `f(x)`, `f.grad(x)`, `f.vjp(x)`, `f.source`."""

    def __init__(self, fn: types.FunctionType, stage: str = "efficient"):
        functools.update_wrapper(self, fn)
        self.__chad_wrapped__ = fn
        self.stage = stage_named(stage).name
        self._gradients: dict[tuple[int, bool], Callable] = {}  # (number of arguments, with value) -> grad function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__chad_wrapped__(*args, **kwargs)

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """A method decorated with `@reverse`: bound to its instance like a plain function."""
        if instance is None:
            return self
        return Reverse(types.MethodType(self.__chad_wrapped__, instance), self.stage)

    def _gradient(self, nargs: int, with_value: bool) -> Callable:
        """The gradient function w.r.t. all `nargs` positional arguments (made once: its plans are kept)."""
        g = self._gradients.get((nargs, with_value))
        if g is None:
            nums: int | tuple[int, ...] = 0 if nargs == 1 else tuple(range(nargs))
            g = make_gradient_function(self.__chad_wrapped__, nums, False, True, self.stage, with_value, every=True)
            if len(self._gradients) >= CACHE_SIZE:  # called with many numbers of arguments
                self._gradients.clear()
            self._gradients[nargs, with_value] = g
        return g

    def grad(self, *args: Any, **kwargs: Any) -> Any:
        """Gradients w.r.t. all positional arguments (a tuple; the bare gradient if there is one)."""
        return self._gradient(len(args), False)(*args, **kwargs)

    def value_and_grad(self, *args: Any, **kwargs: Any) -> tuple:
        return self._gradient(len(args), True)(*args, **kwargs)

    @_api
    def vjp(self, *args: Any) -> tuple:
        return vjp(self.__chad_wrapped__, *args, stage=self.stage)

    @_api
    def jvp(self, primals: tuple, tangents: tuple) -> tuple:
        """`(f(*primals), its tangent along tangents)` (`chad.jvp`)."""
        return jvp(self.__chad_wrapped__, primals, tangents)

    def jacobian(self, *args: Any) -> Any:
        """The Jacobian with respect to all positional arguments (`chad.jacobian`: the bare one if there is one)."""
        nums: int | tuple[int, ...] = 0 if len(args) == 1 else tuple(range(len(args)))
        return jacobian(self.__chad_wrapped__, nums)(*args)

    def hessian(self, *args: Any) -> Any:
        """The Hessian with respect to all positional arguments (`chad.hessian`)."""
        nums: int | tuple[int, ...] = 0 if len(args) == 1 else tuple(range(len(args)))
        return hessian(self.__chad_wrapped__, nums)(*args)

    @property
    def source(self) -> str:
        return source(self.__chad_wrapped__, stage=self.stage)

    def __repr__(self) -> str:
        return f"<chadpy.reverse {self.__chad_wrapped__.__qualname__}>"

    def __reduce__(self) -> str | tuple:
        """Pickled by reference to the module-level name it is (`@chad.reverse def f`), as a function is; a method
        bound to its object by the object and the method's name; otherwise by the function it decorates."""
        fn = self.__chad_wrapped__
        if isinstance(fn, types.MethodType):
            return (getattr, (fn.__self__, fn.__func__.__name__))
        found: object = sys.modules.get(getattr(fn, "__module__", None) or "")
        for part in fn.__qualname__.split("."):  # `C.f` for a method: the class's attribute is this object
            found = getattr(found, part, None)
        if found is self:
            return fn.__qualname__
        return (Reverse, (fn, self.stage))


@_api
def reverse(fn: types.FunctionType | None = None, *, stage: str = "efficient") -> Any:
    """Decorator: `f` stays callable as before and gains `grad`, `value_and_grad`, `vjp`, `jvp`, `jacobian`,
    `hessian`, `source`.

    `@reverse` or `@reverse(stage="naive")`: the stage its derivatives use.
    """
    stage_named(stage)  # an unknown stage fails here, not at the first call
    if fn is None:
        return lambda f: Reverse(f, stage)
    return Reverse(fn, stage)
