"""What a CHAD rule outside `transform` sees of the transformation in progress: the function's
types, its environment's slots and cotangent names, and the two rules it recurses into (a block,
and a variable's cotangent). The rules of loops (`loops`) and calls (`calls`) name this protocol,
not `transform.Chad`, so they sit below it.
"""

from __future__ import annotations

from typing import Protocol

from ..infer.inference import Spec
from ..ir import nodes as ir
from ..ir.types import VType
from ..names import NameSupply
from ..target.expressions import Expr, Obj
from ..target.statements import Stmt
from .stages import Stage
from .writes import Rewinds


class Rules(Protocol):
    """One function's CHAD transformation in progress (Fig. 7)."""

    spec: Spec  # the specialisation being transformed: its types, callees and methods
    names: NameSupply  # fresh names of the generated code
    d: str  # the name of a backpropagator's incoming cotangent
    acc: str  # the name of the environment accumulator
    slot: dict[str, int]  # variable -> its slot (De Bruijn level)
    ct: dict[str, str]  # variable -> the name of its cotangent
    rewinds: Rewinds  # the log of the function's in-place writes, where a rule must rewind it
    stage: Stage  # the paper's stage being made (the naive one builds tuple cotangents in full)

    def type_of(self, atom: ir.Atom) -> VType:
        """The type of an atom."""

    def active(self, atom: ir.Atom | str) -> bool:
        """Whether a derivative flows through the atom (or the variable of that name)."""

    def open_slot(self, var: str, depth: int) -> int:
        """Give `var` the slot at `depth` and a cotangent name."""

    def cotangent_name(self, atom: ir.Atom | tuple) -> str:
        """A fresh name for the part of an argument's cotangent one rule computes."""

    def env(self, depth: int) -> tuple[str, ...]:
        """Γ at a point of depth `depth`: the variable in each slot."""

    def zero(self, t: VType) -> Expr:
        """The zero cotangent of type t."""

    def dense_layout(self, t: VType) -> Obj:
        """The naive stage's layout of a tuple type's zero (`dense_zero`'s argument)."""

    def primal(self, atom: ir.Atom) -> Expr:
        """An atom as a primal expression of the target language."""

    def block(
        self,
        block: ir.Block,
        depth: int,
        hint: str,
        wanted: bool = True,
        bp_name: str | None = None,
        results: list[ir.Atom] | None = None,
    ) -> tuple[list[Stmt], str | None]:
        """D[block]: its forward statements and the name of its backpropagator (None if none)."""

    def var(self, atom: ir.Atom, d: Expr) -> list[Stmt]:
        """D[x]: add d into x's slot."""
