"""Errors raised by chadpy: every one names the construct and shows where it is.

A `ChadError` carries a `Loc` (file, line, function, source line) so the user sees
exactly which line of their own code chadpy could not differentiate; where that line
is in a function their code called (a helper, a library function chadpy read), `calls`
lists the calls that led there, the user's own first.

Tracebacks leave out chadpy's own frames (as JAX does with its own): an exception
escaping the API shows the user's frames and the generated derivative's, and an
exception raised while a derivative runs carries a note naming the user's line it came
from. Set the environment variable `CHADPY_TRACEBACK=full` to see every frame.
"""

from __future__ import annotations

import linecache
import os
import sys
import types
from dataclasses import dataclass

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


@dataclass(frozen=True)
class Loc:
    """A place in the user's source code."""

    filename: str
    lineno: int
    function: str
    line: str

    def __str__(self) -> str:
        return f'  File "{self.filename}", line {self.lineno}, in {self.function}\n    {self.line.strip()}'


class ChadError(Exception):
    """Base class: chadpy cannot differentiate this code (or was used wrongly)."""

    def __init__(self, message: str, loc: Loc | None = None, calls: tuple[Loc, ...] = ()):
        self.message = message
        self.loc = loc
        self.calls = tuple(calls)  # the calls that led to `loc`, outermost first
        super().__init__(message)

    def __str__(self) -> str:
        parts = [self.message]
        if self.calls:
            parts.append("reached by the call" + ("s" if len(self.calls) > 1 else ""))
            parts.extend(str(c) for c in self.calls)
            parts.append("at")
        if self.loc is not None:
            parts.append(str(self.loc))
        return "\n".join(parts)

    def located(self, loc: Loc | None) -> ChadError:
        """This error at `loc` if it has no place yet."""
        if self.loc is None and loc is not None:
            self.loc = loc
        return self

    def reached_from(self, call: Loc | None) -> ChadError:
        """This error, reached through a call at `call` (from another function than its own place)."""
        if call is not None and call != self.loc and call not in self.calls:
            self.calls = (call, *self.calls)
        return self


class UnsupportedSyntax(ChadError):
    """A Python construct outside the language chadpy differentiates."""


class UnknownFunction(ChadError):
    """A call to something with no derivative rule and no readable source."""


class ChadTypeError(ChadError):
    """A value whose type cannot be differentiated here (e.g. a non-float output for grad)."""


def is_internal(filename: str) -> bool:
    """A file of chadpy itself (not the user's code, not a generated derivative)."""
    return filename.startswith(_PACKAGE)


def caller_loc() -> Loc | None:
    """Where the user's code called into chadpy: the innermost frame outside chadpy."""
    frame = sys._getframe(1)
    while frame is not None and is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    return Loc(filename, lineno, frame.f_code.co_name, linecache.getline(filename, lineno))


def without_internal_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback without chadpy's own frames (all of them with `CHADPY_TRACEBACK=full`)."""
    if os.environ.get("CHADPY_TRACEBACK") == "full":
        return tb
    kept = []
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for entry in reversed(kept):
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out
