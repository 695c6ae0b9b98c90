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

from . import nodes as ir


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
    """The names in scope are one set, each block's taken out again as it ends: a copy of the scope
    per binding made checking a long function quadratic."""

    def __init__(self, fn: ir.Function, todo: list[ir.Function]):
        self.fn = fn
        self.todo = todo  # lifted functions met here, checked after
        self.bound: set[str] = set()  # every name bound so far, anywhere in the function
        self.visible: set[str] = set()  # the names in scope here

    def fail(self, message: str) -> IRError:
        return IRError(f"in the IR of `{self.fn.name}`: {message}\n{ir.format_function(self.fn)}")

    def run(self) -> None:
        self.bind(self.fn.params)
        self.block(self.fn.body, [])

    def bind(self, names: list[str] | tuple[str, ...]) -> list[str]:
        for name in names:
            if name in self.bound:
                raise self.fail(f"`{name}` is bound twice")
            self.bound.add(name)
            self.visible.add(name)
        return list(names)

    def atom(self, a: object) -> None:
        if not isinstance(a, (ir.Var, ir.Const, ir.Ref)):
            raise self.fail(f"an operand is not an atom: {a!r}")
        if isinstance(a, ir.Var) and a.name not in self.visible:
            raise self.fail(f"`{a.name}` is read where it is not bound")

    def block(self, block: ir.Block, read_at_end: list[ir.Atom]) -> None:
        """Check a block, and `read_at_end` in its scope at its end (a loop's next state)."""
        made: list[str] = []
        for let in block.lets:
            self.expr(let.expr)
            made += self.bind(ir.bound_names(let))
        for a in [block.result, *read_at_end]:
            self.atom(a)
        self.visible.difference_update(made)

    def expr(self, e: ir.Expr) -> None:
        for a in ir.operands(e):
            self.atom(a)
        if isinstance(e, ir.MakeClosure) and isinstance(e.code, ir.Function):
            self.todo.append(e.code)
        inner = self.bind(ir.scoped(e))
        parts = ir.blocks(e)
        for k, b in enumerate(parts):
            last_of_loop = isinstance(e, ir.Loop) and k == len(parts) - 1
            self.block(b, ir.loop_results(e) if last_of_loop else [])  # read in the body's scope
        self.visible.difference_update(inner)
