"""The core IR's invariants, checked after every lowering.

- Single assignment: a function binds each name once (its parameters, the targets
  of its lets, the state variables and index of its loops).
- A-normal form: every operand of an expression is an atom (`Var`, `Const`, `Ref`).
- Scoping: a name is read only where it is bound: a parameter, an earlier let of
  the same or an enclosing block, the state or index of an enclosing loop. What a
  branch or a loop body binds is not visible after it (a loop's `next` and `stop`
  are read in its body's scope).
- Closure conversion is complete: a lifted function reads only its own names.

A violation is a bug in chadpy, not in the user's code: `IRError` says which
function and which name.
"""

from __future__ import annotations

from . import ir


class IRError(AssertionError):
    """The IR breaks one of the invariants above."""


def verify(f: ir.Function) -> None:
    """Check `f` and every function it makes (lifted closures), each on its own."""
    todo, seen = [f], set()
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        _Checker(fn, todo).run()


class _Checker:
    def __init__(self, fn: ir.Function, todo: list[ir.Function]):
        self.fn = fn
        self.todo = todo  # lifted functions met here, checked after
        self.bound: set[str] = set()

    def fail(self, message: str) -> IRError:
        return IRError(f"in the IR of `{self.fn.name}`: {message}\n{ir.format_function(self.fn)}")

    def run(self) -> None:
        self.block(self.fn.body, self.binds(self.fn.params, frozenset()))

    def binds(self, names: list[str] | tuple[str, ...], scope: frozenset[str]) -> frozenset[str]:
        for name in names:
            if name in self.bound:
                raise self.fail(f"`{name}` is bound twice")
            self.bound.add(name)
        return scope | set(names)

    def atom(self, a: object, scope: frozenset[str]) -> None:
        if not isinstance(a, (ir.Var, ir.Const, ir.Ref)):
            raise self.fail(f"an operand is not an atom: {a!r}")
        if isinstance(a, ir.Var) and a.name not in scope:
            raise self.fail(f"`{a.name}` is read where it is not bound")

    def block(self, block: ir.Block, scope: frozenset[str]) -> frozenset[str]:
        """Check a block; return the scope at its end (its lets bound)."""
        for let in block.lets:
            self.expr(let.expr, scope)
            scope = self.binds(ir.bound_names(let), scope)
        self.atom(block.result, scope)
        return scope

    def expr(self, e: ir.Expr, scope: frozenset[str]) -> None:
        for a in ir.operands(e):
            self.atom(a, scope)
        if isinstance(e, ir.MakeClosure) and isinstance(e.code, ir.Function):
            self.todo.append(e.code)
        inner = self.binds(ir.scoped(e), scope)
        ends = [self.block(b, inner) for b in ir.blocks(e)]
        if isinstance(e, ir.Loop):
            for a in ir.loop_results(e):
                self.atom(a, ends[-1])  # read in the body's scope
