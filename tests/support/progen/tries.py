"""`try`/`except`/`else`/`finally` on the path of the derivative (issue 37, `x_try`, `t_*`).

A try's body is active code in which something may raise part-way: `if <cond>: raise ArithmeticError(...)`
(`raise_point`, more of them anywhere in the body, loops included: `s_raise_if`), a division by an int that may
be 0 (`float(e) / (k - c)`), `math.sqrt`/`acos`/`log` outside their domain, a key the dict does not have.
Its handlers read what every place that may raise has completed (`Try.raised`: the environments there, met);
the variables after the try are those every way through it that falls through assigns. Conditions are the
generator's usual ones (`cond`), so at the sample point no condition sits on its boundary, and where the
body raises is the same for every step of the finite differences.

The body may end in `return`, the handlers in `continue`/`break` (in a loop), `return` or a bare `raise` to an
enclosing try that takes it; `else:` and `finally:` (which runs on every way out, `return` included) are
sometimes there, and `try`/`finally` without a handler."""

from __future__ import annotations

import math

from .base import Base
from .core import DICT, EXCEPTIONS, FLOAT, INT, KEYS, LIMIT, LIST, Ctx, Env, Try, Ty, _replace, catches

RAISED = ("ValueError", "ArithmeticError", "RuntimeError")  # what `raise` raises on purpose


def join_types(tys: list[Ty]) -> Ty | None:
    """The type of a variable that may hold a value of any of these types (None if they do not agree)."""
    t = tys[0]
    if any(x.kind != t.kind or x.shape != t.shape or x.cls != t.cls for x in tys):
        return None
    if t.kind == "tuple" and any(x.length != t.length for x in tys):
        return None
    keys = t.keys
    if t.kind == DICT:
        keys = tuple(k for k in t.keys if all(k in x.keys for x in tys))
        if not keys:
            return None
    elif t.kind == "str":
        keys = tuple(dict.fromkeys(k for x in tys for k in x.keys))
    return _replace(
        t,
        bound=max(x.bound for x in tys),
        length=min(x.length for x in tys),
        maxlen=max(x.maxlen for x in tys),
        lo=min(x.lo for x in tys),
        fresh=all(x.fresh for x in tys),
        keys=keys,
    )


def meet(entry: Env, envs: list[Env]) -> Env:
    """After several ways that all start from entry: the variables every one of envs has, of joined types
    (entry's own first, then the new ones in the order of the first env)."""
    out = entry.copy()
    for name in entry.order:
        t = join_types([e.vars.get(name, entry.vars[name]) for e in envs])
        out.vars[name] = t or entry.vars[name]
    for name in envs[0].order:
        if name not in entry.vars and all(name in e.vars for e in envs):
            t = join_types([e.vars[name] for e in envs])
            if t is not None:
                out.add(name, t)
                if any(name in e.locked for e in envs):
                    out.locked.add(name)
    for e in envs:
        out.frozen |= e.frozen
    return out


