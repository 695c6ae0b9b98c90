"""Fig. 2 from Fig. 7: backpropagators that return environment vectors.

Section 4.2 of the paper turns Fig. 2 into Fig. 7 by monadic lifting: instead of
returning a vector of cotangents for the whole environment and adding vectors with
`+`, a backpropagator adds each contribution into a threaded accumulator. The
lifting is a one-to-one change of every environment operation, so it can be undone
statement by statement; this pass does that for the `naive` and `sparse` stages, and
keeps every CHAD rule in one place (`transform.py`):

| Fig. 7 (state passing)        | Fig. 2 (returned vectors)                                 |
| ----------------------------- | --------------------------------------------------------- |
| `acc.one(slot, v)`            | `ev = EV.plus(ev, EV.one(len(Γ), slot, v))`                |
| `bp(d, acc)`                  | `ev = EV.plus(ev, bp(d))`                                  |
| `acc.push0(slot, zero)`       | `ev = EV.push0(ev)` (nothing before the first contribution) |
| `dx = acc.pop(slot)`          | `ev, dx = EV.split(ev, slot, zero)`                        |
| end of the backpropagator     | `return ev`                                                |

The first contribution starts the vector (`ev = EV.one(...)`, `ev = bp(d)`), so the
backpropagator of `op(x, y)` reads `ev = one(x); ev = plus(ev, one(y))`: Fig. 2's
`x' d1 + y' d2`, and a let's is `split`, then `d1 + x' d2`. `EV` is the stage's vector
class (`DenseEV`, `SparseEV`); `len(Γ)` is known from the slot layout `transform.py` records.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import Loc
from ..names import NameSupply
from ..target.expressions import Attr, CallX, Expr, Lit, Name, Obj
from ..target.statements import (
    AccNew,
    AccOne,
    AccPop,
    AccPush,
    Assign,
    Def,
    Do,
    Return,
    Stmt,
    bodies,
    expr_names,
    local_names,
    with_bodies,
)


def return_environment_vectors(defn: Def, vectors: type) -> Def:
    """The Fig. 2 form of one CHAD-transformed function (Fig. 7 form in)."""
    names = NameSupply(local_names([defn]) | expr_names([defn]))
    return _Unlift(vectors, names.fresh("ev")).stmts([defn])[0]


@dataclass
class _Vector:
    """Where a backpropagator's vector stands: its size, whether it exists yet, the pushed zeros."""

    acc: str  # the accumulator name the Fig. 7 code uses
    size: int
    started: bool = False
    zeros: dict[int, Expr] = field(default_factory=dict)


class _Unlift:
    """Rewrites one function's Fig. 7 code into Fig. 2's: accumulator operations become operations on the
    environment vector `ev` that each backpropagator returns."""

    def __init__(self, vectors: type, ev: str):
        self.vectors = Obj(vectors, vectors.__name__)
        self.ev = ev

    def op(self, name: str, *args: Expr) -> Expr:
        return CallX(Attr(self.vectors, name), list(args))

    def stmts(self, stmts: list[Stmt]) -> list[Stmt]:
        """Forward code: convert every backpropagator inside, keep the rest."""
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, Def) and s.slots is not None:
                out.append(self.backpropagator(s))
            elif isinstance(s, Def) and any(isinstance(x, AccNew) for x in s.body):
                out.append(self.run(s))
            elif bodies(s):
                out.append(with_bodies(s, [self.stmts(b) for b in bodies(s)]))
            else:
                out.append(s)
        return out

    def backpropagator(self, s: Def) -> Def:
        """`def bp(d, acc)` adding into acc -> `def bp(d)` returning its environment vector."""
        vector = _Vector(s.params[-1], s.slots)
        body = self.effects(s.body, vector)
        body += self.start(vector, "nothing flows: the zero vector")
        body.append(Return(Name(self.ev)))
        return Def(s.name, s.params[:-1], body, comment=s.comment, slots=s.slots, loc=s.loc)

    def run(self, s: Def) -> Def:
        """`run` allocates no accumulator: the body's backpropagator returns the parameters' vector."""
        acc = next(x for x in s.body if isinstance(x, AccNew))
        body = [x for x in s.body if x is not acc]
        return Def(
            s.name, s.params, self.effects(body, _Vector(acc.acc, 0)), comment=s.comment, slots=s.slots, loc=s.loc
        )

    def assign(self, value: Expr, comment: str = "", loc: Loc | None = None) -> Assign:
        return Assign([self.ev], value, comment=comment, loc=loc)

    def start(self, vector: _Vector, comment: str = "") -> list[Stmt]:
        """The zero vector, where the vector must exist before any contribution made it."""
        if vector.started:
            return []
        vector.started = True
        return [self.assign(self.op("zero", Lit(vector.size)), comment)]

    def add(self, contribution: Expr, vector: _Vector, source: Stmt) -> Stmt:
        """The first contribution starts the vector; later ones are added with `+`."""
        if not vector.started:
            vector.started = True
            return self.assign(contribution, source.comment, source.loc)
        return self.assign(self.op("plus", Name(self.ev), contribution), source.comment, source.loc)

    def effects(self, stmts: list[Stmt], vector: _Vector) -> list[Stmt]:
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, AccPush):
                vector.zeros[s.slot] = s.zero
                if vector.started:
                    out.append(self.assign(self.op("push0", Name(self.ev)), s.comment, s.loc))
                vector.size += 1
            elif isinstance(s, AccOne):
                one = self.op("one", Lit(vector.size), Lit(s.slot), s.value)
                out.append(self.add(one, vector, s))
            elif isinstance(s, AccPop):
                out += self.start(vector)
                split = self.op("split", Name(self.ev), Lit(s.slot), vector.zeros.pop(s.slot))
                out.append(Assign([self.ev, s.ct], split, comment=s.comment, loc=s.loc))
                vector.size -= 1
            elif _calls_with(s, vector.acc):
                call = s.value
                out.append(self.add(CallX(call.func, call.args[:-1]), vector, s))
            elif isinstance(s, Def) and s.slots is not None:
                out.append(self.backpropagator(s))
            elif bodies(s) and _has_effects(s, vector.acc):
                out += self.start(vector)  # a loop or branch adds into a vector that must exist first
                size = vector.size
                out.append(with_bodies(s, [self.effects(b, vector) for b in bodies(s)]))
                assert vector.size == size, "scopes opened inside a loop or branch close there"
            elif bodies(s):
                out.append(with_bodies(s, [self.stmts(b) for b in bodies(s)]))
            else:
                out.append(s)
        return out


def _calls_with(s: Stmt, acc: str) -> bool:
    """`bp(..., acc)`: a call of a backpropagator that adds into the accumulator."""
    return (
        isinstance(s, Do)
        and isinstance(s.value, CallX)
        and bool(s.value.args)
        and isinstance(s.value.args[-1], Name)
        and s.value.args[-1].id == acc
    )


def _has_effects(s: Stmt, acc: str) -> bool:
    """Whether a statement touches the accumulator (not counting nested backpropagators' own)."""
    if isinstance(s, (AccOne, AccPush, AccPop)) or _calls_with(s, acc):
        return True
    if isinstance(s, Def) and s.slots is not None:
        return False
    return any(_has_effects(x, acc) for body in bodies(s) for x in body)
