"""The pipeline: every pass from a Python function to its derivative, in the order they run.

`FRONT_END` reads and lowers one function (inference runs it for each function the entry point
reaches); `PASSES` is the whole list, the front end first. Each pass is one function with a
one-line docstring; `generate_source` runs them, and `show(fn, sig, stage, after=NAME)` stops
after the pass named NAME and prints the program as it stands there: the entry function's source
(gast passes), its core IR (lowering), the typed IR of every specialisation (inference), the target
program (CHAD and the optimiser's passes) or the generated module (the back end).
`python -m chadpy passes` lists them; `chad.source(f, *args, after=NAME)` prints one.
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import gast

from .backend.build import Derivative, Generated, load
from .backend.codegen import generate
from .backend.lift import lift_backpropagators, name_apart
from .chad.returned_vectors import return_environment_vectors
from .chad.stages import Stage
from .chad.transform import chad_spec
from .errors import ChadError
from .forward.transform import Forward, jvp_entry, tangent_output
from .infer.inference import Program, Spec
from .ir import nodes as ir
from .ir.records import Constructor
from .ir.types import VType, activated, inactive, is_active, tangent_of
from .ir.verify import verify
from .lower import objects
from .lower.lowerer import Lowerer
from .optimise import simplify
from .optimise.caller_accumulators import accumulate_into_callers
from .read.fence import fence
from .read.source import ParsedFunction, Watch, parse_function
from .rewrite import as_written, assignments, blocks, copies, views
from .rewrite import local_state as local_state_pass
from .rewrite import tries as try_statements
from .runtime.cost import collector_paused
from .target.statements import Def

T = TypeVar("T")
_DEEP_RECURSION = 200_000  # Python frames: enough for expressions nested ~10,000 deep
_DEEP_STACK = 512 * 1024 * 1024  # bytes of C stack for the thread that compiles them


@dataclass(frozen=True)
class Pass:
    """One pass: its name (for `after=`), the function that runs it, and what the program is after it
    ("source", "ir", "typed ir", "target" or "module")."""

    name: str
    run: Callable
    makes: str

    @property
    def doc(self) -> str:
        return (self.run.__doc__ or "").strip().splitlines()[0]


# ---------------------------------------------------------------- the front end, one function at a time


@dataclass
class FrontEndFunction:
    """One function in the front end: its source tree until it is lowered, then its core IR."""

    fn: types.FunctionType
    watch: Watch
    parsed: ParsedFunction | None = None
    lowered: ir.Function | None = None


def read(f: FrontEndFunction) -> None:
    """Read the function's source (its own code object's) and parse it with gast."""
    f.parsed = parse_function(f.fn)


def run_as_written(f: FrontEndFunction) -> None:
    """Statements chadpy does not differentiate (`raise`, `global`, `del`, ...) become calls of themselves."""
    as_written.as_written(f.parsed)


def local_state(f: FrontEndFunction) -> None:
    """An attribute of an object the function was given, written and read again, is a variable of the call."""
    local_state_pass.local_state(f.parsed)


def fence_(f: FrontEndFunction) -> None:
    """Reject the constructs outside the language before any other work, naming the line."""
    fence(f.parsed)


def with_blocks(f: FrontEndFunction) -> None:
    """`with cm as v: body` is `__enter__`, the body, `__exit__`."""
    blocks.with_blocks(f.parsed)


def tries(f: FrontEndFunction) -> None:
    """Each statement of a `try` body is an attempted call of a function of it; handlers test what it caught."""
    try_statements.tries(f.parsed)


def element_assignments(f: FrontEndFunction) -> None:
    """`x[k] = v` and `x[k] op= v` are the updates they mean (`x.__setitem__(k, ...)`)."""
    assignments.element_assignments(f.parsed)


def follow_copies(f: FrontEndFunction) -> None:
    """After `b = a`, reads of `b` are reads of the object `a` names."""
    copies.follow_copies(f.parsed)


def follow_views(f: FrontEndFunction) -> None:
    """A write through a view is given back to its base before a name that missed it is read."""
    views.follow_views(f.parsed)


def lower(f: FrontEndFunction) -> None:
    """Lower the tree to the core IR: A-normal form, SSA names, control flow, desugaring, closures."""
    f.lowered = Lowerer(f.parsed, f.watch).function()


def verify_(f: FrontEndFunction) -> None:
    """Check the IR's invariants (single assignment, atoms as operands, scoping): a failure is chadpy's."""
    verify(f.lowered)


FRONT_END = (
    Pass("read", read, "source"),
    Pass("local_state", local_state, "source"),
    Pass("as_written", run_as_written, "source"),
    Pass("fence", fence_, "source"),
    Pass("with_blocks", with_blocks, "source"),
    Pass("tries", tries, "source"),
    Pass("element_assignments", element_assignments, "source"),
    Pass("follow_copies", follow_copies, "source"),
    Pass("follow_views", follow_views, "source"),
    Pass("lower", lower, "ir"),
    Pass("verify", verify_, "ir"),
)


def front_end(fn: types.FunctionType, watch: Watch, until: str | None = None) -> FrontEndFunction:
    """`fn` through the front end (up to and including the pass `until`)."""
    f = FrontEndFunction(fn, watch)
    for p in FRONT_END:
        p.run(f)
        if p.name == until:
            break
    return f


def lower_code(code: object, watch: Watch) -> ir.Function:
    """The core IR of a user function, or of a class's constructor (its `__init__`, lowered as is)."""
    if isinstance(code, Constructor):
        return objects.constructor_function(code, Lowerer, watch, _read_source)
    return front_end(code, watch).lowered


