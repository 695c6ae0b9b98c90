"""Control flow: branches and their joins, loops and what they carry, `break`, `continue`, early `return`."""

from __future__ import annotations

from .base import Base
from .core import (
    ARR,
    ATTR,
    CTOR_IN,
    DICT,
    FLOAT,
    FN_OUT,
    INT,
    LIMIT,
    LIST,
    REC,
    STR,
    TUPLE,
    Ctx,
    Env,
    Loop,
    Ty,
    _replace,
)


class Control(Base):
    """Control flow: branches and their joins, loops and what they carry, `break`, `continue`, early `return`."""

    def cond(self, env: Env) -> str:
        opts = {"cmp": 4.0, "chain": 0.7, "not": 0.5, "and": 1.0, "or": 0.7}
        ints = env.names(INT)
        if ints:
            opts["int"] = 1.0
        if env.names(LIST):
            opts["len"] = 0.4
        if env.names(ARR):
            opts["arr"] = 0.8
        kind = self.choose(opts)

        def atom() -> str:
            return self.fexpr(env, 2)[0]

        if kind == "cmp":
            return f"{atom()} {self.rng.choice(['>', '<', '>=', '<='])} {atom()}"
        if kind == "chain":
            return f"-0.5 < {atom()} <= {atom()}"
        if kind == "not":
            return f"not {atom()} < {atom()}"
        if kind == "and":
            return f"{atom()} > {self.const()[0]} and {atom()} < {self.const()[0]}"
        if kind == "or":
            return f"{atom()} > {atom()} or {atom()} < {self.const()[0]}"
        if kind == "int":
            i = self.pick(ints)
            return self.rng.choice([f"{i} % 2 == 0", f"{i} > 1", f"{i} == 1", f"{i} < 2"])
        if kind == "len":
            xs = self.pick(env.names(LIST))
            return f"len({xs}) > {self.rng.choice([1, 2])}"
        a = self.pick(env.names(ARR))
        return self.rng.choice([f"np.sum({a}) > 0.0", f"np.max({a}) > 0.5", f"np.mean({a}) < {self.const()[0]}"])

    def merge(self, env: Env, branches: list[Env]) -> None:
        """After an if: the fall-through branches' bounds of outer variables."""
        if not branches:
            return
        for name, t in list(env.vars.items()):
            tys = [b.vars.get(name, t) for b in branches]
            if t.kind in (FLOAT, ARR, TUPLE, DICT):
                env.vars[name] = _replace(t, bound=max(x.bound for x in tys))
            elif t.kind == LIST:
                env.vars[name] = _replace(
                    t,
                    bound=max(x.bound for x in tys),
                    length=min(x.length for x in tys),
                    maxlen=max(x.maxlen for x in tys),
                )

    def branch_end(self, env: Env, ctx: Ctx) -> bool:
        """Maybe end a branch with return/break/continue: True if it did."""
        r = self.rng.random()
        if r < 0.12:
            self.emit(ctx, f"return {self.returned(env, ctx)}")
            self.feature("early_return")
            return True
        if ctx.loop is not None and r < 0.22:
            self.emit(ctx, self.rng.choice(["break", "continue"]))
            ctx.loop.jumped = True
            self.feature("break_continue")
            return True
        return False

    def s_if_join(self, env: Env, ctx: Ctx) -> None:
        joined = self.fresh("s")
        n = self.rng.choice([2, 2, 2, 3])
        falls: list[Env] = []
        self.feature("if_else" if n == 2 else "elif")
        for k in range(n):
            header = f"if {self.cond(env)}:" if k == 0 else f"elif {self.cond(env)}:" if k < n - 1 else "else:"
            self.emit(ctx, header)
            inner = env.copy()
            ictx = ctx.inner()
            ended = False
            if self.rng.random() < 0.6:
                ended = self.block(inner, ictx, self.rng.randint(1, 2))
            if not ended and k and falls and self.rng.random() < 0.5:
                ended = self.branch_end(inner, ictx)
            if not ended:
                e = self.squash(self.fexpr(inner), LIMIT)
                self.emit(ictx, f"{joined} = {e[0]}")
                inner.vars[joined] = Ty(FLOAT, e[1])
                falls.append(inner)
        self.merge(env, falls)
        if falls:
            env.add(joined, Ty(FLOAT, max(b.vars[joined].bound for b in falls)))

    def s_if_reassign(self, env: Env, ctx: Ctx) -> None:
        name = self.pick(env.reassignable(FLOAT))
        self.emit(ctx, f"if {self.cond(env)}:")
        inner = env.copy()
        ictx = ctx.inner()
        ended = False
        if self.rng.random() < 0.5:
            ended = self.block(inner, ictx, self.rng.randint(1, 2))
        if not ended and name in inner.vars and name not in inner.frozen:
            e = self.squash(self.fexpr(inner), LIMIT)
            self.emit(ictx, f"{name} = {e[0]}")
            inner.vars[name] = Ty(FLOAT, e[1])
        self.feature("if_no_else")
        self.merge(env, [inner, env.copy()] if not ended else [env.copy()])

    def s_if_return(self, env: Env, ctx: Ctx) -> None:
        self.emit(ctx, f"if {self.cond(env)}:")
        inner = env.copy()
        ictx = ctx.inner()
        if self.rng.random() < 0.4:
            self.block(inner, ictx, 1)
        self.emit(ictx, f"return {self.returned(inner, ictx)}")
        self.feature("early_return")

    def s_loop(self, env: Env, ctx: Ctx) -> None:
        w = self.w
        opts = {"loop_range": w["loop_range"], "loop_while": w["loop_while"]}
        if env.names(LIST, lambda t: t.maxlen <= 6):
            opts["loop_list"] = w["loop_list"]
            opts["loop_enumerate"] = w["loop_enumerate"]
            opts["loop_zip"] = w["loop_zip"]
        if env.names(ARR, lambda t: len(t.shape) == 1):
            opts["loop_array"] = w["loop_array"]
        if env.names(ARR, lambda t: len(t.shape) == 2):
            opts["loop_rows"] = w["loop_rows"]
        if env.names(DICT):
            opts["loop_dict"] = w["loop_dict"]
        kind = self.choose(opts)
        self.feature(kind)
        min_trips = 1
        busy = {n for n in ("i", "j", "e", "t", "u", "k", "val", "row") if n in env.vars}
        free = lambda pool: next((n for n in pool if n not in busy), self.fresh(pool[0]))  # noqa: E731
        loopvars: dict[str, Ty] = {}
        pre: list[str] = []
        if kind == "loop_range":
            i = free(["i", "j", "k"])
            ns = env.names(INT, lambda t: t.lo >= 1 and t.bound <= 5)
            form = self.rng.randrange(4)
            if form == 0 and ns:
                n = self.pick(ns)
                trips = env.vars[n].bound
                header, lo = f"for {i} in range({n}):", 0
            elif form == 1 and env.names(LIST, lambda t: t.length == t.maxlen and t.length >= 1):
                xs = self.pick(env.names(LIST, lambda t: t.length == t.maxlen and t.length >= 1))
                trips = env.vars[xs].length
                header, lo = f"for {i} in range(len({xs})):", 0
            elif form == 2:
                trips = self.rng.randint(2, 5)
                header, lo = f"for {i} in range(1, {trips + 1}):", 1
            else:
                trips = self.rng.randint(2, 5)
                header, lo = f"for {i} in range({trips}):", 0
            loopvars[i] = Ty(INT, trips - 1 + lo, lo=lo)
        elif kind == "loop_while":
            k = self.fresh("k")
            trips = self.rng.randint(2, 5)
            pre.append(f"{k} = 0")
            header = f"while {k} < {trips}:"
            loopvars[k] = Ty(INT, trips, lo=1)
        elif kind in ("loop_list", "loop_enumerate", "loop_zip"):
            xs = self.pick(env.names(LIST, lambda t: t.maxlen <= 6))
            t = env.vars[xs]
            trips, min_trips = t.maxlen, t.length
            e = free(["t", "e", "u"])
            loopvars[e] = Ty(FLOAT, t.bound)
            if kind == "loop_list":
                header = f"for {e} in {xs}:"
            elif kind == "loop_enumerate":
                i = free(["i", "j", "k"])
                loopvars[i] = Ty(INT, max(trips - 1, 0), lo=0)
                header = f"for {i}, {e} in enumerate({xs}):"
            else:
                busy.add(e)
                e2 = free(["u", "e", "t"])
                other_opts = env.names(LIST) + env.names(ARR, lambda t: len(t.shape) == 1)
                other = self.pick(other_opts)
                to = env.vars[other]
                loopvars[e2] = Ty(FLOAT, to.bound)
                min_trips = min(t.length, to.length if to.kind == LIST else to.shape[0])
                header = f"for {e}, {e2} in zip({xs}, {other}):"
        elif kind == "loop_array":
            v = self.pick(env.names(ARR, lambda t: len(t.shape) == 1))
            t = env.vars[v]
            trips = t.shape[0]
            e = free(["t", "e", "u"])
            loopvars[e] = Ty(FLOAT, t.bound)
            if self.rng.random() < 0.3:
                i = free(["i", "j", "k"])
                loopvars[i] = Ty(INT, trips - 1, lo=0)
                header = f"for {i}, {e} in enumerate({v}):"
            else:
                header = f"for {e} in {v}:"
            self.feature("np_scalar")
        elif kind == "loop_rows":
            A = self.pick(env.names(ARR, lambda t: len(t.shape) == 2))
            t = env.vars[A]
            trips = t.shape[0]
            row = free(["row", "r"])
            loopvars[row] = Ty(ARR, t.bound, shape=t.shape[1:], fresh=False)
            header = f"for {row} in {A}:"
        else:  # dicts
            d = self.pick(env.names(DICT))
            t = env.vars[d]
            trips = len(t.keys)
            k = free(["k", "key"])
            form = self.rng.randrange(5)
            if form == 0:
                header = f"for {k} in {d}:"
                loopvars[k] = Ty(STR, keys=t.keys)
            elif form == 1:
                header = f"for {k} in sorted({d}):"
                loopvars[k] = Ty(STR, keys=t.keys)
            elif form == 2:
                header = f"for {k} in {d}.keys():"
                loopvars[k] = Ty(STR, keys=t.keys)
            elif form == 3:
                val = free(["val", "v_"])
                header = f"for {k}, {val} in {d}.items():"
                loopvars[k] = Ty(STR, keys=t.keys)
                loopvars[val] = Ty(FLOAT, t.bound)
            else:
                val = free(["val", "v_"])
                header = f"for {val} in {d}.values():"
                loopvars[val] = Ty(FLOAT, t.bound)
        self.loop(env, ctx, pre, header, loopvars, max(trips, 1), min_trips, kind)

    def loop(
        self,
        env: Env,
        ctx: Ctx,
        pre: list[str],
        header: str,
        loopvars: dict[str, Ty],
        trips: int,
        min_trips: int,
        kind: str,
    ) -> None:
        """Emit a loop: accumulators before it, the header, a body updating them."""
        carried: dict[str, int] = {}
        appends: set[str] = set()
        inflate = lambda b: b + 4.0 * trips  # noqa: E731
        # loop-carried variables: new accumulators or existing floats
        r = self.rng.random()
        if r < 0.6 or not env.reassignable(FLOAT):
            s = self.fresh("s")
            init = self.rng.choice(["0.0", "0.0", "1.0", None])
            e = (init, float(init)) if init else self.squash(self.fexpr(env), 2.0)
            self.emit(ctx, f"{s} = {e[0]}")
            env.add(s, Ty(FLOAT, e[1]))
            carried[s] = 2
        if r >= 0.4 and env.reassignable(FLOAT):
            carried[self.pick(env.reassignable(FLOAT))] = 2
        if self.rng.random() < 0.35:
            ys = self.fresh("lst")
            self.emit(ctx, f"{ys} = []")
            env.add(ys, Ty(LIST, 0.0, length=0, maxlen=0))
            appends.add(ys)
            env.locked.add(ys)
        if self.objects and self.rng.random() < self.w["loop_record"]:
            c = self.some_class()
            acc = self.fresh("ob")
            self.emit(ctx, f"{acc} = {self.construct(env, c)}")
            env.add(acc, Ty(REC, cls=c.name))
            carried[acc] = 2
            self.feature("loop_carried_record")
        if self.rng.random() < 0.2:
            shape = self.rng.choice([(3,), (2,), (3, 2)])
            acc = self.fresh("arr")
            e = self.a_constructor(env, shape, 2) if self.rng.random() < 0.7 else self.aexpr(env, shape, 1)
            e = self.asquash(e, 2.0)
            if not e[2]:
                e = (f"({e[0]} * 1.0)", e[1], True)
            self.emit(ctx, f"{acc} = {e[0]}")
            env.add(acc, Ty(ARR, e[1], shape=shape, fresh=True))
            carried[acc] = 2
            self.feature("loop_carried_array")
        for name in carried:
            env.vars[name] = _replace(env.vars[name], bound=inflate(env.vars[name].bound))
        for line in pre:
            self.emit(ctx, line)
        self.emit(ctx, header)
        body = env.copy()
        body.assignable = set()
        for name, t in loopvars.items():
            body.add(name, t)
        info = Loop(trips, dict(carried), appends)
        ictx = ctx.inner(loop=info, loop_depth=ctx.depth + 1)
        if kind == "loop_while":
            k = next(iter(loopvars))
            self.emit(ictx, f"{k} += 1")
        self.block(body, ictx, self.rng.randint(1, 3))
        # every accumulator is updated, every list appended (unless the body already did)
        for name in carried:
            if name not in info.updated and name not in body.frozen:
                self.carried_update(body, ictx, name)
        for ys in appends:
            if ys not in info.appended:
                self.append(body, ictx, ys)
        for ys in appends:
            t = body.vars[ys]
            sure = ys in info.sure and min_trips >= 1
            env.vars[ys] = Ty(LIST, t.bound, length=1 if sure else 0, maxlen=trips * 2)
            env.locked.discard(ys)

    def carried_update(self, env: Env, ctx: Ctx, name: str) -> None:
        loop = ctx.loop
        assert loop is not None
        loop.carried[name] -= 1
        loop.updated.add(name)
        t = env.vars[name]
        self.feature("loop_carried")
        if t.kind == ARR:
            e = self.asquash(self.aexpr(env, t.shape, 1), 2.0)
            form = self.rng.randrange(3)
            if form == 0:
                self.emit(ctx, f"{name} = {name} + {e[0]}")
            elif form == 1:
                self.emit(ctx, f"{name} += {e[0]}")
            else:
                self.emit(ctx, f"{name} = np.tanh({name} * {self.const()[0]} + {e[0]})")
            return
        if t.kind == REC:  # a new record of the class, from the previous one's attributes
            c = self.class_info(t.cls)
            args = []
            for k in range(c.required):
                e = self.squash(self.fexpr(env, 1), 2.0)
                args.append(self.squash((f"{name}.{c.fields[k]} * 0.5 + {e[0]}", ATTR * 0.5 + e[1]), CTOR_IN)[0])
            self.emit(ctx, f"{name} = {c.name}({', '.join(args)})")
            return
        form = self.rng.randrange(6)
        e = self.squash(self.fexpr(env, 0), 2.0)
        if form == 0:
            self.emit(ctx, f"{name} = {name} + {e[0]}")
        elif form == 1:
            self.emit(ctx, f"{name} += {e[0]}")
        elif form == 2:
            self.emit(ctx, f"{name} -= {e[0]}")
        elif form == 3:
            self.emit(ctx, f"{name} *= {self.squash(e)[0]}")
        elif form == 4:
            self.emit(ctx, f"{name} = math.tanh({name} + {e[0]})")
        else:
            self.emit(ctx, f"{name} = {name} * 0.5 + {e[0]}")

    def s_carried(self, env: Env, ctx: Ctx) -> None:
        loop = ctx.loop
        assert loop is not None
        names = [n for n, v in loop.carried.items() if v > 0 and n not in env.frozen]
        self.carried_update(env, ctx, self.rng.choice(names))

    def append(self, env: Env, ctx: Ctx, ys: str) -> None:
        loop = ctx.loop
        assert loop is not None
        e = self.squash(self.fexpr(env), LIMIT)
        if self.rng.random() < 0.15:
            self.emit(ctx, f"{ys} = {ys} + [{e[0]}]")
        else:
            self.emit(ctx, f"{ys}.append({e[0]})")
        t = env.vars[ys]
        env.vars[ys] = _replace(t, bound=max(t.bound, e[1]))
        loop.appended.add(ys)
        if ctx.depth == ctx.loop_depth and not loop.jumped:
            loop.sure.add(ys)
        self.feature("append")

    def jump_if(self, env: Env, ctx: Ctx, what: str) -> None:
        """`if cond: [statement] break|continue|return ...` inside a loop."""
        loop = ctx.loop
        assert loop is not None
        self.emit(ctx, f"if {self.cond(env)}:")
        ictx = ctx.inner()
        inner = env.copy()
        if self.rng.random() < 0.3:
            self.s_assign(inner, ictx)
        if what == "return":
            self.emit(ictx, f"return {self.returned(inner, ictx)}")
            self.feature("return_in_loop")
            return
        self.emit(ictx, what)
        loop.jumped = True
        self.feature(what)

    def s_break_if(self, env: Env, ctx: Ctx) -> None:
        self.jump_if(env, ctx, "break")

    def s_continue_if(self, env: Env, ctx: Ctx) -> None:
        self.jump_if(env, ctx, "continue")

    def s_return_in_loop(self, env: Env, ctx: Ctx) -> None:
        self.jump_if(env, ctx, "return")

    def s_npscalar_loop(self, env: Env, ctx: Ctx) -> None:
        """s = 0.0; for i in range(len(a)): s = s + a[i] * a[i] * w (NumPy scalars meet Python floats)."""
        a = self.pick(env.names(ARR, lambda t: len(t.shape) == 1))
        t = env.vars[a]
        x = self.pick(env.names(FLOAT))
        bx = env.vars[x].bound
        s = self.fresh("s")
        i = "i" if "i" not in env.vars else self.fresh("i")
        form = self.rng.randrange(3)
        self.emit(ctx, f"{s} = 0.0")
        if form == 0:
            self.emit(ctx, f"for {i} in range(len({a})):")
            self.emit(ctx.inner(), f"{s} = {s} + {a}[{i}] * {a}[{i}] * {x}")
            b = t.shape[0] * t.bound**2 * bx
        elif form == 1:
            self.emit(ctx, f"for {i} in range({t.shape[0]}):")
            self.emit(ctx.inner(), f"{s} += {x} * {a}[{i}]")
            b = t.shape[0] * t.bound * bx
        else:
            self.emit(ctx, f"for t_ in {a}:")
            self.emit(ctx.inner(), f"{s} = {s} * 0.5 + math.sin(t_ * {x})")
            b = 2.0
        env.add(s, Ty(FLOAT, b))
        self.feature("np_scalar_loop")
        if b > LIMIT:
            self.emit(ctx, f"{s} = math.tanh({s})")
            env.vars[s] = Ty(FLOAT, 1.0)

    def returned(self, env: Env, ctx: Ctx) -> str:
        """The expression of a `return` here: f's result, or a helper's or nested def's."""
        if ctx.ret == "pair":
            a, b = self.squash(self.fexpr(env), FN_OUT), self.squash(self.fexpr(env), FN_OUT)
            return f"({a[0]}, {b[0]})"
        if ctx.ret == "bounded":
            return self.squash(self.fexpr(env), FN_OUT)[0]
        if ctx.ret.startswith("record:"):
            return self.construct(env, self.class_info(ctx.ret.removeprefix("record:")))
        return self.result(env)
