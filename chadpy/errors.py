"""Errors raised by chadpy: every one names the construct and shows where it is.

A `ChadError` carries a `Loc` (file, line, function, source line) so the user sees
exactly which line of their own code chadpy could not differentiate.
"""

from __future__ import annotations

from dataclasses import dataclass


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

    def __init__(self, message: str, loc: Loc | None = None):
        self.message = message
        self.loc = loc
        super().__init__(message if loc is None else f"{message}\n{loc}")


class UnsupportedSyntax(ChadError):
    """A Python construct outside the language chadpy differentiates."""


class UnknownFunction(ChadError):
    """A call to something with no derivative rule and no readable source."""


class ChadTypeError(ChadError):
    """A value whose type cannot be differentiated here (e.g. a non-float output for grad)."""
