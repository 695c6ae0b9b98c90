"""Statements: assignments, tuples, containers, in-place writes, closures (`s_*`), and blocks of them."""

from __future__ import annotations

from .base import Base
from .core import (
    ARR,
    DICT,
    FLOAT,
    FN,
    FN_IN,
    FN_OUT,
    KEYS,
    LIMIT,
    LIST,
    MAX_DEPTH,
    REC,
    TUPLE,
    Ctx,
    E,
    Env,
    Ty,
    _replace,
)


class Statements(Base):
    """Statements: assignments, tuples, containers, in-place writes, closures (`s_*`), and blocks of them."""

    def block(self, env: Env, ctx: Ctx, n: int) -> bool:
        """Up to n statements (at least one); True if the block cannot fall through."""
        for k in range(max(n, 1)):
            if k and self.budget <= 0:
                break
            if self.statement(env, ctx):
                return True
        return False

    def statement(self, env: Env, ctx: Ctx) -> bool:
        if self.x_rng.random() < self.w["extras"] and self.extra(env, ctx):
            return True
        self.budget -= 1
        w = self.w
        opts: dict[str, float] = {"s_assign": w["s_assign"], "s_tuple": w["s_tuple"], "s_ifexp": w["s_ifexp"]}
        opts["s_boolop"] = w["s_boolop"]
        if env.reassignable(FLOAT):
            opts["s_reassign"] = w["s_reassign"]
            opts["s_augassign"] = w["s_augassign"]
        opts["s_list"] = w["s_list"]
        opts["s_dict"] = w["s_dict"]
        opts["s_array"] = w["s_array"]
        if env.reassignable(ARR, lambda t: t.fresh):
            opts["s_array_augassign"] = w["s_array_augassign"]
            opts["s_array_store"] = w["s_array_store"]
        if self.objects and not self.in_class:
            opts["s_record"] = w["s_record"]
            if not ctx.in_def and not self.in_def:
                opts["s_record_helper"] = w["s_record_helper"]
        if not ctx.in_def:
            opts["s_pair_call"] = w["s_pair_call"]
            opts["s_closure"] = w["s_closure"]
            opts["s_hof"] = w["s_hof"]
            opts["s_comp_name_reuse"] = w["s_comp_name_reuse"] if env.names(LIST) and "t" not in env.vars else 0.0
        if ctx.depth < MAX_DEPTH:
            opts["s_if_join"] = w["s_if_join"]
            opts["s_if_reassign"] = w["s_if_reassign"] if env.reassignable(FLOAT) else 0.0
            opts["s_if_return"] = w["s_if_return"]
            opts["s_loop"] = w["s_loop"]
            if not ctx.in_def and env.names(ARR, lambda t: len(t.shape) == 1) and env.names(FLOAT):
                opts["s_npscalar_loop"] = w["s_npscalar_loop"]
        loop = ctx.loop
        if loop is not None:
            if any(v > 0 and n not in env.frozen for n, v in loop.carried.items()):
                opts["s_carried"] = w["s_carried"]
            if loop.appends:
                opts["s_append"] = w["s_append"]
            if ctx.depth < MAX_DEPTH:
                opts["s_break_if"] = w["s_break_if"]
                opts["s_continue_if"] = w["s_continue_if"]
                opts["s_return_in_loop"] = w["s_return_in_loop"]
        if ctx.tries is not None and ctx.tries.caught:
            opts["s_raise_if"] = w["s_raise_if"]
        kind = self.choose(opts)
        return bool(getattr(self, kind)(env, ctx))

    def extra(self, env: Env, ctx: Ctx) -> bool:
        """One of issue 37's statements (`x_*`: code no derivative flows through, writes, unpacking, `try`), made
        from their own stream (`x_rng`) and budget; True if it cannot fall through."""
        w = self.w
        kinds = ("x_raise_guard", "x_assert", "x_log", "x_eps", "x_del", "x_import", "x_local_class", "x_state")
        opts = {k: w[k] for k in kinds + ("x_list_store", "x_dict_store", "x_nested_store")}
        if not ctx.in_def and not self.in_def and not self.in_class:  # f's own scope: `global CALLS` at its top
            opts["x_global"] = w["x_global"]
        if env.names(ARR, lambda t: t.shape[0] in (2, 3)) or env.names(LIST, lambda t: 2 <= t.length == t.maxlen):
            opts["x_unpack"] = w["x_unpack"]
        if self.objects and not self.in_class:
            opts["x_attr_store"] = w["x_attr_store"]
        if ctx.depth < MAX_DEPTH:  # more often in a loop (a handler may `continue`) and in a try (nested)
            opts["x_try"] = w["x_try"] * (2.0 if ctx.loop is not None else 1.0) * (3.0 if ctx.tries else 1.0)
        if not any(v > 0 for v in opts.values()):
            return False
        saved = self.rng, self.budget
        self.rng = self.x_rng
        try:
            return bool(getattr(self, self.choose(opts))(env, ctx))
        finally:
            self.rng, self.budget = saved

    def store_float(self, env: Env, ctx: Ctx, name: str, e: E) -> None:
        e = self.squash(e, LIMIT)
        self.emit(ctx, f"{name} = {e[0]}")
        if name in env.vars:
            env.vars[name] = Ty(FLOAT, e[1])
        else:
            env.add(name, Ty(FLOAT, e[1]))

    def s_assign(self, env: Env, ctx: Ctx) -> None:
        self.store_float(env, ctx, self.fresh("s"), self.fexpr(env))

    def s_reassign(self, env: Env, ctx: Ctx) -> None:
        name = self.pick(env.reassignable(FLOAT))
        self.feature("reassign")
        self.store_float(env, ctx, name, self.fexpr(env))

    def s_augassign(self, env: Env, ctx: Ctx) -> None:
        name = self.pick(env.reassignable(FLOAT))
        b = env.vars[name].bound
        op = self.rng.choice(["+=", "-=", "*="])
        e = self.fexpr(env)
        if op == "*=":
            e = self.squash(e, 2.0)
            nb = b * e[1]
        else:
            e = self.squash(e, LIMIT)
            nb = b + e[1]
        self.emit(ctx, f"{name} {op} {e[0]}")
        self.feature("augassign")
        if nb > LIMIT:
            self.emit(ctx, f"{name} = math.tanh({name})")
            nb = 1.0
        env.vars[name] = Ty(FLOAT, nb)

    def s_ifexp(self, env: Env, ctx: Ctx) -> None:
        self.feature("ifexp")
        self.store_float(env, ctx, self.fresh("s"), self.e_ifexp(env, 0))

    def s_boolop(self, env: Env, ctx: Ctx) -> None:
        a, b, c = self.fexpr(env, 1), self.fexpr(env, 1), self.fexpr(env, 1)
        form = self.rng.randrange(3)
        self.feature("boolop_value")
        if form == 0:
            code = f"({self.cond(env)} and {a[0]}) or {b[0]}"
        elif form == 1:
            code = f"{a[0]} or {b[0]}"
        else:
            code = f"{a[0]} and {b[0]} or {c[0]}"
        self.store_float(env, ctx, self.fresh("s"), (code, max(a[1], b[1], c[1])))

    def s_tuple(self, env: Env, ctx: Ctx) -> None:
        self.feature("tuple")
        form = self.rng.randrange(3)
        parts = [self.squash(self.fexpr(env, 1), LIMIT) for _ in range(3)]
        t = self.fresh("tup")
        if form == 0:
            p, q, r = self.fresh("s"), self.fresh("s"), self.fresh("s")
            self.emit(ctx, f"{t} = ({parts[0][0]}, ({parts[1][0]}, {parts[2][0]}))")
            self.emit(ctx, f"{p}, ({q}, {r}) = {t}")
            for n, e in zip((p, q, r), parts):
                env.add(n, Ty(FLOAT, e[1]))
            s = self.fresh("s")
            self.emit(ctx, f"{s} = math.sin({t}[-1][0] + {t}[0])")
            env.add(s, Ty(FLOAT, 1.0))
        elif form == 1:
            n = self.rng.choice([2, 3])
            self.emit(ctx, f"{t} = ({', '.join(p[0] for p in parts[:n])})")
            env.add(t, Ty(TUPLE, max(p[1] for p in parts[:n]), length=n))
        else:
            tuples = env.names(TUPLE)
            if not tuples:
                return self.s_tuple(env, ctx) if self.rng.random() < 0.5 else self.s_assign(env, ctx)
            src = self.pick(tuples)
            ts = env.vars[src]
            names = [self.fresh("s") for _ in range(ts.length)]
            self.emit(ctx, f"{', '.join(names)} = {src}")
            for n in names:
                env.add(n, Ty(FLOAT, ts.bound))
            self.feature("tuple_unpack")

    def s_pair_call(self, env: Env, ctx: Ctx) -> None:
        h = self.helper("h_pair")
        a, b = self.arg(env, 0), self.arg(env, 0)
        p, q = self.fresh("s"), self.fresh("s")
        self.emit(ctx, f"{p}, {q} = {h.name}({a[0]}, {b[0]})")
        env.add(p, Ty(FLOAT, h.bound))
        env.add(q, Ty(FLOAT, h.bound))
        self.feature("tuple_result")

    def s_append(self, env: Env, ctx: Ctx) -> None:
        loop = ctx.loop
        assert loop is not None
        self.append(env, ctx, self.rng.choice(sorted(loop.appends)))

    def s_record(self, env: Env, ctx: Ctx) -> None:
        """ob = C(e1, e2): a new record, or a record variable rebound to another of its class."""
        again = env.reassignable(REC)
        if again and self.rng.random() < 0.25:
            name = self.pick(again)
            c = self.class_info(env.vars[name].cls)
            self.feature("record_rebind")
        else:
            name, c = self.fresh("ob"), self.some_class()
        self.emit(ctx, f"{name} = {self.construct(env, c)}")
        env.add(name, Ty(REC, cls=c.name))
        self.feature("obj_construct")

    def s_record_helper(self, env: Env, ctx: Ctx) -> None:
        """ob = mk(e1, e2), or ob = step(ob, e): a record made by a helper."""
        kinds = {"h_record_make": 1.0}
        if env.names(REC):
            kinds["h_record_step"] = 1.0
        h = self.helper(self.choose(kinds))
        a, b = self.arg(env, 0), self.arg(env, 0)
        code = (
            f"{h.name}({a[0]}, {b[0]})"
            if h.kind == "h_record_make"
            else f"{h.name}({self.pick(env.names(REC))}, {a[0]})"
        )
        name = self.fresh("ob")
        self.emit(ctx, f"{name} = {code}")
        env.add(name, Ty(REC, cls=h.cls))
        self.feature("record_from_helper")

    def s_list(self, env: Env, ctx: Ctx) -> None:
        code, t = self.lexpr(env)
        name = self.fresh("lst")
        self.emit(ctx, f"{name} = {code}")
        env.add(name, t)

    def s_comp_name_reuse(self, env: Env, ctx: Ctx) -> None:
        """A comprehension variable `t`, then `t` as an ordinary variable."""
        xs, t = self.some_list(env)
        name = self.fresh("lst")
        self.emit(ctx, f"{name} = [t * {self.const()[0]} for t in {xs}]")
        env.add(name, _replace(t, bound=t.bound * 2))
        self.store_float(env, ctx, "t", self.fexpr(env))
        self.feature("comp_name_reuse")

    def s_dict(self, env: Env, ctx: Ctx) -> None:
        name = self.fresh("dct")
        dicts = env.names(DICT)
        if dicts and self.rng.random() < self.w["s_dict_comp"]:
            d = self.pick(dicts)
            t = env.vars[d]
            c = self.const()
            self.emit(ctx, f"{name} = {{k: {d}[k] * {c[0]} for k in {d}}}")
            env.add(name, _replace(t, bound=t.bound * c[1]))
            self.feature("dict_comp")
            return
        keys = self.rng.sample(KEYS, self.rng.randint(2, 3))
        parts = [self.squash(self.fexpr(env, 1), LIMIT) for _ in keys]
        self.emit(ctx, f"{name} = {{{', '.join(f'{k!r}: {p[0]}' for k, p in zip(keys, parts))}}}")
        env.add(name, Ty(DICT, max(p[1] for p in parts), keys=tuple(keys)))
        self.feature("dict_literal")

    def s_array(self, env: Env, ctx: Ctx) -> None:
        shape = self.array_shape(env)
        e = self.aexpr(env, shape)
        if not e[2]:  # a view or another name for an array: copy it, so `+=` on it is safe
            e = (f"({e[0]} * 1.0)", e[1], True)
        if e[1] > LIMIT:
            e = self.asquash(e)
        name = self.fresh("arr")
        self.emit(ctx, f"{name} = {e[0]}")
        env.add(name, Ty(ARR, e[1], shape=shape, fresh=True))

    def s_array_augassign(self, env: Env, ctx: Ctx) -> None:
        name = self.pick(env.reassignable(ARR, lambda t: t.fresh))
        t = env.vars[name]
        e = self.asquash(self.aexpr(env, t.shape, 1), 2.0)
        op = self.rng.choice(["+=", "-=", "*="])
        self.emit(ctx, f"{name} {op} {e[0]}")
        nb = t.bound * e[1] if op == "*=" else t.bound + e[1]
        if nb > LIMIT:
            self.emit(ctx, f"{name} = np.tanh({name})")
            nb = 1.0
        env.vars[name] = _replace(t, bound=nb)
        self.feature("array_augassign")

    def s_array_store(self, env: Env, ctx: Ctx) -> None:
        """An element, row, column or slice of an array the function made, assigned or updated in place."""
        name = self.pick(env.reassignable(ARR, lambda t: t.fresh))
        t = env.vars[name]
        shape = t.shape
        if len(shape) == 1:
            n = shape[0]
            a = self.rng.randrange(n)
            b = self.rng.randrange(a + 1, n + 1)
            forms = [
                (f"{name}[{a}]", ()),
                (f"{name}[{a - n}]", ()),
                (f"{name}[{a}:{b}]", (b - a,)),
                (f"{name}[{a}:]", (n - a,)),
            ]
        else:
            r, c = shape
            i, j = self.rng.randrange(r), self.rng.randrange(c)
            forms = [(f"{name}[{i}, {j}]", ()), (f"{name}[{i}]", (c,)), (f"{name}[:, {j}]", (r,))]
        target, part = self.rng.choice(forms)
        e = self.squash(self.fexpr(env, 1), 2.0) if part == () else self.asquash(self.aexpr(env, part, 1), 2.0)
        op = self.rng.choice(["=", "=", "+=", "-=", "*="])
        if part == () and self.rng.random() < 0.25:  # through a view of the array: `name` shares the write
            view = self.fresh("view")
            if len(shape) == 1:
                made, target = self.rng.choice([(f"{name}[{a}:]", "[0]"), (f"{name}.reshape(1, {n})", f"[0, {a}]")])
            else:
                made, target = self.rng.choice(
                    [
                        (f"{name}[{i}]", f"[{j}]"),
                        (f"{name}[:, {j}]", f"[{i}]"),
                        (f"{name}.T", f"[{j}, {i}]"),
                        (f"{name}.reshape({r * c})", f"[{i * c + j}]"),
                    ]
                )
            self.emit(ctx, f"{view} = {made}")
            target = view + target
            self.feature("array_store_view")
        elif self.rng.random() < 0.3:  # through a copy of the name: the same object, so `name` sees the write
            alias = self.fresh("alias")
            self.emit(ctx, f"{alias} = {name}")
            target = alias + target[len(name) :]
            self.feature("array_store_alias")
        self.emit(ctx, f"{target} {op} {e[0]}")
        nb = max(t.bound, e[1]) if op == "=" else t.bound * e[1] if op == "*=" else t.bound + e[1]
        if nb > LIMIT:
            self.emit(ctx, f"{name} = np.tanh({name})")
            nb = 1.0
        env.vars[name] = _replace(t, bound=nb)
        self.feature("array_store")

    def s_closure(self, env: Env, ctx: Ctx) -> None:
        kind = self.choose({"c_lambda": self.w["c_lambda"], "c_def": self.w["c_def"], "c_rec": self.w["c_rec"]})
        g = self.fresh("g")
        self.feature(kind)
        read: set[str] = set()
        self.reads.append(read)
        inner = env.copy()
        for n in inner.names(REC):  # the enclosing function's records: read in here, never written
            inner.vars[n] = _replace(inner.vars[n], fresh=False)
        param = self.rng.choice(["t", "z", "q"])
        inner.add(param, Ty(FLOAT, FN_IN))
        inner.assignable = {param}
        inner.locked = set(env.locked)
        if kind == "c_lambda":
            body = self.squash(self.fexpr(inner, 0), FN_OUT)
            if ctx.loop is not None and self.rng.random() < 0.3:
                # the default-parameter idiom binds a value at creation
                names = [n for n in env.names(FLOAT) if n != param]
                if names:
                    c = self.pick(names)
                    self.emit(ctx, f"{g} = lambda {param}, {c}={c}: {body[0]}")
                    self.feature("lambda_default")
                    bound = body[1]
                    self.reads.pop()
                    env.add(g, Ty(FN, bound))
                    env.frozen |= read - {param}
                    return
            self.emit(ctx, f"{g} = lambda {param}: {body[0]}")
            bound = body[1]
        elif kind == "c_def":
            self.emit(ctx, f"def {g}({param}):")
            ictx = Ctx(ctx.indent + "    ", ctx.depth + 1, in_def=True, ret="bounded")
            saved, self.in_def = self.in_def, True
            if ctx.depth + 1 < MAX_DEPTH or self.rng.random() < 0.5:
                self.block(inner, ictx, self.rng.randint(1, 2))
            self.in_def = saved
            body = self.squash(self.fexpr(inner, 0), FN_OUT)
            self.emit(ictx, f"return {body[0]}")
            bound = body[1]
        else:
            a = self.squash(self.fexpr(env, 1), 1.0)
            self.emit(ctx, f"def {g}({param}, m=2):")
            ictx = Ctx(ctx.indent + "    ", ctx.depth + 1, in_def=True)
            if self.rng.random() < 0.5:
                self.emit(ictx, f"return {param} if m <= 0 else {g}(math.tanh({param} * {a[0]}), m - 1)")
            else:
                self.emit(ictx, "if m <= 0:")
                self.emit(ictx.inner(), f"return {param}")
                self.emit(ictx, f"return {g}(math.sin({param}) * {a[0]} + 0.5, m - 1)")
            bound = FN_OUT
            self.feature("recursion")
        self.reads.pop()
        env.add(g, Ty(FN, bound))
        env.frozen |= {n for n in read if n in env.vars and n != param}

    def s_hof(self, env: Env, ctx: Ctx) -> None:
        if env.names(LIST) and self.rng.random() < 0.4:
            code, t = self.rng.choice([self.l_map, self.l_sorted_key])(env, 0)
            name = self.fresh("lst")
            self.emit(ctx, f"{name} = {code}")
            env.add(name, t)
            return
        self.store_float(env, ctx, self.fresh("s"), self.e_hof_call(env, 0))
