"""Names for the code chadpy writes: one supply of fresh names, used by every stage.

A fresh name never equals a name the user's code mentions, and never shadows a Python
builtin or a runtime helper the generated code calls (`sum`, `pow`, `add`): a temporary
named after such an operation gets a readable stand-in (`total`, `power`, `added`), or else
a number (`next_1`). The user's own variables keep their names, whatever they are. `Globals`
names the outside objects a generated module reads (its globals), after its local names are
known; `numbered` names specialisations (`f_chad`, `f_chad_1`).
"""

from __future__ import annotations

import builtins
import functools
import importlib
import inspect
import keyword
import re

# the modules whose functions and classes the generated code calls by their own names
_HELPER_MODULES = (
    "runtime.cotangents",
    "runtime.records",
    "runtime.sequences",
    "runtime.scalar",
    "runtime.pointwise",
    "runtime.closures",
    "runtime.arrays",
    "runtime.array_cotangents",
    "runtime.writes",
    "runtime.numpy",
    "runtime.reductions",
    "runtime.shape",
    "runtime.linalg",
    "runtime.special",  # SciPy's: only when SciPy imports
    "runtime.environments",
    "rules.registry",
)
# names codegen spells outside objects with (module aliases, placeholders)
_SPELLINGS = {"math", "np", "numpy", "default", "tuple_type"}
# a temporary named after an operation whose name is taken by a builtin or a helper
_STAND_INS = {
    "add": "added",
    "pow": "power",
    "sum": "total",
    "abs": "absolute",
    "max": "largest",
    "min": "smallest",
    "len": "length",
    "round": "rounded",
    "sorted": "ordered",
    "positions": "places",
}


@functools.cache
def reserved() -> frozenset[str]:
    """Names no temporary takes: Python's builtins and the names of the runtime helpers."""
    out = {n for n in dir(builtins) if not n.startswith("_")} | _SPELLINGS
    for m in _HELPER_MODULES:
        try:
            module = importlib.import_module(f"chadpy.{m}")
        except ImportError:  # runtime.special without SciPy: its helpers are never called
            continue
        out.update(
            n
            for n, v in vars(module).items()
            if not n.startswith("_")
            and (inspect.isfunction(v) or inspect.isclass(v))
            and v.__module__ == module.__name__
        )
    return frozenset(out)


def readable(hint: str) -> str:
    """The name a temporary hinted `hint` starts from: a keyword gets `_` (`lambda_`), an operation
    named like a builtin or a helper a stand-in (`pow` -> `power`; others are numbered: `next_1`)."""
    if keyword.iskeyword(hint):
        return hint + "_"
    return _STAND_INS.get(hint, hint) if hint in reserved() else hint


def numbered(base: str, taken: set[str] | dict) -> str:
    """`base`, or the first of `base_1`, `base_2`, ... not taken (the names of specialisations:
    `f_chad`, `f_chad_1`)."""
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    return name


class NameSupply:
    """Fresh names, never equal to a name the user's code mentions (nor, with `reserve`, a
    builtin's or a runtime helper's)."""

    def __init__(self, taken: set[str], reserve: bool = True):
        self.taken = set(taken)
        self.reserved = reserved() if reserve else frozenset()
        self.tried: dict[str, int] = {}  # hint -> the suffixes below this are all taken (names are never freed)

    def fresh(self, hint: str) -> str:
        hint = readable(hint) if self.reserved else hint + "_" if keyword.iskeyword(hint) else hint
        k = self.tried.get(hint, 0)
        name = f"{hint}_{k}" if k else hint
        while name in self.taken or name in self.reserved:
            k += 1
            name = f"{hint}_{k}"
        self.tried[hint] = k + 1
        self.taken.add(name)
        return name


class Globals:
    """Names for the outside objects a generated module reads (`math`, `add`, a user's
    function): each object its preferred name unless a local name or another object has it."""

    def __init__(self, local_names: set[str]):
        self.supply = NameSupply(local_names, reserve=False)
        self.bindings: dict[str, object] = {}  # name -> object: the module's globals
        self.named: dict[tuple[str, int], str] = {}  # (preferred name, id(object)) -> its name

    def bind(self, preferred: str, obj: object) -> str:
        preferred = re.sub(r"\W", "_", preferred).lstrip("0123456789") or "obj"  # an identifier whatever its path
        key = (preferred, id(obj))
        if key not in self.named:
            self.named[key] = name = self.supply.fresh(preferred)
            self.bindings[name] = obj
        return self.named[key]
