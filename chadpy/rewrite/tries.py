"""`try` statements spelled as code chadpy differentiates: each statement of the body becomes the call of
a function of it, attempted, and the rest of the body runs only where it completed.

    try:                              caught = None
        a = f(x)                      def line_3(x):
        b = g(a)                          a = f(x)
    except E as e:                        return (a,)
        b = h(e)                      ok_3, caught, done_3 = attempt(E, line_3, x)
                                      if ok_3:
                                          (a,) = done_3
                                          def line_4(a): ...
                                          ok_4, caught, done_4 = attempt(E, line_4, a)
                                          if ok_4:
                                              (b,) = done_4
                                      if caught is not None:
                                          e = caught
                                          b = h(e)

`attempt(E, fn, *args)` is `(True, None, fn(*args))`, or `(False, exc, None)` when `fn` raises an
exception `exc` of the classes `E` (`Apply` with `catch` in the IR). Its derivative runs fn's forward
pass inside a Python `try`, and fn's backpropagator only where fn completed: the reverse pass follows the
path the forward pass took, a body that raised part-way included (the statements it completed contribute,
then the handler's). A statement either completes or changes nothing of the function's variables, as in
Python: a tuple assignment or an update in place that raises half-way is the one difference (its first
half is lost).

An `if` in the body attempts its test, then its branches; a loop attempts its body and leaves at the first
exception (a `while` loop's test, and the sequence a `for` loop walks, are not attempted). Handlers are an
`isinstance` chain on the exception caught; `else` runs where none was. A `return` inside sets a flag and
the value, returned after the statement. `finally: F` is a handler of every exception that runs F and
raises it again, F running at the statement's end and before a `break` or `continue` leaving it.

The pass runs after `as_written` (a `raise` in the body is already its call) and `with_blocks`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import gast

from ..names import NameSupply
from ..read import scope
from ..read.source import ParsedFunction
from ..runtime.scalar import exception_classes
from .as_written import AsWritten
from .blocks import gast_name


@dataclass(frozen=True)
class Attempt:
    """What `attempt` names in the rewritten tree: `attempt(classes, fn, *args)` (module docstring)."""

    name: str

    def __repr__(self) -> str:
        return self.name


def _raise_again(exception: BaseException) -> None:
    raise exception


def tries(parsed: ParsedFunction) -> None:
    """Rewrite every `try` statement of the function (and of the functions nested in it), in place."""
    if not any(isinstance(n, gast.Try) for n in scope.outline(parsed.tree)):
        return
    names = NameSupply(scope.all_names(parsed.tree))
    attempt = Attempt(names.fresh("attempt"))
    parsed.outside[attempt.name] = attempt
    for fn in scope.functions(parsed.tree):  # the outer first; each rewrites only its own scope
        _Function(parsed, fn, names, attempt).rewrite()


@dataclass(frozen=True)
class _Returning:
    """A `try` statement with a `return` inside: the flag it sets, and the variable holding the value."""

    returning: str
    returned: str


@dataclass(frozen=True)
class _Try:
    """A `try` statement being rewritten: the variable holding the exception caught, and the one holding
    the classes it catches."""

    caught: str
    classes: str


class _Function:
    def __init__(self, parsed: ParsedFunction, node: gast.FunctionDef, names: NameSupply, attempt: Attempt):
        self.parsed, self.node, self.names, self.attempt = parsed, node, names, attempt
        self.local = scope.assigned(node.body, attributes=False, updates=False) | set(scope.parameters(node))
        self.unpacked: set[int] = set()  # the `a, b = done` this pass wrote (they cannot raise: an outer try's
        # rewrite of an inner one's statements makes them as they are)

    def rewrite(self) -> None:
        self.node.body = self.block(self.node.body)

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        """The statements with each `try` among them (or nested in their blocks) rewritten."""
        out: list[gast.stmt] = []
        for s in stmts:
            if isinstance(s, gast.Try):
                out += self.rewritten(s)
                continue
            if not isinstance(s, gast.FunctionDef):  # a nested function is rewritten on its own
                for part in ("body", "orelse"):
                    inner = getattr(s, part, None)
                    if isinstance(inner, list) and inner:
                        setattr(s, part, self.block(inner))
            out.append(s)
        return out

    def fresh(self, hint: str) -> str:
        name = self.names.fresh(hint)
        self.local.add(name)
        return name

    # ------------------------------------------------------------ one `try` statement

    def rewritten(self, node: gast.Try) -> list[gast.stmt]:
        final = node.finalbody
        body, orelse = self.block(node.body), self.block(node.orelse)
        handlers = [(h, self.block(h.body)) for h in node.handlers]
        # a `return` inside sets a flag and the value; the statement returns after its end (F run): a return
        # deep in the attempted chain would take the rest of the function into every branch it is in
        flag = None
        if self.returns([*body, *orelse, *(x for _, b in handlers for x in b)]):
            flag = _Returning(self.fresh("returning"), self.fresh("returned"))
            body, orelse = self.flagged(body, flag), self.flagged(orelse, flag)
            handlers = [(h, self.flagged(b, flag)) for h, b in handlers]
        if final:  # F before each `break` or `continue` leaving the statement (after its end: below)
            body, orelse = _before_exits(body, final), _before_exits(orelse, final)
            handlers = [(h, _before_exits(b, final)) for h, b in handlers]
        t = _Try(self.fresh("caught"), self.fresh("catches"))
        types = [h.type for h, _ in handlers]
        if final or any(c is None for c in types):  # with `finally`, every exception: F runs, then it goes on
            classes: gast.expr = gast_name("BaseException")
        elif len(types) == 1:
            classes = types[0]
        else:  # one flat tuple (Python's `except` takes no tuple inside a tuple)
            spliced = [e for t in types for e in (t.elts if isinstance(t, gast.Tuple) else [t])]
            classes = gast.Call(gast_name(self.flat_classes()), [copy.deepcopy(e) for e in spliced], [])
        out = [
            *([_assign(flag.returning, gast.Constant(False, None))] if flag else []),
            _assign(t.caught, gast.Constant(None, None)),
            _assign(t.classes, classes),
            *self.attempted(body, t),
        ]
        # with `finally`, the handlers and `else` are attempted too: what they raise is `pending` until F has run
        after = _Try(self.fresh("pending"), t.classes) if final else None
        run = (lambda stmts: self.attempted(stmts, after)) if after else (lambda stmts: stmts)  # noqa: E731
        chain: list[gast.stmt] = (
            [_assign(after.caught, gast_name(t.caught))] if (after and all(c is not None for c in types)) else []
        )  # no handler takes it: it goes on after F
        for k, (h, hbody) in reversed(list(enumerate(handlers))):
            named = [gast.Assign([h.name], gast_name(t.caught), None)] if h.name is not None else []
            if k == len(handlers) - 1 and not chain:  # the exception is one of the classes: the last handler's
                chain = named + run(hbody)
            else:
                matches = gast.Call(gast_name("isinstance"), [gast_name(t.caught), copy.deepcopy(h.type)], [])
                chain = [gast.If(matches, named + run(hbody), chain)]
        raised = _is_none(t.caught, negated=True)
        if after:
            out.append(_assign(after.caught, gast.Constant(None, None)))
        if flag and orelse:  # `else` runs where the body neither raised nor returned
            orelse = [gast.If(gast.UnaryOp(gast.Not(), gast_name(flag.returning)), orelse, [])]
        out.append(gast.If(raised, chain, run(orelse)))
        if after:
            name = self.names.fresh("raise_again")
            again = AsWritten(name, "`finally` clause", _raise_again, (after.caught,), (), raises=True)
            self.parsed.outside[again.name] = again
            pending = _is_none(after.caught, negated=True)
            reraise = gast.Return(gast.Call(gast_name(again.name), [gast_name(after.caught)], []))
            out += [*final, gast.If(pending, [reraise], [])]
        if flag:
            out.append(gast.If(gast_name(flag.returning), [gast.Return(gast_name(flag.returned))], []))
        return _located(out, node)

    def flagged(self, stmts: list[gast.stmt], flag: _Returning, loop: bool = False) -> list[gast.stmt]:
        """The statements with each `return v` (not a `raise`'s) as `returned = v; returning = True` (and a
        `break` out of a loop it is in), and what follows a statement that may have set the flag only where
        it did not."""
        out: list[gast.stmt] = []
        for k, s in enumerate(stmts):
            if isinstance(s, gast.Return) and not self.raises(s.value):
                value = s.value if s.value is not None else gast.Constant(None, None)
                sets = [_assign(flag.returned, value), _assign(flag.returning, gast.Constant(True, None))]
                out += _located(sets + ([gast.Break()] if loop else []), s)
                return out  # the rest of the block is never reached
            if isinstance(s, (gast.FunctionDef, gast.Return)) or not self.returns([s]):
                out.append(s)
                continue
            inner_loop = isinstance(s, (gast.For, gast.While))
            s.body = self.flagged(s.body, flag, loop or inner_loop)
            s.orelse = self.flagged(s.orelse, flag, loop)
            out.append(s)
            leave = [gast.If(gast_name(flag.returning), [gast.Break()], [])] if loop and inner_loop else []
            rest = self.flagged(stmts[k + 1 :], flag, loop)
            guarded = [gast.If(gast.UnaryOp(gast.Not(), gast_name(flag.returning)), rest, [])] if rest else []
            out += _located(leave + guarded, s)
            return out
        return out

    # ------------------------------------------------------------ the body, statement by statement

    def attempted(self, stmts: list[gast.stmt], t: _Try) -> list[gast.stmt]:
        """The statements, each attempted, the rest of them only where it completed."""
        if not stmts:
            return []
        s, rest = stmts[0], stmts[1:]
        if (
            isinstance(s, (gast.Pass, gast.Break, gast.Continue, gast.FunctionDef, gast.Global, gast.Nonlocal))
            or isinstance(s, gast.Assign)
            and isinstance(s.value, (gast.Constant, gast.Name))
            and all(isinstance(n, gast.Name) for n in s.targets)
            or id(s) in self.unpacked
        ):
            # they cannot raise (`b = a` of a variable not assigned yet would, in Python; here, as in an attempt of
            # it, b is unassigned too and raises where it is used)
            return [s, *self.attempted(rest, t)]
        if isinstance(s, gast.If):
            branch = lambda test: [  # noqa: E731
                gast.If(test, self.attempted(s.body, t), self.attempted(s.orelse, t)),
                *self.after(rest, t),
            ]
            if isinstance(s.test, (gast.Name, gast.Constant)):
                return _located(branch(s.test), s)
            cond = self.fresh("cond")
            return self.head(_located([_assign(cond, s.test)], s)[0], t, lambda: _located(branch(gast_name(cond)), s))
        if isinstance(s, (gast.For, gast.While)):
            raised = _is_none(t.caught, negated=True)
            s.body = [*self.attempted(s.body, t), _located([gast.If(raised, [gast.Break()], [])], s)[0]]
            s.orelse = self.attempted(s.orelse, t)
            return [s, *self.after(rest, t)]
        if isinstance(s, gast.Return):  # a `raise` (a `return` is a flag by now, `flagged`): it never completes
            return self.head(gast.copy_location(gast.Expr(s.value), s), t, lambda: [])
        hoisted = self.split_update(s)
        if hoisted is not None:  # an update in place of the function's own container: its values attempted
            return self.chain(hoisted, t, lambda: [s, *self.attempted(rest, t)])
        return self.head(s, t, lambda: self.attempted(rest, t))

    def chain(self, heads: list[gast.stmt], t: _Try, then) -> list[gast.stmt]:
        """Each of `heads` attempted in turn, `then()` where all completed."""
        if not heads:
            return then()
        return self.head(heads[0], t, lambda: self.chain(heads[1:], t, then))

    def split_update(self, s: gast.stmt) -> list[gast.stmt] | None:
        """Where `s` updates one of the function's own lists, dicts, arrays or objects in place (`xs.append(v)`,
        `x[k] = v`, `x[t][k] = v`, `x[k] += v`, `x += v`, `ob.a = v`): `value = v` for each value it computes
        first (to be attempted), s changed to read them; the update itself is made as it is, not attempted (a
        function of it would update its argument, the caller's object). None for any other statement."""
        slots: list[tuple[object, object]] = []  # (holder, field or index) of each expression to compute first
        target = s.targets[0] if isinstance(s, gast.Assign) and len(s.targets) == 1 else getattr(s, "target", None)
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and scope.updated(s.value) in self.local:
            slots = [(s.value.args, k) for k in range(len(s.value.args))]
        elif isinstance(s, gast.AugAssign) and isinstance(target, gast.Name) and target.id in self.local:
            slots = [(s, "value")]
        elif (
            isinstance(s, (gast.Assign, gast.AugAssign))
            and isinstance(target, gast.Attribute)
            and isinstance(target.value, gast.Name)
            and target.value.id in self.local
        ):  # `ob.a = v`, `ob.a *= v` on the function's own object
            slots = [(s, "value")]
        elif isinstance(s, (gast.Assign, gast.AugAssign)) and isinstance(target, gast.Subscript):
            path = scope.element_path(target)  # `x[k]`, `x[t][k]`
            if not (isinstance(path[0].value, gast.Name) and path[0].value.id in self.local):
                return None
            slots = [(s, "value"), *((p, "slice") for p in path)]
        else:
            return None
        hoisted = []
        for holder, where in slots:
            value = holder[where] if isinstance(holder, list) else getattr(holder, where)
            if isinstance(value, (gast.Constant, gast.Name)) or any(
                isinstance(n, gast.Slice) for n in scope.walk(value)
            ):
                continue  # nothing to compute (a slice's bounds are computed with the update)
            name = self.fresh("value")
            hoisted.append(_located([_assign(name, value)], s)[0])
            read = gast.copy_location(gast_name(name), value)
            if isinstance(holder, list):
                holder[where] = read
            else:
                setattr(holder, where, read)
        return hoisted

    def after(self, rest: list[gast.stmt], t: _Try) -> list[gast.stmt]:
        """The statements after a block that may have caught an exception: only where it did not."""
        done = self.attempted(rest, t)
        if not done:
            return []
        return _located([gast.If(_is_none(t.caught), done, [])], rest[0])

    def head(self, s: gast.stmt, t: _Try, then) -> list[gast.stmt]:
        """`def line_N(reads): s; return (assigned,)`, its attempt, and `then()` where it completed."""
        line = self.parsed.loc(s).lineno
        outputs = sorted(_assigned(s) & self.local)
        inputs = sorted(scope.uses(s) & self.local - self.written_outputs(s))
        fn = self.fresh(f"line_{line}")  # a local: an outer `try` attempting this code passes it in
        params = gast.arguments([gast_name(n, gast.Param) for n in inputs], [], None, [], [], None, [])
        result = gast.Return(gast.Tuple([gast_name(n) for n in outputs], gast.Load()))
        define = gast.FunctionDef(fn, params, [s, result], [], None, None)
        ok, done = self.fresh(f"ok_{line}"), self.fresh(f"done_{line}")
        target = gast.Tuple([gast_name(n, gast.Store) for n in (ok, t.caught, done)], gast.Store())
        args = [gast_name(t.classes), gast_name(fn), *map(gast_name, inputs)]
        call = gast.Assign([target], gast.Call(gast_name(self.attempt.name), args, []), None)
        completed = []
        if outputs:
            values = gast.Tuple([gast_name(n, gast.Store) for n in outputs], gast.Store())
            completed.append(gast.Assign([values], gast_name(done), None))
            self.unpacked.add(id(completed[-1]))
        completed = _located(completed, s) + then()
        return _located([define, call], s) + (_located([gast.If(gast_name(ok), completed, [])], s) if completed else [])

    def flat_classes(self) -> str:
        """The name `runtime.scalar.exception_classes` has in the rewritten tree."""
        name = self.names.fresh("exception_classes")
        self.parsed.outside[name] = exception_classes
        return name

    def written_outputs(self, s: gast.stmt) -> set[str]:
        """What a statement run as written assigns (a `class` statement its name): its call is given them only to
        learn which are not assigned yet, which it finds out itself inside the attempted function."""
        value = getattr(s, "value", None)
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Name):
            written = self.parsed.outside.get(value.func.id)
            if isinstance(written, AsWritten):
                return set(written.outputs)
        return set()

    def returns(self, stmts: list[gast.stmt]) -> bool:
        """Whether a `return` in the statements (not a nested function's, not a `raise`'s call) leaves it."""
        return any(isinstance(n, gast.Return) and not self.raises(n.value) for n in scope.scope_walk(stmts))

    def raises(self, value: gast.expr | None) -> bool:
        """Whether a `return`'s value is the call of a `raise` run as written."""
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Name):
            written = self.parsed.outside.get(value.func.id)
            return isinstance(written, AsWritten) and written.raises
        return False


