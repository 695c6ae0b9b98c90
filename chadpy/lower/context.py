"""The lowerer as its rule modules see it: the operations of A-normal form and the state of the
function being lowered.

`lowerer.Lowerer` dispatches statements and expressions; each construct it does not lower itself goes
to a rule in `control`, `desugar`, `resolve`, `objects`, `updates` or `closures`, which lowers its
parts by calling back (`atom`, `let`, `block`, ...). They name this protocol, not the class, so the
rules sit below the dispatcher: no module of `lower/` imports `lowerer` but the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import gast

from ..errors import ChadError, Loc
from ..ir import nodes as ir
from ..names import NameSupply
from ..read.source import ParsedFunction, Watch
from .outside import Resolver

Env = dict[str, ir.Atom]  # the user's names -> their current SSA values
Lets = list[ir.Let]  # the block being built


class Lowering(Protocol):
    """One function's lowering in progress."""

    parsed: ParsedFunction  # the function's source (its locations)
    watch: Watch  # the outside names it read
    node: gast.FunctionDef | gast.Lambda  # the function (or nested function) being lowered
    constructing: type | None  # lowering `cls.__init__` as the constructor of this class
    names: NameSupply  # fresh SSA names
    loc: Loc  # the statement being lowered
    resolver: Resolver  # what its outside names are
    locals: set[str]  # the names it assigns, and its parameters
    later: dict[int, set[str]]  # per function made (by id of its node): the names assigned after it
    function_reads: dict[str, set[str]]  # what calling each function named here reads
    closures: dict[str, Any]  # SSA name -> the `closures.ClosureMade` or `closures.LateDef` it holds
    hidden: dict[str, ir.Atom | None]  # the variables comprehension variables hide, while lowered
    counters: set[str]  # SSA names of `for` counters over a range that starts at 0 or above
    loops: list[Any]  # the `control.LoopExits` of the loops being lowered, innermost last

    def error(self, cls: type[ChadError], message: str, node: gast.AST | None = None) -> ChadError:
        """An error of class `cls` located at `node` (else at the statement being lowered)."""

    def nested(self, node: gast.FunctionDef | gast.Lambda) -> Lowering:
        """A lowering of a function nested in this one."""

    def body(self, env: Env) -> ir.Block:
        """The function's body; falling off its end returns None (a constructor: the object)."""

    def block(self, stmts: list[gast.stmt], env: Env, fall_through: Callable, live_out: set[str]) -> ir.Block:
        """`stmts` lowered; `fall_through(env, lets)` ends the block if control reaches its end."""

    def let(self, e: ir.Expr, lets: Lets, hint: str) -> ir.Var:
        """`e` bound to a fresh name named after `hint`."""

    def atom(self, node: gast.expr, env: Env, lets: Lets, hint: str = "t") -> ir.Atom:
        """`node` lowered to an atom (bound to a fresh name unless it is one)."""

    def argument(self, node: gast.expr, env: Env, lets: Lets) -> ir.Atom:
        """An argument of a call (or the function called): a function value there is used right away."""

    def bind(self, user_name: str, env: Env) -> str:
        """A fresh SSA name for an assignment to `user_name`."""

    def read(self, name: str, env: Env, node: gast.AST, lets: Lets, use: str = "value") -> ir.Expr:
        """The value of a name (`use`: "call" where it is called or passed to a call right away)."""

    def assign(self, target: gast.AST, value: ir.Atom, env: Env, lets: Lets) -> None:
        """`target = value` for a name, an attribute or a (nested) tuple of targets."""
