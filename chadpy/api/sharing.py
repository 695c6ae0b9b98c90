"""Derivatives shared by the closures of one code: a function made afresh (`make_loss(X, y)` on each call, a
lambda in a loop) takes the derivative made for an earlier function of the same code, rebound to its own arrays.

A derivative depends on a function's code, the types of its arguments and what its closure cells hold: an
array by its rank and dtype (derivatives are shape-generic), a number or a string by its value (it may be
folded into the code), anything else by its identity. A closure whose cells match one seen before gets that
derivative's compiled code again, its module's names for the cells' arrays bound to the new closure's
(`backend.build.rebound`): no transformation, no compilation. The template kept per code holds no array of
the closure it was made for.
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..backend.build import Derivative, rebound
from ..read.source import Watch

_VALUES = frozenset({int, float, complex, bool, str, bytes, type(None)})  # kept by value: immutable
_PER_CODE = 8  # templates kept per code: the newest closures' kinds


class _Template(NamedTuple):
    """A derivative made for one closure, ready to be bound to another of the same code and kinds."""

    derivative: Derivative  # its names for the cells' arrays bound to None
    arrays: dict[str, str]  # module name -> the free variable whose array it names
    read: tuple[str, ...]  # the free variables whose cells the derivative's watch read
    others: Watch  # the rest of its watch (module globals, other functions' cells)
    globals: dict  # the module the code runs in
    kept: tuple  # the objects the key holds by identity, alive while the template is


# id of a code -> (key, closure key) -> template; an entry goes with its code (the functions of that code): a
# finalizer removes it, so an id here is a live code's (a WeakKeyDictionary's lookup costs a weak reference a call)
_TEMPLATES: dict[int, dict[tuple, _Template]] = {}


def _cell_key(value: Any, first: int) -> tuple:
    """What a derivative reading `value` from a closure cell depends on (`first`: the first cell holding the
    same object, for the arrays: two names of one array are not two arrays to it)."""
    if _is_array(value):
        return (value.ndim, value.dtype, first)
    if type(value) in _VALUES:
        return (type(value), repr(value))  # repr: -0.0 is not 0.0, 1 is not True
    return ("is", id(value))  # held by the template (`kept`): the id names this object while it is cached


def _is_array(value: Any) -> bool:
    return type(value) is np.ndarray and not value.dtype.hasobject


def closure_key(fn: types.FunctionType) -> tuple | None:
    """The key of fn's closure cells' values, or None if a cell is empty."""
    closure = fn.__closure__
    if not closure:
        return ()
    try:
        contents = [c.cell_contents for c in closure]
    except ValueError:  # an empty cell (assigned later in the enclosing scope)
        return None
    firsts: dict[int, int] = {}
    return tuple([_cell_key(v, firsts.setdefault(id(v), k)) for k, v in enumerate(contents)])


def shared_derivative(fn: Any, key: tuple, make: Callable[[], Derivative]) -> Derivative:
    """`fn`'s derivative for `key` (its argument types, what is differentiated): from another closure of its code
    with a closure of the same key when one was made, else made by `make` (and kept for the next closure)."""
    closure = closure_key(fn) if isinstance(fn, types.FunctionType) else None
    if closure is None:  # a primitive, or a closure with an empty cell
        return make()
    templates = _TEMPLATES.get(id(fn.__code__))
    if templates is None:
        templates = _TEMPLATES[id(fn.__code__)] = {}
        weakref.finalize(fn.__code__, _TEMPLATES.pop, id(fn.__code__), None)
    template = templates.get((key, closure))
    if template is not None and template.globals is fn.__globals__ and template.others.still_valid():
        return _bound(template, fn)
    d = make()
    template = _template(d, fn)
    if template is not None:
        if len(templates) >= _PER_CODE:
            del templates[next(iter(templates))]
        templates[(key, closure)] = template
    return d


def _bound(template: _Template, fn: types.FunctionType) -> Derivative:
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    watch = Watch(dict(template.others.entries))
    for name in template.read:
        watch.add(cells[name], name, cells[name].cell_contents)
    arrays = {name: cells[var].cell_contents for name, var in template.arrays.items()}
    return rebound(template.derivative, arrays, watch)


def _template(d: Derivative, fn: types.FunctionType) -> _Template | None:
    """The template of `d`, made for `fn`; None if its module refers to fn's cells other than by their arrays
    under the cells' own names (a statement run as written holds the cells themselves), or if a cell's array is
    also what another name the derivative read holds (a global of the same array: rebinding would move both)."""
    names = fn.__code__.co_freevars
    closure = fn.__closure__ or ()
    cells = {id(c): name for name, c in zip(names, closure)}
    contents = [c.cell_contents for c in closure]
    arrays_by_id = {id(v): name for name, v in zip(names, contents) if _is_array(v)}
    others = Watch({k: entry for k, entry in d.watch.entries.items() if id(entry[0]) not in cells})
    if any(id(entry[2]) in arrays_by_id for entry in others.entries.values()):
        return None
    arrays = {}
    for name, value in d.namespace.items():
        if id(value) in arrays_by_id and _named_after(name, arrays_by_id[id(value)]):
            arrays[name] = arrays_by_id[id(value)]
        elif id(value) in arrays_by_id or _holds_cells(value, cells, arrays_by_id):
            return None  # the array under another name (a partial's argument, say): not the cell's to rebind
    read = tuple(cells[id(entry[0])] for entry in d.watch.entries.values() if id(entry[0]) in cells)
    kept = tuple(v for v in contents if not _is_array(v) and type(v) not in _VALUES)
    unbound = rebound(d, dict.fromkeys(arrays), Watch())
    return _Template(unbound, arrays, read, others, fn.__globals__, kept)


def _named_after(name: str, variable: str) -> bool:
    """Whether a module name is the one the back end gives a free variable's value: its name, or it with a number
    (`names.Globals`)."""
    return name == variable or name.startswith(variable + "_") and name[len(variable) + 1 :].isdigit()


def _holds_cells(value: Any, cells: dict[int, str], arrays: dict[int, str]) -> bool:
    """Whether a module name's value refers to a cell, or to a cell's array from inside a container."""
    if id(value) in cells:
        return True
    if isinstance(value, types.FunctionType):
        return any(id(c) in cells for c in value.__closure__ or ())
    if isinstance(value, (tuple, list)):
        return any(id(v) in arrays or _holds_cells(v, cells, arrays) for v in value)
    return False
