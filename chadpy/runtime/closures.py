"""Function values at run time, after closure conversion (Section 9)."""

from __future__ import annotations

from ..errors import ChadError


class Closure:
    """A function value after closure conversion (Section 9): the values it captured.

    Its code is known to the compiler (it is part of the value's type), so a call site
    runs `code_chad(closure.env, *args)` directly; the name is for people reading it.
    """

    __slots__ = ("name", "env")

    def __init__(self, name: str, env: tuple):
        self.name = name
        self.env = env

    def __repr__(self) -> str:
        return f"<chadpy closure {self.name}>"

    def __call__(self, *args: object) -> object:
        raise ChadError(
            f"the function value {self.name} was made inside differentiated code and can only be called there"
        )
