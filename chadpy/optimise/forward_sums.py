"""Forward accumulation: a loop's reverse pass folded into its forward pass, where that is exact.

In `for i in range(n): s = s + f(x, i)` every iteration sees the same cotangent of `s` (the
final one): the reverse pass carries it unchanged. Each iteration's backward code is linear in
that one number, so what it adds to `dx` is `ds * g_i`, with `g_i` the same code run with the
cotangent 1.0. The forward pass can add up the `g_i` as it goes (while the iteration's values are
at hand), and the reverse pass multiplies the sum by `ds` once. The loop keeps no tape:

    forward                                       reverse
    for i in indices:                             ds_1_carry = d
        mul = x * i                               dx = ds_1_carry * dx_per_ds_1
        sin = math.sin(mul)
        ...
        dx_per_ds_1 += sin
        dx_per_ds_1 += x * math.cos(mul) * i

A replay is fused when (else it keeps its tape):
- it carries exactly one cotangent, a float, and leaves it unchanged (`v = C` first, `C = v`
  last, nothing else assigns either);
- every other name it assigns that is bound outside it is a cotangent it only adds to (`dx += e`,
  `dx = add(dx, e)`, `facts.adds_into`), and it reads no such name otherwise;
- it calls no backpropagator and runs nothing for its effect (no rewind of in-place writes): it
  is a function of the record's values and the carried cotangent alone, linear in the latter;
- inside another loop's reverse pass, the sums are bound where the outer loop records (the inner
  tape started in the same block as the outer record), so the outer tape can carry them.

Each iteration's backward work moves to the forward pass unchanged, and the reverse pass costs the
size of the sums: the cost bound holds. Innermost loops go first, so a nest of sums fuses whole.
"""

from __future__ import annotations

from collections import Counter

from ..names import NameSupply
from ..rules.registry import ZERO
from ..runtime import array_cotangents
from ..runtime.cotangents import scaled
from ..runtime.facts import ADDS_INTO
from ..target.expressions import BinOp, CallX, Expr, Lit, Name, Obj, UnaryOp, is_zero
from ..target.statements import (
    Accum,
    Assign,
    Def,
    If,
    Record,
    Replay,
    Stmt,
    count_statements,
    expr_names,
    iter_exprs,
    local_names,
    map_exprs,
    map_statement_exprs,
    names_in,
    rename,
    walk,
)


def fuse(fn: Def) -> Def:
    """fn with each replay that carries one unchanged float cotangent accumulated forward."""
    replays = [s for s in walk([fn]) if isinstance(s, Replay)]
    if not replays:
        return fn
    names = NameSupply(local_names([fn]) | expr_names([fn]))
    for replay in reversed(replays):  # innermost first
        _fuse(fn, replay, names)
    return fn


def _fuse(fn: Def, replay: Replay, names: NameSupply) -> None:
    path = _path(fn.body, replay)[:-1]
    bp = next((s for s in reversed(path) if isinstance(s, Def)), None)
    if bp is None or len(replay.floats) != 1:
        return
    outer_replay = next((s for s in reversed(path) if isinstance(s, Replay)), None)
    if outer_replay is not None and path.index(outer_replay) < path.index(bp):
        outer_replay = None  # a replay of an enclosing function's loop: not this backpropagator's
    carry = replay.floats[0]
    unit = _Unit(carry, set(bp.params) | _bound_outside(bp.body, replay))
    body = unit.body(replay.body, {carry}, set())
    if body is None or carry not in unit.same or not unit.sums:
        return
    start = _place(fn.body, lambda s: isinstance(s, Assign) and s.targets == [replay.tape])
    record = _place(fn.body, lambda s: isinstance(s, Record) and s.tape == replay.tape)
    if start is None or record is None:
        return
    if outer_replay is not None:
        outer_record = _place(fn.body, lambda s: isinstance(s, Record) and s.tape == outer_replay.tape)
        if outer_record is None or outer_record[0] is not start[0] or outer_record[1] < start[1]:
            return
    base = carry.removesuffix("_carry")
    per = {n: names.fresh(f"{n}_per_{base}") for n in unit.sums}
    real = {n: all(isinstance(s, Accum) and s.real for s in walk(replay.body) if _added(s) == n) for n in per}

    # forward: the sums start where the tape did, and each iteration adds its part per unit of the carry
    block, at = start
    loc = block[at].loc
    starts: list[Stmt] = [Assign([per[n]], Lit(0.0) if real[n] else ZERO, loc=loc) for n in per]
    starts[0].comment = f"the contributions per unit of {base}'s cotangent, the same in every iteration"
    block[at : at + 1] = starts
    body = _without_copies(_live(rename(body, per), set(per.values())))
    if body:
        body[0].comment = body[0].comment or f"the reverse pass, at {base}'s cotangent 1.0"
    block, at = record
    block[at : at + 1] = body

    # reverse: the sums times the carried cotangent, once
    block, at = _place(fn.body, lambda s: s is replay)
    why = "the loop's contributions, added up forward"
    block[at : at + 1] = [Accum(n, _times(Name(per[n]), Name(carry), real[n]), real[n], comment=why) for n in per]
    if outer_replay is not None:  # the outer loop's record carries the sums to its reverse pass
        outer_replay.names += list(per.values())
        for s in walk(fn.body):
            if isinstance(s, Record) and s.tape == outer_replay.tape:
                s.names += list(per.values())