def _read_source(fn: types.FunctionType, watch: Watch) -> ParsedFunction:
    """`fn`'s tree after the passes on the source (a constructor's `__init__`, lowered with `self` made)."""
    f = FrontEndFunction(fn, watch)
    for p in FRONT_END:
        if p.makes == "source":
            p.run(f)
    return f.parsed


# ---------------------------------------------------------------- the whole program


@dataclass
class Compilation:
    """The derivative of one entry point for one argument signature, as the passes make it."""

    fn: types.FunctionType | ir.Function
    sig: tuple[VType, ...]
    stage: Stage
    simplify: bool = True
    annotate: bool = True
    forward: bool = False  # forward mode: the entry's tangent code, compiled with nothing differentiated
    watch: Watch = field(default_factory=Watch)
    entry: Spec | None = None
    specs: list[Spec] = field(default_factory=list)
    defs: list[Def] = field(default_factory=list)  # one target program per specialisation
    optimising: list[simplify.Optimising] = field(default_factory=list)
    generated: Generated | None = None


def infer(c: Compilation) -> None:
    """Specialise the entry point, and every function it reaches, to the types of its arguments."""
    program = Program(c.watch, lower_code, jvp_entry_of)
    c.entry = program.spec(c.fn, c.sig)
    c.specs = program.infer(c.entry)
    name_apart(c.specs)


def forward_mode(c: Compilation) -> None:
    """Forward mode: each specialisation paired with tangents (a tangent parameter per active one), inferred again."""
    if not c.forward:
        return
    c.fn, c.sig = forward_code(c.entry), forward_signature(c.sig)
    c.forward = False
    infer(c)


def forward_code(entry: Spec) -> ir.Function:
    """The forward form of an inferred entry point and of every function it reaches: <result, tangent>."""
    return Forward().of(entry)


def forward_signature(sig: tuple[VType, ...]) -> tuple[VType, ...]:
    """The argument types of a forward form, with nothing differentiated: the parameters, then the tangents of
    those a derivative flows through."""
    return (*map(inactive, sig), *(tangent_of(t) for t in sig if is_active(t)))


