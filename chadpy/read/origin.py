"""Where a function's source text comes from, and whether it is the code that runs.

Lines come from `linecache` (a file, a module's loader, a notebook cell, Python 3.13's REPL), from the
command of `python -c` (`sys.orig_argv`: 3.11 and 3.12 keep no copy), or from the interactive prompt's
`readline` history. Any text found is checked against the function: it is compiled as CPython compiled
the function (in a class of the same name, under a function giving its free variables) and the code
must equal `fn.__code__`, line table included, so a module edited after it was imported is refused, not
differentiated as the text that no longer runs.
"""

from __future__ import annotations
import __future__

import ast
import functools
import linecache
import symtable
import sys
import types

from ..errors import UnknownFunction

_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag
_HISTORY_LINES = 2_000  # how far back the interactive prompt's history is searched


def file_lines(fn: types.FunctionType) -> list[str]:
    """The lines of the text fn was compiled from, as it is now (empty if none can be found)."""
    filename = fn.__code__.co_filename
    linecache.checkcache(filename)  # the file as it is now, if it was edited
    lines = linecache.getlines(filename, fn.__globals__)  # its module's loader, if not a file
    if not lines and filename == "<string>" and getattr(sys, "orig_argv", [None])[-2:-1] == ["-c"]:
        lines = _command_lines()
    return lines


def texts_for(fn: types.FunctionType) -> list[tuple[str, list[str]]]:
    """The texts fn may have been compiled from, each with its file's name: its file's; for code cloudpickle sent
    by value (which it names "<dynamic-code>"), each text sent with it (`carry`)."""
    filename = fn.__code__.co_filename
    if filename == _BY_VALUE:
        return list(_CARRIED.items())
    lines = file_lines(fn) or _CARRIED.get(filename)  # cloudpickle before 3.1 kept the file's name
    return [(filename, lines)] if lines else []


_BY_VALUE = "<dynamic-code>"  # cloudpickle's file name for the code it sends by value
_CARRIED: dict[str, list[str]] = {}  # file name -> text, sent with functions from another process (`carry`)


def _command_lines() -> list[str]:
    """The command of `python -c`: the argument after the first "-c" of the interpreter's own arguments."""
    argv = sys.orig_argv
    return argv[argv.index("-c") + 1].splitlines(True)


def texts_of(fn: object) -> dict[str, str]:
    """The texts that a function defined in `__main__` (a script, a notebook) and the `__main__` functions it names
    were compiled from, by file name: what a process that cannot read them needs (cloudpickle sends such functions
    by value, their code without their text)."""
    texts: dict[str, str] = {}
    seen: set[int] = set()
    todo = [fn]
    while todo:
        f = todo.pop()
        if not isinstance(f, types.FunctionType) or f.__module__ != "__main__" or id(f) in seen:
            continue
        seen.add(id(f))
        filename = f.__code__.co_filename
        if filename == _BY_VALUE:  # sent here by value: sent on with the texts it came with
            texts.update((name, "".join(lines)) for name, lines in _CARRIED.items())
        elif filename not in texts:
            texts[filename] = "".join(file_lines(f))
        todo.extend(f.__globals__.get(name) for name in names_read(f.__code__))
    return {k: v for k, v in texts.items() if v}


def carry(texts: dict[str, str]) -> None:
    """Make texts `texts_of` took in another process readable here, for the functions sent with them by value."""
    for filename, text in texts.items():
        _CARRIED[filename] = text.splitlines(True)


def history_lines() -> list[str]:
    """The interactive prompt's recent input, oldest first (empty without `readline`)."""
    readline = sys.modules.get("readline")
    if readline is None:
        return []
    n = readline.get_current_history_length()
    return [(readline.get_history_item(i) or "") + "\n" for i in range(max(1, n - _HISTORY_LINES + 1), n + 1)]


def unreadable(fn: types.FunctionType, reason: str) -> UnknownFunction:
    """The error for a function whose source cannot be read, saying where it can be."""
    where = fn.__code__.co_filename
    if where == "<stdin>":
        hint = (
            "a function typed at Python's prompt can be read from its line history when Python has `readline`; "
            "otherwise define it in a file, in IPython or Jupyter, or use Python 3.13 or later, whose prompt keeps it"
        )
    else:
        hint = "chadpy needs a function defined in a file, a notebook cell, `python -c` or Python's prompt"
    return UnknownFunction(f"the source of {fn.__qualname__} cannot be read ({reason}); {hint}")


def is_the_running_code(fn: types.FunctionType, definition: ast.stmt | ast.Lambda, lines: list[str]) -> bool:
    """Whether `definition` (a `def` or a lambda, at its place in `lines`, the text compiled with it) compiles
    to fn's code."""
    code = fn.__code__
    if "@pytest_ar" in fn.__globals__:  # a test module whose asserts pytest rewrote as it imported it
        compiled = _as_pytest_compiles(code.co_filename, "".join(lines))
    else:
        compiled = _as_cpython_compiled(code, definition, lines)
    return compiled is not None and any(
        _same_code(found, code) for found in _codes(compiled, code.co_name, code.co_firstlineno)
    )


def _as_cpython_compiled(
    code: types.CodeType, definition: ast.stmt | ast.Lambda, lines: list[str]
) -> types.CodeType | None:
    """`definition` compiled where CPython compiled `code` (None if it does not compile)."""
    inner: ast.stmt = definition if isinstance(definition, ast.stmt) else ast.Expr(definition)
    parts = code.co_qualname.split(".")
    if len(parts) > 1 and parts[-2] != "<locals>":  # a method: its class mangles `__names` and gives `__class__`
        inner = ast.ClassDef(parts[-2], [], [], [inner], [])
    free = [ast.arg(name) for name in code.co_freevars if name != "__class__"]
    if free:  # a closure: its free variables are an enclosing function's
        inner = ast.FunctionDef("enclosing", ast.arguments([], free, None, [], [], None, []), [inner], [], None)
    # a method call on a name its module imports compiles otherwise (CPython 3.11 and 3.12: no LOAD_METHOD)
    imports = [ast.Import([ast.alias(name)]) for name in sorted(names_read(code) & _imports_of("".join(lines)))]
    module = ast.fix_missing_locations(ast.Module([*imports, inner], []))
    try:
        return compile(module, code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError):
        return None


def names_read(code: types.CodeType) -> set[str]:
    """The global and attribute names a code object and the code nested in it read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= names_read(const)
    return names


@functools.lru_cache(maxsize=32)  # a file's text once while its functions are read
def _imports_of(text: str) -> frozenset[str]:
    """The names an import binds at the top level of `text` (the module, cell or command compiled)."""
    try:
        top = symtable.symtable(text, "<text>", "exec")
    except SyntaxError:
        return frozenset()
    return frozenset(symbol.get_name() for symbol in top.get_symbols() if symbol.is_imported())


@functools.lru_cache(maxsize=8)
def _as_pytest_compiles(filename: str, text: str) -> types.CodeType:
    """A test module's code with its asserts rewritten, as pytest compiles it (the whole module: the rewrite
    numbers its temporaries across the module)."""
    from _pytest.assertion.rewrite import rewrite_asserts

    tree = ast.parse(text, filename)
    rewrite_asserts(tree, text.encode(), filename)
    return compile(tree, filename, "exec", dont_inherit=True)


def _codes(code: types.CodeType, name: str, first: int):
    """The code objects nested in `code` with this name and first line."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name and const.co_firstlineno == first:
                yield const
            yield from _codes(const, name, first)


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """Equal instructions, names, constants (nested code compared alike) and lines."""
    if (a.co_code, a.co_names, a.co_varnames, a.co_freevars, a.co_cellvars) != (
        b.co_code,
        b.co_names,
        b.co_varnames,
        b.co_freevars,
        b.co_cellvars,
    ) or list(a.co_lines()) != list(b.co_lines()):
        return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
            if not _same_code(x, y):
                return False
        elif type(x) is not type(y) or repr(x) != repr(y):  # repr: -0.0 is not 0.0, nan is nan
            return False
    return True
