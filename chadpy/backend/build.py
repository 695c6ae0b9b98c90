"""The whole pipeline for one entry point: function + argument types -> compiled derivative.

source -> gast -> core IR (lower) -> types (infer) -> CHAD -> simplify -> gast -> source
(codegen) -> code object (compile, with a real file so tracebacks show its lines) -> exec.
"""

from __future__ import annotations

import hashlib
import linecache
import os
import sys
import tempfile
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from ..chad.returned_vectors import return_environment_vectors
from ..chad.stages import Stage
from ..chad.transform import chad_spec
from ..errors import Loc
from ..infer.inference import Program, Spec
from ..ir import nodes as ir
from ..ir.types import VType
from ..optimise.simplify import simplify as simplify_def
from ..read.source import Watch
from ..runtime.cost import collector_paused
from .codegen import generate
from .lift import lift, name_apart

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


def generate_source(
    fn: types.FunctionType, sig: tuple[VType, ...], stage: Stage, simplify: bool = True, annotate: bool = True
) -> Generated:
    """The derivative of `fn` for argument types `sig`, as source text."""
    # The passes keep tens of thousands of nodes alive at once, which made the cyclic collector scan
    # the whole heap, the user's objects included (with NumPy, SciPy or a model loaded, for longer
    # than the passes took). Its next collection, right after (the paused allocations count), frees
    # what they leave in cycles.
    with collector_paused():
        try:
            return _generate_source(fn, sig, stage, simplify, annotate)
        except RecursionError:  # a deeply nested expression: the passes recurse once per level
            return _with_deep_recursion(_generate_source, fn, sig, stage, simplify, annotate)


def _with_deep_recursion(f: Callable, *args: object) -> object:
    """f(*args) in a thread with a large stack and a high recursion limit (the limit is process-wide:
    restored after)."""
    result: list = []

    def run() -> None:
        try:
            result.append((True, f(*args)))
        except BaseException as e:  # re-raised in the caller's thread
            result.append((False, e))

    limit = sys.getrecursionlimit()
    size = threading.stack_size()
    sys.setrecursionlimit(max(limit, _DEEP_RECURSION))
    threading.stack_size(_DEEP_STACK)
    try:
        worker = threading.Thread(target=run)
        worker.start()
        worker.join()
    finally:
        threading.stack_size(size)
        sys.setrecursionlimit(limit)
    ok, value = result[0]
    if not ok:
        raise value
    return value


def _generate_source(
    fn: types.FunctionType, sig: tuple[VType, ...], stage: Stage, simplify: bool, annotate: bool
) -> Generated:
    watch = Watch()
    program = Program(watch)
    entry = program.spec(fn, sig)
    specs = program.infer(entry)
    name_apart(specs)
    defs = [chad_spec(s, stage) for s in specs]
    if not stage.state_passing:
        defs = [return_environment_vectors(d, stage.environment) for d in defs]
    if simplify and stage.simplifiable:
        defs = [simplify_def(d, s.types) for d, s in zip(defs, specs)]
    module = {n for s in specs for n in (s.name, s.backward)}
    defs = [f for d, s in zip(defs, specs) for f in lift(d, s.backward, module)]
    source, bindings, origins = generate(defs, annotate)
    return Generated(source, bindings, entry, watch, origins)


def typed_ir(fn: types.FunctionType, sig: tuple[VType, ...]) -> str:
    """The core IR of `fn` and of every function it calls, each specialised to the types it is
    called with, in the paper's `let ... in` form with every binder's type (a `'` marks a type
    that carries a derivative: `float'`)."""
    program = Program(Watch())
    specs = program.infer(program.spec(fn, sig))
    parts = []
    for spec in specs:
        head = f"# {spec.name}: ({', '.join(map(repr, spec.sig))}) -> {spec.result!r}"
        parts.append(head + "\n" + ir.format_function(spec.fn, spec.types))
    return "\n\n".join(parts) + "\n"


def build(fn: types.FunctionType, sig: tuple[VType, ...], stage: Stage, simplify: bool = True) -> Derivative:
    generated = generate_source(fn, sig, stage, simplify)
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
