"""Random programs in chadpy's supported language, for the differential tester (`differential.py`).

`generate(seed)` returns a `Program` (`core`); the generator is one class made of a mixin per construct
family, each in its own module: statements, control flow, functions, objects, float, array and list
expressions, and issue 37's code no derivative flows through (inactive), unpacking and writes into local
containers (writes), and `try` statements (tries). Generation is deterministic in the seed.
"""

from __future__ import annotations

from .arrays import Arrays
from .base import Base
from .control import Control
from .core import WEIGHTS, Program, RecordArg, bind_args, literal, normalize
from .floats import Floats
from .functions import Functions
from .inactive import Inactive
from .lists import Lists
from .objects import Objects
from .statements import Statements
from .tries import Tries
from .writes import Writes

__all__ = ["WEIGHTS", "Program", "RecordArg", "bind_args", "generate", "literal", "normalize"]


class _Gen(Statements, Control, Functions, Objects, Floats, Arrays, Lists, Inactive, Writes, Tries, Base):
    """The generator: one program per instance, from its seed."""


def generate(seed: int, weights: dict[str, float] | None = None) -> Program:
    """A random valid program, deterministic in `seed` (and the weights)."""
    w = dict(WEIGHTS)
    if weights:
        unknown = set(weights) - set(WEIGHTS)
        if unknown:
            raise KeyError(f"unknown weights: {sorted(unknown)}")
        w.update(weights)
    return _Gen(seed, w).program()
