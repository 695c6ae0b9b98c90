"""Differential tester: random programs (`progen.py`) differentiated by chadpy, checked against
plain Python and central finite differences.

`check(program)` classifies one program:

- `ok`: the value, the gradient's structure and every checked gradient element are right;
- `wrong`: chadpy's value differs from `f(*args)`, or the gradient has the wrong structure,
  type, shape or dtype, or disagrees with central differences, or chadpy mutated an
  argument; with `stages=True` also: a stage of `fd.MODES` disagrees with the efficient one;
- `crash`: an exception other than `chad.ChadError` escaped chadpy or the derivative it
  generated (or the check hung: `Timeout`);
- `rejected`: a `chad.ChadError`, chadpy's "I cannot differentiate this";
- `invalid`: the program itself raised or returned a non-finite value (a generator bug);
- `skipped`: central differences are untrustworthy at every gradient element (the two
  one-sided differences disagree: a kink or a branch switch within the step).

`shrink(program, outcome)` deletes statements, helpers, parameters and subexpressions while
the failure stays in the same class (and symptom); `format_regression(program)` prints the
result as a ready-to-paste pytest test.

Command line (from the repository root)::

    python -m tests.support.differential --n 10000 --seed 0 --jobs 2 [--stages-every 10] [--shrink] [--show CLASS]
    python -m tests.support.differential --seed S --n 1 --print
    python -m tests.support.differential --n 2000 --weight fv_helper=0 --weight a_nested_literal=0  # other weights
"""

from __future__ import annotations

import argparse
import ast
import atexit
import builtins
import copy
import importlib.util
import itertools
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

import chadpy as chad
from tests.support import fd
from tests.support.paths import ROOT
from tests.support.progen import Program, bind_args, generate, literal, normalize

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
    if checked == 0 and skipped:
        return Outcome("skipped", "every element at a kink", "", checked, skipped)
    return Outcome("ok", "", "", checked, skipped)


# ====================================================================== shrinking


def _bodies(tree: ast.AST) -> list[list[ast.stmt]]:
    """Every statement list in the tree, in a deterministic order."""
    out = []
    for node in ast.walk(tree):
        for name in ("body", "orelse"):
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                out.append(value)
    return out


def _f_def(tree: ast.Module) -> ast.FunctionDef:
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")


def _source(tree: ast.Module) -> str:
    return normalize(ast.unparse(ast.fix_missing_locations(tree)))


_MODULES = {"math", "np", "functools"}


def _expr_replacements(node: ast.expr) -> list[ast.expr]:
    """Simpler expressions that might stand for node."""
    out: list[ast.expr] = []
    if isinstance(node, ast.BinOp):
        out += [node.left, node.right]
    elif isinstance(node, ast.UnaryOp):
        out.append(node.operand)
    elif isinstance(node, ast.IfExp):
        out += [node.body, node.orelse]
    elif isinstance(node, ast.BoolOp):
        out += list(node.values)
    elif isinstance(node, ast.Call):  # f(a, b) -> a, b (a method call: its object)
        out += [a for a in node.args if not isinstance(a, (ast.Starred, ast.Lambda, ast.Name))]
        out += [a for a in node.args if isinstance(a, ast.Name)]
        if isinstance(node.func, ast.Attribute) and not (
            isinstance(node.func.value, ast.Name) and node.func.value.id in _MODULES
        ):
            out.append(node.func.value)
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.IfExp, ast.BoolOp, ast.Call)):
        out.append(ast.Constant(0.5))
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in _MODULES:
        out.append(ast.Constant(0.5))  # a variable read: often the last use of an assignment
    return out