def _assigned(s: gast.stmt) -> set[str]:
    """The variables a statement changes: those it assigns, and those it updates in place (`x[i] = v`,
    `xs.append(v)`)."""
    out = scope.assigned([s], attributes=False)
    for node in scope.scope_walk([s], comprehensions=False):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store):
            base = node.value
            while isinstance(base, gast.Subscript):
                base = base.value
            if isinstance(base, gast.Name):
                out.add(base.id)
    return out


def _before_exits(stmts: list[gast.stmt], final: list[gast.stmt], loop: bool = False) -> list[gast.stmt]:
    """The statements with a copy of `final` before each `break` or `continue` not inside a loop of their own
    (a `return` is a flag by now, and F runs after the statement; a `raise` goes the exception's way)."""
    out: list[gast.stmt] = []
    for s in stmts:
        if isinstance(s, (gast.Break, gast.Continue)) and not loop:
            out += [*_copy(final), s]
            continue
        if not isinstance(s, gast.FunctionDef):
            inside = loop or isinstance(s, (gast.For, gast.While))
            for part in ("body", "orelse", "finalbody"):
                inner = getattr(s, part, None)
                if isinstance(inner, list) and inner:
                    setattr(s, part, _before_exits(inner, final, inside and part == "body" or loop))
            for h in getattr(s, "handlers", []):
                h.body = _before_exits(h.body, final, loop)
        out.append(s)
    return out


def _copy(stmts: list[gast.stmt]) -> list[gast.stmt]:
    return [copy.deepcopy(s) for s in stmts]


def _located(stmts: list[gast.stmt], origin: gast.AST) -> list[gast.stmt]:
    """The statements, and every node in them without a place, at `origin`'s line."""
    for s in stmts:
        for n in scope.walk(s):
            if isinstance(n, (gast.expr, gast.stmt)) and getattr(n, "lineno", None) is None:
                gast.copy_location(n, origin)
    return stmts


def _assign(name: str, value: gast.expr) -> gast.Assign:
    return gast.Assign([gast_name(name, gast.Store)], value, None)


def _is_none(name: str, negated: bool = False) -> gast.Compare:
    """`name is None` (`is not`)."""
    return gast.Compare(gast_name(name), [gast.IsNot() if negated else gast.Is()], [gast.Constant(None, None)])
