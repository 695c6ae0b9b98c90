"""Deterministic cost: bytecode instructions executed plus array elements touched (docs/design.md section 7).

`measure(thunk)` runs `thunk()` and returns `(result, Cost(opcodes, elements))`. Both numbers depend only on what the
program does, never on the clock, so cost tests can compare them exactly.

Opcodes
-------
On Python 3.11 a `sys.settrace` tracer sets `f_trace_opcodes = True` (and `f_trace_lines = False`) on every Python
frame that starts or resumes while the thunk runs and counts its 'opcode' events; from 3.12, where settrace is built
on `sys.monitoring` and an opcode tracer set in a frame's 'call' event misses that frame (the first measurement in a
process counted 0 on 3.12.1, and 3.13.0's counts varied from run to run), `sys.monitoring`'s INSTRUCTION events are
counted directly. Either way: one per bytecode instruction executed, in every frame:
the thunk, everything it calls, chadpy's runtime, numpy's Python-level code (`np.sum`'s wrapper, `_methods._sum`,
`np.linalg.norm`, array-function dispatchers), callbacks run from C (`sorted(key=...)`, `__del__`, properties),
generator and coroutine frames each time they resume, and modules imported for the first time.

Not counted as opcodes:

- the frames of this module (`measure`, `counted`, `charge`, the `CountedArray` hooks and their helpers): the
  instrumentation itself is free, but whatever those hooks call outside this module (numpy's Python-level code) is
  counted exactly as if the plain ndarray had been used;
- the instructions before a code object's first traceable instruction (`RESUME`, `COPY_FREE_VARS`, `MAKE_CELL`,
  `RETURN_GENERATOR`): CPython does not trace them;
- other threads (tracing is per thread);
- work inside one C call: `[0.0] * n`, `list(xs)`, `dict(d)`, `tuple(g)`, `sorted(xs)`, `sum(xs)`, `a.copy()`,
  `np.zeros(n)` are a handful of instructions whatever n is. That is what elements are for.

Elements
--------
Array work is charged through `CountedArray`, an `np.ndarray` subclass: `counted(value)` turns every ndarray in
`value` (recursively inside tuples, lists and dicts) into a `CountedArray` view of the same memory. Charges accrue only
while a `measure` is active in the current thread; outside, counted arrays behave like plain ones and cost nothing.

The element count of a value is: ndarray -> `.size`; numpy scalar or Python bool/int/float/complex -> 1; list/tuple
-> sum over items; dict -> sum over values; anything else (None, slices, Ellipsis, strings, dtypes) -> 0.

Charged, when at least one argument is a `CountedArray` (the hooks unwrap all arguments to plain ndarrays, call the
plain operation, and wrap every ndarray in the result back into a `CountedArray`, so charges propagate along chains):

- ufuncs, `__array_ufunc__`: operators (`x + y`, `-x`, `x @ y`, `x < y`, `x += y`), ufunc calls (`np.exp(x)`), and the
  methods `reduce` (`np.add.reduce`, hence `x.sum()`, `x.max()`, `x.mean()`), `accumulate`, `reduceat`, `outer`:
  the element count of the positional arguments, of the keyword arguments other than `out`, and of the result (an
  `out=` array is charged once, as the result). `np.matmul` additionally charges `result.size * k`, k being the
  contracted length;
- `ufunc.at(a, indices, b)` (`np.add.at`): the element count of `indices` and `b` plus the number of elements of `a`
  selected by `indices`, not `a.size`: the scatter touches only those;
- array functions, `__array_function__` (`np.sum`, `np.dot`, `np.concatenate`, `np.zeros_like`, `np.outer`,
  `np.reshape`, `np.where`, `np.copy`, `np.linalg.norm`, ...): the element count of all arguments and of the result.
  `np.dot`, `np.inner`, `np.vdot` additionally charge `result.size * k` (k the contracted length);
- indexing: `x[key]` charges the element count of `key` and of the result; `x[key] = v` the element count of `key`,
  of `v` and of the selected part `x[key]`;
- the C-level methods `copy astype fill dot tolist flatten ravel reshape transpose swapaxes squeeze take put repeat
  sort argsort argmax argmin nonzero searchsorted diagonal compress clip __copy__ __deepcopy__`: the element count of
  `self`, of the arguments and of the result; iterating (`for v in x`, `list(x)`, `sum(x)`) goes through `x[i]` for
  every item (2 elements per item of a 1-d array).

Views are charged like copies (`x[1:]`, `np.reshape(x, s)`, `x.reshape(s)`); views made by attribute access (`x.T`,
`x.real`) are not charged. All charges are linear in sizes: super-linear algorithms other than the contractions above
(`np.sort`, `np.linalg.solve`, `np.einsum`, `np.tensordot`, `np.convolve`) are under-charged by a logarithmic or
polynomial factor.

Not charged (a documented limitation: the program must use counted inputs or call `charge` itself):

- anything on plain ndarrays only: `np.zeros(n)`, `np.ones`, `np.empty`, `np.full`, `np.arange`, `np.eye`,
  `np.array(list)`, and every operation whose arguments are all uncounted. Such results are plain ndarrays; combining
  one with a counted array charges its size from then on. Use `np.zeros_like(counted)` or `charge(n)`;
- `np.array(c)`, `np.asarray(c)`, `np.asanyarray(c)`, `np.ascontiguousarray(c)` and the buffer protocol
  (`memoryview(c)`, `bytes(c)`) on a counted `c`: creation functions are not dispatched (`np.array` copies n elements
  for free and returns a plain array);
- functions that read only metadata (`np.shape`, `np.ndim`, `np.size`, `np.result_type`): O(1);
- attribute access (`x.T`, `x.real`, `x.shape`, `x.flat`), `len(x)`, `float(x)`, `x.item()`, other C-level methods not
  listed above, and pickling;
- work in other threads (charges accrue to the measurements of the thread that does the work);
- Python C-level copies of Python containers: `list(xs)`, `dict(d)`, `[0.0] * n`, `xs[:]`, `{**d}`. Runtime code that
  builds or copies an n-element container in one C call must `charge(n)` itself.

`charge(n)` adds n elements to every active measurement of the current thread; it is a no-op outside `measure`.

Nesting and state
-----------------
`measure` is re-entrant: a `measure` inside a measured thunk counts into both, the outer one also paying the few
instructions of the call to the inner `measure` in its own frame. The only module-level mutable state is a
`threading.local` holding, per thread, the nesting depth and two monotone counters (a measurement is the difference of
the counters at its end and its start); the tracer is installed by the outermost `measure` of a thread and the previous
trace function (a debugger's, coverage's, or None) is restored when it returns or raises, so a debugger or coverage
does not see the lines run inside a measured thunk. Replacing the trace function inside a measured thunk makes the
counts meaningless: `measure` then raises `RuntimeError`. Measuring in several threads at once works but is not
deterministic: the garbage collector switch and the warnings filters are process-wide.

Determinism
-----------
The same thunk on the same state gives the same `Cost`: tracing in CPython 3.11 executes every instruction in its
base (unspecialised) form and dispatches each one separately, so adaptive specialisation and superinstructions never
change the count (a test checks a function warmed up thousands of times against a never-run copy of its code). During
the outermost `measure` the cyclic garbage collector is disabled (collections would run finalisers at
allocation-count-dependent moments) and the warnings registries are invalidated (`warnings.catch_warnings()`, which
is not thread-safe), so a warning shown once per location is shown, and its Python-level display code counted, on
every run, whatever warned before. Warnings raised inside an operation on counted arrays (numpy's floating-point
warnings) are attributed to this module: the hook is the innermost Python frame.
What remains the program's own business: first-call effects (a module imported on first use, `functools.cache`,
lazily built tables, `linecache` reading a source file for the first warning shown from it) make a first run dearer
than later ones: warm up before measuring. Iteration order of sets of strings depends on PYTHONHASHSEED, so counts of
code that iterates such sets may differ between processes. Counts are specific to the CPython and numpy versions
(bytecode and numpy's Python-level code differ between versions): compare costs within one process, never against
stored numbers.
"""