def _times(total: Expr, c: Expr, real: bool) -> Expr:
    """c * total: for a float, the product; else a new cotangent (`cotangents.scaled`)."""
    return BinOp("*", c, total) if real else CallX(Obj(scaled, "scaled"), [total, c])


class _Unit:
    """A replay's body run at the carried cotangent 1.0, if it can be.

    `same` is the set of names that hold the carried cotangent itself at the current point (copies
    of it, a zero it was added to, through both branches of an `if`): their reads become 1.0.
    `zeros` the names holding a zero. `outside` the names bound in the backpropagator outside the
    body: the body may assign the carry only the carry again, and other outside names only add to
    them (the `sums`)."""

    def __init__(self, carry: str, outside: set[str]):
        self.carry, self.outside = carry, outside
        self.same: set[str] = set()
        self.zeros: set[str] = set()
        self.sums: list[str] = []

    def body(self, stmts: list[Stmt], same: set[str], zeros: set[str]) -> list[Stmt] | None:
        """stmts with reads of the carried cotangent as 1.0 (self.same, self.zeros: after them); None if
        they do what cannot be moved."""
        self.same, self.zeros = same, zeros
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, If):
                if names_in([s.test]) & self.outside:
                    return None
                same, zeros = self.same, self.zeros
                then = self.body(s.body, set(same), set(zeros))
                after = self.same, self.zeros
                orelse = self.body(s.orelse, set(same), set(zeros))
                if then is None or orelse is None:
                    return None
                self.same, self.zeros = after[0] & self.same, after[1] & self.zeros  # on both paths
                out.append(If(s.test, then, orelse, comment="the branch taken", loc=s.loc))
                continue
            if not self.allowed(s):
                return None
            if isinstance(s, Replay):  # an inner loop kept whole: what it assigns varies per iteration
                if self.carry in expr_names([s]):
                    return None
                bound = {n for t in walk([s]) for n in t.binds()}
                self.same -= bound
                self.zeros -= bound
                out.append(s)
                continue
            if self.adds_zero(s):
                continue
            copies = isinstance(s.value, Name) and s.value.id in self.same
            t = s.map(lambda n: n, self.one, lambda b: b)
            name = s.targets[0] if isinstance(s, Assign) else s.name
            if isinstance(s, Accum):
                copies = copies and name in self.zeros
            self.same.discard(name)
            self.zeros.discard(name)
            if copies:
                self.same.add(name)
            elif isinstance(s, Assign) and (is_zero(s.value) or isinstance(s.value, Name) and s.value.id in self.zeros):
                self.zeros.add(name)
            if name != self.carry:
                out.append(t)
        return out

    def allowed(self, s: Stmt) -> bool:
        """Whether s (and what it holds) only computes cotangents from primal values and the
        carried cotangent, and adds into outside names: no call of a backpropagator, no effect."""
        for t in walk([s]):
            if not isinstance(t, (Assign, Accum, If, Replay)) or isinstance(t, Assign) and len(t.targets) != 1:
                return False
            if any(isinstance(e, CallX) and not isinstance(e.func, Obj) for e in iter_exprs(t.exprs())):
                return False  # a backpropagator's call (or a method's)
            added = _added(t)
            if added == self.carry:
                return False
            bound = set(t.binds()) & self.outside
            reads = (names_in(t.exprs()) | set(t.reads())) - {added}
            if t is s and not isinstance(t, Replay):
                if bound == {self.carry} and isinstance(t, Assign):
                    bound = set()  # checked at the end: the carry must hold itself again
                reads -= self.same
            if bound and bound != {added} or reads & self.outside:
                return False
            if added in self.outside and added not in self.sums:
                self.sums.append(added)
        return True

    def adds_zero(self, s: Stmt) -> bool:
        """s adds a zero into a name (the cotangent of a variable no derivative reached)."""
        if isinstance(s, Accum):
            value = s.value
        elif _added(s) is not None and s.value.func.obj is array_cotangents.add_index:
            value = s.value.args[1]
        else:
            return False
        return is_zero(value) or isinstance(value, Name) and value.id in self.zeros

    def one(self, e: Expr) -> Expr:
        """e with the names in `same` read as 1.0, and `1.0 * x` as x."""

        def read(x: Expr) -> Expr:
            if isinstance(x, Name) and x.id in self.same:
                return Lit(1.0)
            if isinstance(x, BinOp) and x.op == "*":
                if _is_one(x.left):
                    return x.right
                if _is_one(x.right):
                    return x.left
            if isinstance(x, UnaryOp) and x.op == "-" and _is_one(x.operand):
                return Lit(-1.0)
            if isinstance(x, CallX) and isinstance(x.func, Obj) and x.func.obj is scaled and _is_one(x.args[1]):
                return x.args[0]  # an inner loop's sums, read once here
            return x

        return map_exprs(e, read)


