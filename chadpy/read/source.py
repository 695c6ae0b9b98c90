"""Reading a function's source: text -> gast tree, locations, and outside names.

This is the first arrow of the pipeline. It knows where every node came from (for
error messages) and how to find what a free name of the function refers to (its
closure cells, its module's globals, builtins). Each name it resolves is recorded
in a `Watch`, so a cached derivative notices when a module constant changes.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import re
import textwrap
import types
from dataclasses import dataclass, field

import gast
import numpy as np

from ..errors import ChadError, Loc, UnknownFunction, UnsupportedSyntax, is_internal
from ..ir.records import fields_of, is_record
from .origin import history_lines, is_the_running_code, texts_for, unreadable

_MISSING = object()


@dataclass
class Watch:
    """The outside values a derivative was built from; stale once any is rebound, or once an
    array among them changes its rank or dtype kind in place, or an object of a user class
    the kinds of its attributes (the derivative is specialised to them). O(1) per value (an
    object's: per attribute): a list's elements are not walked."""

    entries: dict[tuple[int, str], tuple[object, str, object, object]] = field(default_factory=dict)

    def add(self, container: object, key: str, value: object) -> None:
        self.entries[id(container), key] = (container, key, value, _kind(value))

    def still_valid(self) -> bool:
        for container, key, value, kind in self.entries.values():
            if isinstance(container, dict):
                if container.get(key, _MISSING) is not value:
                    return False
            elif container.cell_contents is not value:  # a closure cell
                return False
            if kind is not None and _kind(value) != kind:
                return False
        return True


def _kind(value: object, depth: int = 3) -> object:
    """What a derivative reading `value` is specialised to, beyond its identity: an array's rank
    and dtype kind; an object's attributes' classes and kinds, and the functions it holds
    (records nested `depth` deep)."""
    if isinstance(value, np.ndarray):
        return (value.ndim, value.dtype.kind)
    if depth and is_record(value):
        return tuple((k, type(v), v if callable(v) else _kind(v, depth - 1)) for k, v in fields_of(value))
    return None


@dataclass
class ParsedFunction:
    """A function's source as gast, with where it came from (file, first line, the lines), for locations."""

    pyfunc: types.FunctionType
    tree: gast.FunctionDef
    filename: str
    first_lineno: int
    lines: list[str]
    # names the front end binds for the function: statements it runs as written, modules it imports
    outside: dict[str, object] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.pyfunc.__name__

    def loc(self, node: gast.AST | None) -> Loc:
        rel = getattr(node, "lineno", 1) or 1
        text = self.lines[rel - 1] if 0 < rel <= len(self.lines) else ""
        return Loc(self.filename, self.first_lineno + rel - 1, self.name, text)

    def resolve(self, name: str, watch: Watch) -> object:
        """The object a free name of the function refers to, or `_MISSING`."""
        fn = self.pyfunc
        if name in self.outside:
            return self.outside[name]
        if name in fn.__code__.co_freevars:
            cell = fn.__closure__[fn.__code__.co_freevars.index(name)]
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell: assigned later in the enclosing scope
                return _MISSING
            watch.add(cell, name, value)
            return value
        if name in fn.__globals__:
            value = fn.__globals__[name]
            watch.add(fn.__globals__, name, value)
            return value
        return getattr(builtins, name, _MISSING)


def is_missing(value: object) -> bool:
    return value is _MISSING


def same_data(a: object, b: object) -> bool:
    """Whether two outside objects are one, or arrays sharing memory (`b = a`, `c = a[:1]` at module level): a
    write through one is read through the other."""
    return a is b or type(a) is type(b) is np.ndarray and np.may_share_memory(a, b)


def parse_function(fn: types.FunctionType) -> ParsedFunction:
    """Read and parse the source of `fn`; its `def` is the tree's only statement. The text read must compile to
    the code that runs (`read/origin.py`): else `UnknownFunction`, naming the file."""
    if not isinstance(fn, types.FunctionType):
        name = getattr(fn, "__name__", type(fn).__name__)
        raise UnknownFunction(f"chadpy can only differentiate Python functions; `{name}` is not one")
    code = fn.__code__
    if is_internal(code.co_filename):
        raise ChadError(
            f"`{fn.__name__}` is a derivative chadpy made (or part of chadpy): differentiating a derivative "
            "(grad of grad) is not supported yet"
        )
    if code.co_name == "<lambda>":
        return _parse_lambda(fn)
    texts = texts_for(fn)
    if texts:  # by its code object: the function itself, never the one its `__wrapped__` names
        filename, (module, text, first) = _running_definition(fn, texts)
    else:
        found = _from_history(fn) if code.co_filename == "<stdin>" else None
        if found is None:
            raise unreadable(fn, "could not get source code")
        filename, (module, text, first) = code.co_filename, found
    tree = gast.ast_to_gast(module).body[0]
    parsed = ParsedFunction(fn, tree, filename, first, text.splitlines())
    if isinstance(tree, gast.AsyncFunctionDef):
        raise UnsupportedSyntax("`async def` is not supported", parsed.loc(tree))
    if not isinstance(tree, gast.FunctionDef):
        raise UnsupportedSyntax(f"{fn.__qualname__} is not defined by a plain `def`", parsed.loc(tree))
    return parsed


def _running_definition(
    fn: types.FunctionType, texts: list[tuple[str, list[str]]]
) -> tuple[str, tuple[ast.Module, str, int]]:
    """fn's definition in the first of `texts` it is found in and checked to be the code that runs, with that text's
    file name."""
    for filename, lines in texts:
        found = _running_in(fn, lines)
        if found is not None:
            return filename, found
    code = fn.__code__
    filename, lines = texts[0]
    line = lines[code.co_firstlineno - 1] if code.co_firstlineno <= len(lines) else ""
    raise UnknownFunction(
        f"the source of `{fn.__qualname__}` in {filename} is not the code that runs: the file changed after the "
        "function was defined; reload its module (`importlib.reload`) or restart Python",
        Loc(filename, code.co_firstlineno, fn.__name__, line),
    )


def _running_in(fn: types.FunctionType, lines: list[str]) -> tuple[ast.Module, str, int] | None:
    """fn's definition in `lines` (`_definition`) if it compiles to fn's code, else None."""
    try:
        found = _definition(fn, lines)
    except (OSError, SyntaxError):
        return None
    if found is None:
        return None
    at_its_lines = ast.parse(found[1])  # another copy: the definition's keeps lines counted from its text's first
    ast.increment_lineno(at_its_lines, found[2] - 1)
    return found if is_the_running_code(fn, at_its_lines.body[0], lines) else None


def _from_history(fn: types.FunctionType) -> tuple[ast.Module, str, int] | None:
    """fn's definition in the interactive prompt's history: the latest statement that compiles to its code
    (the prompt numbers each statement's lines from 1)."""
    history = history_lines()
    for start in reversed(range(len(history))):
        if history[start][:1].isspace() or not history[start].strip():
            continue  # a statement begins at the prompt's first column
        end = start + 1
        while end < len(history) and (history[end][:1].isspace() or not history[end].strip()):
            end += 1
        found = _running_in(fn, history[start:end])
        if found is not None:
            return found
    return None


# where `inspect.findsource` stops looking upwards from a code's first line for the line that begins it
_BEGINS = re.compile(r"^(\s*def\s)|(\s*async\s+def\s)|(.*(?<!\w)lambda(:|\s))|^(\s*@)")


def _start_line(fn: types.FunctionType, lines: list[str]) -> int:
    """The index of fn's first line (a decorator's or its `def`) as `inspect.findsource` finds it, without its
    look through every loaded module for the file's (for a file not seen before, tens of milliseconds with SciPy
    loaded: most of reading a 200-line function)."""
    start = fn.__code__.co_firstlineno - 1
    while start > 0:
        if start >= len(lines):
            raise OSError("lineno is out of bounds")
        if _BEGINS.match(lines[start]):
            break
        start -= 1
    return start


def _definition(fn: types.FunctionType, lines: list[str]) -> tuple[ast.Module, str, int] | None:
    """The parsed `def` of `fn` in `lines`, its text and its first line (None if it is not a lone statement).
    Found by indentation: it ends before the next line indented no deeper than its first (not blank, a comment or
    a closing bracket). That line may be inside a string or brackets; then the text before it does not parse,
    and `inspect.getblock` cuts it (tokenizing from the `def` on: several times slower)."""
    start = _start_line(fn, lines)
    text = _by_indentation(lines, start)
    module = _alone(text) if text is not None else None
    if module is None:
        text = textwrap.dedent("".join(inspect.getblock(lines[start:])))
        module = _alone(text)
    return None if module is None else (module, text, start + 1)


def _alone(text: str) -> ast.Module | None:
    """The parse of a text holding one statement, or None."""
    try:
        module = ast.parse(text)
    except SyntaxError:
        return None
    return module if len(module.body) == 1 else None


def _by_indentation(lines: list[str], start: int) -> str | None:
    """The dedented text from `start` to the next line indented no deeper (None if it indents with tabs)."""
    indent = len(lines[start]) - len(lines[start].lstrip())
    head = start  # the `def` line, after the decorators
    while head + 1 < len(lines) and lines[head].lstrip().startswith("@"):
        head += 1
    end = head + 1
    while end < len(lines):
        stripped = lines[end].lstrip()  # a closing bracket continues a line (`) -> float:`)
        if stripped and stripped[0] not in "#)]}" and len(lines[end]) - len(stripped) <= indent:
            break
        end += 1
    while end > head + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1  # trailing blank lines and comments belong to what follows
    block = lines[start:end]
    if any("\t" in line[: len(line) - len(line.lstrip())] for line in block):
        return None
    return textwrap.dedent("".join(block))


def _parse_lambda(fn: types.FunctionType) -> ParsedFunction:
    """A lambda made outside differentiated code (e.g. passed as an argument): find its
    node in its file by the positions of its code, and read it as `def <lambda>(...): return body`."""
    code = fn.__code__
    texts = texts_for(fn)
    if not texts:
        raise unreadable(fn, "could not get source code")
    spots = [(p[0], p[2]) for p in code.co_positions() if None not in p and p[2:] != (0, 0)]  # (0, 0): RESUME
    params = list(code.co_varnames[: code.co_argcount])
    for filename, lines in texts:
        try:
            whole = ast.parse("".join(lines))  # Python's tree (its parse and walk are C), the one lambda gast's
        except SyntaxError:
            continue
        found = []
        for node in ast.walk(whole):
            if isinstance(node, ast.Lambda) and [a.arg for a in node.args.args] == params:
                body = node.body
                start, end = (body.lineno, body.col_offset), (body.end_lineno, body.end_col_offset)
                if spots and all(start <= spot < end for spot in spots) and is_the_running_code(fn, node, lines):
                    found.append(node)
        if found:
            node = gast.ast_to_gast(
                min(found, key=lambda n: (n.end_lineno - n.lineno, n.end_col_offset - n.col_offset))
            )
            tree = gast.FunctionDef("<lambda>", node.args, [gast.Return(node.body)], [], None, None)
            gast.copy_location(tree, node)
            gast.copy_location(tree.body[0], node)
            return ParsedFunction(fn, tree, filename, 1, [line.rstrip("\n") for line in lines])
    raise UnknownFunction(
        f"the source of a lambda cannot be found in {texts[0][0]} (if the file changed after the lambda was made, "
        "reload its module or restart Python)"
    )