class Tries(Base):
    """`try`/`except`/`else`/`finally` on the path of the derivative (issue 37, `x_try`)."""

    def s_raise_if(self, env: Env, ctx: Ctx) -> None:
        """In a try's body: one more place that may raise."""
        self.raise_point(env, ctx)
        self.feature("raise_if")

    def raise_point(self, env: Env, ctx: Ctx, kind: str | None = None) -> None:
        """A statement that may raise an exception the innermost try takes; where it is recorded."""
        info = ctx.tries
        assert info is not None
        forms: dict[str, float] = {}
        if any(e in info.caught for e in RAISED):
            forms["t_raise"] = 2.0
        if "ZeroDivisionError" in info.caught:
            forms["t_zerodiv"] = 1.0
        if "ValueError" in info.caught:
            forms["t_library"] = 1.0
        if "KeyError" in info.caught and env.names(DICT):
            forms["t_key"] = 0.0 if kind is None else 1.0  # it always raises: only where asked for
        if kind not in forms or not forms[kind]:
            kind = self.choose(forms)
        info.raised.append(env.copy())
        name = self.fresh("s")
        if kind == "t_raise":
            exc = self.rng.choice([e for e in RAISED if e in info.caught])
            self.emit(ctx, f"if {self.cond(env)}:")
            r = self.rng.random()  # the class, a message, or an active value as its argument
            spelled = exc if r < 0.3 else f"{exc}({self.message(env) if r < 0.8 else self.fexpr(env, 2)[0]})"
            self.emit(ctx.inner(), f"raise {spelled}")
            self.feature("try_raise")
            return
        if kind == "t_zerodiv":
            e = self.squash(self.fexpr(env, 1), LIMIT)
            self.store_float(env, ctx, name, (f"float({e[0]}) / {self.maybe_zero(env)}", e[1]))
            self.feature("try_zerodiv")
            return
        if kind == "t_library":
            a = self.fexpr(env, 1)
            fn = self.rng.choice(["sqrt", "sqrt", "acos", "log"])
            if fn == "sqrt":
                code, b = f"math.sqrt({a[0]})", math.sqrt(a[1])
            elif fn == "acos":
                code, b = f"math.acos({a[0]})", math.pi
            else:
                code, b = f"math.atan(math.log({a[0]}))", math.pi / 2
            self.store_float(env, ctx, name, (code, b))
            self.feature("try_library")
            return
        d = self.pick(env.names(DICT))
        missing = [k for k in KEYS if k not in env.vars[d].keys] or ["zz"]
        e = self.squash(self.fexpr(env, 1), 2.0)
        self.store_float(env, ctx, name, (f"{d}[{self.rng.choice(missing)!r}] * {e[0]}", env.vars[d].bound * e[1]))
        self.feature("try_key")

    def maybe_zero(self, env: Env) -> str:
        """An int (or a float of one) that may be 0 at the sample point, else at least 1 in size: k - c for a
        loop index or an int argument k, len(xs) - c, math.floor(abs(v))."""
        ints = env.names(INT, lambda t: t.bound - t.lo <= 8)
        lists = env.names(LIST)
        r = self.rng.random()
        if ints and r < 0.7:
            k = self.pick(ints)
            t = env.vars[k]
            c = self.rng.randint(t.lo, t.bound)
            d = f"({k} - {c})" if c > 0 else f"({k} + {-c})" if c < 0 else k
        elif lists and r < 0.85:
            xs = self.pick(lists)
            t = env.vars[xs]
            d = f"(len({xs}) - {self.rng.randint(t.length, t.maxlen)})"
        elif env.names(FLOAT):
            d = f"math.floor(abs({self.pick(env.names(FLOAT))}))"
        else:
            d = "0"
        return f"float({d})" if self.rng.random() < 0.3 else d

    def handlers(self, raised: str) -> list[tuple[tuple[str, ...], bool]]:
        """The except clauses: (the classes each takes, whether it names the exception `as err`)."""
        r = self.rng.random()
        if r < 0.55:
            main: tuple[str, ...] = (raised,)
        elif r < 0.7:
            main = ("Exception",)
        elif r < 0.85 or raised != "ZeroDivisionError":
            main = (raised, self.rng.choice([e for e in EXCEPTIONS if e != raised]))
        else:
            main = ("ArithmeticError",)
        out = [(main, self.rng.random() < 0.2)]
        if self.rng.random() < self.w["t_two_handlers"]:  # another class, before or after (after Exception: dead)
            other = self.rng.choice([e for e in EXCEPTIONS if not any(catches(h, e) for h in main)] or ["KeyError"])
            out.insert(self.rng.randrange(2), ((other,), self.rng.random() < 0.2))
            self.feature("try_two_handlers")
        return out

    def x_try(self, env: Env, ctx: Ctx) -> bool:
        """try: <body that may raise part-way> except ...: <handler> [else: ...] [finally: ...]"""
        w = self.w
        forms = {k: w[k] for k in ("t_raise", "t_zerodiv", "t_library", "t_none")}
        if env.names(DICT):
            forms["t_key"] = w["t_key"]
        if not any(v > 0 for v in forms.values()):
            return False
        form = self.choose(forms)
        raised = {"t_zerodiv": "ZeroDivisionError", "t_library": "ValueError", "t_key": "KeyError"}.get(
            form, self.rng.choice(RAISED)
        )
        clauses = self.handlers(raised)
        if form == "t_none" and self.rng.random() < 0.4:
            clauses = []  # try/finally
            self.feature("try_finally_only")
        caught = tuple(e for e in EXCEPTIONS if any(catches(h, e) for hs, _ in clauses for h in hs))
        info = Try(caught)
        self.feature("try")
        if ctx.loop is not None:
            self.feature("try_in_loop")
        if ctx.tries is not None:
            self.feature("try_nested")
        # the body
        self.emit(ctx, "try:")
        bctx = ctx.inner(tries=info)
        body = env.copy()
        start = len(self.lines)
        ended = False
        pre = self.rng.choice([0, 1, 1, 2])
        if pre:
            self.budget = pre
            ended = self.block(body, bctx, pre)
        if not ended and form != "t_none":
            self.raise_point(body, bctx, form)
        if not ended and self.rng.random() < 0.6:
            self.budget = self.rng.choice([1, 1, 2])
            ended = self.block(body, bctx, self.budget)
        joined = self.fresh("s")
        if not ended and self.rng.random() < w["t_return"]:
            self.emit(bctx, f"return {self.returned(body, bctx)}")
            self.feature("try_return")
            ended = True
        if not ended:
            self.join_float(body, bctx, joined, [])
        if len(self.lines) == start:
            self.emit(bctx, "pass")
        # the handlers: what every place that may raise has completed
        completed = meet(env, info.raised) if info.raised else env.copy()
        new = [n for n in completed.names(FLOAT) if n not in env.vars]
        falls: list[Env] = []
        for classes, named in clauses:
            spelled = classes[0] if len(classes) == 1 else f"({', '.join(classes)})"
            self.emit(ctx, f"except {spelled}" + (" as err:" if named else ":"))
            hctx = ctx.inner()  # an exception raised here goes to the enclosing try
            henv = completed.copy()
            start = len(self.lines)
            if named:
                self.emit(hctx, self.rng.choice(["assert isinstance(err, Exception)", "message = str(err)"]))
                self.feature("try_as")
            self.reraise(henv, hctx, ctx, classes, caught)
            h_ended = False
            if self.rng.random() < 0.4:
                self.budget = self.rng.choice([1, 1, 2])
                h_ended = self.block(henv, hctx, self.budget)
            if not h_ended:
                r = self.rng.random()
                if ctx.loop is not None and r < w["t_jump"]:
                    jump = "continue" if self.rng.random() < 0.75 else "break"
                    self.emit(hctx, jump)
                    ctx.loop.jumped = True
                    self.feature(f"try_{jump}")
                    h_ended = True
                elif r > 0.95:
                    self.emit(hctx, f"return {self.returned(henv, hctx)}")
                    self.feature("try_return_in_handler")
                    h_ended = True
                elif r > 0.9:
                    if len(self.lines) == start:
                        self.emit(hctx, "pass")
                else:
                    self.join_float(henv, hctx, joined, new)
            if len(self.lines) == start:
                self.emit(hctx, "pass")
            if not h_ended:
                falls.append(henv)
        if not ended and clauses and self.rng.random() < w["t_else"]:
            self.emit(ctx, "else:")
            self.budget = self.rng.choice([1, 1, 2])
            ended = self.block(body, ctx.inner(), self.budget)
            self.feature("try_else")
        if not ended:
            falls.insert(0, body)
        if not clauses or self.rng.random() < w["t_finally"]:
            self.finally_clause(env, ctx, [body, completed, *info.raised, *falls], falls)
        if not falls:
            return True
        joined_env = meet(env, falls)
        env.vars, env.order, env.frozen = joined_env.vars, joined_env.order, joined_env.frozen
        env.assignable, env.locked = joined_env.assignable, joined_env.locked
        return False

    def join_float(self, env: Env, ctx: Ctx, name: str, prefer: list[str]) -> None:
        """name = e, the try's joined variable (e reads one of prefer, the variables the body completed, if any)."""
        e = self.squash(self.fexpr(env, 0), LIMIT)
        if prefer and self.rng.random() < 0.7:
            v = self.rng.choice(prefer)
            self.use(v)
            e = self.squash((f"{e[0]} + {v} * {self.const()[0]}", e[1] + env.vars[v].bound * 1.5), LIMIT)
        self.store_float(env, ctx, name, e)

    def reraise(self, env: Env, ctx: Ctx, outer_ctx: Ctx, classes: tuple[str, ...], caught: tuple[str, ...]) -> bool:
        """Maybe `if <cond>: raise` in a handler: what it handles, to an enclosing try that takes all of it."""
        outer = outer_ctx.tries
        if outer is None or self.rng.random() >= 0.5:
            return False
        handled = [e for e in caught if any(catches(h, e) for h in classes)]
        if not all(e in outer.caught for e in handled):
            return False
        outer.raised.append(env.copy())
        self.emit(ctx, f"if {self.cond(env)}:")
        self.emit(ctx.inner(), "raise")
        self.feature("try_reraise")
        return True

    def finally_clause(self, entry: Env, ctx: Ctx, seen: list[Env], falls: list[Env]) -> None:
        """finally: one statement that runs on every way out (an inactive one, a new variable or an update). It
        reads only what was assigned before the try (a way out may leave the body anywhere), bounded as seen."""
        self.emit(ctx, "finally:")
        fctx = _replace(ctx.inner(), tries=None)
        fenv = entry.copy()
        for name, t in entry.vars.items():
            fenv.vars[name] = join_types([t] + [e.vars[name] for e in seen if name in e.vars]) or t
        for e in seen:
            fenv.frozen |= e.frozen
        self.feature("try_finally")
        opts = {"inactive": 1.0, "new": 1.0}
        updatable = fenv.reassignable(FLOAT)
        if updatable:
            opts["update"] = 1.0
        kind = self.choose(opts)
        if kind == "inactive":
            inactive = ["x_log", "x_state"]
            if not ctx.in_def and not self.in_def and not self.in_class:  # f's own scope
                inactive.append("x_global")
            getattr(self, self.rng.choice(inactive))(fenv, fctx)
            return
        if kind == "new":
            name = self.fresh("s")
            self.store_float(fenv, fctx, name, self.fexpr(fenv, 1))
            for e in falls:
                e.add(name, fenv.vars[name])
            return
        name = self.pick(updatable)
        e = self.squash(self.fexpr(fenv, 1), 2.0)
        self.emit(fctx, f"{name} = {name} * 0.5 + {e[0]}")
        for env in falls:
            if name in env.vars:
                env.vars[name] = Ty(FLOAT, env.vars[name].bound * 0.5 + e[1])
