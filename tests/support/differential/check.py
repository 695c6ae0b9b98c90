"""The check: one program differentiated by chadpy, classified against plain Python and central
differences (`check`, `Outcome`)."""

from __future__ import annotations

import atexit
import copy
import importlib.util
import itertools
import math
import os
import re
import shutil
import signal
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

import chadpy as chad
from chadpy.api.forward import forward_at, hessian_vector_at
from tests.support import fd
from tests.support.progen import Program, bind_args

CLASSES = ("ok", "wrong", "crash", "rejected", "invalid", "skipped")
RTOL, ATOL = 1e-4, 1e-5  # gradient vs central differences
STEPS = (1e-6, 1e-5, 1e-7)  # relative steps: the first, then the retries before declaring `wrong`
STAGE_RTOL = 1e-9  # every stage vs the efficient gradient
TIMEOUT = 30.0  # seconds per check

_CHAD_DIR = os.path.dirname(os.path.abspath(chad.__file__))
_GENERATED = re.compile(r"[/\\]chadpy-[^/\\]*[/\\]|^<chadpy ")  # where chadpy writes its derivatives (build.py)


@dataclass
class Outcome:
    """The class of one checked program, and its symptom."""

    cls: str
    key: str = ""  # the symptom, for grouping and shrinking (message / exception type and place / kind of wrong)
    detail: str = ""  # the full message or traceback
    checked: int = 0  # gradient elements compared with finite differences
    skipped: int = 0  # gradient elements skipped (kink within the step)
    stages: bool = False  # checked with every stage
    seconds: float = 0.0
    features: tuple[str, ...] = ()  # the program's (progen's `Program.features`)

    def __str__(self) -> str:
        head = f"{self.cls}" + (f" [{self.key}]" if self.key else "")
        return head + (f"\n{self.detail}" if self.detail else "")


# ====================================================================== loading programs


_dir: str | None = None
_names = itertools.count()


def _tmpdir() -> str:
    global _dir
    if _dir is None:
        _dir = tempfile.mkdtemp(prefix="chadpy_differential_")
        atexit.register(shutil.rmtree, _dir, True)
    return _dir


