"""The run-time half of `rules/records.py`: objects of user classes. A record's cotangent is like a
tuple's, keyed by attribute name: `Zero` or {name: cotangent}."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from .cotangents import Zero


def with_field(obj: object, name: str, value: object) -> object:
    """`obj.name = value` as an expression (only on objects the function itself made: a frozen dataclass's too,
    as its `__init__` sets them)."""
    object.__setattr__(obj, name, value)
    return obj


def copied(obj: object) -> object:
    """A new object of obj's class with obj's attributes (`super().__init__(...)` fills a copy of the object its
    constructor made so far, which the constructor goes on with)."""
    new = object.__new__(type(obj))
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                object.__setattr__(new, name, getattr(obj, name))
    if hasattr(obj, "__dict__"):
        new.__dict__.update(obj.__dict__)
    return new


def copied_in(value: Any) -> Any:
    """An attribute the function updates in place (`self.states[:, t] = h`), as its own copy for the call
    (`rewrite/local_state.py`): a list's, a dict's or an array's."""
    if isinstance(value, (list, dict)):
        return type(value)(value)
    return np.array(value, copy=True) if isinstance(value, np.ndarray) else value


def put_back(obj: object, name: str, value: Any, in_place: bool) -> None:
    """The call's copy of an attribute given back as the plain call leaves it: into the object it had (an array,
    list or dict updated in place: every name of it sees the change), or as the attribute's new value."""
    if not in_place:
        setattr(obj, name, value)
        return
    old = getattr(obj, name)
    if isinstance(old, np.ndarray):
        old[...] = value
    elif isinstance(old, list):
        old[:] = value
    elif isinstance(old, dict):
        old.clear()
        old.update(value)
    else:
        setattr(obj, name, value)


def without_field(d: object, name: str) -> object:
    """The cotangent of a record before `obj.name = ...`: the new one's, less that attribute's."""
    if d is Zero or name not in d:
        return d
    return {k: v for k, v in d.items() if k != name}


class FrozenDistribution:
    """A frozen SciPy distribution made in a differentiated function (`scipy.stats.norm(mu, 1.0)`): a record of
    its parameters by name (`params`), which chadpy differentiates like any object's attributes, and whose
    `logpdf`, `pdf`, ... are the family's rules (`objects.frozen_method`). Anything else is the frozen SciPy
    distribution's. One subclass per family (`rules/stats.py`), whose `dist` is the family."""

    dist: ClassVar[Any]
    params: ClassVar[tuple[str, ...]]
    defaults: ClassVar[tuple[object, ...]]  # of the trailing parameters

    def __init__(self, **params: object):
        self.__dict__.update(params)

    def frozen(self) -> Any:
        """SciPy's frozen distribution of these parameters."""
        return self.dist(**self.__dict__)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.frozen(), name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"


def scipy_frozen(d: Any) -> Any:
    """SciPy's frozen distribution of a frozen distribution's record (or one SciPy froze, as it is)."""
    return d.frozen() if isinstance(d, FrozenDistribution) else d


def frozen_parameter(d: Any, name: str, params: tuple[str, ...]) -> Any:
    """The parameter `name` (one of `params`) of a frozen distribution: the record's, or of one SciPy froze (made
    by code run as it is), from what it was given."""
    if isinstance(d, FrozenDistribution):
        return d.__dict__[name]
    if hasattr(d, "args"):  # scipy's `rv_frozen`: (shapes, loc[, scale])
        shapes, *rest = d.dist._parse_args(*d.args, **d.kwds)
        return dict(zip(params, (*shapes, *rest)))[name]
    return getattr(d, name)  # a multivariate one's (`mean`, `cov`, `alpha`)