from __future__ import annotations

import contextlib
import gc
import operator
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any, TypeVar

import numpy as np

__all__ = ["Cost", "CountedArray", "charge", "counted", "measure", "uncounted"]

T = TypeVar("T")


@dataclass(frozen=True)
class Cost:
    """Bytecode instructions executed and array elements touched."""

    opcodes: int
    elements: int

    @property
    def total(self) -> int:
        return self.opcodes + self.elements

    def __add__(self, other: Cost) -> Cost:
        if not isinstance(other, Cost):
            return NotImplemented
        return Cost(self.opcodes + other.opcodes, self.elements + other.elements)


# ---------------------------------------------------------------------------------------------------------------------
# Per-thread counters and the tracer


class _State:
    """One thread's counters. `opcodes` and `elements` only grow; `depth` is the number of active measurements."""

    __slots__ = ("depth", "opcodes", "elements", "tracer")

    def __init__(self) -> None:
        self.depth = 0
        self.opcodes = 0
        self.elements = 0
        self.tracer = _make_tracer(self)


def _make_tracer(state: _State) -> Callable[[FrameType, str, Any], Any]:
    def local_trace(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            state.opcodes += 1
        return local_trace

    def global_trace(frame: FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename == _THIS_FILE:
            return None  # the instrumentation is free; frames it calls get their own 'call' event
        frame.f_trace_lines = False
        frame.f_trace_opcodes = True
        return local_trace

    return global_trace


_THIS_FILE: str = _make_tracer.__code__.co_filename
_threads = threading.local()  # the only mutable module state: `_threads.state`, one _State per thread


def _state() -> _State:
    state = getattr(_threads, "state", None)
    if state is None:
        state = _threads.state = _State()
    return state


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while the block runs, if it runs (restored after,
    also on errors; left off if it was off). `measure` pauses it so that no collection's work is
    counted; `build` so that the passes' many live nodes start no scans of the user's whole heap."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


def measure(thunk: Callable[[], T]) -> tuple[T, Cost]:
    """Run `thunk()`; return its result and the opcodes executed and elements charged while it ran (this thread)."""
    state = _state()
    if state.depth:  # nested: the outermost measure has set everything up
        if not _counting(state):
            raise RuntimeError("chadpy.cost.measure: the trace function was replaced inside an enclosing measure")
        return _measure_in(state, thunk)
    # catch_warnings invalidates the warnings registries now and restores the filters on exit
    with warnings.catch_warnings(), collector_paused():
        stop = _start_counting(state)
        try:
            result, cost = _measure_in(state, thunk)
        finally:
            replaced = not _counting(state)
            stop()
    if replaced:
        raise RuntimeError("chadpy.cost.measure: the thunk replaced the trace function; its cost cannot be measured")
    return result, cost


if sys.version_info >= (3, 12):
    _monitoring = sys.monitoring
    _TOOL = _monitoring.PROFILER_ID
    _TOOL_NAME = "chadpy.cost"

    def _count_instruction(code: Any, offset: int) -> Any:
        if code.co_filename == _THIS_FILE:
            return _monitoring.DISABLE  # the instrumentation is free: this location is never reported again
        state = getattr(_threads, "state", None)
        if state is not None and state.depth:  # the measuring thread's (the events are the whole process's)
            state.opcodes += 1
        return None

    def _start_counting(state: _State) -> Callable[[], None]:
        if _monitoring.get_tool(_TOOL) is not None:
            raise RuntimeError(
                f"chadpy.cost.measure: sys.monitoring's profiler slot is {_monitoring.get_tool(_TOOL)}'s"
            )
        _monitoring.use_tool_id(_TOOL, _TOOL_NAME)
        _monitoring.register_callback(_TOOL, _monitoring.events.INSTRUCTION, _count_instruction)
        _monitoring.set_events(_TOOL, _monitoring.events.INSTRUCTION)

        def stop() -> None:
            _monitoring.set_events(_TOOL, 0)
            _monitoring.register_callback(_TOOL, _monitoring.events.INSTRUCTION, None)
            _monitoring.free_tool_id(_TOOL)

        return stop

    def _counting(state: _State) -> bool:
        return _monitoring.get_tool(_TOOL) == _TOOL_NAME

else:

    def _start_counting(state: _State) -> Callable[[], None]:
        previous = sys.gettrace()
        sys.settrace(state.tracer)
        return lambda: sys.settrace(previous)

    def _counting(state: _State) -> bool:
        return sys.gettrace() is state.tracer


def _measure_in(state: _State, thunk: Callable[[], T]) -> tuple[T, Cost]:
    start_opcodes, start_elements = state.opcodes, state.elements
    state.depth += 1
    try:
        result = thunk()
    finally:
        state.depth -= 1
    return result, Cost(state.opcodes - start_opcodes, state.elements - start_elements)


def charge(n: int) -> None:
    """Charge `n` elements to every active measurement of this thread; no-op outside `measure`."""
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"chadpy.cost.charge: negative element count {n}")
    state = _state()
    if state.depth:
        state.elements += n


# ---------------------------------------------------------------------------------------------------------------------
# Counted arrays

_SCALARS = (bool, int, float, complex, np.generic)


def _count(value: object) -> int:
    """The element count of a value (module docstring)."""
    if isinstance(value, np.ndarray):
        return value.size
    if isinstance(value, _SCALARS):
        return 1
    if isinstance(value, (list, tuple)):
        return sum(_count(v) for v in value)
    if isinstance(value, dict):
        return sum(_count(v) for v in value.values())
    return 0


def _charge_counted(n: int) -> None:
    state = _state()
    if state.depth:
        state.elements += n


def _rebuild(value: object, leaf: Callable[[np.ndarray], object]) -> Any:
    """`value` with every ndarray `a` inside tuples, lists and dicts replaced by `leaf(a)`; containers are copied."""
    if isinstance(value, np.ndarray):
        return leaf(value)
    if isinstance(value, tuple):
        items = [_rebuild(v, leaf) for v in value]
        if type(value) is tuple:
            return tuple(items)
        if hasattr(value, "_fields"):  # namedtuple
            return type(value)(*items)
        return type(value)(items)
    if isinstance(value, list):
        return [_rebuild(v, leaf) for v in value]
    if isinstance(value, dict):
        return {k: _rebuild(v, leaf) for k, v in value.items()}
    return value


def _plain(a: np.ndarray) -> np.ndarray:
    return np.ndarray.view(a, np.ndarray) if isinstance(a, CountedArray) else a


def _wrap(a: np.ndarray) -> np.ndarray:
    return a if isinstance(a, CountedArray) else np.ndarray.view(a, CountedArray)


def counted(value: T) -> T:
    """`value` with every ndarray (inside tuples, lists, dicts) replaced by a `CountedArray` view of the same memory.

    Containers are rebuilt (tuple subclasses and namedtuples keep their type, list and dict subclasses become list and
    dict); other objects, numpy scalars included, are returned as they are.
    """
    return _rebuild(value, _wrap)


def uncounted(value: T) -> T:
    """The inverse of `counted`: every `CountedArray` inside `value` replaced by a plain ndarray view."""
    return _rebuild(value, _plain)


class _Unwrapper:
    """Unwraps arguments, remembering which plain view stands for which counted array (for `out=` results)."""

    __slots__ = ("originals",)

    def __init__(self) -> None:
        self.originals: dict[int, tuple[np.ndarray, CountedArray]] = {}  # the plain view is kept alive: ids stay unique

    def leaf(self, a: np.ndarray) -> np.ndarray:
        if not isinstance(a, CountedArray):
            return a
        plain = np.ndarray.view(a, np.ndarray)
        self.originals[id(plain)] = (plain, a)
        return plain

    def unwrap(self, value: Any) -> Any:
        return _rebuild(value, self.leaf)

    def wrap(self, value: Any) -> Any:
        return _rebuild(value, self._wrap_leaf)

    def _wrap_leaf(self, a: np.ndarray) -> np.ndarray:
        entry = self.originals.get(id(a))
        return entry[1] if entry is not None and entry[0] is a else _wrap(a)


def _contracted(a: object) -> int:
    """The length contracted by matmul/dot/inner with `a` on the left (1 for a scalar or a non-array)."""
    # No numpy Python-level helper (np.shape, np.size) here or anywhere in the hooks: their frames would be counted.
    return a.shape[-1] if isinstance(a, np.ndarray) and a.ndim else 1


def _selected(target: np.ndarray, key: Any) -> int:
    """How many elements of `target` `target[key]` selects (a fancy key makes a copy: O(k) time, never charged)."""
    return _count(target[key])


def _counted_method(name: str) -> Callable[..., Any]:
    method = getattr(np.ndarray, name)

    def wrapper(self: CountedArray, *args: Any, **kwargs: Any) -> Any:
        u = _Unwrapper()
        plain_self = u.leaf(self)
        plain_args, plain_kwargs = u.unwrap(args), u.unwrap(kwargs)
        result = method(plain_self, *plain_args, **plain_kwargs)
        extra = _count(result) * _contracted(plain_self) if name == "dot" else 0
        _charge_counted(_count(plain_self) + _count(plain_args) + _count(plain_kwargs) + _count(result) + extra)
        return u.wrap(result)

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = f"`np.ndarray.{name}`, charged (chadpy.cost)."
    return wrapper


_METHODS = (
    "copy astype fill dot tolist flatten ravel reshape transpose swapaxes squeeze take put repeat sort argsort argmax "
    "argmin nonzero searchsorted diagonal compress clip __copy__"
).split()

_CONTRACTIONS = {np.dot, np.inner}


# Array functions that read only an array's metadata: O(1) whatever its size.
_METADATA = frozenset({np.shape, np.ndim, np.size, np.result_type})


class CountedArray(np.ndarray):
    """An ndarray view whose operations charge the elements they touch to the active `measure` (module docstring)."""

    __chad_array__ = True  # differentiated as a plain array: its operations are NumPy's, counted

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        u = _Unwrapper()
        plain_inputs = u.unwrap(inputs)
        plain_kwargs = u.unwrap(kwargs)
        result = getattr(ufunc, method)(*plain_inputs, **plain_kwargs)
        if method == "at":
            target, indices, *rest = plain_inputs
            n = _count(indices) + _count(rest) + _selected(target, indices)
        else:
            n = _count(plain_inputs) + _count(result)
            n += sum(_count(v) for k, v in plain_kwargs.items() if k != "out")
            if ufunc is np.matmul and method == "__call__":
                n += _count(result) * _contracted(plain_inputs[0])
        _charge_counted(n)
        return None if method == "at" else u.wrap(result)

    def __array_function__(self, func: Callable[..., Any], types: Any, args: Any, kwargs: Any) -> Any:
        u = _Unwrapper()
        plain_args, plain_kwargs = u.unwrap(args), u.unwrap(kwargs)
        implementation = func
        if all(issubclass(t, np.ndarray) for t in types):  # dispatch is done: do not run numpy's dispatcher again
            implementation = getattr(func, "_implementation", func)
        result = implementation(*plain_args, **plain_kwargs)
        n = 0 if func in _METADATA else _count(plain_args) + _count(plain_kwargs) + _count(result)
        if func in _CONTRACTIONS:
            n += _count(result) * _contracted(plain_args[0])
        elif func is np.vdot:
            n += _count(plain_args[0])
        _charge_counted(n)
        return u.wrap(result)

    def __getitem__(self, key: Any) -> Any:
        u = _Unwrapper()
        plain_key = u.unwrap(key)
        result = np.ndarray.__getitem__(u.leaf(self), plain_key)
        _charge_counted(_count(plain_key) + _count(result))
        return u.wrap(result)

    def __setitem__(self, key: Any, value: Any) -> None:
        u = _Unwrapper()
        plain_self, plain_key, plain_value = u.leaf(self), u.unwrap(key), u.unwrap(value)
        np.ndarray.__setitem__(plain_self, plain_key, plain_value)
        _charge_counted(_count(plain_key) + _count(plain_value) + _selected(plain_self, plain_key))

    def __deepcopy__(self, memo: dict[int, Any]) -> CountedArray:
        result = np.ndarray.__deepcopy__(np.ndarray.view(self, np.ndarray), memo)
        _charge_counted(2 * self.size)
        return _wrap(result)


for _name in _METHODS:
    setattr(CountedArray, _name, _counted_method(_name))
del _name