def forward_program(fn: object, sig: tuple[VType, ...], watch: Watch) -> tuple[ir.Function, Spec]:
    """`fn` inferred at `sig` (active where a tangent comes in), and its forward form."""

    def run() -> tuple[ir.Function, Spec]:
        program = Program(watch, lower_code, jvp_entry_of)
        entry = program.spec(fn, sig)
        program.infer(entry)
        return forward_code(entry), entry

    with collector_paused():
        try:
            return run()
        except RecursionError:  # a deeply nested expression: the passes recurse once per level
            return _with_deep_recursion(run)


def jvp_entry_of(code: object, sig: tuple[VType, ...], lifted: bool, packed: bool, watch: Watch) -> ir.Function:
    """What `chad.jvp` of `code` at parameter types `sig` calls inside differentiated code: its forward form, made
    in a program of its own (whatever differentiates the caller then differentiates it like any other code)."""
    forward, _ = forward_program(code, sig, watch)
    return jvp_entry(forward, sig, lifted, packed)


def hessian_vector_program(
    fn: object, sig: tuple[VType, ...], differentiated: tuple[int, ...], watch: Watch
) -> tuple[ir.Function, tuple[VType, ...]]:
    """Reverse over forward: the function of (params, tangents) giving the tangent of `fn` at `sig` (active where
    a tangent comes in), and its argument types with the `differentiated` parameters active; its gradient with
    respect to them is the Hessian-vector product along the tangents."""
    code, _ = forward_program(fn, sig, watch)
    outer = tuple(activated(t) if k in differentiated else inactive(t) for k, t in enumerate(sig))
    return tangent_output(code), (*outer, *(tangent_of(t) for t in sig if is_active(t)))


def chad(c: Compilation) -> None:
    """CHAD (Fig. 7): each specialisation's primal code and its backpropagator, over an accumulator."""
    c.defs = [chad_spec(s, c.stage) for s in c.specs]


def returned_vectors(c: Compilation) -> None:
    """The first two stages: Fig. 7's state passing turned back into Fig. 2's returned vectors."""
    if not c.stage.state_passing:
        c.defs = [return_environment_vectors(d, c.stage.environment) for d in c.defs]


def _optimiser_pass(run: Callable[[simplify.Optimising], None]) -> Callable[[Compilation], None]:
    def optimise(c: Compilation) -> None:
        if not (c.simplify and c.stage.simplifiable):
            return
        if not c.optimising:
            c.optimising = [simplify.Optimising(d, s.types) for d, s in zip(c.defs, c.specs)]
        for o in c.optimising:
            run(o)
        c.defs = [o.fn for o in c.optimising]

    optimise.__doc__ = run.__doc__
    return optimise


def lift_(c: Compilation) -> None:
    """Each backpropagator becomes a module-level function of the values it reads (no closures)."""
    module = {n for s in c.specs for n in (s.name, s.backward)}
    c.defs = [f for d, s in zip(c.defs, c.specs) for f in lift_backpropagators(d, s.backward, module)]


def into_callers(c: Compilation) -> None:
    """A callee's backpropagator adds into its caller's cotangent, not into one of its own that the caller merges."""
    if c.simplify and c.stage.simplifiable:
        c.defs = accumulate_into_callers(c.defs, {s.backward for s in c.specs} - {c.entry.backward})


def codegen(c: Compilation) -> None:
    """Print the target program as Python, each part with the CHAD rule and the user's line it comes from."""
    source, bindings, origins = generate(c.defs, c.annotate)
    c.generated = Generated(source, bindings, c.entry, c.watch, origins)


PASSES = (
    *FRONT_END,
    Pass("infer", infer, "typed ir"),
    Pass("forward", forward_mode, "typed ir"),
    Pass("chad", chad, "target"),
    Pass("returned_vectors", returned_vectors, "target"),
    *(Pass(name, _optimiser_pass(run), "target") for name, run in simplify.PASSES),
    Pass("lift", lift_, "target"),
    Pass("into_callers", into_callers, "target"),
    Pass("codegen", codegen, "module"),
)
_AFTER_FRONT_END = PASSES[len(FRONT_END) :]


def pass_named(name: str) -> Pass:
    for p in PASSES:
        if p.name == name:
            return p
    raise ChadError(f"unknown pass {name!r}; the passes are {', '.join(p.name for p in PASSES)}")


def generate_source(
    fn: types.FunctionType,
    sig: tuple[VType, ...],
    stage: Stage,
    simplify: bool = True,
    annotate: bool = True,
    forward: bool = False,
) -> Generated:
    """The derivative of `fn` for argument types `sig` (with `forward`, its tangent code), as source text."""
    return _compiled(Compilation(fn, sig, stage, simplify, annotate, forward=forward)).generated


def build(
    fn: types.FunctionType | ir.Function,
    sig: tuple[VType, ...],
    stage: Stage,
    simplify: bool = True,
    forward: bool = False,
    watch: Watch | None = None,
) -> Derivative:
    """The derivative of `fn` for argument types `sig` (with `forward`, its tangent code), compiled and loaded."""
    c = Compilation(fn, sig, stage, simplify, forward=forward, watch=watch or Watch())
    return load(_compiled(c).generated)


def show(
    fn: types.FunctionType,
    sig: tuple[VType, ...],
    stage: Stage,
    after: str,
    annotate: bool = True,
    forward: bool = False,
) -> str:
    """The program as it stands after the pass named `after` (see the module's docstring)."""
    p = pass_named(after)
    if p in FRONT_END:
        f = front_end(fn, Watch(), until=after)
        return gast.unparse(f.parsed.tree) if p.makes == "source" else ir.format_function(f.lowered) + "\n"
    c = _compiled(Compilation(fn, sig, stage, annotate=annotate, forward=forward), until=after)
    if p.makes == "typed ir":
        return _typed(c.specs)
    if p.makes == "target":
        return generate(c.defs, annotate)[0]
    return c.generated.source


def typed_ir(fn: types.FunctionType, sig: tuple[VType, ...], forward: bool = False) -> str:
    """The core IR of `fn` and of every function it calls, each specialised to the types it is called
    with, in the paper's `let ... in` form with every binder's type (a `'` marks a type that carries a
    derivative: `float'`); with `forward`, of its forward form (each value with its tangent)."""
    c = Compilation(fn, sig, stage=None, forward=forward)
    infer(c)
    forward_mode(c)
    return _typed(c.specs)


def _typed(specs: list[Spec]) -> str:
    parts = []
    for spec in specs:
        head = f"# {spec.name}: ({', '.join(map(repr, spec.sig))}) -> {spec.result!r}"
        parts.append(head + "\n" + ir.format_function(spec.fn, spec.types))
    return "\n\n".join(parts) + "\n"


def _compiled(c: Compilation, until: str | None = None) -> Compilation:
    """Run the passes after the front end on `c` (up to and including `until`)."""

    def run() -> Compilation:
        for p in _AFTER_FRONT_END:
            p.run(c)
            if p.name == until:
                break
        return c

    # The passes keep tens of thousands of nodes alive at once, which made the cyclic collector scan
    # the whole heap, the user's objects included (with NumPy, SciPy or a model loaded, for longer
    # than the passes took). Its next collection, right after (the paused allocations count), frees
    # what they leave in cycles.
    with collector_paused():
        try:
            return run()
        except RecursionError:  # a deeply nested expression: the passes recurse once per level
            c.watch, c.defs, c.optimising = Watch(), [], []
            return _with_deep_recursion(run)


def _with_deep_recursion(f: Callable[[], T]) -> T:
    """f() in a thread with a large stack and a high recursion limit (the limit is process-wide:
    restored after)."""
    result: list = []

    def run() -> None:
        try:
            result.append((True, f()))
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
