"""The last step: the derivative's source compiled (in `linecache` while it lives, so tracebacks and debuggers
show its lines: `texts.py`) and run, its entry specialisation's two functions taken from the module it made."""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass, field
from typing import NamedTuple

from .. import texts
from ..errors import Loc
from ..infer.inference import Spec
from ..ir.types import VType
from ..read.origin import names_read
from ..read.source import Watch

_DEEP_RECURSION = 200_000  # Python frames: enough for expressions nested ~10,000 deep
_DEEP_STACK = 512 * 1024 * 1024  # bytes of C stack for the thread that compiles them


class Generated(NamedTuple):
    """A derivative's source text, the objects its names need, its entry specialisation, the outside
    values it read, and the user's line each of its lines comes from."""

    source: str
    bindings: dict[str, object]
    entry: Spec
    watch: Watch
    origins: dict[int, Loc]


@dataclass
class Derivative:
    """A compiled derivative of one function for one argument signature: its two functions, what they take and
    give, and its module (not the typed program it was made from: a cached derivative keeps no user function)."""

    forward: types.FunctionType  # f_chad(*params) -> (result, saved)
    backward: types.FunctionType  # f_bp(saved, d) -> the parameters' cotangents
    sig: tuple[VType, ...]  # the parameters' types
    result_type: VType
    loc: Loc  # the function's definition
    source: str
    filename: str
    watch: Watch
    namespace: dict[str, object] = field(default_factory=dict)  # the generated module's globals

    @functools.cached_property
    def functions(self) -> dict[str, types.FunctionType]:
        """The functions its module defines, by name."""
        ns = self.namespace
        return {k: v for k, v in ns.items() if type(v) is types.FunctionType and v.__globals__ is ns}

    @functools.cached_property
    def called(self) -> frozenset[str]:
        """The names of its module's functions that its code calls by name (the others, the entry's two,
        are reached through `forward` and `backward` alone)."""
        read = set().union(*(names_read(f.__code__) for f in self.functions.values()))
        return frozenset(self.functions).intersection(read)


def load(generated: Generated) -> Derivative:
    """Compile the derivative's source (its lines in linecache, so tracebacks show them) and run it."""
    entry = generated.entry
    code = texts.compiled(entry.name, generated.source, generated.origins)
    namespace = dict(generated.bindings)
    namespace["__name__"] = f"chadpy.generated.{entry.name}"
    exec(code, namespace)
    forward, backward = namespace[entry.name], namespace[entry.backward]
    return Derivative(
        forward,
        backward,
        entry.sig,
        entry.result,
        entry.fn.loc,
        generated.source,
        code.co_filename,
        generated.watch,
        namespace,
    )


def rebound(d: Derivative, names: dict[str, object], watch: Watch) -> Derivative:
    """The same compiled derivative with some names of its module bound to other objects (a closure's arrays, made
    afresh: `api/sharing.py`): its functions again, over a copy of their module's globals. No compilation."""
    namespace = {**d.namespace, **names}
    made = {}
    for name, value in d.functions.items():
        again = types.FunctionType(value.__code__, namespace, value.__name__, value.__defaults__, value.__closure__)
        again.__kwdefaults__, again.__qualname__ = value.__kwdefaults__, value.__qualname__
        made[name] = again
        # only the functions called by name go into the module: one that holds its own module is a reference
        # cycle, freed by the garbage collector's scans, not when the closure goes
        if name in d.called:
            namespace[name] = again
        else:
            namespace.pop(name, None)
    forward, backward = made[d.forward.__name__], made[d.backward.__name__]
    out = Derivative(forward, backward, d.sig, d.result_type, d.loc, d.source, d.filename, watch, namespace)
    out.functions, out.called = made, d.called  # its module no longer holds them all
    return out


def origin(filename: str, lineno: int) -> Loc | None:
    """The user's line a line of a generated derivative comes from (None for other files)."""
    origins = texts.beside(filename)
    return origins.get(lineno) if isinstance(origins, dict) else None
