"""The last step: the derivative's source compiled (with a real file, so tracebacks and debuggers show
its lines) and run, its entry specialisation's two functions taken from the module it made."""

from __future__ import annotations

import hashlib
import linecache
import os
import tempfile
import types
from dataclasses import dataclass
from typing import NamedTuple

from ..errors import Loc
from ..infer.inference import Spec
from ..ir.types import VType
from ..read.source import Watch

_DEEP_RECURSION = 200_000  # Python frames: enough for expressions nested ~10,000 deep
_DEEP_STACK = 512 * 1024 * 1024  # bytes of C stack for the thread that compiles them
_ORIGINS: dict[str, dict[int, Loc]] = {}  # generated file -> its line -> the user's line it comes from


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
    """A compiled derivative of one function for one argument signature."""

    entry: Spec
    forward: types.FunctionType  # f_chad(*params) -> (result, saved)
    backward: types.FunctionType  # f_bp(saved, d) -> the parameters' cotangents
    source: str
    filename: str
    watch: Watch

    @property
    def sig(self) -> tuple[VType, ...]:
        return self.entry.sig

    @property
    def result_type(self) -> VType:
        return self.entry.result


def load(generated: Generated) -> Derivative:
    """Compile the derivative's source (with a real file, so tracebacks show its lines) and run it."""
    entry = generated.entry
    filename = _write_source(entry.name, generated.source)
    _ORIGINS[filename] = generated.origins
    namespace = dict(generated.bindings)
    namespace["__name__"] = f"chadpy.generated.{entry.name}"
    exec(compile(generated.source, filename, "exec"), namespace)
    forward, backward = namespace[entry.name], namespace[entry.backward]
    return Derivative(entry, forward, backward, generated.source, filename, generated.watch)


def origin(filename: str, lineno: int) -> Loc | None:
    """The user's line a line of a generated derivative comes from (None for other files)."""
    return _ORIGINS.get(filename, {}).get(lineno)


def _write_source(name: str, source: str) -> str:
    """Put the generated source in a real file (debuggers open it) and in linecache."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    folder = os.path.join(tempfile.gettempdir(), f"chadpy-{os.getuid() if hasattr(os, 'getuid') else 'user'}")
    filename = os.path.join(folder, f"{name}_{digest}.py")
    try:
        os.makedirs(folder, exist_ok=True)
        if not os.path.exists(filename):
            with open(filename, "w") as f:
                f.write(source)
    except OSError:
        filename = f"<chadpy {name} {digest}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename
