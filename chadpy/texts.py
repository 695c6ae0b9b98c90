"""Texts chadpy writes and then runs: a derivative's module, a rule written in Python.

Each is in `linecache` under a name of its own while code compiled from it lives, so tracebacks, debuggers and
chadpy itself (which reads a rule's text like a user's) show its lines; it goes with the last of that code, with
what was kept beside it (a derivative's map from its lines to the user's). Nothing is written to disk, unless the
environment variable `CHADPY_GENERATED_DIR` names a folder, for a debugger that opens files: the files stay there.
"""

from __future__ import annotations

import hashlib
import linecache
import os
import types
import weakref

_HOLDERS: dict[str, weakref.WeakSet] = {}  # file name -> the code objects compiled from its text
_BESIDE: dict[str, object] = {}  # file name -> what was kept with its text


def compiled(label: str, source: str, beside: object = None) -> types.CodeType:
    """`source` compiled under a file name of its own, its text held while a function made from it lives."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    folder = os.environ.get("CHADPY_GENERATED_DIR")
    filename = f"<chadpy {label} {digest}>"
    if folder:
        path = os.path.join(folder, f"{label}_{digest}.py".replace(" ", "_"))
        try:
            os.makedirs(folder, exist_ok=True)
            with open(path, "w") as f:
                f.write(source)
            filename = path
        except OSError:  # a folder that cannot be written: linecache alone
            pass
    code = compile(source, filename, "exec")
    holders = _HOLDERS.setdefault(filename, weakref.WeakSet())
    for const in code.co_consts:  # the functions' code: the module's own is gone once it has run
        if isinstance(const, types.CodeType):
            holders.add(const)
            weakref.finalize(const, _released, filename)
    if beside is not None:
        _BESIDE[filename] = beside
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return code


def beside(filename: str) -> object:
    """What was kept with a text chadpy compiled (None for other files)."""
    return _BESIDE.get(filename)


def _released(filename: str) -> None:
    """A code object compiled from the text is gone: the text goes too if it was the last (a set's iteration
    skips the dead, whichever callback runs first; a count would need a lock a collection could meet held)."""
    holders = _HOLDERS.get(filename)
    if holders is None or any(True for _ in holders):
        return
    del _HOLDERS[filename]
    _BESIDE.pop(filename, None)
    linecache.cache.pop(filename, None)