def _live(body: list[Stmt], kept: set[str]) -> list[Stmt]:
    """body without what nothing reads: the copies of the carried cotangent that only fed the carry."""
    while True:
        reads = set(kept)
        for s in walk(body):
            reads |= (names_in(s.exprs()) | set(s.reads())) - {_added(s)}
        out = _without_unread(body, reads)
        if count_statements(out) == count_statements(body):
            return out
        body = out


def _without_unread(body: list[Stmt], reads: set[str]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, (Assign, Accum)) and not set(s.binds()) & reads:
            continue
        if isinstance(s, If):
            s = If(
                s.test, _without_unread(s.body, reads), _without_unread(s.orelse, reads), comment=s.comment, loc=s.loc
            )
            if not s.body and not s.orelse:
                continue
        out.append(s)
    return out


def _added(s: Stmt) -> str | None:
    """The name s adds into (`dx += e`, `dx = add(dx, e)`, `dx = add_index(dx, ...)`), if that is all it does."""
    if isinstance(s, Accum) and s.name not in expr_names(s.value):
        return s.name
    if isinstance(s, Assign) and len(s.targets) == 1 and isinstance(s.value, CallX):
        call, n = s.value, s.targets[0]
        first = call.args[0] if call.args else None
        if (
            isinstance(call.func, Obj)
            and any(call.func.obj is f for f in ADDS_INTO)
            and isinstance(first, Name)
            and first.id == n
            and n not in names_in([*call.args[1:], *call.keywords.values()])
        ):
            return n
    return None


def _without_copies(body: list[Stmt]) -> list[Stmt]:
    """`v = u` or `v = 1.0` (what a copy of the carried cotangent became) read as u or 1.0."""
    bound = Counter(n for s in walk(body) for n in s.binds())
    copies: dict[str, Expr] = {}

    def read(e: Expr) -> Expr:
        return copies.get(e.id, e) if isinstance(e, Name) else e

    for s in body:  # v and u each bound at most once: v means u wherever it is read
        if isinstance(s, Assign) and len(s.targets) == 1 and bound[s.targets[0]] == 1:
            if isinstance(s.value, Lit) or isinstance(s.value, Name) and bound[s.value.id] <= 1:
                copies[s.targets[0]] = read(s.value)  # a copy of a copy reads the first one
    if not copies:
        return body

    copied = [s for s in body if isinstance(s, Assign) and len(s.targets) == 1 and s.targets[0] in copies]
    return map_statement_exprs([s for s in body if s not in copied], lambda e: map_exprs(e, read))


def _is_one(e: Expr) -> bool:
    return isinstance(e, Lit) and type(e.value) is float and e.value == 1.0


def _path(stmts: list[Stmt], target: Stmt) -> list[Stmt]:
    """The statements from the outermost one enclosing target to target itself."""
    for s in stmts:
        if s is target:
            return [s]
        for body in s.bodies():
            inner = _path(body, target)
            if inner:
                return [s, *inner]
    return []


def _place(stmts: list[Stmt], pred) -> tuple[list[Stmt], int] | None:
    """The statement list holding the first statement pred accepts, and its position there."""
    for i, s in enumerate(stmts):
        if pred(s):
            return stmts, i
        for body in s.bodies():
            found = _place(body, pred)
            if found is not None:
                return found
    return None


def _bound_outside(stmts: list[Stmt], skip: Stmt) -> set[str]:
    """Names these statements bind, except inside `skip` (and a replay's primal values)."""
    out: set[str] = set()
    for s in stmts:
        if s is skip:
            continue
        if not isinstance(s, Replay):
            out.update(s.binds())
        for body in s.bodies():
            out |= _bound_outside(body, skip)
    return out
