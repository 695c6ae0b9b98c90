"""Shrinking: a failing program made small while it fails the same way (`shrink`), and printed as a
ready-to-paste regression test (`format_regression`)."""

from __future__ import annotations

import ast
import builtins
import copy
import itertools
import math
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from tests.support.progen import Program, bind_args, literal, normalize

from .check import TIMEOUT, Outcome, Timeout, _deadline, check, load

# ====================================================================== shrinking


def _bodies(tree: ast.AST) -> list[list[ast.stmt]]:
    """Every statement list in the tree, in a deterministic order."""
    out = []
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
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
            if isinstance(stmt, (ast.If, ast.For, ast.While, ast.Try)):
                for part in ("body", "orelse", "finalbody"):
                    if getattr(stmt, part, None):

                        def inline(t: ast.Module, b: int = b, j: int = j, part: str = part) -> bool:
                            body = _bodies(t)[b]
                            body[j : j + 1] = getattr(body[j], part)
                            return True

                        yield with_tree(inline)
            if isinstance(stmt, ast.Try):  # a try by one of its handlers' bodies, or without one handler
                for h in range(len(stmt.handlers)):

                    def handler(t: ast.Module, b: int = b, j: int = j, h: int = h) -> bool:
                        body = _bodies(t)[b]
                        body[j : j + 1] = body[j].handlers[h].body  # type: ignore[attr-defined]
                        return True

                    def drop_handler(t: ast.Module, b: int = b, j: int = j, h: int = h) -> bool:
                        stmt = _bodies(t)[b][j]
                        del stmt.handlers[h]  # type: ignore[attr-defined]
                        return bool(stmt.handlers or stmt.finalbody)  # type: ignore[attr-defined]

                    yield with_tree(handler)
                    yield with_tree(drop_handler)
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
    # expressions: replace one by a part of it, or by a constant (not the classes of an `except` or a `raise`)
    kept = {id(n) for h in ast.walk(tree) if isinstance(h, ast.ExceptHandler) and h.type for n in ast.walk(h.type)}
    kept |= {id(r.exc.func) for r in ast.walk(tree) if isinstance(r, ast.Raise) and isinstance(r.exc, ast.Call)}
    n_nodes = sum(1 for _ in ast.walk(tree))
    for index in range(n_nodes):
        node = next(itertools.islice(ast.walk(tree), index, None))
        if not isinstance(node, ast.expr) or id(node) in kept:
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
        elif isinstance(node, ast.ExceptHandler) and node.name:
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
    break, continue or raise does not reach the join; a try's handlers and its finally start
    from what was assigned before it, its else from its body)."""
    module = set(dir(builtins)) | _targets(ast.Module(body=tree.body, type_ignores=[]))
    module |= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    module |= {(a.asname or a.name).split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    bad: set[str] = set()

    def block(body: list[ast.stmt], defined: set[str], local: set[str]) -> tuple[set[str], bool]:
        """(defined after the block, whether it falls through)."""
        for stmt in body:
            if isinstance(stmt, (ast.Return, ast.Break, ast.Continue, ast.Raise)):
                check(stmt, defined, local)
                return defined, False
            if isinstance(stmt, ast.Try):
                after, through = block(stmt.body, set(defined), local)
                outs = [block(stmt.orelse, after, local)] if through else []
                outs += [block(h.body, set(defined), local) for h in stmt.handlers]
                block(stmt.finalbody, set(defined), local)
                falls = [d for d, through in outs if through]
                if not falls:
                    return defined, False
                defined = set.intersection(*falls)
                continue
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
            elif isinstance(stmt, ast.ClassDef):  # its methods are functions of their own
                for method in stmt.body:
                    if isinstance(method, ast.FunctionDef):
                        function(method, defined)
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
        declared = {n for node in ast.walk(fn) if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names}
        local = {n for n in local if n not in params and n not in declared}
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
    (function, variable) held there), or None if f fails, does not return a finite float or
    runs for more than a few seconds (a candidate can loop forever: `while k < 3:` without
    its `k += 1`)."""
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
            with _deadline(5.0):
                value = f(*copy.deepcopy(args))
        finally:
            sys.settrace(previous)
    except (Exception, Timeout):
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
    unbound: set[str]  # the variables the original may read before assigning them (`_maybe_unbound`)


def _plausible(candidate: Program, ref: _Reference) -> set[str] | None:
    """None unless a shrinking candidate runs (to a finite float), its variables hold the
    kinds of value they held in the original, it reads no name it does not bind (nor may read
    one before assigning it, unless the original may: `ref.unbound`), and its code that does not run at
    these arguments is unchanged: in f, code of the original program; in helpers, also code
    that ran in an earlier accepted candidate. Otherwise the source of the statements that ran.

    Code that does not run is never checked by running it, but chadpy still analyses it:
    an edit there (`for i in 0.5:`, a loop without its counter) or a change of what flows
    into it (a float that became an array) could make a reproducer of something else."""
    tree = ast.parse(candidate.source)
    if _undefined_names(tree) or _maybe_unbound(tree) - ref.unbound:
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
    ref = _Reference(original, kinds, set(original), unbound=_maybe_unbound(tree))
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

        def visit_Global(self, node: ast.Global) -> ast.Global:
            node.names = [defined.get(n, n) for n in node.names]
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