def _candidates(program: Program) -> Iterator[Callable[[], Program | None]]:
    """Smaller variants of the program, roughly biggest cuts first (each built lazily)."""
    tree = ast.parse(program.source)

    def with_tree(edit: Callable[[ast.Module], bool]) -> Callable[[], Program | None]:
        def make() -> Program | None:
            t = ast.parse(program.source)
            if not edit(t):
                return None
            return program.replace(source=_source(t))

        return make

    # statements: delete, or replace a compound statement by one of its bodies
    n_bodies = len(_bodies(tree))
    function_bodies = [n.body for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    for b in range(n_bodies):
        body = _bodies(tree)[b]
        for j in range(len(body)):
            stmt = body[j]
            if isinstance(stmt, ast.FunctionDef) and stmt.name == "f" or isinstance(stmt, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(stmt, ast.Return) and j == len(body) - 1 and any(body is fb for fb in function_bodies):
                continue  # a function's last return stays: a function returning None is another program

            def delete(t: ast.Module, b: int = b, j: int = j) -> bool:
                body = _bodies(t)[b]
                del body[j]
                if not body:
                    body.append(ast.Pass())
                return True

            yield with_tree(delete)
            if isinstance(stmt, (ast.If, ast.For, ast.While)):
                for part in ("body", "orelse"):
                    if getattr(stmt, part):

                        def inline(t: ast.Module, b: int = b, j: int = j, part: str = part) -> bool:
                            body = _bodies(t)[b]
                            body[j : j + 1] = getattr(body[j], part)
                            return True

                        yield with_tree(inline)
            if isinstance(stmt, ast.If) and stmt.orelse:

                def drop_else(t: ast.Module, b: int = b, j: int = j) -> bool:
                    _bodies(t)[b][j].orelse = []  # type: ignore[attr-defined]
                    return True

                yield with_tree(drop_else)
    # copies `a = b`: read b wherever a is read
    for fn_index, fn in enumerate(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        for stmt in fn.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Name)
            ):

                def propagate(t: ast.Module, k: int = fn_index, line: int = stmt.lineno) -> bool:
                    fn = [n for n in ast.walk(t) if isinstance(n, ast.FunctionDef)][k]
                    copy = next(s for s in fn.body if s.lineno == line)
                    target, source = copy.targets[0].id, copy.value.id  # type: ignore[attr-defined]
                    fn.body.remove(copy)
                    for node in ast.walk(fn):
                        if isinstance(node, ast.Name) and node.id == target and isinstance(node.ctx, ast.Load):
                            node.id = source
                    return bool(fn.body)

                yield with_tree(propagate)
    # parameters of f that are not used, and smaller argnums
    f = _f_def(tree)
    used = {n.id for n in ast.walk(f) if isinstance(n, ast.Name)}
    nums = (program.argnums,) if isinstance(program.argnums, int) else tuple(program.argnums)
    for k, param in enumerate(f.args.args):
        if param.arg not in used and k not in nums:

            def drop_param(k: int = k) -> Program | None:
                t = ast.parse(program.source)
                del _f_def(t).args.args[k]
                shift = lambda i: i - 1 if i > k else i  # noqa: E731
                argnums = shift(program.argnums) if isinstance(program.argnums, int) else tuple(map(shift, nums))
                args = program.args[:k] + program.args[k + 1 :]
                return program.replace(source=_source(t), args=args, argnums=argnums)

            yield drop_param
    if len(nums) > 1:
        for i in nums:
            yield lambda i=i: program.replace(argnums=(i,))
    if all(f.args.args[i].arg not in used for i in nums if i < len(f.args.args)):
        # differentiating only unused parameters: differentiate another (then drop the unused)
        for i, param in enumerate(f.args.args):
            if i not in nums and param.arg in used:
                yield lambda i=i: program.replace(argnums=(i,))
    # expressions: replace one by a part of it, or by a constant
    n_nodes = sum(1 for _ in ast.walk(tree))
    for index in range(n_nodes):
        node = next(itertools.islice(ast.walk(tree), index, None))
        if not isinstance(node, ast.expr):
            continue
        for r in range(len(_expr_replacements(node))):

            def simplify(t: ast.Module, index: int = index, r: int = r) -> bool:
                target = next(itertools.islice(ast.walk(t), index, None))
                for parent in ast.walk(t):
                    for name, value in ast.iter_fields(parent):
                        if value is target:
                            setattr(parent, name, _expr_replacements(target)[r])  # type: ignore[arg-type]
                            return True
                        if isinstance(value, list) and any(v is target for v in value):
                            value[[id(v) for v in value].index(id(target))] = _expr_replacements(target)[r]
                            return True
                return False

            yield with_tree(simplify)


def same_failure(a: Outcome, b: Outcome) -> bool:
    """The same class and symptom (same exception type and place; same rejection message)."""
    return a.cls == b.cls and a.key == b.key


def _statements(tree: ast.AST) -> Iterator[ast.stmt]:
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            yield node


def _undefined_names(tree: ast.Module) -> set[str]:
    """Names read but bound nowhere in the module (augmented assignments do not bind).

    Loose (scopes are not told apart), but it catches a read whose only assignment was deleted."""
    bound = set(dir(builtins))
    augmented = {id(n.target) for n in ast.walk(tree) if isinstance(n, ast.AugAssign)}
    read = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) or id(node) in augmented:
                read.add(node.id)
            else:
                bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)):
            args = node.args
            bound.update(a.arg for a in args.posonlyargs + args.args + args.kwonlyargs)
            if isinstance(node, ast.FunctionDef):
                bound.add(node.name)
        elif isinstance(node, ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
    return read - bound


def _reads(node: ast.AST) -> set[str]:
    """Names an expression (or a statement's expressions) reads, minus those its own
    comprehensions and lambdas bind (loosely: by name)."""
    bound = set()
    for n in ast.walk(node):
        if isinstance(n, ast.comprehension):
            bound |= {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
        elif isinstance(n, ast.Lambda):
            bound |= {a.arg for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def _targets(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _maybe_unbound(tree: ast.Module) -> set[str]:
    """Local variables some function may read before assigning them on every path (Python's
    definite assignment, roughly: a loop may run zero times; a branch ending in return,
    break or continue does not reach the join)."""
    module = set(dir(builtins)) | _targets(ast.Module(body=tree.body, type_ignores=[]))
    module |= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    module |= {(a.asname or a.name).split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    bad: set[str] = set()

    def block(body: list[ast.stmt], defined: set[str], local: set[str]) -> tuple[set[str], bool]:
        """(defined after the block, whether it falls through)."""
        for stmt in body:
            if isinstance(stmt, (ast.Return, ast.Break, ast.Continue)):
                check(stmt, defined, local)
                return defined, False
            if isinstance(stmt, ast.If):
                check(stmt.test, defined, local)
                outs = [block(part, set(defined), local) for part in (stmt.body, stmt.orelse)]
                falls = [d for d, through in outs if through]
                if not falls:
                    return defined, False
                defined = set.intersection(*falls)
            elif isinstance(stmt, (ast.For, ast.While)):
                check(stmt.iter if isinstance(stmt, ast.For) else stmt.test, defined, local)
                inner = defined | (_targets(stmt.target) if isinstance(stmt, ast.For) else set())
                block(stmt.body, inner, local)
            elif isinstance(stmt, ast.FunctionDef):
                function(stmt, defined | {stmt.name})
                defined = defined | {stmt.name}
            else:
                check(stmt, defined, local)
                defined = defined | _targets(stmt)
        return defined, True

    def check(node: ast.AST, defined: set[str], local: set[str]) -> None:
        bad.update(n for n in _reads(node) if n in local and n not in defined)

    def function(fn: ast.FunctionDef, outer: set[str]) -> None:
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        local = (_targets(fn) | {n.name for n in ast.walk(fn) if isinstance(n, ast.FunctionDef)}) - {fn.name}
        local = {n for n in local if n not in params}
        block(fn.body, params | (outer - local), local)

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            function(node, module)
    return bad


def _kind(value: object) -> str:
    """What a variable holds, for telling whether shrinking changed it (floats and NumPy
    floating scalars are one kind: the programs mix them freely)."""
    if isinstance(value, (float, np.floating)):
        return "float"
    if isinstance(value, np.ndarray):
        return f"ndarray{value.ndim}{value.dtype.kind}"
    return type(value).__name__


def _run_traced(program: Program) -> tuple[set[int], dict[tuple[str, str], set[str]]] | None:
    """(the lines of the program's module that run when f is called, the kinds of value each
    (function, variable) held there), or None if f fails or does not return a finite float."""
    lines: set[int] = set()
    kinds: dict[tuple[str, str], set[str]] = defaultdict(set)
    try:
        f = load(program.source)
        filename = f.__code__.co_filename
        args = bind_args(program.args, f.__globals__)

        def trace(frame, event, arg):
            if frame.f_code.co_filename != filename:
                return None
            if event == "line":
                lines.add(frame.f_lineno)
                for name, value in frame.f_locals.items():
                    kinds[frame.f_code.co_name, name].add(_kind(value))
            return trace

        previous = sys.gettrace()
        sys.settrace(trace)
        try:
            value = f(*copy.deepcopy(args))
        finally:
            sys.settrace(previous)
    except Exception:
        return None
    if not isinstance(value, (float, np.floating)) or not math.isfinite(value):
        return None
    return lines, kinds


@dataclass
class _Reference:
    """What shrinking keeps: the original program's statements and the kinds of value its
    variables held, and the statements that ran in accepted candidates."""

    original: set[str]
    kinds: dict[tuple[str, str], set[str]]
    known: set[str]
    definite: bool  # no variable may be read before it is assigned (if the original is so)


def _plausible(candidate: Program, ref: _Reference) -> set[str] | None:
    """None unless a shrinking candidate runs (to a finite float), its variables hold the
    kinds of value they held in the original, it reads no name it does not bind (nor, with
    `ref.definite`, may read one before assigning it), and its code that does not run at
    these arguments is unchanged: in f, code of the original program; in helpers, also code
    that ran in an earlier accepted candidate. Otherwise the source of the statements that ran.

    Code that does not run is never checked by running it, but chadpy still analyses it:
    an edit there (`for i in 0.5:`, a loop without its counter) or a change of what flows
    into it (a float that became an array) could make a reproducer of something else."""
    tree = ast.parse(candidate.source)
    if _undefined_names(tree) or ref.definite and _maybe_unbound(tree):
        return None
    traced = _run_traced(candidate)
    if traced is None:
        return None
    executed, kinds = traced
    if any(not k <= ref.kinds.get(key, k) for key, k in kinds.items()):
        return None
    executed |= {s.lineno for s in tree.body}  # run at import, before the tracing
    in_f = {id(s) for s in _statements(_f_def(tree))}
    ran = set()
    for s in _statements(tree):
        text = ast.unparse(s)
        if s.lineno in executed:
            ran.add(text)
        elif text not in (ref.original if id(s) in in_f else ref.known):
            return None
    return ran


def shrink(program: Program, outcome: Outcome, max_checks: int = 600, max_seconds: float | None = None) -> Program:
    """A smaller program failing the same way (greedy: first improvement, then continue).

    At most `max_checks` candidates are checked (and, if given, for at most `max_seconds`:
    a time limit makes the result depend on the machine's speed)."""
    start = time.perf_counter()
    tree = ast.parse(program.source)
    original = {ast.unparse(s) for s in _statements(tree)}
    traced = _run_traced(program)
    kinds = traced[1] if traced else {}
    ref = _Reference(original, kinds, set(original), definite=not _maybe_unbound(tree))
    seen = {(program.source, program.argnums)}
    checks = 0
    current = program
    progress = True
    while progress:
        progress = False
        position = 0
        while True:
            candidates = list(itertools.islice(_candidates(current), position, None))
            if not candidates:
                break
            accepted = False
            for offset, make in enumerate(candidates):
                if checks >= max_checks or max_seconds is not None and time.perf_counter() - start > max_seconds:
                    return current
                try:
                    candidate = make()
                except (SyntaxError, ValueError, IndexError, StopIteration):
                    candidate = None
                if candidate is None or (candidate.source, candidate.argnums) in seen:
                    continue
                seen.add((candidate.source, candidate.argnums))
                checks += 1
                ran = _plausible(candidate, ref)
                if ran is None:
                    continue
                if same_failure(check(candidate, stages=outcome.stages, timeout=min(TIMEOUT, 10.0)), outcome):
                    ref.known |= ran
                    current = candidate
                    position += offset
                    accepted = progress = True
                    break
            if not accepted:
                break
    return current


def format_regression(program: Program, outcome: Outcome | None = None) -> str:
    """The program as a pytest regression test (module-level functions renamed with the seed)."""
    tree = ast.parse(program.source)
    tag = f"s{program.seed}"
    fname = f"diff_{tag}"
    defined = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            defined[node.name] = fname if node.name == "f" else f"{node.name}_{tag}"
        elif isinstance(node, ast.ClassDef):
            defined[node.name] = f"{node.name}_{tag}"
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    defined[target.id] = f"{target.id}_{tag}"

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.Name:
            node.id = defined.get(node.id, node.id)
            return node

        def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
            node.name = defined.get(node.name, node.name) if node in tree.body else node.name  # not a method
            self.generic_visit(node)
            return node

        def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
            node.name = defined.get(node.name, node.name)
            self.generic_visit(node)
            return node

    tree = Rename().visit(tree)
    imports = sorted({ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))})
    body = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    lines = [f"# differential tester, seed {program.seed}" + (f": {outcome.cls} [{outcome.key}]" if outcome else "")]
    if outcome and outcome.detail:
        lines += ["# " + line for line in outcome.detail.strip().splitlines()[:3]]
    lines.append("# needs: " + "; ".join(imports + ["from tests.support import fd"]))
    lines.append("")
    lines.append(normalize("\n".join(ast.unparse(n) for n in body)).rstrip())
    lines += ["", ""]
    values = ast.parse("(" + "".join(literal(a) + ", " for a in program.args) + ")", mode="eval").body
    args = ", ".join(ast.unparse(Rename().visit(v)) for v in values.elts)  # type: ignore[attr-defined]  # C renamed
    args += "," if len(program.args) == 1 else ""
    lines.append(f"def test_differential_{tag}():")
    lines.append(f"    fd.assert_grad_matches_fd({fname}, ({args}), argnums={program.argnums!r})")
    return "\n".join(lines) + "\n"


# ====================================================================== batches


WEIGHTS: dict[str, float] = {}  # generator weight overrides (--weight), for every worker


def run_seed(seed: int, stages: bool) -> tuple[int, Outcome]:
    try:
        program = generate(seed, WEIGHTS)
    except Exception as e:  # a generator bug
        return seed, Outcome("invalid", f"generator: {type(e).__name__}", traceback.format_exc(limit=-3))
    outcome = check(program, stages=stages)
    outcome.features = program.features
    return seed, outcome


def _run_task(task: tuple[int, bool]) -> tuple[int, Outcome]:
    return run_seed(*task)


def _shrink_task(task: tuple[int, Outcome, int]) -> tuple[int, Outcome, Program, Outcome]:
    seed, outcome, max_checks = task
    program = generate(seed, WEIGHTS)
    small = shrink(program, outcome, max_checks)
    return seed, outcome, small, check(small, stages=outcome.stages)


def _pool_map(fn: Callable, tasks: list, jobs: int) -> Iterator:
    if jobs <= 1:
        yield from map(fn, tasks)
        return
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        yield from pool.imap_unordered(fn, tasks, chunksize=4)


def run_batch(seeds: list[int], stages_every: int = 0, jobs: int = 1) -> dict[int, Outcome]:
    """Check generate(seed) for every seed; every stages_every-th with all stages."""
    tasks = [(s, bool(stages_every) and k % stages_every == 0) for k, s in enumerate(seeds)]
    return dict(_pool_map(_run_task, tasks, jobs))


def pick_for_shrinking(results: dict[int, Outcome], cls: str, limit: int) -> list[int]:
    """Up to `limit` seeds of a class, one per symptom first (round robin over symptoms)."""
    by_key: dict[str, list[int]] = defaultdict(list)
    for seed in sorted(results):
        if results[seed].cls == cls:
            by_key[results[seed].key].append(seed)
    picked: list[int] = []
    for round_ in itertools.count():
        added = False
        for key in sorted(by_key, key=lambda k: -len(by_key[k])):
            if round_ < len(by_key[key]) and len(picked) < limit:
                picked.append(by_key[key][round_])
                added = True
        if not added:
            return picked
    return picked


def shrink_batch(
    results: dict[int, Outcome], seeds: list[int], jobs: int = 1, max_checks: int = 600
) -> list[tuple[int, Outcome, Program, Outcome]]:
    """(seed, outcome, shrunk program, its outcome) for each seed."""
    out = list(_pool_map(_shrink_task, [(s, results[s], max_checks) for s in seeds], jobs))
    return sorted(out, key=lambda r: seeds.index(r[0]))


def grouped(results: dict[int, Outcome], cls: str) -> list[tuple[str, list[int]]]:
    """Symptoms of a class, most frequent first, with their seeds."""
    by_key: dict[str, list[int]] = defaultdict(list)
    for seed in sorted(results):
        if results[seed].cls == cls:
            by_key[results[seed].key].append(seed)
    return sorted(by_key.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def summary(results: dict[int, Outcome], max_seeds: int | None = 8) -> str:
    """Counts per class, then each failing class's symptoms with (up to max_seeds of) their seeds."""
    counts = Counter(o.cls for o in results.values())
    n = len(results)
    lines = [f"{n} programs"]
    for cls in CLASSES:
        lines.append(f"  {cls:9} {counts[cls]:6}  ({100.0 * counts[cls] / max(n, 1):.1f}%)")
    checked = sum(o.checked for o in results.values())
    skipped = sum(o.skipped for o in results.values())
    lines.append(f"  gradient elements checked {checked}, skipped at kinks {skipped}")
    for cls in ("rejected", "wrong", "crash", "invalid"):
        groups = grouped(results, cls)
        if not groups:
            continue
        lines.append(f"\n{cls} ({counts[cls]}), by symptom:")
        for key, seeds in groups:
            more = max_seeds is not None and len(seeds) > max_seeds
            shown = ", ".join(map(str, seeds[:max_seeds])) + (", ..." if more else "")
            lines.append(f"  {len(seeds):5}  {key}\n         seeds {shown}")
    return "\n".join(lines)


def feature_counts(results: dict[int, Outcome], prefixes: tuple[str, ...] = ("",)) -> str:
    """For each generator feature (those starting with one of prefixes): the programs having it,
    and how many of them were not `ok`, by class."""
    having: dict[str, Counter] = defaultdict(Counter)
    for o in results.values():
        for name in o.features:
            if name.startswith(prefixes):
                having[name][o.cls] += 1
    lines = ["features (programs having each; those not ok by class):"]
    for name in sorted(having):
        c = having[name]
        bad = ", ".join(f"{cls} {c[cls]}" for cls in CLASSES[1:] if c[cls])
        lines.append(f"  {name:28} {sum(c.values()):6}" + (f"  ({bad})" if bad else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="number of programs")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--stages-every", type=int, default=0, help="check every k-th program with all stages")
    parser.add_argument(
        "--shrink", action="store_true", help="shrink wrong and crash programs (up to --max-shrink per class)"
    )
    parser.add_argument("--max-shrink", type=int, default=20)
    parser.add_argument(
        "--shrink-rejected",
        type=int,
        default=0,
        help="also shrink one program for each of the N most frequent rejections",
    )
    parser.add_argument("--show", choices=CLASSES, action="append", default=[], help="print the programs of this class")
    parser.add_argument("--print", action="store_true", help="print the programs and their outcomes, do not summarize")
    parser.add_argument(
        "--features",
        nargs="*",
        metavar="PREFIX",
        help="count the programs having each generator feature (those starting with a PREFIX; all if none)",
    )
    parser.add_argument(
        "--weight", action="append", default=[], metavar="NAME=W", help="override a generator weight (progen.WEIGHTS)"
    )
    opts = parser.parse_args(argv)
    for item in opts.weight:
        name, _, value = item.partition("=")
        WEIGHTS[name] = float(value)
    generate(0, WEIGHTS)  # unknown weight names fail here
    assert chad.__file__.startswith(str(ROOT)), f"chadpy imported from {chad.__file__}, not from {ROOT}"
    seeds = list(range(opts.seed, opts.seed + opts.n))
    if opts.print:
        for seed in seeds:
            program = generate(seed, WEIGHTS)
            print(program)
            print(f"# outcome: {check(program)}\n")
        return 0
    start = time.perf_counter()
    results = run_batch(seeds, opts.stages_every, opts.jobs)
    elapsed = time.perf_counter() - start
    print(f"chadpy from {os.path.dirname(chad.__file__)}; seeds {seeds[0]}..{seeds[-1]}; {opts.jobs} jobs")
    print(summary(results))
    cpu = sum(o.seconds for o in results.values())
    print(f"\n{elapsed:.1f} s wall, {cpu / max(len(results), 1):.3f} s per program (check time, one process)")
    if opts.features is not None:
        print("\n" + feature_counts(results, tuple(opts.features) or ("",)))
    for cls in opts.show:
        print(f"\n==================== {cls} programs")
        for seed in sorted(s for s, o in results.items() if o.cls == cls)[:50]:
            print(f"\n# ---------- seed {seed}: {results[seed]}\n")
            print(generate(seed, WEIGHTS))
    if opts.shrink or opts.shrink_rejected:
        picks = []
        if opts.shrink:
            picks += pick_for_shrinking(results, "wrong", opts.max_shrink) + pick_for_shrinking(
                results, "crash", opts.max_shrink
            )
        if opts.shrink_rejected:
            picks += [seeds_[0] for _, seeds_ in grouped(results, "rejected")[: opts.shrink_rejected]]
        start = time.perf_counter()
        shrunk = shrink_batch(results, picks, opts.jobs)
        print(f"\n==================== {len(shrunk)} shrunk reproducers ({time.perf_counter() - start:.1f} s)")
        seen = set()
        for seed, outcome, small, after in shrunk:
            if small.source in seen:
                print(f"\n# seed {seed}: shrinks to a reproducer shown above")
                continue
            seen.add(small.source)
            print(f"\n# ---------- seed {seed}: {outcome.cls} [{outcome.key}]; shrunk: {after.cls} [{after.key}]")
            print(format_regression(small, after))
    return 0


if __name__ == "__main__":
    sys.exit(main())