def load(source: str) -> Callable:
    """Write the module to a new file (chadpy reads source with `inspect`), import it, return f."""
    name = f"chadpy_diff_{os.getpid()}_{next(_names)}"
    path = os.path.join(_tmpdir(), name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # shrinking tries things like `0.5[1]`
        spec.loader.exec_module(module)
    return module.f


class Timeout(BaseException):
    """A check ran past its deadline (a BaseException, so chadpy's `except Exception` cannot hide it)."""


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise Timeout(f"no result within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ====================================================================== symptoms


def normalize_message(text: str) -> str:
    """A message's first line, with generated names' numbers, line numbers and file details
    stripped, for grouping (`h3` -> `h#`, `line 12` -> `line #`)."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    line = re.sub(r'File "[^"]*"', "File", line)
    line = re.sub(r"\b([A-Za-z_]+?)_?\d+\b", r"\1#", line)
    line = re.sub(r"\b\d+\b", "#", line)
    return line[:160]


def _site(exc: BaseException) -> str:
    """Where an exception was raised: the innermost frame in chadpy or in the code it generated."""
    site = "?"
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        filename = frame.f_code.co_filename
        if filename.startswith(_CHAD_DIR):
            site = f"chadpy/{os.path.relpath(filename, _CHAD_DIR)}:{frame.f_code.co_name}"
        elif _GENERATED.search(filename):
            site = "generated code:*_" + frame.f_code.co_name.rsplit("_", 1)[-1]
    return site


def _crash(exc: BaseException) -> Outcome:
    """The message, then the innermost frames (newest first)."""
    frames = traceback.extract_tb(exc.__traceback__)[-4:][::-1]
    where = "".join(
        f"  at {os.path.basename(fr.filename)}:{fr.lineno} {fr.name}: {(fr.line or '').strip()}\n" for fr in frames
    )
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return Outcome("crash", f"{type(exc).__name__} at {_site(exc)}", f"{type(exc).__name__}: {message}\n{where}")


def _rejected(exc: chad.ChadError, where: str = "") -> Outcome:
    message = getattr(exc, "message", None) or str(exc)
    return Outcome("rejected", where + normalize_message(message), str(exc))


# ====================================================================== gradients


def leaves(value: object, path: tuple = ()) -> Iterator[tuple[tuple, float]]:
    """(path, x) for every float inside a value, paths as `fd._replace` takes them."""
    if isinstance(value, np.ndarray):
        if np.issubdtype(value.dtype, np.floating):
            for k in np.ndindex(value.shape):
                yield path + (k,), float(value[k])
    elif isinstance(value, (float, np.floating)):
        yield path, float(value)
    elif isinstance(value, (list, tuple)):
        for k, v in enumerate(value):
            yield from leaves(v, path + (k,))
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, path + (k,))
    elif fd._is_record(value):  # a dataclass (a namedtuple is a tuple)
        for k, v in vars(value).items():
            yield from leaves(v, path + (k,))


def _at(value: object, path: tuple) -> object:
    for k in path:
        value = getattr(value, k) if fd._is_record(value) else value[k]  # type: ignore[index]
    return value


def _structure(g: object, arg: object, where: str) -> None:
    """g has the structure of arg: float for float, same-shape-and-dtype array, list, tuple,
    dict with the same keys, None for discrete values (AssertionError otherwise)."""
    if fd._is_discrete(arg):
        assert g is None, f"{where}: expected None for {type(arg).__name__}, got {type(g).__name__} {g!r}"
    elif isinstance(arg, np.ndarray):
        assert isinstance(g, np.ndarray), f"{where}: expected an ndarray, got {type(g).__name__} {g!r}"
        assert g.shape == arg.shape, f"{where}: shape {g.shape} != {arg.shape}"
        assert g.dtype == arg.dtype, f"{where}: dtype {g.dtype} != {arg.dtype}"
    elif isinstance(arg, (list, tuple, dict)):
        kind = type(arg)
        assert type(g) is kind, f"{where}: expected a {kind.__name__}, got {type(g).__name__} {g!r}"
        assert len(g) == len(arg), f"{where}: {len(g)} components != {len(arg)}"  # type: ignore[arg-type]
        if isinstance(arg, dict):
            assert list(g) == list(arg), f"{where}: keys {list(g)} != {list(arg)}"  # type: ignore[arg-type]
        for k in range(len(arg)) if not isinstance(arg, dict) else arg:
            _structure(g[k], arg[k], f"{where}[{k!r}]")  # type: ignore[index]
    elif fd._is_record(arg):
        assert type(g) is type(arg), f"{where}: expected a {type(arg).__name__}, got {type(g).__name__} {g!r}"
        assert vars(g).keys() == vars(arg).keys(), f"{where}: attributes {list(vars(g))} != {list(vars(arg))}"
        for k, v in vars(arg).items():
            _structure(getattr(g, k), v, f"{where}.{k}")
    else:
        assert type(g) is type(arg), f"{where}: expected a {type(arg).__name__}, got {type(g).__name__} {g!r}"


def _slopes(f: Callable, args: tuple, i: int, path: tuple, x: float, f0: float, h: float) -> tuple[float, float, float]:
    """(central, forward, backward) differences of f in the float at args[i][path]."""
    xp, xm, fp, fm = fd.stepped(f, args, i, path, x, h)
    return (fp - fm) / (xp - xm), (fp - f0) / (xp - x), (f0 - fm) / (x - xm)


def _close(a: float, b: float) -> bool:
    return math.isfinite(a) and abs(a - b) <= ATOL + RTOL * abs(b)


def _compare_fd(f: Callable, args: tuple, nums: tuple[int, ...], grads: tuple, f0: float) -> tuple[int, int, str]:
    """(checked, skipped, first mismatch or "") for every float in the differentiated arguments."""
    checked = skipped = 0
    for i, g in zip(nums, grads):
        for path, x in leaves(args[i]):
            mine = float(_at(g, path))  # type: ignore[arg-type]
            verdict = None
            evidence = []
            for h in STEPS:
                central, forward, backward = _slopes(f, args, i, path, x, f0, h)
                if _close(mine, central):
                    verdict = "ok"
                    break
                evidence.append(central)
                if abs(forward - backward) > ATOL + RTOL * abs(central) or not math.isfinite(central):
                    verdict = "kink"  # a kink or a jump within the step: the differences prove nothing
                    break
            if verdict == "ok":
                checked += 1
            elif verdict == "kink":
                skipped += 1
            else:
                where = f"d/d arg {i}" + "".join(f"[{k!r}]" for k in path)
                return checked, skipped, f"{where}: chadpy {mine!r} vs finite differences {evidence}"
    return checked, skipped, ""


def _agree(a: object, b: object, scale: float, where: str) -> None:
    """Stage gradients: the same structure and types, values equal to STAGE_RTOL."""
    if b is None or a is None:
        assert a is None and b is None, f"{where}: {a!r} vs {b!r}"
        return
    assert type(a) is type(b), f"{where}: type {type(a).__name__} vs {type(b).__name__}"
    if isinstance(b, np.ndarray):
        assert a.shape == b.shape and a.dtype == b.dtype, f"{where}: {a.shape} {a.dtype} vs {b.shape} {b.dtype}"  # type: ignore[union-attr]
        bad = ~(np.abs(a - b) <= STAGE_RTOL * (np.abs(b) + scale))  # type: ignore[operator]
        assert not np.any(bad), f"{where}:\n{a!r}\nvs efficient\n{b!r}"
    elif isinstance(b, (list, tuple)):
        assert len(a) == len(b), f"{where}: {a!r} vs {b!r}"  # type: ignore[arg-type]
        for k, (x, y) in enumerate(zip(a, b)):  # type: ignore[call-overload]
            _agree(x, y, scale, f"{where}[{k}]")
    elif isinstance(b, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} vs {list(b)}"  # type: ignore[call-overload]
        for k in b:
            _agree(a[k], b[k], scale, f"{where}[{k!r}]")  # type: ignore[index]
    elif fd._is_record(b):
        assert vars(a).keys() == vars(b).keys(), f"{where}: {a!r} vs {b!r}"
        for k in vars(b):
            _agree(getattr(a, k), getattr(b, k), scale, f"{where}.{k}")
    else:
        assert abs(a - b) <= STAGE_RTOL * (abs(b) + scale), f"{where}: {a!r} vs efficient {b!r}"  # type: ignore[operator]


# ====================================================================== the check


def check(program: Program, stages: bool = False, timeout: float = TIMEOUT) -> Outcome:
    """Run `program` in plain Python and through chadpy, and classify the result."""
    start = time.perf_counter()
    try:
        with _deadline(timeout), warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # NumPy's and the compiler's, from programs and derivatives
            outcome = _check(program, stages)
    except Timeout as e:
        outcome = Outcome("crash", "Timeout", f"{e} (plain Python, chadpy or finite differences)")
    outcome.stages = stages
    outcome.seconds = time.perf_counter() - start
    return outcome


def _check(program: Program, stages: bool) -> Outcome:
    nums = (program.argnums,) if isinstance(program.argnums, int) else tuple(program.argnums)
    # -- plain Python
    try:
        f = load(program.source)
        args = bind_args(program.args, f.__globals__)  # records: objects of the module's classes
        plain_args = copy.deepcopy(args)
        expected = f(*plain_args)
        fd.assert_same(plain_args, args, "arguments after f")
    except Exception as e:
        return Outcome("invalid", f"{type(e).__name__}: {normalize_message(str(e))}", traceback.format_exc(limit=-3))
    if not isinstance(expected, (float, np.floating)) or not math.isfinite(expected):
        return Outcome("invalid", "not a finite float", f"f returned {expected!r}")
    # -- chadpy
    mine = copy.deepcopy(args)
    try:
        value, grads = chad.value_and_grad(f, argnums=program.argnums)(*mine)
    except chad.ChadError as e:
        return _rejected(e)
    except Exception as e:
        return _crash(e)
    try:
        fd.assert_same(mine, args, "arguments after value_and_grad")
    except AssertionError as e:
        return Outcome("wrong", "mutated an argument", str(e))
    try:
        fd.assert_same_value(value, expected, "value vs f(*args)")
    except AssertionError as e:
        return Outcome("wrong", "wrong value", str(e))
    grads_t = (grads,) if isinstance(program.argnums, int) else grads
    try:
        assert isinstance(grads_t, tuple) and len(grads_t) == len(nums), (
            f"expected {len(nums)} gradients, got {grads!r}"
        )
        for i, g in zip(nums, grads_t):
            _structure(g, args[i], f"d/d arg {i}")
    except AssertionError as e:
        return Outcome("wrong", "wrong gradient structure", str(e))
    # -- central differences
    try:
        checked, skipped, mismatch = _compare_fd(f, args, nums, grads_t, float(expected))
    except Exception as e:
        return Outcome("invalid", f"finite differences: {type(e).__name__}", traceback.format_exc(limit=-3))
    if mismatch:
        return Outcome("wrong", "wrong gradient", mismatch, checked, skipped)
    # -- the other stages
    if stages:
        scale = max([abs(x) for g in grads_t for _, x in leaves(g)] + [1e-300])
        for stage, simplify in fd.MODES:
            if (stage, simplify) == ("efficient", True):
                continue
            where = f"[stage {stage}, simplify={simplify}] "
            try:
                v, g = chad.value_and_grad(f, argnums=program.argnums, simplify=simplify, stage=stage)(
                    *copy.deepcopy(args)
                )
            except chad.ChadError as e:
                return _rejected(e, where)
            except Exception as e:
                outcome = _crash(e)
                outcome.key = where + outcome.key
                return outcome
            try:
                fd.assert_same_value(v, expected, where + "value")
                _agree(g, grads, scale, where + "gradient")
            except AssertionError as e:
                return Outcome("wrong", "stages disagree", str(e), checked, skipped)
    # -- forward mode and second order
    outcome = _check_forward(f, args, nums, grads_t, float(expected), program.argnums)
    if outcome is not None:
        outcome.checked, outcome.skipped = checked, skipped
        return outcome
    if checked == 0 and skipped:
        return Outcome("skipped", "every element at a kink", "", checked, skipped)
    return Outcome("ok", "", "", checked, skipped)


# ====================================================================== forward mode and second order


def _direction(value: object, rng: np.random.Generator) -> object:
    """A random tangent of a value: its structure, each float a standard normal (ints, strs and None as they are)."""
    if isinstance(value, np.ndarray):
        return rng.standard_normal(value.shape).astype(value.dtype) if value.dtype.kind == "f" else value
    if isinstance(value, (float, np.floating)):
        return float(rng.standard_normal())
    if isinstance(value, tuple):
        items = [_direction(v, rng) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_direction(v, rng) for v in value]
    if isinstance(value, dict):
        return {k: _direction(v, rng) for k, v in value.items()}
    if fd._is_record(value):
        out = copy.copy(value)
        for k, v in vars(value).items():
            object.__setattr__(out, k, _direction(v, rng))  # a frozen dataclass too
        return out
    return value


def _moved(value: object, direction: object, h: float) -> object:
    """value + h * direction, float by float (a copy)."""
    if isinstance(value, np.ndarray):
        return value + h * direction if value.dtype.kind == "f" else value.copy()
    if isinstance(value, (float, np.floating)):
        return type(value)(value + h * direction)
    if isinstance(value, tuple):
        items = [_moved(v, d, h) for v, d in zip(value, direction)]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_moved(v, d, h) for v, d in zip(value, direction)]
    if isinstance(value, dict):
        return {k: _moved(v, direction[k], h) for k, v in value.items()}
    if fd._is_record(value):
        out = copy.copy(value)
        for k, v in vars(value).items():
            object.__setattr__(out, k, _moved(v, getattr(direction, k), h))
        return out
    return copy.deepcopy(value)


def _check_forward(
    f: Callable, args: tuple, nums: tuple[int, ...], grads: tuple, expected: float, argnums: object
) -> Outcome | None:
    """Forward mode along a random direction of the differentiated arguments against the gradient (the tangent is
    <gradient, direction>: the dot-product test), and the Hessian-vector product (reverse over forward) against
    central differences of the gradient along the direction. None if both agree."""
    rng = np.random.default_rng(len(nums))
    tangents = tuple(_direction(args[i], rng) for i in nums)
    mine = copy.deepcopy(args)
    try:
        value, tangent = forward_at(f, mine, nums, tangents)
        fd.assert_same(mine, args, "arguments after jvp")
    except chad.ChadError as e:
        return _rejected(e, "[jvp] ")
    except AssertionError as e:
        return Outcome("wrong", "[jvp] mutated an argument", str(e))
    except Exception as e:
        outcome = _crash(e)
        outcome.key = "[jvp] " + outcome.key
        return outcome
    dot = sum(_inner(g, t) for g, t in zip(grads, tangents))
    scale = sum(_inner(g, t, absolute=True) for g, t in zip(grads, tangents))
    tangent = 0.0 if tangent is None else float(tangent)
    if not (value == expected or abs(value - expected) <= 1e-12 * abs(expected)):
        return Outcome("wrong", "[jvp] wrong value", f"{value!r} vs f(*args) {expected!r}")
    if not abs(tangent - dot) <= 1e-8 * (scale + abs(dot)) + 1e-12:
        return Outcome("wrong", "[jvp] tangent is not <gradient, direction>", f"jvp {tangent!r}, <g, v> {dot!r}")
    slopes, one_sided = [], []
    for h in (1e-6, 1e-5):  # and central differences along the direction, where they settle (not at a kink)
        plus, minus = list(args), list(args)
        for i, t in zip(nums, tangents):
            plus[i], minus[i] = _moved(args[i], t, h), _moved(args[i], t, -h)
        try:
            fp, fm = float(f(*plus)), float(f(*minus))
        except Exception:  # a step left the domain: no evidence
            break
        slopes.append((fp - fm) / (2 * h))
        one_sided.append(((fp - expected) / h, (expected - fm) / h))
    settled = len(slopes) == 2 and _close(slopes[0], slopes[1]) and all(_close(a, b) for a, b in one_sided)
    if settled and not any(_close(tangent, s) for s in slopes):
        return Outcome(
            "wrong", "[jvp] tangent is not the directional derivative", f"jvp {tangent!r}, differences {slopes}"
        )
    # -- second order: reverse over forward, against differences of the gradient
    products, failed = _attempted("[hvp] ", lambda: hessian_vector_at(f, copy.deepcopy(args), nums, tangents, nums))
    if failed is not None:
        return failed
    gradient = chad.grad(f, argnums=argnums)
    estimates = []
    for h in HVP_STEPS:
        plus = list(args)
        minus = list(args)
        for i, t in zip(nums, tangents):
            plus[i], minus[i] = _moved(args[i], t, h), _moved(args[i], t, -h)
        try:
            gp, gm = gradient(*plus), gradient(*minus)
        except Exception:  # a step left the domain (a log of a negative): no evidence
            return None
        gp, gm = ((gp,), (gm,)) if isinstance(argnums, int) else (gp, gm)
        estimates.append([(dict(leaves(a)), dict(leaves(b))) for a, b in zip(gp, gm)])
    for k, (i, hv) in enumerate(zip(nums, products)):
        for path, x in leaves(hv):
            central = [
                (est[k][0].get(path, 0.0) - est[k][1].get(path, 0.0)) / (2 * h) for est, h in zip(estimates, HVP_STEPS)
            ]
            if any(_close_hvp(x, c) for c in central):
                continue
            if not _close_hvp(central[0], central[1]):
                continue  # a kink or a jump within the step: the differences prove nothing
            where = f"[hvp] d/d arg {i}" + "".join(f"[{p!r}]" for p in path)
            return Outcome("wrong", "[hvp] wrong Hessian-vector product", f"{where}: chadpy {x!r} vs {central}")
    return _check_grad_of_grad(f, args, nums, tangents, products, argnums)


def _check_grad_of_grad(
    f: Callable, args: tuple, nums: tuple[int, ...], tangents: tuple, products: tuple, argnums: object
) -> Outcome | None:
    """The same product by another route: jvp of the gradient chadpy made (a derivative differentiated again, its
    gradient taken one tangent per element inside), where the differentiated arguments are a few floats."""
    floats = [args[i] for i in nums]
    if not all(isinstance(a, float) or isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in floats):
        return None
    if sum(np.size(a) for a in floats) > 8:
        return None
    full = tuple(tangents[nums.index(k)] if k in nums else _zero_like(a) for k, a in enumerate(args))
    pair, failed = _attempted(
        "[grad of grad] ", lambda: chad.jvp(chad.grad(f, argnums=argnums), copy.deepcopy(args), full)
    )
    if failed is not None:
        return failed
    second = pair[1]
    second = (second,) if isinstance(argnums, int) else second
    for i, a, b in zip(nums, second, products):
        for (path, x), (_, y) in zip(leaves(a), leaves(b)):
            if not abs(x - y) <= 1e-7 * (1 + abs(y)):
                where = f"[grad of grad] d/d arg {i}" + "".join(f"[{p!r}]" for p in path)
                return Outcome("wrong", "[grad of grad] disagrees with hvp", f"{where}: jvp(grad) {x!r}, hvp {y!r}")
    return None


def _attempted(where: str, thunk: Callable[[], object]) -> tuple[object, Outcome | None]:
    """thunk()'s value, or the outcome of its failure (`where` names the check in its key)."""
    try:
        return thunk(), None
    except chad.ChadError as e:
        return None, _rejected(e, where)
    except Exception as e:
        outcome = _crash(e)
        outcome.key = where + outcome.key
        return None, outcome


def _zero_like(value: object) -> object:
    """A zero tangent of an argument that is not differentiated: its structure, each float 0.0 (ints in it, strs as
    they are); None for an int or an int array argument (jvp refuses a tangent other than zero for one)."""
    if isinstance(value, int) or isinstance(value, np.ndarray) and value.dtype.kind in "iub":
        return None
    return _direction(value, _ZEROS)


class _Zeros:
    """A stand-in for a random generator whose draws are zeros (`_direction` of it is a zero tangent)."""

    def standard_normal(self, shape: tuple[int, ...] | None = None) -> object:
        return np.zeros(shape) if shape is not None else 0.0


_ZEROS = _Zeros()


HVP_STEPS = (1e-5, 1e-4)


def _close_hvp(a: float, b: float) -> bool:
    return math.isfinite(a) and abs(a - b) <= 1e-3 + 1e-3 * abs(b)


def _inner(a: object, b: object, absolute: bool = False) -> float:
    """The sum over the floats of a of each times the float of b in its place (of their magnitudes)."""
    total = 0.0
    for path, x in leaves(a):
        y = float(_at(b, path))  # type: ignore[arg-type]
        total += abs(x * y) if absolute else x * y
    return total
